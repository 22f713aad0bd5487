/*
 * mopt.c — the `mopt` command-line tool: inspect a model (`mopt info`), run
 * it on .npy inputs or generated ones (`mopt run`), and save it optimized as
 * a .mopt file (`mopt optimize`); measure the quality of one model or
 * option set against another on a golden set (`mopt compare`, compare.c).
 * MODEL is an .onnx or a .mopt file.
 *
 * It is also an example host program: it uses only the public API in
 * <mopt/mopt.h> and the standard C library, never libmopt's internals
 * (compare.c compiles lib/io/yaml_tree.c in, a libyaml reader).
 *
 * Exit codes: 0 success, 1 a libmopt call failed (the message is
 * "mopt: <status string>: <mopt_last_error()>"), 2 a bad command line.
 * `mopt compare`: 0 the budget holds, 1 violated, 2 any error.
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <mopt/mopt.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "mopt_cli.h"

#define DEFAULT_SEED 0x6d6f7074u /* "mopt" */

/* In parts, joined by print_usage (one literal would pass the 4095
 * characters C11 promises). */
static const char k_usage[] =
    "usage: mopt <command> [arguments]\n"
    "\n"
    "MODEL is an ONNX model or a .mopt file written by 'mopt optimize' (told\n"
    "apart by their content).\n"
    "\n"
    "commands:\n"
    "  info MODEL [--json] [--opt-level N] [--options FILE.yaml] [--memory-limit SIZE]\n"
    "            [--plan [--dim SYMBOL=N]... [--shape NAME=D0,D1,...]...]\n"
    "      Print the model's inputs and outputs (with symbolic shapes such as\n"
    "      input_ids: i64 [batch, seq]), opsets, node count, operator histogram\n"
    "      and parameter count/bytes. --json prints one JSON object with the keys\n"
    "      inputs, outputs (arrays of {name, dtype, shape}; a shape is an array of\n"
    "      numbers, symbol names, or \"?\" for unknown dims, or null for an unknown\n"
    "      rank), nodes, op_histogram, parameters {count, bytes}, opset, opsets.\n"
    "      A model that parses but cannot run (unsupported operators, failing\n"
    "      shape inference) is still described, followed by the nodes that cannot\n"
    "      run, nested ones by path (If_3/then_branch/LSTM_7) (JSON key\n"
    "      cannot_run: array of {node, op, status, message}); --plan is skipped.\n"
    "      --plan also runs the model once on generated inputs (shapes as for\n"
    "      'mopt run') and prints its memory plan: the arena bytes next to the\n"
    "      sum of all intermediate tensors (JSON key plan {arena_bytes,\n"
    "      intermediate_bytes, inputs}).\n"
    "\n"
    "  run MODEL [--input NAME=FILE.npy]... [--output-dir DIR] [--opt-level N]\n"
    "            [--threads N] [--precision P] [--backend B] [--options FILE.yaml]\n"
    "            [--shape NAME=D0,D1,...]... [--dim SYMBOL=N]... [--seed N]\n"
    "            [--memory-limit SIZE]\n"
    "      Run the model once and write DIR/<output name>.npy for every output\n"
    "      ('/' and '\\' in names become '_'; default DIR is \".\"), printing each\n"
    "      output's name, dtype, shape and min/max/mean/std.\n"
    "      Input files are .npy or ONNX TensorProto .pb. A model input without\n"
    "      --input gets pseudo-random data from a fixed seed (--seed, default\n"
    "      1836019828): floats uniform in [-1, 1), integers uniform in [0, 10),\n"
    "      bools 0 or 1. Its shape is --shape NAME=... if given; otherwise fixed\n"
    "      dims are kept and each symbolic dim is the --dim SYMBOL=N value, or 1.\n"
    "      --options loads a YAML mapping of libmopt options first; the flags\n"
    "      --opt-level (0..3, default 3), --threads (0 = all cores), --precision\n"
    "      (fp32, bf16, int8) and --backend (auto, ref, cpu, onednn, openblas)\n"
    "      override it.\n"
    "      --memory-limit SIZE (bytes, or with K, M, G, T: 512M, 4G; 0 = none)\n"
    "      bounds what libmopt may allocate to load the model and for a run\n"
    "      (the memory_limit option); the default is half of the physical\n"
    "      memory. Random inputs are refused when they would take more.\n"
    "\n"
    "  optimize MODEL -o OUT.mopt [--opt-level N] [--precision P] [--report]\n"
    "           [--options FILE.yaml]\n"
    "      Load and optimize MODEL and save the result as a .mopt file, which\n"
    "      loads without optimizing again and maps its weights from the file.\n"
    "      --report prints, for each pass, its time, the node count before and\n"
    "      after and the rewrites applied.\n"
    "\n";
static const char k_usage_calibrate[] =
    "  calibrate MODEL --inputs DIR -o TABLE.yaml [--method minmax|percentile|entropy]\n"
    "            [--percentile P] [--bias-correction] [--rounding-correction]\n"
    "            [--threads N] [--options FILE.yaml]\n"
    "      Run MODEL on every input set of DIR (as for 'compare --golden') and\n"
    "      write the range of each f32 input of MatMul/Gemm/Conv (min/max,\n"
    "      percentile P (99.99), KL entropy), with the u8 scale and zero point\n"
    "      of --method (minmax), for precision=int8 calibration=TABLE.yaml.\n"
    "      --bias-correction also writes each channel's mean: static int8 then\n"
    "      corrects each Conv's bias for the mean error of its s8 weights.\n"
    "      --rounding-correction (one more run over the sets) also writes each\n"
    "      channel's mean rounding error, Q(x) - x with the table's scale and\n"
    "      zero point: static int8 folds it through each Conv's weights into\n"
    "      the bias (inputs with flat regions, e.g. document images, make that\n"
    "      rounding a bias; PP-OCRv4 det: cosine 0.978 -> 0.997).\n"
    "\n";

static const char k_usage_quantize_check[] =
    "  quantize-check MODEL --golden DIR --budget FILE.yaml [--calibration TABLE]\n"
    "                 [--max-fallbacks N] [-o OPTIONS.yaml] [--set KEY=VALUE]...\n"
    "                 [--threads N] [--runs K] [--report FILE] [--fallback fp32|bf16]\n"
    "                 [--rank output|layers|alone|cost] [--rank-sets K] [--margin M]\n"
    "                 [--confidence Z] [--time-rounds R]\n"
    "      The per-layer INT8 fallback: checks precision=int8 (static with\n"
    "      --calibration) against FP32 on the golden set with the budget (as\n"
    "      'compare'). When it fails, ranks the int8 nodes: --rank output (the\n"
    "      default) runs each node alone int8 (one golden-set run per node) and\n"
    "      charges it the noise it puts on the outputs (1 - mean cosine), on\n"
    "      the golden set's first K input sets (--rank-sets, default 4; 0 all);\n"
    "      --rank layers charges each the error it adds in one per-layer run\n"
    "      of all-int8 (fast, but blind to what a node does downstream);\n"
    "      --rank alone measures the budget's metric with each node alone int8;\n"
    "      --rank cost divides output's noise by the time int8 saves on the node\n"
    "      (profiler, min of R alternating FP32 and int8 runs, --time-rounds,\n"
    "      default 20, on the first golden set's first sample): nodes int8\n"
    "      does not speed up by 10% go first, noisiest\n"
    "      first, then noise per microsecond saved in steps of 2^(1/2), noisiest\n"
    "      first within a step (so that timing noise rarely reorders them).\n"
    "      Then finds the fewest top-ranked nodes to keep in FP32 (int8_exclude)\n"
    "      for the budget to hold (bisection; greedy with alone), at most N\n"
    "      (default half the int8 nodes). --margin M: the search also requires\n"
    "      the tightest rule a relative slack >= M ((value - limit) / |limit|,\n"
    "      e.g. 0.001 for argmax >= 0.996 means >= 0.997) so that the choice\n"
    "      made on the golden set holds on other inputs too. --confidence Z: a\n"
    "      mean rule must hold with its value less Z standard errors over the\n"
    "      golden sets (a lower confidence bound; 1.645: one-sided 95%).\n"
    "      It prints the fallback report with the p50 of all-int8, with the\n"
    "      fallbacks and FP32 (5 rounds of K runs, default 20; 0 = no timing).\n"
    "      -o writes the options (precision, calibration, --set, int8_exclude) as YAML;\n"
    "      --report writes the report to FILE instead of stdout.\n"
    "      Exit status: 0 the budget holds, 1 refused (not even N fallbacks meet\n"
    "      it; nothing written), 2 any error.\n"
    "\n";

