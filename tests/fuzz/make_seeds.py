#!/usr/bin/env python3
"""make_seeds.py — builds the seed corpora of the libFuzzer targets from the
files committed in the repository (nothing here is committed as a corpus).

    make_seeds.py SRC_ROOT OUT_DIR [--small] [TARGET ...]

writes OUT_DIR/<target>/ for each target (default: all):
  onnx_model    test models (tests/unit/data, tests/hostile/corpus, a sample of
                tests/ops/data, and with the full set tests/models/*)
  tensor_pb     tests/unit/data/*.pb, TensorProtos made from .npy files in
                each encoding (raw_data and the typed fields), and small
                initializers taken from the test models
  npy           tests/unit/data/npy/*, a sample of the op-case .npy files, and
                the same arrays written as format versions 1.0, 2.0 and 3.0
  options_yaml  a handful of option files (valid and invalid)
  mopt          the hostile .mopt corpus (tests/hostile/mopt; fuzz_mopt fixes
                the header checksum of each input, so its corrupt files are
                good seeds) and any other committed .mopt file
--small keeps each corpus small (the short meson test): fewer op cases and no
large models. Needs numpy; onnx is optional (without it tensor_pb gets only
the committed .pb files and raw copies).
"""
import glob
import hashlib
import io
import os
import shutil
import sys

TARGETS = ["onnx_model", "tensor_pb", "npy", "options_yaml", "mopt"]


def put(out, data):
    """Stores data under its hash (deduplicated)."""
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def copy_files(out, paths, max_bytes=None):
    n = 0
    for p in paths:
        if not os.path.isfile(p):
            continue
        if max_bytes is not None and os.path.getsize(p) > max_bytes:
            continue
        with open(p, "rb") as f:
            put(out, f.read())
        n += 1
    return n


def sample(paths, step):
    paths = sorted(paths)
    return paths[::step] if step > 1 else paths


def onnx_models(src, small):
    paths = glob.glob(f"{src}/tests/unit/data/**/*.onnx", recursive=True)
    paths += glob.glob(f"{src}/tests/hostile/corpus/*.onnx")
    ops = [p for p in glob.glob(f"{src}/tests/ops/data/**/model.onnx", recursive=True)
           if os.path.getsize(p) <= 8192]
    paths += sample(ops, 8 if small else 2)
    paths += glob.glob(f"{src}/tests/passes/**/*.onnx", recursive=True)[: 4 if small else None]
    if not small:
        paths += glob.glob(f"{src}/tests/models/*/model.onnx")
    return paths


def npy_files(src, small):
    paths = glob.glob(f"{src}/tests/unit/data/npy/*.npy")
    ops = glob.glob(f"{src}/tests/ops/data/*/test_data_set_0/*.npy")
    ops = [p for p in ops if os.path.getsize(p) <= 4096]
    return paths, sample(ops, 40 if small else 8)


def gen_npy(out, src, small):
    import numpy as np
    from numpy.lib import format as npf
    own, ops = npy_files(src, small)
    copy_files(out, own + ops)
    arrays = [np.zeros((2, 3), np.float32), np.arange(5, dtype=np.int64),
              np.array(True), np.zeros((0, 4), np.uint8), np.ones((1, 1, 2), np.float16)]
    for p in ops[:20]:
        try:
            arrays.append(np.load(p))
        except Exception:
            pass
    for a in arrays:
        for version in [(1, 0), (2, 0), (3, 0)]:
            buf = io.BytesIO()
            try:
                npf.write_array(buf, a, version=version)
            except Exception:
                continue
            put(out, buf.getvalue())
    # byte order and layout variants the reader must refuse cleanly
    for a in [np.arange(6, dtype=">i4").reshape(2, 3), np.asfortranarray(np.zeros((2, 3)))]:
        buf = io.BytesIO()
        np.save(buf, a)
        put(out, buf.getvalue())


