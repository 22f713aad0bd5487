"""gen_recurrent.py — op cases for the "recurrent" family (LSTM, GRU, RNN)
under tests/ops/data/recurrent/, and the streaming data of
tests/ops/stream/lstm_vad/ (read by tests/unit/test_recurrent_stream.c).

Expected outputs of the op cases come from numpy (`recur` below: every batch
row advanced together with masks, in float64), never from libmopt; the
streaming references come from ONNX Runtime run chunk by chunk with its own
state carried. Cases cover every direction, ragged sequence_lens (with a
row of length 0), initial states, peepholes, clip, layout 1, input_forget,
GRU linear_before_reset 0 and 1, every activation with alpha/beta, omitted
optional inputs and outputs, opset 7 and a missing hidden_size, and sizes
with vector tails, several unit blocks and batch rows past one register
tile for the fast path.

Run from the repo root: python3 tests/ops/gen_recurrent.py
"""
import os
import shutil

import numpy as np
import onnx
from onnx import helper, TensorProto

from opcase import Case, rng

R = rng(77)
SUB = "recurrent/"

ACTS = {
    "Sigmoid": (lambda x, a, b: 1.0 / (1.0 + np.exp(-x)), None, None),
    "Tanh": (lambda x, a, b: np.tanh(x), None, None),
    "Relu": (lambda x, a, b: np.maximum(x, 0.0), None, None),
    "Affine": (lambda x, a, b: a * x + b, 1.0, 0.0),
    "LeakyRelu": (lambda x, a, b: np.where(x >= 0, x, a * x), 0.01, None),
    "ThresholdedRelu": (lambda x, a, b: np.where(x > a, x, 0.0), 1.0, None),
    "ScaledTanh": (lambda x, a, b: a * np.tanh(b * x), 1.0, 1.0),
    "HardSigmoid": (lambda x, a, b: np.clip(a * x + b, 0.0, 1.0), 0.2, 0.5),
    "Elu": (lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1.0)), 1.0, None),
    "Softsign": (lambda x, a, b: x / (1.0 + np.abs(x)), None, None),
    "Softplus": (lambda x, a, b: np.log1p(np.exp(x)), None, None),
}
DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def resolve_acts(cell, dirs, names, alphas, betas):
    """Per direction, a list of functions of x (alpha/beta consumed in order)."""
    per = len(DEFAULT_ACTS[cell])
    names = names or DEFAULT_ACTS[cell]
    if len(names) == per:
        names = names * dirs
    alphas, betas = list(alphas or []), list(betas or [])
    fns = []
    for name in names:
        f, da, db = ACTS[name]
        a = alphas.pop(0) if da is not None and alphas else da
        b = betas.pop(0) if db is not None and betas else db
        fns.append(lambda x, f=f, a=a, b=b: f(x, a, b))
    return [fns[d * per:(d + 1) * per] for d in range(dirs)]


