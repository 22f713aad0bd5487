"""gen_rnn_weight_inputs.py — writes tests/unit/data/rnn_weight_inputs.onnx
for test_rnn_weight_inputs.c: one LSTM (hidden 16, input 8, bidirectional)
and one GRU (hidden 16) whose W, R and B are graph inputs, not initializers,
as when a subgraph captures its weights from the enclosing graph. Such
weights are packed at run time, and the cpu kernels reuse the last packing
only while the bytes are unchanged.
"""
import os

import onnx
from onnx import TensorProto as T
from onnx import helper

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def main():
    f = T.FLOAT
    ins = [helper.make_tensor_value_info("x", f, [5, 2, 8])]
    for p, g, d in (("l", 4, 2), ("g", 3, 1)):
        ins += [helper.make_tensor_value_info(p + "W", f, [d, g * 16, 8]),
                helper.make_tensor_value_info(p + "R", f, [d, g * 16, 16]),
                helper.make_tensor_value_info(p + "B", f, [d, 2 * g * 16])]
    outs = [helper.make_tensor_value_info("ly", f, [5, 2, 2, 16]),
            helper.make_tensor_value_info("gy", f, [5, 1, 2, 16])]
    nodes = [helper.make_node("LSTM", ["x", "lW", "lR", "lB"], ["ly"], name="lstm", hidden_size=16,
                              direction="bidirectional"),
             helper.make_node("GRU", ["x", "gW", "gR", "gB"], ["gy"], name="gru", hidden_size=16,
                              linear_before_reset=1)]
    g = helper.make_graph(nodes, "rnn_weight_inputs", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], producer_name="gen_rnn_weight_inputs")
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(DATA, "rnn_weight_inputs.onnx"))


if __name__ == "__main__":
    main()
