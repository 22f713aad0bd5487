"""test_ort_dropin.py — mopt as a drop-in for onnxruntime (meson suite 'python').

The main test runs an ORT user's script (ort_user_script.py) with
onnxruntime, then the same text with only its import line changed to
`import mopt as ort`, and compares the model description, the outputs (within
the model's committed tolerance), the IO-binding results and the errors for
wrong input names. The other tests check the ORT-style API piece by piece,
including that IO binding copies nothing in either direction.
"""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mopt
from mopt import core

HERE = Path(__file__).resolve().parent
PKG_ROOT = HERE.parent
MODELS = PKG_ROOT.parent.parent / "tests" / "models"
IMPORT_ORT = "import onnxruntime as ort\n"
IMPORT_MOPT = "import mopt as ort\n"


def run_script(text, model, prefix):
    script = prefix.parent / (prefix.name + "_script.py")
    script.write_text(text)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PKG_ROOT)  # the in-tree mopt package
    r = subprocess.run([sys.executable, str(script), str(model), str(prefix)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(Path(str(prefix) + ".json").read_text())
    with np.load(str(prefix) + ".npz") as z:
        outputs = [z["out_%d" % i] for i in range(len(z.files))]
    return report, outputs


@pytest.mark.parametrize("name", ["bert", "cnn"])
def test_ort_script_runs_with_only_the_import_changed(name, tmp_path):
    original = (HERE / "ort_user_script.py").read_text()
    assert original.count(IMPORT_ORT) == 1
    changed = original.replace(IMPORT_ORT, IMPORT_MOPT)
    # the only difference between the two scripts is that one line
    diff = [(a, b) for a, b in zip(original.splitlines(), changed.splitlines()) if a != b]
    assert diff == [(IMPORT_ORT.strip(), IMPORT_MOPT.strip())]

    model = MODELS / name / "model.onnx"
    want, want_out = run_script(original, model, tmp_path / "ort")
    got, got_out = run_script(changed, model, tmp_path / "mopt")

    for key in ("device", "providers", "inputs", "outputs", "meta_field_types", "n_outputs",
                "output_shapes"):
        assert got[key] == want[key], key
    assert got["last_only_matches"] and want["last_only_matches"]
    assert got["bound_matches_run"] == [True] * got["n_outputs"]
    assert got["bound_written_in_place"] == [True] * got["n_outputs"]
    assert want["bound_written_in_place"] == [True] * want["n_outputs"]
    atol, rtol = (float(v) for v in (MODELS / name / "tolerance").read_text().split()[:2])
    assert len(got_out) == len(want_out) > 0
    for g, w in zip(got_out, want_out):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, atol=atol, rtol=rtol)
    # both runtimes refuse a wrong feed and name the input at fault
    first = want["inputs"][0]["name"]
    for report in (want, got):
        assert "not_an_input" in report["unknown_input_error"]
        assert first in report["missing_input_error"]


# --------------------------------------------------------------------------- pieces

def tiny_model_bytes():
    """y = x @ W, z = softmax(y); x [batch, 8]."""
    w = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"]),
         helper.make_node("Softmax", ["y"], ["z"], axis=-1)],
        "tiny_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString(), w


@pytest.fixture
def tiny():
    data, w = tiny_model_bytes()
    return mopt.InferenceSession(data), w


def test_session_options_map_to_mopt_options():
    so = mopt.SessionOptions()
    assert so.intra_op_num_threads == 0
    assert so.graph_optimization_level == mopt.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 3
    so.graph_optimization_level = mopt.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.enable_profiling = True
    so.add_session_config_entry("mopt.backend", "ref")
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    sess = mopt.InferenceSession(tiny_model_bytes()[0], sess_options=so)
    opts = sess._session.options
    assert opts["threads"] == 3 and opts["opt_level"] == 1
    assert opts["backend"] == "ref" and opts["profile"] == "1"
    assert sess.get_session_options() is so
    for level, want in [(0, 0), (1, 1), (2, 2), (3, 3), (99, 3)]:
        so2 = mopt.SessionOptions()
        so2.graph_optimization_level = mopt.GraphOptimizationLevel(level)
        assert so2._to_mopt()["opt_level"] == want
    with pytest.raises(AttributeError, match="intra_op_threads"):
        so.intra_op_threads = 2  # a misspelt option is an error, as in ORT
    so.graph_optimization_level = 7
    with pytest.raises(mopt.InvalidArgumentError, match="graph_optimization_level"):
        mopt.InferenceSession(tiny_model_bytes()[0], sess_options=so)


