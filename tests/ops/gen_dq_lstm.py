"""gen_dq_lstm.py — cases of com.microsoft DynamicQuantizeLSTM (ONNX
Runtime's dynamically quantized LSTM) under tests/ops/data/recurrent/:
int8 and uint8 weights, per-direction and per-column scales and zero
points, every direction, bias, initial states, peepholes, clip,
input_forget, omitted outputs, and error paths.

Expected outputs come from the numpy model of the op below (uint8 dynamic
quantization of X and of H(t-1), the exact integer products, ONNX Runtime's
rational Sigmoid/Tanh with fused multiply-adds emulated in float64), and the
generator asserts that ONNX Runtime agrees with it.

Run from the repo root: python3 tests/ops/gen_dq_lstm.py
"""
import numpy as np
import onnxruntime as ort
from onnx import helper

from opcase import Case, rng

f32 = np.float32
SUB = "recurrent/"
ERR_INVALID_MODEL, ERR_UNSUPPORTED = 5, 6


def fma(a, b, c):
    return (np.float64(a) * np.float64(b) + np.float64(c)).astype(f32)


def rational(v, lim, num, den, odd_only=False):
    v = np.clip(v, f32(-lim), f32(lim)).astype(f32)
    v2 = (v * v).astype(f32)
    p = fma(v2, f32(num[0]), f32(num[1]))
    for c in num[2:]:
        p = fma(p, v2, f32(c))
    p = (p * v).astype(f32)
    q = fma(v2, f32(den[0]), f32(den[1]))
    for c in den[2:]:
        q = fma(q, v2, f32(c))
    return (p / q).astype(f32)


def sigmoid(v):  # Eigen's f32 logistic (what ORT's MLAS computes)
    r = rational(v, 18.0, [4.37031012579801e-11, 1.15627324459942e-07, 6.08574864600143e-05,
                           8.51377133304701e-03, 2.48287947061529e-01],
                 [6.10247389755681e-13, 5.76102136993427e-09, 6.29106785017040e-06,
                  1.70198817374094e-03, 1.16817656904453e-01, 9.93151921023180e-01])
    return (r + f32(0.5)).astype(f32)


def tanh(v):  # Eigen's f32 tanh
    return rational(v, 9.0, [-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                             5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                             4.89352455891786e-03],
                    [1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                     4.89352518554385e-03])


def quantize(x):
    lo, hi = min(f32(x.min()), f32(0)), max(f32(x.max()), f32(0))
    s = f32(1) if hi == lo else f32((hi - lo) / f32(255))
    z = np.rint(np.clip(f32(0) - f32(lo / s), 0, 255)).astype(np.int64)
    q = np.clip(np.rint((x / s).astype(f32)) + z, 0, 255).astype(np.int64)
    return q, s, z


def proj(a, w, ws, wz):
    """(float) integer product of dynamically quantized a [m, K] and w [K, cols]."""
    q, s, z = quantize(a)
    acc = (q - z) @ (w.astype(np.int64) - wz.astype(np.int64))
    return (acc.astype(f32) * (f32(s) * ws).astype(f32)).astype(f32)


def dq_lstm(X, W, R, ws, wz, rs, rz, B=None, h0=None, c0=None, P=None, direction="forward",
            clip=None, input_forget=False):
    T, N, _ = X.shape
    dirs = W.shape[0]
    H = R.shape[1]
    Y = np.zeros((T, dirs, N, H), f32)
    Yh, Yc = np.zeros((dirs, N, H), f32), np.zeros((dirs, N, H), f32)
    cl = (lambda v: v) if clip is None else (lambda v: np.clip(v, f32(-clip), f32(clip)))
    for d in range(dirs):
        rev = direction == "reverse" or d == 1
        col = lambda a: np.broadcast_to(a[d], (4 * H,)) if a.ndim == 2 else np.full(4 * H, a[d])
        xg = proj(X.reshape(T * N, -1), W[d], col(ws), col(wz)).reshape(T, N, 4 * H)
        h = np.zeros((N, H), f32) if h0 is None else h0[d].copy()
        c = np.zeros((N, H), f32) if c0 is None else c0[d].copy()
        for s in range(T):
            t = T - 1 - s if rev else s
            g = (xg[t] + proj(h, R[d], col(rs), col(rz))).astype(f32)
            if B is not None:
                g = (g + (B[d, :4 * H] + B[d, 4 * H:]).astype(f32)).astype(f32)
            gi, go, gf, gc = g[:, :H], g[:, H:2 * H], g[:, 2 * H:3 * H], g[:, 3 * H:]
            p = (lambda k: P[d, k * H:(k + 1) * H]) if P is not None else (lambda k: f32(0))
            i = sigmoid(cl((gi + (p(0) * c).astype(f32)).astype(f32)))
            f = (f32(1) - i).astype(f32) if input_forget else \
                sigmoid(cl((gf + (p(2) * c).astype(f32)).astype(f32)))
            cc = tanh(cl(gc))
            c = ((c * f).astype(f32) + (i * cc).astype(f32)).astype(f32)
            o = sigmoid(cl((go + (p(1) * c).astype(f32)).astype(f32)))
            h = (o * tanh(c)).astype(f32)
            Y[t, d] = h
        Yh[d], Yc[d] = h, c
    return Y, Yh, Yc


