"""kv_bf16_quality.py — the quality check of the generator option
kv_cache_dtype=bf16 on examples/generate's kjv-tiny (run by hand from the
project root, with the library of the build to check):

    MOPT_LIBRARY=build/libmopt.so .venv/bin/python bench/kv_bf16_quality.py [STEPS]

32 prompts x STEPS (default 512) greedy steps of the f32 cache; the bf16
tiles generator is teacher-forced on the f32 tokens (fed through prefix
reuse, one token a request), and the argmax of its logits is compared with
the f32 one at every step, with the smallest logits cosine."""
import sys

import numpy as np

sys.path.insert(0, "bindings/python")
import mopt  # noqa: E402

prompts = [b"In the beginning", b"And God said", b"The LORD is my shepherd", b"Blessed are the",
           b"And it came to pass", b"For God so loved", b"Thou shalt not", b"Let there be",
           b"And the LORD spake unto Moses", b"Now the serpent was", b"And Jesus answered",
           b"Honour thy father", b"The heavens declare", b"Vanity of vanities", b"And he said unto them",
           b"Behold, I stand at the door", b"He that hath ears", b"Wherefore", b"O LORD", b"And there was war",
           b"The grace of our Lord", b"I am the way", b"Ask, and it shall", b"Judge not",
           b"And David said", b"Hear, O Israel", b"My son, forget not", b"Remember now thy Creator",
           b"And Abraham", b"But the fruit of the Spirit", b"Therefore", b"Amen"]
m = mopt.Model("examples/generate/kjv-tiny.onnx", kv_cache=1, threads=1)
N = int(sys.argv[1]) if len(sys.argv) > 1 else 512
agree = steps = 0; first_div = []
mincos = 1.0
with mopt.Generator(m, max_seq=1024, threads=1) as a, \
        mopt.Generator(m, max_seq=1024, threads=1, kv_cache_dtype="bf16") as b:
    for p in prompts:
        # teacher-forced: the bf16 run is fed the f32 tokens; compare argmax and logits per step
        a.reset(); b.reset()
        la, lb = [], []
        ta = a.generate(list(p), N, callback=lambda t, i: la.append(np.array(a.logits())) and False)
        seq = list(p) + ta
        # bf16: feed prefix then one token at a time via prefix reuse
        b.generate(list(p), 1, callback=lambda t, i: lb.append(np.array(b.logits())) and False)
        for k in range(1, len(ta)):
            b.generate(seq[:len(p) + k], 1, callback=lambda t, i: lb.append(np.array(b.logits())) and False)
        for x, y in zip(la, lb):
            steps += 1; agree += int(np.argmax(x) == np.argmax(y))
            c = float(np.dot(x, y) / np.linalg.norm(x) / np.linalg.norm(y)); mincos = min(mincos, c)
print("prompts %d x %d steps teacher-forced: argmax agreement %d/%d, min logits cosine %.8f"
      % (len(prompts), N, agree, steps, mincos))
