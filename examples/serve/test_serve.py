#!/usr/bin/env python3
"""test_serve.py — end-to-end tests of examples/serve (suite "serve").

Usage: test_serve.py SERVE_BINARY PROJECT_ROOT [TEST_NAME ...]

Starts the server on 127.0.0.1 with an ephemeral port (read from its first
stdout line) and checks every endpoint; that embeddings equal a direct run of
the Python binding (mean-pooled last_hidden_state of the same ids); 429 with a
tiny queue; 504 with a tiny timeout; cache hits in /metrics; a battery of
malformed requests, each answered 4xx with a JSON message while the server
keeps serving; graceful shutdown that drains in-flight requests. Each test is
bounded (well under 60 s). Only the venv's packages and the stdlib are used.
MOPT_LIBRARY (set by meson) points the binding at the library just built.
"""
import http.client
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np

SERVE = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
ONLY = set(sys.argv[3:])
MODEL = os.path.join(ROOT, "examples/models/bert_tiny.onnx")
sys.path.insert(0, os.path.join(ROOT, "bindings/python"))

TIMEOUT = 30  # seconds, any single HTTP exchange


class Server:
    """The server process on an ephemeral port of 127.0.0.1."""

    def __init__(self, *args):
        self.proc = subprocess.Popen(
            [SERVE, "--model", MODEL, "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        if not ready:
            self.proc.kill()
            raise AssertionError("server did not start within 30 s")
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not m:
            self.proc.kill()
            raise AssertionError("no port in the first line: %r (stderr: %s)"
                                 % (line, self.proc.stderr.read()))
        self.port = int(m.group(1))

    def request(self, method, path, body=None, headers=None, timeout=TIMEOUT):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            hdrs = dict(headers or {})
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
                hdrs.setdefault("Content-Type", "application/json")
            if isinstance(body, str):
                body = body.encode()
            try:
                c.request(method, path, body=body, headers=hdrs)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server answered early (413) and closed: read its reply
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            c.close()

    def embed(self, payload, **kw):
        return self.request("POST", "/v1/embeddings", payload, **kw)

    def metrics(self):
        st, _, body = self.request("GET", "/metrics")
        assert st == 200, st
        return body.decode()

    def alive(self):
        st, _, body = self.request("GET", "/healthz")
        assert st == 200 and json.loads(body) == {"status": "ok"}, (st, body)

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            out, err = self.proc.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError("server did not stop within 40 s")
        return self.proc.returncode, err

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        rc, err = self.stop()
        if exc[0] is None:
            assert rc == 0, "server exited %d: %s" % (rc, err)
            assert "AddressSanitizer" not in err and "runtime error" not in err, err


def metric(text, name):
    """The value of one sample line `name` (with its labels) in Prometheus text."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


_session = None


def reference(ids):
    """Mean-pooled last_hidden_state of ids, by the Python binding directly."""
    global _session
    if _session is None:
        import mopt  # only here: the sanitizer run (no binding) skips these tests by name
        _session = mopt.Session(mopt.Model(MODEL), threads=1)
    a = np.asarray([ids], dtype=np.int64)
    out = _session.run({"input_ids": a, "attention_mask": np.ones_like(a)},
                       ["last_hidden_state"])["last_hidden_state"]
    return out[0].astype(np.float64).mean(axis=0)


def check_close(got, want, what):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    err = np.max(np.abs(got - want))
    assert err <= 1e-5 * max(1.0, np.max(np.abs(want))), "%s: max abs error %g" % (what, err)


def rand_ids(rng, n):
    return [int(x) for x in rng.integers(0, 1000, size=n)]


def concurrently(fn, args):
    results = [None] * len(args)

    def run(i):
        try:
            results[i] = fn(*args[i])
        except Exception as e:  # noqa: BLE001 - reported by the caller
            results[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(args))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


# ---- tests --------------------------------------------------------------

def test_endpoints():
    with Server() as s:
        s.alive()
        st, hdr, body = s.request("POST", "/v1/generate", {"prompt": "hi"})
        assert st == 501, st
        assert "generation" in json.loads(body)["error"]["message"]
        st, hdr, body = s.request("GET", "/nope")
        assert st == 404 and "no such endpoint" in json.loads(body)["error"]["message"]
        st, hdr, body = s.request("GET", "/v1/embeddings")
        assert st == 405 and hdr.get("Allow") == "POST", (st, hdr)
        st, hdr, body = s.request("POST", "/healthz", {})
        assert st == 405 and "GET" in hdr.get("Allow", ""), (st, hdr)
        text = s.metrics()
        assert metric(text, 'serve_requests_total{endpoint="/v1/generate",code="501"}') == 1
        assert metric(text, 'serve_requests_total{endpoint="other",code="404"}') == 1
        assert metric(text, 'serve_requests_total{endpoint="/v1/embeddings",code="405"}') == 1
        assert "serve_queue_depth 0" in text
        assert 'serve_request_duration_seconds_bucket{endpoint="/healthz",le="+Inf"} 2\n' in text, \
            [x for x in text.splitlines() if "healthz" in x]


def test_embeddings_match_direct_run():
    rng = np.random.default_rng(7)
    with Server("--cache-entries", "0") as s:
        ids = rand_ids(rng, 9)
        st, hdr, body = s.embed({"input_ids": [ids], "model": "bert_tiny"})
        assert st == 200, body
        d = json.loads(body)
        assert d["object"] == "list" and d["model"] == "bert_tiny"
        assert d["usage"]["prompt_tokens"] == 9
        assert d["data"][0]["index"] == 0 and d["data"][0]["object"] == "embedding"
        check_close(d["data"][0]["embedding"], reference(ids), "one input")
        # a flat list is one sequence
        st, _, body = s.embed({"input_ids": ids})
        assert st == 200
        check_close(json.loads(body)["data"][0]["embedding"], reference(ids), "flat input_ids")
        # several inputs of different lengths in one request
        seqs = [rand_ids(rng, n) for n in (1, 5, 17, 128)]
        st, _, body = s.embed({"input_ids": seqs})
        assert st == 200, body
        data = json.loads(body)["data"]
        assert [x["index"] for x in data] == [0, 1, 2, 3]
        for k, q in enumerate(seqs):
            check_close(data[k]["embedding"], reference(q), "input %d" % k)
        # many clients at once with ragged lengths: batched (padded) runs give
        # each its own embedding
        seqs = [rand_ids(rng, int(n)) for n in rng.integers(1, 60, size=24)]
        res = concurrently(lambda q: s.embed({"input_ids": [q]}), [(q,) for q in seqs])
        for q, r in zip(seqs, res):
            assert not isinstance(r, Exception), r
            assert r[0] == 200, r
            check_close(json.loads(r[2])["data"][0]["embedding"], reference(q), "concurrent")
        # one request of 16 inputs: submitted together, batched together
        b0 = metric(s.metrics(), "serve_batch_size_count")
        seqs = [rand_ids(rng, 10) for _ in range(16)]
        st, _, body = s.embed({"input_ids": seqs})
        assert st == 200
        for k, q in enumerate(json.loads(body)["data"]):
            check_close(q["embedding"], reference(seqs[k]), "16-input request")
        print("  one request of 16 inputs: %d batches"
              % (metric(s.metrics(), "serve_batch_size_count") - b0))
        text = s.metrics()
        batches = metric(text, "serve_batch_size_count")
        runs = metric(text, 'serve_batcher_requests_total{outcome="completed"}')
        assert runs == 1 + 1 + 4 + 24 + 16, runs
        assert 1 <= batches <= runs
        print("  ragged concurrent: %d requests in %d batches" % (runs, batches))


def test_text_and_cache():
    with Server("--cache-entries", "16") as s:
        st, _, body = s.embed({"input": "Hello world!"})
        assert st == 200, body
        d = json.loads(body)
        assert d["usage"]["prompt_tokens"] == 5  # [start] hello world ! [end]
        first = d["data"][0]["embedding"]
        # normalized the same (case, spacing): the same ids, served from the cache
        st, _, body = s.embed({"input": ["hello   WORLD !", "Hello world!"]})
        assert st == 200
        data = json.loads(body)["data"]
        assert data[0]["embedding"] == first and data[1]["embedding"] == first
        text = s.metrics()
        # the second input of that request is the first's twin: one lookup
        assert metric(text, "serve_cache_hits_total") == 1, text
        assert metric(text, "serve_cache_misses_total") == 1
        assert metric(text, "serve_cache_entries") == 1
        assert metric(text, 'serve_batcher_requests_total{outcome="completed"}') == 1
        # two new identical inputs in one request: one inference
        st, _, body = s.embed({"input": ["Good night", "good NIGHT"]})
        data = json.loads(body)["data"]
        assert st == 200 and data[0]["embedding"] == data[1]["embedding"]
        text = s.metrics()
        assert metric(text, 'serve_batcher_requests_total{outcome="completed"}') == 2
        assert metric(text, "serve_cache_misses_total") == 2
        # the bound: 40 distinct inputs leave 16 entries, 24 evictions
        for k in range(40):
            assert s.embed({"input_ids": [[k + 1, k + 2]]})[0] == 200
        text = s.metrics()
        assert metric(text, "serve_cache_entries") == 16
        assert metric(text, "serve_cache_evictions_total") == 42 - 16
        assert 0 < metric(text, "serve_cache_bytes") < 16 * 4096


def term_while_busy(s, threads, delay, started=None):
    """Starts threads, sends server s SIGTERM delay seconds later (or once the
    threading.Event `started` is set), waits for the threads (30 s each) and
    for s to stop: (exit code, stderr). Kills s if it is still running after
    that."""
    try:
        for t in threads:
            t.start()
        if started is not None:
            assert started.wait(30), "the stream did not start"
        time.sleep(delay)
        s.proc.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(30)
        return s.stop()
    finally:
        if s.proc.poll() is None:
            s.proc.kill()


def embed_flood(s, seed, n, code):
    """n concurrent embeddings of 128 random tokens, each answered 200 or
    code, code at least once: the replies with code, and all the codes."""
    rng = np.random.default_rng(seed)
    seqs = [rand_ids(rng, 128) for _ in range(n)]
    res = concurrently(lambda q: s.embed({"input_ids": [q]}), [(q,) for q in seqs])
    codes = [r[0] if not isinstance(r, Exception) else repr(r) for r in res]
    assert set(codes) <= {200, code}, codes
    assert codes.count(code) >= 1, codes
    return [r for r in res if r[0] == code], codes


def test_queue_full_429():
    with Server("--batch", "off", "--queue-capacity", "1", "--cache-entries", "0",
                "--timeout-ms", "0") as s:
        rejected, codes = embed_flood(s, 1, 32, 429)
        assert codes.count(200) >= 1, codes
        for r in rejected:
            assert "queue" in json.loads(r[2])["error"]["message"] and r[1].get("Retry-After")
        text = s.metrics()
        assert metric(text, 'serve_requests_total{endpoint="/v1/embeddings",code="429"}') == \
            codes.count(429)
        assert metric(text, 'serve_batcher_requests_total{outcome="rejected_full"}') >= \
            codes.count(429)
        s.alive()
        print("  429: %d of %d" % (codes.count(429), len(codes)))


def test_timeout_504():
    with Server("--batch", "off", "--timeout-ms", "1", "--cache-entries", "0",
                "--queue-capacity", "1000") as s:
        timed_out, codes = embed_flood(s, 2, 24, 504)
        for r in timed_out:
            assert "timed out" in json.loads(r[2])["error"]["message"]
        s.alive()
        print("  504: %d of %d" % (codes.count(504), len(codes)))


def raw_exchange(port, data, shutdown_write=True, timeout=10):
    """Sends raw bytes, returns the status code of the reply (None if the
    server closed without one)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        if shutdown_write:
            sock.shutdown(socket.SHUT_WR)
        buf = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    m = re.match(rb"HTTP/1\.[01] (\d{3})", buf)
    return (int(m.group(1)) if m else None), buf


def malformed_cases():
    J = {"Content-Type": "application/json"}
    deep = "[" * 5000 + "]" * 5000
    cases = [
        ("bad JSON", J, b'{"input": [1, 2,, 3]}', 400),
        ("truncated JSON", J, b'{"input_ids": [[1, 2', 400),
        ("trailing garbage", J, b'{"input": "a"} x', 400),
        ("not an object", J, b'[1, 2, 3]', 400),
        ("empty body", J, b"", 400),
        ("NUL bytes", J, b'{"input": "a"}\x00\x00', 400),
        ("invalid UTF-8 in a string", J, b'{"input": "caf\xc3\x28"}', 400),
        ("overlong UTF-8", J, b'{"input": "\xc0\xaf"}', 400),
        ("lone surrogate escape", J, b'{"input": "\\ud800"}', 400),
        ("bad escape", J, b'{"input": "\\x41"}', 400),
        ("control character", J, b'{"input": "a\x01b"}', 400),
        ("deep nesting", J, deep.encode(), 400),
        ("deep nesting in input_ids", J, ('{"input_ids": ' + deep + "}").encode(), 400),
        ("wrong type of input", J, b'{"input": 42}', 400),
        ("wrong type in input list", J, b'{"input": ["a", 3]}', 400),
        ("both input and input_ids", J, b'{"input": "a", "input_ids": [[1]]}', 400),
        ("neither", J, b'{"model": "bert_tiny"}', 400),
        ("unknown member", J, b'{"input": "a", "temperature": 1}', 400),
        ("member name with a NUL", J, b'{"input\\u0000x": "a"}', 400),
        ("duplicate member", J, b'{"input": "a", "input": "b"}', 400),
        ("encoding_format with a NUL", J, b'{"input": "a", "encoding_format": "float\\u0000"}', 400),
        ("bad encoding_format", J, b'{"input": "a", "encoding_format": "base64"}', 400),
        ("empty input list", J, b'{"input": []}', 400),
        ("empty id list", J, b'{"input_ids": [[]]}', 400),
        ("negative token id", J, b'{"input_ids": [[1, -1, 2]]}', 400),
        ("token id = vocab", J, b'{"input_ids": [[1000]]}', 400),
        ("huge token id", J, b'{"input_ids": [[9223372036854775807]]}', 400),
        ("token id beyond int64", J, b'{"input_ids": [[92233720368547758070]]}', 400),
        ("fractional token id", J, b'{"input_ids": [[1.5]]}', 400),
        ("exponent token id", J, b'{"input_ids": [[1e2]]}', 400),
        ("number out of range", J, b'{"input_ids": [[1e999]]}', 400),
        ("string token id", J, b'{"input_ids": [["7"]]}', 400),
        ("mixed nesting", J, b'{"input_ids": [[1], 2]}', 400),
        ("too many ids", J, json.dumps({"input_ids": [[1] * 129]}).encode(), 400),
        ("too long text", J, json.dumps({"input": "a " * 200}).encode(), 400),
        ("too many inputs", J, json.dumps({"input": ["a"] * 65}).encode(), 400),
        ("wrong content type", {"Content-Type": "text/plain"}, b'{"input": "a"}', 415),
        ("no content type", {}, b'{"input": "a"}', 415),
        ("content type prefix", {"Content-Type": "application/jsonx"}, b'{"input": "a"}', 415),
        ("oversized body", J, json.dumps({"input": ["x" * 1000] * 2000}).encode(), 413),
    ]
    return cases


def run_battery(s):
    n = 0
    for name, headers, body, want in malformed_cases():
        st, hdr, reply = s.request("POST", "/v1/embeddings", body, headers=headers)
        assert st == want, "%s: got %d, want %d: %r" % (name, st, want, reply[:200])
        err = json.loads(reply)["error"]
        assert err["code"] == want and err["message"], (name, err)
        n += 1
    port = s.port
    # huge Content-Length without the body
    st, _ = raw_exchange(port, b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 99999999999999\r\n\r\n")
    assert st == 413, st
    # Content-Length not a number
    st, _ = raw_exchange(port, b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: application/json\r\nContent-Length: -5\r\n\r\n")
    assert st is not None and 400 <= st < 500, st
    # a truncated body: the client gives up half-way (no reply is possible;
    # the server must just drop the connection)
    raw_exchange(port, b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\n"
                 b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"input\":")
    # chunked upload over the limit (the server reads and drops the rest, then answers)
    chunk = b"x" * 60000
    st = None
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(40):
            try:
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            if select.select([sock], [], [], 0)[0]:
                break
        else:
            sock.sendall(b"0\r\n\r\n")
        try:
            m = re.match(rb"HTTP/1\.[01] (\d{3})", sock.recv(65536))
            st = int(m.group(1)) if m else None
        except ConnectionResetError:
            pass
    assert st == 413, st
    # garbage request line
    st, _ = raw_exchange(port, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n")
    assert st is None or 400 <= st < 500, st
    # unknown method and path
    st, _, _ = s.request("DELETE", "/v1/embeddings")
    assert st == 405
    st, _, _ = s.request("GET", "/" + "a" * 3000)
    assert 400 <= st < 500, st
    n += 7
    return n


def test_malformed_battery():
    with Server("--max-body-bytes", "1000000") as s:
        st, _, good = s.embed({"input_ids": [[5, 6, 7]]})
        assert st == 200
        n = run_battery(s)
        s.alive()
        st, _, body = s.embed({"input_ids": [[5, 6, 7]]})
        assert st == 200 and body == good, "a different answer after the battery"
        text = s.metrics()
        assert metric(text, 'serve_requests_total{endpoint="/v1/embeddings",code="400"}') >= 30
        print("  %d malformed requests, all 4xx, server still serving" % n)


def test_graceful_shutdown_drains():
    rng = np.random.default_rng(3)
    # a long batching delay keeps the requests in flight when SIGTERM arrives
    s = Server("--max-delay-us", "400000", "--max-batch", "64", "--cache-entries", "0")
    seqs = [rand_ids(rng, 64) for _ in range(8)]
    out = []
    threads = [threading.Thread(target=lambda q=q: out.append(s.embed({"input_ids": [q]})))
               for q in seqs]
    rc, err = term_while_busy(s, threads, 0.15)
    assert rc == 0, (rc, err)
    assert len(out) == 8 and all(r[0] == 200 for r in out), [r[0] for r in out]
    assert "drained" in err and "(0 requests still in flight" in err, err
    # no longer listening
    try:
        socket.create_connection(("127.0.0.1", s.port), timeout=2).close()
        refused = False
    except OSError:
        refused = True
    assert refused, "still accepting connections after shutdown"
    print("  " + err.strip().splitlines()[-1])


# ---- /v1/generate -------------------------------------------------------

GEN_MODEL = os.path.join(ROOT, "examples/generate/kjv-tiny.onnx")
GENERATE = os.environ.get("GENERATE_EXE", "")


def gen_server(*args):
    return Server("--generate-model", GEN_MODEL, *args)


def generate(s, payload, **kw):
    st, hdr, body = s.request("POST", "/v1/generate", payload, **kw)
    return st, hdr, json.loads(body)


def example_generate(prompt, n, *flags):
    """The bytes examples/generate prints after the prompt for the same settings."""
    assert GENERATE and os.path.exists(GENERATE), "GENERATE_EXE not set (meson sets it)"
    out = subprocess.run([GENERATE, "--model", GEN_MODEL, "--prompt", prompt,
                          "--max-tokens", str(n), *flags],
                         capture_output=True, timeout=60, check=True).stdout
    assert out.startswith(prompt.encode()) and out.endswith(b"\n"), out
    return out[len(prompt.encode()):-1]


def read_sse(port, payload, stop_after=None, timeout=TIMEOUT, started=None):
    """Streams a generation; returns (status, content type, [event data strings]).
    With stop_after=k, closes the socket after k token events; `started` (a
    threading.Event) is set once the response's status line has arrived."""
    body = json.dumps(payload).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    f = None
    try:
        sock.sendall(b"POST /v1/generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body)
        f = sock.makefile("rb")
        status = int(f.readline().split()[1])
        if started is not None:
            started.set()
        headers = {}
        while True:
            line = f.readline().rstrip(b"\r\n")
            if not line:
                break
            k, v = line.decode().split(":", 1)
            headers[k.strip().lower()] = v.strip()
        events = []
        chunked = headers.get("transfer-encoding") == "chunked"
        buf = b""
        while True:
            if chunked:
                size = int(f.readline().strip(), 16)
                if size == 0:
                    break
                buf += f.read(size)
                f.readline()
            else:
                data = f.read(int(headers.get("content-length", "0")))
                buf += data
                chunked = None
            while b"\n\n" in buf:
                ev, buf = buf.split(b"\n\n", 1)
                assert ev.startswith(b"data: "), ev
                events.append(ev[6:].decode())
            if stop_after is not None and len(events) >= stop_after:
                break
            if chunked is None:
                break
        return status, headers.get("content-type"), events
    finally:
        if f:
            f.close()
        sock.close()


def test_generate_matches_example():
    prompts = ["In the beginning", "And the LORD said unto Moses, "]
    sampled = ["--temperature", "0.8", "--top-k", "40", "--top-p", "0.95",
               "--repetition-penalty", "1.1", "--seed", "7"]
    with gen_server("--generators", "2") as s:
        for p in prompts:
            want = example_generate(p, 60, "--temperature", "0")
            st, _, d = generate(s, {"prompt": p, "max_tokens": 60})
            assert st == 200, (st, d)
            assert d["text"].encode() == want, (d["text"], want)
            assert d["tokens"] == list(want), d["tokens"]
            assert d["finish_reason"] == "length" and d["usage"] == {
                "prompt_tokens": len(p), "completion_tokens": 60, "total_tokens": len(p) + 60}
            # seeded sampling: the same as the example, and reproducible
            want = example_generate(p, 60, *sampled)
            req = {"prompt": p, "max_tokens": 60, "temperature": 0.8, "top_k": 40,
                   "top_p": 0.95, "repetition_penalty": 1.1, "seed": 7}
            got = [generate(s, req)[2]["text"].encode() for _ in range(2)]
            assert got == [want, want], (got, want)
            other = generate(s, dict(req, seed=8))[2]["text"].encode()
            assert other != want, "seed 8 gave the text of seed 7"
        text = s.metrics()
        assert metric(text, 'serve_generate_requests_total{stream="false"}') == 8
        assert metric(text, "serve_generate_tokens_total") == 8 * 60
        assert metric(text, "serve_generate_time_per_token_seconds_count") == 8 * 59
        assert metric(text, "serve_generators") == 2
        print("  greedy and seeded outputs equal examples/generate's")


def test_generate_stream():
    p = "In the beginning God created"
    with gen_server() as s:
        st, _, whole = generate(s, {"prompt": p, "max_tokens": 80, "temperature": 0.9,
                                    "seed": 3})
        assert st == 200, whole
        st, ctype, events = read_sse(s.port, {"prompt": p, "max_tokens": 80, "temperature": 0.9,
                                              "seed": 3, "stream": True})
        assert st == 200 and ctype == "text/event-stream", (st, ctype)
        assert events[-1] == "[DONE]", events[-3:]
        evs = [json.loads(e) for e in events[:-1]]
        toks = [e["token"] for e in evs if "token" in e]
        assert toks == whole["tokens"] and len(toks) == 80, (toks, whole["tokens"])
        assert "".join(e["text"] for e in evs) == whole["text"]
        assert evs[-1]["finish_reason"] == "length" and "token" not in evs[-1], evs[-1]
        assert evs[-1]["usage"]["completion_tokens"] == 80
        # a stop string ends the generation after the token that completes it
        full = whole["text"]
        stop = full[10:13]
        st, _, d = generate(s, {"prompt": p, "max_tokens": 80, "temperature": 0.9, "seed": 3,
                                "stop": ["\u2603", stop]})
        assert st == 200 and d["finish_reason"] == "stop", d
        end = full.find(stop) + len(stop)
        assert d["text"] == full[:end], (d["text"], full[:end])
        st, _, events = read_sse(s.port, {"prompt": p, "max_tokens": 80, "temperature": 0.9,
                                          "seed": 3, "stream": True, "stop": stop})
        evs = [json.loads(e) for e in events[:-1]]
        assert "".join(e["text"] for e in evs) == full[:end] and events[-1] == "[DONE]"
        assert evs[-1]["finish_reason"] == "stop"
        text = s.metrics()
        assert metric(text, 'serve_generate_requests_total{stream="true"}') == 2
        assert metric(text, 'serve_generate_finished_total{reason="stop"}') == 2
        print("  %d events, [DONE] last, text equal to the whole answer" % len(events))


def test_generate_bad_bodies():
    long_prompt = "x" * 513
    cases = [
        b"", b"{", b"[]", b'{"prompt": 5}', b'{"max_tokens": 5}', b'{"prompt": ""}',
        json.dumps({"prompt": long_prompt}).encode(),
        b'{"prompt": "a", "max_tokens": 0}', b'{"prompt": "a", "max_tokens": 513}',
        b'{"prompt": "a", "max_tokens": 1.5}', b'{"prompt": "a", "max_tokens": "3"}',
        b'{"prompt": "a", "temperature": -1}', b'{"prompt": "a", "temperature": "hot"}',
        b'{"prompt": "a", "top_k": -1}', b'{"prompt": "a", "top_k": 257}',
        b'{"prompt": "a", "top_p": 0}', b'{"prompt": "a", "top_p": 1.01}',
        b'{"prompt": "a", "repetition_penalty": 0}', b'{"prompt": "a", "seed": 1.5}',
        b'{"prompt": "a", "stream": 1}', b'{"prompt": "a", "stream": "true"}',
        b'{"prompt": "a", "stop": 3}', b'{"prompt": "a", "stop": [""]}',
        b'{"prompt": "a", "stop": ["a", "b", "c", "d", "e"]}',
        json.dumps({"prompt": "a", "stop": ["y" * 65]}).encode(),
        b'{"prompt": "a", "prompt": "b"}', b'{"prompt": "a", "n": 2}',
        b'{"prompt": "a", "model": 3}', b'{"prompt": "a"} x',
        b'{"prompt": "a", "max_tokens": 1e400}', b'{"prompt": "\xff"}',
    ]
    with gen_server() as s:
        for body in cases:
            st, _, raw = s.request("POST", "/v1/generate", body,
                                   {"Content-Type": "application/json"})
            assert st == 400, (body, st, raw)
            assert json.loads(raw)["error"]["message"], raw
        st, _, raw = s.request("POST", "/v1/generate", b'{"prompt": "a"}',
                               {"Content-Type": "text/plain"})
        assert st == 415, st
        st, _, d = generate(s, {"prompt": "a", "max_tokens": 2, "stream": False, "stop": [],
                                "model": "kjv-tiny", "user": "u"})
        assert st == 200 and d["usage"]["completion_tokens"] == 2, d
        s.alive()
    # overload: one generator, no waiting room
    with gen_server("--generate-queue", "0") as s:
        res = concurrently(lambda: generate(s, {"prompt": "And", "max_tokens": 400}),
                           [()] * 6)
        codes = [r[0] if not isinstance(r, Exception) else repr(r) for r in res]
        assert set(codes) <= {200, 429} and codes.count(429) >= 1 and 200 in codes, codes
    # per-request timeout: a 1 ms budget cannot hold 400 tokens
    with gen_server("--timeout-ms", "1") as s:
        st, _, d = generate(s, {"prompt": "And", "max_tokens": 400})
        assert st == 504 and "timed out" in d["error"]["message"], (st, d)
        assert metric(s.metrics(), 'serve_generate_finished_total{reason="timeout"}') + \
            metric(s.metrics(), 'serve_requests_total{endpoint="/v1/generate",code="504"}') >= 1
    # generation only
    with Server("--model", "none", "--generate-model", GEN_MODEL) as s:
        st, _, raw = s.embed({"input": "a"})
        assert st == 501, st
        assert generate(s, {"prompt": "a", "max_tokens": 3})[0] == 200
    print("  %d bad bodies: 400; 429 and 504 seen" % len(cases))


def test_generate_disconnect():
    """Clients that close mid-stream cancel their generation; nothing leaks
    (the sanitizer run checks), the server keeps serving."""
    with gen_server("--generate-max-tokens", "1000") as s:
        for _ in range(5):
            st, _, events = read_sse(s.port, {"prompt": "In the beginning", "max_tokens": 1000,
                                              "stream": True, "temperature": 1.0},
                                     stop_after=3)
            assert st == 200 and len(events) >= 3, events
        deadline = time.monotonic() + 20
        while True:
            text = s.metrics()
            if metric(text, "serve_generators_busy") == 0 and \
                    metric(text, "serve_inflight_requests") == 1:
                break
            assert time.monotonic() < deadline, "generations still running 20 s later"
            time.sleep(0.05)
        cancelled = metric(text, 'serve_generate_finished_total{reason="cancelled"}')
        assert cancelled >= 1, [x for x in text.splitlines() if "finished" in x]
        assert metric(text, "serve_generate_tokens_total") < 5 * 1000
        st, _, d = generate(s, {"prompt": "In", "max_tokens": 20})
        assert st == 200 and len(d["tokens"]) == 20, d
        s.alive()
        print("  5 disconnects, %d generations cancelled, still serving" % cancelled)


def test_generate_shutdown_drains_stream():
    s = gen_server()
    out = []
    started = threading.Event()
    t = threading.Thread(target=lambda: out.append(
        read_sse(s.port, {"prompt": "And", "max_tokens": 400, "stream": True}, started=started)))
    # SIGTERM only once the stream is in flight: sent before the server has
    # accepted the connection, it would (rightly) refuse it instead
    rc, err = term_while_busy(s, [t], 0, started=started)
    assert rc == 0, (rc, err)
    assert out and out[0][0] == 200 and out[0][2][-1] == "[DONE]", out
    toks = [json.loads(e) for e in out[0][2][:-1]]
    assert sum("token" in e for e in toks) == 400, len(toks)
    assert "1 generations" in err, err


TESTS = [test_endpoints, test_embeddings_match_direct_run, test_text_and_cache,
         test_queue_full_429, test_timeout_504, test_malformed_battery,
         test_graceful_shutdown_drains, test_generate_matches_example, test_generate_stream,
         test_generate_bad_bodies, test_generate_disconnect, test_generate_shutdown_drains_stream]


def main():
    failed = 0
    for t in TESTS:
        if ONLY and t.__name__ not in ONLY:
            continue
        t0 = time.monotonic()
        try:
            t()
            print("PASS %s (%.1f s)" % (t.__name__, time.monotonic() - t0), flush=True)
        except Exception as e:  # noqa: BLE001 - report every failure
            failed += 1
            import traceback
            traceback.print_exc()
            print("FAIL %s: %s" % (t.__name__, e), flush=True)
    if ONLY and not any(t.__name__ in ONLY for t in TESTS):
        print("no such test: %s" % " ".join(sorted(ONLY)))
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
