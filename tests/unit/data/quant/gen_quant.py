#!/usr/bin/env python3
"""gen_quant.py — the small quantized models test_steady_state.c runs (the
int8 kernels must not allocate on a steady-state run): quantgen.py's MLP
(d 32, h 64, 2 layers) and CNN, quantized by onnxruntime.quantization as
QDQ (static, per channel: StaticQMatMul / StaticQConv after import) and
QOperator (static: QLinearMatMul / QLinearConv; dynamic: DynamicQuantizeLinear
+ MatMulInteger), plus the float CNN and its `mopt calibrate` table (static
INT8 through the calibration option). Needs onnxruntime and the built `mopt`
tool; the outputs are committed.

    python3 tests/unit/data/quant/gen_quant.py BUILD_DIR
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "quant"))
import quantgen  # noqa: E402


def main():
    mopt = str(Path(sys.argv[1]).resolve() / "tools" / "mopt" / "mopt")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for kind, model in (("mlp", quantgen.mlp(d=32, h=64, layers=2)), ("cnn", quantgen.cnn())):
            fp32 = tmp / (kind + ".onnx")
            onnx.save(model, fp32)
            calib = quantgen.inputs_for(kind, 8, 1)
            if kind == "mlp":
                calib = [a[..., :32].copy() for a in calib]
            for fmt, pc in (("qdq", True), ("qop", False), ("dyn", False)):
                if kind == "cnn" and fmt == "dyn":
                    continue
                quantgen.ort_quantize(str(fp32), str(HERE / ("%s_%s.onnx" % (kind, fmt))), kind, fmt,
                                      pc, calib)
            if kind == "cnn":
                onnx.save(model, HERE / "cnn.onnx")
                sets = tmp / "sets"
                for i, a in enumerate(calib):
                    (sets / ("set_%d" % i)).mkdir(parents=True)
                    np.save(sets / ("set_%d" % i) / "input_0.npy", a)
                subprocess.run([mopt, "calibrate", str(HERE / "cnn.onnx"), "--inputs", str(sets), "-o",
                                str(HERE / "cnn_calibration.yaml")], check=True)


if __name__ == "__main__":
    main()