def qweights(g, shape, signed, per_col, H4):
    dirs = shape[0]
    dt = np.int8 if signed else np.uint8
    lo, hi = (-128, 128) if signed else (0, 256)
    w = g.integers(lo, hi, shape).astype(dt)
    sshape = (dirs, H4) if per_col else (dirs,)
    s = g.uniform(0.002, 0.02, sshape).astype(f32)
    z = g.integers(-10, 10, dirs) if signed else g.integers(100, 156, dirs)
    # ORT takes one zero point per direction, and 0 with per-column scales
    z = np.broadcast_to(z.reshape((dirs,) + (1,) * (len(sshape) - 1)), sshape).astype(dt)
    if per_col:
        z = np.zeros(sshape, dt)
    return w, s, z


def case(name, g, T=6, N=3, I=5, H=4, direction="forward", signed=True, per_col=False, bias=True,
         states=False, peep=False, clip=None, input_forget=False, outputs=("Y", "Y_h", "Y_c")):
    dirs = 2 if direction == "bidirectional" else 1
    X = g.standard_normal((T, N, I)).astype(f32)
    W, ws, wz = qweights(g, (dirs, I, 4 * H), signed, per_col, 4 * H)
    R, rs, rz = qweights(g, (dirs, H, 4 * H), signed, per_col, 4 * H)
    B = (g.standard_normal((dirs, 8 * H)) * 0.3).astype(f32) if bias else None
    h0 = (g.standard_normal((dirs, N, H)) * 0.5).astype(f32) if states else None
    c0 = (g.standard_normal((dirs, N, H)) * 0.5).astype(f32) if states else None
    P = (g.standard_normal((dirs, 3 * H)) * 0.3).astype(f32) if peep else None
    Y, Yh, Yc = dq_lstm(X, W, R, ws, wz, rs, rz, B, h0, c0, P, direction, clip, input_forget)
    ins = {"X": X, "W": W, "R": R, "B": B, "h0": h0, "c0": c0, "P": P, "ws": ws, "wz": wz,
           "rs": rs, "rz": rz}
    names = [k if ins[k] is not None else "" for k in ("X", "W", "R", "B")] + [""] + \
        [k if ins[k] is not None else "" for k in ("h0", "c0", "P")] + ["ws", "wz", "rs", "rz"]
    consts = ("W", "R", "ws", "wz", "rs", "rz")  # ORT wants the weights and zero points constant
    feeds = {k: v for k, v in ins.items() if v is not None and k not in consts}
    want = {"Y": Y, "Y_h": Yh, "Y_c": Yc}
    outs = [o if o in outputs else "" for o in ("Y", "Y_h", "Y_c")]
    while outs[-1] == "":
        outs.pop()
    attrs = dict(hidden_size=H, direction=direction, clip=clip,
                 input_forget=1 if input_forget else None)
    c = Case(SUB + name, opset=12, domain_opsets={"com.microsoft": 1}, check=False)
    for k in consts:
        c.initializer(k, ins[k])
    c.node("DynamicQuantizeLSTM", names, outs, domain="com.microsoft", **attrs)
    c.tol(1e-5, 1e-5)
    out_vals = {o: want[o] for o in outs if o}
    c.save(feeds, out_vals)
    # ONNX Runtime agrees with the numpy model
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    model = "tests/ops/data/" + SUB + name + "/model.onnx"
    got = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, feeds)
    for o, gv in zip(out_vals, got):
        err = float(np.abs(gv - out_vals[o]).max())
        assert err <= 1e-6, (name, o, err)


def main():
    g = rng(91)
    case("dq_lstm_bidirectional_int8_states", g, direction="bidirectional", states=True)
    case("dq_lstm_forward_uint8_per_column", g, T=4, N=2, I=7, H=5, signed=False, per_col=True,
         bias=False, outputs=("Y_h",))
    case("dq_lstm_reverse_peepholes_clip_input_forget", g, T=5, N=2, I=3, H=6,
         direction="reverse", states=True, peep=True, clip=1.5, input_forget=True)
    case("dq_lstm_long_vector_tails", g, T=9, N=1, I=33, H=17, direction="bidirectional",
         per_col=True, outputs=("Y", "Y_c"))

    X = g.standard_normal((3, 2, 4)).astype(f32)
    W, ws, wz = qweights(g, (1, 4, 8), True, False, 8)
    R, rs, rz = qweights(g, (1, 2, 8), True, False, 8)
    c = Case(SUB + "dq_lstm_err_partial_sequence", opset=12, domain_opsets={"com.microsoft": 1},
             check=False).expect_error(ERR_UNSUPPORTED, "only full-length sequences")
    c.node("DynamicQuantizeLSTM", ["X", "W", "R", "", "lens", "", "", "", "ws", "wz", "rs", "rz"],
           ["Y"], domain="com.microsoft", hidden_size=2)
    c.save({"X": X, "W": W, "R": R, "lens": np.array([3, 2], np.int32), "ws": ws, "wz": wz,
            "rs": rs, "rz": rz}, {"Y": np.zeros((3, 1, 2, 2), f32)})
    c = Case(SUB + "dq_lstm_err_no_scale", opset=12, domain_opsets={"com.microsoft": 1},
             check=False).expect_error(ERR_INVALID_MODEL, "input 8 (scale) is required")
    c.node("DynamicQuantizeLSTM", ["X", "W", "R"], ["Y"], domain="com.microsoft", hidden_size=2)
    c.save({"X": X, "W": W, "R": R}, {"Y": np.zeros((3, 1, 2, 2), f32)})


if __name__ == "__main__":
    main()
