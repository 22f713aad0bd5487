#!/usr/bin/env python3
"""static_int8_cputime.py — all-static INT8 against FP32 on one model, 1
thread, alternating sessions in one process, process CPU time of one run
(median of 5 per round, median over ROUNDS rounds), with the cosine of each
output to FP32. Columns: FP32; static INT8 as configured (depthwise convs
FP32 by default); static INT8 with the option int8_depthwise=int8 (depthwise convs
int8, as before issues 11/13's rule). MAINLIB=1 keeps the first two only
(for another build through MOPT_LIBRARY, e.g. main's).

    MOPT_LIBRARY=build/libmopt.so python3 bench/static_int8_cputime.py MODEL TABLE INPUT.npy 15
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
import mopt  # noqa: E402

model, table, xfile, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
x = np.load(xfile)
cfg = [('fp32', dict(precision='fp32')),
       ('int8 (depthwise fp32)', dict(precision='int8', calibration=table)),
       ('int8 (depthwise int8)', dict(precision='int8', calibration=table, int8_depthwise='int8'))]
if os.environ.get('MAINLIB'): cfg = cfg[:2]
sess = []
for name, o in cfg:
    mm = mopt.Model(model, **o)
    s = mopt.Session(mm, threads=1)
    nm = mm.inputs[0].name
    sess.append((name, s, nm))
outs = {}
for name, s, nm in sess:
    for _ in range(3): outs[name] = next(iter(s.run({nm: x}).values()))
t = {n: [] for n, _, _ in sess}
for r in range(rounds):
    for name, s, nm in sess:
        ts = []
        for _ in range(5):
            c = time.process_time(); s.run({nm: x}); ts.append(time.process_time() - c)
        t[name].append(np.median(ts))
f = np.median(t['fp32'])
ref = outs['fp32'].ravel()
for name, _, _ in sess:
    m = np.median(t[name]); o = outs[name].ravel()
    cos = float(np.dot(ref, o) / (np.linalg.norm(ref) * np.linalg.norm(o) + 1e-30))
    print('%-22s %8.3f ms  %.3fx fp32  cos %.5f' % (name, m * 1e3, m / f, cos))
