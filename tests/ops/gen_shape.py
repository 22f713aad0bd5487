"""gen_shape.py — op cases for the "shape" and "movement" families
(Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size, ConstantOfShape, Range,
Constant, Identity, Dropout, Expand, Transpose, Concat, Split, Slice, Gather,
GatherElements, Tile, Pad, Trilu). Expected outputs come from numpy.

Run from the repo root: python3 tests/ops/gen_shape.py
"""
import numpy as np
from onnx import helper, TensorProto

from opcase import Case, normal, rng

R = rng(7)
I64_MAX = np.iinfo(np.int64).max
I64_MIN = np.iinfo(np.int64).min


def f32(*shape):
    return normal(R, shape)


def i64(*shape):
    return R.integers(-100, 100, size=shape, dtype=np.int64)


def boolean(*shape):
    return R.integers(0, 2, size=shape).astype(np.bool_)


def ints(*v):
    return np.array(v, dtype=np.int64)


def simple(name, op, x, y, opset=13, input_shapes=None, inits=(), extra_inputs=(), **attrs):
    """One node: op(x, *inits/extra_inputs) -> y. inits: (name, array) baked
    in as initializers; extra_inputs: (name, array) fed as graph inputs."""
    c = Case(name, opset=opset)
    in_names = ["x"] + [n for n, _ in inits] + [n for n, _ in extra_inputs]
    for n, a in inits:
        c.initializer(n, a)
    c.node(op, in_names, ["y"], **attrs)
    feeds = {"x": x}
    feeds.update(dict(extra_inputs))
    c.save(feeds, {"y": y}, input_shapes=input_shapes)


# ---- Reshape ---------------------------------------------------------------
x = f32(2, 3, 4)
simple("reshape_basic", "Reshape", x, x.reshape(4, 6), inits=[("shape", ints(4, -1))])
x = f32(2, 3, 12)
simple("reshape_zero_copy_symbolic", "Reshape", x, x.reshape(2, 3, 3, 4),
       inits=[("shape", ints(0, 0, 3, 4))], input_shapes={"x": ["batch", "seq", 12]})
x = f32(2, 3, 4)
simple("reshape_minus1_symbols_cancel", "Reshape", x, x.reshape(2, 12),
       inits=[("shape", ints(0, -1))], input_shapes={"x": ["batch", 3, 4]})
x = f32(2, 5, 4)
simple("reshape_minus1_symbolic_unknown", "Reshape", x, x.reshape(-1, 4),
       inits=[("shape", ints(-1, 4))], input_shapes={"x": ["batch", "seq", 4]})
x = f32(3, 4)
simple("reshape_shape_as_input", "Reshape", x, x.reshape(2, 6),
       extra_inputs=[("shape", ints(2, 6))])
x = np.zeros((0, 3), np.float32)
simple("reshape_allowzero_empty", "Reshape", x, x.reshape(3, 0), opset=14,
       inits=[("shape", ints(3, 0))], allowzero=1)
x = np.zeros((0, 3), np.float32)
simple("reshape_zero_copies_empty_dim", "Reshape", x, x.reshape(0, 3, 1), opset=14,
       inits=[("shape", ints(0, 3, 1))])
x = i64(2, 6)
simple("reshape_int64", "Reshape", x, x.reshape(3, 2, 2), inits=[("shape", ints(3, -1, 2))])
x = boolean(4, 3)
simple("reshape_bool", "Reshape", x, x.reshape(12), inits=[("shape", ints(-1))])
x = f32(1, 1)
simple("reshape_to_scalar", "Reshape", x, x.reshape(()), inits=[("shape", ints())])
x = f32(2, 3, 4)
simple("reshape_opset11", "Reshape", x, x.reshape(2, 4, 3), opset=11,
       inits=[("shape", ints(2, 0 + 4, -1))])

# ---- Flatten -----------------------------------------------------------------
x = f32(2, 3, 4, 5)
simple("flatten_default", "Flatten", x, x.reshape(2, 60))
simple("flatten_axis0", "Flatten", x, x.reshape(1, 120), axis=0)
simple("flatten_axis_neg", "Flatten", x, x.reshape(24, 5), opset=11, axis=-1)
simple("flatten_axis_rank", "Flatten", x, x.reshape(120, 1), axis=4)
simple("flatten_symbolic", "Flatten", x, x.reshape(2, 60),
       input_shapes={"x": ["batch", 3, 4, 5]})
