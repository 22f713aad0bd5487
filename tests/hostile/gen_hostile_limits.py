#!/usr/bin/env python3
"""gen_hostile_limits.py — writes tests/hostile/limits: tiny valid ONNX models
whose sizes reach past what the backends index safely (issue 17: a 159-byte
Conv with pads of 1e9 on an 8x8 input killed the process with SIGFPE inside
dnnl_primitive_desc_create). Each file is listed in limits/EXPECTED with the
status its load must return and, when it loads, the status of one run on an
input of the given dims (or '-': not run, the input alone would take 16 GiB).
test_hostile_limits.c checks them with every backend and precision.

usage: python3 tests/hostile/gen_hostile_limits.py   (needs the onnx package)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "limits")
BIG = 10**9
CASES = []  # (file, load status, run status, run dims)


def save(name, nodes, x_shape, inits, load, run="-", dims="-"):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, x_shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="gen_hostile_limits")
    m.ir_version = 8
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    CASES.append((name + ".onnx", load, run, dims))


def weights(shape):
    return nh.from_array(np.full(shape, 0.5, np.float32), "w")


def conv(name, x_shape, w_shape, relu=False, **attrs):
    out = "c" if relu else "y"
    nodes = [h.make_node("Conv", ["x", "w"], [out], name="conv", **attrs)]
    if relu:
        nodes.append(h.make_node("Relu", ["c"], ["y"], name="relu"))
    return nodes, x_shape, [weights(w_shape)]


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    # pads of 1e9: the output needs 1.6e19 bytes, refused at load
    save("conv2d_pads_1e9", *conv("", [1, 1, 8, 8], [1, 1, 3, 3], pads=[BIG] * 4), "LIMIT")
    save("conv2d_pads_asym", *conv("", [1, 1, 8, 8], [1, 1, 3, 3], pads=[0, 0, BIG, BIG]), "LIMIT")
    save("conv_relu_pads_1e9", *conv("", [1, 1, 8, 8], [1, 1, 3, 3], relu=True, pads=[BIG] * 4),
         "LIMIT")
    # 1-D: an 8 GB output may be allocatable; the window is beyond the
    # backends (reference kernel), and the run meets the session's
    # memory_limit
    save("conv1d_pads_1e9", *conv("", [1, 1, 8], [1, 1, 3], pads=[BIG, BIG]), "OK", "LIMIT", "1,1,8")
    # symbolic input: the load-time guess has the same pads; the run's shape
    # makes the output too large
    save("conv_sym_pads_1e9", *conv("", ["N", 1, "H", "W"], [1, 1, 3, 3], pads=[BIG] * 4), "OK",
         "LIMIT", "1,1,8,8")
    save("conv_relu_sym_pads_1e9",
         *conv("", ["N", 1, "H", "W"], [1, 1, 3, 3], relu=True, pads=[BIG] * 4), "OK", "LIMIT",
         "1,1,8,8")
    # a declared input of 2^32 elements: loads (reference kernel), never run
    save("conv_input_65536", *conv("", [1, 1, 65536, 65536], [1, 1, 3, 3]), "OK")
    # strides and dilations far beyond 2^31: refused when the attributes
    # are parsed
    save("conv1d_stride_2e40", *conv("", [1, 1, 8], [1, 1, 3], strides=[1 << 40]),
         "INVALID_MODEL")
    save("conv2d_stride_2e62", *conv("", [1, 1, 8, 8], [1, 1, 3, 3], strides=[1 << 62, 1 << 62]),
         "INVALID_MODEL")
    save("conv2d_dilation_2e40",
         *conv("", [1, 1, 8, 8], [1, 1, 3, 3], dilations=[1 << 40, 1 << 40]), "INVALID_MODEL")
    save("conv_sym_stride_2e40",
         *conv("", ["N", 1, "H", "W"], [1, 1, 3, 3], strides=[1 << 40, 1 << 40]), "INVALID_MODEL")
    # a dilation within 2^31 whose window is far wider than the input
    save("conv_sym_dilation_2e30",
         *conv("", ["N", 1, "H", "W"], [1, 1, 3, 3], dilations=[1 << 30, 1 << 30],
               pads=[1 << 30] * 4), "OK", "OK", "1,1,8,8")
    # pooling
    pool = [h.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2], pads=[BIG] * 4)]
    save("maxpool_pads_1e9", pool, [1, 1, 8, 8], [], "LIMIT")
    pool = [h.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[2, 2],
                        strides=[1 << 40, 1 << 40])]
    save("avgpool_stride_2e40", pool, ["N", 1, "H", "W"], [], "INVALID_MODEL")
    # matmul with a 2^31-row A (declared), and a constant B
    mm = [h.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    save("matmul_rows_2e31", mm, [1 << 31, 2], [weights([2, 4])], "OK")
    save("matmul_sym_rows", mm, ["M", 2], [weights([2, 4])], "OK", "OK", "3,2")
    with open(os.path.join(OUT, "EXPECTED"), "w") as f:
        f.write("# file load-status run-status run-dims (gen_hostile_limits.py; '-': no run)\n")
        for c in CASES:
            f.write(" ".join(c) + "\n")
    print("wrote %d files into %s" % (len(CASES), OUT))


if __name__ == "__main__":
    main()
