/*
 * quantize_check.c — `mopt quantize-check` (issue 13): the per-layer INT8
 * fallback. Lists the nodes that run int8 under precision=int8 (the
 * profile's kernels). By default (--rank layers) it ranks them with one
 * per-layer comparison of all-int8 against FP32 (expose_values: the error
 * each node adds, 1 - cosine of its output less that of its inputs) and
 * finds the fewest top-ranked fallbacks that hold the budget by bisection
 * (about log2(N) + 2 golden-set comparisons instead of N + greedy steps).
 * With --rank alone it measures each one's sensitivity (that node alone
 * quantized, every other one excluded, against FP32 on the golden set with
 * the budget's tightest rule, through compare_run), then excludes the most
 * sensitive nodes one by one until the budget holds. --rank cost ranks as
 * --rank output, divided by the time int8 saves on each node (profiled
 * FP32 and all-int8 runs): nodes int8 does not speed up fall back first, as
 * many as hold the budget. It reports the
 * fallbacks, the metric and the speed they cost (p50 of all-int8, with the
 * fallbacks and FP32, interleaved rounds through bench/run.c). Writes the
 * options (precision, calibration, the --set ones, int8_exclude) as YAML;
 * refuses (exit 1, with the report) when --max-fallbacks nodes are not
 * enough.
 */
#define _POSIX_C_SOURCE 200809L
#define MOPT_EXPERIMENTAL_API /* profile */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mopt_cli.h"
#include "run.h"
#include "stats.h"

#define QN_MAX_IN 5

enum { RANK_OUTPUT, RANK_LAYERS, RANK_ALONE, RANK_COST };

typedef struct qnode {
    char *name;
    char op[48];
    double margin, value;    /* quantized alone, or (--rank layers) the error it adds */
    double metric;           /* --rank output: the budget's metric with it alone int8 */
    double fp32_ns, int8_ns; /* --rank cost: its kernel time (profiler, min over runs) */
    int excluded;
    char *out_name, *in_names[QN_MAX_IN]; /* its values in the int8 graph */
} qnode;

typedef struct qc {
    const char *model, *golden, *budget, *calibration, *threads, *out_path;
    const char *fallback; /* --fallback: "fp32" or "bf16" (int8_fallback) */
    FILE *out;            /* the report: stdout, or --report FILE */
    const char **sets;    /* --set KEY=VALUE, both sides */
    int n_sets;
    int64_t max_fallbacks; /* -1: half the nodes, rounded up */
    int64_t runs;
    int rank;            /* RANK_OUTPUT, RANK_LAYERS, RANK_ALONE or RANK_COST (--rank) */
    double margin;       /* --margin: the slack the search requires of the tightest rule */
    double confidence;   /* --confidence Z: ... of its value less Z standard errors over the sets */
    int64_t time_rounds; /* --rank cost: profiled runs of FP32 and all-int8 (--time-rounds) */
    int time_batch1;     /* --rank cost profiled one sample (first_sample) */
    int64_t rank_sets;   /* --rank-sets: the golden input sets --rank output measures on */
    qnode *nodes;
    size_t n_nodes;
    qnode *graph; /* every node of the int8 graph, in order (--rank layers) */
    size_t n_graph;
    char **input_names, **input_paths; /* the first golden set's inputs */
    size_t n_inputs;
} qc;

static int oom(void) {
    fprintf(stderr, "mopt: out of memory\n");
    return EXIT_USAGE;
}

/* A search step holds: the budget holds (rc 0) and its tightest rule keeps
 * the slack --margin asks, with the value moved --confidence standard
 * errors (over the golden sets) towards the limit: a one-sided lower
 * confidence bound of a mean rule, so that a subset that holds on a small
 * golden set by chance does not pass. */
static int step_holds(const qc *q, int rc, const compare_summary *s) {
    if (rc != 0) return 0;
    double lim = fabs(s->margin_limit) > 1e-12 ? fabs(s->margin_limit) : 1e-12;
    return s->margin - q->confidence * s->margin_se / lim >= q->margin;
}

/* The value of the tightest rule moved --confidence standard errors
 * towards its limit (the value itself without --confidence). */
static double bound_value(const qc *q, const compare_summary *s) {
    double d = q->confidence * s->margin_se;
    return s->margin_is_min ? s->margin_value - d : s->margin_value + d;
}

/* "a,b,c" of the nodes marked excluded, or of all but `only` (only >= 0). */
static char *exclude_list(const qc *q, long only) {
    size_t len = 1;
    for (size_t i = 0; i < q->n_nodes; i++)
        len += strlen(q->nodes[i].name) + 1;
    char *s = calloc(len, 1);
    if (!s) return NULL;
    for (size_t i = 0; i < q->n_nodes; i++) {
        int in = only >= 0 ? (long)i != only : q->nodes[i].excluded;
        if (!in) continue;
        if (s[0]) strcat(s, ",");
        strcat(s, q->nodes[i].name);
    }
    return s;
}

/* compare_run of FP32 (REF) against int8 with int8_exclude=exclude (TEST),
 * its table thrown away. 0 holds, 1 violated, 2 error. */