def recur(cell, X, W, Rw, B=None, lens=None, h0=None, c0=None, P=None, direction="forward",
          acts=None, alphas=None, betas=None, clip=None, input_forget=0, lbr=0, layout=0):
    """numpy reference: (Y, Y_h, Y_c) in the node's layout, float32."""
    f64 = lambda a: None if a is None else np.asarray(a, np.float64)
    X, W, Rw, B, h0, c0, P = map(f64, (X, W, Rw, B, h0, c0, P))
    if layout:
        X = X.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    T, N, _ = X.shape
    D, H = W.shape[0], Rw.shape[2]
    G = GATES[cell]
    lens = np.full(N, T) if lens is None else np.asarray(lens)
    fns = resolve_acts(cell, D, acts, alphas, betas)
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    Y = np.zeros((T, D, N, H))
    Yh = np.zeros((D, N, H))
    Yc = np.zeros((D, N, H))
    rows = np.arange(N)
    for d in range(D):
        rev = direction == "reverse" or d == 1
        Wd, Rd = W[d], Rw[d]
        Wb = B[d][:G * H] if B is not None else np.zeros(G * H)
        Rb = B[d][G * H:] if B is not None else np.zeros(G * H)
        h = h0[d].copy() if h0 is not None else np.zeros((N, H))
        c = c0[d].copy() if c0 is not None else np.zeros((N, H))
        f = fns[d]
        for s in range(T):
            active = s < lens
            t = np.where(rev, lens - 1 - s, s).clip(0, T - 1)
            x = X[t, rows]
            xw = x @ Wd.T + Wb
            if cell == "RNN":
                hn = f[0](cl(xw + h @ Rd.T + Rb))
                cn = c
            elif cell == "LSTM":
                g = xw + h @ Rd.T + Rb
                gi, go, gf, gc = np.split(g, 4, axis=1)
                pi, po, pf = np.split(P[d], 3) if P is not None else (0.0, 0.0, 0.0)
                i = f[0](cl(gi + pi * c))
                fg = 1.0 - i if input_forget else f[0](cl(gf + pf * c))
                cn = fg * c + i * f[1](cl(gc))
                o = f[0](cl(go + po * cn))
                hn = o * f[2](cn)  # Ct is not clipped before h (as ONNX Runtime)
            else:
                xz, xr, xh = np.split(xw, 3, axis=1)
                Rz, Rr, Rh = np.split(Rd, 3, axis=0)
                bz, br, bh = np.split(Rb, 3)
                z = f[0](cl(xz + h @ Rz.T + bz))
                r = f[0](cl(xr + h @ Rr.T + br))
                if lbr:
                    hh = f[1](cl(xh + r * (h @ Rh.T + bh)))
                else:
                    hh = f[1](cl(xh + (r * h) @ Rh.T + bh))
                hn = (1.0 - z) * hh + z * h
                cn = c
            h = np.where(active[:, None], hn, h)
            c = np.where(active[:, None], cn, c)
            for b in rows[active]:
                Y[t[b], d, b] = h[b]
        Yh[d] = np.where((lens > 0)[:, None], h, 0.0)
        Yc[d] = np.where((lens > 0)[:, None], c, 0.0)
    if layout:
        Y, Yh, Yc = Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    return Y.astype(np.float32), Yh.astype(np.float32), Yc.astype(np.float32)


def make(name, cell, T=5, N=3, I=4, H=3, direction="forward", bias=True, lens=None, h0=False,
         c0=False, peep=False, clip=None, acts=None, alphas=None, betas=None, input_forget=None,
         lbr=None, layout=0, opset=22, outputs=("Y", "Y_h", "Y_c"), hidden_attr=True,
         weights_as_init=False, scale=1.0):
    D = 2 if direction == "bidirectional" else 1
    G = GATES[cell]
    X = (R.standard_normal((N, T, I) if layout else (T, N, I)) * scale).astype(np.float32)
    W = (R.standard_normal((D, G * H, I)) * 0.5).astype(np.float32)
    Rw = (R.standard_normal((D, G * H, H)) * 0.5).astype(np.float32)
    ins = {"X": X, "W": W, "R": Rw}
    if bias:
        ins["B"] = (R.standard_normal((D, 2 * G * H)) * 0.3).astype(np.float32)
    if lens is not None:
        ins["sequence_lens"] = np.asarray(lens, np.int32)
    sshape = (N, D, H) if layout else (D, N, H)
    if h0:
        ins["initial_h"] = R.standard_normal(sshape).astype(np.float32)
    if c0:
        ins["initial_c"] = R.standard_normal(sshape).astype(np.float32)
    if peep:
        ins["P"] = (R.standard_normal((D, 3 * H)) * 0.5).astype(np.float32)
    Y, Yh, Yc = recur(cell, X, W, Rw, ins.get("B"), ins.get("sequence_lens"),
                      ins.get("initial_h"), ins.get("initial_c"), ins.get("P"), direction,
                      acts, alphas, betas, clip, input_forget or 0, lbr or 0, layout)
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
    node_in = [k if k in ins else "" for k in order[:8 if cell == "LSTM" else 6]]
    while node_in and node_in[-1] == "":
        node_in.pop()
    all_out = {"Y": Y, "Y_h": Yh, "Y_c": Yc}
    n_out = 3 if cell == "LSTM" else 2
    node_out = [k if k in outputs else "" for k in list(all_out)[:n_out]]
    while node_out and node_out[-1] == "":
        node_out.pop()
    c = Case(SUB + name, opset=opset)
    attrs = dict(direction=direction, clip=clip, activations=acts, activation_alpha=alphas,
                 activation_beta=betas, input_forget=input_forget, linear_before_reset=lbr,
                 layout=layout if layout else None)
    if hidden_attr:
        attrs["hidden_size"] = H
    c.node(cell, node_in, node_out, **{k: v for k, v in attrs.items() if v is not None})
    if weights_as_init:
        for k in ("W", "R", "B"):
            if k in ins:
                c.initializer(k, ins.pop(k))
    c.tol(2e-5, 2e-4)
    c.save(ins, {k: v for k, v in all_out.items() if k in node_out})