static const char k_usage_tail[] =
    "  check MODEL   List every node that keeps MODEL from loading (unsupported\n"
    "                operators, attributes or dtypes; invalid nodes), not just the first.\n"
    "  ops           List the operators this libmopt supports, one per line.\n"
    "  version       Print the version of mopt and of the libmopt it runs with.\n"
    "  help, --help  Print this text.\n"
    "\n"
    "Flags also accept the --flag=value form. Exit status: 0 on success, 1 when\n"
    "libmopt reports an error, 2 for a bad command line.\n";

static const char k_usage_compare[] =
    "  compare REF TEST --golden DIR [--budget FILE.yaml] [--set KEY=VALUE]...\n"
    "          [--ref-set KEY=VALUE]... [--test-set KEY=VALUE]... [--options FILE.yaml]\n"
    "          [--ref-options FILE.yaml] [--test-options FILE.yaml] [--threads N]\n"
    "          [--memory-limit SIZE] [--top-k K] [--recompute]\n"
    "          [--per-layer [--layer-cosine C]]\n"
    "      Run REF and TEST (two models, or one model twice with different\n"
    "      options: --set for both, --ref-set/--test-set for one) on every input\n"
    "      set of the golden set DIR: folders DIR/<set>/ holding input_<i>.npy\n"
    "      (or .pb, or <input name>.npy) and optionally the references\n"
    "      output_<j>.npy (used instead of REF's outputs unless --recompute), or\n"
    "      lone .npy files in DIR for a one-input model. Prints per output and\n"
    "      metric (max_abs, max_rel, cosine; top1 and topK, K = --top-k, default\n"
    "      5, along the last axis of rank <= 2 outputs; per-position argmax of\n"
    "      rank >= 3 outputs; spearman of the pairwise cosine similarities of all\n"
    "      last-axis rows) the worst value, the set where it occurred and the\n"
    "      mean. --budget checks rules (see tools/mopt/README.md). Exit status:\n"
    "      0 the budget holds, 1 it is violated, 2 any error. --per-layer runs\n"
    "      both again with their intermediate tensors exposed and lists, in\n"
    "      REF's topological order, each tensor's cosine and max abs error\n"
    "      (paired by ONNX name), marking the first one with cosine < C\n"
    "      (default 0.99), and the tensors that cannot be paired.\n"
    "\n";

static const char k_usage_tune[] =
    "  tune MODEL --inputs DIR --target p50|p95|throughput -o OUT [--golden DIR]\n"
    "       [--budget FILE.yaml] [--batch N,...] [--threads N,...] [--max-minutes M]\n"
    "       [--rounds R] [--runs K] [--min-gain F]\n"
    "      Measure MODEL with the library defaults, try opt levels, backends,\n"
    "      precisions (bf16, int8 dynamic, int8 static with a calibration table\n"
    "      made on --inputs), --threads and --batch values stage by stage,\n"
    "      check each against the quality budget (as 'mopt compare' on --golden,\n"
    "      default --inputs; default budget: cosine >= 0.999) and keep the best\n"
    "      that holds it and is faster beyond noise (R interleaved rounds of K\n"
    "      runs, default 10 and about 60 ms; --min-gain default 0.03). Stops trying\n"
    "      after --max-minutes (default 10; 0 = no limit). Writes OUT/model.mopt,\n"
    "      options.yaml, report.md, latency_cdf.png, op_times.png,\n"
    "      quality_speed.png (see tools/mopt/README.md).\n"
    "\n";

static void print_usage(FILE *f) {
    fputs(k_usage, f);
    fputs(k_usage_compare, f);
    fputs(k_usage_calibrate, f);
    fputs(k_usage_tune, f);
    fputs(k_usage_quantize_check, f);
    fputs(k_usage_tail, f);
}

/* ---- errors --------------------------------------------------------------- */

/* Reports a failed libmopt call; returns the exit code 1. */
int fail(mopt_status st) {
    fprintf(stderr, "mopt: %s: %s\n", mopt_status_string(st), mopt_last_error());
    return EXIT_FAILURE;
}

/* Reports a bad command line; returns the exit code 2. */
int usage_error(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "mopt: %s: ", mopt_status_string(MOPT_ERR_INVALID_ARGUMENT));
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun 'mopt help' for usage.\n");
    return EXIT_USAGE;
}

/* ---- small helpers -------------------------------------------------------- */

int parse_i64(const char *s, int64_t *out) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0') return 0;
    *out = (int64_t)v;
    return 1;
}

/* Parses a size in bytes: digits with an optional K, M, G or T suffix
 * (powers of 1024; "512M", "4G"; a trailing "B" or "iB" is accepted).
 * Returns 1, or 0 for anything else or an overflow. */
static int parse_size(const char *s, int64_t *out) {
    char *end = NULL;
    errno = 0;
    if (*s < '0' || *s > '9') return 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return 0;
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    case 't':
    case 'T':
        shift = 40;
        end++;
        break;
    default: break;
    }
    if (shift && *end == 'i') end++;
    if (*end == 'B' || (shift && *end == 'b')) end++;
    if (*end != '\0' || v > ((unsigned long long)INT64_MAX >> shift)) return 0;
    *out = (int64_t)(v << shift);
    return 1;
}

/* The default memory limit: half of the physical memory (0 if unknown). */
static int64_t default_memory_limit(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return 0;
    return (int64_t)pages / 2 * (int64_t)page;
}

/* Matches argv[*i] against "--name VALUE" or "--name=VALUE". Returns 1 and
 * sets *value on a match, 0 when it is another argument, -1 when the value is
 * missing (message printed). */
int flag_value(int argc, char **argv, int *i, const char *name, const char **value) {
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0') return 0;
    if (*i + 1 >= argc) {
        usage_error("%s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

int string_flags(int argc, char **argv, int *i, const string_flag *flags) {
    for (const string_flag *f = flags; f->name; f++) {
        int r = flag_value(argc, argv, i, f->name, f->value);
        if (r) return r;
    }
    return 0;
}

int model_arg(const char *cmd, const char *arg, const char **model) {
    if (arg[0] == '-' && arg[1] != '\0')
        return usage_error("unknown flag '%s' for 'mopt %s'", arg, cmd);
    if (*model)
        return usage_error("'mopt %s' takes one model, got '%s' and '%s'", cmd, *model, arg);
    *model = arg;
    return 0;
}

static void print_json_string(FILE *f, const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
            p++;
        } else if (c == '\n') {
            fputs("\\n", f), p++;
        } else if (c == '\t') {
            fputs("\\t", f), p++;
        } else if (c == '\r') {
            fputs("\\r", f), p++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
            p++;
        } else if (c < 0x80) {
            fputc((int)c, f);
            p++;
        } else {
            /* pass valid UTF-8 through, replace anything else with U+FFFD */
            int len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
            int ok = len > 0 && c < 0xf5;
            for (int k = 1; ok && k < len; k++)
                ok = (p[k] & 0xc0) == 0x80;
            if (ok && len == 3) ok = !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0);
            if (ok && len == 4) ok = !(c == 0xf0 && p[1] < 0x90) && !(c == 0xf4 && p[1] >= 0x90);
            if (ok) {
                fwrite(p, 1, (size_t)len, f);
                p += len;
            } else {
                fputs("\\ufffd", f);
                p++;
            }
        }
    }
    fputc('"', f);
}