static int check_run(const qc *q, const char *exclude, int per_layer, size_t max_sets,
                     compare_summary *sum) {
    const char *test[5];
    char *ex = NULL;
    int n = 0;
    test[n++] = "precision=int8";
    if (strcmp(q->fallback, "bf16") == 0) test[n++] = "int8_fallback=bf16";
    char cal[1100];
    if (q->calibration) {
        snprintf(cal, sizeof cal, "calibration=%s", q->calibration);
        test[n++] = cal;
    }
    if (exclude && *exclude) {
        ex = malloc(strlen(exclude) + 16);
        if (!ex) return oom();
        sprintf(ex, "int8_exclude=%s", exclude);
        test[n++] = ex;
    }
    const char *ref[1] = {"precision=fp32"};
    compare_args a;
    memset(&a, 0, sizeof a);
    a.ref_model = a.test_model = q->model;
    a.golden = q->golden;
    a.budget = q->budget;
    a.threads = q->threads;
    a.common_sets = q->sets;
    a.n_common = q->n_sets;
    a.ref_sets = ref;
    a.n_ref = 1;
    a.test_sets = test;
    a.n_test = n;
    a.per_layer = per_layer;
    a.max_sets = max_sets;
    FILE *sink = tmpfile();
    int rc = sink ? compare_run(&a, sink, sum) : EXIT_USAGE;
    if (!sink) fprintf(stderr, "mopt: cannot create a temporary file\n");
    if (sink) fclose(sink);
    free(ex);
    return rc;
}

static int check(const qc *q, const char *exclude, compare_summary *sum) {
    return check_run(q, exclude, 0, 0, sum);
}

/* A bench configuration of the model on the first golden set's inputs. */
static int bench_cfg(const qc *q, bench_config *g, const char *precision, const char *exclude,
                     const char *fallback, int profile) {
    bench_config_init(g);
    int bad = bench_config_set_str(&g->model, q->model) != 0;
    bad |= bench_config_set_str(&g->precision, precision) != 0;
    g->warmup = 3;
    if (q->threads) {
        int64_t t;
        if (!parse_i64(q->threads, &t))
            return usage_error("--threads %s: not a number", q->threads);
        g->threads = t;
    }
    for (int i = 0; i < q->n_sets; i++) {
        char key[128];
        const char *eq = strchr(q->sets[i], '=');
        if (!eq || (size_t)(eq - q->sets[i]) >= sizeof key)
            return usage_error("--set '%s': expected KEY=VALUE", q->sets[i]);
        snprintf(key, sizeof key, "%.*s", (int)(eq - q->sets[i]), q->sets[i]);
        bad |= bench_config_add_option(g, key, eq + 1) != 0;
    }
    if (q->calibration && strcmp(precision, "int8") == 0)
        bad |= bench_config_add_option(g, "calibration", q->calibration) != 0;
    if (exclude && *exclude) bad |= bench_config_add_option(g, "int8_exclude", exclude) != 0;
    if (exclude && *exclude && fallback)
        bad |= bench_config_add_option(g, "int8_fallback", fallback) != 0;
    if (profile) bad |= bench_config_set_str(&g->profile, "1") != 0;
    for (size_t i = 0; i < q->n_inputs; i++)
        bad |= bench_config_add_input(g, q->input_names[i], q->input_paths[i]) != 0;
    return bad ? oom() : 0;
}

/* The first golden set's input files, by the model's input names. */
static int find_inputs(qc *q) {
    golden_set *sets = NULL;
    size_t n_sets = 0;
    int rc = list_sets(q->golden, &sets, &n_sets);
    if (rc) return rc;
    if (!n_sets) {
        free_sets(sets, n_sets);
        return usage_error("golden set %s: no input sets", q->golden);
    }
    mopt_model *m = NULL;
    mopt_status st = mopt_model_load(q->model, NULL, &m);
    if (st) {
        free_sets(sets, n_sets);
        return fail(st);
    }
    q->n_inputs = mopt_model_io_count(m, MOPT_INPUT);
    q->input_names = calloc(q->n_inputs + 1, sizeof *q->input_names);
    q->input_paths = calloc(q->n_inputs + 1, sizeof *q->input_paths);
    if (!q->input_names || !q->input_paths) rc = oom();
    for (size_t i = 0; !rc && i < q->n_inputs; i++) {
        const char *name = mopt_model_io_name(m, MOPT_INPUT, i);
        q->input_names[i] = strdup(name);
        q->input_paths[i] = sets[0].is_file ? strdup(sets[0].path)
                                            : find_tensor_file(sets[0].path, "input", i, name);
        if (!q->input_names[i])
            rc = oom();
        else if (!q->input_paths[i])
            rc = usage_error("golden set '%s': no file for input %zu '%s'", sets[0].name, i, name);
    }
    mopt_model_destroy(m);
    free_sets(sets, n_sets);
    return rc;
}

/* Every node of the int8 graph m with its value names (NULL: absent). */
static int graph_values(const mopt_model *m, qc *q) {
    size_t n = mopt_model_node_count(m);
    if (!(q->graph = calloc(n + 1, sizeof *q->graph))) return oom();
    for (size_t i = 0; i < n; i++, q->n_graph++) {
        qnode *d = &q->graph[i];
        const char *v = mopt_model_node_name(m, i);
        if (!(d->name = strdup(v ? v : ""))) return oom();
        if ((v = mopt_model_node_value(m, i, MOPT_OUTPUT, 0)) && !(d->out_name = strdup(v)))
            return oom();
        for (size_t k = 0; k < QN_MAX_IN; k++)
            if ((v = mopt_model_node_value(m, i, MOPT_INPUT, k)) && !(d->in_names[k] = strdup(v)))
                return oom();
    }
    return 0;
}

static void qnode_free(qnode *d) {
    free(d->name);
    free(d->out_name);
    for (size_t k = 0; k < QN_MAX_IN; k++)
        free(d->in_names[k]);
}

/* 1 - the mean cosine of tensor `name` in the per-layer report (0: not
 * there, e.g. a model input or a weight). */
static double layer_error(const compare_summary *s, const char *name) {
    for (size_t i = 0; name && i < s->n_layers; i++)
        if (strcmp(s->layers[i].name, name) == 0)
            return isnan(s->layers[i].mean_cos) ? 1.0 : 1.0 - s->layers[i].mean_cos;
    return 0.0;
}

/* --rank layers: one per-layer comparison of all-int8 against FP32. Along
 * the graph, each node adds the error e(output) - max e(inputs), e = 1 -
 * cosine; an int8 node is charged its own, another node's goes to the int8
 * node its worst input comes from (a log or a softmax after an int8 product
 * shows that product's error, which the cosine of its own output hides).
 * A node's margin is minus its charge: the most sensitive sorts first. */
