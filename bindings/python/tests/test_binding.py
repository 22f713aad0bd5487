"""test_binding.py — pytest suite for the mopt ctypes binding (meson suite 'python').

Expected values come from independent sources: the committed ONNX Runtime
references in tests/models/, numpy, and the ONNX files themselves (read with
the onnx package). Tiny models are built here with onnx.helper so that the
binding's mechanics are tested even on ops-light builds.
"""
import gc
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mopt
from mopt import _capi, core

PKG_ROOT = Path(__file__).resolve().parent.parent
REPO = PKG_ROOT.parent.parent
MODELS = REPO / "tests" / "models"


# --------------------------------------------------------------------------- helpers

def tiny_model_bytes(k=8, n=4):
    """y = x @ W, z = softmax(y) with x [batch, k]; returns (bytes, W)."""
    w = np.random.default_rng(0).standard_normal((k, n)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm"),
         helper.make_node("Softmax", ["y"], ["z"], axis=-1, name="sm")],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", k])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", n]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", n])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString(), w


def softmax(a):
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture
def tiny():
    data, w = tiny_model_bytes()
    with mopt.Model(data, threads=1) as model:
        yield model, w


def model_cases():
    cases = []
    for name in ("cnn", "bert"):
        for ds in sorted((MODELS / name).glob("test_data_set_*")):
            cases.append((name, ds.name))
    return cases


def load_case(name, ds):
    folder = MODELS / name / ds
    ins = [np.load(p) for p in sorted(folder.glob("input_*.npy"), key=lambda p: int(p.stem[6:]))]
    outs = [np.load(p) for p in sorted(folder.glob("output_*.npy"),
                                       key=lambda p: int(p.stem[7:]))]
    atol, rtol = (float(v) for v in (MODELS / name / "tolerance").read_text().split()[:2])
    return ins, outs, atol, rtol


ONNX_NP = {TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64,
           TensorProto.INT32: np.int32, TensorProto.BOOL: np.bool_}


def onnx_io(vi):
    """(name, numpy dtype, shape) of an ONNX ValueInfo, the binding's way."""
    t = vi.type.tensor_type
    shape = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                  for d in t.shape.dim)
    return vi.name, np.dtype(ONNX_NP[t.elem_type]), shape


# --------------------------------------------------------------------------- library

def test_library_loaded_and_version_matches():
    assert Path(mopt.library_path).is_file()
    if os.environ.get("MOPT_LIBRARY"):
        assert Path(mopt.library_path) == Path(os.environ["MOPT_LIBRARY"])
    assert mopt.version_number() // 10000 == mopt.BINDING_VERSION_NUMBER // 10000
    major, minor, patch = (int(x) for x in mopt.version().split("."))
    assert mopt.version_number() == major * 10000 + minor * 100 + patch


def test_version_mismatch_is_refused(monkeypatch):
    monkeypatch.setattr(_capi, "BINDING_VERSION_MAJOR", 99)
    with pytest.raises(mopt.LibraryNotFoundError, match="major version 99"):
        _capi.load()


def run_import(env_lib, pkg_parent, cwd):
    env = dict(os.environ)
    env.pop("MOPT_LIBRARY", None)
    if env_lib is not None:
        env["MOPT_LIBRARY"] = str(env_lib)
    code = "import sys; sys.path.insert(0, %r); import mopt; print(mopt.library_path)" % str(
        pkg_parent)
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=60)


def copy_package(dst):
    dst.mkdir(parents=True)
    for f in (PKG_ROOT / "mopt").glob("*.py"):
        (dst / f.name).write_text(f.read_text())


def test_discovery_bad_env_path_fails_clearly(tmp_path):
    r = run_import(tmp_path / "nope.so", PKG_ROOT, tmp_path)
    assert r.returncode != 0
    assert "MOPT_LIBRARY" in r.stderr and "nope.so" in r.stderr


def test_discovery_next_to_package(tmp_path):
    copy_package(tmp_path / "site" / "mopt")
    (tmp_path / "site" / "mopt" / "libmopt.so").symlink_to(mopt.library_path)
    r = run_import(None, tmp_path / "site", tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "site" / "mopt" / "libmopt.so")


