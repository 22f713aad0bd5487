/*
 * prof.h — aggregation of libmopt's per-node profile over many runs, into
 * per-node and per-op-type rows for the top-N tables. Plain data in, plain
 * data out: the runner feeds it what mopt_session_profile_* returned.
 */
#ifndef MOPT_BENCH_PROF_H
#define MOPT_BENCH_PROF_H

#include <stddef.h>
#include <stdint.h>

typedef struct bench_prof_row {
    char *node;    /* node name (by-node rows); NULL in by-op rows */
    char *op;      /* op type */
    char *kernel;  /* kernel of the node's last run; NULL in by-op rows */
    int64_t ns;    /* total time over all recorded runs */
    int64_t flops; /* total flops over all recorded runs (0: not meaningful) */
    int64_t calls; /* executions recorded */
    int64_t nodes; /* by-op rows: distinct nodes of this op type */
} bench_prof_row;

typedef struct bench_prof {
    bench_prof_row *rows; /* by node, in first-seen (execution) order */
    size_t n, cap;
    int64_t runs; /* runs recorded with bench_prof_end_run */
} bench_prof;

void bench_prof_init(bench_prof *p);
void bench_prof_free(bench_prof *p);

/* Adds one node execution. index is the node's position in this run's
 * profile (a hint for a fast lookup); node may be NULL or "" (then
 * "<op>#<index>" names it). Returns 0 or -1 (out of memory). */
int bench_prof_add(bench_prof *p, size_t index, const char *node, const char *op,
                   const char *kernel, int64_t ns, int64_t flops);
/* Marks the end of one run's worth of bench_prof_add calls. */
void bench_prof_end_run(bench_prof *p);

/* Sum of ns over every node. */
int64_t bench_prof_total_ns(const bench_prof *p);

/* Rows sorted by total time, descending (ties by name), as a new array of
 * rows whose strings are borrowed from p (free only the array). By op type:
 * one row per op type. Return 0 or -1 (out of memory; *rows NULL). */
int bench_prof_sorted_nodes(const bench_prof *p, bench_prof_row **rows, size_t *n);
int bench_prof_by_op(const bench_prof *p, bench_prof_row **rows, size_t *n);

/* GFLOP/s of a row (flops / ns), or 0 when flops or ns is 0. */
double bench_prof_gflops(const bench_prof_row *r);

#endif
