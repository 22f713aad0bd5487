"""gen_loss.py — op cases for the "loss" family: NegativeLogLikelihoodLoss
and SoftmaxCrossEntropyLoss with reduction none/sum/mean, class weights,
ignore_index (also negative), extra spatial dims, int32 targets and SCE's
log_prob output. Expected outputs from numpy.

Run from the repo root: python3 tests/ops/gen_loss.py
"""
import numpy as np

from opcase import Case, rng

R = rng(31)


def nll(x, t, w=None, reduction="mean", ignore=None):
    n, c = x.shape[:2]
    xf = x.reshape(n, c, -1)
    tf = t.reshape(n, -1)
    loss = np.zeros(tf.shape, np.float64)
    wt = np.zeros(tf.shape, np.float64)
    for i in range(n):
        for d in range(tf.shape[1]):
            k = tf[i, d]
            if ignore is not None and k == ignore:
                continue
            ww = 1.0 if w is None else w[k]
            loss[i, d] = -xf[i, k, d] * ww
            wt[i, d] = ww
    if reduction == "none":
        return loss.reshape(t.shape).astype(np.float32)
    if reduction == "sum":
        return np.array(loss.sum(), np.float32)
    if w is not None or ignore is not None:
        return np.array(loss.sum() / wt.sum(), np.float32)
    return np.array(loss.mean(), np.float32)


def log_softmax(x):
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    return (x - m - np.log(e.sum(axis=1, keepdims=True))).astype(np.float32)


for shape in ((3, 5), (2, 4, 3), (2, 3, 2, 3)):
    x = R.standard_normal(shape).astype(np.float32)
    t = R.integers(0, shape[1], size=(shape[0],) + shape[2:]).astype(np.int64)
    w = R.uniform(0.5, 2, size=(shape[1],)).astype(np.float32)
    tag = "x".join(map(str, shape))
    for red in ("none", "sum", "mean"):
        c = Case(f"nllloss_{tag}_{red}", opset=13)
        c.node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], reduction=red)
        c.save({"x": x, "t": t}, {"y": nll(x, t, reduction=red)})
        c = Case(f"nllloss_{tag}_{red}_weight", opset=13)
        c.node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"], reduction=red)
        c.save({"x": x, "t": t, "w": w}, {"y": nll(x, t, w, red)})
        lp = log_softmax(x)
        c = Case(f"sce_{tag}_{red}_logprob", opset=13)
        c.node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y", "lp"], reduction=red)
        c.save({"x": x, "t": t}, {"y": nll(lp, t, reduction=red), "lp": lp})
    ti = t.copy()
    ti.flat[0] = -1
    c = Case(f"nllloss_{tag}_ignore_negative", opset=13)
    c.node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"], reduction="mean", ignore_index=-1)
    c.save({"x": x, "t": ti, "w": w}, {"y": nll(x, ti, w, "mean", -1)})
    c = Case(f"sce_{tag}_ignore_int32", opset=13)
    t32 = t.astype(np.int32)
    c.node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y"], reduction="mean",
           ignore_index=int(t32.flat[0]))
    c.save({"x": x, "t": t32}, {"y": nll(log_softmax(x), t32, None, "mean", int(t32.flat[0]))})