def test_discovery_build_folder_above(tmp_path):
    copy_package(tmp_path / "tree" / "bindings" / "python" / "mopt")
    (tmp_path / "tree" / "build").mkdir()
    (tmp_path / "tree" / "build" / "libmopt.so").symlink_to(mopt.library_path)
    r = run_import(None, tmp_path / "tree" / "bindings" / "python", tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "tree" / "build" / "libmopt.so")


def test_discovery_nothing_found_message(tmp_path, monkeypatch):
    monkeypatch.delenv("MOPT_LIBRARY", raising=False)
    monkeypatch.setattr(_capi, "_candidates", lambda: iter(()))
    with pytest.raises(mopt.LibraryNotFoundError, match="MOPT_LIBRARY"):
        _capi.find_library()


def test_supported_ops():
    ops = mopt.supported_ops()
    assert all(isinstance(o, str) and o for o in ops)
    assert len(set(ops)) == len(ops)
    assert {"MatMul", "Softmax", "Conv"} <= set(ops)


# --------------------------------------------------------------------------- options

def test_options_dict_like():
    with mopt.Options(threads=3, backend="ref") as o:
        assert o["threads"] == 3 and o["backend"] == "ref"
        assert o["opt_level"] == 3  # the documented default (mopt.h)
        assert list(o) == ["threads", "backend"] and len(o) == 2 and "threads" in o
        o["threads"] = 1
        o["profile"] = True
        assert o["threads"] == 1 and o["profile"] == "1"
        c = o.copy()
        c["threads"] = 5
        assert o["threads"] == 1 and c["threads"] == 5
        assert o.to_dict() == {"backend": "ref", "threads": 1, "profile": "1"}
        c.close()


@pytest.mark.parametrize("kwargs, exc, words", [
    ({"bogus": 1}, mopt.InvalidArgumentError, ["bogus"]),
    ({"threads": -1}, mopt.InvalidArgumentError, ["threads"]),
    ({"opt_level": 9}, mopt.InvalidArgumentError, ["opt_level"]),
    ({"backend": "gpu"}, mopt.InvalidArgumentError, ["backend", "gpu"]),
    ({"threads": "many"}, mopt.InvalidArgumentError, ["threads"]),
    ({"threads": [1]}, mopt.InvalidArgumentError, ["threads", "list"]),
])
def test_options_errors(kwargs, exc, words):
    with pytest.raises(exc) as ei:
        mopt.Options(**kwargs)
    assert ei.value.status == mopt.errors.ERR_INVALID_ARGUMENT
    assert isinstance(ei.value, ValueError)
    for w in words:
        assert w in str(ei.value)


def test_options_errors_reach_model_and_session(tiny):
    data, _ = tiny_model_bytes()
    with pytest.raises(mopt.InvalidArgumentError, match="precision"):
        mopt.Model(data, precision="fp7")
    model, _ = tiny
    with pytest.raises(mopt.InvalidArgumentError, match="threads"):
        mopt.Session(model, threads=100000)


def test_options_unknown_key_read():
    with mopt.Options() as o:
        with pytest.raises(KeyError):
            o["nope"]
        assert o.get("nope", 7) == 7


def test_options_yaml():
    with mopt.Options() as o:
        o.load_yaml_string("threads: 2\nbackend: ref\n")
        assert o["threads"] == 2 and o["backend"] == "ref"
        assert o.copy()["threads"] == 2
        with pytest.raises(mopt.MoptError) as ei:
            o.load_yaml_string("threads: 2\nbogus: 1\n")
        assert "line 2" in str(ei.value) and "bogus" in str(ei.value)


def test_session_inherits_and_overrides_model_options(tiny):
    model, _ = tiny
    assert model.options["threads"] == 1
    with mopt.Session(model, opt_level=1) as s:
        assert s.options["threads"] == 1 and s.options["opt_level"] == 1
    with mopt.Session(model, options=mopt.Options(threads=2)) as s:
        assert s.options["threads"] == 2
    assert model.options["threads"] == 1


# --------------------------------------------------------------------------- model info