/* ---- loading -------------------------------------------------------------- */

/* Builds the option set from --options and the individual flags. Returns 0,
 * or the exit code to stop with. */
int make_options(const common_opts *c, mopt_options **out) {
    mopt_options *o = NULL;
    mopt_status st = mopt_options_create(&o);
    if (st) return fail(st);
    if (c->options_file && (st = mopt_options_load_yaml(o, c->options_file))) {
        mopt_options_destroy(o);
        return fail(st);
    }
    struct {
        const char *flag, *key, *value;
    } set[] = {{"--opt-level", "opt_level", c->opt_level},
               {"--threads", "threads", c->threads},
               {"--precision", "precision", c->precision},
               {"--backend", "backend", c->backend}};
    for (size_t k = 0; k < sizeof set / sizeof set[0]; k++) {
        if (!set[k].value) continue;
        st = mopt_options_set_string(o, set[k].key, set[k].value);
        if (st) {
            int rc = usage_error("%s %s: %s", set[k].flag, set[k].value, mopt_last_error());
            mopt_options_destroy(o);
            return rc;
        }
    }
    /* memory_limit: --memory-limit, else the options file's, else half of
     * the physical memory */
    int64_t limit = 0;
    if (c->memory_limit) {
        if (!parse_size(c->memory_limit, &limit)) {
            int rc = usage_error("--memory-limit %s: expected a size in bytes such as 1048576, "
                                 "512M or 4G (0 = no limit)",
                                 c->memory_limit);
            mopt_options_destroy(o);
            return rc;
        }
    } else if (mopt_options_get_int(o, "memory_limit", &limit) != MOPT_OK || limit == 0) {
        limit = default_memory_limit();
    }
    st = mopt_options_set_int(o, "memory_limit", limit);
    if (st) {
        mopt_options_destroy(o);
        return fail(st);
    }
    *out = o;
    return 0;
}

/* The memory limit in force for opts (0 = none). */
/* Destroys the n tensors of t (NULL: none) and frees the array. */
static void free_tensors(mopt_tensor **t, size_t n) {
    for (size_t i = 0; t && i < n; i++)
        mopt_tensor_destroy(t[i]);
    free(t);
}

static int64_t memory_limit_of(const mopt_options *opts) {
    int64_t v = 0;
    return opts && mopt_options_get_int(opts, "memory_limit", &v) == MOPT_OK ? v : 0;
}

/* The memory limit is the whole program's: the session gets what the n
 * inputs leave of it (at least a byte, so that it still fails cleanly). */
static mopt_status limit_session(mopt_options *opts, mopt_tensor *const *in, size_t n) {
    int64_t limit = memory_limit_of(opts);
    if (limit <= 0) return MOPT_OK;
    uint64_t held = 0;
    for (size_t i = 0; i < n; i++)
        held += in[i] ? mopt_tensor_size_bytes(in[i]) : 0;
    return mopt_options_set_int(opts, "memory_limit",
                                held < (uint64_t)limit ? limit - (int64_t)held : 1);
}

static int load_model(const common_opts *c, mopt_options **opts, mopt_model **model) {
    int rc = make_options(c, opts);
    if (rc) return rc;
    mopt_status st = mopt_model_load(c->model, *opts, model);
    if (st) {
        rc = fail(st);
        mopt_options_destroy(*opts);
        *opts = NULL;
        return rc;
    }
    return 0;
}

/* ---- info ----------------------------------------------------------------- */

/* The nodes mopt_model_check names, for `mopt info` on a model that cannot run. */
typedef struct problem_entry {
    char *node, *op, *message;
    mopt_status status;
} problem_entry;

typedef struct problem_list {
    problem_entry *items;
    size_t n, cap;
    int inspect; /* the model was loaded with inspect_only */
    int oom;
} problem_list;

static char *dup_str(const char *s) {
    size_t n = strlen(s ? s : "") + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s ? s : "", n);
    return d;
}

static void collect_problem(void *user, const char *node, const char *op, mopt_status st,
                            const char *message) {
    problem_list *l = user;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        problem_entry *ni = realloc(l->items, cap * sizeof *ni);
        if (!ni) {
            l->oom = 1;
            return;
        }
        l->items = ni;
        l->cap = cap;
    }
    problem_entry *e = &l->items[l->n];
    e->node = dup_str(node);
    e->op = dup_str(op);
    e->message = dup_str(message);
    e->status = st;
    if (!e->node || !e->op || !e->message) {
        free(e->node);
        free(e->op);
        free(e->message);
        l->oom = 1;
        return;
    }
    l->n++;
}

static void problems_free(problem_list *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].node);
        free(l->items[i].op);
        free(l->items[i].message);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* Loads the model; when it parses but cannot run, loads it again for
 * inspection only and lists why (cannot_run->inspect set). */
static int load_for_info(const common_opts *c, mopt_options **opts, mopt_model **model,
                         problem_list *cannot_run) {
    int rc = make_options(c, opts);
    if (rc) return rc;
    mopt_status st = mopt_model_load(c->model, *opts, model);
    if (st == MOPT_ERR_UNSUPPORTED || st == MOPT_ERR_SHAPE || st == MOPT_ERR_TYPE ||
        st == MOPT_ERR_INVALID_MODEL) {
        mopt_status first = st;
        char why[512];
        snprintf(why, sizeof why, "%s", mopt_last_error());
        st = mopt_options_set_int(*opts, "inspect_only", 1);
        if (!st) st = mopt_model_load(c->model, *opts, model);
        if (st) { /* not even that: the first error is the one to show */
            fprintf(stderr, "mopt: %s: %s\n", mopt_status_string(first), why);
            mopt_options_destroy(*opts);
            *opts = NULL;
            return EXIT_FAILURE;
        }
        cannot_run->inspect = 1;
        /* it fails (with the status of its problems) by design here: what
         * matters is the list the callback collects, unless memory ran out */
        mopt_status cst = mopt_model_check(c->model, *opts, collect_problem, cannot_run, NULL);
        if (cst == MOPT_ERR_OUT_OF_MEMORY) cannot_run->oom = 1;
        if (cannot_run->oom) {
            fprintf(stderr, "mopt: %s: listing the nodes that cannot run\n",
                    mopt_status_string(MOPT_ERR_OUT_OF_MEMORY));
            problems_free(cannot_run);
            mopt_model_destroy(*model);
            *model = NULL;
            mopt_options_destroy(*opts);
            *opts = NULL;
            return EXIT_FAILURE;
        }
        return 0;
    }
    if (st) {
        rc = fail(st);
        mopt_options_destroy(*opts);
        *opts = NULL;
        return rc;
    }
    return 0;
}

/* Prints the dims of io i, of known rank, as "[batch, seq, 768]": a symbolic
 * dim by its name ("?" when it has none), as a JSON string when json. */
static void print_io_dims(FILE *f, const mopt_model *m, mopt_io_kind kind, size_t i, int rank,
                          int json) {
    fputc('[', f);
    for (int a = 0; a < rank; a++) {
        int64_t d = mopt_model_io_dim(m, kind, i, a);
        const char *sym = mopt_model_io_dim_name(m, kind, i, a);
        if (a) fputs(", ", f);
        if (d >= 0)
            fprintf(f, "%" PRId64, d);
        else if (json)
            print_json_string(f, sym ? sym : "?");
        else
            fputs(sym ? sym : "?", f);
    }
    fputc(']', f);
}

