/*
 * config.h — one benchmark configuration of mopt-bench (what to load, how to
 * feed it, how long to measure) and the helpers that build, copy and free it.
 * Filled from the command line (cli.c) or a scenario YAML (scenario.c);
 * consumed by run.c. Plain data: no libmopt handles live here.
 */
#ifndef MOPT_BENCH_CONFIG_H
#define MOPT_BENCH_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_MAX_RANK 8

/* A shape for a random input (--shape NAME=DIMS): each dim is a number or a
 * symbol (syms[i] != NULL) resolved from batch/seq/--dim at run time. */
typedef struct bench_shape {
    char *name;
    int rank;
    int64_t dims[BENCH_MAX_RANK];
    char *syms[BENCH_MAX_RANK];
} bench_shape;

/* A value for a symbolic dimension (--dim SYMBOL=N). */
typedef struct bench_dim {
    char *name;
    int64_t value;
} bench_dim;

/* A named string: an input read from a file (--input NAME=FILE.npy: key the
 * input's name, value the path) or a further libmopt option (KEY=VALUE,
 * mopt_options_set_string). */
typedef struct bench_kv {
    char *key;
    char *value;
} bench_kv;

typedef struct bench_config {
    char *name;       /* optional label (scenario "name"), NULL if none */
    char *model;      /* path of the .onnx file */
    bench_kv *inputs; /* inputs read from files: key the input's name, value the path */
    size_t n_inputs;
    bench_shape *shapes;
    size_t n_shapes;
    bench_dim *dims;
    size_t n_dims;
    char *precision;        /* NULL: library default */
    char *backend;          /* NULL: library default */
    int64_t threads;        /* -1: library default */
    int64_t opt_level;      /* -1: library default */
    int64_t batch;          /* -1: not given; else the value of the symbol "batch" */
    int64_t seq;            /* -1: not given; else the value of the symbol "seq" */
    int64_t warmup;         /* runs after the first run, before measuring */
    int64_t iterations;     /* measured runs (used when duration_s <= 0) */
    double duration_s;      /* > 0: measure for this many seconds instead */
    int64_t int_lo, int_hi; /* random integer inputs are drawn from [lo, hi) */
    uint64_t seed;
    char *profile;     /* NULL or "": off; "1": timings only; else a trace path */
    bench_kv *options; /* further options, set after the ones above */
    size_t n_options;
    int64_t top; /* rows of the profile tables */
} bench_config;

#define BENCH_DEFAULT_WARMUP 5
#define BENCH_DEFAULT_ITERATIONS 100
#define BENCH_DEFAULT_SEED 20240601u
#define BENCH_DEFAULT_TOP 10

/* Sets every field to its default (no model, library defaults, 5 warm-up
 * runs, 100 iterations, integers in [0, 100), the fixed seed, top 10). */
void bench_config_init(bench_config *c);
/* Releases what c owns and re-initializes it. */
void bench_config_free(bench_config *c);
/* Deep copy; returns 0 or -1 (out of memory; dst is then left initialized). */
int bench_config_copy(bench_config *dst, const bench_config *src);

/* Setters that copy their strings and replace an existing entry of the same
 * name. Return 0 or -1 (out of memory). */
int bench_config_set_str(char **field, const char *value);
int bench_config_add_input(bench_config *c, const char *name, const char *path);
int bench_config_add_dim(bench_config *c, const char *name, int64_t value);
int bench_config_add_option(bench_config *c, const char *key, const char *value);
/* Takes ownership of *s (its strings) on success and on failure. */
int bench_config_add_shape(bench_config *c, bench_shape *s);

/* Parses a dims list: "1x3x224x224", "1,128", "batch,seq", "[batch, 3, 32, 32]"
 * (numbers >= 0 or symbol names), into s->rank/dims/syms (s->name untouched).
 * Returns 0, or -1 with a message in err. */
int bench_shape_parse_dims(const char *text, bench_shape *s, char *err, size_t errlen);
void bench_shape_free(bench_shape *s);
/* Deep copy; 0 or -1 (out of memory; dst is then empty). */
int bench_shape_copy(bench_shape *dst, const bench_shape *src);

/* Parses a whole decimal int64 ("12", "-3"); 0 or -1. */
int bench_parse_int(const char *text, int64_t *out);
/* Parses a finite decimal number; 0 or -1. */
int bench_parse_double(const char *text, double *out);

/* A one-line description of the configuration, e.g.
 * "model.onnx batch=8 seq=128 threads=4 fp32", written into buf. */
void bench_config_label(const bench_config *c, char *buf, size_t len);

#endif
