#!/usr/bin/env python3
"""compare.py — libmopt vs ONNX Runtime (and optionally OpenVINO, PyTorch) on one ONNX model.

Every system gets the same seeded inputs and the same thread count, and runs
alternate inside one process (after a warm-up, round i runs every system once,
in an order rotated each round), so that frequency scaling, cache state and
noisy neighbours hit all of them alike. Prints p50/p95/p99 latency,
throughput and the ratio to ONNX Runtime, then the output differences (max
abs, cosine similarity) against ONNX Runtime, and libmopt's time per op type.

    python3 bench/compare.py tests/models/bert/model.onnx --dim batch=8 --dim seq=64 \
        --threads 4 --iterations 200 --mopt-config opt_level=0 --mopt-config opt_level=2 \
        --plots out/compare --json out/compare.json
    python3 bench/compare.py model.onnx --threads 2 --openvino   # + OpenVINO f32 and default

The functions below are also the machinery of bench/realmodels.py (the
real-model suite): make_systems, measure, summarize_systems.

See bench/COMPARE.md for every flag and how to read the output.
"""
import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

try:
    import mopt
except ImportError:  # not installed: use the in-tree binding
    sys.path.insert(0, str(REPO / "bindings" / "python"))
    import mopt


# --------------------------------------------------------------------------- statistics

