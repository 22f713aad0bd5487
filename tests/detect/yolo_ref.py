"""yolo_ref.py — the reference side of the detect test (issue 15), written
in Python/numpy independently of examples/detect/detect.c:

- letterbox(w, h, size): the scale and padding of a YOLOv8 letterbox
  (aspect kept, centred, grey 114);
- letterbox_image(rgb, size): the NCHW input, bilinear with pixel centres
  aligned (no antialiasing), to check the C preprocessing;
- postprocess(head, ...): YOLOv8 head decoding, confidence threshold,
  greedy per-class NMS, boxes mapped back to the image and clipped;
- PNG reading and writing with zlib only (8-bit, non-interlaced; grey,
  grey+alpha, RGB, RGBA, palette), and the image size of a PNG or JPEG
  from its header.
"""
import struct
import zlib

import numpy as np

NUDENET_LABELS = [
    "FEMALE_GENITALIA_COVERED", "FACE_FEMALE", "BUTTOCKS_EXPOSED", "FEMALE_BREAST_EXPOSED",
    "FEMALE_GENITALIA_EXPOSED", "MALE_BREAST_EXPOSED", "ANUS_EXPOSED", "FEET_EXPOSED",
    "BELLY_COVERED", "FEET_COVERED", "ARMPITS_COVERED", "ARMPITS_EXPOSED", "FACE_MALE",
    "BELLY_EXPOSED", "MALE_GENITALIA_EXPOSED", "ANUS_COVERED", "FEMALE_BREAST_COVERED",
    "BUTTOCKS_COVERED",
]


# ------------------------------------------------------------------ letterbox

def letterbox(w, h, size):
    """(scale, padx, pady, new_w, new_h) of an image w x h in size x size."""
    s = min(size / w, size / h)
    nw = min(max(int(np.floor(w * s + 0.5)), 1), size)
    nh = min(max(int(np.floor(h * s + 0.5)), 1), size)
    return s, (size - nw) // 2, (size - nh) // 2, nw, nh


def _taps(n, m):
    x = (np.arange(n) + 0.5) * (m / n) - 0.5
    x = np.clip(x, 0, m - 1)
    i0 = np.floor(x).astype(np.int64)
    i1 = np.minimum(i0 + 1, m - 1)
    return i0, i1, x - i0


def resize_bilinear(rgb, w, h):
    """uint8 H x W x C -> float64 h x w x C (not rounded)."""
    src = rgb.astype(np.float64)
    y0, y1, fy = _taps(h, src.shape[0])
    x0, x1, fx = _taps(w, src.shape[1])
    fx = fx[None, :, None]
    top = src[y0][:, x0] * (1 - fx) + src[y0][:, x1] * fx
    bot = src[y1][:, x0] * (1 - fx) + src[y1][:, x1] * fx
    return top * (1 - fy[:, None, None]) + bot * fy[:, None, None]


def letterbox_image(rgb, size):
    h, w = rgb.shape[:2]
    _, px, py, nw, nh = letterbox(w, h, size)
    r = np.floor(resize_bilinear(rgb, nw, nh) + 0.5)
    out = np.full((3, size, size), 114.0)
    out[:, py:py + nh, px:px + nw] = r.transpose(2, 0, 1)
    return (out / 255.0).astype(np.float32)[None]


# ------------------------------------------------------------------ decoding

def iou_xyxy(a, b):
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    if ix <= 0 or iy <= 0:
        return 0.0
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def postprocess(head, img_w, img_h, size, conf, iou_thr, max_det=300):
    """head [1, 4 + classes, anchors] -> list of dicts (class, score, box
    [x0, y0, x1, y1] in image pixels), best score first."""
    h = np.asarray(head, np.float64)[0].T  # anchors x (4 + classes)
    scores = h[:, 4:]
    cls = scores.argmax(axis=1)
    best = scores[np.arange(len(h)), cls]
    idx = np.nonzero(best >= conf)[0]
    # score descending, anchor ascending
    idx = idx[np.lexsort((idx, -best[idx]))]
    xyxy = np.stack([h[:, 0] - h[:, 2] / 2, h[:, 1] - h[:, 3] / 2,
                     h[:, 0] + h[:, 2] / 2, h[:, 1] + h[:, 3] / 2], axis=1)
    kept = []
    for i in idx:
        if len(kept) >= max_det:
            break
        if all(cls[j] != cls[i] or iou_xyxy(xyxy[j], xyxy[i]) <= iou_thr for j in kept):
            kept.append(i)
    s, px, py, _, _ = letterbox(img_w, img_h, size)
    out = []
    for i in kept:
        x0, y0, x1, y1 = xyxy[i]
        box = [min(max((x0 - px) / s, 0), img_w), min(max((y0 - py) / s, 0), img_h),
               min(max((x1 - px) / s, 0), img_w), min(max((y1 - py) / s, 0), img_h)]
        out.append({"class": int(cls[i]), "score": float(best[i]), "box": box, "anchor": int(i)})
    return out


# ------------------------------------------------------------------ PNG / JPEG

def image_size(data):
    """(w, h) from a PNG's IHDR or a JPEG's SOFn."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return struct.unpack(">II", data[16:24])
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                raise ValueError("bad JPEG marker")
            m = data[i + 1]
            if m in (0xD8, 0x01) or 0xD0 <= m <= 0xD7:
                i += 2
                continue
            (n,) = struct.unpack(">H", data[i + 2:i + 4])
            if 0xC0 <= m <= 0xCF and m not in (0xC4, 0xC8, 0xCC):
                h, w = struct.unpack(">HH", data[i + 5:i + 9])
                return w, h
            i += 2 + n
    raise ValueError("not a PNG or JPEG")


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def read_png(data):
    """8-bit non-interlaced PNG bytes -> uint8 H x W x 3 RGB (alpha dropped,
    grey replicated, palette looked up)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, plte = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            plte = np.frombuffer(body, np.uint8).reshape(-1, 3)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + n
    if depth != 8 or inter != 0:
        raise ValueError("read_png: only 8-bit non-interlaced PNGs")
    ch = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(h, 1 + w * ch)
    out = np.zeros((h, w * ch), np.int64)
    prev = np.zeros(w * ch, np.int64)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int64)
        if f == 0:
            cur = line
        elif f == 2:
            cur = (line + prev) & 255
        elif f in (1, 3, 4):
            cur = np.zeros_like(line)
            for x in range(0, w * ch, ch):  # sequential in x: left neighbour
                a = cur[x - ch:x] if x else np.zeros(ch, np.int64)
                b = prev[x:x + ch]
                c = prev[x - ch:x] if x else np.zeros(ch, np.int64)
                pred = a if f == 1 else (a + b) // 2 if f == 3 else _paeth(a, b, c)
                cur[x:x + ch] = (line[x:x + ch] + pred) & 255
        else:
            raise ValueError("bad PNG filter %d" % f)
        out[y] = cur
        prev = cur
    px = out.astype(np.uint8).reshape(h, w, ch)
    if ctype == 3:
        return plte[px[:, :, 0]]
    if ch in (1, 2):
        return np.repeat(px[:, :, :1], 3, axis=2)
    return px[:, :, :3].copy()


def write_png(path, rgb):
    """uint8 H x W x 3 -> an RGB PNG file (filter 0)."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
