"""quantgen.py — generated float models for the quantization tests (a small
BERT-like MatMul stack and a small CNN) and their quantized forms made by
onnxruntime.quantization (QDQ and QOperator, static; QOperator dynamic).
Imported by test_quant.py; never writes outside the folder it is given."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _init(name, a):
    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


def mlp(seed=0, d=64, h=128, layers=3):
    """x [batch, seq, d] -> (MatMul + bias + Relu) x layers -> MatMul + bias."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    x = "x"
    dims = [d] + [h] * layers + [d]
    for i in range(len(dims) - 1):
        w = rng.standard_normal((dims[i], dims[i + 1])) * np.sqrt(2.0 / dims[i])
        inits += [_init("w%d" % i, w), _init("b%d" % i, rng.standard_normal(dims[i + 1]) * 0.1)]
        nodes.append(helper.make_node("MatMul", [x, "w%d" % i], ["mm%d" % i], name="mm%d" % i))
        y = "y" if i == len(dims) - 2 else "add%d" % i
        nodes.append(helper.make_node("Add", ["mm%d" % i, "b%d" % i], [y], name="add%d" % i))
        if i < len(dims) - 2:
            nodes.append(helper.make_node("Relu", [y], ["r%d" % i], name="relu%d" % i))
            y = "r%d" % i
        x = y
    g = helper.make_graph(nodes, "mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", d])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def cnn(seed=1, classes=10):
    """x [batch, 3, 32, 32] -> 3 Conv + Relu (one stride 2) -> GAP -> Gemm."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    x, cin = "x", 3
    for i, (cout, s) in enumerate(((16, 1), (32, 2), (32, 1))):
        w = rng.standard_normal((cout, cin, 3, 3)) * np.sqrt(2.0 / (cin * 9))
        inits += [_init("cw%d" % i, w), _init("cb%d" % i, rng.standard_normal(cout) * 0.1)]
        nodes.append(helper.make_node("Conv", [x, "cw%d" % i, "cb%d" % i], ["c%d" % i],
                                      name="conv%d" % i, pads=[1, 1, 1, 1], strides=[s, s]))
        nodes.append(helper.make_node("Relu", ["c%d" % i], ["r%d" % i], name="relu%d" % i))
        x, cin = "r%d" % i, cout
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    inits += [_init("fw", rng.standard_normal((classes, cin)) * np.sqrt(1.0 / cin)),
              _init("fb", rng.standard_normal(classes) * 0.1)]
    nodes.append(helper.make_node("Gemm", ["flat", "fw", "fb"], ["y"], name="fc", transB=1))
    g = helper.make_graph(nodes, "cnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", classes])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def inputs_for(kind, n, seed):
    rng = np.random.default_rng(seed)
    if kind == "mlp":
        return [rng.standard_normal((2, 16, 64)).astype(np.float32) for _ in range(n)]
    return [rng.standard_normal((1, 3, 32, 32)).astype(np.float32) for _ in range(n)]


def ort_quantize(src, dst, kind, fmt, per_channel, calib):
    """onnxruntime.quantization: fmt "qdq" / "qop" (static, u8 activations,
    s8 weights), "qdq_s8" (QDQ with s8 activations) or "dyn"
    (quantize_dynamic)."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)
    if fmt == "dyn":
        quantize_dynamic(src, dst, weight_type=QuantType.QInt8, per_channel=per_channel)
        return

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": a} for a in calib])

        def get_next(self):
            return next(self.it, None)

    # QOperator: only the ops with standard ONNX QLinear forms (QLinearAdd,
    # QGemm, QLinearGlobalAveragePool are com.microsoft contrib ops)
    quantize_static(src, dst, Reader(),
                    quant_format=QuantFormat.QOperator if fmt == "qop" else QuantFormat.QDQ,
                    op_types_to_quantize=["MatMul", "Conv"] if fmt == "qop" else None,
                    activation_type=QuantType.QInt8 if fmt == "qdq_s8" else QuantType.QUInt8,
                    weight_type=QuantType.QInt8,
                    per_channel=per_channel)