static int rank_layers(qc *q) {
    compare_summary s;
    int rc = check_run(q, NULL, 1, 0, &s);
    long *owner = calloc(q->n_graph + 1, sizeof *owner);
    if (rc == EXIT_USAGE || !owner) {
        compare_summary_free(&s);
        free(owner);
        return rc == EXIT_USAGE ? rc : oom();
    }
    for (size_t i = 0; i < q->n_nodes; i++)
        q->nodes[i].value = 0;
    for (size_t j = 0; j < q->n_graph; j++) {
        const qnode *g = &q->graph[j];
        double in = 0;
        const char *worst = NULL;
        for (size_t k = 0; k < QN_MAX_IN; k++) {
            double e = layer_error(&s, g->in_names[k]);
            if (g->in_names[k] && (!worst || e > in)) in = e, worst = g->in_names[k];
        }
        double added = fmax(layer_error(&s, g->out_name) - in, 0.0);
        owner[j] = -1;
        for (size_t i = 0; i < q->n_nodes && owner[j] < 0; i++)
            if (strcmp(q->nodes[i].name, g->name) == 0) owner[j] = (long)i;
        for (size_t p = 0; owner[j] < 0 && worst && p < j; p++) /* the producer's owner */
            if (q->graph[p].out_name && strcmp(q->graph[p].out_name, worst) == 0)
                owner[j] = owner[p];
        if (owner[j] >= 0) q->nodes[owner[j]].value += added;
    }
    for (size_t i = 0; i < q->n_nodes; i++)
        q->nodes[i].margin = -q->nodes[i].value;
    free(owner);
    compare_summary_free(&s);
    return 0;
}

/* --rank output: each node alone int8 (every other one FP32) against FP32,
 * charged the noise it puts on the model's outputs, 1 - the mean cosine
 * over the golden sets (of the worst output). Independent quantization
 * noises add up roughly by power, so the largest contributors go first: a
 * continuous figure, unlike an argmax or top-1 agreement of one node alone
 * (often 1 on every set), and unlike --rank layers it sees what a node
 * does downstream (a per-channel Mul or Add after a depthwise Conv changes
 * the cosine of the tensors between, not the noise at the output). */
static int rank_output(qc *q) {
    for (size_t i = 0; i < q->n_nodes; i++) {
        compare_summary s;
        char *ex = exclude_list(q, (long)i);
        if (!ex) return oom();
        int rc = check_run(q, ex, 0, (size_t)q->rank_sets, &s);
        free(ex);
        if (rc == EXIT_USAGE) return rc;
        q->nodes[i].value = isnan(s.mean_cosine) ? 1.0 : 1.0 - s.mean_cosine;
        q->nodes[i].metric = s.margin_value;
        q->nodes[i].margin = -q->nodes[i].value;
    }
    return 0;
}

/* The nodes that run int8 under precision=int8: one profiled run. */
static int list_int8_nodes(qc *q) {
    bench_config g;
    bench_result r;
    bench_live *l = NULL;
    memset(&r, 0, sizeof r);
    int rc = bench_cfg(q, &g, "int8", NULL, NULL, 1);
    bench_run_opts ro = {0};
    double ms;
    if (!rc && (bench_open(&g, &ro, &r, &l) != 0 || bench_time(l, &r, 1, &ms) != 0)) {
        fprintf(stderr, "mopt: %s at precision=int8: %s\n", q->model, r.error);
        rc = EXIT_FAILURE;
    }
    const mopt_session *s = rc ? NULL : bench_live_session(l);
    size_t n = s ? mopt_session_profile_count(s) : 0;
    q->nodes = calloc(n + 1, sizeof *q->nodes);
    if (!rc && !q->nodes) rc = oom();
    for (size_t i = 0; !rc && i < n; i++) {
        const char *k = mopt_session_profile_kernel(s, i), *op = mopt_session_profile_op(s, i);
        const char *name = mopt_session_profile_node(s, i);
        if (!k || !op || !name || !name[0]) continue;
        if (!strstr(k, "int8") && !strstr(op, "StaticQ")) continue;
        qnode *d = &q->nodes[q->n_nodes];
        if (!(d->name = strdup(name))) rc = oom();
        snprintf(d->op, sizeof d->op, "%s", op);
        q->n_nodes++;
    }
    if (!rc) rc = graph_values(bench_live_model(l), q);
    if (l) bench_close(l, &r);
    bench_result_free(&r);
    bench_config_free(&g);
    return rc;
}

/* --rank cost profiles one sample: the first golden set's inputs cut to 1
 * along their leading dimension (when every input has one > 1), written to
 * a temporary folder; *dir "" when the whole set is used. The profiler
 * times wall clock: on a loaded machine a node longer than a scheduler
 * time slice is preempted in nearly every run (on PP-OCRv4 rec at batch 8,
 * p2o.Conv.28 measured >= 95 ms against ~14 ms of CPU time, the minimum of
 * 20 runs), so the nodes must be short for the minimum to see a clean run. */