# LSTM
make("lstm_forward", "LSTM")
make("lstm_reverse_nobias", "LSTM", direction="reverse", bias=False)
make("lstm_bidir_lens", "LSTM", direction="bidirectional", lens=[5, 2, 0], h0=True, c0=True)
make("lstm_peephole_clip", "LSTM", T=6, N=2, H=5, peep=True, clip=0.9, h0=True, c0=True,
     scale=2.0)
make("lstm_bidir_peephole_lens", "LSTM", direction="bidirectional", lens=[3, 5, 1], peep=True,
     h0=True, c0=True)
make("lstm_layout1", "LSTM", direction="bidirectional", layout=1, lens=[4, 1, 5], h0=True,
     c0=True, peep=True, opset=14)
make("lstm_input_forget", "LSTM", input_forget=1, peep=True, c0=True)
make("lstm_acts", "LSTM", acts=["HardSigmoid", "LeakyRelu", "Softsign"], alphas=[0.3, 0.2],
     betas=[0.4])
make("lstm_acts_bidir", "LSTM", direction="bidirectional",
     acts=["Sigmoid", "ScaledTanh", "Elu", "HardSigmoid", "Affine", "Softplus"],
     alphas=[0.9, 0.7, 0.25, 0.5], betas=[1.1, 0.45, 0.1], clip=2.0)
make("lstm_only_yh", "LSTM", outputs=("Y_h",), lens=[5, 3, 4])
make("lstm_y_yc", "LSTM", outputs=("Y", "Y_c"), direction="reverse", lens=[2, 5, 3])
make("lstm_opset7_no_hidden_attr", "LSTM", opset=7, hidden_attr=False, h0=True)
make("lstm_weights_init", "LSTM", weights_as_init=True, h0=True, c0=True)
make("lstm_h20_t9", "LSTM", T=9, N=2, I=7, H=20, direction="bidirectional", lens=[9, 4],
     h0=True, c0=True)
make("lstm_h64_b1", "LSTM", T=16, N=1, I=64, H=64, h0=True, c0=True, weights_as_init=True,
     scale=0.5)
# GRU
make("gru_forward", "GRU")
make("gru_lbr0_bidir_lens", "GRU", direction="bidirectional", lens=[5, 2, 0], h0=True, lbr=0)
make("gru_lbr1_bidir_lens", "GRU", direction="bidirectional", lens=[1, 4, 5], h0=True, lbr=1)
make("gru_lbr1_reverse_nobias", "GRU", direction="reverse", bias=False, lbr=1, h0=True)
make("gru_clip_acts", "GRU", acts=["HardSigmoid", "ThresholdedRelu"], alphas=[0.25, 0.1],
     betas=[0.55], clip=0.8, scale=2.0, h0=True)
make("gru_acts_bidir", "GRU", direction="bidirectional", acts=["Sigmoid", "Relu", "Softsign",
     "Elu"], alphas=[0.6], lbr=1)
