"""pngchart.py — a tiny line-chart renderer writing PNG with the standard
library only (zlib + struct): axes with ticks, a 3x5 pixel font scaled up,
series as polylines with square markers, a legend. Enough for the load-test
report (bench/loadtest.py); not a plotting library.

    line_chart("out.png", [("label", (r, g, b), [(x, y), ...]), ...],
               title="...", xlabel="...", ylabel="...")
"""
import math
import struct
import zlib

# 3x5 glyphs: 5 rows of 3 bits, top row first, most significant bit left.
_FONT = {
    "0": (7, 5, 5, 5, 7), "1": (2, 6, 2, 2, 7), "2": (7, 1, 7, 4, 7), "3": (7, 1, 7, 1, 7),
    "4": (5, 5, 7, 1, 1), "5": (7, 4, 7, 1, 7), "6": (7, 4, 7, 5, 7), "7": (7, 1, 2, 2, 2),
    "8": (7, 5, 7, 5, 7), "9": (7, 5, 7, 1, 7), ".": (0, 0, 0, 0, 2), ",": (0, 0, 0, 2, 4),
    "-": (0, 0, 7, 0, 0), "+": (0, 2, 7, 2, 0), "/": (1, 1, 2, 4, 4), ":": (0, 2, 0, 2, 0),
    "(": (1, 2, 2, 2, 1), ")": (4, 2, 2, 2, 4), "=": (0, 7, 0, 7, 0), " ": (0, 0, 0, 0, 0),
    "%": (5, 1, 2, 4, 5), "x": (0, 5, 2, 5, 0),
    "A": (2, 5, 7, 5, 5), "B": (6, 5, 6, 5, 6), "C": (3, 4, 4, 4, 3), "D": (6, 5, 5, 5, 6),
    "E": (7, 4, 6, 4, 7), "F": (7, 4, 6, 4, 4), "G": (3, 4, 5, 5, 3), "H": (5, 5, 7, 5, 5),
    "I": (7, 2, 2, 2, 7), "J": (1, 1, 1, 5, 2), "K": (5, 5, 6, 5, 5), "L": (4, 4, 4, 4, 7),
    "M": (5, 7, 7, 5, 5), "N": (6, 5, 5, 5, 5), "O": (2, 5, 5, 5, 2), "P": (6, 5, 6, 4, 4),
    "Q": (2, 5, 5, 6, 3), "R": (6, 5, 6, 5, 5), "S": (3, 4, 2, 1, 6), "T": (7, 2, 2, 2, 2),
    "U": (5, 5, 5, 5, 7), "V": (5, 5, 5, 5, 2), "W": (5, 5, 7, 7, 5), "X": (5, 5, 2, 5, 5),
    "Y": (5, 5, 2, 2, 2), "Z": (7, 1, 2, 4, 7),
}


class Canvas:
    def __init__(self, w, h, bg=(255, 255, 255)):
        self.w, self.h = w, h
        self.px = bytearray(bytes(bg) * (w * h))

    def set(self, x, y, c):
        if 0 <= x < self.w and 0 <= y < self.h:
            i = (y * self.w + x) * 3
            self.px[i:i + 3] = bytes(c)

    def rect(self, x0, y0, x1, y1, c):
        for y in range(max(0, y0), min(self.h, y1 + 1)):
            for x in range(max(0, x0), min(self.w, x1 + 1)):
                self.set(x, y, c)

    def line(self, x0, y0, x1, y1, c, width=1):
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        r = width // 2
        while True:
            self.rect(x0 - r, y0 - r, x0 + width - 1 - r, y0 + width - 1 - r, c)
            if x0 == x1 and y0 == y1:
                break
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x, y, s, c=(0, 0, 0), scale=2):
        for ch in s.upper():
            g = _FONT.get(ch, _FONT[" "])
            for row, bits in enumerate(g):
                for col in range(3):
                    if bits & (4 >> col):
                        self.rect(x + col * scale, y + row * scale,
                                  x + col * scale + scale - 1, y + row * scale + scale - 1, c)
            x += 4 * scale
        return x

    @staticmethod
    def text_width(s, scale=2):
        return len(s) * 4 * scale

    def save(self, path):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3])
                       for y in range(self.h))

        def chunk(tag, data):
            return (struct.pack(">I", len(data)) + tag + data
                    + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

        png = (b"\x89PNG\r\n\x1a\n"
               + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0))
               + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
        with open(path, "wb") as f:
            f.write(png)


