"""test_batcher.py — mopt.Batcher (meson suite 'python'): many Python threads
calling run() with single samples get the rows a Session gives them, ragged
lengths are padded and cropped back, the counters add up, a full queue raises
BusyError, a bad sample fails alone, and close() is safe under load."""
import threading
import time

import numpy as np
import pytest

import mopt

BERT = "examples/models/bert_tiny.onnx"


@pytest.fixture(scope="module")
def model(repo):
    with mopt.Model(repo / BERT, threads=1) as m:
        yield m


def sample(rng, length):
    ids = rng.integers(1, 1000, size=(1, length), dtype=np.int64)
    return {"input_ids": ids, "attention_mask": np.ones((1, length), np.int64)}


def test_threads_get_their_single_run_rows(model, on_threads):
    rng = np.random.default_rng(7)
    lengths = [3, 8, 11, 16, 20, 29, 31, 5]
    feeds = [sample(rng, n) for n in lengths]
    with model.session() as s:
        want = [s.run(f) for f in feeds]
    got = [None] * len(feeds)
    with mopt.Batcher(model, max_batch=len(feeds), max_delay_us=20_000_000,
                      seq_buckets=[16, 32]) as b:
        def call(i):
            got[i] = b.run(feeds[i])
        on_threads(call, [(i,) for i in range(len(feeds))])
        st = b.stats()
    assert st["batches"] == 1 and st["batch_sizes"] == {len(feeds): 1}
    assert st["completed"] == len(feeds) and st["requests"] == len(feeds)
    assert st["padded_elements"] == 2 * sum(32 - n for n in lengths)
    for n, g, w in zip(lengths, got, want):
        assert g["last_hidden_state"].shape == (1, n, 128)
        assert g["pooler_output"].shape == (1, 128)
        # measured bitwise equal on Zen 4; the bound leaves room for other kernels
        np.testing.assert_allclose(g["last_hidden_state"], w["last_hidden_state"], rtol=0,
                                   atol=4e-6)
        np.testing.assert_allclose(g["pooler_output"], w["pooler_output"], rtol=0, atol=4e-6)


def test_many_threads_counters_add_up(model, on_threads):
    rng = np.random.default_rng(11)
    feeds = [sample(rng, n) for n in (4, 9, 17, 23)]
    with model.session() as s:
        want = [s.run(f, "pooler_output")["pooler_output"] for f in feeds]
    bad = []
    with mopt.Batcher(model, max_batch=4, max_delay_us=500, queue_capacity=64, workers=2,
                      seq_buckets=[8, 16, 32]) as b:
        def hammer(k):
            for j in range(6):
                i = (k + j) % len(feeds)
                out = b.run(feeds[i], output_names="pooler_output")
                if not np.allclose(out["pooler_output"], want[i], rtol=0, atol=4e-6):
                    bad.append((k, j))
        on_threads(hammer, [(k,) for k in range(8)])
        st = b.stats()
    assert not bad
    assert st["requests"] == 48 == st["completed"]
    assert sum(st["batch_sizes"].values()) == st["batches"]
    assert sum(k * n for k, n in st["batch_sizes"].items()) == 48
    assert st["queue_depth"] == 0


def test_bad_sample_fails_alone(model, on_threads):
    rng = np.random.default_rng(3)
    good = sample(rng, 6)
    with mopt.Batcher(model, max_batch=2, max_delay_us=20_000_000) as b:
        with pytest.raises(mopt.DTypeError, match="input_ids"):
            b.run({"input_ids": good["input_ids"].astype(np.int32),
                   "attention_mask": good["attention_mask"]})
        with pytest.raises(mopt.ShapeError, match="axis 0"):
            b.run({k: np.repeat(v, 2, axis=0) for k, v in good.items()})
        res = {}
        oob = {"input_ids": good["input_ids"].copy(), "attention_mask": good["attention_mask"]}
        oob["input_ids"][0, 2] = 5000  # beyond the vocabulary: fails inside the graph

        def call(name, feed):
            try:
                res[name] = b.run(feed)
            except mopt.MoptError as e:
                res[name] = e
        on_threads(call, [("good", good), ("oob", oob)])
        st = b.stats()
    assert isinstance(res["oob"], mopt.MoptError)
    assert isinstance(res["good"], dict)
    with model.session() as s:
        np.testing.assert_array_equal(res["good"]["pooler_output"], s.run(good)["pooler_output"])
    assert st["rejected_invalid"] == 2 and st["failed"] == 3 and st["completed"] == 1
    assert st["reruns"] == 1


def test_full_queue_raises_busy_at_once(model):
    rng = np.random.default_rng(5)
    f = sample(rng, 8)
    with mopt.Batcher(model, max_batch=8, max_delay_us=300_000, queue_capacity=1) as b:
        t = threading.Thread(target=b.run, args=(f,))
        t.start()
        deadline = time.monotonic() + 10
        while b.stats()["queue_depth"] < 1 and time.monotonic() < deadline:
            time.sleep(0.0005)
        t0 = time.monotonic()
        with pytest.raises(mopt.BusyError, match="capacity"):
            b.run(f)
        assert time.monotonic() - t0 < 0.05
        t.join()
        assert b.stats()["rejected_full"] == 1


def test_close_and_arguments(model, repo):
    b = mopt.Batcher(repo / BERT, max_batch=4, threads=1)  # a path: loads its own model
    out = b.run([np.array([[5, 6, 7]], np.int64), np.ones((1, 3), np.int64)])
    assert out["last_hidden_state"].shape == (1, 3, 128)
    b.close()
    b.close()
    with pytest.raises(mopt.ClosedError):
        b.run({})
    with pytest.raises(mopt.InvalidArgumentError, match="ascending"):
        mopt.Batcher(model, seq_buckets=[16, 8])
    with pytest.raises(mopt.InvalidArgumentError, match="max_batch"):
        mopt.Batcher(model, max_batch=-2)


def test_save_mopt_maps_weights(model, tmp_path):
    path = tmp_path / "bert_tiny.mopt"
    model.save(path)
    with open(path, "rb") as f:
        assert f.read(6) == b"%MOPT-"
    with mopt.Model(path, threads=1) as m2:
        maps = open("/proc/self/maps").read()
        assert str(path) in maps  # the weights are a mapping of the file, not a copy
        f = {"input_ids": np.array([[7, 8, 9, 10]], np.int64),
             "attention_mask": np.ones((1, 4), np.int64)}
        with model.session() as a, m2.session() as b:
            np.testing.assert_array_equal(a.run(f)["pooler_output"], b.run(f)["pooler_output"])