/* Prints "[batch, seq, 768]" (or "[?]" for an unknown rank). */
static void print_io_shape(FILE *f, const mopt_model *m, mopt_io_kind kind, size_t i) {
    int rank = mopt_model_io_rank(m, kind, i);
    if (rank < 0)
        fputs("[?]", f);
    else
        print_io_dims(f, m, kind, i, rank, 0);
}

static void print_io_json(FILE *f, const mopt_model *m, mopt_io_kind kind) {
    size_t n = mopt_model_io_count(m, kind);
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", {\"name\": " : "{\"name\": ", f);
        print_json_string(f, mopt_model_io_name(m, kind, i));
        fprintf(f, ", \"dtype\": \"%s\", \"shape\": ",
                mopt_dtype_name(mopt_model_io_dtype(m, kind, i)));
        int rank = mopt_model_io_rank(m, kind, i);
        if (rank < 0) {
            fputs("null}", f);
            continue;
        }
        print_io_dims(f, m, kind, i, rank, 1);
        fputc('}', f);
    }
    fputc(']', f);
}

typedef struct op_count {
    const char *op;
    size_t count;
} op_count;

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_count(const void *a, const void *b) {
    const op_count *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return strcmp(x->op, y->op);
}

/* The op histogram, sorted by count (descending) then name. Returns the
 * number of distinct ops, or -1 when out of memory. */
static long op_histogram(const mopt_model *m, op_count **out) {
    size_t n = mopt_model_node_count(m);
    const char **ops = malloc((n ? n : 1) * sizeof *ops);
    op_count *h = malloc((n ? n : 1) * sizeof *h);
    if (!ops || !h) {
        free(ops);
        free(h);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        ops[i] = mopt_model_node_op_type(m, i);
        if (!ops[i]) ops[i] = "?";
    }
    qsort(ops, n, sizeof *ops, cmp_str);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && strcmp(h[k - 1].op, ops[i]) == 0) {
            h[k - 1].count++;
        } else {
            h[k].op = ops[i];
            h[k].count = 1;
            k++;
        }
    }
    free(ops);
    qsort(h, k, sizeof *h, cmp_count);
    *out = h;
    return (long)k;
}

static const char *const k_domains[] = {"", "ai.onnx.ml", "com.microsoft", "mopt",
                                        "ai.onnx.preview.training"};
#define N_DOMAINS (sizeof k_domains / sizeof k_domains[0])

static void human_bytes(char *buf, size_t cap, int64_t b) {
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 4)
        v /= 1024.0, u++;
    if (u == 0)
        snprintf(buf, cap, "%" PRId64 " B", b);
    else
        snprintf(buf, cap, "%.1f %s", v, units[u]);
}

/* Defined with `mopt run`: runs the model once on generated inputs and
 * reports the session's memory plan. */
static int info_plan(FILE *f, const mopt_model *m, mopt_options *opts, int json,
                     const char **dim_args, int n_dim_args, const char **shape_args,
                     int n_shape_args);

static int cmd_info(int argc, char **argv) {
    common_opts c = {0};
    int json = 0, plan = 0, n_dim_args = 0, n_shape_args = 0;
    const char **dim_args = calloc((size_t)argc, sizeof *dim_args);
    const char **shape_args = calloc((size_t)argc, sizeof *shape_args);
    int prc = 0;
    if (!dim_args || !shape_args) {
        free(dim_args);
        free(shape_args);
        fprintf(stderr, "mopt: %s\n", mopt_status_string(MOPT_ERR_OUT_OF_MEMORY));
        return EXIT_FAILURE;
    }
    const string_flag strings[] = {{"--opt-level", &c.opt_level},
                                   {"--options", &c.options_file},
                                   {"--memory-limit", &c.memory_limit},
                                   {NULL, NULL}};
    for (int i = 2; i < argc && !prc; i++) {
        const char *v = NULL;
        int r;
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--plan") == 0) {
            plan = 1;
        } else if ((r = flag_value(argc, argv, &i, "--dim", &v)) != 0) {
            if (r < 0)
                prc = EXIT_USAGE;
            else
                dim_args[n_dim_args++] = v;
        } else if ((r = flag_value(argc, argv, &i, "--shape", &v)) != 0) {
            if (r < 0)
                prc = EXIT_USAGE;
            else
                shape_args[n_shape_args++] = v;
        } else if ((r = string_flags(argc, argv, &i, strings)) != 0) {
            if (r < 0) prc = EXIT_USAGE;
        } else {
            prc = model_arg("info", argv[i], &c.model);
        }
    }
    if (!prc && !c.model) prc = usage_error("'mopt info' needs a MODEL file");
    if (!prc && !plan && (n_dim_args || n_shape_args))
        prc = usage_error("--dim and --shape need --plan in 'mopt info'");
    mopt_options *opts = NULL;
    mopt_model *m = NULL;
    problem_list cannot_run = {0};
    int rc = prc ? prc : load_for_info(&c, &opts, &m, &cannot_run);
    if (rc) {
        free(dim_args);
        free(shape_args);
        return rc;
    }
    if (cannot_run.inspect) plan = 0; /* it cannot run */
    op_count *hist = NULL;
    long n_ops = op_histogram(m, &hist);
    if (n_ops < 0) {
        fprintf(stderr, "mopt: %s: histogram of %zu nodes\n",
                mopt_status_string(MOPT_ERR_OUT_OF_MEMORY), mopt_model_node_count(m));
        mopt_model_destroy(m);
        mopt_options_destroy(opts);
        free(dim_args);
        free(shape_args);
        return EXIT_FAILURE;
    }
    FILE *f = stdout;
    int64_t opset = mopt_model_opset(m, "");
    if (json) {
        fputs("{\"model\": ", f);
        print_json_string(f, c.model);
        fputs(", \"inputs\": ", f);
        print_io_json(f, m, MOPT_INPUT);
        fputs(", \"outputs\": ", f);
        print_io_json(f, m, MOPT_OUTPUT);
        fprintf(f, ", \"nodes\": %zu, \"op_histogram\": {", mopt_model_node_count(m));
        for (long k = 0; k < n_ops; k++) {
            if (k) fputs(", ", f);
            print_json_string(f, hist[k].op);
            fprintf(f, ": %zu", hist[k].count);
        }
        fprintf(f,
                "}, \"parameters\": {\"count\": %" PRId64 ", \"bytes\": %" PRId64 "}, "
                "\"opset\": %" PRId64 ", \"opsets\": {",
                mopt_model_parameter_count(m), mopt_model_parameter_bytes(m), opset);
        int first = 1;
        for (size_t d = 0; d < N_DOMAINS; d++) {
            int64_t v = mopt_model_opset(m, k_domains[d]);
            if (v < 0) continue;
            if (!first) fputs(", ", f);
            first = 0;
            print_json_string(f, k_domains[d][0] ? k_domains[d] : "ai.onnx");
            fprintf(f, ": %" PRId64, v);
        }
        fputs("}", f);
        if (cannot_run.inspect) {
            fputs(", \"cannot_run\": [", f);
            for (size_t i = 0; i < cannot_run.n; i++) {
                const problem_entry *e = &cannot_run.items[i];
                fputs(i ? ", {\"node\": " : "{\"node\": ", f);
                print_json_string(f, e->node);
                fputs(", \"op\": ", f);
                print_json_string(f, e->op);
                fputs(", \"status\": ", f);
                print_json_string(f, mopt_status_string(e->status));
                fputs(", \"message\": ", f);
                print_json_string(f, e->message);
                fputc('}', f);
            }
            fputc(']', f);
        }
        if (plan) rc = info_plan(f, m, opts, 1, dim_args, n_dim_args, shape_args, n_shape_args);
        fputs("}\n", f);
    } else {
        fprintf(f, "model: %s\n", c.model);
        fputs("opset:", f);
        for (size_t d = 0; d < N_DOMAINS; d++) {
            int64_t v = mopt_model_opset(m, k_domains[d]);
            if (v >= 0) fprintf(f, " %s %" PRId64, k_domains[d][0] ? k_domains[d] : "ai.onnx", v);
        }
        fputc('\n', f);
        for (int kind = MOPT_INPUT; kind <= MOPT_OUTPUT; kind++) {
            size_t n = mopt_model_io_count(m, (mopt_io_kind)kind);
            fprintf(f, "%s (%zu):\n", kind == MOPT_INPUT ? "inputs" : "outputs", n);
            for (size_t i = 0; i < n; i++) {
                fprintf(f, "  %s: %s ", mopt_model_io_name(m, (mopt_io_kind)kind, i),
                        mopt_dtype_name(mopt_model_io_dtype(m, (mopt_io_kind)kind, i)));
                print_io_shape(f, m, (mopt_io_kind)kind, i);
                fputc('\n', f);
            }
        }
        fprintf(f, "nodes: %zu\n", mopt_model_node_count(m));
        if (n_ops) fputs("op histogram:\n", f);
        int w = 0;
        for (long k = 0; k < n_ops; k++)
            if ((int)strlen(hist[k].op) > w) w = (int)strlen(hist[k].op);
        for (long k = 0; k < n_ops; k++)
            fprintf(f, "  %-*s %zu\n", w, hist[k].op, hist[k].count);
        char hb[32];
        human_bytes(hb, sizeof hb, mopt_model_parameter_bytes(m));
        fprintf(f, "parameters: %" PRId64 " (%" PRId64 " bytes, %s)\n",
                mopt_model_parameter_count(m), mopt_model_parameter_bytes(m), hb);
        if (cannot_run.inspect) {
            fprintf(f, "cannot run (%zu node%s):\n", cannot_run.n, cannot_run.n == 1 ? "" : "s");
            for (size_t i = 0; i < cannot_run.n; i++) {
                const problem_entry *e = &cannot_run.items[i];
                fprintf(f, "  %s (%s): %s: %s\n", e->node, e->op, mopt_status_string(e->status),
                        e->message);
            }
        }
        if (plan) rc = info_plan(f, m, opts, 0, dim_args, n_dim_args, shape_args, n_shape_args);
    }
    problems_free(&cannot_run);
    free(hist);
    free(dim_args);
    free(shape_args);
    mopt_model_destroy(m);
    mopt_options_destroy(opts);
    if (fflush(f) != 0) return EXIT_FAILURE;
    return rc;
}

