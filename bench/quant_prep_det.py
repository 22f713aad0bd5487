#!/usr/bin/env python3
"""quant_prep_det.py — static INT8 on a real CNN side by side (issue 11): for
PP-OCRv4 det (rapidocr-onnxruntime's wheel, fetched by the real-model suite
into ~/.cache/mopt-realmodels), 16 calibration sets of synthetic text pages
(tests/realmodels/inputs.py, 320x480, the wheel's mean/std 0.5), a held-out
page, the `mopt calibrate` table (minmax) and ONNX Runtime's quantize_static
QDQ model (u8 activations, s8 per-channel weights) from the same sets. Then:

    python3 bench/quant_prep_det.py OUT
    python3 bench/compare.py ~/.cache/mopt-realmodels/x/rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx \\
        --input x=OUT/det_input.npy --threads 1 --iterations 20 --mopt-config precision=fp32 \\
        --mopt-config precision=int8,calibration=OUT/det.yaml --ort-extra qdq=OUT/det_qdq.onnx
"""
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "realmodels"))
import inputs as I  # noqa: E402

MODEL = (Path.home() / ".cache" / "mopt-realmodels" / "x" / "rapidocr_onnxruntime" / "models" /
         "ch_PP-OCRv4_det_infer.onnx")


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bench-models")
    mopt_cli = Path(sys.argv[2]) if len(sys.argv) > 2 else REPO / "build" / "tools" / "mopt" / "mopt"
    if not MODEL.exists():
        raise SystemExit("%s is missing: run the real-model suite once (tests/realmodels)" % MODEL)
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    feeds = []
    for k in range(17):
        page = I.gray_to_rgb(I.text_image(I.rng(100 + k), 320, 480, lines=5 + k % 4))
        feeds.append({"x": I.normalize(page, [0.5] * 3, [0.5] * 3)[None]})
    cal = feeds[:16]
    sets = out / "calib_det"
    for i, f in enumerate(cal):
        (sets / ("set_%02d" % i)).mkdir(parents=True, exist_ok=True)
        np.save(sets / ("set_%02d" % i) / "x.npy", f["x"])
    np.save(out / "det_input.npy", feeds[16]["x"])
    subprocess.run([str(mopt_cli), "calibrate", str(MODEL), "--inputs", str(sets), "-o",
                    str(out / "det.yaml")], check=True)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(cal)

        def get_next(self):
            return next(self.it, None)

    quantize_static(str(MODEL), str(out / "det_qdq.onnx"), Reader(),
                    quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, per_channel=True)
    print("wrote %s/det.yaml, det_qdq.onnx, det_input.npy" % out)


if __name__ == "__main__":
    main()
