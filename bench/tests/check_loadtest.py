#!/usr/bin/env python3
"""check_loadtest.py — smoke test of bench/loadtest.py and bench/pngchart.py
(suite "serve"): a tiny run (1 and 4 clients, one short round, a low open-loop
rate) against the examples/serve binary, then checks the markdown table has
every row with no errors, the JSON has both modes, and the PNG decodes (valid
chunks and CRCs, the declared size, non-white pixels in each series colour).
Checks the report's shape, not the timings.

Usage: check_loadtest.py SERVE_BINARY PROJECT_ROOT OUT_DIR
"""
import json
import os
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
serve, root, out_dir = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out_dir, exist_ok=True)
prefix = os.path.join(out_dir, "loadtest_smoke")
subprocess.run([sys.executable, os.path.join(HERE, "..", "loadtest.py"), "--serve", serve,
                "--model", os.path.join(root, "examples/models/bert_tiny.onnx"), "--concurrency", "1,4", "--rounds", "1", "--duration", "0.5", "--warmup", "0.2",
                "--rate", "40", "--out", prefix], check=True, timeout=120)

md = open(prefix + ".md").read()
rows = [line for line in md.splitlines() if line.startswith("| off |") or line.startswith("| on |")]
assert len(rows) == 6, md  # 2 modes x (2 closed-loop points + 1 open-loop)
for r in rows:
    cells = [c.strip() for c in r.strip("|").split("|")]
    assert float(cells[2]) > 0, r          # req/s
    assert cells[6] == "0", r               # no errors
    assert cells[7].startswith("mean "), r  # a batch-size histogram from /metrics
res = json.load(open(prefix + ".json"))
assert set(res) == {"on", "off"} and all(len(v) == 3 for v in res.values()), res

png = open(prefix + ".png", "rb").read()
assert png[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, size = 8, b"", None
while pos < len(png):
    n, tag = struct.unpack(">I4s", png[pos:pos + 8])
    data = png[pos + 8:pos + 8 + n]
    crc, = struct.unpack(">I", png[pos + 8 + n:pos + 12 + n])
    assert crc == zlib.crc32(tag + data) & 0xFFFFFFFF, tag
    if tag == b"IHDR":
        size = struct.unpack(">II", data[:8])
        assert data[8:10] == b"\x08\x02", "not 8-bit RGB"
    elif tag == b"IDAT":
        idat += data
    pos += 12 + n
    if tag == b"IEND":
        break
w, h = size
raw = zlib.decompress(idat)
assert len(raw) == h * (1 + 3 * w), (len(raw), w, h)
pixels = set()
for y in range(h):
    row = raw[y * (1 + 3 * w) + 1:(y + 1) * (1 + 3 * w)]
    pixels.update(row[i:i + 3] for i in range(0, len(row), 3))
for colour in (bytes((200, 40, 40)), bytes((40, 80, 200))):  # batch on / off p50 lines
    assert colour in pixels, colour
print("loadtest smoke: %d rows, PNG %dx%d with %d colours" % (len(rows), w, h, len(pixels)))