/* ---- run: inputs ---------------------------------------------------------- */

typedef struct name_value {
    const char *name; /* points into argv (before '=') */
    size_t name_len;
    const char *value; /* after '=' */
    int used;
} name_value;

static int split_name_value(const char *flag, const char *arg, name_value *out) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || eq[1] == '\0')
        return usage_error("%s expects NAME=VALUE, got '%s'", flag, arg);
    out->name = arg;
    out->name_len = (size_t)(eq - arg);
    out->value = eq + 1;
    out->used = 0;
    return 0;
}

static name_value *find_nv(name_value *list, int n, const char *name) {
    for (int k = 0; k < n; k++)
        if (strlen(name) == list[k].name_len && strncmp(list[k].name, name, list[k].name_len) == 0)
            return &list[k];
    return NULL;
}

/* splitmix64: a small, fixed, portable generator so runs are reproducible */
static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static float rng_float(uint64_t *s) { /* uniform in [-1, 1) */
    return (float)((double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
}

static uint16_t float_to_half(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    int32_t e = (int32_t)((u >> 23) & 0xff) - 127 + 15;
    uint32_t m = u & 0x7fffffu;
    if (e <= 0) { /* subnormal or zero (inputs here are in [-1, 1)) */
        if (e < -10) return (uint16_t)sign;
        m |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t h = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    uint32_t h = ((uint32_t)e << 10) | (m >> 13);
    uint32_t rem = m & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu, u;
    if (e == 0) {
        float v = (float)m * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    if (e == 31)
        u = sign | 0x7f800000u | (m << 13);
    else
        u = sign | ((e - 15 + 127) << 23) | (m << 13);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float bf16_to_float(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Fills t with the documented random data. Returns 0, or 1 for a dtype the
 * generator cannot make. */
static int fill_random(mopt_tensor *t, uint64_t seed) {
    int64_t n = mopt_tensor_element_count(t);
    void *p = mopt_tensor_data(t);
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        switch (mopt_tensor_dtype(t)) {
        case MOPT_DTYPE_F32: ((float *)p)[i] = rng_float(&s); break;
        case MOPT_DTYPE_F64: ((double *)p)[i] = (double)rng_float(&s); break;
        case MOPT_DTYPE_F16: ((uint16_t *)p)[i] = float_to_half(rng_float(&s)); break;
        case MOPT_DTYPE_BF16: {
            float x = rng_float(&s);
            uint32_t u;
            memcpy(&u, &x, 4);
            ((uint16_t *)p)[i] = (uint16_t)(u >> 16); /* truncation keeps it in [-1, 1) */
            break;
        }
        case MOPT_DTYPE_BOOL: ((uint8_t *)p)[i] = (uint8_t)(rng_next(&s) >> 63); break;
        case MOPT_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)(rng_next(&s) % 10); break;
        case MOPT_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)(rng_next(&s) % 10); break;
        case MOPT_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)(rng_next(&s) % 10); break;
        case MOPT_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)(rng_next(&s) % 10); break;
        case MOPT_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)(rng_next(&s) % 10); break;
        case MOPT_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)(rng_next(&s) % 10); break;
        case MOPT_DTYPE_U64: ((uint64_t *)p)[i] = rng_next(&s) % 10; break;
        case MOPT_DTYPE_I64: ((int64_t *)p)[i] = (int64_t)(rng_next(&s) % 10); break;
        default: return 1;
        }
    }
    return 0;
}

/* Parses "2,16,768" (or "" for a scalar) into dims. Returns the rank or -1. */
static int parse_dims(const char *s, int64_t *dims) {
    int rank = 0;
    if (*s == '\0') return 0;
    for (;;) {
        char *end = NULL;
        errno = 0;
        if (*s < '0' || *s > '9') return -1;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || rank == MOPT_MAX_RANK) return -1;
        dims[rank++] = (int64_t)v;
        if (*end == '\0') return rank;
        if (*end != ',') return -1;
        s = end + 1;
    }
}

/* Makes the input tensor for model input i: loaded from --input, or random.
 * Returns 0 or an exit code. */
