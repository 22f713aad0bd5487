#!/usr/bin/env python3
"""amxgemm_ab.py — bench/cputime.py with each libmopt column twice in one
process: the own AMX bf16 GEMM (cpu-amx-bf16) on, and off (MOPT_AMX_GEMM=0
while that column's session is built: its FusedMatMul/MatMul nodes then run
oneDNN as before), so the A/B alternates runs in one process like the other
columns. Arguments are cputime.py's, e.g.

    .venv/bin/python bench/proto/amxgemm_ab.py --encoders --rounds 10 --budget 0 \\
        --mopt-config precision=bf16 --mopt-config precision=int8
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import compare  # noqa: E402
import cputime  # noqa: E402

_make = compare.make_mopt_systems


def _both(path, configs, threads):
    out = []
    for on in ("1", "0"):
        os.environ["MOPT_AMX_GEMM"] = on
        for s in _make(path, configs, threads):
            s.label += "" if on == "1" else "[amx off]"
            out.append(s)
    os.environ.pop("MOPT_AMX_GEMM", None)
    return out


compare.make_mopt_systems = _both
if __name__ == "__main__":
    sys.exit(cputime.main())