static int first_sample(const qc *q, char *dir, size_t dir_size, char **paths) {
    mopt_tensor *t[QN_MAX_IN] = {NULL};
    int rc = 0, cut = q->n_inputs > 0 && q->n_inputs <= QN_MAX_IN;
    dir[0] = '\0';
    for (size_t i = 0; cut && i < q->n_inputs; i++)
        cut = mopt_tensor_load(q->input_paths[i], &t[i]) == MOPT_OK &&
              mopt_tensor_rank(t[i]) >= 1 && mopt_tensor_dim(t[i], 0) > 1;
    if (cut) snprintf(dir, dir_size, "%s", "/tmp/mopt-quantize-check-XXXXXX");
    if (cut && !mkdtemp(dir)) {
        dir[0] = '\0';
        cut = 0;
    }
    for (size_t i = 0; cut && !rc && i < q->n_inputs; i++) {
        int64_t dims[16];
        int rank = mopt_tensor_rank(t[i]);
        mopt_tensor *one = NULL;
        if (rank > 16) {
            rc = EXIT_FAILURE;
            break;
        }
        memcpy(dims, mopt_tensor_dims(t[i]), (size_t)rank * sizeof *dims);
        size_t bytes = mopt_tensor_size_bytes(t[i]) / (size_t)dims[0];
        dims[0] = 1;
        if (!(paths[i] = malloc(strlen(dir) + 32))) {
            rc = oom();
            break;
        }
        sprintf(paths[i], "%s/input_%zu.npy", dir, i);
        int bad = mopt_tensor_create(mopt_tensor_dtype(t[i]), rank, dims, &one) != MOPT_OK;
        if (!bad && bytes) memcpy(mopt_tensor_data(one), mopt_tensor_data_const(t[i]), bytes);
        if (bad || mopt_tensor_save_npy(one, paths[i]) != MOPT_OK) {
            fprintf(stderr, "mopt: cannot write %s\n", paths[i]);
            rc = EXIT_FAILURE;
        }
        mopt_tensor_destroy(one);
    }
    for (size_t i = 0; i < QN_MAX_IN; i++)
        mopt_tensor_destroy(t[i]);
    return rc;
}

static void remove_sample(const qc *q, const char *dir, char **paths) {
    for (size_t i = 0; i < q->n_inputs && i < QN_MAX_IN; i++) {
        if (paths[i]) remove(paths[i]);
        free(paths[i]);
    }
    if (dir[0]) rmdir(dir);
}

static int node_times_on(qc *q, int rounds);

/* --rank cost: each int8 node's kernel time at FP32 and in all-int8, the
 * minimum over `rounds` alternating profiled runs of each (the profiler's
 * per-node wall time; the minimum sheds the load of a shared machine), on
 * one sample (first_sample; the whole first set if the model refuses it). */
static int node_times(qc *q, int rounds) {
    char dir[64], *paths[QN_MAX_IN] = {NULL};
    int rc = first_sample(q, dir, sizeof dir, paths);
    if (!rc && dir[0]) {
        char **whole = q->input_paths;
        q->input_paths = paths;
        rc = node_times_on(q, rounds);
        q->input_paths = whole;
        if (rc == 0) q->time_batch1 = 1;
        if (rc == EXIT_FAILURE)
            fprintf(stderr, "mopt: profiling the first input set cut to one sample failed; "
                            "profiling the whole set\n");
    }
    remove_sample(q, dir, paths);
    if (rc == EXIT_USAGE || q->time_batch1) return rc;
    return node_times_on(q, rounds);
}

static int node_times_on(qc *q, int rounds) {
    bench_config g[2];
    bench_result r[2];
    bench_live *l[2] = {NULL, NULL};
    const char *prec[2] = {"fp32", "int8"};
    bench_run_opts ro = {0};
    int rc = 0, opened = 0;
    memset(r, 0, sizeof r);
    for (size_t i = 0; i < q->n_nodes; i++)
        q->nodes[i].fp32_ns = q->nodes[i].int8_ns = HUGE_VAL;
    for (int c = 0; c < 2 && !rc; c++) {
        opened = c + 1;
        if ((rc = bench_cfg(q, &g[c], prec[c], NULL, NULL, 1)) != 0) break;
        if (bench_open(&g[c], &ro, &r[c], &l[c]) != 0) {
            fprintf(stderr, "mopt: profiling at precision=%s: %s\n", prec[c], r[c].error);
            rc = EXIT_FAILURE;
        }
    }
    for (int round = 0; !rc && round < rounds; round++)
        for (int c = 0; !rc && c < 2; c++) {
            double ms;
            if (bench_time(l[c], &r[c], 1, &ms) != 0) {
                fprintf(stderr, "mopt: profiling: %s\n", r[c].error);
                rc = EXIT_FAILURE;
                break;
            }
            const mopt_session *s = bench_live_session(l[c]);
            size_t n = mopt_session_profile_count(s);
            for (size_t k = 0; k < n; k++) {
                const char *name = mopt_session_profile_node(s, k);
                for (size_t i = 0; name && i < q->n_nodes; i++)
                    if (strcmp(q->nodes[i].name, name) == 0) {
                        double *t = c ? &q->nodes[i].int8_ns : &q->nodes[i].fp32_ns;
                        *t = fmin(*t, (double)mopt_session_profile_ns(s, k));
                    }
            }
        }
    for (size_t i = 0; !rc && i < q->n_nodes; i++)
        if (!isfinite(q->nodes[i].fp32_ns) || !isfinite(q->nodes[i].int8_ns)) {
            fprintf(stderr, "mopt: profiling: node %s missing from a profile\n", q->nodes[i].name);
            rc = EXIT_FAILURE;
        }
    for (int c = 0; c < opened; c++) {
        if (l[c]) bench_close(l[c], &r[c]);
        bench_result_free(&r[c]);
        bench_config_free(&g[c]);
    }
    return rc;
}

/* --rank cost: the time int8 saves on a node (negative: int8 is slower). */
static double saved_ns(const qnode *d) { return d->fp32_ns - d->int8_ns; }

/* --rank cost: a saving below this share of the node's FP32 time is within
 * the profiler's run-to-run noise on a loaded machine (PP-OCRv4 rec, two
 * runs: the one-sample minima moved by a median 1.5%, 6% at the 90th
 * percentile, 16% at most): such a node counts as not sped up, so a few
 * microseconds do not move it across the ranking. */
#define SAVE_MIN 0.10
static int speeds_up(const qnode *d) { return saved_ns(d) > SAVE_MIN * d->fp32_ns; }

