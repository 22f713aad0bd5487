"""test_threadpool.py — mopt.ThreadPool (meson suite 'python'): sessions and
a batcher given threadpool=pool share it (the pool's counters see their
runs; never more than its threads at work), outputs equal a session without
a pool, the pool outlives close() while sessions hold it, bad arguments."""

import numpy as np
import pytest

import mopt

BERT = "examples/models/bert_tiny.onnx"


@pytest.fixture(scope="module")
def model(repo):
    with mopt.Model(repo / BERT) as m:
        yield m


def feed(seed, length=12):
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, 1000, size=(1, length), dtype=np.int64)
    return {"input_ids": ids, "attention_mask": np.ones((1, length), np.int64)}


def test_sessions_share_a_pool(model, on_threads):
    feeds = [feed(i) for i in range(4)]
    with model.session(threads=1) as s:
        want = [s.run(f) for f in feeds]
    with mopt.ThreadPool(2) as pool:
        assert pool.threads == 2
        sessions = [model.session(threads=2, threadpool=pool) for _ in range(4)]
        assert pool.stats()["sessions"] == 4
        got = [[None] * 4 for _ in sessions]

        def work(k):
            for i, f in enumerate(feeds):
                got[k][i] = sessions[k].run(f)

        on_threads(work, [(k,) for k in range(4)])
        st = pool.stats()
        assert st["runs"] == 16
        assert 1 <= st["peak_threads"] <= 2
        assert st["active_threads"] == 0
        for k in range(4):
            for i in range(4):
                for name in want[i]:
                    np.testing.assert_array_equal(got[k][i][name], want[i][name])
        for s in sessions:
            s.close()
        assert pool.stats()["sessions"] == 0


def test_batcher_workers_share_a_pool(model):
    with mopt.ThreadPool(1) as pool:
        with mopt.Batcher(model, max_batch=1, workers=2, threadpool=pool) as b:
            assert pool.stats()["sessions"] == 2
            b.run(feed(1))
            b.run(feed(2))
        st = pool.stats()
        assert st["runs"] == 2
        assert st["peak_threads"] == 1
        assert st["sessions"] == 0


def test_pool_outlives_close(model):
    pool = mopt.ThreadPool(1)
    s = model.session(threadpool=pool)
    pool.close()  # the session still holds the C pool
    with pytest.raises(mopt.MoptError):
        pool.stats()
    out = s.run(feed(3))
    assert out
    s.close()


def test_bad_arguments():
    with pytest.raises(mopt.InvalidArgumentError):
        mopt.ThreadPool(-1)
    with pytest.raises(mopt.InvalidArgumentError):
        mopt.ThreadPool(5000)
    with pytest.raises(mopt.InvalidArgumentError):
        mopt.Options(threadpool=3)
    with mopt.ThreadPool(0) as pool:
        assert pool.threads >= 1
        o = mopt.Options(threadpool=pool)
        assert o["threadpool"] is pool
        assert o.copy()["threadpool"] is pool
        o["threadpool"] = None
        assert o["threadpool"] is None
        o.close()
