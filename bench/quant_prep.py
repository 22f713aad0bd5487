#!/usr/bin/env python3
"""quant_prep.py — inputs for comparing static INT8 side by side (issue 13):
for the BERT-like example model and the generated ResNet-18-like model
(bench/genmodels.py), 16 seeded calibration input sets (.npy folders), the
`mopt calibrate` table (minmax) and ONNX Runtime's quantize_static QDQ model
(u8 activations, s8 per-channel weights) from the same sets. Then:

    python3 bench/genmodels.py OUT && python3 bench/quant_prep.py OUT
    python3 bench/compare.py examples/models/bert_tiny.onnx --dim batch=8 --dim seq=128 \\
        --threads 1 --iterations 100 --mopt-config precision=fp32 --mopt-config precision=int8 \\
        --mopt-config precision=int8,calibration=OUT/bert.yaml --ort-extra qdq=OUT/bert_qdq.onnx
    python3 bench/compare.py OUT/resnet18_like.onnx --threads 1 --iterations 30 \\
        --mopt-config precision=fp32 --mopt-config precision=int8 \\
        --mopt-config precision=int8,calibration=OUT/resnet.yaml --ort-extra qdq=OUT/resnet_qdq.onnx
"""
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bench-models")
    mopt_cli = Path(sys.argv[2]) if len(sys.argv) > 2 else REPO / "build" / "tools" / "mopt" / "mopt"
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    rng = np.random.default_rng(123)
    models = {
        "resnet": (out / "resnet18_like.onnx",
                   [{"input": rng.standard_normal((1, 3, 224, 224)).astype(np.float32)}
                    for _ in range(16)]),
        "bert": (REPO / "examples" / "models" / "bert_tiny.onnx",
                 [{"input_ids": rng.integers(0, 100, (8, 128)).astype(np.int64),
                   "attention_mask": np.ones((8, 128), np.int64)} for _ in range(16)]),
    }
    for name, (model, feeds) in models.items():
        sets = out / ("calib_%s" % name)
        for i, f in enumerate(feeds):
            (sets / ("set_%02d" % i)).mkdir(parents=True, exist_ok=True)
            for k, v in f.items():
                np.save(sets / ("set_%02d" % i) / ("%s.npy" % k), v)
        subprocess.run([str(mopt_cli), "calibrate", str(model), "--inputs", str(sets), "-o",
                        str(out / ("%s.yaml" % name))], check=True)

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.it = iter(feeds)

            def get_next(self):
                return next(self.it, None)

        quantize_static(str(model), str(out / ("%s_qdq.onnx" % name)), Reader(),
                        quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, per_channel=True)
        print("wrote %s.yaml and %s_qdq.onnx" % (out / name, out / name))


if __name__ == "__main__":
    main()
