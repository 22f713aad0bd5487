#!/usr/bin/env python3
"""amxconv_ab.py — bench/cputime.py with each libmopt column twice in one
process: the pointwise convs on the own AMX bf16 GEMM (cpu-amx-bf16 for
mopt.FusedConv, the default rule) and on oneDNN (MOPT_AMX_CONV=0 while
that column's session is built), so the A/B alternates runs in one process
like the other columns (as amxgemm_ab.py does for the matmuls). Arguments
are cputime.py's, e.g.

    .venv/bin/python bench/proto/amxconv_ab.py "MobileNetV3-like b1" "PP-OCRv4 rec" \\
        --rounds 10 --budget 0 --mopt-config precision=bf16 --openvino-default
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
    for on in ("rule", "0"):
        os.environ["MOPT_AMX_CONV"] = on
        for s in _make(path, configs, threads):
            s.label += "" if on == "rule" else "[amx conv off]"
            out.append(s)
    os.environ.pop("MOPT_AMX_CONV", None)
    return out


compare.make_mopt_systems = _both
if __name__ == "__main__":
    sys.exit(cputime.main())
