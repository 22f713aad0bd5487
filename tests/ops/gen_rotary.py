"""gen_rotary.py — RotaryEmbedding cases the ONNX node tests miss: odd head
counts and lengths, a partial rotary_embedding_dim with interleaving on 3-D
input, batch-dependent position_ids, f16 and f64 through the float bridge,
and error paths (odd rotary dim, a cache of the wrong width, a position
outside the cache). Expected values come from the complex-number form of
RoPE below (x1 + i*x2 times cos + i*sin), checked against onnx.reference.

Run from the repo root: python3 tests/ops/gen_rotary.py
"""
import numpy as np
from onnx.reference.ops.op_rotary_embedding import rotary_embedding as onnx_rope

from opcase import Case, rng

ERR_INVALID_MODEL, ERR_SHAPE, ERR_INVALID_ARGUMENT = 5, 7, 1


def rope(x, cos, sin, pos=None, interleaved=False, rot=0, num_heads=0):
    """x [B, H, S, D] or [B, S, H*D]; returns the rotated copy (f64 math)."""
    x = x.astype(np.float64)
    four = x.ndim == 4
    if four:
        xh = x.transpose(0, 2, 1, 3)  # B S H D
    else:
        b, s, hd = x.shape
        xh = x.reshape(b, s, num_heads, hd // num_heads)
    d = xh.shape[-1]
    r = rot or d
    if pos is not None:
        cos, sin = cos[pos], sin[pos]
    rot_part = xh[..., :r]
    if interleaved:
        z = rot_part[..., 0::2] + 1j * rot_part[..., 1::2]
    else:
        z = rot_part[..., : r // 2] + 1j * rot_part[..., r // 2:]
    z = z * (cos[:, :, None, :] + 1j * sin[:, :, None, :])
    out = xh.copy()
    if interleaved:
        out[..., 0:r:2], out[..., 1:r:2] = z.real, z.imag
    else:
        out[..., : r // 2], out[..., r // 2: r] = z.real, z.imag
    return out.transpose(0, 2, 1, 3) if four else out.reshape(x.shape)


def case(name, g, x_shape, rot=0, interleaved=False, num_heads=0, with_pos=True, max_pos=11,
         dtype=np.float32, tol=None):
    x = g.standard_normal(x_shape).astype(dtype)
    four = len(x_shape) == 4
    b, s = x_shape[0], x_shape[2] if four else x_shape[1]
    d = x_shape[3] if four else x_shape[2] // num_heads
    half = (rot or d) // 2
    ang = g.uniform(-np.pi, np.pi, (max_pos, half) if with_pos else (b, s, half))
    cos, sin = np.cos(ang).astype(dtype), np.sin(ang).astype(dtype)
    pos = g.integers(0, max_pos, (b, s)).astype(np.int64) if with_pos else None
    y = rope(x, cos.astype(np.float64), sin.astype(np.float64), pos, interleaved, rot, num_heads)
    ref = onnx_rope(x.astype(np.float64), cos.astype(np.float64), sin.astype(np.float64), pos,
                    interleaved=interleaved, rotary_embedding_dim=rot, num_heads=num_heads)
    assert np.allclose(ref, y, atol=1e-12), name
    c = Case(name, opset=23)
    ins = {"X": x, "cos": cos, "sin": sin}
    if with_pos:
        ins["pos"] = pos
    c.node("RotaryEmbedding", list(ins), ["Y"], interleaved=int(interleaved) or None,
           rotary_embedding_dim=rot or None, num_heads=num_heads or None)
    if tol:
        c.tol(*tol)
    c.save(ins, {"Y": y.astype(dtype)})


def main():
    g = rng(23)
    case("rotary_4d_odd_heads", g, (2, 3, 5, 6))
    case("rotary_3d_partial_interleaved", g, (2, 7, 3 * 10), rot=6, interleaved=True, num_heads=3)
    case("rotary_3d_no_pos_partial", g, (3, 4, 2 * 8), rot=4, num_heads=2, with_pos=False)
    case("rotary_4d_interleaved_no_pos", g, (1, 2, 9, 4), interleaved=True, with_pos=False)
    case("rotary_f16", g, (1, 2, 3, 8), dtype=np.float16, tol=(1e-3, 2e-3))
    case("rotary_f64", g, (2, 1, 4, 6), rot=2, dtype=np.float64, tol=(1e-6, 1e-6))

    x = g.standard_normal((1, 2, 3, 8)).astype(np.float32)
    cos = np.ones((5, 4), np.float32)
    pos = np.zeros((1, 3), np.int64)
    c = Case("rotary_err_odd_dim", opset=23).expect_error(ERR_INVALID_MODEL, "must be even")
    c.node("RotaryEmbedding", ["X", "cos", "sin", "pos"], ["Y"], rotary_embedding_dim=3)
    c.save({"X": x, "cos": cos, "sin": cos, "pos": pos}, {"Y": x})
    c = Case("rotary_err_cache_width", opset=23).expect_error(ERR_SHAPE, "rotary_embedding_dim/2")
    c.node("RotaryEmbedding", ["X", "cos", "sin", "pos"], ["Y"])
    c.save({"X": x, "cos": cos[:, :3], "sin": cos[:, :3], "pos": pos}, {"Y": x})
    c = Case("rotary_err_position", opset=23).expect_error(ERR_INVALID_ARGUMENT,
                                                           "position_ids[2] = 5")
    c.node("RotaryEmbedding", ["X", "cos", "sin", "pos"], ["Y"])
    c.save({"X": x, "cos": cos, "sin": cos, "pos": np.array([[0, 4, 5]], np.int64)}, {"Y": x})
    c = Case("rotary_err_3d_no_heads", opset=23).expect_error(ERR_INVALID_MODEL, "needs num_heads")
    c.node("RotaryEmbedding", ["X", "cos", "sin", "pos"], ["Y"])
    x3 = x.reshape(1, 3, 16)
    c.save({"X": x3, "cos": cos, "sin": cos, "pos": pos}, {"Y": x3})


if __name__ == "__main__":
    main()