xi = i64(3, 2, 2)
simple("flatten_int64", "Flatten", xi, xi.reshape(3, 4))

# ---- Squeeze / Unsqueeze ---------------------------------------------------
x = f32(1, 3, 1, 4, 1)
simple("squeeze_attr_opset11", "Squeeze", x, x.reshape(3, 1, 4), opset=11, axes=[0, -1])
simple("squeeze_input_opset13", "Squeeze", x, x.reshape(3, 1, 4), inits=[("axes", ints(0, -1))])
simple("squeeze_all_ones", "Squeeze", x, x.reshape(3, 4))
simple("squeeze_all_ones_opset11", "Squeeze", x, x.reshape(3, 4), opset=11)
x = f32(2, 1, 3)
simple("squeeze_symbolic", "Squeeze", x, x.reshape(2, 3), inits=[("axes", ints(1))],
       input_shapes={"x": ["batch", 1, "seq"]})
xb = boolean(1, 5)
simple("squeeze_bool", "Squeeze", xb, xb.reshape(5), inits=[("axes", ints(0))])
x = f32(3, 4)
simple("unsqueeze_attr_opset11", "Unsqueeze", x, x.reshape(1, 3, 4, 1), opset=11, axes=[0, 3])
simple("unsqueeze_input_opset13", "Unsqueeze", x, x.reshape(1, 3, 4, 1),
       inits=[("axes", ints(-1, 0))])
simple("unsqueeze_middle", "Unsqueeze", x, x.reshape(3, 1, 1, 4), inits=[("axes", ints(1, 2))])
x = np.array(3.5, np.float32)
simple("unsqueeze_scalar", "Unsqueeze", x, x.reshape(1), inits=[("axes", ints(0))])
x = f32(2, 5)
simple("unsqueeze_symbolic", "Unsqueeze", x, x.reshape(2, 1, 5), inits=[("axes", ints(1))],
       input_shapes={"x": ["batch", "seq"]})
xi = i64(4)
simple("unsqueeze_int64", "Unsqueeze", xi, xi.reshape(1, 4), opset=11, axes=[0])

# ---- Shape / Size --------------------------------------------------------------
x = f32(2, 3, 4)
simple("shape_basic", "Shape", x, ints(2, 3, 4))
simple("shape_symbolic", "Shape", x, ints(2, 3, 4), input_shapes={"x": ["batch", "seq", 4]})
simple("shape_start_end_opset15", "Shape", x, ints(3), opset=15, start=1, end=-1)
simple("shape_start_neg_opset15", "Shape", x, ints(3, 4), opset=15, start=-2)
simple("shape_clamped_opset15", "Shape", x, ints(2, 3, 4), opset=15, start=-10, end=10)
simple("shape_empty_range_opset15", "Shape", x, ints(), opset=15, start=2, end=1)
simple("size_basic", "Size", x, np.array(24, np.int64))
simple("size_empty", "Size", np.zeros((3, 0), np.float32), np.array(0, np.int64))
simple("size_bool", "Size", boolean(5), np.array(5, np.int64))

# ---- ConstantOfShape -------------------------------------------------------------
simple("constantofshape_default", "ConstantOfShape", ints(2, 3), np.zeros((2, 3), np.float32))
simple("constantofshape_int64", "ConstantOfShape", ints(3, 1, 2), np.full((3, 1, 2), 7, np.int64),
       value=helper.make_tensor("v", TensorProto.INT64, [1], [7]))
simple("constantofshape_float", "ConstantOfShape", ints(4), np.full((4,), -1.5, np.float32),
       value=helper.make_tensor("v", TensorProto.FLOAT, [1], [-1.5]))
simple("constantofshape_bool", "ConstantOfShape", ints(2, 2), np.ones((2, 2), np.bool_),
       value=helper.make_tensor("v", TensorProto.BOOL, [1], [True]))
simple("constantofshape_empty", "ConstantOfShape", ints(2, 0), np.zeros((2, 0), np.float32))
simple("constantofshape_scalar", "ConstantOfShape", ints(), np.zeros((), np.float32))

# ---- Range ---------------------------------------------------------------------


