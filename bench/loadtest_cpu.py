"""loadtest_cpu.py — the server's CPU time per request (utime+stime of the
server process from /proc, over all requests of the point, warm-up included)
at 64 closed-loop clients, batching off and on interleaved, 3 rounds: a
measure that the machine's other load disturbs far less than req/s. Run from
the project root after building: python3 bench/loadtest_cpu.py"""
import sys, os, asyncio
sys.path.insert(0, "bench")
import loadtest
class A: duration=3.0; warmup=0.5
def cpu(pid):
    f=open("/proc/%d/stat"%pid).read().rsplit(")",1)[1].split()
    return (int(f[11])+int(f[12]))/os.sysconf("SC_CLK_TCK")
on="--max-batch 32 --max-delay-us 0 --workers 2 --threads 1 --seq-buckets 8,16,24,32,48,64,96,128".split()
off="--workers 2 --threads 1".split()
srv={m: loadtest.Server("build/examples/serve/serve", None, ["--batch", m, "--queue-capacity", "1024"]+a) for m,a in (("off",off),("on",on))}
try:
    for rnd in range(3):
        for m in ("off","on"):
            s=srv[m]; c0=cpu(s.proc.pid)
            r=loadtest.run_point(s.port, "closed", 64, A)
            c1=cpu(s.proc.pid)
            n=r["ok"]+sum(r["errors"].values())
            # cpu includes warmup requests: count them via batches
            nb=sum(k*v for k,v in r["batches"].items())
            print("%-3s %7.0f req/s  server CPU %.0f us per request (%d requests incl. warm-up)" % (m, r["rps"], (c1-c0)/nb*1e6, nb), flush=True)
finally:
    for s in srv.values(): s.stop()
