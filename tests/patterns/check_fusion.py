"""check_fusion.py — proves that the fusion passes fire (or, for negative
cases, do not) by reading the optimized graph's op histogram from
`mopt info --json --opt-level N`.

usage: check_fusion.py MOPT_CLI CASES_DIR [MODELS_DIR]
  CASES_DIR/<case>/expect.json: {"opt_level": 2, "counts": {"Attention": 1, ...}}
  MODELS_DIR (tests/models): the corpus models are checked against
  models_expect.json beside this script.
Every case is also checked at opt_level 1, where the fused ops must be absent
and the pattern's Softmax present (so a passing check means the pass did it).
Prints one line per check and "N passed, N failed"; exits 1 on a failure.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FUSED = ("mopt.Attention",)


def histogram(cli, model, level):
    out = subprocess.run([cli, "info", "--json", "--opt-level", str(level), model],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"mopt info failed: {out.stderr.strip()}")
    info = json.loads(out.stdout)
    # expect.json names fused ops without their domain ("Attention"); the
    # library reports ops outside the default domain as "mopt.Attention"
    hist = {}
    for op, n in info["op_histogram"].items():
        hist[op] = hist.get(op, 0) + n
        if op.startswith("mopt."):
            hist[op[5:]] = hist.get(op[5:], 0) + n
    return info["nodes"], hist


def check(cli, name, model, level, counts, results):
    try:
        n0, h0 = histogram(cli, model, 0)
        n1, h1 = histogram(cli, model, 1)
        n2, h2 = histogram(cli, model, level)
    except (RuntimeError, json.JSONDecodeError, subprocess.TimeoutExpired) as e:
        print(f"FAIL {name}: {e}")
        results.append(False)
        return
    bad = [f"{op} {h2.get(op, 0)} (want {want})" for op, want in counts.items()
           if h2.get(op, 0) != want]
    if any(h1.get(op, 0) for op in FUSED):
        bad.append("fused ops already at opt_level 1")
    if h1.get("Softmax", 0) == 0:
        bad.append("no Softmax at opt_level 1: the pattern is missing")
    ok = not bad
    print(f"{'ok  ' if ok else 'FAIL'} {name}: nodes {n0} (O0) -> {n1} (O1) -> {n2} (O{level}); "
          + ", ".join(f"{op} {h2.get(op, 0)}" for op in counts) + ("" if ok else "; " + "; ".join(bad)))
    results.append(ok)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    cli, cases = sys.argv[1], sys.argv[2]
    results = []
    for name in sorted(os.listdir(cases)):
        exp = os.path.join(cases, name, "expect.json")
        if not os.path.isfile(exp):
            continue
        with open(exp) as f:
            e = json.load(f)
        check(cli, name, os.path.join(cases, name, "model.onnx"), e["opt_level"], e["counts"],
              results)
    if len(sys.argv) > 3:
        with open(os.path.join(HERE, "models_expect.json")) as f:
            models = json.load(f)
        for name, e in sorted(models.items()):
            path = os.path.join(sys.argv[3], name, "model.onnx")
            check(cli, "models/" + name, path, e["opt_level"], e["counts"], results)
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if results and passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