def range_case(name, start, limit, delta, dtype):
    c = Case(name, opset=13)
    c.node("Range", ["start", "limit", "delta"], ["y"])
    s, l, d = (np.array(v, dtype) for v in (start, limit, delta))
    c.save({"start": s, "limit": l, "delta": d}, {"y": np.arange(s, l, d, dtype=dtype)})


range_case("range_f32", 0.5, 3.0, 0.5, np.float32)
range_case("range_f32_negative_delta", 2.0, -1.0, -0.75, np.float32)
range_case("range_i64", -3, 10, 4, np.int64)
range_case("range_i32_negative", 10, 2, -3, np.int32)
range_case("range_empty", 5, 2, 1, np.int64)
c = Case("range_constant_inputs", opset=13)
c.initializer("start", np.array(1, np.int64)).initializer("limit", np.array(6, np.int64))
c.initializer("delta", np.array(2, np.int64))
c.node("Range", ["start", "limit", "delta"], ["r"])
c.node("Concat", ["r", "x"], ["y"], axis=0)
xi = i64(2)
c.save({"x": xi}, {"y": np.concatenate([np.arange(1, 6, 2), xi])})

# ---- Constant ------------------------------------------------------------------


def constant_case(name, expected, opset=13, **attrs):
    c = Case(name, opset=opset)
    c.node("Constant", [], ["c"], **attrs)
    c.node("Identity", ["c"], ["y"])
    c.save({}, {"y": expected})


constant_case("constant_tensor", np.arange(6, dtype=np.float32).reshape(2, 3),
              value=helper.make_tensor("v", TensorProto.FLOAT, [2, 3], list(range(6))))
constant_case("constant_value_float", np.array(2.5, np.float32), value_float=2.5)
constant_case("constant_value_floats", np.array([1.0, -2.0], np.float32), value_floats=[1.0, -2.0])
constant_case("constant_value_int", np.array(-4, np.int64), value_int=-4)
constant_case("constant_value_ints", ints(3, 1, 4), value_ints=[3, 1, 4])
constant_case("constant_int64_tensor_opset11", ints(5, 6).reshape(1, 2), opset=11,
              value=helper.make_tensor("v", TensorProto.INT64, [1, 2], [5, 6]))
# a Constant feeding Reshape's shape: load-time inference must see its values
c = Case("constant_feeds_reshape", opset=13)
c.node("Constant", [], ["s"], value_ints=[0, -1])
c.node("Reshape", ["x", "s"], ["y"])
x = f32(3, 2, 2)
c.save({"x": x}, {"y": x.reshape(3, 4)}, input_shapes={"x": ["n", 2, 2]})

# ---- Identity / Dropout --------------------------------------------------------
x = f32(3, 4)
simple("identity_f32", "Identity", x, x)
xb = boolean(2, 3)
simple("identity_bool", "Identity", xb, xb)
simple("identity_empty", "Identity", np.zeros((0, 4), np.int64), np.zeros((0, 4), np.int64))
c = Case("dropout_mask_opset13", opset=13)
c.node("Dropout", ["x"], ["y", "mask"])
c.save({"x": x}, {"y": x, "mask": np.ones(x.shape, np.bool_)})
simple("dropout_ratio_opset11", "Dropout", x, x, opset=11, ratio=0.3)
c = Case("dropout_training_false_opset13", opset=13)
c.initializer("ratio", np.array(0.5, np.float32)).initializer("training", np.array(False))
c.node("Dropout", ["x", "ratio", "training"], ["y"])
c.save({"x": x}, {"y": x})
c = Case("dropout_training_zero_ratio_mask_opset13", opset=13)  # training, ratio 0: identity
c.node("Dropout", ["x", "ratio", "training"], ["y", "mask"])
c.save({"x": x, "ratio": np.array(0.0, np.float32), "training": np.array(True)},
       {"y": x, "mask": np.ones(x.shape, np.bool_)})
c = Case("dropout_training_random_unsupported", opset=13).expect_error(6, "draws a random mask")
c.node("Dropout", ["x", "ratio", "training"], ["y"])
c.save({"x": x, "ratio": np.array(0.25, np.float32), "training": np.array(True)}, {"y": x})

# ---- Expand ------------------------------------------------------------------------
x = f32(3, 1)
simple("expand_basic", "Expand", x, np.broadcast_to(x, (2, 3, 4)), inits=[("shape", ints(2, 3, 4))])
x = f32(2, 3, 1)
simple("expand_shape_shorter", "Expand", x, np.broadcast_to(x, (2, 3, 4)),
       inits=[("shape", ints(1, 4))])
