"""ocr_lines.py — text-line images for the PP-OCR recognizer's INT8 checks
(test_ocr_rec_int8.py): sentences of tests/minilm/golden/sentences.txt,
upper-cased, drawn with the 5x7 glyphs of tools/mopt/plot_png.c (read from
that file), scaled to a 48-pixel line with jittered size, ink, spacing, a
blur and sensor noise, as rapidocr feeds its recognizer: [3, 48, W] RGB,
normalized with mean 0.5, std 0.5."""
import re
from pathlib import Path

import numpy as np


def glyphs(source_root):
    src = (Path(source_root) / "tools" / "mopt" / "plot_png.c").read_text()
    chars = re.search(r'k_glyph_chars\[\] = "((?:[^"\\]|\\.)*)"', src).group(1).replace("\\\\", "\\")
    rows = re.findall(r"\{((?:0x[0-9a-f]{2},?\s*){7})\}", src)
    out = {}
    for ch, row in zip(chars, rows):
        bits = [int(v, 16) for v in row.replace(",", " ").split()]
        out[ch] = np.array([[(b >> (4 - c)) & 1 for c in range(5)] for b in bits], np.float32)
    out[" "] = np.zeros((7, 5), np.float32)
    return out


def sentences(source_root):
    p = Path(source_root) / "tests" / "minilm" / "golden" / "sentences.txt"
    return [s.strip() for s in p.read_text().splitlines() if s.strip() and not s.startswith("#")]


def line_image(text, g, rng, h=48, w=320):
    """One text line, grey (h x w, 0..1)."""
    img = np.full((h, w), 0.92 + rng.uniform(-0.05, 0.05), np.float32)
    scale = rng.uniform(3.2, 4.4)  # glyph pixel size: 7 rows -> 22..31 px
    ink = rng.uniform(0.05, 0.3)
    gh, gw = int(round(7 * scale)), int(round(5 * scale))
    top = (h - gh) // 2 + int(rng.integers(-3, 4))
    x = int(rng.integers(2, 10))
    gap = max(2, int(scale * rng.uniform(0.8, 1.4)))
    for ch in text.upper():
        gl = g.get(ch, g["?"])
        if x + gw >= w - 2:
            break
        ys = (np.arange(gh) / scale).astype(int).clip(0, 6)
        xs = (np.arange(gw) / scale).astype(int).clip(0, 4)
        cell = gl[ys][:, xs]
        region = img[top:top + gh, x:x + gw]
        region[cell > 0] = ink
        x += gw + gap
    p = np.pad(img, 1, mode="edge")
    img = sum(p[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3)) / 9.0
    img += rng.normal(0, 0.02, img.shape).astype(np.float32)
    return np.clip(img, 0, 1).astype(np.float32)


def rec_input(gray):
    x = (gray - 0.5) / 0.5
    return np.repeat(x[None], 3, axis=0).astype(np.float32)


def lines(source_root, first, count, seed, h=48, w=320):
    """count line inputs [3, h, w] from sentences first.. (wrapping)."""
    g, s = glyphs(source_root), sentences(source_root)
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        i, text = first + k, ""
        while len(text) < 24:  # a line's worth of text
            text += (" " if text else "") + s[i % len(s)]
            i += 1
        out.append(rec_input(line_image(text, g, rng, h, w)))
    return out
