"""gen_control_models.py — writes the models of tests/unit/test_control_flow.c
into tests/unit/data/:

- control_if_const.onnx: an If whose condition is a Constant node (true), so
  that the pass `fold_if` replaces it by then_branch (y = x + 1.5, the 1.5 an
  initializer of the outer graph; else_branch would give x - 1.5).
- control_check_nested.onnx: unsupported operators inside subgraphs, one in
  a then_branch and one two levels down (Loop body -> If else_branch), for
  the paths `mopt check` and mopt_model_check give them.
- control_loop_shape_error.onnx: a Loop body whose Add cannot broadcast, for
  a problem inside a body reported at the Loop with its path.
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def save(graph, name, extra_opsets=()):
    opsets = [helper.make_opsetid("", 17)] + [helper.make_opsetid(d, 1) for d in extra_opsets]
    m = helper.make_model(graph, opset_imports=opsets, producer_name="mopt-tests")
    m.ir_version = 8
    if not extra_opsets:
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, name))


# control_if_const.onnx
then_g = helper.make_graph([helper.make_node("Add", ["x", "k"], ["t"], name="then_add")], "then",
                           [], [vi("t", T.FLOAT, [4])])
else_g = helper.make_graph([helper.make_node("Sub", ["x", "k"], ["e"], name="else_sub")], "else",
                           [], [vi("e", T.FLOAT, [4])])
g = helper.make_graph(
    [helper.make_node("Constant", [], ["c"], name="cond",
                      value=numpy_helper.from_array(np.array(True), "c")),
     helper.make_node("If", ["c"], ["y"], name="If_0", then_branch=then_g, else_branch=else_g)],
    "if_const", [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])],
    [numpy_helper.from_array(np.full(4, 1.5, dtype=np.float32), "k")])
save(g, "control_if_const.onnx")

# control_check_nested.onnx
bad_then = helper.make_graph(
    [helper.make_node("NoSuchOp", ["x"], ["t"], name="LSTM_7", domain="test.unsupported")],
    "then", [], [vi("t", T.FLOAT, [2])])
ok_else = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="neg")], "else", [],
                            [vi("e", T.FLOAT, [2])])
inner_then = helper.make_graph([helper.make_node("Abs", ["v"], ["it"], name="abs")], "then", [],
                               [vi("it", T.FLOAT, [2])])
inner_else = helper.make_graph(
    [helper.make_node("AlsoMissing", ["v"], ["ie"], name="Bad_3", domain="test.unsupported")],
    "else", [], [vi("ie", T.FLOAT, [2])])
body = helper.make_graph(
    [helper.make_node("If", ["cond_in"], ["v2"], name="If_2", then_branch=inner_then,
                      else_branch=inner_else),
     helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep")],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("v", T.FLOAT, [2])],
    [vi("cond_out", T.BOOL, []), vi("v2", T.FLOAT, [2])])
g = helper.make_graph(
    [helper.make_node("If", ["c"], ["y"], name="If_32", then_branch=bad_then, else_branch=ok_else),
     helper.make_node("Loop", ["m", "c", "x"], ["z"], name="Loop_1", body=body)],
    "check_nested", [vi("c", T.BOOL, []), vi("m", T.INT64, []), vi("x", T.FLOAT, [2])],
    [vi("y", T.FLOAT, [2]), vi("z", T.FLOAT, [2])])
save(g, "control_check_nested.onnx", extra_opsets=["test.unsupported"])

# control_loop_shape_error.onnx
body = helper.make_graph(
    [helper.make_node("Add", ["v", "w"], ["v2"], name="Add_5"),
     helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep")],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("v", T.FLOAT, [2])],
    [vi("cond_out", T.BOOL, []), vi("v2", T.FLOAT, [2])])
g = helper.make_graph(
    [helper.make_node("Loop", ["m", "", "x"], ["z"], name="Loop_9", body=body)],
    "loop_shape_error", [vi("m", T.INT64, []), vi("x", T.FLOAT, [2]), vi("w", T.FLOAT, [3])],
    [vi("z", T.FLOAT, [2])])
save(g, "control_loop_shape_error.onnx")
print("wrote control models under", OUT)
