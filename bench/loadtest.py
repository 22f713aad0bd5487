#!/usr/bin/env python3
"""loadtest.py — load test of examples/serve, stdlib only (asyncio).

Starts the server (127.0.0.1, ephemeral port) once with batching on and once
with it off, drives POST /v1/embeddings with single sentences (distinct, so
the response cache never helps; it is also turned off) from a closed loop of
1, 4, 16, 64 concurrent clients on keep-alive connections, then at a fixed
open-loop arrival rate (latency counted from each request's scheduled send
time, so a slow server is not hidden by a slow client). Reports p50/p95/p99
latency, throughput, error counts by status and the batch-size histogram
(the server's /metrics, before/after delta) as a markdown table, and draws
latency against throughput as a PNG (bench/pngchart.py). Bounded in time:
--duration seconds per point. Only ever talks to 127.0.0.1.

    python3 bench/loadtest.py --serve build/examples/serve/serve \\
        --out bench/loadtest_results   # writes .md and .png
"""
import argparse
import asyncio
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pngchart  # noqa: E402

WORDS = ("the of and to in is was for on that with as by at from his her an are were which "
         "this be or had not but what all when we there can out more if some would so up said "
         "time into two has look like could no him see other than then now people my made over "
         "did down only way find use may water long little very after words called just where "
         "most know get through back much before go good new write our used me man too any day "
         "same right think also around another came come work three word must because does part "
         "river stone market winter garden engine signal window letter silver forest harbor").split()


def sentence(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) + "."


class Server:
    def __init__(self, binary, model, args):
        cmd = [binary, "--port", "0", "--cache-entries", "0"] + (["--model", model] if model else [])
        self.proc = subprocess.Popen(cmd + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        if not select.select([self.proc.stdout], [], [], 30)[0]:
            self.proc.kill()
            raise SystemExit("server did not start")
        self.banner = self.proc.stdout.readline().strip()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", self.banner)
        if not m:
            self.proc.kill()
            raise SystemExit("server: %s %s" % (self.banner, self.proc.stderr.read()))
        self.port = int(m.group(1))

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Conn:
    """One keep-alive HTTP/1.1 connection (asyncio streams)."""

    def __init__(self, port):
        self.port = port
        self.r = self.w = None

    async def request(self, method, path, body=b""):
        if self.w is None:
            self.r, self.w = await asyncio.open_connection("127.0.0.1", self.port)
        head = ("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                "Content-Length: %d\r\n\r\n" % (method, path, len(body))).encode()
        self.w.write(head + body)
        await self.w.drain()
        status_line = await self.r.readline()
        if not status_line:
            raise ConnectionError("closed")
        status = int(status_line.split()[1])
        length, close = 0, False
        while True:
            line = await self.r.readline()
            if line in (b"\r\n", b""):
                break
            k, _, v = line.decode("latin-1").partition(":")
            k = k.strip().lower()
            if k == "content-length":
                length = int(v)
            elif k == "connection" and v.strip().lower() == "close":
                close = True
        data = await self.r.readexactly(length) if length else b""
        if close:
            self.close()
        return status, data

    def close(self):
        if self.w is not None:
            self.w.close()
        self.r = self.w = None


async def scrape(port):
    c = Conn(port)
    st, body = await c.request("GET", "/metrics")
    c.close()
    hist = {}
    for line in body.decode().splitlines():
        m = re.match(r'serve_batch_size_bucket\{le="(\d+)"\} (\d+)', line)
        if m:
            hist[int(m.group(1))] = int(m.group(2))
    return hist


def hist_delta(before, after):
    """Per-size batch counts from two cumulative histograms."""
    out, prev_a, prev_b = {}, 0, 0
    for k in sorted(after):
        a, b = after[k], before.get(k, 0)
        n = (a - prev_a) - (b - prev_b)
        prev_a, prev_b = a, b
        if n:
            out[k] = n
    return out


def percentile(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * (len(xs) - 1)))))
    return xs[k]


def body_for(rng):
    return json.dumps({"input": sentence(rng)}).encode()


async def embed(c, body):
    """POSTs one embedding request on c: its status, or "conn" (c closed) when
    the connection failed."""
    try:
        st, _ = await c.request("POST", "/v1/embeddings", body)
        return st
    except (ConnectionError, OSError, asyncio.IncompleteReadError):
        c.close()
        return "conn"


def tally(codes, lat, st, t0, t1, measure_from):
    """Counts status st of a request sent at t0 and answered at t1 (its latency
    when it is a 200), unless it was sent during the warm-up."""
    if t0 >= measure_from:
        codes[st] = codes.get(st, 0) + 1
        if st == 200:
            lat.append(t1 - t0)


