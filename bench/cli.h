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
    bench_config base; /* the configuration, or the scenario's defaults */
    const char *json_path;    /* --json, borrowed */
    const char *journal_path; /* --journal, borrowed */
    int progress;             /* -1: when stderr is a terminal; 0: never */
    int help;
    int version;
} bench_cli;

/* Parses argv[1..argc-1]. Returns 0, or -1 with a message in err. */
int bench_cli_parse(int argc, char **argv, bench_cli *out, char *err, size_t errlen);
void bench_cli_free(bench_cli *cli);
void bench_cli_usage(FILE *f);

#endif
