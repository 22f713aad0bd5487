/*
 * cli.h — the mopt-bench command line, parsed into a base configuration plus
 * output settings. Pure parsing: opens no files, loads no models.
 */
#ifndef MOPT_BENCH_CLI_H
#define MOPT_BENCH_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "config.h"

typedef struct bench_cli {
    const char *target; /* MODEL.onnx or SCENARIO.yaml (borrowed from argv) */
    int is_scenario;
    bench_config base;        /* the configuration, or the scenario's defaults */
    const char *json_path;    /* --json, borrowed */
    const char *journal_path; /* --journal, borrowed */
    int progress;             /* -1: when stderr is a terminal; 0: never */
    unsigned set;             /* BENCH_CLI_* bits: options given explicitly */
    int help;
    int version;
} bench_cli;

enum {
    BENCH_CLI_PRECISION = 1u << 0,
    BENCH_CLI_BACKEND = 1u << 1,
    BENCH_CLI_THREADS = 1u << 2,
    BENCH_CLI_OPT_LEVEL = 1u << 3,
    BENCH_CLI_BATCH = 1u << 4,
    BENCH_CLI_SEQ = 1u << 5,
    BENCH_CLI_WARMUP = 1u << 6,
    BENCH_CLI_ITERATIONS = 1u << 7, /* --iterations or --duration */
    BENCH_CLI_INT_RANGE = 1u << 8,
    BENCH_CLI_SEED = 1u << 9,
    BENCH_CLI_PROFILE = 1u << 10, /* --profile or --top */
    BENCH_CLI_TOP = 1u << 11
};

/* Parses argv[1..argc-1]. Returns 0, or -1 with a message in err. */
int bench_cli_parse(int argc, char **argv, bench_cli *out, char *err, size_t errlen);
void bench_cli_free(bench_cli *cli);
/* Applies the options given explicitly on the command line (and every
 * --input/--shape/--dim) on top of a scenario's configuration c, so that the
 * command line wins. Returns 0 or -1 (out of memory). */
int bench_cli_apply(const bench_cli *cli, bench_config *c);
void bench_cli_usage(FILE *f);

#endif
