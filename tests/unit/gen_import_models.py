#!/usr/bin/env python3
"""gen_import_models.py — writes the tiny ONNX files that test_onnx_import.c
checks the importer against, into tests/unit/data/. Models are built with the
`onnx` package; encodings the package never writes (unpacked typed data,
packed dims, attributes without a `type`) are assembled by hand from wire-format
fields, and every file is read back with onnx to prove it decodes to the
values the C test expects.

Run from the repository root:  python3 tests/unit/gen_import_models.py
"""
import os
import shutil
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pbwire import f_bytes, f_fixed32, f_fixed64, f_varint, packed_varints  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def model_bytes(graph_bytes, opsets=(("", 17),), ir_version=8, producer="gen_import_models"):
    out = f_varint(1, ir_version) + f_bytes(2, producer) + f_bytes(7, graph_bytes)
    for dom, ver in opsets:
        out += f_bytes(8, f_bytes(1, dom) + f_varint(2, ver))
    return out


def write(name, data):
    path = os.path.join(OUT, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def save(model, name):
    return write(name, model.SerializeToString())


# ---- import_attrs.onnx: every attribute type, incl. subgraphs ------------------

def subgraph(tag):
    return helper.make_graph(
        [helper.make_node("Identity", [f"{tag}_in"], [f"{tag}_out"], name=f"{tag}_id")],
        f"{tag}_graph",
        [helper.make_tensor_value_info(f"{tag}_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(f"{tag}_out", TensorProto.FLOAT, [1])],
    )


def gen_attrs():
    tp = helper.make_tensor_type_proto(TensorProto.FLOAT, [3])
    every = helper.make_node(
        "AllAttrs", ["x"], ["mid"], name="every_attr", domain="test.domain",
        alpha=0.5, count=-7, mode="hello",
        value=numpy_helper.from_array(np.array([3, -4], dtype=np.int64), "value_t"),
        body=subgraph("body"),
        scales=[1.5, -2.25], axes=[0, -1, 9000000000], names=["a", "bc"],
        tlist=[numpy_helper.from_array(np.array([2.0], dtype=np.float32), "t0"),
               numpy_helper.from_array(np.array([1, 2], dtype=np.int32), "t1")],
        glist=[subgraph("g0"), subgraph("g1")],
    )
    every.attribute.append(helper.make_attribute("tp", tp))
    # old-style attributes: no `type` field, the value field tells the type
    old = helper.make_node("OldStyle", ["mid"], ["y"], name="old_style", domain="test.domain",
                           k=[1, 2], eps=0.25)
    for a in old.attribute:
        a.ClearField("type")
    # a nested subgraph two levels deep: If inside If's branch
    inner = helper.make_graph(
        [helper.make_node("If", ["cond"], ["deep_out"], name="inner_if",
                          then_branch=subgraph("then2"), else_branch=subgraph("else2"))],
        "outer_branch", [], [helper.make_tensor_value_info("deep_out", TensorProto.FLOAT, [1])])
    nest = helper.make_node("If", ["cond"], ["nested_out"], name="outer_if",
                            then_branch=inner, else_branch=subgraph("else1"))
    graph = helper.make_graph(
        [every, old, nest], "attrs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("nested_out", TensorProto.FLOAT, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("test.domain", 1)])
    model.ir_version = 8
    path = save(model, "import_attrs.onnx")
    m = onnx.load(path)
    a = {x.name: x for x in m.graph.node[0].attribute}
    assert abs(a["alpha"].f - 0.5) < 1e-9 and list(a["axes"].ints) == [0, -1, 9000000000]
    assert m.graph.node[1].attribute[0].type == 0


# ---- import_inits.onnx: initializers in every encoding --------------------------

def tensor_bytes(name, dtype, dims, payload, packed_dims=False):
    out = f_bytes(8, name) + f_varint(2, dtype)
    if packed_dims:
        out = packed_varints(1, dims) + out
    else:
        out = b"".join(f_varint(1, d) for d in dims) + out
    return out + payload


def gen_inits():
    f32 = lambda vals: b"".join(struct.pack("<f", v) for v in vals)
    inits = [
        tensor_bytes("w_raw", 1, [2, 3], f_bytes(9, (np.arange(6, dtype=np.float32) * 0.5).tobytes())),
        tensor_bytes("w_float_packed", 1, [3], f_bytes(4, f32([1.0, -2.0, 3.5])), packed_dims=True),
        tensor_bytes("w_float_unpacked", 1, [2],
                     f_fixed32(4, struct.pack("<f", 4.25)) + f_fixed32(4, struct.pack("<f", -1.0))),
        tensor_bytes("w_i64_packed", 7, [3], packed_varints(7, [-1, 0, 1 << 40])),
        tensor_bytes("w_i64_unpacked", 7, [2], f_varint(7, -9) + f_varint(7, 123456789012)),
        tensor_bytes("w_i32_unpacked", 6, [2], f_varint(5, -5) + f_varint(5, 7)),
        tensor_bytes("w_i8", 3, [3], packed_varints(5, [-128, 0, 127])),
        tensor_bytes("w_u8", 2, [2], packed_varints(5, [0, 255])),
        tensor_bytes("w_bool", 9, [2], packed_varints(5, [1, 0])),
        tensor_bytes("w_f16", 10, [2],
                     packed_varints(5, list(np.array([1.0, -2.0], np.float16).view(np.uint16)))),
        tensor_bytes("w_bf16_raw", 16, [2], f_bytes(9, struct.pack("<HH", 0x3F80, 0xC000))),
        tensor_bytes("w_f64", 11, [2], f_bytes(10, struct.pack("<dd", 1.5, -0.25))),
        tensor_bytes("w_f64_unpacked", 11, [1], f_fixed64(10, struct.pack("<d", 6.5))),
        tensor_bytes("w_u64", 13, [1], packed_varints(11, [(1 << 63) + 1])),
        tensor_bytes("w_u32", 12, [1], packed_varints(11, [4000000000])),
        tensor_bytes("w_scalar", 1, [], f_bytes(9, struct.pack("<f", 42.0))),
        tensor_bytes("w_empty", 1, [0, 3], b""),
        tensor_bytes("w_raw_i64", 7, [2], f_bytes(9, struct.pack("<qq", -3, 5))),
    ]
    g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"], name="id")], "inits",
        # w_raw is listed as an input too: an initializer with a default value
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("w_raw", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    gbytes = g.SerializeToString() + b"".join(f_bytes(5, t) for t in inits)
    path = write("import_inits.onnx", model_bytes(gbytes))
    m = onnx.load(path)
    arr = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    assert np.array_equal(arr["w_float_unpacked"], np.array([4.25, -1.0], np.float32))
    assert np.array_equal(arr["w_i64_packed"], np.array([-1, 0, 1 << 40]))
    assert np.array_equal(arr["w_i32_unpacked"], np.array([-5, 7]))
    assert np.array_equal(arr["w_i8"], np.array([-128, 0, 127], np.int8))
    assert np.array_equal(arr["w_f16"], np.array([1.0, -2.0], np.float16))
    assert np.array_equal(arr["w_f64_unpacked"], np.array([6.5]))
    assert arr["w_u64"][0] == (1 << 63) + 1
    assert arr["w_empty"].shape == (0, 3) and arr["w_scalar"].shape == ()
    assert list(m.graph.initializer[1].dims) == [3]


# ---- import_shapes.onnx: symbolic / unknown dims, omitted inputs -------------

def gen_shapes():
    nodes = [
        helper.make_node("Slice", ["x", "", "starts", ""], ["mid", ""], name="omit",
                         domain="test.domain"),
        helper.make_node("Relu", ["mid"], ["y"], name="relu"),
    ]
    g = helper.make_graph(
        nodes, "shapes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 4])],
        [numpy_helper.from_array(np.array([1], np.int64), "starts")],
        value_info=[helper.make_tensor_value_info("mid", TensorProto.FLOAT, ["batch", None, 4]),
                    helper.make_tensor_value_info("noshape", TensorProto.FLOAT, None)])
    g.value_info[0].type.tensor_type.shape.dim[1].Clear()  # neither value nor param
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    path = save(model, "import_shapes.onnx")
    m = onnx.load(path)
    assert m.graph.value_info[0].type.tensor_type.shape.dim[1].WhichOneof("value") is None
    assert not m.graph.value_info[1].type.tensor_type.HasField("shape")


# ---- a small valid model (loads through the public API; hostile prefixes) ----

def gen_relu():
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Add", ["r", "bias"], ["y"], name="add")], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        [numpy_helper.from_array(np.array([0.5, -1.0, 2.0], np.float32), "bias")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="gen_import_models")
    m.ir_version = 8
    onnx.checker.check_model(m)
    save(m, "relu_add.onnx")
    g2 = helper.make_graph(
        [helper.make_node("Frobnicate", ["x"], ["y"], name="frob", domain="test.domain")], "custom",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    save(helper.make_model(g2, opset_imports=[helper.make_opsetid("", 17),
                                              helper.make_opsetid("test.domain", 1)]),
         "custom_op.onnx")


# ---- external data -----------------------------------------------------------

def ext_model(name, location, offset=None, length=None, dims=(4,)):
    t = TensorProto()
    t.name = "w_ext"
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w_ext"], ["y"], name="add")], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(dims))], [t])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def gen_external():
    for d in ("ext", "ext_escape", "ext_abs", "ext_link"):
        shutil.rmtree(os.path.join(OUT, d), ignore_errors=True)
    blob = b"JUNKJUNKJUNKJUNK" + np.array([1.0, 2.0, -3.0, 0.125], np.float32).tobytes() + \
        np.array([7.0, 8.0], np.float32).tobytes()
    write("ext/weights/w.bin", blob)
    save(ext_model("ext", "weights/w.bin", 16, 16), "ext/model.onnx")
    # no length: the tensor's size from offset 32
    save(ext_model("ext_nolen", "weights/w.bin", 32, None, dims=(2,)), "ext/model_nolen.onnx")
    # past the end of the file
    save(ext_model("ext_past", "weights/w.bin", 40, 16), "ext/model_past_end.onnx")
    # escaping the folder
    save(ext_model("ext_escape", "../ext/weights/w.bin", 16, 16), "ext_escape/model.onnx")
    save(ext_model("ext_abs", "/etc/passwd", 0, 16),
         "ext_abs/model.onnx")
    # a symbolic link that points outside the folder
    os.makedirs(os.path.join(OUT, "ext_link"), exist_ok=True)
    os.symlink("../ext/weights/w.bin", os.path.join(OUT, "ext_link/w.bin"))
    save(ext_model("ext_link", "w.bin", 16, 16), "ext_link/model.onnx")
    m = onnx.load(os.path.join(OUT, "ext/model.onnx"))  # onnx reads the data back
    assert np.array_equal(numpy_helper.to_array(m.graph.initializer[0]),
                          np.array([1.0, 2.0, -3.0, 0.125], np.float32))


def gen_tensor_pb():
    t = numpy_helper.from_array(np.array([[1.5, -2.0], [0.0, 8.0]], np.float32), "tensor_a")
    write("tensor_f32.pb", t.SerializeToString())
    t = numpy_helper.from_array(np.array([5, -6, 7], np.int64), "tensor_b")
    write("tensor_i64.pb", t.SerializeToString())


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    gen_attrs()
    gen_inits()
    gen_shapes()
    gen_relu()
    gen_external()
    gen_tensor_pb()
    print("wrote", OUT)