x = f32(2, 1, 5)
simple("expand_ones_keep", "Expand", x, x.copy(), inits=[("shape", ints(1, 1, 1))])
xi = i64(1, 4)
simple("expand_int64", "Expand", xi, np.broadcast_to(xi, (3, 4)), inits=[("shape", ints(3, 1))])
x = f32(2, 1)
simple("expand_symbolic", "Expand", x, np.broadcast_to(x, (2, 6)), inits=[("shape", ints(1, 6))],
       input_shapes={"x": ["batch", 1]})
x = f32(3, 1)
simple("expand_shape_as_input", "Expand", x, np.broadcast_to(x, (3, 2)),
       extra_inputs=[("shape", ints(3, 2))])
simple("expand_to_empty", "Expand", f32(1, 3), np.zeros((0, 3), np.float32),
       inits=[("shape", ints(0, 1))])

# ---- Transpose ---------------------------------------------------------------------
x = f32(2, 3, 4)
simple("transpose_default", "Transpose", x, x.transpose())
simple("transpose_perm102", "Transpose", x, x.transpose(1, 0, 2), perm=[1, 0, 2])
x4 = f32(2, 3, 4, 5)
simple("transpose_nchw_to_nhwc", "Transpose", x4, x4.transpose(0, 2, 3, 1), perm=[0, 2, 3, 1])
simple("transpose_4d_mixed", "Transpose", x4, x4.transpose(3, 1, 0, 2), perm=[3, 1, 0, 2])
xi = i64(3, 5)
simple("transpose_int64", "Transpose", xi, xi.T.copy())
xb = boolean(2, 3, 2)
simple("transpose_bool", "Transpose", xb, xb.transpose(2, 0, 1), perm=[2, 0, 1])
x = f32(2, 3, 8)
simple("transpose_symbolic", "Transpose", x, x.transpose(1, 0, 2), perm=[1, 0, 2],
       input_shapes={"x": ["batch", "seq", 8]})
simple("transpose_empty", "Transpose", np.zeros((0, 3), np.float32), np.zeros((3, 0), np.float32))
x = f32(1, 7, 1, 3)
simple("transpose_unit_dims", "Transpose", x, x.transpose(2, 3, 0, 1), perm=[2, 3, 0, 1])
x16 = R.standard_normal((3, 4)).astype(np.float16)
simple("transpose_f16", "Transpose", x16, x16.T.copy())

# ---- Concat ------------------------------------------------------------------------


def concat_case(name, arrays, axis, opset=13, input_shapes=None):
    c = Case(name, opset=opset)
    names = [f"x{i}" for i in range(len(arrays))]
    c.node("Concat", names, ["y"], axis=axis)
    c.save(dict(zip(names, arrays)), {"y": np.concatenate(arrays, axis=axis)},
           input_shapes=input_shapes)


concat_case("concat_axis0", [f32(2, 3), f32(1, 3)], 0)
concat_case("concat_axis_neg", [f32(2, 3, 1), f32(2, 3, 4), f32(2, 3, 2)], -1)
concat_case("concat_axis1_opset11", [f32(2, 1, 3), f32(2, 2, 3)], 1, opset=11)
concat_case("concat_int64", [i64(3), i64(2)], 0)
concat_case("concat_bool", [boolean(2, 2), boolean(2, 1)], 1)
concat_case("concat_with_empty", [f32(2, 3), np.zeros((0, 3), np.float32), f32(1, 3)], 0)
concat_case("concat_symbolic", [f32(2, 3), f32(2, 5)], 1,
            input_shapes={"x0": ["batch", 3], "x1": ["batch", 5]})
concat_case("concat_single", [f32(4, 2)], 1)

# ---- Split ---------------------------------------------------------------------------


def split_case(name, x, axis, sizes, opset=13, split_attr=None, split_input=None, **attrs):
    n = len(sizes)
    c = Case(name, opset=opset)
    ins = ["x"]
    if split_input is not None:
        c.initializer("split", ints(*split_input))
        ins.append("split")
    if split_attr is not None:
        attrs["split"] = split_attr
    outs = [f"y{i}" for i in range(n)]
    c.node("Split", ins, outs, axis=axis, **attrs)
    parts = np.split(x, np.cumsum(sizes)[:-1], axis=axis)
    c.save({"x": x}, dict(zip(outs, parts)))