/* --rank cost: noise per microsecond saved in steps of 2^(1/2) (the timing
 * noise would otherwise reorder nodes whose ratios are close). */
static double cost_step(const qnode *d) {
    return floor(2.0 * log2(d->value / (saved_ns(d) / 1e3) + 1e-300));
}

/* --rank cost order: first the nodes that int8 does not speed up (falling
 * back costs no time), noisiest first; then the noise each puts on the
 * output alone per microsecond that int8 saves on it, largest first, in
 * steps of 2^(1/2), and within a step the noisiest first (the noise is
 * deterministic, the times are not). */
static int by_cost(const void *pa, const void *pb) {
    const qnode *a = pa, *b = pb;
    int fa = !speeds_up(a), fb = !speeds_up(b);
    if (fa != fb) return fa ? -1 : 1;
    if (!fa) {
        double ka = cost_step(a), kb = cost_step(b);
        if (ka > kb) return -1;
        if (ka < kb) return 1;
    }
    if (a->value > b->value) return -1;
    if (a->value < b->value) return 1;
    return strcmp(a->name, b->name);
}

/* p50 (ms) of all-int8, with the fallbacks in FP32, with them in BF16, and
 * FP32: R interleaved rounds of K runs each. */
#define N_SPEED 4
static int measure_speed(const qc *q, const char *exclude, double p50[N_SPEED]) {
    const char *prec[N_SPEED] = {"int8", "int8", "int8", "fp32"};
    const char *ex[N_SPEED] = {NULL, exclude, exclude, NULL};
    const char *fb[N_SPEED] = {NULL, "fp32", "bf16", NULL};
    bench_config g[N_SPEED];
    bench_result r[N_SPEED];
    bench_live *l[N_SPEED] = {NULL, NULL, NULL, NULL};
    size_t rounds = 5, k = (size_t)q->runs, total = rounds * k;
    double *samples[N_SPEED] = {NULL, NULL, NULL, NULL};
    int rc = 0, opened = 0;
    bench_run_opts ro = {0};
    memset(r, 0, sizeof r);
    for (int c = 0; c < N_SPEED; c++) {
        p50[c] = NAN;
        opened = c + 1;
        if ((rc = bench_cfg(q, &g[c], prec[c], ex[c], fb[c], 0)) != 0) break;
        samples[c] = calloc(total, sizeof **samples);
        if (!samples[c]) {
            rc = oom();
            break;
        }
        if (bench_open(&g[c], &ro, &r[c], &l[c]) != 0) {
            fprintf(stderr, "mopt: timing: %s\n", r[c].error);
            rc = EXIT_FAILURE;
            break;
        }
    }
    for (size_t round = 0; !rc && round < rounds; round++)
        for (int c = 0; !rc && c < N_SPEED; c++)
            if (bench_time(l[c], &r[c], k, samples[c] + round * k) != 0) {
                fprintf(stderr, "mopt: timing: %s\n", r[c].error);
                rc = EXIT_FAILURE;
            }
    for (int c = 0; c < opened; c++) {
        if (!rc) {
            bench_latency lat;
            if (bench_latency_compute(samples[c], total, &lat) == 0) p50[c] = lat.p50;
        }
        if (l[c]) bench_close(l[c], &r[c]);
        bench_result_free(&r[c]);
        bench_config_free(&g[c]);
        free(samples[c]);
    }
    return rc;
}

static int by_margin(const void *pa, const void *pb) {
    const qnode *a = pa, *b = pb;
    if (a->margin < b->margin) return -1;
    if (a->margin > b->margin) return 1;
    return strcmp(a->name, b->name);
}

static int write_options(const qc *q, const char *exclude, double metric, const char *rule) {
    FILE *f = fopen(q->out_path, "w");
    if (!f) {
        fprintf(stderr, "mopt: cannot write %s\n", q->out_path);
        return EXIT_USAGE;
    }
    fprintf(f, "# mopt quantize-check %s --golden %s --budget %s\n", q->model, q->golden,
            q->budget);
    fprintf(f, "# budget holds: %s is %.6g\n", rule, metric);
    fprintf(f, "precision: int8\n");
    if (q->calibration) fprintf(f, "calibration: \"%s\"\n", q->calibration);
    /* the --set options both sides were checked with, so that the file gives
     * the configuration that held the budget (say int8_depthwise=int8) */
    static const char *const written[] = {
        "precision=", "calibration=", "int8_exclude=", "int8_fallback="};
    for (int i = 0; i < q->n_sets; i++) {
        const char *eq = strchr(q->sets[i], '=');
        int skip = !eq;
        for (size_t k = 0; !skip && k < sizeof written / sizeof *written; k++)
            skip = strncmp(q->sets[i], written[k], strlen(written[k])) == 0;
        if (!skip && strchr(eq, '"'))
            fprintf(stderr, "mopt: warning: --set %s has a '\"': not written to %s\n", q->sets[i],
                    q->out_path);
        else if (!skip)
            fprintf(f, "%.*s: \"%s\"\n", (int)(eq - q->sets[i]), q->sets[i], eq + 1);
    }
    if (exclude && *exclude) fprintf(f, "int8_exclude: \"%s\"\n", exclude);
    if (exclude && *exclude && strcmp(q->fallback, "bf16") == 0)
        fprintf(f, "int8_fallback: bf16\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "mopt: cannot write %s\n", q->out_path);
        return EXIT_USAGE;
    }
    return 0;
}

