"""test_compare.py — tests of bench/compare.py: its statistics and a short end-to-end run.

Expected statistics come from numpy; the end-to-end run compares libmopt with
ONNX Runtime (a CI dependency) on a tiny model built here.
"""
import importlib.util
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mopt

REPO = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("compare", REPO / "bench" / "compare.py")
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)


@pytest.mark.parametrize("n", [1, 2, 7, 100, 1001])
def test_percentile_matches_numpy(n):
    xs = list(np.random.default_rng(n).exponential(size=n))
    for q in (0, 50, 90, 95, 99, 100):
        assert compare.percentile(xs, q) == pytest.approx(float(np.percentile(xs, q)), rel=1e-12)


def test_percentile_empty():
    with pytest.raises(ValueError):
        compare.percentile([], 50)


def test_summarize():
    s = compare.summarize([1.0, 2.0, 3.0, 4.0], items_per_run=8)
    assert s["p50"] == 2.5 and s["mean"] == 2.5 and s["min"] == 1.0 and s["max"] == 4.0
    assert s["throughput_per_s"] == pytest.approx(400.0)
    assert s["items_per_s"] == pytest.approx(3200.0)


def test_difference():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    d = compare.difference(a, a * 2)
    assert d["max_abs"] == 3.0 and d["cosine"] == pytest.approx(1.0)
    d = compare.difference(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    assert d["cosine"] == pytest.approx(0.0) and d["max_abs"] == 1.0
    assert "error" in compare.difference(np.zeros(3), np.zeros(4))
    assert compare.difference(np.zeros(3), np.zeros(3))["cosine"] == 1.0


def test_parse_kv_list():
    assert compare.parse_kv_list("opt_level=2, precision=bf16,x=0.5", "t") == {
        "opt_level": 2, "precision": "bf16", "x": 0.5}
    with pytest.raises(SystemExit):
        compare.parse_kv_list("opt_level", "t")


@pytest.fixture
def tiny_path(tmp_path):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((16, 4)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm"),
         helper.make_node("Softmax", ["y"], ["z"], axis=-1, name="sm")],
        "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    p = tmp_path / "tiny.onnx"
    onnx.save(model, str(p))
    return p


def test_make_inputs_dims_and_seed(tiny_path):
    with mopt.Model(tiny_path) as m:
        a, notes = compare.make_inputs(m, {"batch": 3}, {}, {}, 7, (0, 10))
        b, _ = compare.make_inputs(m, {"batch": 3}, {}, {}, 7, (0, 10))
        c, notes_c = compare.make_inputs(m, {}, {}, {}, 7, (0, 10))
    assert a["x"].shape == (3, 16) and a["x"].dtype == np.float32 and not notes
    np.testing.assert_array_equal(a["x"], b["x"])
    assert c["x"].shape == (1, 16) and any("batch" in n for n in notes_c)


def test_end_to_end_against_onnxruntime(tiny_path, tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = compare.main([str(tiny_path), "--dim", "batch=4", "--threads", "1", "--warmup", "1",
                       "--iterations", "5", "--mopt-config", "opt_level=0",
                       "--mopt-config", "opt_level=2", "--json", str(out), "--quiet"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "onnxruntime" in text and "mopt[opt_level=0]" in text and "cosine" in text
    r = json.loads(out.read_text())
    assert r["reference"] == "onnxruntime" and r["rounds"] == 5 and r["dims"] == {"batch": 4}
    assert set(r["systems"]) == {"onnxruntime", "mopt[opt_level=0]", "mopt[opt_level=2]"}
    for label, s in r["systems"].items():
        lat = s["latency_ms"]
        assert s["runs"] == 5 and 0 < lat["min"] <= lat["p50"] <= lat["p95"] <= lat["p99"]
        assert lat["p99"] <= lat["max"]
        assert s["throughput_per_s"] == pytest.approx(1000.0 / lat["mean"])
    for label in ("mopt[opt_level=0]", "mopt[opt_level=2]"):
        d = r["differences"][label]["z"]
        assert d["max_abs"] < 1e-5 and d["cosine"] > 0.999999
        assert {row["op"] for row in r["mopt_profile"][label]} == {"MatMul", "Softmax"}
    assert r["systems"]["mopt[opt_level=2]"]["config"] == {"opt_level": 2}