x = f32(6, 4)
split_case("split_equal", x, 0, [2, 2, 2])
split_case("split_attr_opset11", x, 0, [1, 5], opset=11, split_attr=[1, 5])
split_case("split_input_opset13", x, 1, [1, 3], split_input=[1, 3])
split_case("split_axis_neg", f32(2, 3, 6), -1, [3, 3])
split_case("split_num_outputs_uneven_opset18", f32(5, 2), 0, [2, 2, 1], opset=18, num_outputs=3)
split_case("split_int64", i64(4, 3), 0, [1, 3], split_input=[1, 3])
split_case("split_zero_size_part", x, 1, [4, 0], split_input=[4, 0])

# ---- Slice ---------------------------------------------------------------------------


def slice_case(name, x, starts, ends, axes=None, steps=None, opset=13, input_shapes=None,
               as_inputs=False):
    c = Case(name, opset=opset)
    sl = [slice(None)] * x.ndim
    ax = axes if axes is not None else list(range(len(starts)))
    for i, a in enumerate(ax):
        sl[a] = slice(starts[i], ends[i], steps[i] if steps else None)
    y = x[tuple(sl)]
    if opset < 10:
        attrs = {"starts": starts, "ends": ends}
        if axes is not None:
            attrs["axes"] = axes
        c.node("Slice", ["x"], ["y"], **attrs)
        c.save({"x": x}, {"y": y}, input_shapes=input_shapes)
        return
    ins = ["x", "starts", "ends"]
    vals = {"starts": ints(*starts), "ends": ints(*ends)}
    if axes is not None or steps is not None:
        ins.append("axes" if axes is not None else "")
        if axes is not None:
            vals["axes"] = ints(*axes)
    if steps is not None:
        ins.append("steps")
        vals["steps"] = ints(*steps)
    feeds = {"x": x}
    for k, v in vals.items():
        if as_inputs:
            feeds[k] = v
        else:
            c.initializer(k, v)
    c.node("Slice", ins, ["y"])
    c.save(feeds, {"y": y}, input_shapes=input_shapes)


x = f32(5, 6, 4)
slice_case("slice_basic", x, [1, 2], [4, 5])
slice_case("slice_axes_neg", x, [1], [3], axes=[-1])
slice_case("slice_steps2", x, [0, 1], [5, 6], axes=[0, 1], steps=[2, 2])
slice_case("slice_negative_step", x, [-1], [I64_MIN], axes=[1], steps=[-1])
slice_case("slice_negative_step2", x, [4, 3], [0, -100], axes=[0, 2], steps=[-2, -1])
slice_case("slice_clamp_out_of_range", x, [-100, 2], [1000, I64_MAX], axes=[0, 1])
slice_case("slice_empty_result", x, [3], [1], axes=[0])
slice_case("slice_int64_data", i64(4, 5), [1, -3], [3, -1], axes=[0, 1])
slice_case("slice_bool_data", boolean(6), [5], [0], axes=[0], steps=[-2])
slice_case("slice_opset9_attrs", x, [1, 0], [3, 2], axes=[0, 2], opset=9)
slice_case("slice_opset9_default_axes", x, [1], [-1], opset=9)
slice_case("slice_opset11", x, [0], [-1], axes=[1], steps=[3], opset=11)
slice_case("slice_symbolic_other_axis", f32(2, 7, 4), [1], [3], axes=[2],
           input_shapes={"x": ["batch", "seq", 4]})
slice_case("slice_symbolic_sliced_axis", f32(2, 7, 4), [1], [I64_MAX], axes=[1],
           input_shapes={"x": ["batch", "seq", 4]})
slice_case("slice_as_inputs", x, [0, -2], [2, 6], axes=[2, 1], steps=[1, 1], as_inputs=True)

# ---- Gather / GatherElements ---------------------------------------------------


def gather_case(name, x, idx, axis, opset=13, input_shapes=None):
    c = Case(name, opset=opset)
    c.node("Gather", ["x", "idx"], ["y"], axis=axis)
    c.save({"x": x, "idx": idx}, {"y": np.take(x, idx, axis=axis)}, input_shapes=input_shapes)


