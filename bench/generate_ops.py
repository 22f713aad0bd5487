"""generate_ops.py — per-op time of mopt_generator's decode steps at tokens
16, 128 and 256 on examples/generate's kjv-tiny, for a cache dtype (run by
hand from the project root, with the library of the build to profile):

    MOPT_LIBRARY=build/libmopt.so .venv/bin/python bench/generate_ops.py f32|bf16

A generator made with the option profile=<trace path> writes every step's
nodes to a Chrome trace; 6 greedy generations of 270 tokens after a
16-token prompt; per op type, the median over the 8 steps around each token
and the 6 generations (µs)."""
import collections
import json
import sys

sys.path.insert(0, "bindings/python")
import mopt  # noqa: E402

dt = sys.argv[1] if len(sys.argv) > 1 else "f32"
path = "/tmp/tr_%s.json" % dt
m = mopt.Model("examples/generate/kjv-tiny.onnx", kv_cache=1, threads=1)
g = mopt.Generator(m, max_seq=1024, threads=1, kv_cache_dtype=dt, profile=path)
for r in range(6):
    g.reset()
    g.generate(list(b"And God said, Let there be light"[:16]), 270)
g.close()
ev = json.load(open(path))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
# run 0: the creation's warm-up; then per generation 270 runs: the prefill
# (token 1's logits), then the step giving token t's logits (t = 2..270)
runs = collections.defaultdict(lambda: collections.defaultdict(float))
for e in ev:
    if e.get("ph") == "X":
        runs[e["args"]["run"]][e["args"]["op"]] += e["dur"]
per = 270
res = {}
for pos_tok in (16, 128, 256):
    acc = collections.defaultdict(list)
    for gi in range(6):
        base = 1 + gi * per  # the prefill's run
        for d in range(-4, 4):
            r = base + pos_tok + d - 1  # token pos_tok + d
            for op, v in runs[r].items():
                acc[op].append(v)
            acc["total"].append(sum(runs[r].values()))
    res[pos_tok] = {op: sorted(v)[len(v) // 2] for op, v in acc.items()}
ops = sorted(res[16], key=lambda o: -res[256][o])
print("op", *[f"t{t}" for t in res])
for o in ops:
    print(o, *["%.2f" % res[t].get(o, 0) for t in res])