def test_run_signature_and_metadata(tiny):
    sess, w = tiny
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    z, y = sess.run(None, {"x": x})
    np.testing.assert_allclose(y, x @ w, atol=1e-5)
    assert isinstance(sess.run([], {"x": x}), list) and len(sess.run([], {"x": x})) == 2
    (only_y,) = sess.run(["y"], {"x": x})
    np.testing.assert_array_equal(only_y, y)
    assert [(a.name, a.shape, a.type) for a in sess.get_inputs()] == \
        [("x", ["batch", 8], "tensor(float)")]
    assert [o.name for o in sess.get_outputs()] == ["z", "y"]
    meta = sess.get_modelmeta()
    assert meta.producer_name == "" and meta.version == 0 and meta.custom_metadata_map == {}
    assert sess.get_providers() == ["CPUExecutionProvider"] == mopt.get_available_providers()
    assert mopt.get_device() == "CPU"
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        mopt.InferenceSession(tiny_model_bytes()[0], providers=["CUDAExecutionProvider"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mopt.InferenceSession(tiny_model_bytes()[0],
                              providers=[("CPUExecutionProvider", {})])


def test_wrong_names_are_reported_by_name(tiny):
    sess, _ = tiny
    x = np.ones((1, 8), np.float32)
    with pytest.raises(mopt.NotFoundError, match="unknown input 'xx'"):
        sess.run(None, {"xx": x})
    with pytest.raises(mopt.InvalidArgumentError, match="missing input 'x'"):
        sess.run(None, {})
    with pytest.raises(mopt.NotFoundError, match="unknown output 'q'"):
        sess.run(["q"], {"x": x})
    ro = mopt.RunOptions()
    ro.terminate = True
    with pytest.raises(mopt.CancelledError, match="terminate"):
        sess.run(None, {"x": x}, ro)
    ro.terminate = False  # as in ORT: the flag stays until cleared
    assert len(sess.run(None, {"x": x}, ro)) == 2


UNIT_DATA = PKG_ROOT.parent.parent / "tests" / "unit" / "data"


def test_modelmeta_matches_onnxruntime():
    """Every ModelMetadata field libmopt reads from the file, compared with ORT's."""
    ort = pytest.importorskip("onnxruntime")
    path = str(UNIT_DATA / "metadata.onnx")
    got = mopt.InferenceSession(path).get_modelmeta()
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).get_modelmeta()
    for field in ("producer_name", "graph_name", "graph_description", "domain", "description",
                  "version", "custom_metadata_map"):
        assert getattr(got, field) == getattr(want, field), field
    assert got.custom_metadata_map == {"author": "libmopt tests", "license": "MIT"}
    assert got.version == 42
    m = mopt.Model(path)
    assert m.metadata["producer_version"] == "1.2.3"
    m.close()


def test_terminate_cancels_a_run_in_progress():
    """RunOptions.terminate set by another thread stops the run that is going on
    (400 chained nodes checked one by one), with CancelledError naming the tag."""
    import threading
    import time

    so = mopt.SessionOptions()
    so.graph_optimization_level = mopt.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    sess = mopt.InferenceSession(str(UNIT_DATA / "chain.onnx"), so)
    x = np.zeros((256, 256), np.float32)
    ro = mopt.RunOptions()
    ro.logid = "req-42"
    assert ro.logid == "req-42"
    (y,) = sess.run(None, {"x": x}, ro)
    np.testing.assert_array_equal(y, x + 200)
    started = threading.Event()

    def cancel():
        started.wait()
        time.sleep(0.002)
        ro.terminate = True

    t = threading.Thread(target=cancel)
    t.start()
    started.set()
    with pytest.raises(mopt.CancelledError, match="req-42") as info:
        for _ in range(2000):  # bounded: the flag is seen within a run or two
            sess.run(None, {"x": x}, ro)
    t.join()
    assert isinstance(info.value, RuntimeError)
    ro.terminate = False
    (y,) = sess.run(None, {"x": x}, ro)
    np.testing.assert_array_equal(y, x + 200)
    with pytest.raises(mopt.InvalidArgumentError, match="127"):
        ro.logid = "x" * 200
    with pytest.raises(AttributeError):
        ro.no_such_option = 1


def test_io_binding_is_zero_copy_both_ways(tiny, wrapped_buffers):
    sess, w = tiny
    wrapped = wrapped_buffers
    x = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    y = np.full((4, 4), np.nan, np.float32)
    z = np.full((4, 4), np.nan, np.float32)
    b = sess.io_binding()
    b.bind_cpu_input("x", x)
    b.bind_output("y", "cpu", 0, np.float32, y.shape, y.ctypes.data)
    b.bind_ortvalue_output("z", mopt.OrtValue.ortvalue_from_numpy(z))
    sess.run_with_iobinding(b)
    # the library got the caller's input buffer and wrote into the caller's outputs
    assert wrapped == [x.ctypes.data, y.ctypes.data, z.ctypes.data]
    np.testing.assert_allclose(y, x @ w, atol=1e-5)
    np.testing.assert_allclose(z, np.exp(y) / np.exp(y).sum(-1, keepdims=True), atol=1e-6)
    out_y, out_z = b.get_outputs()
    assert out_y.data_ptr() == y.ctypes.data and out_z.numpy() is z
    assert out_y.shape() == [4, 4] and out_y.data_type() == "tensor(float)"
    copies = b.copy_outputs_to_cpu()
    assert not np.shares_memory(copies[0], y)
    np.testing.assert_array_equal(copies[0], y)
    # an output bound without memory: the library allocates it, get_outputs views it
    b.clear_binding_outputs()
    b.bind_output("y")
    x[:] = 1.0  # inputs are read in place at each run
    sess.run_with_iobinding(b)
    (v,) = b.get_outputs()
    assert isinstance(v.numpy().base, core._TensorMemory)
    np.testing.assert_allclose(v.numpy(), np.ones((4, 8), np.float32) @ w, atol=1e-5)
    # a raw-pointer input
    b.clear_binding_inputs()
    b.bind_input("x", "cpu", 0, np.float32, x.shape, x.ctypes.data)
    x[:] = 2.0
    n = len(wrapped)
    sess.run_with_iobinding(b)
    # same address, dtype and shape as the last run's input: the session's
    # tensor over x is reused (no new wrap), and it reads x where it lies
    assert wrapped[n:] == [] and core._lib.mopt_tensor_data(
        sess._session._wraps["x"][3]) == x.ctypes.data
    np.testing.assert_allclose(b.get_outputs()[0].numpy(),
                               np.full((4, 8), 2.0, np.float32) @ w, atol=1e-5)
    with pytest.raises(mopt.ShapeError):
        b.clear_binding_outputs()
        b.bind_ortvalue_output("y", mopt.OrtValue.ortvalue_from_numpy(np.zeros((3, 4),
                                                                               np.float32)))
        sess.run_with_iobinding(b)
    with pytest.raises(mopt.UnsupportedError, match="cuda"):
        b.bind_output("y", "cuda", 0)


def test_end_profiling_writes_a_trace(tmp_path):
    so = mopt.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof_")
    so.graph_optimization_level = mopt.GraphOptimizationLevel.ORT_DISABLE_ALL  # unfused ops
    sess = mopt.InferenceSession(tiny_model_bytes()[0], sess_options=so)
    x = np.ones((2, 8), np.float32)
    sess.run(None, {"x": x})
    sess.run(None, {"x": x})
    path = sess.end_profiling()
    assert path.startswith(str(tmp_path / "prof_")) and path.endswith(".json")
    events = json.loads(Path(path).read_text())
    assert {e["args"]["run"] for e in events} == {0, 1}
    assert sorted(e["args"]["op_name"] for e in events) == ["MatMul"] * 2 + ["Softmax"] * 2
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    assert mopt.InferenceSession(tiny_model_bytes()[0]).end_profiling() == ""


def test_node_arg_matches_onnx_file():
    """get_inputs/get_outputs describe the graph as the ONNX file declares it."""
    path = MODELS / "cnn" / "model.onnx"
    sess = mopt.InferenceSession(str(path))
    m = onnx.load(str(path))
    for arg, vi in zip(sess.get_inputs(), m.graph.input):
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                for d in vi.type.tensor_type.shape.dim]
        assert (arg.name, arg.shape) == (vi.name, dims)
        assert arg.type == "tensor(float)"
