#!/usr/bin/env python3
"""gen_hostile_status.py — writes tests/hostile/status (issue 17, "statuses
that are true"):

- status/*.onnx: invalid models that once failed with MOPT_ERR_INTERNAL ("a
  bug in libmopt") or with an empty message. status/EXPECTED lists, per file,
  the status its first failing call (load, session, run on generated inputs)
  must return.
- status/seeds/*.onnx: small valid models covering many operators, the seeds
  test_hostile_status.c mutates structurally (thousands of mutants).

test_hostile_status.c runs both through the public API and asserts that no
call returns INTERNAL and that every failing call leaves a message.

usage: python3 tests/hostile/gen_hostile_status.py   (needs the onnx package)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "status")
SEEDS = os.path.join(OUT, "seeds")
CASES = []  # (file, expected status)
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


def vi(name, shape, dtype=T.FLOAT):
    return h.make_tensor_value_info(name, dtype, shape)


def c(name, values, dtype=np.int64):
    return nh.from_array(np.array(values, dtype), name)


def model(nodes, inputs, outputs, inits=(), opset=17):
    outs = [o if isinstance(o, onnx.ValueInfoProto) else vi(o, None) for o in outputs]
    g = h.make_graph(nodes, "g", inputs, outs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)],
                     producer_name="gen_hostile_status")
    m.ir_version = 8
    return m


def case(name, m, status):
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    CASES.append((name + ".onnx", status))


def seed(name, m):
    onnx.save(m, os.path.join(SEEDS, name + ".onnx"))


def node(op, ins, outs, **attrs):
    return h.make_node(op, ins, outs, name=op.lower() + "_0", **attrs)


def cases():
    x4 = [vi("x", [1, 1, 4, 4])]
    i64 = lambda n, s: vi(n, s, T.INT64)  # noqa: E731
    case("topk_negative_k",
         model([node("TopK", ["x", "k"], ["y", "i"])], [vi("x", [3, 4])],
               ["y", vi("i", None, T.INT64)], [c("k", [-1])]), "SHAPE")
    case("resize_negative_sizes",
         model([node("Resize", ["x", "", "", "s"], ["y"])], x4, ["y"], [c("s", [1, 1, -2, -2])]),
         "INVALID_MODEL")
    case("conv3d_pads_3e8",
         model([node("Conv", ["x", "w"], ["y"], pads=[300000000] * 6)], [vi("x", [1, 1, 4, 4, 4])],
               ["y"], [c("w", np.full([1, 1, 3, 3, 3], 0.5), np.float32)]), "LIMIT")
    case("onehot_depth_2e62",
         model([node("OneHot", ["i", "d", "v"], ["y"])], [i64("i", [3])], ["y"],
               [c("d", 1 << 62), c("v", [0, 1], np.float32)]), "LIMIT")
    case("range_int64_extremes",
         model([node("Range", ["a", "b", "d"], ["y"])], [], [vi("y", None, T.INT64)],
               [c("a", I64_MIN), c("b", I64_MAX), c("d", 1)]), "LIMIT")
    case("range_int64_extremes_delta",
         model([node("Range", ["a", "b", "d"], ["y"])], [], [vi("y", None, T.INT64)],
               [c("a", I64_MAX), c("b", I64_MIN), c("d", I64_MIN)]), "OK")

    # found by test_hostile_status's mutants
    body = h.make_graph([node("Add", ["v", "one"], ["v2"]), node("Identity", ["c"], ["c2"])],
                        "body", [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("v", [2])],
                        [vi("c2", [], T.BOOL), vi("v2", [2])], [c("one", [1, 1], np.float32)])
    case("loop_empty_carried_input",  # heap corruption in the subgraph run
         model([node("Loop", ["n", "cond", ""], ["y"], body=body)], [vi("x", [2])], ["y"],
               [c("n", 3), c("cond", True, np.bool_)]), "INVALID_MODEL")
    case("nms_boxes_without_type",  # SIGSEGV at load: the kernel ran on NULL boxes
         model([node("NonMaxSuppression", ["b", "s", "m", "iou", "th"], ["y"])],
               [h.make_tensor_value_info("b", T.UNDEFINED, [1, 3, 4])],
               [vi("y", None, T.INT64)],
               [c("s", [[[0.9, 0.8, 0.7]]], np.float32), c("m", [2]),
                c("iou", [0.5], np.float32), c("th", [0.0], np.float32)]), "OK")
    case("depth_to_space_blocksize_2e32",  # SIGFPE: blocksize^2 wrapped to 0
         model([node("DepthToSpace", ["x"], ["y"], blocksize=1 << 32)], [vi("x", [1, 4, 2, 2])],
               ["y"]), "INVALID_MODEL")
    case("concat_empty_input",  # INTERNAL at run: an output of unknown shape
         model([node("Concat", ["x", ""], ["y"], axis=0)], [vi("x", [2, 3])], ["y"]),
         "INVALID_MODEL")
    case("topk_opset9_without_k",  # INTERNAL at run: K was taken as -1
         model([node("TopK", ["x"], ["y", "i"])], [vi("x", [3, 4])],
               ["y", vi("i", None, T.INT64)], opset=9), "INVALID_MODEL")

    # float8 and 4-bit types (issue 12): clear statuses, never a crash
    f8zp = h.make_tensor("zp", T.FLOAT8E4M3FN, [], [1.0])
    case("quantize_f8_nonzero_zero_point",
         model([node("QuantizeLinear", ["x", "s", "zp"], ["y"])], [vi("x", [4])],
               [vi("y", None, T.FLOAT8E4M3FN)], [c("s", 2.0, np.float32), f8zp], opset=21),
         "UNSUPPORTED")
    case("dequantize_f8_nonzero_zero_point",
         model([node("Cast", ["x"], ["q"], to=T.FLOAT8E5M2),
                node("DequantizeLinear", ["q", "s", "zp"], ["y"])], [vi("x", [4])], ["y"],
               [c("s", 2.0, np.float32), h.make_tensor("zp", T.FLOAT8E5M2, [], [-2.0])],
               opset=21), "UNSUPPORTED")
    case("cast_saturate_2",
         model([node("Cast", ["x"], ["y"], to=T.FLOAT8E4M3FN, saturate=2)], [vi("x", [4])],
               [vi("y", None, T.FLOAT8E4M3FN)], opset=21), "INVALID_MODEL")
    w5 = h.make_tensor("w", T.INT4, [5], b"\x12\x34\x56", raw=True)
    w5.raw_data = b"\x12\x34\x56\x78"  # 5 values pack into 3 bytes, not 4
    case("int4_raw_data_too_long",
         model([node("Cast", ["w"], ["y"], to=T.FLOAT)], [], ["y"], [w5], opset=21),
         "INVALID_MODEL")
    w4 = h.make_tensor("w", T.UINT4, [3], [1, 2, 3])
    del w4.int32_data[:]
    w4.int32_data.extend([0x21, 300])  # 300 does not fit a byte of two nibbles
    case("uint4_int32_data_out_of_range",
         model([node("Cast", ["w"], ["y"], to=T.FLOAT)], [], ["y"], [w4], opset=21),
         "INVALID_MODEL")

    # Resize antialias: the filter widens with 1/scale (taps bounded by the input)
    case("resize_antialias_cubic_to_one_pixel",
         model([node("Resize", ["x", "", "", "sz"], ["y"], mode="cubic", antialias=1)],
               [vi("x", [1, 1, 1, 200000])], ["y"], [c("sz", [1, 1, 1, 1])], opset=18), "OK")
    case("resize_antialias_tiny_scale",
         model([node("Resize", ["x", "", "sc"], ["y"], mode="linear", antialias=1)],
               x4, ["y"], [c("sc", [1, 1, 1e-30, 1e-30], np.float32)], opset=18), "OK")

    # ai.onnx.ml ArrayFeatureExtractor: an index past the last axis
    mlm = model([node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")],
                [vi("x", [2, 3])], ["y"], [c("i", [0, 3])])
    mlm.opset_import.append(h.make_opsetid("ai.onnx.ml", 1))
    case("array_feature_extractor_index_3_of_3", mlm, "INVALID_ARGUMENT")

    # TfIdfVectorizer: an output column index of 2^40, ngram_counts falling
    tf = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0,
              pool_int64s=[1, 2, 3, 4])
    case("tfidf_ngram_index_2e40",
         model([node("TfIdfVectorizer", ["x"], ["y"], ngram_counts=[0, 2],
                     ngram_indexes=[0, 1, 1 << 40], **tf)],
               [vi("x", [6], T.INT64)], ["y"]), "LIMIT")
    case("tfidf_ngram_counts_falling",
         model([node("TfIdfVectorizer", ["x"], ["y"], ngram_counts=[3, 1],
                     ngram_indexes=[0, 1], **tf)],
               [vi("x", [6], T.INT64)], ["y"]), "INVALID_MODEL")

    # ai.onnx.ml TreeEnsemble: a cycle, a feature past X's columns
    def tree(name, status, trueleafs, featureids=(0, 0)):
        t = h.make_node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", name="tree_0",
                        n_targets=1, aggregate_function=1, tree_roots=[0],
                        nodes_featureids=list(featureids), nodes_truenodeids=[1, 0],
                        nodes_trueleafs=list(trueleafs), nodes_falsenodeids=[0, 1],
                        nodes_falseleafs=[1, 1], leaf_targetids=[0, 0],
                        nodes_modes=h.make_tensor("m", T.UINT8, [2], [0, 0]),
                        nodes_splits=nh.from_array(np.array([0.5, 1.5], np.float32)),
                        leaf_weights=nh.from_array(np.array([1.0, 2.0], np.float32)))
        m = model([t], [vi("x", [3, 2])], ["y"])
        m.opset_import.append(h.make_opsetid("ai.onnx.ml", 5))
        case(name, m, status)
    tree("tree_ensemble_cycle", "INVALID_MODEL", trueleafs=(0, 0))  # 0 -> 1 -> 0
    tree("tree_ensemble_feature_past_x", "INVALID_ARGUMENT", trueleafs=(0, 1), featureids=(0, 7))

    # ai.onnx.preview FlexAttention: 3 query heads over 2 key heads; a
    # score_mod whose output is not the scores' shape
    def flex(name, status, kv_heads, score_mod=None):
        attrs = {"score_mod": score_mod} if score_mod else {}
        m = model([node("FlexAttention", ["q", "k", "v"], ["y"], domain="ai.onnx.preview",
                        **attrs)],
                  [vi("q", [1, 3, 4, 8]), vi("k", [1, kv_heads, 5, 8]),
                   vi("v", [1, kv_heads, 5, 8])], ["y"], opset=26)
        m.opset_import.append(h.make_opsetid("ai.onnx.preview", 1))
        case(name, m, status)
    flex("flex_attention_heads_3_over_2", "SHAPE", 2)
    shrink = h.make_graph([node("ReduceSum", ["s"], ["o"], keepdims=1)], "shrink",
                          [vi("s", None)], [vi("o", None)])
    flex("flex_attention_score_mod_changes_shape", "SHAPE", 3, shrink)


def seeds():
    f = lambda n, s: vi(n, s)  # noqa: E731
    i64 = lambda n, s: vi(n, s, T.INT64)  # noqa: E731
    w = lambda n, s: c(n, np.linspace(-1, 1, int(np.prod(s))).reshape(s), np.float32)  # noqa
    x4 = [f("x", [1, 2, 4, 4])]
    seed("conv", model([node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[1, 1],
                                 dilations=[1, 1], group=1, kernel_shape=[3, 3])],
                       x4, ["y"], [w("w", [3, 2, 3, 3]), w("b", [3])]))
    seed("conv3d", model([node("Conv", ["x", "w"], ["y"], pads=[1] * 6)], [f("x", [1, 1, 3, 3, 3])],
                         ["y"], [w("w", [1, 1, 2, 2, 2])]))
    seed("conv_relu_pool", model([node("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]),
                                  node("Relu", ["c"], ["r"]),
                                  node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2],
                                       strides=[2, 2])], x4, ["y"], [w("w", [2, 2, 1, 1])]))
    seed("convtranspose", model([node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2],
                                      output_padding=[1, 1])], x4, ["y"],
                                [w("w", [2, 1, 2, 2])]))
    seed("avgpool", model([node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], pads=[1, 1, 1, 1],
                                count_include_pad=1)], x4, ["y"]))
    seed("topk", model([node("TopK", ["x", "k"], ["y", "i"], axis=-1, largest=1)], [f("x", [3, 4])],
                       ["y", vi("i", None, T.INT64)], [c("k", [2])]))
    seed("topk_input_k", model([node("TopK", ["x", "k"], ["y", "i"])],
                               [f("x", [3, 4]), i64("k", [1])], ["y", vi("i", None, T.INT64)]))
    seed("resize_sizes", model([node("Resize", ["x", "", "", "s"], ["y"], mode="linear")], x4, ["y"],
                               [c("s", [1, 2, 8, 6])]))
    seed("resize_scales", model([node("Resize", ["x", "", "s"], ["y"], mode="nearest")], x4, ["y"],
                                [c("s", [1, 1, 2, 1.5], np.float32)]))
    seed("onehot", model([node("OneHot", ["i", "d", "v"], ["y"], axis=-1)], [i64("i", [3])], ["y"],
                         [c("d", 5), c("v", [0, 1], np.float32)]))
    seed("range", model([node("Range", ["a", "b", "d"], ["y"])], [], [vi("y", None, T.INT64)],
                        [c("a", 1), c("b", 10), c("d", 3)]))
    seed("range_input", model([node("Range", ["a", "b", "d"], ["y"])],
                              [i64("a", []), i64("b", []), i64("d", [])], [vi("y", None, T.INT64)]))
    seed("reshape_expand_tile",
         model([node("Reshape", ["x", "s"], ["r"]), node("Expand", ["r", "e"], ["t"]),
                node("Tile", ["t", "rep"], ["y"])], [f("x", [2, 3])], ["y"],
               [c("s", [3, 1, 2]), c("e", [3, 2, 2]), c("rep", [1, 2, 1])]))
    seed("slice_pad_concat",
         model([node("Slice", ["x", "st", "en", "ax", "sp"], ["s"]),
                node("Pad", ["s", "p"], ["q"], mode="constant"),
                node("Concat", ["q", "q"], ["y"], axis=1)], [f("x", [4, 6])], ["y"],
               [c("st", [1, 0]), c("en", [4, 6]), c("ax", [0, 1]), c("sp", [1, 2]),
                c("p", [1, 0, 0, 1])]))
    seed("gather_scatter",
         model([node("Gather", ["x", "i"], ["g"], axis=1),
                node("ScatterElements", ["g", "j", "u"], ["y"], axis=0)],
               [f("x", [3, 4])], ["y"],
               [c("i", [[0, 2], [1, 3]]), c("j", [[[1, 0], [2, 1]]]),
                c("u", np.ones([1, 2, 2]), np.float32)]))
    seed("gathernd_split",
         model([node("GatherND", ["x", "i"], ["g"]), node("Split", ["g", "sp"], ["a", "b"], axis=0)],
               [f("x", [3, 4])], ["a", "b"], [c("i", [[0], [2], [1]]), c("sp", [1, 2])]))
    seed("matmul_gemm_softmax",
         model([node("MatMul", ["x", "w"], ["m"]), node("Gemm", ["m", "v", "b"], ["g"], transB=1),
                node("Softmax", ["g"], ["y"], axis=-1)], [f("x", ["N", 4])], ["y"],
               [w("w", [4, 5]), w("v", [3, 5]), w("b", [3])]))
    seed("reduce_transpose_cast",
         model([node("ReduceSum", ["x", "ax"], ["r"], keepdims=1),
                node("Transpose", ["r"], ["t"], perm=[1, 0, 2]),
                node("Cast", ["t"], ["y"], to=T.INT32)], [f("x", [2, 3, 4])],
               [vi("y", None, T.INT32)], [c("ax", [2])]))
    seed("where_compare",
         model([node("Greater", ["x", "z"], ["m"]), node("Where", ["m", "x", "z"], ["y"])],
               [f("x", [2, 3])], ["y"], [c("z", [0.5], np.float32)]))
    seed("constantofshape_cumsum",
         model([node("ConstantOfShape", ["s"], ["k"], value=h.make_tensor("v", T.FLOAT, [1], [1.0])),
                node("CumSum", ["k", "a"], ["y"])], [], ["y"], [c("s", [2, 3]), c("a", 1)]))
    seed("squeeze_unsqueeze_nonzero",
         model([node("Unsqueeze", ["x", "a"], ["u"]), node("Squeeze", ["u", "a"], ["s"]),
                node("NonZero", ["s"], ["y"])], [f("x", [2, 3])], [vi("y", None, T.INT64)],
               [c("a", [0])]))
    seed("norms",
         model([node("BatchNormalization", ["x", "sc", "b", "m", "v"], ["n"]),
                node("LayerNormalization", ["n", "g", "lb"], ["y"], axis=-1)], x4, ["y"],
               [w("sc", [2]), w("b", [2]), w("m", [2]), c("v", [1, 2], np.float32),
                w("g", [4]), w("lb", [4])]))
    seed("depth_space",
         model([node("SpaceToDepth", ["x"], ["d"], blocksize=2),
                node("DepthToSpace", ["d"], ["y"], blocksize=2, mode="CRD")], x4, ["y"]))
    seed("einsum_argmax",
         model([node("Einsum", ["x", "w"], ["e"], equation="ij,jk->ik"),
                node("ArgMax", ["e"], ["y"], axis=1, keepdims=0)], [f("x", [2, 3])],
               [vi("y", None, T.INT64)], [w("w", [3, 4])]))
    seed("lstm", model([node("LSTM", ["x", "W", "R"], ["y"], hidden_size=2)], [f("x", [2, 1, 3])],
                       ["y"], [w("W", [1, 8, 3]), w("R", [1, 8, 2])]))
    then_g = h.make_graph([node("Relu", ["x"], ["t"])], "then", [], [vi("t", None)])
    else_g = h.make_graph([node("Neg", ["x"], ["e"])], "else", [], [vi("e", None)])
    seed("if", model([node("ReduceSum", ["x"], ["s"], keepdims=0),
                      node("Greater", ["s", "z"], ["b"]),
                      node("If", ["b"], ["y"], then_branch=then_g, else_branch=else_g)],
                     [f("x", [2, 2])], ["y"], [c("z", 0.0, np.float32)]))
    seed("quant", model([node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
                         node("DequantizeLinear", ["q", "s", "zp"], ["y"])], [f("x", [2, 3])], ["y"],
                        [c("s", 0.1, np.float32), c("zp", 3, np.uint8)]))

    more_seeds(f, i64, w, x4)


def more_seeds(f, i64, w, x4):
    """Seeds for the operators with the most index arithmetic."""
    seed("gru_rnn", model([node("GRU", ["x", "W", "R"], ["g"], hidden_size=2),
                           node("Squeeze", ["g", "a"], ["s"]),
                           node("RNN", ["s", "W2", "R2"], ["y"], hidden_size=2)],
                          [f("x", [2, 1, 3])], ["y"],
                          [w("W", [1, 6, 3]), w("R", [1, 6, 2]), c("a", [1]), w("W2", [1, 2, 2]),
                           w("R2", [1, 2, 2])]))
    body = h.make_graph([node("Add", ["v", "one"], ["v2"]), node("Less", ["i", "lim"], ["c2"])],
                        "body", [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("v", [2])],
                        [vi("c2", [], T.BOOL), vi("v2", [2])],
                        [c("one", [1, 1], np.float32), c("lim", 2)])
    seed("loop", model([node("Loop", ["n", "cond", "x"], ["y"], body=body)], [f("x", [2])], ["y"],
                       [c("n", 3), c("cond", True, np.bool_)]))
    sbody = h.make_graph([node("Add", ["s", "e"], ["s2"]), node("Identity", ["s2"], ["o"])],
                         "sbody", [vi("s", [2]), vi("e", [2])], [vi("s2", [2]), vi("o", [2])])
    seed("scan", model([node("Scan", ["init", "x"], ["fin", "y"], body=sbody, num_scan_inputs=1)],
                       [f("x", [3, 2])], ["fin", "y"], [c("init", [0, 0], np.float32)],
                       opset=17))
    seed("qlinearconv_matmulinteger",
         model([node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
                node("QLinearConv", ["q", "s", "zp", "wq", "s", "zp", "s", "zp"], ["qc"],
                     kernel_shape=[1, 1]),
                node("DequantizeLinear", ["qc", "s", "zp"], ["y"])], x4, ["y"],
               [c("s", 0.1, np.float32), c("zp", 3, np.uint8),
                c("wq", np.arange(4).reshape(2, 2, 1, 1) + 1, np.uint8)]))
    seed("matmulinteger", model([node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])],
                                [vi("a", [2, 3], T.UINT8)], [vi("y", None, T.INT32)],
                                [c("b", np.arange(12).reshape(3, 4), np.uint8), c("za", 1, np.uint8),
                                 c("zb", 2, np.uint8)]))
    seed("convinteger", model([node("ConvInteger", ["a", "k"], ["y"], pads=[1, 1, 1, 1])],
                              [vi("a", [1, 1, 3, 3], T.UINT8)], [vi("y", None, T.INT32)],
                              [c("k", np.ones([1, 1, 2, 2]), np.uint8)]))
    seed("gridsample_affinegrid",
         model([node("AffineGrid", ["th", "sz"], ["g"], align_corners=0),
                node("GridSample", ["x", "g"], ["y"], mode="linear")], x4, ["y"],
               [c("th", [[[1, 0, 0], [0, 1, 0]]], np.float32), c("sz", [1, 2, 3, 3])]))
    seed("roialign", model([node("RoiAlign", ["x", "r", "b"], ["y"], output_height=2, output_width=2,
                                 sampling_ratio=2)], x4, ["y"],
                           [c("r", [[0, 0, 3, 3], [1, 1, 2, 2]], np.float32), c("b", [0, 0])]))
    seed("nms", model([node("NonMaxSuppression", ["b", "s", "m", "iou", "th"], ["y"])],
                      [f("b", [1, 3, 4])], [vi("y", None, T.INT64)],
                      [c("s", [[[0.9, 0.8, 0.7]]], np.float32), c("m", [2]),
                       c("iou", [0.5], np.float32), c("th", [0.0], np.float32)]))
    seed("unique_compress",
         model([node("Unique", ["x"], ["u"], sorted=1),
                node("Compress", ["u", "m"], ["y"], axis=0)], [f("x", [4])], ["y"],
               [c("m", [True, False], np.bool_)]))
    seed("scatternd_gatherelements",
         model([node("ScatterND", ["x", "i", "u"], ["s"]),
                node("GatherElements", ["s", "j"], ["y"], axis=1)], [f("x", [3, 4])], ["y"],
               [c("i", [[1], [0]]), c("u", np.ones([2, 4]), np.float32),
                c("j", [[0, 3], [1, 2], [2, 2]])]))
    seed("trilu_clip_hardmax",
         model([node("Trilu", ["x", "k"], ["t"], upper=1), node("Clip", ["t", "lo", "hi"], ["cl"]),
                node("Hardmax", ["cl"], ["y"], axis=-1)], [f("x", [3, 4])], ["y"],
               [c("k", 1), c("lo", 0.0, np.float32), c("hi", 1.0, np.float32)]))
    seed("flatten_logsoftmax_mod",
         model([node("Flatten", ["x"], ["fl"], axis=2), node("LogSoftmax", ["fl"], ["ls"], axis=1),
                node("Mod", ["ls", "m"], ["y"], fmod=1)], x4, ["y"], [c("m", [0.7], np.float32)]))
    seed("instance_group_norm",
         model([node("InstanceNormalization", ["x", "sc", "b"], ["n"]),
                node("GroupNormalization", ["n", "sc", "b"], ["y"], num_groups=2)], x4, ["y"],
               [w("sc", [2]), w("b", [2])]))
    seed("lrn_lppool_globalmax",
         model([node("LRN", ["x"], ["l"], size=3), node("LpPool", ["l"], ["p"], kernel_shape=[2, 2], p=2),
                node("GlobalMaxPool", ["p"], ["y"])], x4, ["y"]))
    seed("dft", model([node("DFT", ["x", "", "ax"], ["y"], onesided=0)], [f("x", [1, 8, 1])], ["y"],
                      [c("ax", 1)], opset=20))
    seed("col2im", model([node("Col2Im", ["x", "isz", "bsz"], ["y"])], [f("x", [1, 4, 4])], ["y"],
                         [c("isz", [3, 3]), c("bsz", [2, 2])], opset=18))
    seed("maxunpool", model([node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2],
                                  strides=[2, 2])], [f("x", [1, 1, 2, 2])], ["y"],
                            [c("i", [[[[0, 3], [9, 14]]]])]))
    seed("centercroppad", model([node("CenterCropPad", ["x", "s"], ["y"], axes=[2, 3])], x4, ["y"],
                                [c("s", [3, 6])], opset=18))
    seed("deformconv", model([node("DeformConv", ["x", "w", "off"], ["y"], kernel_shape=[2, 2])],
                             [f("x", [1, 1, 3, 3])], ["y"],
                             [w("w", [1, 1, 2, 2]), c("off", np.zeros([1, 8, 2, 2]), np.float32)],
                             opset=19))
    seed("shape_size_eyelike",
         model([node("Shape", ["x"], ["sh"], start=1), node("Size", ["x"], ["sz"]),
                node("Unsqueeze", ["sz", "z"], ["sz1"]),
                node("Concat", ["sh", "sz1"], ["cc"], axis=0),
                node("ConstantOfShape", ["cc"], ["y"])], [f("x", [2, 3])], ["y"], [c("z", [0])]))
    seed("reduce_variants",
         model([node("ReduceMax", ["x", "ax"], ["a"], keepdims=0),
                node("ReduceLogSumExp", ["x", "ax"], ["b"], keepdims=0),
                node("ReduceL2", ["x"], ["c"], keepdims=1, axes=[1], noop_with_empty_axes=0),
                node("Add", ["a", "b"], ["y"])], [f("x", [2, 3])], ["y", "c"],
               [c("ax", [1])], opset=17))
    seed("attention", model([node("Attention", ["q", "k", "v"], ["y"])],
                            [f("q", [1, 2, 3, 4]), f("k", [1, 2, 5, 4]), f("v", [1, 2, 5, 4])], ["y"],
                            opset=23))
    seed("windows_stft",
         model([node("HannWindow", ["n"], ["win"]),
                node("STFT", ["x", "st", "win"], ["y"])], [f("x", [1, 16, 1])], ["y"],
               [c("n", 4), c("st", 2)], opset=17))
    seed("mvn_lpnorm_det",
         model([node("MeanVarianceNormalization", ["x"], ["m"]),
                node("LpNormalization", ["m"], ["l"], axis=1, p=2),
                node("Det", ["sq"], ["y"])], [f("x", [1, 2, 2, 2]), f("sq", [2, 2, 2])], ["y", "l"]))
    seed("reverse_cumprod_bitshift",
         model([node("ReverseSequence", ["x", "len"], ["y"], batch_axis=1, time_axis=0),
                node("BitShift", ["u", "sh"], ["z"], direction="LEFT")],
               [f("x", [3, 2]), vi("u", [3], T.UINT32)], ["y", vi("z", None, T.UINT32)],
               [c("len", [2, 3]), c("sh", [1, 2, 3], np.uint32)]))
    seed("float8_int4_qdq",
         model([node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
                node("DequantizeLinear", ["q", "s"], ["d"]),
                node("Cast", ["d"], ["e"], to=T.FLOAT8E5M2, saturate=0),
                node("CastLike", ["e", "x"], ["y"]),
                node("DequantizeLinear", ["w", "s"], ["z"])],
               [f("x", [2, 3])], ["y", "z"],
               [c("s", 0.5, np.float32), h.make_tensor("zp", T.FLOAT8E4M3FN, [], [0.0]),
                h.make_tensor("w", T.INT4, [3], [-8, 7, 1])], opset=21))


def main():
    os.makedirs(SEEDS, exist_ok=True)
    for d in (OUT, SEEDS):
        for name in os.listdir(d):
            if name.endswith(".onnx"):
                os.remove(os.path.join(d, name))
    cases()
    seeds()
    with open(os.path.join(OUT, "EXPECTED"), "w") as f:
        f.write("# file status-of-the-first-failing-call (gen_hostile_status.py)\n")
        for name, status in CASES:
            f.write("%s %s\n" % (name, status))
    print("wrote %d cases and %d seeds into %s" % (len(CASES), len(os.listdir(SEEDS)), OUT))


if __name__ == "__main__":
    main()
