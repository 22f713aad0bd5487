/*
 * mopt_cli.h — helpers of mopt.c shared with the other commands' files of
 * the `mopt` tool (compare.c). Not part of libmopt: the tool uses only the
 * public API in <mopt/mopt.h>.
 */
#ifndef MOPT_TOOLS_CLI_H
#define MOPT_TOOLS_CLI_H

#include <mopt/mopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_USAGE 2

/* Reports a failed libmopt call; returns the exit code 1. */
int fail(mopt_status st);
/* Reports a bad command line; returns the exit code 2. */
#if defined(__GNUC__) || defined(__clang__)
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#else
int usage_error(const char *fmt, ...);
#endif
int parse_i64(const char *s, int64_t *out);
/* Matches argv[*i] against "--name VALUE" or "--name=VALUE": 1 and *value on
 * a match, 0 for another argument, -1 when the value is missing (printed). */
int flag_value(int argc, char **argv, int *i, const char *name, const char **value);
/* A flag whose value is kept as given: flag_value(name) stores it in *value. */
typedef struct string_flag {
    const char *name;
    const char **value;
} string_flag;
/* flag_value for each flag of the list (ended by {NULL, NULL}) in turn: the
 * result of the first that matches argv[*i], 0 when none does. */
int string_flags(int argc, char **argv, int *i, const string_flag *flags);
/* The last case of a command's argument loop (mopt CMD ... MODEL): arg is
 * an unknown flag, the model (the first other argument, stored in *model),
 * or a second model; 0, or the usage error's exit code. */
int model_arg(const char *cmd, const char *arg, const char **model);

typedef struct common_opts {
    const char *model;
    const char *options_file;
    const char *opt_level, *threads, *precision, *backend;
    const char *memory_limit; /* --memory-limit SIZE, or NULL for the default */
} common_opts;

/* Builds the option set from --options and the individual flags. Returns 0,
 * or the exit code to stop with. */
int make_options(const common_opts *c, mopt_options **out);

/* Element i of t as a double (NaN for strings and unknown types). */
double element(const mopt_tensor *t, int64_t i);

/* Creates dir and its parents; 0 or -1 (errno). */
int make_dirs(const char *dir);

/* `mopt tune` (tune.c). */
int cmd_tune(int argc, char **argv);

/* `mopt compare` (compare.c). */
int cmd_compare(int argc, char **argv);

/* Golden sets / input sets (compare.c): DIR's sets are its subfolders
 * (test_data_set_N/ with input_N.npy|.pb or <input name>.npy) and its lone
 * .npy/.pb files, in natural order. */
typedef struct golden_set {
    char *name; /* shown in the table */
    char *path; /* a folder, or one .npy/.pb file (the only input) */
    int is_file;
} golden_set;
int list_sets(const char *dir, golden_set **out, size_t *n_out);
void free_sets(golden_set *s, size_t n);
/* PREFIX_<idx>.npy, PREFIX_<idx>.pb or (inputs) <name>.npy in dir, or NULL. */
char *find_tensor_file(const char *dir, const char *prefix, size_t idx, const char *name);

/* `mopt quantize-check` (quantize_check.c): the per-layer INT8 fallback. */
int cmd_quantize_check(int argc, char **argv);

/* `mopt calibrate` (calibrate.c). */
int cmd_calibrate(int argc, char **argv);

/* What `mopt compare` takes, for other commands (mopt tune): models, golden
 * set, budget, options for both sides (--options, then common_sets) and for
 * one side (ref_options/ref_sets, test_options/test_sets). top_k 0: 5. */
typedef struct compare_args {
    const char *ref_model, *test_model, *golden, *budget;
    const char *options, *ref_options, *test_options, *threads, *memory_limit;
    const char *const *common_sets, *const *ref_sets, *const *test_sets; /* KEY=VALUE */
    int n_common, n_ref, n_test;
    size_t top_k;
    int recompute;
    int per_layer;       /* also the per-layer report (expose_values=1 on both sides) */
    double layer_cosine; /* its threshold; 0: 0.99 */
    size_t max_sets;     /* > 0: only the golden set's first max_sets input sets */
} compare_args;

/* One tensor of the per-layer report (compare_args.per_layer): its name and
 * cosine against REF, worst and mean over the golden sets. */
typedef struct compare_layer {
    char *name;
    double worst_cos, mean_cos;
} compare_layer;

/* The figures a caller of compare_run gets back. */
typedef struct compare_summary {
    double worst_cosine;  /* lowest worst-case cosine over the outputs (NaN: none) */
    double mean_cosine;   /* lowest mean (over the golden sets) cosine of an output (NaN: none) */
    double worst_max_abs; /* largest max_abs over the outputs */
    size_t rules, violations;
    char violation[512]; /* the first "budget violated: ..." line, or "" */
    /* the tightest rule: its slack relative to its limit (value - limit for a
     * min rule, limit - value for a max one, over max(|limit|, 1e-12);
     * < 0 = violated, -INFINITY for NaN), the value and the rule's text */
    double margin, margin_value;
    double margin_limit; /* the tightest rule's limit, and whether it is a min rule */
    int margin_is_min;
    double margin_se; /* its value's standard error over the golden sets (sd / sqrt(n)) for
                       * a mean rule; 0 for a worst rule or one set */
    char margin_rule[96];
    compare_layer *layers; /* per_layer: the compared tensors in REF's order (malloc'd: */
    size_t n_layers;       /* compare_summary_free) */
} compare_summary;

void compare_summary_free(compare_summary *sum);

/* Runs the comparison, printing the table and the budget lines to out.
 * Returns 0 (the budget holds), 1 (violated) or 2 (an error, on stderr);
 * fills *sum when given. */
int compare_run(const compare_args *a, FILE *out, compare_summary *sum);

#endif
