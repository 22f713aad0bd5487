"""bert_numpy.py — an independent reference for the MiniLM conversion: the
BERT encoder + mean pooling + L2 normalisation in float64 numpy, written
from the safetensors weights by their names (not from the ONNX graph).

encode(w, ids, mask, types) -> (last_hidden_state, sentence_embedding).
"""
import math

import numpy as np

from minilm import HEADS, HIDDEN, LAYERS, LN_EPS


def _ln(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + LN_EPS) * g + b


def _erf(x):
    v = np.vectorize(math.erf)
    return v(x)


def encode(w, ids, mask, types):
    W = {k: np.asarray(v, np.float64) for k, v in w.items() if v.dtype != np.int64}
    B, S = ids.shape
    d = HIDDEN // HEADS

    def lin(x, p):
        return x @ W[p + ".weight"].T + W[p + ".bias"]

    x = (W["embeddings.word_embeddings.weight"][ids] +
         W["embeddings.token_type_embeddings.weight"][types] +
         W["embeddings.position_embeddings.weight"][np.arange(S)][None])
    x = _ln(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
    bias = (1.0 - mask.astype(np.float64))[:, None, None, :] * -10000.0
    for i in range(LAYERS):
        p = "encoder.layer.%d." % i

        def split(t):
            return t.reshape(B, S, HEADS, d).transpose(0, 2, 1, 3)
        q = split(lin(x, p + "attention.self.query"))
        k = split(lin(x, p + "attention.self.key"))
        v = split(lin(x, p + "attention.self.value"))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        c = (s @ v).transpose(0, 2, 1, 3).reshape(B, S, HIDDEN)
        x = _ln(lin(c, p + "attention.output.dense") + x,
                W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"])
        h = lin(x, p + "intermediate.dense")
        h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
        x = _ln(lin(h, p + "output.dense") + x,
                W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"])
    m = mask.astype(np.float64)[:, :, None]
    mean = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    emb = mean / np.maximum(np.linalg.norm(mean, axis=-1, keepdims=True), 1e-12)
    return x, emb
