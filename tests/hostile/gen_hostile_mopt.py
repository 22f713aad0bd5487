#!/usr/bin/env python3
"""gen_hostile_mopt.py — writes the hostile .mopt corpus (tests/hostile/mopt/)
that test_hostile_mopt.c feeds to libmopt (meson suite "hostile").

A small valid seed is made with the mopt tool from an ONNX model built here
(a Constant with an inline tensor, a Constant whose tensor goes to the
weight table, two initializers, symbolic dims; saved at opt_level 0 so the
Constants stay), then re-laid out with 4 KiB of slack before the weights so
that mutated headers fit. Each corrupted file breaks one thing; where the
header is changed, its checksum is recomputed (mh64, the same function as
lib/io/mopt_hash.c) so that the defect itself, not the checksum, is what
the reader must catch.

File names say what the runner expects:
  valid_*    must load;
  weights_*  must be rejected with verify_weights=1 and load without it;
  others     must be rejected either way (non-OK status and a message).

usage: gen_hostile_mopt.py MOPT_TOOL [OUT_DIR (default: tests/hostile/mopt)]
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

M64 = (1 << 64) - 1
P1, P2, P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
ALIGN = 64
END = b"\n%MOPT-END "


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def mh64(data):
    """mfmt_hash64 of lib/io/mopt_hash.c."""
    n = len(data)
    a, b, c, d = P1, P2, P3, P1 ^ P3
    blocks = n // 32
    w = struct.unpack_from("<%dQ" % (4 * blocks), data, 0)
    for k in range(blocks):
        a = rotl(a ^ (w[4 * k] * P2 & M64), 31) * P1 & M64
        b = rotl(b ^ (w[4 * k + 1] * P2 & M64), 31) * P1 & M64
        c = rotl(c ^ (w[4 * k + 2] * P2 & M64), 31) * P1 & M64
        d = rotl(d ^ (w[4 * k + 3] * P2 & M64), 31) * P1 & M64
    i = 32 * blocks
    h = (rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18) + n) & M64
    while n - i >= 8:
        (x,) = struct.unpack_from("<Q", data, i)
        h = (rotl(h ^ (x * P2 & M64), 27) * P1 + P3) & M64
        i += 8
    while i < n:
        h = rotl(h ^ (data[i] * P3 & M64), 11) * P1 & M64
        i += 1
    h ^= h >> 33
    h = h * P2 & M64
    h ^= h >> 29
    h = h * P3 & M64
    h ^= h >> 32
    return h


def align(x):
    return (x + ALIGN - 1) // ALIGN * ALIGN


def split(data):
    """(magic line, YAML text, data start, data bytes) of a .mopt file."""
    nl = data.index(b"\n") + 1
    t = data.index(END) + 1
    header_end = t + len(END) - 1 + 16 + 1
    start = align(header_end)
    return data[:nl], data[nl:t], start, data[start:]


def assemble(magic, yaml, data_start, data):
    """A file with the given header, checksum recomputed, data at data_start."""
    head = magic + yaml
    head += b"%%MOPT-END %016x\n" % mh64(head)
    assert len(head) <= data_start, "mutated header does not fit before the data"
    return head + b"\0" * (data_start - len(head)) + data


def seed_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((4, 8)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    small = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "small")
    big = numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), "big")
    nodes = [
        helper.make_node("Constant", [], ["c_small"], value=small, name="const_small"),
        helper.make_node("Constant", [], ["c_big"], value=big, name="const_big"),
        helper.make_node("Add", ["x", "c_small"], ["a"], name="add_small"),
        helper.make_node("MatMul", ["a", "W"], ["m"], name="matmul_w"),
        helper.make_node("Add", ["m", "b"], ["mb"], name="add_bias"),
        helper.make_node("MatMul", ["mb", "c_big"], ["m2"], name="matmul_big"),
        helper.make_node("Relu", ["m2"], ["y"], name="relu"),
    ]
    g = helper.make_graph(nodes, "seed", [x], [y], [w, b])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def main():
    tool = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "mopt")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".mopt"):
            os.remove(os.path.join(out, f))
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path, mopt_path = os.path.join(tmp, "seed.onnx"), os.path.join(tmp, "seed.mopt")
        seed_model(onnx_path)
        subprocess.run([tool, "optimize", onnx_path, "--opt-level", "0", "-o", mopt_path],
                       check=True, stdout=subprocess.DEVNULL)
        with open(mopt_path, "rb") as f:
            seed = f.read()

    # re-lay the seed out with 4 KiB of slack between header and data
    magic, yaml, start, data = split(seed)
    slack = 4096
    yaml = re.sub(rb"offset: (\d+)", lambda m: b"offset: %d" % (int(m.group(1)) + slack), yaml)
    base_start = start + slack
    base = assemble(magic, yaml, base_start, data)
    text = yaml.decode()
    offsets = [int(v) for v in re.findall(r"offset: (\d+)", text)]
    sizes = [int(v) for v in re.findall(r"size: (\d+)", text)]
    assert len(offsets) >= 3 and sizes[0] > 0 and sizes[1] > 0, "seed needs >= 2 real tensors"

    corpus = {}

    def put(name, blob):
        corpus[name] = blob

    def mutate(name, old, new, count=1, fix=True):
        t = text.replace(old, new, count) if isinstance(old, str) else old.sub(new, text, count)
        assert t != text, "mutation '%s' changed nothing" % name
        y = t.encode("utf-8", "surrogateescape")
        if fix:
            put(name, assemble(magic, y, base_start, data))
        else:  # keep the old checksum
            h = magic + y
            old_term = base[base.index(END) + 1:base.index(END) + 28]
            blob = h + old_term
            put(name, blob + b"\0" * (base_start - len(blob)) + data)

    def nth_table_line(k):
        return re.findall(r"^- \{name: .*offset: .*$", text, re.M)[k]

    put("valid_seed.mopt", seed)
    put("valid_slack.mopt", base)

    # truncations
    put("trunc_in_header.mopt", base[: len(magic) + len(yaml) // 2])
    t = base.index(END) + 1
    put("trunc_in_terminator.mopt", base[: t + 14])
    put("trunc_in_weights.mopt", base[: base_start + sizes[0] // 2])
    put("magic_only.mopt", b"%MOPT-1\n")
    put("empty_header.mopt", assemble(magic, b"", base_start, data))

    # magic, version, checksums, terminator
    put("bad_magic_line.mopt", b"%MOPT-x1\n" + base[len(magic):])
    put("wrong_version.mopt", assemble(b"%MOPT-2\n", yaml, base_start, data))
    put("huge_version.mopt", assemble(b"%MOPT-99999999999999999999\n", yaml, base_start, data))
    mutate("wrong_format_version_key.mopt", "format_version: 1", "format_version: 2")
    mutate("bad_header_checksum.mopt", "matmul_w", "matmul_v", fix=False)
    bad_term = bytearray(base)
    bad_term[t + 10:t + 26] = b"zz" * 8
    put("bad_terminator_hex.mopt", bytes(bad_term))
    flipped = bytearray(base)
    flipped[offsets[0] + 3] ^= 0x20
    put("weights_bad_checksum.mopt", bytes(flipped))
    mutate("bad_checksum_text.mopt", re.compile(r'checksum: "[0-9a-f]{16}"\}'),
           'checksum: "not-hex-at-all!!"}')
    mutate("unknown_checksum_algorithm.mopt", 'checksum_algorithm: "mh64"',
           'checksum_algorithm: "md5"')

    # YAML that is not what the reader wants
    put("yaml_garbage.mopt", assemble(magic, b"{{{ [: ] ::: ,,\n\t- ]]\n", base_start, data))
    put("yaml_not_mapping.mopt", assemble(magic, b"- 1\n- 2\n", base_start, data))
    put("yaml_alias.mopt", assemble(magic, b"a: &x [1, 2]\nb: *x\n" + yaml, base_start, data))
    put("yaml_deep_nesting.mopt",
        assemble(magic, b"deep: " + b"[" * 1500 + b"]" * 1500 + b"\n" + yaml, base_start,
                 data))
    put("yaml_two_documents.mopt", assemble(magic, yaml + b"---\nagain: 1\n", base_start, data))
    mutate("yaml_missing_graph.mopt", "\ngraph:", "\ngraff:")
    mutate("yaml_tensors_not_list.mopt", "\ntensors:\n", "\ntensors: 7\nunused:\n")

    # the tensor table
    first = nth_table_line(0)
    second = nth_table_line(1)

    def table(name, line, old, new):
        assert old in line, (name, old, line)
        mutate(name, line, line.replace(old, new, 1))

    total = len(base)
    table("offset_outside_file.mopt", first, "offset: %d" % offsets[0],
          "offset: %d" % align(total + 640))
    table("offset_huge.mopt", first, "offset: %d" % offsets[0], "offset: 9223372036854775744")
    table("offset_too_big_for_int64.mopt", first, "offset: %d" % offsets[0],
          "offset: 99999999999999999999999")
    table("offset_in_header.mopt", first, "offset: %d" % offsets[0], "offset: 0")
    table("offset_misaligned.mopt", first, "offset: %d" % offsets[0],
          "offset: %d" % (offsets[0] + 8))
    table("tensors_overlap.mopt", second, "offset: %d" % offsets[1], "offset: %d" % offsets[0])
    table("size_mismatch.mopt", first, "size: %d" % sizes[0], "size: %d" % (sizes[0] + 64))
    table("negative_size.mopt", first, "size: %d" % sizes[0], "size: -8")
    dims0 = re.search(r"dims: \[[^\]]*\]", first).group(0)
    table("huge_dims.mopt", first, dims0, "dims: [4611686018427387904, 4611686018427387904]")
    table("dims_overflow_size.mopt", first, dims0 + ", offset: %d, size: %d" % (offsets[0], sizes[0]),
          "dims: [4611686018427387904, 4], offset: %d, size: 0" % offsets[0])
    table("too_many_dims.mopt", first, dims0, "dims: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]")
    table("negative_dim.mopt", first, dims0, "dims: [-4, -8]")
    table("string_tensor.mopt", first, 'dtype: "f32"', 'dtype: "string"')

    # the graph
    mutate("value_index_out_of_range.mopt", re.compile(r"inputs: \[(\d+), (\d+)\]\n    outputs"),
           r"inputs: [\1, 99999]\n    outputs")
    mutate("negative_graph_output.mopt", re.compile(r"\n  outputs: \[(\d+)\]"),
           "\n  outputs: [-3]")
    mutate("missing_op_type.mopt", re.compile(r"\n    op_type: \"MatMul\""), "")
    mutate("unknown_dtype.mopt", 'dtype: "f32"', 'dtype: "f33"')
    mutate("tensor_ref_out_of_range.mopt", re.compile(r"tensor: 0\}"), "tensor: 999}")
    mutate("tensor_ref_on_activation.mopt", re.compile(r'(\{name: "a", [^}]*flags: \[\])\}'),
           r"\1, tensor: 0}")
    names = re.findall(r'- \{name: ("[^"]*"), dtype', text)
    mutate("duplicate_value.mopt", "- {name: %s, dtype" % names[1],
           "- {name: %s, dtype" % names[0])
    mutate("unknown_symbol.mopt", 'shape: ["batch", 4]', 'shape: ["nosuch", 4]')
    mutate("symbol_listed_twice.mopt", 'symbols: ["batch"]', 'symbols: ["batch", "batch"]')
    mutate("unknown_op.mopt", 'op_type: "Relu"', 'op_type: "NoSuchOp"')
    mutate("nul_in_name.mopt", 'name: "relu"', 'name: "re\\0lu"')
    mutate("unknown_attribute_type.mopt", 'type: "tensor"', 'type: "complex"')
    mutate("inline_tensor_short.mopt", re.compile(r'data: "([0-9a-f]{8})[0-9a-f]*"'),
           r'data: "\1"')
    mutate("initializer_type_mismatch.mopt",
           re.compile(r'(\{name: "W", )dtype: "f32"'), r'\1dtype: "i64"')
    mutate("input_also_weight.mopt", "flags: [input]", "flags: [input, initializer]")
    mutate("cycle.mopt", re.compile(r'inputs: \[(\d+)\]\n    outputs: \[(\d+)\]'),
           r"inputs: [\2]\n    outputs: [\2]")
    mutate("bad_opt_level.mopt", "opt_level: 0", "opt_level: 7")
    mutate("bad_precision.mopt", 'precision: "fp32"', 'precision: "fp128"')

    for name, blob in sorted(corpus.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(blob)
    print("wrote %d files to %s" % (len(corpus), out))


if __name__ == "__main__":
    main()