async def closed_loop(port, clients, duration, warmup, seed):
    lat, codes = [], {}
    stop_at = time.monotonic() + warmup + duration
    measure_from = time.monotonic() + warmup

    async def client(i):
        rng = random.Random(seed * 1000 + i)
        c = Conn(port)
        while time.monotonic() < stop_at:
            t0 = time.monotonic()
            st = await embed(c, body_for(rng))
            tally(codes, lat, st, t0, time.monotonic(), measure_from)
        c.close()

    await asyncio.gather(*(client(i) for i in range(clients)))
    return lat, codes, duration


async def open_loop(port, rate, duration, warmup, seed):
    """Poisson arrivals at `rate`/s; each request on a free pooled connection."""
    lat, codes = [], {}
    rng = random.Random(seed)
    pool, tasks = [], []
    start = time.monotonic()
    measure_from = start + warmup

    async def one(t_sched, body):
        c = pool.pop() if pool else Conn(port)
        st = await embed(c, body)
        if st != "conn":
            pool.append(c)
        tally(codes, lat, st, t_sched, time.monotonic(), measure_from)

    t = start
    while t < start + warmup + duration:
        t += rng.expovariate(rate)
        delay = t - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(one(t, body_for(rng))))
    await asyncio.gather(*tasks)
    for c in pool:
        c.close()
    return lat, codes, duration


def run_point(port, kind, level, args):
    before = asyncio.run(scrape(port))
    if kind == "closed":
        lat, codes, dur = asyncio.run(closed_loop(port, level, args.duration, args.warmup, level))
    else:
        lat, codes, dur = asyncio.run(open_loop(port, level, args.duration, args.warmup, 99))
    after = asyncio.run(scrape(port))
    return {
        "lat": lat,
        "kind": kind, "level": level, "ok": len(lat), "rps": len(lat) / dur,
        "p50": percentile(lat, 50) * 1e3, "p95": percentile(lat, 95) * 1e3,
        "p99": percentile(lat, 99) * 1e3,
        "errors": {str(k): v for k, v in sorted(codes.items(), key=str) if k != 200},
        "batches": hist_delta(before, after),
    }