static int make_input(const mopt_model *m, size_t i, name_value *files, int n_files,
                      name_value *shapes, int n_shapes, name_value *dims, int n_dims, uint64_t seed,
                      int64_t limit, uint64_t *generated, mopt_tensor **out) {
    const char *name = mopt_model_io_name(m, MOPT_INPUT, i);
    name_value *file = find_nv(files, n_files, name);
    if (file) {
        file->used = 1;
        mopt_status st = mopt_tensor_load(file->value, out);
        return st ? fail(st) : 0;
    }
    mopt_dtype dt = mopt_model_io_dtype(m, MOPT_INPUT, i);
    int64_t d[MOPT_MAX_RANK];
    int rank;
    name_value *shape = find_nv(shapes, n_shapes, name);
    if (shape) {
        shape->used = 1;
        rank = parse_dims(shape->value, d);
        if (rank < 0)
            return usage_error("--shape %s=%s: expected up to %d comma-separated sizes", name,
                               shape->value, MOPT_MAX_RANK);
    } else {
        rank = mopt_model_io_rank(m, MOPT_INPUT, i);
        if (rank < 0)
            return usage_error("input '%s' has an unknown rank; give its shape with --shape "
                               "%s=D0,D1,... or a file with --input %s=FILE.npy",
                               name, name, name);
        for (int a = 0; a < rank; a++) {
            d[a] = mopt_model_io_dim(m, MOPT_INPUT, i, a);
            if (d[a] >= 0) continue;
            const char *sym = mopt_model_io_dim_name(m, MOPT_INPUT, i, a);
            name_value *dv = sym ? find_nv(dims, n_dims, sym) : NULL;
            d[a] = 1;
            if (dv) {
                dv->used = 1;
                if (!parse_i64(dv->value, &d[a]) || d[a] < 0)
                    return usage_error("--dim %s=%s: expected a size >= 0", sym, dv->value);
            }
        }
    }
    if (dt == MOPT_DTYPE_UNDEFINED || dt == MOPT_DTYPE_STRING) {
        fprintf(stderr,
                "mopt: %s: cannot generate data for input '%s' of type %s; give it with "
                "--input %s=FILE.npy\n",
                mopt_status_string(MOPT_ERR_UNSUPPORTED), name, mopt_dtype_name(dt), name);
        return EXIT_FAILURE;
    }
    /* generated data counts against the memory limit, checked before any
     * byte is allocated */
    uint64_t bytes = mopt_dtype_size(dt);
    char shape_s[160];
    int len = snprintf(shape_s, sizeof shape_s, "[");
    for (int a = 0; a < rank; a++) {
        if (len < (int)sizeof shape_s)
            len += snprintf(shape_s + len, sizeof shape_s - (size_t)len, "%s%" PRId64, a ? "," : "",
                            d[a]);
        if (d[a] < 0 || (d[a] && bytes > UINT64_MAX / (uint64_t)d[a]))
            bytes = UINT64_MAX;
        else
            bytes *= (uint64_t)d[a];
    }
    if (len < (int)sizeof shape_s) snprintf(shape_s + len, sizeof shape_s - (size_t)len, "]");
    uint64_t total = bytes > UINT64_MAX - *generated ? UINT64_MAX : *generated + bytes;
    if (limit > 0 && total > (uint64_t)limit) {
        fprintf(stderr,
                "mopt: %s: refusing to generate random data for input '%s' (%s %s, %" PRIu64
                " bytes%s): the generated inputs would take %" PRIu64
                " bytes, more than the memory limit of %" PRId64
                " bytes (--memory-limit; default: half of the physical memory). Give a smaller "
                "--shape or --dim, the data with --input %s=FILE.npy, or --memory-limit 0 for "
                "no limit\n",
                mopt_status_string(MOPT_ERR_LIMIT), name, mopt_dtype_name(dt), shape_s, bytes,
                bytes == UINT64_MAX ? ", overflowing" : "", total, limit, name);
        return EXIT_FAILURE;
    }
    *generated = total;
    mopt_status st = mopt_tensor_create(dt, rank, d, out);
    if (st) return fail(st);
    fill_random(*out, seed ^ ((uint64_t)i * 0x2545f4914f6cdd1du));
    return 0;
}

/* ---- run: outputs --------------------------------------------------------- */

double element(const mopt_tensor *t, int64_t i) {
    const void *p = mopt_tensor_data_const(t);
    switch (mopt_tensor_dtype(t)) {
    case MOPT_DTYPE_F32: return ((const float *)p)[i];
    case MOPT_DTYPE_F64: return ((const double *)p)[i];
    case MOPT_DTYPE_F16: return half_to_float(((const uint16_t *)p)[i]);
    case MOPT_DTYPE_BF16: return bf16_to_float(((const uint16_t *)p)[i]);
    case MOPT_DTYPE_U8:
    case MOPT_DTYPE_BOOL: return ((const uint8_t *)p)[i];
    case MOPT_DTYPE_I8: return ((const int8_t *)p)[i];
    case MOPT_DTYPE_U16: return ((const uint16_t *)p)[i];
    case MOPT_DTYPE_I16: return ((const int16_t *)p)[i];
    case MOPT_DTYPE_U32: return ((const uint32_t *)p)[i];
    case MOPT_DTYPE_I32: return ((const int32_t *)p)[i];
    case MOPT_DTYPE_U64: return (double)((const uint64_t *)p)[i];
    case MOPT_DTYPE_I64: return (double)((const int64_t *)p)[i];
    default: return NAN;
    }
}

static void print_stats(FILE *f, const mopt_tensor *t) {
    int64_t n = mopt_tensor_element_count(t), finite = 0, nonfinite = 0;
    double mn = INFINITY, mx = -INFINITY, sum = 0, sq = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = element(t, i);
        if (!isfinite(v)) {
            nonfinite++;
            continue;
        }
        finite++;
        if (v < mn) mn = v;
        if (v > mx) mx = v;
        sum += v;
    }
    if (finite) {
        double mean = sum / (double)finite;
        for (int64_t i = 0; i < n; i++) {
            double v = element(t, i);
            if (isfinite(v)) sq += (v - mean) * (v - mean);
        }
        fprintf(f, "  min %.6g  max %.6g  mean %.6g  std %.6g", mn, mx, mean,
                sqrt(sq / (double)finite));
    } else {
        fputs(n ? "  (no finite values)" : "  (empty)", f);
    }
    if (nonfinite) fprintf(f, "  nan/inf %" PRId64, nonfinite);
}

/* DIR/<name>.npy with '/' and '\' replaced by '_'; an empty name becomes
 * output_<i>. */
static char *output_path(const char *dir, const char *name, size_t i) {
    char fallback[32];
    if (!name || !*name) {
        snprintf(fallback, sizeof fallback, "output_%zu", i);
        name = fallback;
    }
    size_t dl = strlen(dir), nl = strlen(name);
    char *p = malloc(dl + nl + 8);
    if (!p) return NULL;
    memcpy(p, dir, dl);
    size_t k = dl;
    if (dl && dir[dl - 1] != '/') p[k++] = '/';
    for (size_t j = 0; j < nl; j++)
        p[k++] = (name[j] == '/' || name[j] == '\\') ? '_' : name[j];
    memcpy(p + k, ".npy", 5);
    return p;
}

/* mkdir -p: creates `dir` and its missing parents. Returns 0 or -1 (errno). */
int make_dirs(const char *dir) {
    char path[4096];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char saved = path[i];
        path[i] = '\0';
        struct stat st;
        if (stat(path, &st) != 0) {
            if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
        } else if (!S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            return -1;
        }
        path[i] = saved;
    }
    return 0;
}

