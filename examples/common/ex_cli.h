/*
 * ex_cli.h — what every example host program (embed, detect, ocr) needs
 * around its pipeline: a monotonic clock in milliseconds for the stage
 * timings, error reports on stderr prefixed with the program's name, and a
 * strict parser of numeric option values.
 * Define EX_PROG ("ocr", ...) before including it. Header only, public API.
 */
#ifndef MOPT_EXAMPLES_EX_CLI_H
#define MOPT_EXAMPLES_EX_CLI_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mopt/mopt.h>

#ifndef EX_PROG
#error "define EX_PROG (the program's name) before including ex_cli.h"
#endif

static inline double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* "PROG: what: detail" on stderr; returns 1 (the exit status). */
static inline int fail(const char *what, const char *detail) {
    fprintf(stderr, EX_PROG ": %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    return 1;
}

/* "PROG: what: STATUS (last error)" on stderr; returns 1. */
static inline int fail_mopt(const char *what, mopt_status st) {
    fprintf(stderr, EX_PROG ": %s: %s (%s)\n", what, mopt_status_string(st), mopt_last_error());
    return 1;
}

/* Parses a number with nothing after it; false on junk or out of [lo, hi]. */
static inline bool parse_double(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) return false;
    *out = v;
    return true;
}

#endif
