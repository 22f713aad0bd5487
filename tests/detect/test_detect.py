#!/usr/bin/env python3
"""test_detect.py — examples/detect against an independent reference (issue 15).

Full mode (suite detect; exit 77 when the nudenet or scikit-image wheel, or
ONNX Runtime, is unavailable):
- test images: real photos from the scikit-image wheel (fetched with pip
  download --no-deps into the realmodels cache, only the image files
  extracted, the package never installed): PNG RGB, grey, RGBA, odd sizes,
  a JPEG; a 2 x 2 mosaic of them (more faces), a tall crop (padding in x)
  and a synthetic gradient;
- for each image at --conf 0.25 and 0.01, and 0.001 on two (~50 boxes):
  detect's letterboxed input (--save-input) is fed to ONNX Runtime; yolo_ref.postprocess over
  ORT's raw output must give the same number of boxes, the same classes
  and IoU >= 0.9 for every box (matched within each class);
- for PNG inputs, detect's input tensor equals yolo_ref's own letterbox of
  the decoded image within 1/255, and the drawn PNG decodes, has the input's
  size and differs from the input exactly on the outlines of the printed
  "drawn" rectangles;
- every run prints the five stage times; --config (opt_level 1) gives the
  same boxes.

Hostile mode (--hostile, suites detect and hostile; needs no wheel, no
ctypes: it runs under ASan): missing, empty, non-image, truncated and huge
images, a wrong model, a model that is not ONNX, bad flags and a bad
--config must each fail with a clear message and exit 1 or 2, never a
signal or a sanitizer report.

Usage: test_detect.py DETECT SOURCE_ROOT [--hostile]
"""
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SKIP = 77
SIZE = 320
# scikit-image's wheel for CPython 3.11 manylinux x86_64, whatever Python
# runs this test (pip is told the platform): its skimage/data/*.png, *.jpg
SKIMAGE = ("scikit-image", "0.24.0",
           "fa27b3a0dbad807b966b8db2d78da734cb812ca4787f7fbb143764800ce2fa9c")
LOW = ("mosaic.png", "astronaut.png")
PHOTOS = ["astronaut.png", "camera.png", "coffee.png", "chelsea.png", "logo.png", "rocket.jpg"]
DET_LINE = re.compile(r"^\s*(\d+) (\S+)\s+([0-9.]+) box ([-0-9. ]+) drawn ([0-9 ]+)$")
STAGES = re.compile(r"stage times \(ms\): read ([0-9.]+)  preprocess ([0-9.]+)  infer ([0-9.]+)  "
                    r"postprocess ([0-9.]+)  write ([0-9.]+)")


def run(cmd, timeout=300):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)


def parse(stdout):
    dets = []
    for line in stdout.splitlines():
        m = DET_LINE.match(line)
        if m:
            dets.append({"class": m.group(2), "score": float(m.group(3)),
                         "box": [float(v) for v in m.group(4).split()],
                         "drawn": [int(v) for v in m.group(5).split()]})
    return dets


# ------------------------------------------------------------------ hostile