def test_tiny_model_info(tiny):
    model, w = tiny
    assert [(i.name, i.dtype, i.shape) for i in model.inputs] == [
        ("x", np.dtype(np.float32), ("batch", 8))]
    assert [(o.name, o.shape) for o in model.outputs] == [("z", ("batch", 4)), ("y", ("batch", 4))]
    assert model.opset == 17
    assert model.opset_for("com.example") == -1
    assert model.parameter_count == w.size
    assert model.parameter_bytes == w.nbytes


def test_tiny_model_graph_opt_level_0():
    data, _ = tiny_model_bytes()
    with mopt.Model(data, opt_level=0) as model:
        assert model.node_count == 2
        assert model.op_histogram == {"MatMul": 1, "Softmax": 1}
        assert model.nodes == [("mm", "MatMul"), ("sm", "Softmax")]


@pytest.mark.parametrize("name", ["cnn", "bert"])
def test_model_info_matches_onnx_file(name):
    path = MODELS / name / "model.onnx"
    proto = onnx.load(str(path))
    inits = {t.name for t in proto.graph.initializer}
    with mopt.Model(path, opt_level=0) as model:
        want_in = [onnx_io(vi) for vi in proto.graph.input if vi.name not in inits]
        assert [(i.name, i.dtype, i.shape) for i in model.inputs] == want_in
        assert [(o.name, o.dtype, o.shape) for o in model.outputs] == [
            onnx_io(vi) for vi in proto.graph.output]
        assert model.opset == next(o.version for o in proto.opset_import if o.domain in ("",
                                                                                       "ai.onnx"))
        want_params = sum(int(np.prod(t.dims)) for t in proto.graph.initializer)
        assert model.parameter_count == want_params
        hist = model.op_histogram
        assert sum(hist.values()) == model.node_count > 0
        # opt_level 0 runs the graph as imported; Constant nodes may become weights.
        onnx_hist = Counter(n.op_type for n in proto.graph.node)
        onnx_hist.pop("Constant", None)
        hist.pop("Constant", None)
        assert hist == dict(onnx_hist)
        assert "Model" in repr(model)


def test_load_from_bytes_and_path_agree(tmp_path):
    data, _ = tiny_model_bytes()
    p = tmp_path / "tiny.onnx"
    p.write_bytes(data)
    x = np.random.default_rng(1).standard_normal((2, 8)).astype(np.float32)
    with mopt.Model(p) as a, mopt.Model(bytearray(data)) as b:
        assert a.path == str(p) and b.path is None
        ra = mopt.Session(a).run({"x": x})
        rb = mopt.Session(b).run({"x": x})
    for k in ("y", "z"):
        np.testing.assert_array_equal(ra[k], rb[k])


# --------------------------------------------------------------------------- running

