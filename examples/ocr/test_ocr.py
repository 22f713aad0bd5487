#!/usr/bin/env python3
"""test_ocr.py — examples/ocr end to end (issue 15), on images this test
renders itself (ocr_render: FreeType with the DejaVu fonts of Debian's
fonts-dejavu-core) and the rapidocr-onnxruntime 1.4.4 wheel's models:

- reading: several lines of English (letters, digits, punctuation) in four
  fonts and sizes 18..40 px, a block turned by 4 degrees, two lines upside
  down (the direction classifier must flip them), one page as JPEG.
  Character accuracy over all lines, 1 - edit distance / length, must be
  >= 95%, and every expected line must be found (its best-matching output
  line within 20% edit distance) where it was drawn (its box holds a point
  on the line, with a margin of one text size). Text is compared after NFKC (the model
  emits full-width punctuation such as U+FF0C) and without spaces: the
  PP-OCRv4 Chinese recognizer often drops the space between Latin words;
  the accuracy with spaces kept is printed too (not asserted). Output lines
  that match no expected line count as errors (their length is added).
- DB post-processing: on a page already at the detector's size (no
  resize), ONNX Runtime's raw det map goes through `ocr dbpost` (the C code)
  and through db_reference.py (numpy); same number of boxes, and each box's
  IoU with its counterpart >= 0.9.
- stage timings present (text and --json), --config read.
- bad inputs (missing, empty, not an image, truncated PNG/JPEG, bad
  options, a non-ONNX model): non-zero exit with a message, no signal.

Usage: test_ocr.py OCR OCR_RENDER SOURCE_ROOT. Exit 0 pass, 1 fail, 77
skipped (the wheel is unavailable, or numpy/ONNX Runtime missing).
"""
import json
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

SKIP = 77
FONTS = Path("/usr/share/fonts/truetype/dejavu")
SANS, SERIF, MONO, BOLD = ("DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf",
                           "DejaVuSans-Bold.ttf")

# (file, width, height, [(font, x, y, size, angle, text)])
PAGES = [
    ("page.png", 1024, 768, [
        (SANS, 40, 70, 32, 0, "The quick brown fox jumps over 13 lazy dogs."),
        (SERIF, 40, 140, 26, 0, "Invoice #4821: total $1,234.56 (due 2026-12-31)"),
        (MONO, 40, 200, 22, 0, "hello_world(x, y) returns 42; see page 7!"),
        (BOLD, 40, 290, 40, 0, "OPEN 24 HOURS"),
        (SANS, 40, 350, 18, 0, "Call +1 (555) 010-9999 or write to info@example.org"),
        (SERIF, 40, 420, 30, 0, "Pack my box with five dozen liquor jugs."),
        (SANS, 520, 520, 24, 0, "Room 7B, Floor 3"),
        (MONO, 40, 600, 20, 0, "ERROR 404: file not found [code=0x1F]"),
    ]),
    ("page.jpg", 900, 560, [
        (SANS, 30, 60, 28, 0, "Quarterly report, version 2.1"),
        (SERIF, 30, 130, 24, 0, "Revenue grew 17% to 3.8 million euros."),
        (SANS, 30, 200, 22, 0, "Meeting at 10:30 in room B-12, bring notes."),
        (BOLD, 30, 280, 34, 0, "SALE: 50% OFF TODAY"),
        (MONO, 30, 350, 20, 0, "user@host:~$ make test -j2"),
        (SERIF, 30, 430, 26, 0, "She sells sea shells by the sea shore."),
    ]),
    ("tilted.png", 900, 520, []),   # filled below: a block turned by 4 degrees
    ("upside.png", 800, 300, [
        (SANS, 700, 90, 30, 180, "Upside down text here"),
        (SERIF, 700, 200, 26, 180, "Flip me: 2024 edition"),
    ]),
]


def tilted_block():
    import math
    a = math.radians(4.0)
    lines = ["Rotated block of text, line one.", "The second line has 12 digits 345678.",
             "And a third line (with brackets)!"]
    down = (math.sin(a), math.cos(a))          # y-down image coordinates
    out = []
    for k, t in enumerate(lines):
        x, y = 60 + 70 * k * down[0], 200 + 70 * k * down[1]
        out.append((SANS, x, y, 28, 4.0, t))
    return out


PAGES[2] = (PAGES[2][0], PAGES[2][1], PAGES[2][2], tilted_block())


def norm(s, spaces=False):
    s = unicodedata.normalize("NFKC", s)
    return " ".join(s.split()) if spaces else "".join(s.split())


def edit(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def score_page(expected, got, spaces):
    """(errors, length, missing lines, {expected index: output index}): each
    expected line takes its best unused output line; unused output lines
    count as errors."""
    exp = [norm(t, spaces) for t in expected]
    out = [norm(t, spaces) for t in got]
    used, errors, length, missing, pairs = set(), 0, 0, [], {}
    for k, e in enumerate(exp):
        best = min(((edit(e, o), i) for i, o in enumerate(out) if i not in used),
                   default=(len(e), None))
        if best[1] is not None:
            used.add(best[1])
            pairs[k] = best[1]
        errors += best[0]
        length += len(e)
        if best[1] is None or best[0] > 0.2 * len(e):
            missing.append(e)
    errors += sum(len(o) for i, o in enumerate(out) if i not in used)
    return errors, length, missing, pairs


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, timeout=600, **kw)


