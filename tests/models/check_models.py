"""check_models.py — guard against stale model-test references.

Reruns ONNX Runtime (CPU, one thread, no graph optimizations) on every
committed case tests/models/<model>/test_data_set_<k>/ and compares with the
committed output_<j>.npy (dtype, shape, and values within the model's
`tolerance` file, "atol rtol", default 1e-4 0). Needs only numpy and
onnxruntime (no torch). Prints one line per case and "N passed, N failed";
exits 1 on any failure, 77 (the meson/automake "skipped" code) when
onnxruntime is not installed.

Usage: python3 tests/models/check_models.py [DIR ...]   (default: tests/models)
"""
import glob
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def read_tolerance(folder):
    path = os.path.join(folder, "tolerance")
    if not os.path.exists(path):
        return 1e-4, 0.0
    with open(path) as f:
        atol, rtol = f.read().split()[:2]
    return float(atol), float(rtol)


def numbered(folder, prefix):
    """input_0.npy, input_1.npy, ... in numeric order, stopping at the first gap."""
    files = []
    while os.path.exists(os.path.join(folder, f"{prefix}_{len(files)}.npy")):
        files.append(os.path.join(folder, f"{prefix}_{len(files)}.npy"))
    return files


def check_case(sess, ds, atol, rtol):
    """Returns None when the case matches, else a message."""
    in_names = [i.name for i in sess.get_inputs()]
    out_names = [o.name for o in sess.get_outputs()]
    ins = [np.load(f) for f in numbered(ds, "input")]
    exp = [np.load(f) for f in numbered(ds, "output")]
    if len(ins) != len(in_names):
        return f"{len(ins)} input files for {len(in_names)} model inputs"
    if len(exp) != len(out_names):
        return f"{len(exp)} output files for {len(out_names)} model outputs"
    got = sess.run(out_names, dict(zip(in_names, ins)))
    for name, g, e in zip(out_names, got, exp):
        if g.dtype != e.dtype or g.shape != e.shape:
            return f"output {name}: got {g.dtype}{list(g.shape)}, stored {e.dtype}{list(e.shape)}"
        if g.size == 0:
            continue
        if not np.all(np.isfinite(e)):
            return f"output {name}: stored reference is not finite"
        diff = np.abs(g.astype(np.float64) - e.astype(np.float64))
        bound = atol + rtol * np.abs(e.astype(np.float64))
        if np.any(diff > bound):
            i = np.unravel_index(int(np.argmax(diff - bound)), diff.shape)
            return (f"output {name}: max abs diff {float(diff.max()):.3g} at {[int(x) for x in i]} "
                    f"(got {float(g[i])!r}, stored {float(e[i])!r}; atol {atol:g} rtol {rtol:g})")
    return None


def main(argv):
    try:
        import onnxruntime as ort
    except ImportError:
        print("onnxruntime is not installed: skipped")
        return 77
    roots = argv[1:] or [HERE]
    models = []
    for root in roots:
        found = glob.glob(os.path.join(root, "*", "model.onnx"))
        models += sorted(os.path.dirname(p) for p in found)
        if os.path.exists(os.path.join(root, "model.onnx")):
            models.append(root)
    passed = failed = 0
    for folder in models:
        atol, rtol = read_tolerance(folder)
        name = os.path.basename(folder)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            sess = ort.InferenceSession(os.path.join(folder, "model.onnx"), so,
                                        providers=["CPUExecutionProvider"])
        except Exception as exc:  # a broken model fails its cases, it does not stop the run
            sets = glob.glob(os.path.join(folder, "test_data_set_*"))
            print(f"FAIL {name}: cannot load model: {exc}")
            failed += max(1, len(sets))
            continue
        sets = sorted(glob.glob(os.path.join(folder, "test_data_set_*")),
                      key=lambda p: int(p.rsplit("_", 1)[1]))
        if not sets:
            print(f"FAIL {name}: no test_data_set_* folders")
            failed += 1
        for ds in sets:
            case = f"{name}/{os.path.basename(ds)}"
            try:
                msg = check_case(sess, ds, atol, rtol)
            except Exception as exc:
                msg = f"error: {exc}"
            if msg is None:
                print(f"ok   {case}")
                passed += 1
            else:
                print(f"FAIL {case}: {msg}")
                failed += 1
    if passed + failed == 0:
        print("no models found under " + ", ".join(roots))
        failed = 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