def merge_rounds(rs):
    lat = [x for r in rs for x in r["lat"]]
    rps = sorted(r["rps"] for r in rs)[len(rs) // 2]
    errors, batches = {}, {}
    for r in rs:
        for k, v in r["errors"].items():
            errors[k] = errors.get(k, 0) + v
        for k, v in r["batches"].items():
            batches[k] = batches.get(k, 0) + v
    return {"kind": rs[0]["kind"], "level": rs[0]["level"], "ok": len(lat), "rps": rps,
            "rounds_rps": [r["rps"] for r in rs],
            "p50": percentile(lat, 50) * 1e3, "p95": percentile(lat, 95) * 1e3,
            "p99": percentile(lat, 99) * 1e3, "errors": errors, "batches": batches}


def fmt_hist(h):
    if not h:
        return "-"
    total = sum(h.values())
    mean = sum(k * v for k, v in h.items()) / total
    top = sorted(h.items(), key=lambda kv: -kv[1])[:3]
    return "mean %.1f; %s" % (mean, ", ".join("%d:%d" % kv for kv in sorted(top)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--serve", required=True, help="the examples/serve binary")
    ap.add_argument("--model", default=None, help="model (default: the server's)")
    ap.add_argument("--concurrency", default="1,4,16,64")
    ap.add_argument("--rate", type=float, default=300.0, help="open-loop arrivals per second")
    ap.add_argument("--duration", type=float, default=4.0,
                    help="seconds measured per point and round")
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--on-args", default="--max-batch 32 --max-delay-us 0 --workers 2 --threads 1 "
                    "--seq-buckets 8,16,24,32,48,64,96,128",
                    help="server flags with batching on")
    ap.add_argument("--off-args", default="--workers 2 --threads 1",
                    help="server flags with batching off")
    ap.add_argument("--modes", default="off,on", help="batching modes to run")
    ap.add_argument("--rounds", type=int, default=3,
                    help="repeats of each point, modes interleaved (median req/s)")
    ap.add_argument("--no-open", action="store_true", help="skip the open-loop point")
    ap.add_argument("--out", default="loadtest", help="output prefix (.md, .png, .json)")
    args = ap.parse_args()
    levels = [int(x) for x in args.concurrency.split(",")]

    modes = args.modes.split(",")
    results = {m: [] for m in modes}
    banners, servers = {}, {}
    try:
        for mode in modes:
            extra = (args.on_args if mode == "on" else args.off_args).split()
            servers[mode] = Server(args.serve, args.model,
                                   ["--batch", mode, "--queue-capacity", "1024"] + extra)
            banners[mode] = servers[mode].banner
        # Both servers stay up; points are measured one at a time, the modes
        # interleaved and repeated (--rounds), so a noisy machine's swings
        # fall on both alike. Throughput: the median round; latency: pooled.
        points = [("closed", c) for c in levels] + ([] if args.no_open else [("open", args.rate)])
        for kind, level in points:
            runs = {m: [] for m in modes}
            for rnd in range(args.rounds):
                for mode in (modes if rnd % 2 == 0 else modes[::-1]):
                    runs[mode].append(run_point(servers[mode].port, kind, level, args))
            for mode in modes:
                r = merge_rounds(runs[mode])
                load = ("c=%-3d" % level) if kind == "closed" else ("open %.0f/s" % level)
                print("batch %-3s %s %8.1f req/s  p50 %7.2f  p95 %7.2f  p99 %7.2f ms  "
                      "errors %s  batches %s  (rounds: %s req/s)"
                      % (mode, load, r["rps"], r["p50"], r["p95"], r["p99"], r["errors"] or "-",
                         fmt_hist(r["batches"]), " ".join("%.0f" % x["rps"] for x in runs[mode])),
                      flush=True)
                results[mode].append(r)
    finally:
        for srv in servers.values():
            srv.stop()

    if modes != ["off", "on"]:
        return
    single = results["off"][0]["p50"] if levels and levels[0] == 1 else float("nan")
    lines = ["| batching | load | req/s | p50 ms | p95 ms | p99 ms | errors | batch sizes (from /metrics) |",
             "|---|---|---:|---:|---:|---:|---|---|"]
    for mode in ("off", "on"):
        for r in results[mode]:
            load = ("%d clients" % r["level"]) if r["kind"] == "closed" else \
                ("open %.0f/s" % r["level"])
            err = ", ".join("%s: %d" % kv for kv in r["errors"].items()) or "0"
            lines.append("| %s | %s | %.1f | %.2f | %.2f | %.2f | %s | %s |" % (
                mode, load, r["rps"], r["p50"], r["p95"], r["p99"], err, fmt_hist(r["batches"])))
    summary = []
    if 64 in levels:
        on = next(r for r in results["on"] if r["kind"] == "closed" and r["level"] == 64)
        off = next(r for r in results["off"] if r["kind"] == "closed" and r["level"] == 64)
        ratio = on["rps"] / off["rps"] if off["rps"] else float("inf")
        summary.append("64 clients: batching on %.1f req/s vs off %.1f req/s = **%.2fx** "
                       "(target >= 3x); p99 on %.2f ms vs single-request p50 %.2f ms = **%.2fx** "
                       "(target <= 2x)" % (on["rps"], off["rps"], ratio, on["p99"], single,
                                           on["p99"] / single))
    md = "\n".join(["# Load test: examples/serve, POST /v1/embeddings, one sentence per request",
                    "", "- server (off): `%s`" % banners["off"],
                    "- server (on): `%s`" % banners["on"],
                    "- %d rounds of %.0f s per point (after %.0f s warm-up each), modes interleaved; "
                    "req/s is the median round, latencies pooled; cache off; distinct "
                    "sentences of 6-14 words" % (args.rounds, args.duration, args.warmup), ""]
                   + lines + [""] + summary + [""])
    with open(args.out + ".md", "w") as f:
        f.write(md)
    with open(args.out + ".json", "w") as f:
        json.dump({m: [{k: v for k, v in r.items() if k != "lat"} for r in rs]
                   for m, rs in results.items()}, f, indent=1)
    series = []
    colors = {"on": (200, 40, 40), "off": (40, 80, 200)}
    for mode in ("on", "off"):
        pts = [r for r in results[mode] if r["kind"] == "closed"]
        series.append(("batch %s p50" % mode, colors[mode], [(r["rps"], r["p50"]) for r in pts]))
        series.append(("batch %s p99" % mode, tuple(min(255, v + 90) for v in colors[mode]),
                       [(r["rps"], r["p99"]) for r in pts], True))
    pngchart.line_chart(args.out + ".png", series,
                        title="LATENCY VS LOAD (1, 4, 16, 64 CLIENTS)",
                        xlabel="THROUGHPUT (REQ/S)", ylabel="LATENCY (MS)")
    print(md)
    print("wrote %s.md, %s.png, %s.json" % (args.out, args.out, args.out))


if __name__ == "__main__":
    main()