def main():
    ocr, render, root = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    sys.path.insert(0, str(root / "tests" / "realmodels"))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import run_realmodels as rr
    np, ort = rr.import_or_skip("numpy", "onnxruntime")
    import db_reference
    from models import WHEELS
    name, version, digest = next(w for w in WHEELS if w[0] == "rapidocr-onnxruntime")
    cache = rr.cache_dir()
    whl, why = rr.fetch_wheel(cache / "wheels", name, version, digest)
    if whl is None:
        print("SKIP: the wheel %s==%s is unavailable (%s)" % (name, version, why))
        return SKIP
    files = rr.unpack(whl, cache / "models" / ("%s-%s" % (name, version)))
    models = Path(files["rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx"]).parent
    if not FONTS.is_dir():
        print("FAIL: no %s (apt-get install fonts-dejavu-core)" % FONTS)
        return 1
    with tempfile.TemporaryDirectory(prefix="ocr-test-") as d:
        return check(ocr, render, models, np, ort, db_reference, Path(d))


def check(ocr, render, models, np, ort, db_reference, tmp):
    """Renders, reads and checks everything in the folder tmp; 0 or 1."""
    failures = []

    # 1. render and read
    tot_err = tot_len = tot_err_sp = tot_len_sp = 0
    for fname, w, h, lines in PAGES:
        spec = "".join("%s %.2f %.2f %d %.1f %s\n" % (FONTS / f, x, y, s, a, t)
                       for f, x, y, s, a, t in lines)
        path = tmp / fname
        r = run([render, path, w, h], input=spec.encode())
        if r.returncode != 0:
            failures.append("ocr_render %s: %s" % (fname, r.stderr.decode()))
            continue
        cmd = [ocr, path, "--models", models, "--threads", 2]
        if fname == "page.jpg":
            cfg = tmp / "opts.yaml"
            cfg.write_text("opt_level: 3\n")
            cmd += ["--json", "--config", cfg]
        r = run(cmd)
        if r.returncode != 0:
            failures.append("ocr %s exited %d: %s" % (fname, r.returncode, r.stderr.decode()))
            continue
        if "--json" in cmd:
            doc = json.loads(r.stdout.decode())
            got = [l["text"] for l in doc["lines"]]
            boxes = [l["box"] for l in doc["lines"]]
            stages = doc["stages_ms"]
            if len(stages) != 9 or any(not (v >= 0) for v in stages.values()):
                failures.append("%s: --json stages_ms is %r" % (fname, stages))
            for l in doc["lines"]:
                if not (0 <= l["confidence"] <= 1) or len(l["box"]) != 4:
                    failures.append("%s: bad line %r" % (fname, l))
            print("%s: stages %s" % (fname, ", ".join("%s %.0f ms" % kv for kv in stages.items())))
        else:
            out = [l.split("\t", 2) for l in r.stdout.decode().splitlines()]
            got = [o[2] for o in out]
            boxes = [[[float(v) for v in c.split(",")] for c in o[0].split()] for o in out]
            err = r.stderr.decode()
            for st in ("read", "det preprocess", "det infer", "DB postprocess", "crop/rotate",
                       "cls", "rec preprocess", "rec infer", "CTC decode"):
                if ("  %s " % st) not in err:
                    failures.append("%s: no '%s' time in %r" % (fname, st, err))
        exp = [t for *_, t in lines]
        e, n, missing, pairs = score_page(exp, got, False)
        e2, n2, _, _ = score_page(exp, got, True)
        # where: the line's matched box holds a point half a size above the
        # start of its baseline (below, upside down), within a size's margin
        for k, (f, x, y, size, a, t) in enumerate(lines):
            if k not in pairs:
                continue
            b = boxes[pairs[k]]
            px, py = x, y + (0.4 * size if a == 180 else -0.4 * size)
            xs, ys = [c[0] for c in b], [c[1] for c in b]
            if not (min(xs) - size <= px <= max(xs) + size and min(ys) <= py <= max(ys)):
                failures.append("%s: %r read at %s, not around (%.0f, %.0f)" %
                                (fname, t, b, px, py))
        tot_err, tot_len, tot_err_sp, tot_len_sp = tot_err + e, tot_len + n, tot_err_sp + e2, tot_len_sp + n2
        print("%s: %d lines expected, %d read, accuracy %.4f (with spaces %.4f)" %
              (fname, len(exp), len(got), 1 - e / n, 1 - e2 / n2))
        for t in got:
            print("    read: %s" % t)
        for m in missing:
            failures.append("%s: line not found: %r" % (fname, m))
    if tot_len:
        acc = 1 - tot_err / tot_len
        print("character accuracy over all lines: %.4f (%d errors / %d chars); with spaces %.4f"
              % (acc, tot_err, tot_len, 1 - tot_err_sp / tot_len_sp))
        if acc < 0.95:
            failures.append("character accuracy %.4f < 0.95" % acc)

    # 2. DB post-processing: C vs numpy over ORT's det map (page.png is
    # 1024 x 768: shorter side >= 736 and both multiples of 32, no resize)
    for fname, w, h, lines in (PAGES[0], PAGES[2]):
        spec = "".join("%s %.2f %.2f %d %.1f %s\n" % (FONTS / f, x, y, s, a, t)
                       for f, x, y, s, a, t in lines)
        ppm = tmp / (fname + ".ppm")
        r = run([render, ppm, w, h], input=spec.encode())
        if r.returncode != 0:
            failures.append("ocr_render %s: %s" % (ppm, r.stderr.decode()))
            continue
        raw = ppm.read_bytes()
        head = raw.split(b"\n", 3)
        img = np.frombuffer(head[3], np.uint8).reshape(h, w, 3)
        # the detector's size: shorter side 736, multiples of 32 (nearest
        # neighbour here: the comparison needs the same map on both sides)
        s = max(1.0, 736 / min(w, h))
        dh, dw = int(round(int(h * s) / 32) * 32), int(round(int(w * s) / 32) * 32)
        ys = np.minimum((np.arange(dh) + 0.5) * h / dh, h - 1).astype(int)
        xs = np.minimum((np.arange(dw) + 0.5) * w / dw, w - 1).astype(int)
        x = (img[ys][:, xs][:, :, ::-1].astype(np.float32) / 255 - 0.5) / 0.5
        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        sess = ort.InferenceSession(str(models / "ch_PP-OCRv4_det_infer.onnx"), so,
                                    providers=["CPUExecutionProvider"])
        prob = sess.run(None, {sess.get_inputs()[0].name: x.transpose(2, 0, 1)[None].copy()})[0]
        prob = np.ascontiguousarray(prob[0, 0], dtype=np.float32)
        pf = tmp / (fname + ".prob.f32")
        prob.tofile(pf)
        r = run([ocr, "dbpost", pf, dh, dw, w, h])
        if r.returncode != 0:
            failures.append("ocr dbpost exited %d: %s" % (r.returncode, r.stderr.decode()))
            continue
        cboxes = [np.array([float(v) for v in l.split()[:8]]).reshape(4, 2)
                  for l in r.stdout.decode().splitlines()]
        ref = db_reference.boxes(prob, w, h)
        ious = []
        for cb in cboxes:
            ious.append(max((db_reference.iou(cb, rb) for rb, _ in ref), default=0.0))
        print("DB post-processing on %s (%dx%d map): C %d boxes, numpy %d, min IoU %.4f" %
              (fname, dw, dh, len(cboxes), len(ref), min(ious, default=0.0)))
        if len(cboxes) != len(ref) or not cboxes:
            failures.append("%s: C dbpost gives %d boxes, the numpy reference %d" %
                            (fname, len(cboxes), len(ref)))
        for k, v in enumerate(ious):
            if v < 0.9:
                failures.append("%s: C box %d %s has IoU %.3f with the reference" %
                                (fname, k, cboxes[k].tolist(), v))

    # 3. bad inputs: a message on stderr, a non-zero exit, no signal
    good = tmp / "page.png"
    (tmp / "empty.png").write_bytes(b"")
    (tmp / "text.png").write_text("this is not an image\n")
    if good.is_file():
        (tmp / "cut.png").write_bytes(good.read_bytes()[:300])
    jpg = tmp / "page.jpg"
    if jpg.is_file():
        (tmp / "cut.jpg").write_bytes(jpg.read_bytes()[:200])
    (tmp / "bad.onnx").write_bytes(b"\x08\x07garbage")
    bad = [
        ([ocr, tmp / "missing.png", "--models", models], "a missing file"),
        ([ocr, tmp / "empty.png", "--models", models], "an empty file"),
        ([ocr, tmp / "text.png", "--models", models], "a text file"),
        ([ocr, tmp / "cut.png", "--models", models], "a truncated PNG"),
        ([ocr, tmp / "cut.jpg", "--models", models], "a truncated JPEG"),
        ([ocr, good, "--models", tmp / "nowhere"], "a missing model folder"),
        ([ocr, good, "--models", models, "--det", tmp / "bad.onnx"], "a non-ONNX model"),
        ([ocr, good, "--models", models, "--threads", "two"], "--threads two"),
        ([ocr, good, "--models", models, "--config", tmp / "nope.yaml"], "a missing --config"),
        ([ocr, good, "--models", models, "--bogus", "1"], "an unknown option"),
        ([ocr, good], "no --models"),
        ([ocr, "dbpost", tmp / "empty.png", 32, 32, 32, 32], "dbpost on a short map"),
    ]
    for cmd, what in bad:
        r = run(cmd)
        msg = r.stderr.decode().strip()
        print("%-24s -> exit %d: %s" % (what, r.returncode, msg.splitlines()[0] if msg else ""))
        if r.returncode <= 0 or not msg.startswith(("ocr:", "usage:")):
            failures.append("%s: exit %d, stderr %r" % (what, r.returncode, msg))

    for f in failures:
        print("FAIL: %s" % f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