static int cmd_run(int argc, char **argv) {
    common_opts c = {0};
    const char *out_dir = ".", *seed_s = NULL;
    name_value *files = calloc((size_t)argc, sizeof *files);
    name_value *shapes = calloc((size_t)argc, sizeof *shapes);
    name_value *dims = calloc((size_t)argc, sizeof *dims);
    int n_files = 0, n_shapes = 0, n_dims = 0, rc = 0;
    mopt_options *opts = NULL;
    mopt_model *m = NULL;
    mopt_session *s = NULL;
    mopt_tensor **in = NULL, **out = NULL;
    size_t n_in = 0, n_out = 0;
    if (!files || !shapes || !dims) {
        fprintf(stderr, "mopt: %s\n", mopt_status_string(MOPT_ERR_OUT_OF_MEMORY));
        rc = EXIT_FAILURE;
        goto done;
    }
    const string_flag strings[] = {
        {"--output-dir", &out_dir},     {"--opt-level", &c.opt_level},
        {"--threads", &c.threads},      {"--precision", &c.precision},
        {"--backend", &c.backend},      {"--memory-limit", &c.memory_limit},
        {"--options", &c.options_file}, {NULL, NULL}};
    for (int i = 2; i < argc && !rc; i++) {
        const char *v = NULL;
        int r;
        if ((r = flag_value(argc, argv, &i, "--input", &v)) != 0) {
            rc = r < 0 ? EXIT_USAGE : split_name_value("--input", v, &files[n_files++]);
        } else if ((r = flag_value(argc, argv, &i, "--shape", &v)) != 0) {
            rc = r < 0 ? EXIT_USAGE : split_name_value("--shape", v, &shapes[n_shapes++]);
            if (!rc && parse_dims(shapes[n_shapes - 1].value, (int64_t[MOPT_MAX_RANK]){0}) < 0)
                rc = usage_error("--shape %s: expected NAME=D0,D1,... with up to %d sizes", v,
                                 MOPT_MAX_RANK);
        } else if ((r = flag_value(argc, argv, &i, "--dim", &v)) != 0) {
            int64_t x;
            rc = r < 0 ? EXIT_USAGE : split_name_value("--dim", v, &dims[n_dims++]);
            if (!rc && (!parse_i64(dims[n_dims - 1].value, &x) || x < 0))
                rc = usage_error("--dim %s: expected SYMBOL=N with N >= 0", v);
        } else if ((r = string_flags(argc, argv, &i, strings)) != 0) {
            rc = r < 0 ? EXIT_USAGE : 0;
        } else if ((r = flag_value(argc, argv, &i, "--seed", &v)) != 0) {
            int64_t x;
            rc = r < 0 ? EXIT_USAGE : 0;
            seed_s = v;
            if (!rc && (!parse_i64(v, &x) || x < 0))
                rc = usage_error("--seed %s: expected a number >= 0", v);
        } else {
            rc = model_arg("run", argv[i], &c.model);
        }
    }
    if (rc) goto done;
    if (!c.model) {
        rc = usage_error("'mopt run' needs a MODEL file");
        goto done;
    }
    if (*out_dir == '\0') {
        rc = usage_error("--output-dir is empty");
        goto done;
    }
    if (make_dirs(out_dir) != 0) {
        fprintf(stderr, "mopt: cannot create output folder '%s': %s\n", out_dir, strerror(errno));
        rc = 1;
        goto done;
    }
    uint64_t seed = DEFAULT_SEED;
    if (seed_s) {
        int64_t x = 0;
        parse_i64(seed_s, &x);
        seed = (uint64_t)x;
    }
    if ((rc = load_model(&c, &opts, &m)) != 0) goto done;
    mopt_status st;
    for (int k = 0; k < n_files; k++) {
        char name[512];
        size_t idx;
        snprintf(name, sizeof name, "%.*s", (int)files[k].name_len, files[k].name);
        if (find_nv(files, k, name)) {
            rc = usage_error("--input %s is given twice", name);
            goto done;
        }
        st = mopt_model_io_find(m, MOPT_INPUT, name, &idx);
        if (st) {
            rc = fail(st);
            goto done;
        }
    }
    n_in = mopt_model_io_count(m, MOPT_INPUT);
    n_out = mopt_model_io_count(m, MOPT_OUTPUT);
    in = calloc(n_in ? n_in : 1, sizeof *in);
    out = calloc(n_out ? n_out : 1, sizeof *out);
    if (!in || !out) {
        fprintf(stderr, "mopt: %s\n", mopt_status_string(MOPT_ERR_OUT_OF_MEMORY));
        rc = EXIT_FAILURE;
        goto done;
    }
    uint64_t generated = 0;
    for (size_t i = 0; i < n_in && !rc; i++)
        rc = make_input(m, i, files, n_files, shapes, n_shapes, dims, n_dims, seed,
                        memory_limit_of(opts), &generated, &in[i]);
    if (rc) goto done;
    for (int k = 0; k < n_shapes; k++) {
        if (shapes[k].used) continue;
        char name[512];
        size_t idx;
        snprintf(name, sizeof name, "%.*s", (int)shapes[k].name_len, shapes[k].name);
        if (mopt_model_io_find(m, MOPT_INPUT, name, &idx) != MOPT_OK) {
            rc = usage_error("--shape %s: the model has no input named '%s'", name, name);
            goto done;
        }
        fprintf(stderr, "mopt: warning: --shape %s ignored; --input gives that input\n", name);
    }
    for (int k = 0; k < n_dims; k++)
        if (!dims[k].used)
            fprintf(stderr,
                    "mopt: warning: --dim %.*s: no generated input has a symbolic dimension of "
                    "that name\n",
                    (int)dims[k].name_len, dims[k].name);
    st = limit_session(opts, in, n_in);
    if (!st) st = mopt_session_create(m, opts, &s);
    if (st) {
        rc = fail(st);
        goto done;
    }
    st = mopt_session_run(s, n_in, NULL, (const mopt_tensor *const *)in, n_out, NULL, out);
    if (st) {
        rc = fail(st);
        goto done;
    }
    for (size_t i = 0; i < n_out; i++) {
        const char *name = mopt_model_io_name(m, MOPT_OUTPUT, i);
        char *path = output_path(out_dir, name, i);
        if (!path) {
            fprintf(stderr, "mopt: %s\n", mopt_status_string(MOPT_ERR_OUT_OF_MEMORY));
            rc = EXIT_FAILURE;
            goto done;
        }
        /* two names that sanitize alike must not overwrite each other */
        for (size_t j = 0; j < i; j++) {
            char *other = output_path(out_dir, mopt_model_io_name(m, MOPT_OUTPUT, j), j);
            int same = other && strcmp(other, path) == 0;
            free(other);
            if (same) {
                free(path);
                char alt[64];
                snprintf(alt, sizeof alt, "output_%zu", i);
                path = output_path(out_dir, alt, i);
                break;
            }
        }
        if (!path) {
            rc = EXIT_FAILURE;
            goto done;
        }
        st = mopt_tensor_save_npy(out[i], path);
        if (st) {
            free(path);
            rc = fail(st);
            goto done;
        }
        const mopt_tensor *t = out[i];
        printf("%s: %s [", name ? name : "", mopt_dtype_name(mopt_tensor_dtype(t)));
        for (int a = 0; a < mopt_tensor_rank(t); a++)
            printf("%s%" PRId64, a ? ", " : "", mopt_tensor_dim(t, a));
        printf("]");
        print_stats(stdout, t);
        printf("  -> %s\n", path);
        free(path);
    }
    if (fflush(stdout) != 0) rc = EXIT_FAILURE;

done:
    free_tensors(out, n_out);
    free_tensors(in, n_in);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
    mopt_options_destroy(opts);
    free(files);
    free(shapes);
    free(dims);
    return rc;
}

/* ---- info --plan ---------------------------------------------------------- */