x = f32(5, 4)
gather_case("gather_axis0_negative", x, ints(0, -1, 2, -5), 0)
gather_case("gather_axis1_2d_indices", x, ints(1, -2, 0, 3, 3, 1).reshape(2, 3), 1)
gather_case("gather_int32_indices", f32(3, 4, 2), np.array([2, 0], np.int32), -2)
gather_case("gather_scalar_index", x, np.array(-2, np.int64), 0)
gather_case("gather_int64_data", i64(6), ints(5, 0, -6), 0, opset=11)
gather_case("gather_bool_data", boolean(3, 2), ints(1, 1), 0)
gather_case("gather_symbolic", f32(2, 7, 4), ints(3, 0), 1,
            input_shapes={"x": ["batch", "seq", 4]})
gather_case("gather_empty_indices", x, np.zeros((0,), np.int64), 0)


def gather_el_case(name, x, idx, axis):
    c = Case(name, opset=13)
    c.node("GatherElements", ["x", "idx"], ["y"], axis=axis)
    norm = np.where(idx < 0, idx + x.shape[axis], idx)
    c.save({"x": x, "idx": idx}, {"y": np.take_along_axis(x, norm, axis=axis)})


gather_el_case("gatherelements_axis0", f32(3, 3), ints(1, 2, 0, 2, 0, -1).reshape(2, 3), 0)
gather_el_case("gatherelements_axis1_neg", f32(2, 4), ints(-1, 0, 1, 3, 2, 2).reshape(2, 3), -1)

# ---- Tile ------------------------------------------------------------------------------
x = f32(2, 3)
simple("tile_basic", "Tile", x, np.tile(x, (2, 3)), inits=[("repeats", ints(2, 3))])
x = f32(2, 1, 3)
simple("tile_3d", "Tile", x, np.tile(x, (1, 4, 2)), inits=[("repeats", ints(1, 4, 2))])
xi = i64(3)
simple("tile_int64", "Tile", xi, np.tile(xi, 3), extra_inputs=[("repeats", ints(3))])
xb = boolean(2, 2)
simple("tile_bool_zero_repeat", "Tile", xb, np.tile(xb, (0, 2)), inits=[("repeats", ints(0, 2))])
x = f32(2, 3)
simple("tile_symbolic", "Tile", x, np.tile(x, (1, 2)), inits=[("repeats", ints(1, 2))],
       input_shapes={"x": ["batch", 3]})

# ---- Pad ---------------------------------------------------------------------------------


def pad_case(name, x, pads, mode="constant", value=None, opset=13, axes=None):
    c = Case(name, opset=opset)
    r = x.ndim
    ax = axes if axes is not None else list(range(r))
    n = len(ax)
    full = [[0, 0] for _ in range(r)]
    for i, a in enumerate(ax):
        full[a] = [pads[i], pads[i + n]]
    # numpy: positive pads with np.pad, negative pads by slicing
    pos = [[max(b, 0), max(e, 0)] for b, e in full]
    if mode == "constant":
        y = np.pad(x, pos, mode="constant", constant_values=value if value is not None else 0)
    else:
        y = np.pad(x, pos, mode=mode)
    y = y[tuple(slice(-min(b, 0), y.shape[i] + min(e, 0)) for i, (b, e) in enumerate(full))]
    attrs = {} if mode == "constant" and opset >= 11 else {"mode": mode}
    if opset < 11:
        attrs["pads"] = pads
        if value is not None:
            attrs["value"] = float(value)
        c.node("Pad", ["x"], ["y"], **attrs)
    else:
        c.initializer("pads", ints(*pads))
        ins = ["x", "pads"]
        if value is not None or axes is not None:
            if value is not None:
                c.initializer("value", np.array(value, x.dtype))
            ins.append("value" if value is not None else "")
        if axes is not None:
            c.initializer("axes", ints(*axes))
            ins.append("axes")
        c.node("Pad", ins, ["y"], **attrs)
    c.save({"x": x}, {"y": y})


