"""test_generator.py — mopt.Generator (meson suite 'python') on the committed
tiny decoder examples/generate/kjv-tiny.onnx: greedy and seeded generation
give byte for byte what the C example (examples/generate) prints for the
same flags, seeded sampling repeats (and another seed differs), stream()
yields the tokens generate() returns, stop tokens, the callback's stop,
cancel() from another thread, prefix reuse, and the errors; the option
kv_cache_dtype="bf16" (greedy tokens as the f32 cache's, its stats, bad
values refused)."""
import os
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

import mopt

MODEL = "examples/generate/kjv-tiny.onnx"


@pytest.fixture(scope="module")
def gen(repo):
    with mopt.Generator(repo / MODEL, max_seq=512, threads=1) as g:
        yield g


def example_exe():
    """examples/generate/generate of the build whose library the tests load."""
    lib = Path(os.environ.get("MOPT_LIBRARY") or mopt.library_path).resolve()
    for d in (lib.parent, *lib.parents):
        exe = d / "examples" / "generate" / "generate"
        if exe.is_file():
            return exe
    raise AssertionError("no examples/generate/generate next to %s: build the examples" % lib)


def example_text(repo, prompt, max_tokens, *flags):
    out = subprocess.run([str(example_exe()), "--model", str(repo / MODEL), "--prompt", prompt,
                          "--max-tokens", str(max_tokens), "--threads", "1", *flags],
                         check=True, capture_output=True, timeout=120).stdout
    assert out.startswith(prompt.encode()) and out.endswith(b"\n")
    return out[len(prompt):-1]


def test_greedy_equals_the_c_example(repo, gen):
    prompt = "And God said, "
    want = example_text(repo, prompt, 64, "--temperature", "0")
    got = gen.generate(list(prompt.encode()), 64)
    assert bytes(got) == want
    assert len(got) == 64


def test_seeded_sampling_equals_the_c_example(repo, gen):
    prompt = "In the beginning"
    flags = ["--temperature", "0.8", "--top-k", "20", "--top-p", "0.95",
             "--repetition-penalty", "1.1", "--seed", "3"]
    want = example_text(repo, prompt, 48, *flags)
    got = gen.generate(list(prompt.encode()), 48, temperature=0.8, top_k=20, top_p=0.95,
                       repetition_penalty=1.1, seed=3)
    assert bytes(got) == want


def test_seeded_sampling_repeats(gen):
    p = list(b"And the LORD")
    a = gen.generate(p, 40, temperature=1.0, seed=42)
    gen.reset()
    b = gen.generate(p, 40, temperature=1.0, seed=42)
    c = gen.generate(p, 40, temperature=1.0, seed=43)
    assert a == b
    assert a != c
    assert all(0 <= t < gen.vocab for t in a)


def test_stream_yields_what_generate_returns(gen):
    p = list(b"Blessed are")
    want = gen.generate(p, 24, temperature=0.7, seed=9)
    got = list(gen.stream(p, 24, temperature=0.7, seed=9))
    assert got == want


def test_stream_left_early_cancels_and_stays_usable(gen):
    p = list(b"Thou shalt")
    it = gen.stream(p, 200)
    first = [next(it) for _ in range(3)]
    it.close()  # cancels the rest
    assert len(first) == 3
    assert len(gen.generate(p, 5)) == 5


def test_stop_tokens_and_callback(gen):
    p = list(b"In the beginning")
    free = gen.generate(p, 48)
    stop = free[5]
    first = free.index(stop)
    assert gen.generate(p, 48, stop_tokens=[stop]) == free[:first]
    seen = []
    got = gen.generate(p, 48, callback=lambda t, i: seen.append((t, i)) or i == 9)
    assert got == free[:10]
    assert seen == list(zip(free[:10], range(10)))
    logits = gen.logits()
    assert logits.shape == (gen.vocab,) and np.isfinite(logits).all()


