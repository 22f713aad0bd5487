#!/usr/bin/env python3
"""env_ab.py — bench/cputime.py with each libmopt column once per value of
an environment variable the library reads while a session is built, so an
A/B of two kernel choices alternates runs in one process like the other
columns. The first argument is VAR=VALUE,VALUE...; the rest are
cputime.py's. The switches measured this way:

    # the own AMX bf16 GEMM for FusedMatMul/MatMul on (1) and off (0)
    .venv/bin/python bench/proto/env_ab.py MOPT_AMX_GEMM=1,0 --encoders --rounds 10 \\
        --budget 0 --mopt-config precision=bf16 --mopt-config precision=int8
    # the pointwise convs on the own AMX GEMM (its rule) and on oneDNN (0)
    .venv/bin/python bench/proto/env_ab.py MOPT_AMX_CONV=rule,0 "MobileNetV3-like b1" \\
        "PP-OCRv4 rec" --rounds 10 --budget 0 --mopt-config precision=bf16 --openvino-default

The first value's columns keep their labels; the others get [VAR=VALUE].
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import compare  # noqa: E402
import cputime  # noqa: E402


def main():
    if len(sys.argv) < 2 or "=" not in sys.argv[1]:
        sys.exit("usage: env_ab.py VAR=VALUE,VALUE... [cputime.py arguments]")
    var, values = sys.argv[1].split("=", 1)
    values = values.split(",")
    del sys.argv[1]
    make = compare.make_mopt_systems

    def each_value(path, configs, threads):
        out = []
        old = os.environ.get(var)
        for k, value in enumerate(values):
            os.environ[var] = value
            for s in make(path, configs, threads):
                if k:
                    s.label += "[%s=%s]" % (var, value)
                out.append(s)
        if old is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = old
        return out

    compare.make_mopt_systems = each_value
    return cputime.main()


if __name__ == "__main__":
    sys.exit(main())
