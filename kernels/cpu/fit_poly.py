#!/usr/bin/env python3
"""fit_poly.py — fits the polynomial coefficients used by kernels/cpu/vmath.h.

Near-minimax fits by iteratively reweighted least squares (Lawson's method)
on a dense grid, minimizing the RELATIVE error in double precision. Run it
to reproduce the tables in vmath.h (python3 kernels/cpu/fit_poly.py); the
float32 error of the kernels themselves is measured by
tests/kernels/test_cpu_kernels.c against double-precision libm.
"""
import math

import numpy as np



def lawson(basis, f, x, iters=60):
    a = np.stack([b(x) for b in basis], axis=1)
    w = np.ones_like(x)
    for _ in range(iters):
        sw = np.sqrt(w)
        c, *_ = np.linalg.lstsq(a * sw[:, None], f * sw, rcond=None)
        err = np.abs(a @ c - f)
        w = w * (err + 1e-300)
        w /= w.sum()
    return c, np.max(np.abs(a @ c - f))


def fit(name, terms, target, lo, hi, scale, n=20000):
    """target(x) ~ sum_k c_k * term_k(x), relative error (scale(x) = |f|)."""
    x = lo + (hi - lo) * (1 - np.cos(np.linspace(0, math.pi, n))) / 2
    s = scale(x)
    basis = [(lambda t, k=k: terms(t, k) / s) for k in range(len_terms[name])]
    c, e = lawson(basis, target(x) / s, x)
    print(f"{name}: max rel error (double) {e:.3g}")
    for k, v in enumerate(c):
        print(f"    {v:.9e}f, /* c{k} */")
    return c


erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)

len_terms = {"tanh": 7, "erf": 7, "erfcx": 12}
# tanh(x) = x + x^3 * P(x^2) on [0, 0.9]
fit("tanh", lambda t, k: t ** (2 * k + 3), lambda t: np.tanh(t) - t, 1e-4, 0.9,
    lambda t: np.tanh(t))
# erf(x) = x * P(x^2) on [0, 1]
fit("erf", lambda t, k: t ** (2 * k + 1), erf, 1e-4, 1.0, lambda t: erf(t))
# erfc(x) * exp(x^2) = P(x - 2.5) on [1, 3.92]
fit("erfcx", lambda t, k: (t - 2.5) ** k, lambda t: erfc(t) * np.exp(t * t), 1.0, 3.92,
    lambda t: erfc(t) * np.exp(t * t))