def test_callback_exception_propagates(gen):
    def boom(t, i):
        raise ValueError("from the callback")

    with pytest.raises(ValueError, match="from the callback"):
        gen.generate(list(b"Let there be"), 10, callback=boom)
    assert len(gen.generate(list(b"Let there be"), 3)) == 3


def test_cancel_from_another_thread(gen):
    started = threading.Event()
    release = threading.Event()

    def slow(t, i):
        if i == 2:
            started.set()
            release.wait(10)
        return False

    result = {}

    def work():
        try:
            gen.generate(list(b"And it came to pass"), 400, callback=slow)
        except mopt.CancelledError as e:
            result["error"] = e

    th = threading.Thread(target=work)
    th.start()
    assert started.wait(30)
    gen.cancel()
    release.set()
    th.join(30)
    assert isinstance(result.get("error"), mopt.CancelledError)
    assert gen.stats()["generated_tokens"] == 3
    assert len(gen.generate(list(b"And"), 4)) == 4  # the next request clears the flag


def test_prefix_reuse_and_stats(gen):
    gen.reset()
    p = list(b"And God saw the light")
    a = gen.generate(p, 8)
    s = gen.stats()
    assert s["prefill_tokens"] == len(p) and s["reused_tokens"] == 0
    b = gen.generate(p + a, 8)  # the cache already holds p and a[:-1]
    s = gen.stats()
    assert s["reused_tokens"] == len(p) + len(a) - 1
    assert s["prefill_tokens"] == 1
    gen.reset()
    assert gen.generate(p + a, 8) == b
    assert s["capacity_planned"] == 1 and s["last_step_plans"] == 0
    assert s["last_step_heap_tensors"] == 0


def test_errors(repo, gen):
    with pytest.raises(mopt.InvalidArgumentError):
        gen.generate([], 4)
    with pytest.raises(mopt.InvalidArgumentError):
        gen.generate([300], 4)  # outside the vocabulary
    with pytest.raises(mopt.InvalidArgumentError):
        gen.generate([65], 4, temperature=-1)
    with pytest.raises(mopt.LimitError):
        gen.generate([65] * 600, 4)  # longer than max_seq
    with pytest.raises(mopt.UnsupportedError):
        mopt.Generator(repo / "examples/models/bert_tiny.onnx")
    g = mopt.Generator(repo / MODEL, max_seq=64)
    g.close()
    g.close()
    with pytest.raises(mopt.ClosedError):
        g.generate([65], 1)


def test_kv_cache_dtype_bf16(repo, gen):
    with mopt.Generator(repo / MODEL, max_seq=512, threads=1, kv_cache_dtype="bf16") as g:
        for prompt in (b"In the beginning", b"And God said", b"Blessed are the"):
            gen.reset()
            assert g.generate(list(prompt), 96) == gen.generate(list(prompt), 96)
        s, f = g.stats(), gen.stats()
        assert set(s) == set(f) == {
            "layers", "heads", "head_dim", "vocab", "max_seq", "cached_tokens", "reused_tokens",
            "prefill_tokens", "generated_tokens", "steps", "prefill_ns", "last_step_ns",
            "last_step_plans", "last_step_heap_tensors", "capacity_planned",
            "last_step_inferred_nodes", "kv_cache_bf16", "kv_cache_bytes"}
        assert s["kv_cache_bf16"] == 1 and f["kv_cache_bf16"] == 0
        assert s["kv_cache_bytes"] * 2 == f["kv_cache_bytes"]  # 512 keys: whole tiles
        assert s["last_step_plans"] == 0 and s["last_step_heap_tensors"] == 0
    with pytest.raises(mopt.InvalidArgumentError, match="kv_cache_dtype"):
        mopt.Generator(repo / MODEL, max_seq=64, kv_cache_dtype="fp16")
    with pytest.raises(mopt.UnsupportedError, match="kv_cache=1"):
        mopt.Generator(repo / MODEL, max_seq=64, kv_cache=0, kv_cache_dtype="bf16")
