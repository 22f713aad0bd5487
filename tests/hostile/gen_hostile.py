#!/usr/bin/env python3
"""gen_hostile.py — writes the hostile-model corpus (tests/hostile/corpus/):
tiny ONNX files that are truncated, malformed, inconsistent or malicious, each
of which libmopt must refuse with a status and a message, without crashing.
Files are assembled from wire-format fields by hand so that every corruption
sits exactly where intended. tests/hostile/corpus/EXPECTED lists, per file,
the status the loader must return ("any" where it depends on operators).

Run from the repository root:  python3 tests/hostile/gen_hostile.py
"""
import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pbwire import f_bytes as fb, f_varint as fv, key, varint  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


# ---- ONNX messages -------------------------------------------------------------

FLOAT, INT64, BOOL = 1, 7, 9


def dim(v):
    """A TensorShapeProto.Dimension: dim_value or dim_param."""
    return fv(1, v) if isinstance(v, int) else fb(2, v)


def value_info(name, elem=FLOAT, dims=(3,)):
    shape = b"".join(fb(1, dim(d)) for d in dims)
    ttype = fv(1, elem) + fb(2, shape)
    return fb(1, name) + fb(2, fb(1, ttype))


def attr_int(name, v):
    return fb(1, name) + fv(20, 2) + fv(3, v)


def attr_graph(name, g):
    return fb(1, name) + fv(20, 5) + fb(6, g)


def node(op, ins, outs, name="", attrs=(), domain=None):
    out = b"".join(fb(1, i) for i in ins) + b"".join(fb(2, o) for o in outs)
    out += fb(3, name) + fb(4, op)
    if domain is not None:
        out += fb(7, domain)
    out += b"".join(fb(5, a) for a in attrs)
    return out


def tensor(name, dtype, dims, payload):
    return b"".join(fv(1, d) for d in dims) + fv(2, dtype) + fb(8, name) + payload


def raw_f32(vals):
    return fb(9, b"".join(struct.pack("<f", v) for v in vals))


def graph(nodes, inputs, outputs, inits=(), name="g", extra=b""):
    out = b"".join(fb(1, n) for n in nodes) + fb(2, name)
    out += b"".join(fb(5, t) for t in inits)
    out += b"".join(fb(11, v) for v in inputs) + b"".join(fb(12, v) for v in outputs)
    return out + extra


def model(g, opset=17, ir_version=8, raw_graph=None):
    out = fv(1, ir_version) + fb(2, "gen_hostile")
    out += raw_graph if raw_graph is not None else fb(7, g)
    if opset is not None:
        out += fb(8, fb(1, "") + fv(2, opset))
    return out


def cut(b, n):
    """b without its last n bytes: a message whose last field is truncated."""
    return b[:-n]


# the valid base: y = Relu(x) + bias, with an attribute-bearing node
X, Y = value_info("x"), value_info("y")
BIAS = tensor("bias", FLOAT, [3], raw_f32([0.5, -1.0, 2.0]))
RELU = node("Relu", ["x"], ["r"], "relu")
ADD = node("Add", ["r", "bias"], ["y"], "add")
BASE_G = graph([RELU, ADD], [X], [Y], [BIAS])

CASES = []  # (file name, bytes, expected status name or "any")


def case(name, data, status):
    CASES.append((name, data, status))