make("gru_layout1", "GRU", direction="bidirectional", layout=1, lens=[4, 5, 2], h0=True, opset=14)
make("gru_only_yh", "GRU", outputs=("Y_h",), lbr=1)
make("gru_opset7", "GRU", opset=7, hidden_attr=False)
make("gru_h20_t9", "GRU", T=9, N=2, I=7, H=20, lens=[9, 6], h0=True, lbr=1)
make("gru_h48_b1_lbr0", "GRU", T=12, N=1, I=32, H=48, h0=True, weights_as_init=True, scale=0.5)
# RNN
make("rnn_forward", "RNN")
make("rnn_bidir_lens", "RNN", direction="bidirectional", lens=[5, 0, 3], h0=True)
make("rnn_relu_clip", "RNN", acts=["Relu"], clip=1.5, scale=2.0, h0=True)
make("rnn_acts_bidir", "RNN", direction="bidirectional", acts=["LeakyRelu", "Affine"],
     alphas=[0.2, 0.5], betas=[0.25])
make("rnn_layout1", "RNN", layout=1, lens=[2, 5, 4], h0=True, opset=14, direction="reverse")
make("rnn_only_y", "RNN", outputs=("Y",), opset=7, hidden_attr=False)
make("rnn_h20_t9", "RNN", T=9, N=2, I=7, H=20, h0=True)
# the fast path's gate panels at odd hidden sizes: several unit blocks plus
# a tail at every tier's width, batch rows past one register tile (AVX2: 3)
make("lstm_h37_b7_bidir_peep", "LSTM", T=7, N=7, I=9, H=37, direction="bidirectional",
     lens=[7, 3, 0, 7, 5, 1, 6], h0=True, c0=True, peep=True, clip=3.0, scale=0.5)
make("gru_h33_b5_lbr0_layout1", "GRU", T=6, N=5, I=11, H=33, direction="bidirectional", layout=1,
     lens=[6, 2, 5, 0, 6], h0=True, lbr=0, scale=0.5)
make("rnn_h70_b4_reverse", "RNN", T=5, N=4, I=6, H=70, direction="reverse", h0=True, scale=0.5)


# ---- streaming: a silero-vad-like LSTM (input 64, hidden 64, batch 1) fed 20
# chunks of 1..4 steps, with ONNX Runtime's own state carried between chunks.
def stream_data():
    import onnxruntime as ort

    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stream", "lstm_vad")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    g = rng(2024)
    I, H = 64, 64
    W = (g.standard_normal((1, 4 * H, I)) * 0.2).astype(np.float32)
    Rw = (g.standard_normal((1, 4 * H, H)) * 0.2).astype(np.float32)
    B = (g.standard_normal((1, 8 * H)) * 0.1).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(a, n) for a, n in ((W, "W"), (Rw, "R"), (B, "B"))]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("LSTM", ["x", "W", "R", "B", "", "h0", "c0"], ["y", "hn", "cn"],
                          hidden_size=H)],
        "lstm_vad",
        [vi("x", TensorProto.FLOAT, ["seq", 1, I]), vi("h0", TensorProto.FLOAT, [1, 1, H]),
         vi("c0", TensorProto.FLOAT, [1, 1, H])],
        [vi("y", TensorProto.FLOAT, ["seq", 1, 1, H]), vi("hn", TensorProto.FLOAT, [1, 1, H]),
         vi("cn", TensorProto.FLOAT, [1, 1, H])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)],
                              producer_name="mopt-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))
    lens = g.integers(1, 5, size=20)
    T = int(lens.sum())
    # audio-like features: a slow sine envelope times noise
    t = np.arange(T)[:, None, None]
    x = (np.sin(t / 7.0) * g.standard_normal((T, 1, I)) + 0.1 * np.cos(t / 3.0)).astype(np.float32)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    h = np.zeros((1, 1, H), np.float32)
    c = np.zeros((1, 1, H), np.float32)
    ys, hs, cs = [], [], []
    pos = 0
    for n in lens:
        y, h, c = sess.run(None, {"x": x[pos:pos + n], "h0": h, "c0": c})
        ys.append(y)
        hs.append(h)
        cs.append(c)
        pos += n
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "chunk_lens.npy"), lens.astype(np.int64))
    np.save(os.path.join(out, "ort_y.npy"), np.concatenate(ys, axis=0))
    np.save(os.path.join(out, "ort_h.npy"), np.concatenate(hs, axis=0))
    np.save(os.path.join(out, "ort_c.npy"), np.concatenate(cs, axis=0))


stream_data()