def percentile(samples, q):
    """The q-th percentile (0..100) with linear interpolation between order statistics
    (numpy's default 'linear' method); samples must be non-empty."""
    s = sorted(samples)
    if not s:
        raise ValueError("percentile of no samples")
    pos = (len(s) - 1) * q / 100.0
    lo = int(np.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(samples_ms, items_per_run=1):
    """Latency summary in ms and throughput of a list of per-run latencies."""
    mean = float(np.mean(samples_ms))
    return {
        "p50": percentile(samples_ms, 50), "p95": percentile(samples_ms, 95),
        "p99": percentile(samples_ms, 99), "mean": mean, "min": min(samples_ms),
        "max": max(samples_ms), "runs": len(samples_ms),
        "throughput_per_s": 1000.0 / mean if mean > 0 else float("inf"),
        "items_per_s": items_per_run * 1000.0 / mean if mean > 0 else float("inf"),
    }


def difference(got, ref):
    """max |got - ref| and cosine similarity of two arrays, in float64."""
    a = np.asarray(got, np.float64).ravel()
    b = np.asarray(ref, np.float64).ravel()
    if a.shape != b.shape:
        return {"max_abs": float("nan"), "cosine": float("nan"),
                "error": "shape %s vs %s" % (np.shape(got), np.shape(ref))}
    if a.size == 0:
        return {"max_abs": 0.0, "cosine": 1.0}
    max_abs = float(np.max(np.abs(a - b)))
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 and nb == 0:
        cos = 1.0
    elif na == 0 or nb == 0:
        cos = 0.0
    else:
        cos = float(np.dot(a, b) / (na * nb))
    return {"max_abs": max_abs, "cosine": cos}


# --------------------------------------------------------------------------- inputs

def parse_kv_list(text, what):
    """"a=1,b=x" -> {"a": 1, "b": "x"} (ints and floats converted). A part
    without '=' continues the previous value as a comma list
    ("int8_exclude=conv1,conv2")."""
    out = {}
    last = None
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part and last is not None and isinstance(out[last], str):
            out[last] += "," + part
            continue
        if "=" not in part:
            raise SystemExit("compare.py: %s '%s': expected KEY=VALUE" % (what, part))
        k, v = (s.strip() for s in part.split("=", 1))
        for conv in (int, float):
            try:
                v = conv(v)
                break
            except ValueError:
                pass
        out[k] = v
        last = k
    return out


def make_inputs(model, dims, shapes, files, seed, int_range):
    """Seeded inputs for every model input: shapes from --shape, else the model's
    shape with symbolic dims from --dim (unset ones become 1, with a note)."""
    rng = np.random.default_rng(seed)
    feeds, notes = {}, []
    for info in model.inputs:
        if info.name in files:
            feeds[info.name] = np.load(files[info.name])
            continue
        if info.name in shapes:
            shape = shapes[info.name]
        elif info.shape is None:
            raise SystemExit("compare.py: input '%s' has unknown rank: give --shape %s=D0,D1,..."
                             % (info.name, info.name))
        else:
            shape = []
            for axis, d in enumerate(info.shape):
                if isinstance(d, int):
                    shape.append(d)
                elif d is not None and d in dims:
                    shape.append(dims[d])
                else:
                    label = d if d is not None else "%s[%d]" % (info.name, axis)
                    notes.append("dimension '%s' not given (--dim %s=N): using 1" % (label, d or
                                                                                     "NAME"))
                    shape.append(1)
        dt = info.dtype
        if dt is None:
            raise SystemExit("compare.py: input '%s' has an element type numpy lacks" % info.name)
        if dt.kind == "f":
            a = rng.standard_normal(shape).astype(dt)
        elif dt.kind == "b":
            a = rng.integers(0, 2, shape).astype(dt)
        elif "mask" in info.name.lower():
            a = np.ones(shape, dt)
        else:
            a = rng.integers(int_range[0], int_range[1], shape).astype(dt)
        feeds[info.name] = a
    return feeds, notes


# --------------------------------------------------------------------------- systems

class System:
    """One column of the comparison: a name, a run(feeds) -> [arrays] callable."""

    def __init__(self, label, kind):
        self.label, self.kind = label, kind
        self.samples_ms = []
        self.outputs = None
        self.error = None
        self.load_ms = None
        self.first_ms = None

    def close(self):
        pass


class MoptSystem(System):
    def __init__(self, path, options, threads, label):
        super().__init__(label, "mopt")
        self.options = dict(options)
        t0 = time.perf_counter()
        self.model = mopt.Model(path, **self.options)
        self.session = mopt.Session(self.model, threads=threads)
        self.load_ms = (time.perf_counter() - t0) * 1e3
        self.output_names = [o.name for o in self.model.outputs]

    def run(self, feeds):
        out = self.session.run(feeds)
        return [out[n] for n in self.output_names]

    def profile(self, feeds, runs, threads):
        """Time per op type over `runs` profiled runs of a separate session (so that
        profiling never touches the timed runs): per op type, the median over runs of
        the summed node times (robust to the odd preempted run), in ms."""
        per_run = []  # [{op: [ns, flops]}]
        nodes_per_op = {}
        with mopt.Session(self.model, threads=threads, profile=True) as s:
            s.run(feeds)  # warm-up
            for _ in range(runs):
                s.run(feeds)
                acc = {}
                for p in s.profile():
                    a = acc.setdefault(p["op"], [0, 0])
                    a[0] += p["ns"]
                    a[1] += p["flops"]
                per_run.append(acc)
            for p in s.profile():
                nodes_per_op[p["op"]] = nodes_per_op.get(p["op"], 0) + 1
        rows = []
        for op in nodes_per_op:
            ms = float(np.median([r.get(op, [0, 0])[0] for r in per_run])) / 1e6
            flops = per_run[-1].get(op, [0, 0])[1] if per_run else 0
            rows.append({"op": op, "ms": ms, "nodes": nodes_per_op[op],
                         "gflops": flops / (ms * 1e6) if flops and ms > 0 else None})
        total = sum(r["ms"] for r in rows) or 1.0
        for r in rows:
            r["share"] = r["ms"] / total
        rows.sort(key=lambda r: -r["ms"])
        return rows

    def close(self):
        self.session.close()
        self.model.close()


# --no-spin: ONNX Runtime's pool threads spin after a run by default, taking the
# CPU from whichever engine runs next in the alternating rounds (on 2 cores,
# libmopt's p50 on PP-OCR mobile cls went 4.4 -> 3.0 ms with spinning off).
ORT_NO_SPIN = False


class OrtSystem(System):
    def __init__(self, path, threads, output_names, label="onnxruntime"):
        import onnxruntime as ort
        super().__init__(label, "ort")
        ort.set_default_logger_severity(4)  # failures are reported in the table instead
        so = ort.SessionOptions()
        if ORT_NO_SPIN:
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            so.add_session_config_entry("session.inter_op.allow_spinning", "0")
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 4
        t0 = time.perf_counter()
        self.sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        self.load_ms = (time.perf_counter() - t0) * 1e3
        self.output_names = output_names
        self.version = ort.__version__

    def run(self, feeds):
        return self.sess.run(self.output_names, feeds)


class OpenvinoSystem(System):
    """OpenVINO's CPU plugin on the same ONNX file. precision "f32" sets
    INFERENCE_PRECISION_HINT=f32; None keeps the plugin's default (bf16 on CPUs
    with AVX512-BF16 or AMX, f32 elsewhere), and the label says which it chose.
    Dynamic dimensions are fixed to the feeds' shapes before compiling (as an
    application would), so the plugin compiles one static graph."""

    def __init__(self, path, threads, precision, output_names, feeds):
        import openvino as ov
        super().__init__("openvino", "openvino")
        core = ov.Core()
        config = {"INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1,
                  "PERFORMANCE_HINT": "LATENCY"}
        if precision:
            config["INFERENCE_PRECISION_HINT"] = precision
        t0 = time.perf_counter()
        model = core.read_model(str(path))
        shapes = {}
        for port in model.inputs:
            for n in port.get_names():
                if n in feeds:
                    shapes[n] = list(feeds[n].shape)
                    break
        if any(port.get_partial_shape().is_dynamic for port in model.inputs):
            model.reshape(shapes)
        self.compiled = core.compile_model(model, "CPU", config)
        self.request = self.compiled.create_infer_request()
        self.load_ms = (time.perf_counter() - t0) * 1e3
        chosen = self.compiled.get_property("INFERENCE_PRECISION_HINT")
        chosen = str(getattr(chosen, "get_type_name", lambda: chosen)())
        chosen = {"bfloat16": "bf16", "float32": "f32", "float16": "f16"}.get(chosen, chosen)
        self.precision = chosen
        self.label = "openvino[%s%s]" % ("" if precision else "default=", chosen)
        self.threads = int(self.compiled.get_property("INFERENCE_NUM_THREADS"))
        self.version = ov.__version__
        # outputs in the model's order, matched by name (index if a name is gone)
        ports = list(self.compiled.outputs)
        self.out_index = []
        for i, name in enumerate(output_names):
            k = next((j for j, p in enumerate(ports) if name in p.get_names()), i)
            self.out_index.append(k)
        self.input_names = list(shapes) or [n for n in feeds]

    def run(self, feeds):
        self.request.infer({n: feeds[n] for n in self.input_names})
        return [self.request.get_output_tensor(k).data.copy() for k in self.out_index]


# --openvino-int8: weight-bearing layers of OpenVINO's executable graph, and
# the runtime precisions that mean the layer runs int8
OV_WEIGHTED = ("FullyConnected", "Convolution", "GroupConvolution", "Deconvolution")
OV_INT8 = ("u8", "i8")


def qdq_quantize(path, feeds, out_path):
    """ONNX Runtime's quantize_static on path, calibrated on the benchmark's own
    feeds (one set: the feeds themselves): QDQ format, u8 activations, s8
    weights per output channel (U8S8, as ORT recommends for x86). A model
    with no Conv (a transformer) gets Q/DQ on its MatMul/Gemm inputs only, as
    NNCF quantizes transformers; a CNN gets ORT's default op set (Conv, Add,
    pooling, ... so that int8 chains stay int8). Written once per feeds: the
    file name carries a digest of the source and the feeds."""
    import hashlib
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    h = hashlib.sha256(Path(path).read_bytes())
    for k in sorted(feeds):
        h.update(k.encode() + str(feeds[k].shape).encode() + np.ascontiguousarray(feeds[k]).tobytes())
    out = Path(out_path).with_name("%s_%s.onnx" % (Path(out_path).stem, h.hexdigest()[:12]))
    if out.exists():
        return out
    ops = {n.op_type for n in onnx.load(str(path), load_external_data=False).graph.node}
    op_types = None if "Conv" in ops else ["MatMul", "Gemm"]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([feeds])

        def get_next(self):
            return next(self.it, None)

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.onnx")
    import logging
    level = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)  # its "consider pre-processing" advice
    try:
        quantize_static(str(path), str(tmp), Reader(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        per_channel=True, op_types_to_quantize=op_types)
    finally:
        logging.getLogger().setLevel(level)
    os.replace(tmp, out)
    return out


def openvino_int8_layers(compiled):
    """[(name, layer type, runtime precision, primitive)] of the weight-bearing
    layers of a compiled model's executable graph (get_runtime_model())."""
    rows = []
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()

        def get(k):
            return info[k].astype(str) if k in info else "?"
        if get("layerType") in OV_WEIGHTED:
            rows.append((op.get_friendly_name(), get("layerType"), get("runtimePrecision"),
                         get("primitiveType")))
    return rows


class OpenvinoInt8System(OpenvinoSystem):
    """OpenVINO on the QDQ model of qdq_quantize (its low-precision
    transformations run the Q/DQ-wrapped layers as int8; the rest runs at the
    plugin's default precision, as an NNCF-quantized model would). The
    executable graph is checked: a model where no weight-bearing layer runs
    u8/i8 is refused (the column reports the error), one where only some do
    is flagged in the label ("partial"). MOPT_VERBOSE=1 lists every such
    layer with its runtime precision and primitive on stderr."""

    def __init__(self, path, threads, output_names, feeds, qdq_dir):
        qdq = qdq_quantize(path, feeds, Path(qdq_dir) / (Path(path).stem + "_qdq"))
        super().__init__(qdq, threads, None, output_names, feeds)
        self.kind = "openvino-int8"
        self.qdq_path = str(qdq)
        layers = openvino_int8_layers(self.compiled)
        n8 = sum(1 for r in layers if r[2] in OV_INT8)
        impls = sorted({r[3] for r in layers if r[2] in OV_INT8})
        self.int8_layers = {"int8": n8, "weighted": len(layers), "primitives": impls}
        verbose = os.environ.get("MOPT_VERBOSE", "0") not in ("", "0")
        if verbose:
            for name, kind, prec, impl in layers:
                sys.stderr.write("bench: openvino-int8 node '%s' %s runtime=%s impl=%s%s\n"
                                 % (name, kind, prec, impl, "" if prec in OV_INT8 else " NOT INT8"))
        summary = "%d/%d weight-bearing layers run u8/i8 (%s); the rest at %s" % (
            n8, len(layers), ", ".join(impls) or "-", self.precision)
        self.note = "openvino int8 (%s): %s" % (qdq.name, summary)
        if n8 == 0:
            raise RuntimeError("not int8: none of its %d weight-bearing layers runs u8/i8 "
                               "(exec graph)" % len(layers))
        self.label = "openvino[int8-qdq%s,default=%s]" % (
            "" if n8 == len(layers) else ",partial %d/%d" % (n8, len(layers)), self.precision)


class TorchSystem(System):
    """A TorchScript file (--torch-script) or a factory "module_or_file.py:function"
    (--torch-factory) returning an nn.Module; called with the inputs in model order."""

    def __init__(self, script, factory, threads, input_names):
        # optional (not in requirements.txt): only --torch-* comparisons need it;
        # CI and the main job (scripts/main-job.sh) never pass them
        import torch
        super().__init__("torch", "torch")
        self.torch = torch
        torch.set_num_threads(threads)
        t0 = time.perf_counter()
        if script:
            self.module = torch.jit.load(script, map_location="cpu")
        else:
            import importlib
            import importlib.util
            mod_name, _, fn = factory.rpartition(":")
            if not mod_name or not fn:
                raise SystemExit("compare.py: --torch-factory wants MODULE:FUNCTION or FILE.py:FUNCTION")
            if mod_name.endswith(".py"):
                spec = importlib.util.spec_from_file_location("_compare_factory", mod_name)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
            else:
                mod = importlib.import_module(mod_name)
            self.module = getattr(mod, fn)()
        self.module.eval()
        self.load_ms = (time.perf_counter() - t0) * 1e3
        self.input_names = input_names
        self.version = torch.__version__

    def run(self, feeds):
        torch = self.torch
        with torch.inference_mode():
            out = self.module(*[torch.from_numpy(feeds[n]) for n in self.input_names])
        if isinstance(out, dict):
            out = list(out.values())
        elif not isinstance(out, (list, tuple)):
            out = [out]
        return [o.detach().numpy() for o in out]


# --------------------------------------------------------------------------- the run

def measure(systems, feeds, warmup, iterations, duration, progress, min_iterations=0,
            hard_limit=None, settle_ms=0.0):
    """Warm-up, then alternating timed rounds; fills each system's samples_ms.
    settle_ms: an untimed sleep after every timed run, whatever the system, so
    that one engine's spinning or winding-down workers (ORT, OpenVINO) are
    idle before the next engine's run starts.
    With a duration, rounds run until it has passed and at least min_iterations
    rounds are done, and never more than `iterations` rounds if that is set;
    past hard_limit seconds no new round starts (min_iterations or not), and a
    system's warm-up stops once it has taken hard_limit seconds."""
    live = [s for s in systems if s.error is None]
    for s in live:
        try:
            t0 = time.perf_counter_ns()
            s.outputs = s.run(feeds)
            s.first_ms = (time.perf_counter_ns() - t0) / 1e6
            for _ in range(warmup):
                if hard_limit is not None and (time.perf_counter_ns() - t0) / 1e9 >= hard_limit:
                    break
                s.run(feeds)
        except Exception as e:  # a system that cannot run is reported, not fatal
            s.error = ("%s: %s" % (type(e).__name__, e)).strip()
    live = [s for s in systems if s.error is None]
    if not live:
        return
    start = time.perf_counter()
    i = 0
    while True:
        if duration is not None:
            if time.perf_counter() - start >= duration and i >= min_iterations:
                break
            if iterations is not None and i >= iterations:
                break
            if hard_limit is not None and i > 0 and time.perf_counter() - start >= hard_limit:
                break
        elif i >= iterations:
            break
        k = i % len(live)
        for s in live[k:] + live[:k]:
            t0 = time.perf_counter_ns()
            s.run(feeds)
            s.samples_ms.append((time.perf_counter_ns() - t0) / 1e6)
            if settle_ms > 0:
                time.sleep(settle_ms / 1e3)
        i += 1
        if progress and (i % 10 == 0):
            total = ("%.0fs" % duration) if duration is not None else str(iterations)
            sys.stderr.write("\r  round %d / %s" % (i, total))
            sys.stderr.flush()
    if progress:
        sys.stderr.write("\r" + " " * 40 + "\r")


def fmt(v, spec="%.3f"):
    return "-" if v is None else spec % v


def print_tables(result, out=None):
    out = out or sys.stdout
    sysres = result["systems"]
    ref = result["reference"]
    w = max([len(k) for k in sysres] + [12])
    out.write("\nlatency (ms) over %s alternating rounds, %d thread(s)%s\n" % (
        result["rounds"], result["threads"],
        ", %s" % ", ".join("%s=%s" % kv for kv in result["dims"].items()) if result["dims"] else ""))
    if not any(not r.get("error") for r in sysres.values()):
        for label, r in sysres.items():
            out.write("%-*s  failed: %s\n" % (w, label, r["error"]))
        return
    head = "%-*s %9s %9s %9s %9s %9s %10s %10s %10s" % (
        w, "system", "load ms", "first ms", "p50", "p95", "p99", "mean", "inf/s",
        "p50/%s" % ("ORT" if ref == "onnxruntime" else "ref"))
    out.write(head + "\n" + "-" * len(head) + "\n")
    ref_p50 = sysres.get(ref, {}).get("latency_ms", {}).get("p50") if ref else None
    for label, r in sysres.items():
        if r.get("error"):
            out.write("%-*s  failed: %s\n" % (w, label, r["error"]))
            continue
        lat = r["latency_ms"]
        ratio = "%.2fx" % (lat["p50"] / ref_p50) if ref_p50 else "-"
        out.write("%-*s %9s %9s %9.3f %9.3f %9.3f %10.3f %10.1f %10s\n" % (
            w, label, fmt(r.get("load_ms"), "%.1f"), fmt(r.get("first_ms"), "%.2f"), lat["p50"],
            lat["p95"], lat["p99"], lat["mean"], r["throughput_per_s"], ratio))
    if result.get("items_per_run", 1) != 1:
        out.write("(items/s = inf/s x %d)\n" % result["items_per_run"])
    if ref_p50:
        out.write("p50/%s < 1 means faster than %s\n" % ("ORT" if ref == "onnxruntime" else "ref",
                                                         ref))
    diffs = result.get("differences", {})
    if diffs:
        out.write("\noutput difference vs %s\n" % ref)
        head = "%-*s %-24s %12s %12s" % (w, "system", "output", "max abs", "cosine")
        out.write(head + "\n" + "-" * len(head) + "\n")
        for label, per_out in diffs.items():
            for oname, d in per_out.items():
                if d.get("error"):
                    out.write("%-*s %-24s %s\n" % (w, label, oname, d["error"]))
                else:
                    out.write("%-*s %-24s %12.3g %12.8f\n" % (w, label, oname[:24], d["max_abs"],
                                                               d["cosine"]))
    for label, rows in result.get("mopt_profile", {}).items():
        out.write("\n%s: time per op type (median of profiled runs, ms per inference)\n"
                  % label)
        head = "%-24s %6s %10s %7s %9s" % ("op", "nodes", "ms", "share", "GFLOP/s")
        out.write(head + "\n" + "-" * len(head) + "\n")
        for r in rows[:12]:
            out.write("%-24s %6d %10.4f %6.1f%% %9s\n" % (r["op"][:24], r["nodes"], r["ms"],
                                                           100 * r["share"],
                                                           fmt(r["gflops"], "%.2f")))


def write_plots(result, samples, folder):
    try:
        # optional (not in requirements.txt): only --plots needs it, and without
        # it the plots are skipped with a warning; CI never passes --plots
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except ImportError:
        sys.stderr.write("warning: matplotlib is not installed: skipping plots "
                         "(pip install matplotlib)\n")
        return []
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    mp = Path(result["model"])
    stem = mp.parent.name if mp.stem == "model" and mp.parent.name else mp.stem
    if result["dims"]:
        stem += "_" + "_".join("%s%s" % kv for kv in result["dims"].items())
    written = []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, s in samples.items():
        if not s:
            continue
        xs = np.sort(s)
        ax.plot(xs, np.arange(1, len(xs) + 1) / len(xs), label=label, drawstyle="steps-post")
    ax.set_xscale("log")  # keeps the body of the distribution readable next to its tail
    ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: "%g" % v))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("latency (ms, log scale)")
    ax.set_ylabel("fraction of runs")
    ax.set_title("latency CDF: %s, threads=%d" % (stem, result["threads"]))
    ax.grid(True, alpha=0.3)
    ax.legend()
    p = folder / ("%s_latency_cdf.png" % stem)
    fig.tight_layout()
    fig.savefig(p, dpi=120)
    plt.close(fig)
    written.append(str(p))
    for label, rows in result.get("mopt_profile", {}).items():
        rows = rows[:20][::-1]
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(7, 0.3 * len(rows) + 1.5))
        ax.barh([r["op"] for r in rows], [r["ms"] for r in rows])
        ax.set_xlabel("ms per inference (sum over nodes of the op type)")
        ax.set_title("%s per-op time: %s" % (label, stem))
        ax.grid(True, axis="x", alpha=0.3)
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in label).strip("_")
        p = folder / ("%s_ops_%s.png" % (stem, safe))
        fig.tight_layout()
        fig.savefig(p, dpi=120)
        plt.close(fig)
        written.append(str(p))
    return written


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# --------------------------------------------------------------------------- reusable steps

