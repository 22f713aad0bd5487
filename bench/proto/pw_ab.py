#!/usr/bin/env python3
"""pw_ab.py — issue 10 measurement of cpu-pwgemm-avx512 (pwconv_cpu.c): one
model loaded twice in one process, backend=auto (the own pointwise GEMM
where it takes a node) and backend=onednn (oneDNN first: main's conv), run
alternately; medians of per-run process CPU time and of per-node profile
times, the FusedConv nodes whose kernel differs listed with their ratio.
Usage: PYTHONPATH=bindings/python pw_ab.py MODEL ROUNDS [BATCH] [THREADS]"""
import statistics as st
import sys
import time

import numpy as np

import mopt

model, rounds = sys.argv[1], int(sys.argv[2])
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 1
threads = int(sys.argv[4]) if len(sys.argv) > 4 else 1
modes = {"onednn": "onednn", "own": "auto"}
ms, sn, sp = {}, {}, {}
for k, b in modes.items():
    ms[k] = mopt.Model(model, threads=threads, backend=b)
    sn[k] = mopt.Session(ms[k], threads=threads)
    sp[k] = mopt.Session(ms[k], threads=threads, profile=True)
shape = [batch] + [d if isinstance(d, int) else 1 for d in ms["own"].inputs[0].shape[1:]]
feeds = {ms["own"].inputs[0].name: np.random.default_rng(0).standard_normal(shape).astype(np.float32)}
outs = {k: list(sn[k].run(feeds).values())[0] for k in modes}
d = np.abs(outs["own"] - outs["onednn"])
print("output max |diff| %.3g, max rel %.3g (scale %.3g)"
      % (d.max(), (d / np.maximum(np.abs(outs["onednn"]), 1e-6)).max(), np.abs(outs["onednn"]).max()))
for _ in range(10):
    for k in modes:
        sn[k].run(feeds)
        sp[k].run(feeds)
cpu = {k: [] for k in modes}
node = {k: {} for k in modes}
kern = {k: {} for k in modes}
for r in range(rounds):
    for k in (list(modes) if r % 2 else list(modes)[::-1]):
        t = time.process_time()
        sn[k].run(feeds)
        cpu[k].append(time.process_time() - t)
        sp[k].run(feeds)
        for e in sp[k].profile():
            node[k].setdefault(e["node"], []).append(e["ns"] / 1e3)
            kern[k][e["node"]] = e["kernel"]
mc = {k: st.median(v) * 1e3 for k, v in cpu.items()}
print("whole model CPU ms median: onednn %.3f own %.3f (%.3f)" % (mc["onednn"], mc["own"], mc["own"] / mc["onednn"]))
tot = {k: 0.0 for k in modes}
ch = {k: 0.0 for k in modes}
for n in node["onednn"]:
    med = {k: st.median(node[k][n]) for k in modes}
    for k in modes:
        tot[k] += med[k]
    if kern["own"][n] != kern["onednn"][n]:
        for k in modes:
            ch[k] += med[k]
        print("%-16s %-24s %7.1f %7.1f %.3f" % (n, kern["own"][n], med["onednn"], med["own"], med["own"] / med["onednn"]))
print("changed nodes us: %.1f -> %.1f (%.3f); all nodes %.1f -> %.1f (%.3f)"
      % (ch["onednn"], ch["own"], ch["own"] / ch["onednn"], tot["onednn"], tot["own"], tot["own"] / tot["onednn"]))