def build():
    base = model(BASE_G)
    # the base is a valid model, so each corruption below is the only fault
    import onnx
    onnx.checker.check_model(onnx.load_from_string(base), full_check=True)
    # -- truncation at every structural level (outer lengths kept consistent) --
    case("trunc_model.onnx", base[: len(base) // 2], "PARSE")
    case("trunc_graph.onnx", model(None, raw_graph=fb(7, cut(BASE_G, 3))), "PARSE")
    case("trunc_node.onnx", model(graph([cut(RELU, 2), ADD], [X], [Y], [BIAS])), "PARSE")
    att_node = node("Foo", ["x"], ["y"], "foo", [cut(attr_int("axis", 300), 1)])
    case("trunc_attribute.onnx", model(graph([att_node], [X], [Y])), "PARSE")
    case("trunc_tensor.onnx", model(graph([RELU, ADD], [X], [Y], [cut(BIAS, 5)])), "PARSE")
    case("trunc_value_info.onnx", model(graph([RELU, ADD], [cut(X, 4)], [Y], [BIAS])), "PARSE")
    vi_cut_shape = fb(1, "x") + fb(2, fb(1, fv(1, FLOAT) + fb(2, cut(fb(1, dim(3)), 1))))
    case("trunc_shape.onnx", model(graph([RELU, ADD], [vi_cut_shape], [Y], [BIAS])), "PARSE")
    case("trunc_opset.onnx", base[:-1], "PARSE")
    case("trunc_in_tag.onnx", base + b"\x80", "PARSE")
    # -- bad varints --
    case("varint_overlong.onnx", key(1, 0) + b"\x80" * 10 + b"\x01" + base[2:], "PARSE")
    case("varint_overflow.onnx", key(1, 0) + b"\xff" * 9 + b"\x7f" + base[2:], "PARSE")
    case("varint_len_overflow.onnx", key(7, 2) + b"\xff" * 9 + b"\x7f" + BASE_G, "PARSE")
    # -- lengths past the end / huge --
    case("len_past_end.onnx", fv(1, 8) + key(7, 2) + varint(1000) + BASE_G, "PARSE")
    case("len_huge.onnx", fv(1, 8) + key(7, 2) + varint(1 << 62) + BASE_G, "PARSE")
    huge_packed = tensor("bias", INT64, [3], key(7, 2) + varint(0xFFFFFFFF) + b"\x01\x02")
    case("huge_declared_count.onnx", model(graph([RELU, ADD], [X], [Y], [huge_packed])), "PARSE")
    # -- wire types protobuf 3 never uses --
    case("wire_group.onnx", base + key(9, 3) + key(9, 4), "PARSE")
    case("wire_type_7.onnx", key(3, 7) + base, "PARSE")
    case("field_number_zero.onnx", b"\x02\x00" + base, "PARSE")
    # -- bad dims and data --
    neg = tensor("bias", FLOAT, [-1], raw_f32([1.0]))
    case("dims_negative.onnx", model(graph([RELU, ADD], [X], [Y], [neg])), "INVALID_MODEL")
    huge = tensor("bias", FLOAT, [1 << 31] * 4, raw_f32([1.0]))
    case("dims_huge.onnx", model(graph([RELU, ADD], [X], [Y], [huge])), "LIMIT")
    big = tensor("bias", FLOAT, [1 << 40, 1 << 20], raw_f32([1.0]))
    case("dims_bytes_overflow.onnx", model(graph([RELU, ADD], [X], [Y], [big])), "LIMIT")
    r9 = tensor("bias", FLOAT, [1] * 9, raw_f32([1.0]))
    case("dims_rank9.onnx", model(graph([RELU, ADD], [X], [Y], [r9])), "LIMIT")
    short = tensor("bias", FLOAT, [2, 3], raw_f32([1.0] * 5))
    case("init_raw_size_mismatch.onnx", model(graph([RELU, ADD], [X], [Y], [short])),
         "INVALID_MODEL")
    typed = tensor("bias", FLOAT, [4], fb(4, struct.pack("<3f", 1, 2, 3)))
    case("init_typed_count_mismatch.onnx", model(graph([RELU, ADD], [X], [Y], [typed])),
         "INVALID_MODEL")
    # dims claiming 256 GB with one float of data: refused before any allocation
    hugetyped = tensor("bias", FLOAT, [1 << 30, 64], fb(4, struct.pack("<f", 1.0)))
    case("init_typed_huge_dims.onnx", model(graph([RELU, ADD], [X], [Y], [hugetyped])),
         "INVALID_MODEL")
    nodata = tensor("bias", FLOAT, [3], b"")
    case("init_no_data.onnx", model(graph([RELU, ADD], [X], [Y], [nodata])), "INVALID_MODEL")
    badtype = tensor("bias", 99, [3], raw_f32([1, 2, 3]))
    case("init_unknown_dtype.onnx", model(graph([RELU, ADD], [X], [Y], [badtype])),
         "UNSUPPORTED")
    case("init_duplicate.onnx", model(graph([RELU, ADD], [X], [Y], [BIAS, BIAS])),
         "INVALID_MODEL")
    noname = tensor("", FLOAT, [3], raw_f32([1, 2, 3]))
    case("init_no_name.onnx", model(graph([RELU, ADD], [X], [Y], [BIAS, noname])),
         "INVALID_MODEL")
    i8 = tensor("bias", 3, [1], fb(5, varint(300)))
    case("init_int8_out_of_range.onnx", model(graph([RELU, ADD], [X], [Y], [i8])),
         "INVALID_MODEL")
    sparse = fb(15, fb(1, BIAS) + fb(2, tensor("idx", INT64, [1], fb(9, struct.pack("<q", 0)))))
    case("sparse_initializer.onnx", model(graph([RELU, ADD], [X], [Y], [BIAS], extra=sparse)),
         "UNSUPPORTED")
    # -- graph structure --
    ghost = node("Add", ["r", "ghost"], ["y"], "add_ghost")
    case("input_never_produced.onnx", model(graph([RELU, ghost], [X], [Y])), "INVALID_MODEL")
    c1 = node("Add", ["x", "b"], ["a"], "cyc1")
    c2 = node("Relu", ["a"], ["b"], "cyc2")
    c3 = node("Relu", ["a"], ["y"], "out")
    case("cycle.onnx", model(graph([c1, c2, c3], [X], [Y])), "INVALID_MODEL")
    d1 = node("Relu", ["x"], ["y"], "first")
    d2 = node("Relu", ["x"], ["y"], "second")
    case("double_producer.onnx", model(graph([d1, d2], [X], [Y])), "INVALID_MODEL")
    case("output_never_produced.onnx", model(graph([RELU], [X], [Y])), "INVALID_MODEL")
    case("unknown_op.onnx", model(graph([node("NoSuchOp", ["x"], ["y"], "mystery")], [X], [Y])),
         "UNSUPPORTED")
    xi = value_info("xi", INT64)
    mixed = node("Add", ["x", "xi"], ["y"], "add_f32_i64")
    case("type_mismatch_add.onnx", model(graph([mixed], [X, xi], [Y])), "TYPE")
    case("no_graph.onnx", fv(1, 8) + fb(8, fb(1, "") + fv(2, 17)), "INVALID_MODEL")
    case("no_opset.onnx", model(BASE_G, opset=None), "INVALID_MODEL")
    case("two_graphs.onnx", fv(1, 8) + fb(7, BASE_G) + fb(7, BASE_G) + fb(8, fv(2, 17)),
         "INVALID_MODEL")
    case("empty.onnx", b"", "INVALID_MODEL")
    case("not_onnx.onnx", b"This is not an ONNX model, just text.\n", "PARSE")
    case("node_no_op_type.onnx", model(graph([fb(1, "x") + fb(2, "y")], [X], [Y])),
         "INVALID_MODEL")
    case("name_with_nul.onnx", model(graph([node("Relu", ["x"], ["y"], "bad\0name")], [X], [Y])),
         "PARSE")
    case("input_listed_twice.onnx", model(graph([node("Relu", ["x"], ["y"])], [X, X], [Y])),
         "INVALID_MODEL")
    case("input_type_vs_initializer.onnx",
         model(graph([RELU, ADD], [X, value_info("bias", INT64)], [Y], [BIAS])), "TYPE")
    # -- attributes --
    case("attr_no_name.onnx",
         model(graph([node("Relu", ["x"], ["y"], "n", [fv(20, 2) + fv(3, 1)])], [X], [Y])),
         "INVALID_MODEL")
    twice = node("Relu", ["x"], ["y"], "n", [attr_int("axis", 1), attr_int("axis", 2)])
    case("attr_duplicate.onnx", model(graph([twice], [X], [Y])), "INVALID_MODEL")
    untyped = node("Relu", ["x"], ["y"], "n", [fb(1, "k")])
    case("attr_no_type_no_value.onnx", model(graph([untyped], [X], [Y])), "INVALID_MODEL")
    badt = node("Relu", ["x"], ["y"], "n", [fb(1, "k") + fv(20, 77) + fv(3, 1)])
    case("attr_unknown_type.onnx", model(graph([badt], [X], [Y])), "INVALID_MODEL")
    ref = node("Relu", ["x"], ["y"], "n", [fb(1, "k") + fv(20, 2) + fb(21, "outer")])
    case("attr_ref_attr_name.onnx", model(graph([ref], [X], [Y])), "UNSUPPORTED")
    wrongwire = node("Relu", ["x"], ["y"], "n", [fb(1, "alpha") + fv(20, 1) + fv(2, 5)])
    case("attr_float_wrong_wire.onnx", model(graph([wrongwire], [X], [Y])), "PARSE")
    # -- subgraphs nested too deep (If inside If, 40 levels) --
    cond = value_info("cond", BOOL, ())
    leaf = graph([node("Relu", ["x"], ["y"], "leaf")], [], [Y], name="leaf")
    inner = leaf
    for level in range(40):
        n = node("If", ["cond"], ["y"], f"if{level}",
                 [attr_graph("then_branch", inner), attr_graph("else_branch", leaf)])
        inner = graph([n], [], [Y], name=f"level{level}")
    case("deep_subgraph_nesting.onnx", model(inner), "LIMIT")
    # a truncated subgraph
    sub = graph([RELU], [], [value_info("r")], name="sub")
    bad_if = node("If", ["cond"], ["y"], "if", [attr_graph("then_branch", cut(sub, 2))])
    case("trunc_subgraph.onnx", model(graph([bad_if], [X, cond], [Y])), "PARSE")
    # -- external data --
    def ext(location, offset=0, length=12):
        entries = [("location", location), ("offset", str(offset)), ("length", str(length))]
        payload = b"".join(fb(13, fb(1, k) + fb(2, v)) for k, v in entries) + fv(14, 1)
        return tensor("bias", FLOAT, [3], payload)

    for fname, loc, st in (("ext_dotdot.onnx", "../gen_hostile.py", "INVALID_MODEL"),
                           ("ext_dotdot_inner.onnx", "ext/../../gen_hostile.py", "INVALID_MODEL"),
                           ("ext_absolute.onnx", "/etc/passwd", "INVALID_MODEL"),
                           ("ext_missing_file.onnx", "ext/nothere.bin", "IO"),
                           ("ext_empty_location.onnx", "", "INVALID_MODEL")):
        case(fname, model(graph([RELU, ADD], [X], [Y], [ext(loc)])), st)
    case("ext_offset_past_end.onnx",
         model(graph([RELU, ADD], [X], [Y], [ext("ext/w.bin", offset=8)])), "INVALID_MODEL")
    big_ext = b"".join(fb(13, fb(1, k) + fb(2, v)) for k, v in
                       (("location", "ext/w.bin"), ("offset", "0"))) + fv(14, 1)
    case("ext_huge_dims.onnx",
         model(graph([RELU, ADD], [X], [Y], [tensor("bias", FLOAT, [1 << 30, 64], big_ext)])),
         "INVALID_MODEL")
    case("ext_length_mismatch.onnx",
         model(graph([RELU, ADD], [X], [Y], [ext("ext/w.bin", length=8)])), "INVALID_MODEL")
    case("ext_bad_offset.onnx",
         model(graph([RELU, ADD], [X], [Y], [ext("ext/w.bin", offset="-4")])), "INVALID_MODEL")
    case("ext_huge_offset.onnx",
         model(graph([RELU, ADD], [X], [Y], [ext("ext/w.bin", offset="99999999999999999999")])),
         "INVALID_MODEL")


def fuzz_findings():
    """Files the fuzzers found (fuzz_*.onnx, added by hand with their line in
    EXPECTED): kept across regenerations, with their expected status."""
    kept = []
    try:
        with open(os.path.join(OUT, "EXPECTED")) as f:
            lines = f.read().splitlines()
    except OSError:
        return kept
    for line in lines:
        parts = line.split()
        if len(parts) == 2 and parts[0].startswith("fuzz_"):
            with open(os.path.join(OUT, parts[0]), "rb") as f:
                kept.append((parts[0], f.read(), parts[1]))
    return kept


def main():
    kept = fuzz_findings()
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(os.path.join(OUT, "ext"))
    # 16 bytes: enough for one 12-byte tensor at offset 0, not at offset 8
    with open(os.path.join(OUT, "ext", "w.bin"), "wb") as f:
        f.write(struct.pack("<4f", 1, 2, 3, 4))
    build()
    names = set()
    with open(os.path.join(OUT, "EXPECTED"), "w") as manifest:
        manifest.write("# file expected-status (from gen_hostile.py; 'any' = any failure)\n")
        for name, data, status in CASES + kept:
            assert name not in names, name
            names.add(name)
            with open(os.path.join(OUT, name), "wb") as f:
                f.write(data)
            manifest.write(f"{name} {status}\n")
    print(f"wrote {len(CASES)} files into {OUT}, kept {len(kept)} fuzzer findings")


if __name__ == "__main__":
    main()