def make_mopt_systems(path, configs, threads):
    """One libmopt column per option set; a config that fails to load becomes a
    column that reports its error."""
    systems = []
    for cfg in configs:
        label = "mopt" + ("[%s]" % ",".join("%s=%s" % kv for kv in cfg.items()) if cfg else "")
        try:
            systems.append(MoptSystem(path, cfg, threads, label))
        except mopt.MoptError as e:
            s = System(label, "mopt")
            s.error = str(e)
            systems.append(s)
    return systems


def add_other_systems(systems, path, threads, output_names, feeds, ort=True, openvino=False,
                      openvino_int8=None):
    """ONNX Runtime first (the reference), then the libmopt columns, then two
    OpenVINO columns (f32 and the plugin's default precision) when asked,
    then OpenVINO on the model quantized by qdq_quantize when openvino_int8
    is a folder for the QDQ files (OpenvinoInt8System).
    A system that is not installed is left out with a note; one that fails to
    compile (or an int8 column that does not run int8) becomes a column that
    reports the error."""
    out = list(systems)
    if ort:
        try:
            out.insert(0, OrtSystem(path, threads, output_names))
        except ImportError:
            print("note: onnxruntime is not installed: comparing libmopt configurations only")
    if openvino:
        for precision in ("f32", None):
            try:
                out.append(OpenvinoSystem(path, threads, precision, output_names, feeds))
            except ImportError:
                print("note: openvino is not importable: leaving OpenVINO out")
                break
            except Exception as e:  # reported in the table, like a libmopt load failure
                s = System("openvino[%s]" % (precision or "default"), "openvino")
                # OpenVINO's messages open with a source location: keep the last lines
                lines = [x.strip() for x in str(e).splitlines() if x.strip()]
                s.error = "%s: %s" % (type(e).__name__, " ".join(lines[-2:]))
                out.append(s)
    if openvino_int8:
        try:
            s = OpenvinoInt8System(path, threads, output_names, feeds, openvino_int8)
            print("note: " + s.note)
        except ImportError as e:
            print("note: openvino-int8 needs openvino and onnxruntime.quantization (%s): left out"
                  % e)
            s = None
        except Exception as e:
            s = System("openvino[int8-qdq]", "openvino-int8")
            lines = [x.strip() for x in str(e).splitlines() if x.strip()]
            s.error = "%s: %s" % (type(e).__name__, " ".join(lines[-2:]))
        if s is not None:
            out.append(s)
    return out