x = f32(3, 4)
pad_case("pad_constant_zero", x, [1, 2, 0, 1])
pad_case("pad_constant_value", x, [0, 1, 2, 0], value=-3.5)
pad_case("pad_reflect", x, [2, 1, 1, 3], mode="reflect")
pad_case("pad_edge", f32(2, 3, 2), [0, 2, 1, 1, 0, 2], mode="edge")
pad_case("pad_negative_crop", f32(4, 5), [-1, 2, 0, -2])
pad_case("pad_int64_value", i64(2, 3), [1, 1, 1, 1], value=9)
pad_case("pad_opset10_attrs", x, [1, 0, 0, 2], value=1.25, opset=10)
pad_case("pad_opset10_reflect", x, [0, 2, 0, 2], mode="reflect", opset=10)
pad_case("pad_axes_opset18", f32(2, 3, 4), [1, 2, 0, 1], axes=[2, -3], opset=18)
pad_case("pad_bool", boolean(2, 2), [1, 0, 0, 1])
pad_case("pad_reflect_3d", f32(2, 3, 4), [0, 1, 2, 1, 2, 3], mode="reflect")

# ---- Trilu -----------------------------------------------------------------------------------


def trilu_case(name, x, upper=None, k=None):
    c = Case(name, opset=14)
    ins = ["x"]
    if k is not None:
        c.initializer("k", np.array(k, np.int64))
        ins.append("k")
    attrs = {} if upper is None else {"upper": upper}
    c.node("Trilu", ins, ["y"], **attrs)
    kk = k or 0
    y = np.triu(x, kk) if upper in (None, 1) else np.tril(x, kk)
    c.save({"x": x}, {"y": y})


x = f32(4, 5)
trilu_case("trilu_upper_default", x)
trilu_case("trilu_lower", x, upper=0)
trilu_case("trilu_upper_k1", x, upper=1, k=1)
trilu_case("trilu_lower_k_neg1", x, upper=0, k=-1)
trilu_case("trilu_batched_upper_k_neg2", f32(2, 3, 5, 4), upper=1, k=-2)
trilu_case("trilu_lower_k_large", x, upper=0, k=100)
trilu_case("trilu_upper_k_large_neg", x, upper=1, k=-100)
trilu_case("trilu_int64_lower", i64(3, 3), upper=0, k=0)

# ---- ScatterND / ScatterElements ---------------------------------------------------------
COMBINE = {"none": lambda a, b: b, "add": lambda a, b: a + b, "mul": lambda a, b: a * b,
           "max": np.maximum, "min": np.minimum}


def scatter_nd_case(name, x, idx, upd, reduction=None, opset=13):
    c = Case(name, opset=opset)
    attrs = {} if reduction is None else {"reduction": reduction}
    c.node("ScatterND", ["x", "idx", "upd"], ["y"], **attrs)
    y = x.copy()
    f = COMBINE[reduction or "none"]
    for pos in np.ndindex(*idx.shape[:-1]):
        t = tuple(int(v) for v in idx[pos])
        y[t] = f(y[t], upd[pos])
    c.save({"x": x, "idx": idx, "upd": upd}, {"y": y})


def scatter_el_case(name, x, idx, upd, axis, reduction=None, opset=13):
    c = Case(name, opset=opset)
    attrs = {"axis": axis}
    if reduction is not None:
        attrs["reduction"] = reduction
    c.node("ScatterElements", ["x", "idx", "upd"], ["y"], **attrs)
    y = x.copy()
    f = COMBINE[reduction or "none"]
    a = axis % x.ndim
    for pos in np.ndindex(*idx.shape):
        t = list(pos)
        t[a] = int(idx[pos])
        y[tuple(t)] = f(y[tuple(t)], upd[pos])
    c.save({"x": x, "idx": idx, "upd": upd}, {"y": y})


scatter_nd_case("scatternd_rows", f32(4, 3), ints(2, 0).reshape(2, 1), f32(2, 3))
scatter_nd_case("scatternd_elements_negative", f32(3, 4), ints(0, 1, -1, -1, 1, 0).reshape(3, 2),
                f32(3))
scatter_nd_case("scatternd_3d_int64", i64(2, 3, 2), ints(1, 2, 0, 0).reshape(2, 2), i64(2, 2))
scatter_nd_case("scatternd_add_duplicates_opset16", f32(5), ints(1, 3, 1).reshape(3, 1), f32(3),
                reduction="add", opset=16)
scatter_nd_case("scatternd_max_opset18", i64(4), ints(0, 2, 0).reshape(3, 1), i64(3),
                reduction="max", opset=18)
scatter_el_case("scatterelements_axis0", f32(3, 3), ints(1, 0, 2, 0, 2, 1).reshape(2, 3),
                f32(2, 3), 0)
