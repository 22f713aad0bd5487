"""pbwire.py — a minimal protobuf wire-format encoder shared by the test
generators that assemble ONNX files by hand (tests/hostile/gen_hostile.py,
tests/unit/gen_import_models.py): varints, field keys and the length-
delimited, fixed32/64 and packed-varint fields. Import it after putting the
tests/ folder on sys.path.
"""


def varint(v):
    """Base-128 varint; negative values as their 64-bit two's complement."""
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(num, wire):
    return varint((num << 3) | wire)


def f_varint(num, v):
    return key(num, 0) + varint(v)


def f_bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return key(num, 2) + varint(len(b)) + b


def f_fixed32(num, raw4):
    return key(num, 5) + raw4


def f_fixed64(num, raw8):
    return key(num, 1) + raw8


def packed_varints(num, values):
    return f_bytes(num, b"".join(varint(v) for v in values))