def gen_tensor_pb(out, src, small):
    copy_files(out, glob.glob(f"{src}/tests/unit/data/*.pb"))
    try:
        import numpy as np
        import onnx
        from onnx import helper, numpy_helper, TensorProto
    except ImportError:
        return
    own, ops = npy_files(src, small)
    for p in own + ops:
        try:
            a = np.load(p)
        except Exception:
            continue
        try:
            t = numpy_helper.from_array(a, name="t")
        except Exception:
            continue
        put(out, t.SerializeToString())
        # the same values in the typed field instead of raw_data
        try:
            if a.dtype.kind in "biu" and a.size:
                typed = helper.make_tensor("t", t.data_type, a.shape, a.flatten().tolist())
                put(out, typed.SerializeToString())
            elif a.dtype.kind == "f" and a.size and a.dtype.itemsize >= 4:
                typed = helper.make_tensor("t", t.data_type, a.shape, a.flatten().tolist())
                put(out, typed.SerializeToString())
        except Exception:
            pass
    # external data and segments must be refused, strings are unsupported
    t = helper.make_tensor("ext", TensorProto.FLOAT, [2], [1.0, 2.0])
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "w.bin"
    del t.float_data[:]
    put(out, t.SerializeToString())
    put(out, helper.make_tensor("s", TensorProto.STRING, [1], [b"x"]).SerializeToString())
    # initializers of the small test models
    n = 0
    for p in glob.glob(f"{src}/tests/unit/data/*.onnx") + sample(
            glob.glob(f"{src}/tests/ops/data/*/model.onnx"), 16):
        try:
            m = onnx.load(p, load_external_data=False)
        except Exception:
            continue
        for init in m.graph.initializer:
            data = init.SerializeToString()
            if len(data) <= 4096:
                put(out, data)
                n += 1
        if small and n > 40:
            break


YAML_SEEDS = [
    b"threads: 2\nbackend: ref\n",
    b"threads: 1\nopt_level: 0\nbackend: cpu\nprecision: fp32\nmemory_limit: 67108864\n"
    b"verbose: 0\nprofile: ''\nexternal_data_dir: /tmp\n",
    b"# comment\n---\nopt_level: 3\n...\n",
    b"{threads: 4, backend: onednn}\n",
    b"threads: '2'\nmemory_limit: 1e3\n",
    b"threads: -1\n",
    b"opt_level: 9\n",
    b"backend: gpu\n",
    b"unknown: 1\n",
    b"threads: [1, 2]\n",
    b"threads:\n  nested: 1\n",
    b"a: &x 1\nb: *x\n",
    b"- threads\n- 2\n",
    b"threads: 2\n---\nthreads: 3\n",
    b"\"threads\": !!int 2\n",
    b"precision: |\n  fp32\n",
    b"? threads\n: 2\n",
    b"threads: 0x10\n",
    b"memory_limit: 9223372036854775808\n",
    b"profile: \"trace.json\"\n",
    b"\xef\xbb\xbfthreads: 1\n",
    b"threads: 1\r\nbackend: ref\r\n",
    b"",
    b"%YAML 1.1\n---\nthreads: 1\n",
]


def gen_options_yaml(out, src, small):
    for s in YAML_SEEDS:
        put(out, s)
    for p in glob.glob(f"{src}/**/*.yaml", recursive=True)[:20]:
        if "/build" not in p and os.path.getsize(p) <= 4096:
            copy_files(out, [p])


# the fuzzers' past findings (tests/fuzz/regressions, by name prefix) are
# seeds too, so that every fuzz run replays them under libFuzzer's memory
# and time limits, which the cmocka replay does not have
REGRESSION_PREFIX = {"onnx_model": "model_", "mopt": "mopt_", "tensor_pb": "tensor_",
                     "npy": "npy_", "options_yaml": "options_"}


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    small = "--small" in argv
    if len(args) < 2:
        sys.exit(__doc__)
    src, out = args[0], args[1]
    targets = args[2:] or TARGETS
    for t in targets:
        d = os.path.join(out, t)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        if t == "onnx_model":
            copy_files(d, onnx_models(src, small))
        elif t == "tensor_pb":
            gen_tensor_pb(d, src, small)
        elif t == "npy":
            gen_npy(d, src, small)
        elif t == "options_yaml":
            gen_options_yaml(d, src, small)
        elif t == "mopt":
            copy_files(d, [p for p in glob.glob(f"{src}/tests/**/*.mopt", recursive=True)
                           if os.path.getsize(p) <= 65536])
        else:
            sys.exit(f"make_seeds.py: unknown target {t}")
        copy_files(d, glob.glob(f"{src}/tests/fuzz/regressions/{REGRESSION_PREFIX[t]}*"))
        print(f"{t}: {len(os.listdir(d))} seeds in {d}")


if __name__ == "__main__":
    main(sys.argv[1:])