static int info_plan(FILE *f, const mopt_model *m, mopt_options *opts, int json,
                     const char **dim_args, int n_dim_args, const char **shape_args,
                     int n_shape_args) {
    name_value *dims = calloc((size_t)n_dim_args + 1, sizeof *dims);
    name_value *shapes = calloc((size_t)n_shape_args + 1, sizeof *shapes);
    size_t n_in = mopt_model_io_count(m, MOPT_INPUT), n_out = mopt_model_io_count(m, MOPT_OUTPUT);
    mopt_tensor **in = calloc(n_in ? n_in : 1, sizeof *in);
    mopt_tensor **out = calloc(n_out ? n_out : 1, sizeof *out);
    mopt_session *s = NULL;
    int rc = 0;
    if (!dims || !shapes || !in || !out) {
        fprintf(stderr, "mopt: %s\n", mopt_status_string(MOPT_ERR_OUT_OF_MEMORY));
        rc = EXIT_FAILURE;
    }
    for (int k = 0; !rc && k < n_dim_args; k++) {
        int64_t x;
        rc = split_name_value("--dim", dim_args[k], &dims[k]);
        if (!rc && (!parse_i64(dims[k].value, &x) || x < 0))
            rc = usage_error("--dim %s: expected SYMBOL=N with N >= 0", dim_args[k]);
    }
    for (int k = 0; !rc && k < n_shape_args; k++) {
        rc = split_name_value("--shape", shape_args[k], &shapes[k]);
        if (!rc && parse_dims(shapes[k].value, (int64_t[MOPT_MAX_RANK]){0}) < 0)
            rc = usage_error("--shape %s: expected NAME=D0,D1,... with up to %d sizes",
                             shape_args[k], MOPT_MAX_RANK);
    }
    uint64_t generated = 0;
    for (size_t i = 0; !rc && i < n_in; i++)
        rc = make_input(m, i, NULL, 0, shapes, n_shape_args, dims, n_dim_args, DEFAULT_SEED,
                        memory_limit_of(opts), &generated, &in[i]);
    mopt_status st = MOPT_OK;
    if (!rc) st = limit_session(opts, in, n_in);
    if (!rc && !st) st = mopt_session_create(m, opts, &s);
    if (!rc && !st)
        st = mopt_session_run(s, n_in, NULL, (const mopt_tensor *const *)in, n_out, NULL, out);
    int64_t arena = 0, inter = 0;
    if (!rc && !st) st = mopt_session_get_stat(s, "arena_bytes", &arena);
    if (!rc && !st) st = mopt_session_get_stat(s, "intermediate_bytes", &inter);
    if (!rc && st) rc = fail(st);
    if (!rc) {
        if (json) {
            fprintf(f,
                    ", \"plan\": {\"arena_bytes\": %" PRId64 ", \"intermediate_bytes\": %" PRId64
                    ", \"inputs\": {",
                    arena, inter);
            for (size_t i = 0; i < n_in; i++) {
                if (i) fputs(", ", f);
                print_json_string(f, mopt_model_io_name(m, MOPT_INPUT, i));
                fputs(": [", f);
                for (int a = 0; a < mopt_tensor_rank(in[i]); a++)
                    fprintf(f, "%s%" PRId64, a ? ", " : "", mopt_tensor_dim(in[i], a));
                fputc(']', f);
            }
            fputs("}}", f);
        } else {
            char ha[32], hi[32];
            human_bytes(ha, sizeof ha, arena);
            human_bytes(hi, sizeof hi, inter);
            fputs("memory plan for inputs", f);
            for (size_t i = 0; i < n_in; i++) {
                fprintf(f, "%s %s [", i ? "," : "", mopt_model_io_name(m, MOPT_INPUT, i));
                for (int a = 0; a < mopt_tensor_rank(in[i]); a++)
                    fprintf(f, "%s%" PRId64, a ? ", " : "", mopt_tensor_dim(in[i], a));
                fputc(']', f);
            }
            fputs(":\n", f);
            fprintf(f, "  arena:         %12" PRId64 " bytes (%s)\n", arena, ha);
            fprintf(f,
                    "  intermediates: %12" PRId64 " bytes (%s), the sum of all intermediate "
                    "tensors\n",
                    inter, hi);
            if (inter > 0)
                fprintf(f, "  the arena is %.1f%% of the sum\n",
                        100.0 * (double)arena / (double)inter);
        }
    }
    free_tensors(out, n_out);
    free_tensors(in, n_in);
    mopt_session_destroy(s);
    free(dims);
    free(shapes);
    return rc;
}

/* ---- optimize --------------------------------------------------------------- */

static int cmd_optimize(int argc, char **argv) {
    common_opts c = {0};
    const char *out_path = NULL;
    int report = 0;
    const string_flag strings[] = {{"-o", &out_path},
                                   {"--output", &out_path},
                                   {"--opt-level", &c.opt_level},
                                   {"--precision", &c.precision},
                                   {"--options", &c.options_file},
                                   {NULL, NULL}};
    for (int i = 2; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--report") == 0) {
            report = 1;
        } else if ((r = string_flags(argc, argv, &i, strings)) != 0) {
            if (r < 0) return EXIT_USAGE;
        } else if ((r = model_arg("optimize", argv[i], &c.model)) != 0) {
            return r;
        }
    }
    if (!c.model) return usage_error("'mopt optimize' needs a MODEL file");
    if (!out_path || !*out_path) return usage_error("'mopt optimize' needs -o OUT.mopt");
    mopt_options *opts = NULL;
    mopt_model *m = NULL;
    int rc = load_model(&c, &opts, &m);
    if (rc) return rc;
    const char *prec = NULL;
    if (mopt_options_get_string(opts, "precision", &prec) == MOPT_OK && prec &&
        strcmp(prec, "int8") == 0)
        fprintf(stderr,
                "mopt: warning: precision=int8 and no golden set: the quality of %s is "
                "unchecked (check it with 'mopt quantize-check %s --golden DIR --budget "
                "FILE.yaml', which also picks per-layer fallbacks)\n",
                out_path, c.model);
    mopt_status st = mopt_model_save(m, out_path);
    if (st) {
        rc = fail(st);
    } else {
        if (report) fputs(mopt_model_pass_report(m), stdout);
        printf("%s: %zu nodes, %" PRId64 " parameter bytes -> %s\n", c.model,
               mopt_model_node_count(m), mopt_model_parameter_bytes(m), out_path);
    }
    mopt_model_destroy(m);
    mopt_options_destroy(opts);
    if (!rc && fflush(stdout) != 0) rc = EXIT_FAILURE;
    return rc;
}

/* ---- main ----------------------------------------------------------------- */

static int cmd_version(void) {
    printf("mopt %d.%d.%d (libmopt %s", MOPT_VERSION_MAJOR, MOPT_VERSION_MINOR, MOPT_VERSION_PATCH,
           mopt_version());
    if (mopt_version_number() != MOPT_VERSION_NUMBER)
        printf("; built against header %d, library is %d", MOPT_VERSION_NUMBER,
               mopt_version_number());
    printf(")\n");
    return EXIT_SUCCESS;
}

static void print_problem(void *user, const char *node, const char *op, mopt_status st,
                          const char *message) {
    (void)user;
    printf("  node '%s' (%s): %s: %s\n", node, op, mopt_status_string(st), message);
}

/* mopt check MODEL: every node that would keep the model from loading. */
static int cmd_check(int argc, char **argv) {
    if (argc != 3) return usage_error("usage: mopt check MODEL");
    size_t n = 0;
    mopt_status st = mopt_model_check(argv[2], NULL, print_problem, NULL, &n);
    if (st == MOPT_OK) {
        printf("%s: ok, every node is supported\n", argv[2]);
        return EXIT_SUCCESS;
    }
    if (n) printf("%s: %zu problem node%s\n", argv[2], n, n == 1 ? "" : "s");
    return fail(st);
}

static int cmd_ops(void) {
    size_t n = mopt_supported_op_count();
    for (size_t i = 0; i < n; i++)
        printf("%s\n", mopt_supported_op_name(i));
    return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "mopt: %s: no command given\n\n",
                mopt_status_string(MOPT_ERR_INVALID_ARGUMENT));
        print_usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        print_usage(stdout);
        return EXIT_SUCCESS;
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) return cmd_version();
    if (strcmp(cmd, "ops") == 0) return cmd_ops();
    if (strcmp(cmd, "check") == 0) return cmd_check(argc, argv);
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            print_usage(stdout);
            return EXIT_SUCCESS;
        }
    if (strcmp(cmd, "info") == 0) return cmd_info(argc, argv);
    if (strcmp(cmd, "run") == 0) return cmd_run(argc, argv);
    if (strcmp(cmd, "optimize") == 0) return cmd_optimize(argc, argv);
    if (strcmp(cmd, "compare") == 0) return cmd_compare(argc, argv);
    if (strcmp(cmd, "calibrate") == 0) return cmd_calibrate(argc, argv);
    if (strcmp(cmd, "quantize-check") == 0) return cmd_quantize_check(argc, argv);
    if (strcmp(cmd, "tune") == 0) return cmd_tune(argc, argv);
    return usage_error("unknown command '%s'", cmd);
}