def hostile(detect, root, failures):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import numpy as np
    import yolo_ref as Y
    wrong_model = root / "examples" / "models" / "bert_tiny.onnx"
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        good = d / "good.png"
        rgb = (np.arange(64 * 48 * 3) % 251).astype(np.uint8).reshape(48, 64, 3)
        Y.write_png(good, rgb)
        data = good.read_bytes()
        (d / "trunc.png").write_bytes(data[:len(data) // 2])
        (d / "empty.png").write_bytes(b"")
        (d / "text.jpg").write_text("this is not an image\n")
        (d / "fake.jpg").write_bytes(b"\xff\xd8\xff\xe0" + b"\x00" * 60)
        huge = bytearray(data)
        huge[16:24] = (60000).to_bytes(4, "big") * 2
        import zlib
        huge[29:33] = (zlib.crc32(bytes(huge[12:29])) & 0xFFFFFFFF).to_bytes(4, "big")
        (d / "huge.png").write_bytes(bytes(huge))
        (d / "bad.yaml").write_text("threads: [1, 2\n")
        (d / "badkey.yaml").write_text("no_such_option: 3\n")
        m = ["--model", wrong_model]
        cases = [
            ([d / "missing.png"] + m, 1, "No such file"),
            ([d / "empty.png"] + m, 1, "empty file"),
            ([d / "text.jpg"] + m, 1, "not a PNG or JPEG"),
            ([d / "fake.jpg"] + m, 1, "JPEG"),
            ([d / "trunc.png"] + m, 1, "truncated PNG"),
            ([d / "huge.png"] + m, 1, "too large"),
            ([good] + m, 1, "not a YOLOv8-style detector"),
            ([good, "--model", good], 1, "cannot load the model"),
            ([good, "--model", d / "missing.onnx"], 1, "cannot load the model"),
            ([good, "--model", wrong_model, "--config", d / "bad.yaml"], 1, "--config"),
            ([good, "--model", wrong_model, "--config", d / "badkey.yaml"], 1, "no_such_option"),
            ([good, "--model", wrong_model, "--config", d / "nope.yaml"], 1, "--config"),
            ([good], 2, "no model given"),
            (m, 2, "no image given"),
            ([good, good] + m, 2, "more than one image"),
            ([good, "--conf", "2"] + m, 2, "bad value for --conf"),
            ([good, "--conf", "0.3x"] + m, 2, "bad value for --conf"),
            ([good, "--iou", "-1"] + m, 2, "bad value for --iou"),
            ([good, "--threads", "many"] + m, 2, "bad value for --threads"),
            ([good, "--size", "100"] + m, 2, "bad value for --size"),
            ([good, "--repeat", "0"] + m, 2, "bad value for --repeat"),
            ([good, "--frobnicate", "1"] + m, 2, "unknown option"),
            ([good, "--model"], 2, "needs a value"),
        ]
        for args, want_rc, needle in cases:
            r = run([detect] + args, timeout=120)
            what = " ".join(str(a).replace(str(d) + "/", "") for a in args)
            if r.returncode != want_rc:
                failures.append("detect %s: exit %d, expected %d (stderr: %s)"
                                % (what, r.returncode, want_rc, r.stderr.strip()[-300:]))
            elif needle not in r.stderr:
                failures.append("detect %s: stderr lacks %r: %s" % (what, needle, r.stderr.strip()))
            elif "Sanitizer" in r.stderr or "runtime error" in r.stderr:
                failures.append("detect %s: sanitizer report: %s" % (what, r.stderr[-500:]))
            else:
                print("ok   exit %d  detect %-40s  %s" % (r.returncode, what[:40],
                                                         r.stderr.strip().splitlines()[0][:90]))


# ------------------------------------------------------------------ wheels

def fetch_images(rr, cache):
    """Extracts PHOTOS from the pinned scikit-image wheel; (folder, None)
    or (None, why)."""
    name, version, digest = SKIMAGE
    whl, why = rr.fetch_wheel(cache / "wheels", name, version, digest,
                              pip_args=["--platform", "manylinux2014_x86_64",
                                        "--python-version", "3.11", "--implementation", "cp",
                                        "--abi", "cp311"],
                              note=" (its image files only are used)")
    if whl is None:
        return None, why
    dest = cache / "images" / ("%s-%s" % (name, version))
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(whl) as z:
        for p in PHOTOS:
            target = dest / p
            info = z.getinfo("skimage/data/" + p)
            if not (target.is_file() and target.stat().st_size == info.file_size):
                target.write_bytes(z.read(info))
    return dest, None


def fetch_model(rr, models):
    name, version, digest = next(w for w in models.WHEELS if w[0] == "nudenet")
    cache = rr.cache_dir()
    whl, why = rr.fetch_wheel(cache / "wheels", name, version, digest)
    if whl is None:
        return None, why
    files = rr.unpack(whl, cache / "models" / ("%s-%s" % (name, version)))
    return files.get("nudenet/320n.onnx"), None


# ------------------------------------------------------------------ checks

def match(got, ref, Y, names):
    """Pairs each of detect's boxes with the reference box of the same class
    that overlaps it most; returns (min IoU, problems)."""
    problems, worst = [], 1.0
    free = list(range(len(ref)))
    for g in sorted(got, key=lambda x: -x["score"]):
        same = [j for j in free if names[ref[j]["class"]] == g["class"]]
        if not same:
            problems.append("detect's %s %.4f has no reference box of that class"
                            % (g["class"], g["score"]))
            continue
        j = max(same, key=lambda j: Y.iou_xyxy(g["box"], ref[j]["box"]))
        v = Y.iou_xyxy(g["box"], ref[j]["box"])
        worst = min(worst, v)
        if v < 0.9:
            problems.append("%s %.4f: IoU %.3f with the reference box"
                            % (g["class"], g["score"], v))
        free.remove(j)
    for j in free:
        problems.append("reference %s %.4f has no box from detect"
                        % (names[ref[j]["class"]], ref[j]["score"]))
    return worst, problems


def check_drawn(Y, np, a, out_png, dets, w, h):
    """The output differs from the input a (decoded) exactly on the drawn
    outlines."""
    b = Y.read_png(Path(out_png).read_bytes())
    if b.shape != a.shape:
        return ["output is %s, input %s" % (b.shape, a.shape)]
    t = max(2, min(w, h) // 200)
    mask = np.zeros((h, w), bool)
    for d in dets:
        x0, y0, x1, y1 = d["drawn"]
        band = np.zeros((h, w), bool)
        band[y0:y1 + 1, x0:x1 + 1] = True
        band[y0 + t:max(y1 - t + 1, 0), x0 + t:max(x1 - t + 1, 0)] = False
        mask |= band
    diff = (a != b).any(axis=2)
    problems = []
    outside = int((diff & ~mask).sum())
    if outside:
        problems.append("%d pixels changed outside the drawn outlines" % outside)
    if mask.any():
        changed = diff[mask].mean()
        if changed < 0.98:
            problems.append("only %.1f%% of the outline pixels changed" % (100 * changed))
    return problems


def full(detect, root, failures):
    sys.path.insert(0, str(root / "tests" / "realmodels"))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import run_realmodels as rr
    np, ort = rr.import_or_skip("numpy", "onnxruntime")
    import models
    import yolo_ref as Y
    model, why = fetch_model(rr, models)
    if model is None:
        print("SKIP: the nudenet wheel is unavailable (%s)" % why)
        return SKIP
    photos, why = fetch_images(rr, rr.cache_dir())
    if photos is None:
        print("SKIP: the scikit-image wheel (test photos) is unavailable (%s)" % why)
        return SKIP
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = Y.NUDENET_LABELS
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        images = [photos / p for p in PHOTOS]
        # a 2 x 2 mosaic (more faces), a tall crop (padding in x), a gradient
        tiles = [Y.read_png((photos / p).read_bytes()) for p in
                 ("astronaut.png", "camera.png", "chelsea.png", "coffee.png")]
        mosaic = np.zeros((600, 800, 3), np.uint8)
        for k, t in enumerate(tiles):
            r, c = divmod(k, 2)
            mosaic[r * 300:(r + 1) * 300, c * 400:(c + 1) * 400] = t[:300, :400]
        Y.write_png(d / "mosaic.png", mosaic)
        Y.write_png(d / "tall.png", tiles[0][:, 150:330].copy())
        yy, xx = np.mgrid[0:97, 0:203]
        grad = np.stack([xx * 255 // 202, yy * 255 // 96, (xx + yy) % 256], axis=2)
        Y.write_png(d / "gradient.png", grad.astype(np.uint8))
        images += [d / "mosaic.png", d / "tall.png", d / "gradient.png"]
        yaml = d / "opts.yaml"
        yaml.write_text("opt_level: 1\n")
        total, worst_all = 0, 1.0
        for img in images:
            data = img.read_bytes()
            w, h = Y.image_size(data)
            src = None  # the decoded PNG, once
            # 0.001 on the mosaic and a photo: ~50 boxes, most of them weak
            for conf in (0.25, 0.01) + ((0.001,) if img.name in LOW else ()):
                out, inp, head = d / "out.png", d / "in.npy", d / "head.npy"
                cmd = [detect, img, "--model", model, "-o", out, "--conf", conf, "--iou", 0.45,
                       "--threads", 1, "--save-input", inp, "--save-output", head]
                r = run(cmd)
                tag = "%s conf %g" % (img.name, conf)
                if r.returncode != 0:
                    failures.append("%s: detect exited %d: %s" % (tag, r.returncode, r.stderr))
                    continue
                got = parse(r.stdout)
                st = STAGES.search(r.stdout)
                if not st:
                    failures.append("%s: no stage times line in %r" % (tag, r.stdout[-300:]))
                x = np.load(inp)
                if x.shape != (1, 3, SIZE, SIZE):
                    failures.append("%s: input tensor %s" % (tag, x.shape))
                    continue
                if img.suffix == ".png":
                    if src is None:
                        src = Y.read_png(data)
                    mine = Y.letterbox_image(src, SIZE)
                    dx = float(np.abs(mine - x).max())
                    if dx > 1.01 / 255:
                        failures.append("%s: detect's letterbox differs from yolo_ref's by %.4f"
                                        % (tag, dx))
                ort_head = sess.run(None, {"images": x})[0]
                mopt_head = np.load(head)
                ref = Y.postprocess(ort_head, w, h, SIZE, conf, 0.45)
                worst, problems = match(got, ref, Y, names)
                if len(got) != len(ref):
                    problems.insert(0, "detect %d boxes, reference %d" % (len(got), len(ref)))
                for p in problems:
                    failures.append("%s: %s" % (tag, p))
                if img.suffix == ".png":
                    for p in check_drawn(Y, np, src, out, got, w, h):
                        failures.append("%s: %s" % (tag, p))
                total += len(got)
                if got:
                    worst_all = min(worst_all, worst)
                print("%-16s %4dx%-4d conf %-5g: %3d boxes (reference %3d), min IoU %.4f, "
                      "head max |mopt - ORT| %.2e, classes %s; %s"
                      % (img.name, w, h, conf, len(got), len(ref), worst if got else 1.0,
                         float(np.abs(mopt_head - ort_head).max()),
                         ",".join(sorted({g["class"] for g in got}))[:60] or "-",
                         st.group(0) if st else "no stage times"), flush=True)
        # --config: the same boxes with opt_level 1
        img = d / "mosaic.png"
        base = run([detect, img, "--model", model, "-o", d / "a.png", "--conf", 0.01])
        alt = run([detect, img, "--model", model, "-o", d / "b.png", "--conf", 0.01,
                   "--config", yaml, "--threads", 2])
        if base.returncode or alt.returncode:
            failures.append("--config run failed: %s %s" % (base.stderr, alt.stderr))
        else:
            _, problems = match(parse(alt.stdout), [
                {"class": names.index(g["class"]), "score": g["score"], "box": g["box"]}
                for g in parse(base.stdout)], Y, names)
            failures += ["--config opt_level 1, 2 threads: %s" % p for p in problems]
            print("--config opt_level: 1 with 2 threads: %d boxes, %s"
                  % (len(parse(alt.stdout)),
                     "same as the default" if not problems else "DIFFERENT"))
        # an output path that cannot be written
        r = run([detect, images[0], "--model", model, "-o", d / "no" / "such" / "dir.png"])
        if r.returncode != 1 or "cannot write the output" not in r.stderr:
            failures.append("unwritable output: exit %d, %s" % (r.returncode, r.stderr))
    print("%d boxes over %d images, min IoU %.4f" % (total, len(images), worst_all))
    return 0


def main():
    detect, root = Path(sys.argv[1]), Path(sys.argv[2])
    failures = []
    if "--hostile" in sys.argv[3:]:
        try:
            import numpy  # noqa: F401
        except ImportError as e:
            print("SKIP: %s" % e)
            return SKIP
        hostile(detect, root, failures)
    else:
        rc = full(detect, root, failures)
        if rc == SKIP:
            return SKIP
    for f in failures:
        print("FAIL: " + f)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