scatter_el_case("scatterelements_axis_neg", f32(2, 5), ints(3, -1, 0, 1).reshape(2, 2),
                f32(2, 2), -1)
scatter_el_case("scatterelements_mul_opset16", f32(2, 4), ints(1, 1, 3, 0).reshape(2, 2),
                f32(2, 2), 1, reduction="mul", opset=16)
scatter_el_case("scatterelements_bool", boolean(3, 2), ints(2, 0).reshape(1, 2), boolean(1, 2), 0)

# ---- Pad wrap (last, so that the cases above keep their random data) ---------------------
pad_case("pad_wrap_multi_period", f32(2, 3), [3, 5, 1, 7], mode="wrap", opset=19)
pad_case("pad_wrap_int64_3d", i64(2, 3, 2), [1, 0, 3, 0, 2, 1], mode="wrap", opset=19)


def pad_wrap_crop(name, x, pads):
    """wrap with negative pads: the crop comes first, then the kept part repeats
    (as ONNX Runtime does: negative pads become a slice of the input)"""
    r = x.ndim
    kept = x[tuple(slice(max(-pads[a], 0), x.shape[a] - max(-pads[a + r], 0)) for a in range(r))]
    y = np.pad(kept, [[max(pads[a], 0), max(pads[a + r], 0)] for a in range(r)], mode="wrap")
    c = Case(name, opset=19)
    c.initializer("pads", ints(*pads))
    c.node("Pad", ["x", "pads"], ["y"], mode="wrap")
    c.save({"x": x}, {"y": y})


pad_wrap_crop("pad_wrap_crop_then_wrap", f32(4, 5), [-1, 3, 2, -2])
c = Case("pad_wrap_cropped_away", opset=19).expect_error(7, "nothing of axis 0 of [3,2] is left to pad")
c.initializer("pads", ints(-3, 0, 1, 0))
c.node("Pad", ["x", "pads"], ["y"], mode="wrap")
c.save({"x": f32(3, 2)}, {"y": f32(1, 2)})

# ---- Pad on the cpu impl (own generator: the cases above keep their data) ------------------
# constant pads that leave trailing axes alone (merged into one run per row):
# NHWC with C = 1 padded on W (openWakeWord), an unpadded first axis, only the
# first axis padded, zero pads, and an int64 tensor
RP = rng(4401)


def rp32(*shape):
    return normal(RP, shape)


pad_case("pad_nhwc_c1_w", rp32(3, 7, 5, 1), [0, 0, 1, 0, 0, 0, 1, 0])
pad_case("pad_first_axis_only", rp32(2, 3, 17), [1, 0, 0, 2, 0, 0], value=0.5)
pad_case("pad_middle_axes", rp32(2, 3, 5, 9), [0, 1, 2, 0, 0, 2, 1, 0])
pad_case("pad_all_zero", rp32(3, 4, 5), [0, 0, 0, 0, 0, 0])
pad_case("pad_int64_inner", RP.integers(-9, 9, (2, 3, 4)).astype(np.int64), [0, 1, 0, 0, 1, 0],
         value=7)

# ---- Slice on the cpu impl (4-byte elements; own generator) -------------------------------
# YOLOX's Focus slices (step 2 on H, then on W, start 0 or 1), a step of 3
# on an odd last axis, a negative step, int32 data, and a plain row slice
RS = rng(4403)
xf = normal(RS, (1, 3, 9, 11))
slice_case("slice_focus_h", xf, [1], [I64_MAX], axes=[2], steps=[2])
slice_case("slice_focus_w", xf, [0], [I64_MAX], axes=[3], steps=[2])
slice_case("slice_focus_hw", xf, [1, 1], [I64_MAX, I64_MAX], axes=[2, 3], steps=[2, 2])
slice_case("slice_step3_odd", normal(RS, (2, 5, 17)), [1, 2], [4, 17], axes=[1, 2], steps=[1, 3])
slice_case("slice_negative_step_last", normal(RS, (3, 13)), [-2], [0], axes=[1], steps=[-2])
slice_case("slice_int32_step2", RS.integers(-50, 50, (4, 6, 7)).astype(np.int32), [0, 1],
           [4, 7], axes=[0, 2], steps=[3, 2])
slice_case("slice_rows_contiguous", normal(RS, (6, 5, 4)), [2], [5], axes=[0])