def _nice_ticks(lo, hi, n=5):
    if hi <= lo:
        hi = lo + 1
    step = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(step))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= step:
            step = m * mag
            break
    start = math.floor(lo / step) * step
    ticks = []
    t = start
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    if ticks[-1] < hi:
        ticks.append(ticks[-1] + step)
    return ticks


def _fmt(v):
    if v == int(v):
        return "%d" % v
    return ("%.2f" % v).rstrip("0").rstrip(".")


def line_chart(path, series, title="", xlabel="", ylabel="", width=900, height=560):
    """series: [(label, (r, g, b), [(x, y), ...], dashed?)]; the 4th item is optional."""
    cv = Canvas(width, height)
    left, right, top, bottom = 90, 230, 50, 70
    pw, ph = width - left - right, height - top - bottom
    xs = [p[0] for s in series for p in s[2]]
    ys = [p[1] for s in series for p in s[2]]
    xt = _nice_ticks(0, max(xs) if xs else 1)
    yt = _nice_ticks(0, max(ys) if ys else 1)
    x0, x1, y0, y1 = xt[0], xt[-1], yt[0], yt[-1]

    def X(v):
        return left + int(round((v - x0) / (x1 - x0) * pw))

    def Y(v):
        return top + ph - int(round((v - y0) / (y1 - y0) * ph))

    grid, axis = (225, 225, 225), (60, 60, 60)
    for t in yt:
        cv.line(left, Y(t), left + pw, Y(t), grid)
        s = _fmt(t)
        cv.text(left - 8 - Canvas.text_width(s), Y(t) - 5, s, axis)
    for t in xt:
        cv.line(X(t), top, X(t), top + ph, grid)
        s = _fmt(t)
        cv.text(X(t) - Canvas.text_width(s) // 2, top + ph + 8, s, axis)
    cv.line(left, top, left, top + ph, axis, 2)
    cv.line(left, top + ph, left + pw, top + ph, axis, 2)
    cv.text(left, 15, title, (0, 0, 0), 3)
    cv.text(left + pw // 2 - Canvas.text_width(xlabel) // 2, top + ph + 30, xlabel, axis)
    cv.text(10, top - 22, ylabel, axis)
    ly = top + 10
    for s in series:
        label, color, pts = s[0], s[1], sorted(s[2])
        dashed = len(s) > 3 and s[3]
        prev = None
        for k, (px, py) in enumerate(pts):
            cx, cy = X(px), Y(py)
            if prev:
                if dashed:
                    # dashes: draw every other tenth of the segment
                    for i in range(0, 10, 2):
                        ax = prev[0] + (cx - prev[0]) * i // 10
                        ay = prev[1] + (cy - prev[1]) * i // 10
                        bx = prev[0] + (cx - prev[0]) * (i + 1) // 10
                        by = prev[1] + (cy - prev[1]) * (i + 1) // 10
                        cv.line(ax, ay, bx, by, color, 2)
                else:
                    cv.line(prev[0], prev[1], cx, cy, color, 2)
            cv.rect(cx - 3, cy - 3, cx + 3, cy + 3, color)
            prev = (cx, cy)
        lx = left + pw + 15
        cv.line(lx, ly + 4, lx + 24, ly + 4, color, 3)
        cv.text(lx + 30, ly, label, (0, 0, 0))
        ly += 20
    cv.save(path)