def summarize_systems(systems, feeds, output_names, batch=1, samples=False):
    """The result dict (without model/dims/threads) of measured systems:
    latency summaries, the p50 ratio to the reference (the first system that
    ran, ONNX Runtime when present) and output differences against it."""
    live = [s for s in systems if s.error is None and s.samples_ms]
    ref = live[0] if live else None
    result = {
        "rounds": len(live[0].samples_ms) if live else 0,
        "items_per_run": batch,
        "inputs": {k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in feeds.items()},
        "reference": ref.label if ref else None,
        "env": {"cpu": cpu_model(), "python": platform.python_version(),
                "mopt": mopt.version(), "mopt_library": str(mopt.library_path),
                **{s.kind: s.version for s in systems if hasattr(s, "version")}},
        "systems": {}, "differences": {}, "mopt_profile": {},
    }
    for s in systems:
        if s.error is not None or not s.samples_ms:
            result["systems"][s.label] = {"error": s.error or "no samples"}
            continue
        summ = summarize(s.samples_ms, batch)
        entry = {"load_ms": s.load_ms, "first_ms": s.first_ms,
                 "latency_ms": {k: summ[k] for k in ("p50", "p95", "p99", "mean", "min", "max")},
                 "throughput_per_s": summ["throughput_per_s"], "items_per_s": summ["items_per_s"],
                 "runs": summ["runs"]}
        if s.kind == "mopt":
            entry["config"] = s.options
        if s.kind in ("openvino", "openvino-int8"):
            entry["precision"] = s.precision
        if s.kind == "openvino-int8":
            entry["int8_layers"] = s.int8_layers
            entry["qdq_model"] = s.qdq_path
        if samples:
            entry["samples_ms"] = s.samples_ms
        result["systems"][s.label] = entry
    ref_p50 = result["systems"][ref.label]["latency_ms"]["p50"] if ref else None
    for s in live:
        result["systems"][s.label]["p50_ratio_vs_reference"] = (
            result["systems"][s.label]["latency_ms"]["p50"] / ref_p50 if ref_p50 else None)
        if s is ref:
            continue
        names = output_names if len(s.outputs) == len(output_names) else [
            "output_%d" % i for i in range(len(s.outputs))]
        result["differences"][s.label] = {n: difference(g, r) for n, g, r in
                                          zip(names, s.outputs, ref.outputs)}
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="the ONNX model")
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                    help="value of a symbolic dimension (repeatable): --dim batch=8 --dim seq=128")
    ap.add_argument("--shape", action="append", default=[], metavar="INPUT=D0,D1,..",
                    help="the full shape of an input (overrides --dim for it)")
    ap.add_argument("--input", action="append", default=[], metavar="INPUT=FILE.npy",
                    help="feed an input from a .npy file instead of random data")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random inputs (0)")
    ap.add_argument("--int-range", default="0:100", metavar="LOW:HIGH",
                    help="range of random integer inputs, e.g. token ids (0:100); "
                         "inputs named *mask* get ones")
    ap.add_argument("--threads", type=int, default=1, help="threads for every system (1)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed runs per system (5)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--iterations", type=int, default=None, help="timed rounds (default 100)")
    g.add_argument("--duration", type=float, default=None, metavar="S",
                   help="run rounds for S seconds instead")
    ap.add_argument("--mopt-config", action="append", default=[], metavar="K=V,K=V",
                    help="a libmopt option set (repeatable; one column each), e.g. "
                         "'opt_level=0' or 'opt_level=2,precision=bf16'. Default: library defaults")
    ap.add_argument("--no-ort", action="store_true", help="leave ONNX Runtime out")
    ap.add_argument("--ort-extra", action="append", default=[], metavar="LABEL=MODEL.onnx",
                    help="also run ONNX Runtime on another file with the same inputs and outputs "
                         "(e.g. LABEL=qdq with the model quantized by onnxruntime.quantization); "
                         "its column is onnxruntime[LABEL], compared with the reference")
    ap.add_argument("--openvino", action="store_true",
                    help="add OpenVINO's CPU plugin: one column with INFERENCE_PRECISION_HINT=f32, "
                         "one with its default precision (same threads: INFERENCE_NUM_THREADS)")
    ap.add_argument("--openvino-int8", nargs="?", const=str(REPO / "build" / "bench-qdq"),
                    metavar="DIR",
                    help="add OpenVINO on the model quantized by ORT's quantize_static (QDQ, u8 "
                         "activations, s8 per-channel weights, calibrated on these inputs; "
                         "written to DIR, default build/bench-qdq): its exec graph must run the "
                         "weight-bearing layers u8/i8, else the column is refused")
    ap.add_argument("--torch-script", metavar="MODULE.pt", help="also run this TorchScript file")
    ap.add_argument("--torch-factory", metavar="MOD:FN",
                    help="also run the nn.Module returned by FN() of a module or FILE.py")
    ap.add_argument("--no-spin", action="store_true",
                    help="ONNX Runtime with session.intra_op/inter_op.allow_spinning=0 (its "
                         "spinning pool threads otherwise take CPU from the next engine's run; "
                         "off by default: ORT's defaults)")
    ap.add_argument("--settle", type=float, default=0.0, metavar="MS",
                    help="sleep MS ms after every timed run of every system, so that no "
                         "engine's workers still run during the next one's (0)")
    ap.add_argument("--profile-runs", type=int, default=10,
                    help="profiled libmopt runs for the per-op table (10; 0 = off)")
    ap.add_argument("--plots", metavar="DIR", help="write PNG plots there (needs matplotlib)")
    ap.add_argument("--json", metavar="FILE", help="write all figures as JSON")
    ap.add_argument("--samples", action="store_true", help="include raw latencies in the JSON")
    ap.add_argument("--quiet", action="store_true", help="no progress output")
    args = ap.parse_args(argv)

    if args.threads < 1:
        ap.error("--threads must be >= 1 (every system gets the same explicit count)")
    global ORT_NO_SPIN
    ORT_NO_SPIN = args.no_spin
    iterations = args.iterations if args.iterations is not None else 100
    dims = {}
    for d in args.dim:
        dims.update(parse_kv_list(d, "--dim"))
    for k, v in dims.items():
        if not isinstance(v, int) or v < 0:
            ap.error("--dim %s=%s: the value must be a non-negative integer" % (k, v))
    shapes = {}
    for s in args.shape:
        name, _, text = s.partition("=")
        try:
            shapes[name] = [int(x) for x in text.split(",") if x.strip()]
        except ValueError:
            ap.error("--shape %s: expected INPUT=D0,D1,..." % s)
    files = dict(s.split("=", 1) for s in args.input)
    lo, _, hi = args.int_range.partition(":")
    int_range = (int(lo), int(hi))
    configs = [parse_kv_list(c, "--mopt-config") for c in args.mopt_config] or [{}]
    path = Path(args.model)
    progress = not args.quiet and sys.stderr.isatty()

    # The first libmopt config is also where the input description comes from.
    systems = make_mopt_systems(path, configs, args.threads)
    info_model = next((s.model for s in systems if s.error is None), None)
    if info_model is None:
        # describe the inputs with a defaults-only model load if every config failed
        try:
            info_model = mopt.Model(path, opt_level=0)
        except mopt.MoptError as e:
            raise SystemExit("compare.py: libmopt cannot load %s: %s" % (path, e))
    feeds, notes = make_inputs(info_model, dims, shapes, files, args.seed, int_range)
    output_names = [o.name for o in info_model.outputs]
    for n in notes:
        print("note: " + n)
    systems = add_other_systems(systems, path, args.threads, output_names, feeds,
                                ort=not args.no_ort, openvino=args.openvino,
                                openvino_int8=args.openvino_int8)
    for extra in args.ort_extra:
        label, _, extra_path = extra.partition("=")
        if not extra_path:
            ap.error("--ort-extra %s: expected LABEL=MODEL.onnx" % extra)
        systems.append(OrtSystem(extra_path, args.threads, output_names,
                                 "onnxruntime[%s]" % label))
    if args.torch_script or args.torch_factory:
        try:
            systems.append(TorchSystem(args.torch_script, args.torch_factory, args.threads,
                                       [i.name for i in info_model.inputs]))
        except ImportError:
            print("note: torch is not importable: leaving PyTorch out")

    measure(systems, feeds, args.warmup,
            args.iterations if args.duration is not None else iterations, args.duration, progress,
            settle_ms=args.settle)

    batch = dims.get("batch", 1)
    result = summarize_systems(systems, feeds, output_names, batch, samples=args.samples)
    result.update({"model": str(path), "dims": dims, "threads": args.threads, "seed": args.seed,
                   "warmup": args.warmup, "ort_no_spin": args.no_spin,
                   "settle_ms": args.settle})
    live = [s for s in systems if s.error is None]
    if args.profile_runs > 0:
        for s in live:
            if s.kind == "mopt":
                result["mopt_profile"][s.label] = s.profile(feeds, args.profile_runs, args.threads)

    print("model %s, inputs %s" % (path, ", ".join("%s %s%s" % (k, v.dtype, list(v.shape))
                                                  for k, v in feeds.items())))
    if args.no_spin or args.settle:
        print("harness: %s, %.1f ms settle after every run" % (
            "ONNX Runtime spinning off" if args.no_spin else "ONNX Runtime defaults", args.settle))
    print_tables(result)
    if args.plots and live:
        written = write_plots(result, {s.label: s.samples_ms for s in systems}, args.plots)
        for p in written:
            print("wrote " + p)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2, default=float)
        print("wrote " + args.json)
    for s in systems:
        s.close()
    return 0 if all(s.error is None for s in systems) else 1


if __name__ == "__main__":
    sys.exit(main())
