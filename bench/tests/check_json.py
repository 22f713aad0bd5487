#!/usr/bin/env python3
"""check_json.py — validates mopt-bench output with Python's json module.

  check_json.py --json FILE [--journal FILE --journal-lines N] [--min-ok N]

--json: a JSON array; every object has "config" and "ok"; objects with ok
true have the figures (load_ms, first_run_ms, latency_ms{p50,p90,p95,p99,max,
mean}, throughput_per_s, items_per_s, peak_rss_bytes, arena_bytes,
peak_bytes) as numbers, ordered percentiles, and config {model, precision,
backend, threads, opt_level, shapes}. --journal: JSON lines, each such an
object plus timestamp (ISO 8601 UTC), git_revision and cpu_model.
"""
import argparse
import json
import re
import sys

FIGURES = ["load_ms", "first_run_ms", "throughput_per_s", "items_per_s", "peak_rss_bytes",
           "arena_bytes", "peak_bytes"]
LATENCY = ["p50", "p90", "p95", "p99", "max", "mean"]
CONFIG = ["model", "precision", "backend", "threads", "opt_level", "shapes"]
errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_result(o, where):
    check(isinstance(o, dict), f"{where}: not an object")
    if not isinstance(o, dict):
        return False
    check(isinstance(o.get("ok"), bool), f"{where}: 'ok' missing or not a bool")
    cfg = o.get("config")
    check(isinstance(cfg, dict), f"{where}: 'config' missing")
    if isinstance(cfg, dict):
        for k in CONFIG:
            check(k in cfg, f"{where}: config.{k} missing")
        check(isinstance(cfg.get("shapes"), dict), f"{where}: config.shapes not an object")
    if not o.get("ok"):
        check(isinstance(o.get("error"), str) and o["error"], f"{where}: failed without 'error'")
        return False
    for k in FIGURES:
        check(is_num(o.get(k)) and o[k] >= 0, f"{where}: '{k}' missing or not a number >= 0")
    lat = o.get("latency_ms")
    check(isinstance(lat, dict), f"{where}: 'latency_ms' missing")
    if isinstance(lat, dict):
        for k in LATENCY:
            check(is_num(lat.get(k)), f"{where}: latency_ms.{k} missing")
        if all(is_num(lat.get(k)) for k in LATENCY):
            check(lat["p50"] <= lat["p90"] <= lat["p95"] <= lat["p99"] <= lat["max"],
                  f"{where}: percentiles out of order: {lat}")
            check(lat["mean"] <= lat["max"], f"{where}: mean > max")
    if isinstance(cfg, dict) and isinstance(cfg.get("shapes"), dict):
        for name, dims in cfg["shapes"].items():
            check(isinstance(dims, list) and all(isinstance(d, int) for d in dims),
                  f"{where}: config.shapes.{name} is not a list of ints")
    prof = o.get("profile")
    if prof is not None:
        for table in ("by_op", "by_node"):
            rows = prof.get(table)
            check(isinstance(rows, list), f"{where}: profile.{table} missing")
            for r in rows or []:
                check(is_num(r.get("total_ms")) and is_num(r.get("share")),
                      f"{where}: profile.{table} row without total_ms/share")
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--journal")
    ap.add_argument("--journal-lines", type=int)
    ap.add_argument("--min-ok", type=int, default=1)
    ap.add_argument("--expect-results", type=int)
    a = ap.parse_args()
    if a.json:
        with open(a.json) as f:
            data = json.load(f)
        check(isinstance(data, list), "--json: top level is not an array")
        ok = sum(bool(check_result(o, f"{a.json}[{i}]")) for i, o in enumerate(data))
        check(ok >= a.min_ok, f"{a.json}: {ok} successful results, want >= {a.min_ok}")
        if a.expect_results is not None:
            check(len(data) == a.expect_results,
                  f"{a.json}: {len(data)} results, want {a.expect_results}")
    if a.journal:
        with open(a.journal) as f:
            lines = [ln for ln in f.read().split("\n") if ln]
        if a.journal_lines is not None:
            check(len(lines) == a.journal_lines,
                  f"{a.journal}: {len(lines)} lines, want {a.journal_lines}")
        for i, ln in enumerate(lines):
            where = f"{a.journal}:{i + 1}"
            try:
                o = json.loads(ln)
            except json.JSONDecodeError as e:
                errors.append(f"{where}: not JSON: {e}")
                continue
            check_result(o, where)
            check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", str(o.get("timestamp"))),
                  f"{where}: timestamp not ISO 8601 UTC: {o.get('timestamp')!r}")
            check(isinstance(o.get("git_revision"), str) and o["git_revision"],
                  f"{where}: git_revision missing")
            check(isinstance(o.get("cpu_model"), str) and o["cpu_model"],
                  f"{where}: cpu_model missing")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print("ok")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