static int run(qc *q) {
    int rc;
    compare_summary all, s;
    if ((rc = find_inputs(q)) != 0 || (rc = list_int8_nodes(q)) != 0) return rc;
    fprintf(q->out, "quantize-check %s: golden set %s, budget %s%s%s\n", q->model, q->golden,
            q->budget, q->calibration ? ", static int8 with " : ", dynamic int8",
            q->calibration ? q->calibration : "");
    if (!q->n_nodes) {
        fprintf(q->out, "no node runs int8 in this model: nothing to check\n");
        return EXIT_FAILURE;
    }
    rc = check(q, NULL, &all);
    if (rc == EXIT_USAGE) return rc;
    if (!all.rules) return usage_error("budget %s has no rule", q->budget);
    fprintf(q->out, "%zu int8 nodes; all-int8: %s is %.6g (%s)\n", q->n_nodes, all.margin_rule,
            all.margin_value, rc ? "budget violated" : "budget holds");
    size_t max_fb = q->max_fallbacks >= 0 ? (size_t)q->max_fallbacks : (q->n_nodes + 1) / 2;
    size_t n_fb = 0;
    int holds = step_holds(q, rc, &all);
    double final_value = all.margin_value;
    if (q->margin > 0 || q->confidence > 0)
        fprintf(q->out,
                "the search requires a slack of %g on the tightest rule (--margin) at %g standard "
                "errors over the %s (--confidence; all-int8: bound %.6g)%s\n",
                q->margin, q->confidence, "golden sets", bound_value(q, &all),
                rc == 0 && !holds ? ": all-int8 holds the budget without it" : "");
    if (!holds && q->rank != RANK_ALONE) {
        /* rank (the output noise of each node alone, or the error each node
         * adds in one per-layer run), then find the fewest top-ranked
         * fallbacks that hold the budget by bisection */
        if ((rc = q->rank == RANK_LAYERS ? rank_layers(q) : rank_output(q)) != 0) return rc;
        if (q->rank == RANK_COST && (rc = node_times(q, (int)q->time_rounds)) != 0) return rc;
        qsort(q->nodes, q->n_nodes, sizeof *q->nodes, q->rank == RANK_COST ? by_cost : by_margin);
        size_t n_free = 0; /* --rank cost: the nodes int8 does not speed up */
        while (q->rank == RANK_COST && n_free < q->n_nodes && !speeds_up(&q->nodes[n_free]))
            n_free++;
        if (q->rank == RANK_COST) {
            fprintf(q->out,
                    "\nranking (that node alone int8, every other FP32: the noise it puts on the "
                    "outputs, 1 - mean cosine, per microsecond int8 saves on it (profiler, min of "
                    "%" PRId64 " runs on %s; in steps of 2^(1/2), noisiest first within a step); "
                    "first the %zu nodes int8 does not speed up by %.0f%% of their FP32 time, "
                    "noisiest first):\n",
                    q->time_rounds,
                    q->time_batch1 ? "the first golden set's first sample" : "the first golden set",
                    n_free, SAVE_MIN * 100);
            fprintf(q->out, "  %-32s %-22s %-12s %-10s %-10s %s\n", "node", "op", "1 - cosine",
                    "fp32 us", "int8 us", "per us saved");
            for (size_t i = 0; i < q->n_nodes; i++) {
                const qnode *d = &q->nodes[i];
                if (i < n_free)
                    fprintf(q->out, "  %-32s %-22s %-12.4g %-10.1f %-10.1f (none saved)\n", d->name,
                            d->op, d->value, d->fp32_ns / 1e3, d->int8_ns / 1e3);
                else
                    fprintf(q->out, "  %-32s %-22s %-12.4g %-10.1f %-10.1f %.4g\n", d->name, d->op,
                            d->value, d->fp32_ns / 1e3, d->int8_ns / 1e3,
                            d->value / (saved_ns(d) / 1e3));
            }
        } else if (q->rank == RANK_LAYERS) {
            fprintf(q->out,
                    "\nranking (one per-layer run of all-int8 against FP32: the error each node "
                    "adds, 1 - cosine of its output less that of its inputs, with the error of "
                    "the float nodes it feeds):\n");
            fprintf(q->out, "  %-32s %-22s %s\n", "node", "op", "error added");
            for (size_t i = 0; i < q->n_nodes; i++)
                fprintf(q->out, "  %-32s %-22s %.4g\n", q->nodes[i].name, q->nodes[i].op,
                        q->nodes[i].value);
        } else {
            fprintf(q->out,
                    "\nranking (that node alone int8, every other FP32: the noise it puts on "
                    "the outputs, 1 - mean cosine; and %s):\n",
                    all.margin_rule);
            fprintf(q->out, "  %-32s %-22s %-12s %s\n", "node", "op", "1 - cosine", "metric");
            for (size_t i = 0; i < q->n_nodes; i++)
                fprintf(q->out, "  %-32s %-22s %-12.4g %.6g\n", q->nodes[i].name, q->nodes[i].op,
                        q->nodes[i].value, q->nodes[i].metric);
        }
        if (max_fb > q->n_nodes) max_fb = q->n_nodes;
        fprintf(q->out, "\nbisection over the top of the ranking (at most %zu of %zu nodes):\n",
                max_fb, q->n_nodes);
        size_t lo = 0, hi = max_fb; /* lo violates; hi is tried first */
        int hi_holds = 0;
        double hi_value = all.margin_value;
        compare_summary hs = all;
        for (int first = 1; first || hi - lo > 1; first = 0) {
            size_t mid = first ? hi : lo + (hi - lo) / 2;
            for (size_t i = 0; i < q->n_nodes; i++)
                q->nodes[i].excluded = i < mid;
            char *ex = exclude_list(q, -1);
            if (!ex) return oom();
            rc = mid ? check(q, ex, &s) : 1;
            if (!mid) s = all;
            free(ex);
            if (rc == EXIT_USAGE) return rc;
            int ok = step_holds(q, rc, &s);
            char bound[48] = "";
            if (q->confidence > 0)
                snprintf(bound, sizeof bound, ", bound %.6g", bound_value(q, &s));
            fprintf(q->out, "  top %-3zu in %s -> %s is %.6g%s (%s)\n", mid,
                    strcmp(q->fallback, "bf16") == 0 ? "BF16" : "FP32", s.margin_rule,
                    s.margin_value, bound,
                    ok        ? "holds"
                    : rc == 0 ? "holds, short of the margin"
                              : "violated");
            if (ok) {
                hi = mid, hi_holds = 1, hi_value = s.margin_value, hs = s;
            } else if (first) {
                hi_value = s.margin_value, hs = s;
                break; /* even the most fallbacks allowed do not hold */
            } else {
                lo = mid;
            }
        }
        if (hi_holds && hi < n_free && n_free <= max_fb) {
            /* falling back the nodes int8 does not speed up costs no time */
            for (size_t i = 0; i < q->n_nodes; i++)
                q->nodes[i].excluded = i < n_free;
            char *ex = exclude_list(q, -1);
            if (!ex) return oom();
            rc = check(q, ex, &s);
            free(ex);
            if (rc == EXIT_USAGE) return rc;
            int ok = step_holds(q, rc, &s);
            fprintf(q->out,
                    "  top %-3zu (every node int8 does not speed up) -> %s is %.6g, bound %.6g "
                    "(%s)\n",
                    n_free, s.margin_rule, s.margin_value, bound_value(q, &s),
                    ok ? "holds" : "violated: kept top");
            if (ok) hi = n_free, hi_value = s.margin_value, hs = s;
        }
        for (size_t i = 0; i < q->n_nodes; i++)
            q->nodes[i].excluded = i < hi;
        n_fb = hi;
        holds = hi_holds;
        final_value = hi_value;
        s = hs;
    } else if (!holds) {
        /* sensitivity: each node quantized alone */
        for (size_t i = 0; i < q->n_nodes; i++) {
            char *ex = exclude_list(q, (long)i);
            if (!ex) return oom();
            rc = check(q, ex, &s);
            free(ex);
            if (rc == EXIT_USAGE) return rc;
            q->nodes[i].margin = s.margin;
            q->nodes[i].value = s.margin_value;
        }
        qsort(q->nodes, q->n_nodes, sizeof *q->nodes, by_margin);
        fprintf(q->out, "\nsensitivity (that node alone int8, every other FP32; %s):\n",
                all.margin_rule);
        fprintf(q->out, "  %-32s %-22s %-12s %s\n", "node", "op", "metric", "slack");
        for (size_t i = 0; i < q->n_nodes; i++)
            fprintf(q->out, "  %-32s %-22s %-12.6g %+.3g\n", q->nodes[i].name, q->nodes[i].op,
                    q->nodes[i].value, q->nodes[i].margin);
        fprintf(q->out, "\ngreedy fallback (at most %zu of %zu nodes):\n", max_fb, q->n_nodes);
        for (size_t i = 0; i < q->n_nodes && n_fb < max_fb && !holds; i++) {
            q->nodes[i].excluded = 1;
            n_fb++;
            char *ex = exclude_list(q, -1);
            if (!ex) return oom();
            rc = check(q, ex, &s);
            free(ex);
            if (rc == EXIT_USAGE) return rc;
            holds = step_holds(q, rc, &s);
            final_value = s.margin_value;
            fprintf(q->out, "  + %-30s -> %s is %.6g (%s)\n", q->nodes[i].name, s.margin_rule,
                    s.margin_value, holds ? "holds" : "violated");
        }
    }
    char *exclude = exclude_list(q, -1);
    if (!exclude) return oom();
    fprintf(q->out, "\nfallback report:\n");
    if (!holds) {
        fprintf(q->out,
                "  REFUSED: all-int8 breaks the budget (%s) and %zu fallback%s (--max-fallbacks "
                "%zu) do not fix it: %s is %.6g with %s excluded\n",
                all.violation, n_fb, n_fb == 1 ? "" : "s", max_fb, all.margin_rule, final_value,
                exclude[0] ? exclude : "nothing");
        fprintf(q->out,
                "  the model is not quantized: keep precision=fp32 (or bf16), or allow more "
                "fallbacks; no options written\n");
        free(exclude);
        return EXIT_FAILURE;
    }
    fprintf(q->out, "  fell back to %s: %zu of %zu int8 nodes%s\n",
            strcmp(q->fallback, "bf16") == 0 ? "BF16" : "FP32", n_fb, q->n_nodes,
            n_fb ? ":" : " (all-int8 meets the budget)");
    for (size_t i = 0; i < q->n_nodes; i++)
        if (q->nodes[i].excluded)
            fprintf(q->out, "    %-32s %-22s %s %.6g\n", q->nodes[i].name, q->nodes[i].op,
                    q->rank == RANK_ALONE    ? "alone int8:"
                    : q->rank == RANK_LAYERS ? "error added:"
                                             : "1 - cosine alone:",
                    q->nodes[i].value);
    fprintf(q->out, "  still int8: %zu of %zu nodes\n", q->n_nodes - n_fb, q->n_nodes);
    char bound[64] = "";
    if (q->confidence > 0)
        snprintf(bound, sizeof bound, ", %g standard errors below: %.6g", q->confidence,
                 bound_value(q, n_fb ? &s : &all));
    fprintf(q->out, "  final: %s is %.6g%s (budget holds)\n",
            n_fb ? s.margin_rule : all.margin_rule, final_value, bound);
    double p50[N_SPEED];
    if (q->runs > 0) {
        if ((rc = measure_speed(q, exclude, p50)) != 0) {
            free(exclude);
            return rc;
        }
        fprintf(q->out,
                "  speed p50: all-int8 %.3f ms, with fallbacks %.3f ms (FP32) / %.3f ms (BF16), "
                "fp32 %.3f ms (5 interleaved rounds of %" PRId64 " runs)\n",
                p50[0], p50[1], p50[2], p50[3], q->runs);
    }
    if (q->out_path) {
        rc = write_options(q, exclude, final_value, n_fb ? s.margin_rule : all.margin_rule);
        if (!rc) fprintf(q->out, "  wrote %s\n", q->out_path);
    }
    free(exclude);
    return rc;
}