def test_tiny_run_matches_numpy(tiny):
    model, w = tiny
    x = np.random.default_rng(2).standard_normal((5, 8)).astype(np.float32)
    with mopt.Session(model) as s:
        out = s.run({"x": x})
    assert list(out) == ["z", "y"]
    np.testing.assert_allclose(out["y"], x.astype(np.float64) @ w, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(out["z"], softmax(x.astype(np.float64) @ w), atol=1e-6)
    y = out["y"]
    assert y.dtype == np.float32 and y.flags.c_contiguous and y.flags.writeable
    # no copy: the array views the library's output tensor, which its base owns
    assert isinstance(y.base, core._TensorMemory)
    assert y.ctypes.data == y.base.__array_interface__["data"][0]


def test_output_selection_and_list_feeds(tiny):
    model, w = tiny
    x = np.ones((1, 8), np.float32)
    with mopt.Session(model) as s:
        assert list(s.run({"x": x}, output_names=["y"])) == ["y"]
        assert list(s.run([x], output_names="z")) == ["z"]
        np.testing.assert_allclose(s.run([x.tolist()])["y"], x @ w, atol=1e-5)
        with pytest.raises(mopt.NotFoundError, match="nope"):
            s.run({"x": x}, output_names=["nope"])


@pytest.mark.parametrize("name, ds", model_cases())
@pytest.mark.parametrize("opt_level", [0, 2])
def test_models_match_reference(name, ds, opt_level):
    ins, outs, atol, rtol = load_case(name, ds)
    with mopt.Model(MODELS / name / "model.onnx", opt_level=opt_level) as model:
        feeds = {info.name: a for info, a in zip(model.inputs, ins)}
        with mopt.Session(model, threads=2) as s:
            got = s.run(feeds)
        assert list(got) == [o.name for o in model.outputs]
        for (oname, g), want in zip(got.items(), outs):
            assert g.shape == want.shape and g.dtype == want.dtype, oname
            np.testing.assert_allclose(g, want, atol=atol, rtol=rtol, err_msg=oname)


def test_models_threads_agree():
    ins, outs, atol, rtol = load_case("bert", "test_data_set_0")
    with mopt.Model(MODELS / "bert" / "model.onnx") as model:
        r1 = mopt.Session(model, threads=1).run(ins)
        r4 = mopt.Session(model, threads=4).run(ins)
    for k in r1:
        np.testing.assert_allclose(r1[k], r4[k], atol=atol, rtol=rtol)


# --------------------------------------------------------------------------- errors

def test_bad_path_raises_file_error(tmp_path):
    with pytest.raises(mopt.FileError) as ei:
        mopt.Model(tmp_path / "missing.onnx")
    e = ei.value
    assert e.status == mopt.errors.ERR_IO and isinstance(e, OSError)
    assert "missing.onnx" in str(e) and e.message


def test_garbage_bytes_raise_parse_error():
    with pytest.raises(mopt.ParseError) as ei:
        mopt.Model(b"\xff\xff\xff\xff this is not a protobuf")
    assert ei.value.status == mopt.errors.ERR_PARSE and ei.value.message


def test_run_errors_cnn():
    with mopt.Model(MODELS / "cnn" / "model.onnx") as model, mopt.Session(model) as s:
        good = np.zeros((1, 3, 32, 32), np.float32)
        with pytest.raises(mopt.DTypeError) as ei:
            s.run({"input": good.astype(np.float64)})
        assert isinstance(ei.value, TypeError) and ei.value.status == mopt.errors.ERR_TYPE
        assert "input" in str(ei.value) and "f64" in str(ei.value)
        with pytest.raises(mopt.ShapeError) as ei:
            s.run({"input": np.zeros((1, 3, 16, 16), np.float32)})
        assert "input" in str(ei.value) and "16" in str(ei.value)
        with pytest.raises(mopt.ShapeError):
            s.run({"input": np.zeros((3, 32, 32), np.float32)})
        with pytest.raises(mopt.NotFoundError) as ei:
            s.run({"image": good})
        assert "image" in str(ei.value) and isinstance(ei.value, KeyError)
        with pytest.raises(mopt.InvalidArgumentError):
            s.run({})
        with pytest.raises(mopt.DTypeError, match="complex"):
            s.run({"input": good.astype(np.complex64)})
        with pytest.raises(mopt.InvalidArgumentError):
            s.run("input")
        # the session still works after errors
        assert s.run({"input": good})["logits"].shape == (1, 10)
        assert s.stats()["runs"] == 1


def test_errors_carry_status_name():
    with pytest.raises(mopt.MoptError) as ei:
        mopt.Options(bogus=1)
    assert ei.value.status_name == "invalid argument"
    assert str(ei.value).startswith("invalid argument: ")


# --------------------------------------------------------------------------- copies

def data_ptr(handle):
    return core._lib.mopt_tensor_data(handle)


def test_contiguous_input_is_not_copied(tiny):
    model, _ = tiny
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    with mopt.Session(model) as s:
        t, arr = s._wrap_input("x", x)
        try:
            assert arr is x
            assert data_ptr(t) == x.ctypes.data
        finally:
            core._lib.mopt_tensor_destroy(t)


@pytest.mark.parametrize("make", [
    lambda a: a[:, ::2],                         # strided
    lambda a: np.asfortranarray(a),              # Fortran order
    lambda a: a.astype(a.dtype.newbyteorder()),  # byte-swapped
])
def test_non_contiguous_input_is_copied_correctly(tiny, make):
    model, _ = tiny
    base = np.arange(32, dtype=np.float32).reshape(4, 8)
    x = make(base)
    with mopt.Session(model) as s:
        t, arr = s._wrap_input("x", x)
        try:
            assert not np.shares_memory(arr, x)
            assert data_ptr(t) == arr.ctypes.data
            assert arr.flags.c_contiguous and arr.dtype.isnative
            np.testing.assert_array_equal(arr, x)
        finally:
            core._lib.mopt_tensor_destroy(t)


def test_run_passes_the_callers_buffer(tiny, wrapped_buffers):
    model, w = tiny
    seen = wrapped_buffers
    x = np.random.default_rng(3).standard_normal((3, 8)).astype(np.float32)
    keep = x.copy()
    with mopt.Session(model) as s:
        y = s.run({"x": x})["y"]
        assert seen == [x.ctypes.data]
        s.run({"x": x.T.copy().T[:, :]})  # Fortran-order view: must be copied
        assert seen[1] != x.ctypes.data
    np.testing.assert_array_equal(x, keep)  # inputs are never modified
    np.testing.assert_allclose(y, x @ w, atol=1e-5)


def test_input_tensors_are_rewrapped_only_for_a_new_buffer(tiny, wrapped_buffers, monkeypatch):
    """The session keeps the tensor it wrapped over an input's buffer and
    reuses it while the same buffer, dtype and shape come again (issue 10);
    any change wraps anew and frees the old tensor; close() frees the last."""
    model, w = tiny
    seen = wrapped_buffers
    destroyed = []
    real_destroy = core._lib.mopt_tensor_destroy
    monkeypatch.setattr(core._lib, "mopt_tensor_destroy",
                        lambda h: (destroyed.append(h), real_destroy(h)))
    buf = np.zeros((6, 8), np.float32)
    x = buf[:3]
    s = mopt.Session(model)
    x[:] = 1.0
    np.testing.assert_allclose(s.run({"x": x})["y"], x @ w, atol=1e-5)
    assert seen == [x.ctypes.data]
    first = s._wraps["x"][3]
    x[:] = -2.0  # new contents in the same buffer: no new wrap, new result
    np.testing.assert_allclose(s.run({"x": x})["y"], x @ w, atol=1e-5)
    assert len(seen) == 1 and destroyed == []
    longer = buf[:5]  # same address, other shape
    longer[:] = 0.5
    np.testing.assert_allclose(s.run({"x": longer})["y"], longer @ w, atol=1e-5)
    assert seen == [x.ctypes.data, x.ctypes.data] and destroyed == [first]
    other = np.ones((3, 8), np.float32)  # other buffer
    np.testing.assert_allclose(s.run([other])["y"], other @ w, atol=1e-5)
    assert seen[-1] == other.ctypes.data and len(seen) == 3
    with pytest.raises(mopt.DTypeError):  # refused before wrapping: the cache stays
        s.run({"x": other.astype(np.complex64)})
    assert len(seen) == 3
    last = s._wraps["x"][3]
    assert len(destroyed) == 2  # the tensor over `longer`, when `other` came
    out = {"y": np.zeros((3, 4), np.float32)}  # caller-owned outputs: the same rule
    n = len(seen)
    for k in range(3):
        x[:] = k
        np.testing.assert_allclose(s.run_into({"x": x}, out)["y"], x @ w, atol=1e-5)
    assert seen[n:] == [x.ctypes.data, out["y"].ctypes.data]
    out_t, x_t = s._out_wraps["y"][3], s._wraps["x"][3]
    assert destroyed[2:] == [last]  # x's replaced tensor only: the output's is kept
    s.close()
    assert sorted(destroyed[3:]) == sorted([out_t, x_t])
    assert s._wraps == {} and s._out_wraps == {}


def test_outputs_outlive_session_and_model(monkeypatch):
    """An output array owns its library tensor: it stays valid after the session,
    the model and every other reference are gone, and frees it when dropped."""
    import weakref
    destroyed = []
    real = core._TensorMemory._destroy
    monkeypatch.setattr(core._TensorMemory, "_destroy",
                        staticmethod(lambda h: (destroyed.append(h), real(h))))
    data, w = tiny_model_bytes()
    x = np.random.default_rng(7).standard_normal((3, 8)).astype(np.float32)
    model = mopt.Model(data)
    y = mopt.Session(model).run({"x": x})["y"]
    model.close()
    del model
    gc.collect()
    np.testing.assert_allclose(y, x @ w, atol=1e-5)
    owner = weakref.ref(y.base)
    handle = y.base._handle
    assert handle
    view = y[1:]
    del y
    gc.collect()
    assert owner() is not None and handle not in destroyed  # a view still uses it
    del view
    gc.collect()
    assert owner() is None and destroyed.count(handle) == 1  # freed with the last array


def test_run_into_callers_arrays(tiny):
    """run_into: the library writes into the caller's arrays (zero copy out)."""
    model, w = tiny
    x = np.random.default_rng(4).standard_normal((5, 8)).astype(np.float32)
    y = np.full((5, 4), np.nan, np.float32)
    z = np.full((5, 4), np.nan, np.float32)
    ptr = y.ctypes.data
    with mopt.Session(model) as s:
        got = s.run_into({"x": x}, {"y": y, "z": z})
        assert got["y"] is y and y.ctypes.data == ptr
        np.testing.assert_allclose(y, x @ w, atol=1e-5)
        np.testing.assert_allclose(z, softmax(x.astype(np.float64) @ w), atol=1e-6)
        with pytest.raises(mopt.ShapeError):
            s.run_into({"x": x}, {"y": np.zeros((4, 4), np.float32)})
        with pytest.raises(mopt.DTypeError):
            s.run_into({"x": x}, {"y": np.zeros((5, 4), np.float64)})
        with pytest.raises(mopt.InvalidArgumentError, match="C-contiguous"):
            s.run_into({"x": x}, {"y": np.zeros((4, 5), np.float32).T})
        ro = np.zeros((5, 4), np.float32)
        ro.setflags(write=False)
        with pytest.raises(mopt.InvalidArgumentError, match="writable"):
            s.run_into({"x": x}, {"y": ro})


def test_unknown_and_missing_names_are_named(tiny):
    model, _ = tiny
    x = np.ones((1, 8), np.float32)
    with mopt.Session(model) as s:
        with pytest.raises(mopt.NotFoundError, match="unknown input 'image'.*inputs are 'x'"):
            s.run({"x": x, "image": x})
        with pytest.raises(mopt.InvalidArgumentError, match="missing input 'x'"):
            s.run({})
        with pytest.raises(mopt.NotFoundError, match="unknown output 'w'.*'z', 'y'"):
            s.run({"x": x}, ["y", "w"])


def test_readonly_input(tiny):
    model, w = tiny
    x = np.ones((2, 8), np.float32)
    x.setflags(write=False)
    with mopt.Session(model) as s:
        np.testing.assert_allclose(s.run({"x": x})["y"], x @ w, atol=1e-5)


# --------------------------------------------------------------------------- stats, profile

def test_stats_and_profile(tiny):
    model, w = tiny
    x = np.ones((3, 8), np.float32)
    with mopt.Session(model, profile=True) as s:
        assert s.profile() == []
        assert s.stats()["runs"] == 0
        s.run({"x": x})
        s.run({"x": x})
        st = s.stats()
        assert set(st) == {"runs", "peak_bytes", "arena_bytes", "last_run_ns", "inplace_outputs"}
        assert st["runs"] == 2 and st["last_run_ns"] > 0 and st["peak_bytes"] > 0
        assert st["inplace_outputs"] == 0  # no op of this model can take an input's buffer
        prof = s.profile()
        assert [(p["node"], p["op"]) for p in prof] == model.nodes
        assert all(set(p) == {"node", "op", "kernel", "ns", "flops"} for p in prof)
        assert all(p["kernel"] and p["ns"] >= 0 for p in prof)
        assert sum(p["ns"] for p in prof) <= st["last_run_ns"]
        mm = next(p for p in prof if p["op"] == "MatMul")
        assert mm["flops"] == 2 * 3 * 8 * w.shape[1]
    with mopt.Session(model) as s:  # profiling off
        s.run({"x": x})
        assert s.profile() == []


def test_profile_chrome_trace(tiny, tmp_path):
    model, _ = tiny
    trace = tmp_path / "trace.json"
    s = mopt.Session(model, profile=str(trace))
    s.run({"x": np.ones((1, 8), np.float32)})
    assert len(s.profile()) == model.node_count
    s.close()
    events = json.loads(trace.read_text())["traceEvents"]
    assert [(e["name"], e["cat"], e["ph"]) for e in events] == [
        ("mm", "MatMul", "X"), ("sm", "Softmax", "X")]
    assert all(e["dur"] >= 0 for e in events)


def test_trace_written_when_model_closed_first(tiny, tmp_path):
    """Closing the model closes its sessions first, so the trace (which reads the
    model's graph) is still written correctly."""
    data, _ = tiny_model_bytes()
    trace = tmp_path / "t.json"
    model = mopt.Model(data)
    s = mopt.Session(model, profile=str(trace))
    s.run({"x": np.ones((1, 8), np.float32)})
    model.close()
    assert [e["name"] for e in json.loads(trace.read_text())["traceEvents"]] == ["mm", "sm"]


def test_profile_models_cnn():
    ins, _, _, _ = load_case("cnn", "test_data_set_0")
    with mopt.Model(MODELS / "cnn" / "model.onnx") as model:
        with mopt.Session(model, profile=True) as s:
            s.run(ins)
            prof = s.profile()
        assert len(prof) == model.node_count
        # at opt_level 3 every Conv of this CNN is fused (mopt FusedConv,
        # channels-last); each still reports its flops
        convs = [p for p in prof if p["op"] in ("Conv", "FusedConv")]
        assert convs and all(p["flops"] > 0 for p in convs)


# --------------------------------------------------------------------------- lifetime

def test_close_is_idempotent_and_use_after_close_fails(tiny):
    model, _ = tiny
    s = mopt.Session(model)
    s.close()
    s.close()
    with pytest.raises(mopt.ClosedError):
        s.run({"x": np.ones((1, 8), np.float32)})
    with pytest.raises(mopt.ClosedError):
        s.stats()


def test_model_close_closes_its_sessions():
    data, _ = tiny_model_bytes()
    model = mopt.Model(data)
    s1, s2 = mopt.Session(model), mopt.Session(model)
    s2.close()
    model.close()
    with pytest.raises(mopt.ClosedError, match="Model was closed"):
        s1.run({"x": np.ones((1, 8), np.float32)})
    with pytest.raises(mopt.ClosedError):
        model.node_count
    with pytest.raises(mopt.ClosedError):
        mopt.Session(model)
    s1.close()
    model.close()


def test_session_keeps_model_alive():
    data, w = tiny_model_bytes()
    s = mopt.Session(mopt.Model(data))  # no other reference to the model
    gc.collect()
    x = np.ones((1, 8), np.float32)
    np.testing.assert_allclose(s.run({"x": x})["y"], x @ w, atol=1e-5)
    del s
    gc.collect()


def test_garbage_collection_in_any_order():
    data, _ = tiny_model_bytes()
    for _ in range(20):
        m = mopt.Model(data)
        ss = [mopt.Session(m) for _ in range(3)]
        ss.append(ss)  # a cycle, collected by the gc in arbitrary order
        del m, ss
        gc.collect()


def test_session_requires_model():
    with pytest.raises(mopt.InvalidArgumentError):
        mopt.Session("model.onnx")


def test_package_builds_as_a_wheel(tmp_path):
    """pip can build the package from its folder (copied, so the tree stays clean)."""
    import shutil
    import zipfile
    src = tmp_path / "src"
    shutil.copytree(PKG_ROOT, src, ignore=shutil.ignore_patterns("__pycache__", "build",
                                                                  "*.egg-info", "*.so*"))
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "-q", "-w", str(tmp_path / "dist"), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    wheels = list((tmp_path / "dist").glob("mopt-*.whl"))
    assert len(wheels) == 1
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    assert {"mopt/__init__.py", "mopt/_capi.py", "mopt/core.py", "mopt/errors.py", "mopt/ort.py",
            "mopt/__init__.pyi", "mopt/py.typed"} <= names
    assert not any("libmopt" in n for n in names)  # nothing bundled unless asked
