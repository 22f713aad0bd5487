#!/usr/bin/env python3
"""gen_npy_files.py — writes the tiny reference .npy files that
tests/unit/test_npy.c reads, all produced by numpy itself (np.save /
np.lib.format.write_array), into tests/unit/data/npy/.

Element i (in C order) of every numeric file is the pattern
    k = (7 * i) % 11
    signed ints: k - 5      unsigned ints: k      floats: (k - 5) * 0.25
    bool: i % 3 == 0
so the C test can check values without knowing numpy. Run from anywhere:
    python3 tests/unit/gen_npy_files.py
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "npy")


def pattern(dtype, shape):
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.int64)
    k = (7 * i) % 11
    dt = np.dtype(dtype)
    if dt.kind == "b":
        v = (i % 3) == 0
    elif dt.kind == "f":
        v = (k - 5) * 0.25
    elif dt.kind == "i":
        v = k - 5
    else:
        v = k
    return v.astype(dt).reshape(shape)


# name -> (dtype, shape); file names say dtype and shape for the C test.
CASES = {
    "f32_2x3": ("<f4", (2, 3)),
    "f64_4": ("<f8", (4,)),
    "f16_2x2": ("<f2", (2, 2)),
    "i64_3x1x2": ("<i8", (3, 1, 2)),
    "i32_5": ("<i4", (5,)),
    "i16_2x3": ("<i2", (2, 3)),
    "i8_7": ("|i1", (7,)),
    "u8_2x2x2": ("|u1", (2, 2, 2)),
    "u16_3": ("<u2", (3,)),
    "u32_2x2": ("<u4", (2, 2)),
    "u64_3": ("<u8", (3,)),
    "bool_2x3": ("|b1", (2, 3)),
    "f32_scalar": ("<f4", ()),
    "i64_0x3": ("<i8", (0, 3)),
    "f32_1x2x3x2": ("<f4", (1, 2, 3, 2)),
    "u8_1x1x1x1x1x1x1x2": ("|u1", (1, 1, 1, 1, 1, 1, 1, 2)),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (dt, shape) in CASES.items():
        np.save(os.path.join(OUT, name + ".npy"), pattern(dt, shape))
    a = pattern("<f4", (2, 3))
    for ver in ((2, 0), (3, 0)):
        with open(os.path.join(OUT, "v%d_f32_2x3.npy" % ver[0]), "wb") as f:
            np.lib.format.write_array(f, a, version=ver)
    # Files libmopt must refuse with UNSUPPORTED.
    np.save(os.path.join(OUT, "bad_bigendian_f32_3.npy"), pattern(">f4", (3,)))
    np.save(os.path.join(OUT, "bad_fortran_f32_2x3.npy"), np.asfortranarray(a))
    np.save(os.path.join(OUT, "bad_complex_c8_2.npy"), np.array([1 + 2j, 3], dtype="<c8"))
    np.save(os.path.join(OUT, "bad_rank9_u8.npy"), np.zeros((1,) * 9, dtype=np.uint8))


if __name__ == "__main__":
    main()