int cmd_quantize_check(int argc, char **argv) {
    qc q;
    memset(&q, 0, sizeof q);
    q.max_fallbacks = -1;
    q.runs = 20;
    q.rank_sets = 4;
    q.time_rounds = 20;
    q.fallback = "fp32";
    q.sets = calloc((size_t)argc, sizeof *q.sets);
    if (!q.sets) return oom();
    int rc = 0;
    const char *report = NULL;
    q.out = stdout;
    const string_flag strings[] = {{"--golden", &q.golden},
                                   {"--budget", &q.budget},
                                   {"--calibration", &q.calibration},
                                   {"--threads", &q.threads},
                                   {"-o", &q.out_path},
                                   {"--report", &report},
                                   {NULL, NULL}};
    for (int i = 2; i < argc && !rc; i++) {
        const char *v = NULL;
        int r;
        int64_t x = 0;
        if ((r = string_flags(argc, argv, &i, strings)) != 0) {
            /* stored; a missing value is caught below */
        } else if ((r = flag_value(argc, argv, &i, "--precision", &v)) != 0) {
            if (r > 0 && strcmp(v, "int8") != 0)
                rc = usage_error("'mopt quantize-check' checks --precision int8 only, not '%s'", v);
        } else if ((r = flag_value(argc, argv, &i, "--set", &v)) != 0) {
            q.sets[q.n_sets++] = v;
        } else if ((r = flag_value(argc, argv, &i, "--fallback", &v)) != 0) {
            if (r > 0 && strcmp(v, "fp32") != 0 && strcmp(v, "bf16") != 0)
                rc = usage_error("--fallback %s: expected fp32 or bf16", v);
            else if (r > 0)
                q.fallback = v;
        } else if ((r = flag_value(argc, argv, &i, "--rank", &v)) != 0) {
            if (r > 0 && strcmp(v, "output") != 0 && strcmp(v, "layers") != 0 &&
                strcmp(v, "alone") != 0 && strcmp(v, "cost") != 0)
                rc = usage_error("--rank %s: expected output, layers, alone or cost", v);
            else if (r > 0)
                q.rank = strcmp(v, "alone") == 0    ? RANK_ALONE
                         : strcmp(v, "layers") == 0 ? RANK_LAYERS
                         : strcmp(v, "cost") == 0   ? RANK_COST
                                                    : RANK_OUTPUT;
        } else if ((r = flag_value(argc, argv, &i, "--rank-sets", &v)) != 0) {
            if (r > 0 && (!parse_i64(v, &x) || x < 0))
                rc = usage_error("--rank-sets %s: expected a number >= 0 (0: all)", v);
            else if (r > 0)
                q.rank_sets = x;
        } else if ((r = flag_value(argc, argv, &i, "--margin", &v)) != 0) {
            char *end = NULL;
            double m = r > 0 ? strtod(v, &end) : 0;
            if (r > 0 && (!end || *end || !(m >= 0 && m < 1)))
                rc = usage_error("--margin %s: expected a number in [0, 1)", v);
            else if (r > 0)
                q.margin = m;
        } else if ((r = flag_value(argc, argv, &i, "--confidence", &v)) != 0) {
            char *end = NULL;
            double z = r > 0 ? strtod(v, &end) : 0;
            if (r > 0 && (!end || *end || !(z >= 0 && z <= 10)))
                rc = usage_error("--confidence %s: expected a number of standard errors in [0, 10]",
                                 v);
            else if (r > 0)
                q.confidence = z;
        } else if ((r = flag_value(argc, argv, &i, "--time-rounds", &v)) != 0) {
            if (r > 0 && (!parse_i64(v, &x) || x < 1 || x > 1000))
                rc = usage_error("--time-rounds %s: expected a number in [1, 1000]", v);
            else if (r > 0)
                q.time_rounds = x;
        } else if ((r = flag_value(argc, argv, &i, "--max-fallbacks", &v)) != 0) {
            if (r > 0 && (!parse_i64(v, &x) || x < 0))
                rc = usage_error("--max-fallbacks %s: expected a number >= 0", v);
            else if (r > 0)
                q.max_fallbacks = x;
        } else if ((r = flag_value(argc, argv, &i, "--runs", &v)) != 0) {
            if (r > 0 && (!parse_i64(v, &x) || x < 0 || x > 100000))
                rc = usage_error("--runs %s: expected a number >= 0", v);
            else if (r > 0)
                q.runs = x;
        } else {
            rc = model_arg("quantize-check", argv[i], &q.model);
        }
        if (r < 0) rc = EXIT_USAGE;
    }
    if (!rc && (!q.model || !q.golden || !q.budget))
        rc = usage_error("'mopt quantize-check' needs MODEL, --golden DIR and --budget FILE.yaml");
    if (!rc && report && !(q.out = fopen(report, "w"))) {
        q.out = stdout;
        rc = usage_error("--report %s: cannot write it", report);
    }
    if (!rc) rc = run(&q);
    if (fflush(q.out) != 0 && !rc) rc = EXIT_USAGE;
    if (q.out != stdout && fclose(q.out) != 0 && !rc) rc = EXIT_USAGE;
    for (size_t i = 0; i < q.n_nodes; i++)
        qnode_free(&q.nodes[i]);
    for (size_t i = 0; i < q.n_graph; i++)
        qnode_free(&q.graph[i]);
    free(q.graph);
    free(q.nodes);
    for (size_t i = 0; i < q.n_inputs; i++) {
        if (q.input_names) free(q.input_names[i]);
        if (q.input_paths) free(q.input_paths[i]);
    }
    free(q.input_names);
    free(q.input_paths);
    free(q.sets);
    return rc;
}
