/*
 * report.h — writing benchmark results: the human-readable summary and
 * profile tables, the --json array and the --journal JSON lines.
 */
#ifndef MOPT_BENCH_REPORT_H
#define MOPT_BENCH_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "result.h"

/* Machine and build facts stamped on journal lines (sysinfo.c fills them). */
typedef struct bench_env {
    char timestamp[32];
    char git_revision[64];
    char cpu_model[256];
    int cpu_count;
    char mopt_version[32];
} bench_env;

/* Fills env from the running system (sysinfo.c + mopt_version()). */
void bench_env_collect(bench_env *env);

/* A minimal streaming JSON writer: commas and escaping handled here. */
typedef struct bench_json {
    FILE *f;
    int depth;
    int first[32]; /* per level: nothing written yet */
    int pretty;
} bench_json;

void bench_json_init(bench_json *j, FILE *f, int pretty);
void bench_json_begin_object(bench_json *j);
void bench_json_end_object(bench_json *j);
void bench_json_begin_array(bench_json *j);
void bench_json_end_array(bench_json *j);
void bench_json_key(bench_json *j, const char *key);  /* inside an object, before a value */
void bench_json_string(bench_json *j, const char *s); /* NULL writes null */
void bench_json_int(bench_json *j, int64_t v);
void bench_json_double(bench_json *j, double v); /* non-finite writes null */
void bench_json_bool(bench_json *j, int v);
void bench_json_null(bench_json *j);

/* One result as a JSON object (schema in bench/README.md). env may be NULL
 * (then no timestamp/git/cpu keys); top limits the profile rows. */
void bench_report_json_result(bench_json *j, const bench_result *r, const bench_env *env, int top);

/* Writes all results as a JSON array to path. Returns 0, or -1 with err. */
int bench_report_write_json(const char *path, const bench_result *rs, size_t n,
                            const bench_env *env, char *err, size_t errlen);
/* Appends one compact JSON line per result to path. Returns 0 or -1. */
int bench_report_append_journal(const char *path, const bench_result *rs, size_t n,
                                const bench_env *env, char *err, size_t errlen);

/* The per-configuration summary block. */
void bench_report_print_summary(FILE *f, const bench_result *r);
/* Top-N tables by op type and by node (nothing if r was not profiled). */
void bench_report_print_profile(FILE *f, const bench_result *r, int top);
/* One line per configuration, for comparing several (scenario runs). */
void bench_report_print_table(FILE *f, const bench_result *rs, size_t n);

/* "12.3 MiB" style byte counts. */
void bench_format_bytes(char *buf, size_t len, int64_t bytes);

#endif
