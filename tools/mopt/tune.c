/*
 * tune.c — `mopt tune MODEL --inputs DIR --target p95|p50|throughput -o OUT`:
 * measures the model with the library defaults (the baseline), then tries
 * the settings of a candidate list stage by stage (opt levels, backends,
 * precisions, thread counts, batch sizes), measures every candidate the same
 * way (bench/run.c, the code of mopt-bench), checks it against a quality
 * budget (compare_run, the code of `mopt compare`), and keeps the best
 * candidate that holds the budget. Writes OUT/model.mopt, OUT/options.yaml,
 * OUT/report.md and three PNG charts (plot_png.c).
 *
 * The decision rule (also printed in the report): within a stage the
 * incumbent, an A/A slot (the incumbent's session again) and the stage's
 * candidates are timed in interleaved rounds (a seeded shuffle of the order every
 * round); per round, each slot's target metric is taken over that round's
 * runs and divided by the incumbent's of the same round (paired against the
 * machine's drifts). noise = how far the 90% bootstrap interval of the A/A
 * slot's median ratio reaches from 1; a candidate wins only when its median
 * ratio is below 1 - max(--min-gain, noise) and the upper end of its own
 * interval is below 1. Among the
 * winners, the earliest in list order whose median ratio is within that
 * threshold of the best one's is kept (simpler first). The bootstrap uses a
 * fixed seed, so the same timings always give the same decision.
 */
#define MOPT_EXPERIMENTAL_API /* pass report, profile */
#include <mopt/mopt.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mopt_cli.h"
#include "plot_png.h"
#include "prof.h"
#include "run.h"
#include "stats.h"
#include "sysinfo.h"
#include "tune_decide.h"

#define MAX_KV 8
#define MAX_ROUNDS 64
#define MAX_LIST 16
#define BOOT_N TD_BOOT_N
#define BOOT_SEED TD_SEED

enum { T_P50, T_P95, T_THROUGHPUT };
static const char *const k_target_names[] = {"p50", "p95", "throughput"};

/* ---- the candidate list (data) --------------------------------------------
 * Each entry is tried on top of the incumbent of its stage: its KEY=VALUE
 * settings replace the incumbent's. Stages run in this order; within a
 * stage, earlier entries are preferred when timings are within noise. The
 * "threads" and "batch" stages come from --threads and --batch. To add a
 * candidate, add a line with its settings to its stage. The value "@CALIB"
 * stands for OUT/calibration.yaml, written once (by `mopt calibrate` on the
 * --inputs sets) when a candidate first needs it; "@FALLBACK" for the
 * int8_exclude list `mopt quantize-check` picks against the budget (run
 * once; the candidate fails when it refuses or needs no fallback). */
typedef struct tune_choice {
    const char *stage;
    const char *set[3]; /* KEY=VALUE, NULL-terminated */
} tune_choice;

/* clang-format off */
static const tune_choice k_choices[] = {
    {"opt_level", {"opt_level=2", NULL}},
    {"opt_level", {"opt_level=1", NULL}},
    {"opt_level", {"opt_level=0", NULL}},
    {"precision", {"precision=bf16", NULL}},
    {"precision", {"precision=int8", NULL}},
    {"precision", {"precision=int8", "calibration=@CALIB", NULL}}, /* static INT8 */
    {"precision", {"precision=int8", "int8_exclude=@FALLBACK", NULL}}, /* per-layer fallback */
    {"backend", {"backend=cpu", NULL}},
    {"backend", {"backend=onednn", NULL}},
    {"backend", {"backend=openblas", NULL}},
};
/* clang-format on */

/* ---- candidates ---------------------------------------------------------- */

enum { C_PENDING, C_FAILED, C_SKIPPED, C_MEASURED };

typedef struct cand {
    int id; /* 1, 2, ... in the report; 0 the baseline */
    char stage[24];
    char label[96];        /* what it changes: "precision=int8" */
    char kv[MAX_KV][1100]; /* its whole option set, KEY=VALUE */
    int n_kv;
    int64_t batch; /* 0: the input set as it is; else the rows fed */
    int status;
    char error[400];
    bench_config cfg;
    bench_result res;
    bench_live *live;
    int64_t rss_added; /* peak RSS growth over load, first run and warm-up */
    double *samples;   /* every timed run, ms */
    size_t n_samples, cap;
    double rm[MAX_ROUNDS]; /* per-round target metric */
    int n_rm;
    double med, lo, hi; /* median ratio to the stage's incumbent, 90% interval */
    double threshold;   /* of the stage it was judged in */
    int judged;
    struct cand *shadow_of; /* the A/A slot: the same session as this incumbent */
    int q_checked, q_ok, q_error;
    compare_summary q;
    char verdict[16]; /* kept, dropped, baseline, failed, skipped */
    char why[600];
} cand;

typedef struct tuner {
    const char *model, *inputs, *golden, *budget, *out;
    int target;
    int64_t batches[MAX_LIST], threads[MAX_LIST];
    int n_batches, n_threads;
    int64_t rounds, runs;
    double min_gain;
    double deadline; /* bench_now_s() value; 0: none */
    double max_minutes;
    int tty;
    cand **c; /* every candidate, in order */
    size_t n_c;
    char **input_names, **input_paths; /* set 0 */
    size_t n_inputs;
    int batch_symbolic; /* input dim 0 is symbolic: batch candidates can be fed */
    int refs_stored;    /* the golden set holds reference outputs */
    char budget_note[256];
    char skipped[2048]; /* what --max-minutes left out */
    size_t n_skipped;
    char calib_path[1024]; /* OUT/calibration.yaml */
    int calib_state;       /* 0 not made, 1 made, -1 failed */
    char fallback[4096];   /* int8_exclude from quantize-check */
    char fallback_why[600];
    int fallback_state;    /* 0 not run, 1 a list, -1 none (fallback_why says why) */
    char stage_log[16384]; /* report lines, per stage */
    size_t log_len;
} tuner;

static void logf_(tuner *t, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void logf_(tuner *t, const char *fmt, ...) {
    if (t->log_len >= sizeof t->stage_log - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->stage_log + t->log_len, sizeof t->stage_log - t->log_len, fmt, ap);
    va_end(ap);
    if (k > 0) t->log_len += (size_t)k;
    if (t->log_len >= sizeof t->stage_log) t->log_len = sizeof t->stage_log - 1;
}

/* Progress: a bar redrawn on a terminal, plain lines otherwise. */
static void progress(tuner *t, double frac, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void progress(tuner *t, double frac, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!t->tty) {
        fprintf(stderr, "tune: %s\n", msg);
        return;
    }
    char bar[25];
    bench_progress_bar(bar, 24, frac);
    fprintf(stderr, "\r\033[K[%s] %.70s", bar, msg);
    fflush(stderr);
}

static void progress_done(tuner *t) {
    if (t->tty) fprintf(stderr, "\r\033[K");
}

static int expired(const tuner *t) { return t->deadline > 0 && bench_now_s() >= t->deadline; }

static void kv_set(cand *c, const char *kv) {
    const char *eq = strchr(kv, '=');
    size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
    for (int i = 0; i < c->n_kv; i++)
        if (strncmp(c->kv[i], kv, klen) == 0 && c->kv[i][klen] == '=') {
            snprintf(c->kv[i], sizeof c->kv[i], "%s", kv);
            return;
        }
    if (c->n_kv < MAX_KV) snprintf(c->kv[c->n_kv++], sizeof c->kv[0], "%s", kv);
}

static void settings_str(const cand *c, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->n_kv && n < cap; i++) {
        int k = snprintf(buf + n, cap - n, "%s%s", n ? " " : "", c->kv[i]);
        if (k > 0) n += (size_t)k;
    }
    if (c->batch && n < cap) snprintf(buf + n, cap - n, "%sbatch=%" PRId64, n ? " " : "", c->batch);
    if (!buf[0]) snprintf(buf, cap, "(library defaults)");
}

/* Writes OUT/calibration.yaml with `mopt calibrate` (once); 0 or -1. */
static int calibrate_once(tuner *t) {
    if (t->calib_state) return t->calib_state > 0 ? 0 : -1;
    snprintf(t->calib_path, sizeof t->calib_path, "%s/calibration.yaml", t->out);
    char *argv[] = {
        "mopt",        "calibrate", (char *)t->model, "--inputs", (char *)t->inputs, "-o",
        t->calib_path, NULL};
    progress(t, 0, "calibrating on the input sets (mopt calibrate)");
    int rc = cmd_calibrate(7, argv);
    t->calib_state = rc == 0 ? 1 : -1;
    logf_(t, "- calibration table %s: %s\n", t->calib_path,
          rc == 0 ? "written by mopt calibrate (minmax) on the --inputs sets"
                  : "mopt calibrate failed");
    return rc == 0 ? 0 : -1;
}

/* The per-layer fallback (mopt quantize-check, once): OUT/fallback.yaml and
 * its report OUT/work/fallback.txt; the int8_exclude list into t->fallback.
 * 0, or -1 with t->fallback_why. */
static int fallback_once(tuner *t) {
    if (t->fallback_state) return t->fallback_state > 0 ? 0 : -1;
    char opts[1100], report[1100];
    snprintf(opts, sizeof opts, "%s/fallback.yaml", t->out);
    snprintf(report, sizeof report, "%s/work/fallback.txt", t->out);
    char *argv[] = {"mopt",     "quantize-check",  (char *)t->model, "--golden", (char *)t->golden,
                    "--budget", (char *)t->budget, "--runs",         "0",        "-o",
                    opts,       "--report",        report,           NULL};
    progress(t, 0, "per-layer int8 fallback (mopt quantize-check)");
    int rc = cmd_quantize_check(13, argv);
    t->fallback_state = -1;
    if (rc == 1)
        snprintf(t->fallback_why, sizeof t->fallback_why,
                 "mopt quantize-check refused: the allowed fallbacks do not meet the budget "
                 "(work/fallback.txt)");
    else if (rc)
        snprintf(t->fallback_why, sizeof t->fallback_why,
                 "mopt quantize-check failed (see stderr)");
    FILE *f = rc ? NULL : fopen(opts, "r");
    char line[sizeof t->fallback + 32];
    while (f && fgets(line, sizeof line, f)) {
        const char *key = "int8_exclude: \"";
        if (strncmp(line, key, strlen(key)) != 0) continue;
        char *v = line + strlen(key), *end = strrchr(v, '"');
        if (end) *end = '\0';
        snprintf(t->fallback, sizeof t->fallback, "%s", v);
        t->fallback_state = 1;
    }
    if (f) fclose(f);
    if (t->fallback_state > 0 && strlen(t->fallback) > 1000) {
        t->fallback_state = -1;
        snprintf(t->fallback_why, sizeof t->fallback_why,
                 "the int8_exclude list (fallback.yaml) is too long for a tune candidate");
    } else if (!rc && t->fallback_state < 0)
        snprintf(t->fallback_why, sizeof t->fallback_why,
                 "all-int8 holds the budget: no node needs a fallback (work/fallback.txt)");
    logf_(t, "- per-layer int8 fallback (mopt quantize-check, report work/fallback.txt): %s%s\n",
          t->fallback_state > 0 ? "int8_exclude=" : "",
          t->fallback_state > 0 ? t->fallback : t->fallback_why);
    return t->fallback_state > 0 ? 0 : -1;
}

static cand *cand_new(tuner *t, const cand *from, const char *stage, const char *label) {
    cand **nc = realloc(t->c, (t->n_c + 1) * sizeof *nc);
    if (!nc) return NULL;
    t->c = nc;
    cand *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (from) {
        memcpy(c->kv, from->kv, sizeof c->kv);
        c->n_kv = from->n_kv;
        c->batch = from->batch;
    }
    c->id = (int)t->n_c;
    snprintf(c->stage, sizeof c->stage, "%s", stage);
    snprintf(c->label, sizeof c->label, "%s", label);
    c->med = c->lo = c->hi = NAN;
    bench_config_init(&c->cfg);
    bench_result_init(&c->res, NULL);
    t->c[t->n_c++] = c;
    return c;
}

/* ---- statistics (the decision itself: tune_decide.c) ----------------- */

static double median_of(double *v, size_t n) { return td_median(v, n); } /* sorts v */
static uint64_t splitmix(uint64_t *s) { return td_splitmix(s); }
static int boot_median(const double *x, size_t n, double *med, double *lo, double *hi) {
    return td_boot_median(x, n, med, lo, hi);
}

/* The target metric of k runs (ms): p50 or p95 of the run times, or for
 * throughput the time per item (lower is better in every case). */
static double metric_of(const tuner *t, const double *s, size_t k, int64_t items) {
    if (t->target == T_THROUGHPUT) {
        double sum = 0;
        for (size_t i = 0; i < k; i++)
            sum += s[i];
        return sum / (double)k / (double)(items > 0 ? items : 1);
    }
    bench_latency l;
    if (bench_latency_compute(s, k, &l) != 0) return NAN;
    return t->target == T_P50 ? l.p50 : l.p95;
}

static const char *metric_unit(const tuner *t) {
    return t->target == T_THROUGHPUT ? "ms per item" : t->target == T_P50 ? "p50 ms" : "p95 ms";
}

/* ---- opening, measuring, checking ---------------------------------------- */

static int write_batch_inputs(tuner *t, int64_t batch, char dir[512]) {
    snprintf(dir, 512, "%s/work/batch%" PRId64, t->out, batch);
    if (make_dirs(dir) != 0) return -1;
    for (size_t i = 0; i < t->n_inputs; i++) {
        mopt_tensor *src = NULL, *dst = NULL;
        if (mopt_tensor_load(t->input_paths[i], &src) != MOPT_OK) return -1;
        int rank = mopt_tensor_rank(src);
        if (rank < 1) {
            mopt_tensor_destroy(src);
            return -1;
        }
        int64_t dims[16];
        for (int a = 0; a < rank && a < 16; a++)
            dims[a] = mopt_tensor_dim(src, a);
        dims[0] *= batch;
        mopt_status st = mopt_tensor_create(mopt_tensor_dtype(src), rank, dims, &dst);
        if (st == MOPT_OK) {
            size_t bytes = mopt_tensor_size_bytes(src);
            for (int64_t b = 0; b < batch; b++)
                memcpy((char *)mopt_tensor_data(dst) + (size_t)b * bytes,
                       mopt_tensor_data_const(src), bytes);
            char path[1024];
            snprintf(path, sizeof path, "%s/input_%zu.npy", dir, i);
            st = mopt_tensor_save_npy(dst, path);
        }
        mopt_tensor_destroy(src);
        mopt_tensor_destroy(dst);
        if (st != MOPT_OK) return -1;
    }
    return 0;
}

/* Loads c (bench_open) with its options and inputs. 0, or -1 (c->error). */
static int cand_open(tuner *t, cand *c) {
    bench_config *g = &c->cfg;
    int bad = bench_config_set_str(&g->model, t->model) != 0;
    g->warmup = 3;
    for (int i = 0; i < c->n_kv; i++) {
        char key[96];
        const char *eq = strchr(c->kv[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - c->kv[i]), c->kv[i]);
        bad |= bench_config_add_option(g, key, eq + 1) != 0;
    }
    char dir[512];
    if (c->batch > 0 && write_batch_inputs(t, c->batch, dir) != 0) {
        snprintf(c->error, sizeof c->error, "cannot write the batch-%" PRId64 " inputs in %s",
                 c->batch, dir);
        c->status = C_FAILED;
        return -1;
    }
    for (size_t i = 0; i < t->n_inputs; i++) {
        char path[1024];
        if (c->batch > 0)
            snprintf(path, sizeof path, "%s/input_%zu.npy", dir, i);
        else
            snprintf(path, sizeof path, "%s", t->input_paths[i]);
        bad |= bench_config_add_input(g, t->input_names[i], path) != 0;
    }
    if (bad) {
        snprintf(c->error, sizeof c->error, "out of memory");
        c->status = C_FAILED;
        return -1;
    }
    bad |= bench_config_set_str(&g->name, c->label) != 0;
    bench_peak_rss_reset();
    int64_t before = bench_peak_rss_bytes();
    bench_run_opts ro = {0};
    if (bench_open(g, &ro, &c->res, &c->live) != 0) {
        snprintf(c->error, sizeof c->error, "%s", c->res.error);
        c->status = C_FAILED;
        return -1;
    }
    c->rss_added = c->res.peak_rss_bytes - before;
    return 0;
}

static void cand_close(cand *c) {
    if (!c->live) return;
    if (c->n_samples && !c->res.ok) bench_finish(c->live, &c->res, c->samples, c->n_samples, 0.0);
    bench_close(c->live, &c->res);
    c->live = NULL;
}

/* k timed runs of c; appends the samples and the round metric. */
static int cand_round(tuner *t, cand *c, size_t k) {
    if (c->n_samples + k > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        while (cap < c->n_samples + k)
            cap *= 2;
        double *s = realloc(c->samples, cap * sizeof *s);
        if (!s) return -1;
        c->samples = s;
        c->cap = cap;
    }
    double *dst = c->samples + c->n_samples;
    /* untimed runs first (a quarter of k, at least 2): caches, and the
     * previous slot's threads going idle */
    size_t nd = k / 4 > 2 ? k / 4 : 2;
    if (bench_time(c->live, &c->res, nd, dst) != 0 || bench_time(c->live, &c->res, k, dst) != 0) {
        snprintf(c->error, sizeof c->error, "%s", c->res.error);
        return -1;
    }
    c->n_samples += k;
    if (c->n_rm < MAX_ROUNDS) c->rm[c->n_rm++] = metric_of(t, dst, k, c->res.items);
    return 0;
}

static int cand_finish(cand *c) {
    c->res.ok = 0;
    return bench_finish(c->live, &c->res, c->samples, c->n_samples, 0.0);
}

/* Checks c against the budget with compare_run: REF is the model with the
 * library defaults (FP32), or the golden set's stored outputs. */
static void cand_quality(tuner *t, cand *c, const cand *base) {
    const char *test_sets[MAX_KV], *ref_sets[MAX_KV];
    for (int i = 0; i < c->n_kv; i++)
        test_sets[i] = c->kv[i];
    for (int i = 0; i < base->n_kv; i++)
        ref_sets[i] = base->kv[i];
    compare_args a;
    memset(&a, 0, sizeof a);
    a.ref_model = a.test_model = t->model;
    a.golden = t->golden;
    a.budget = t->budget;
    a.ref_sets = ref_sets;
    a.n_ref = base->n_kv;
    a.test_sets = test_sets;
    a.n_test = c->n_kv;
    char path[1024];
    snprintf(path, sizeof path, "%s/work/quality_%d.txt", t->out, c->id);
    FILE *f = fopen(path, "w");
    int rc = compare_run(&a, f ? f : stderr, &c->q);
    if (f) fclose(f);
    c->q_checked = 1;
    c->q_ok = rc == 0;
    c->q_error = rc == EXIT_USAGE;
}

/* ---- a stage -------------------------------------------------------------- */

static size_t runs_per_round(const tuner *t, const cand *inc) {
    if (t->runs > 0) return (size_t)t->runs;
    /* about 60 ms per slot, from the incumbent's first run: short slots
     * pair better against a load that changes from one second to the next */
    double ms = inc->res.first_run_ms > 0 ? inc->res.first_run_ms : 1.0;
    double k = ceil(60.0 / ms);
    double lo = t->target == T_P95 ? 40 : 10;
    if (k < lo) k = lo;
    if (k > 200) k = 200;
    return (size_t)k;
}

/* Times the live candidates list[0..n) (list[0] the incumbent) in
 * interleaved rounds. */
static int time_rounds(tuner *t, cand **list, size_t n, const char *stage, size_t k) {
    int64_t rounds = t->rounds;
    uint64_t seed = BOOT_SEED ^ (uint64_t)n;
    /* an untimed warm-up round: every session sees the others' cache traffic
     * and settles its thread use before anything counts */
    double *scratch = malloc(k * sizeof *scratch);
    if (!scratch) return -1;
    for (size_t j = 0; j < n; j++) {
        cand *c = list[j];
        if (!c->live || c->shadow_of) continue;
        if (bench_time(c->live, &c->res, k, scratch) != 0) {
            snprintf(c->error, sizeof c->error, "%s", c->res.error);
            c->status = C_FAILED;
            snprintf(c->verdict, sizeof c->verdict, "failed");
            snprintf(c->why, sizeof c->why, "a warm-up run failed: %s", c->error);
            if (j == 0) {
                free(scratch);
                return -1;
            }
            cand_close(c);
        }
    }
    free(scratch);
    for (int64_t r = 0; r < rounds; r++) {
        if (r >= 3 && expired(t)) {
            logf_(t, "- time budget reached: stopped after %" PRId64 " of %" PRId64 " rounds\n", r,
                  rounds);
            break;
        }
        /* a new seeded order every round (Fisher-Yates): no slot always
         * follows the same one (an OpenMP pool left spinning, warm caches) */
        size_t order[MAX_LIST + 8];
        for (size_t j = 0; j < n; j++)
            order[j] = j;
        for (size_t j = n; j > 1; j--) {
            size_t q = (size_t)(splitmix(&seed) % j), tmp = order[j - 1];
            order[j - 1] = order[q];
            order[q] = tmp;
        }
        for (size_t j = 0; j < n; j++) {
            cand *c = list[order[j]];
            if (!c->live) continue;
            if (t->tty)
                progress(t, (double)(r * (int64_t)n + (int64_t)j) / (double)(rounds * (int64_t)n),
                         "%s: round %" PRId64 "/%" PRId64 ": #%d %s", stage, r + 1, rounds, c->id,
                         c->label);
            if (cand_round(t, c, k) != 0) {
                if (c->shadow_of) return -1; /* its session is the incumbent's */
                c->status = C_FAILED;
                snprintf(c->verdict, sizeof c->verdict, "failed");
                snprintf(c->why, sizeof c->why, "a timed run failed: %s", c->error);
                cand_close(c);
                if (c == list[0]) return -1;
            }
        }
    }
    return 0;
}

/* Judges list[2..n) against list[0] (list[1] is the incumbent's A/A slot)
 * with td_decide; returns the index of the one kept (0: the incumbent). */
static size_t judge(tuner *t, cand **list, size_t n) {
    cand *inc = list[0];
    td_cand tc[MAX_LIST + 8];
    size_t idx[MAX_LIST + 8], m = 0;
    for (size_t j = 2; j < n; j++) {
        cand *c = list[j];
        if (c->status != C_MEASURED || c->n_rm == 0) continue;
        tc[m] = (td_cand){.rm = c->rm, .n = (size_t)c->n_rm, .quality_ok = c->q_ok};
        idx[m++] = j;
    }
    size_t rounds = (size_t)(list[1]->n_rm < inc->n_rm ? list[1]->n_rm : inc->n_rm);
    td_result o;
    if (td_decide(inc->rm, list[1]->rm, rounds, tc, m, t->min_gain, &o) != 0) return 0;
    double th = o.threshold;
    logf_(t,
          "- noise: the incumbent #%d against itself (A/A slot): median ratio %.3f, 90%% "
          "interval %.3f..%.3f -> noise %.1f%%; threshold %.1f%%%s\n",
          inc->id, o.aa_med, o.aa_lo, o.aa_hi, 100 * o.noise, 100 * th,
          th >= 1      ? " (too noisy to tell any gain: the incumbent stays; more --rounds, or a "
                         "quieter machine)"
          : th >= 0.25 ? " (noisy: only large gains can be told)"
                       : "");
    size_t pick = o.pick ? idx[o.pick - 1] : 0, best = o.best ? idx[o.best - 1] : 0;
    for (size_t q = 0; q < m; q++) {
        cand *c = list[idx[q]];
        const td_cand *k = &tc[q];
        if (!k->judged) continue;
        c->med = k->med;
        c->lo = k->lo;
        c->hi = k->hi;
        c->threshold = th;
        c->judged = 1;
        snprintf(c->verdict, sizeof c->verdict, "%s", idx[q] == pick ? "kept" : "dropped");
        if (!c->q_ok)
            snprintf(c->why, sizeof c->why, "breaks the quality budget: %s%s",
                     c->q.violation[0] ? c->q.violation
                     : c->q_error      ? "the comparison failed (see work/quality_N.txt)"
                                       : "",
                     k->faster ? " (it was faster)" : "");
        else if (!k->faster)
            snprintf(c->why, sizeof c->why,
                     "not faster beyond noise: median ratio %.3f, 90%% interval %.3f..%.3f; "
                     "needs a median < %.3f and an upper end < 1",
                     c->med, c->lo, c->hi, 1.0 - th);
        else if (idx[q] == pick)
            snprintf(c->why, sizeof c->why,
                     "faster beyond noise: median ratio %.3f < %.3f (90%% interval %.3f..%.3f)%s",
                     c->med, 1.0 - th, c->lo, c->hi,
                     pick != best ? "; within the threshold of a faster later candidate, "
                                    "so the earlier (simpler) one is kept"
                                  : "");
        else
            snprintf(c->why, sizeof c->why, "faster (median ratio %.3f) but #%d was kept: %s",
                     c->med, list[pick]->id,
                     idx[q] < pick ? "it is faster beyond the threshold"
                                   : "it is earlier in the list and within the threshold");
    }
    return pick;
}

static void finish_stats(cand *c) {
    if (c->live && c->n_samples) cand_finish(c);
}

/* Runs one stage: the alternatives are the incumbent's options with each of
 * sets[k] (n_alt of them) applied. Returns the new incumbent. */
static cand *run_stage(tuner *t, cand *inc, cand *base, const char *stage,
                       const char *const (*sets)[3], const char *const *labels,
                       const int64_t *batches, size_t n_alt) {
    cand *list[MAX_LIST + 8];
    size_t n = 0;
    cand shadow;
    memset(&shadow, 0, sizeof shadow);
    list[n++] = inc;
    list[n++] = &shadow;
    logf_(t, "\n### Stage: %s\n\n", stage);
    for (size_t k = 0; k < n_alt && n < MAX_LIST + 8; k++) {
        cand *c = cand_new(t, inc, stage, labels[k]);
        if (!c) return inc;
        int calib_failed = 0, fallback_failed = 0;
        for (int s = 0; sets && sets[k][s]; s++) {
            const char *kv = sets[k][s], *at = strstr(kv, "@CALIB"), *fb = strstr(kv, "@FALLBACK");
            char buf[sizeof t->fallback + 64];
            if (at) {
                if (calibrate_once(t) != 0) calib_failed = 1;
                snprintf(buf, sizeof buf, "%.*s%s", (int)(at - kv), kv, t->calib_path);
                kv = buf;
            }
            if (fb) {
                if (!expired(t) && fallback_once(t) != 0) fallback_failed = 1;
                snprintf(buf, sizeof buf, "%.*s%s", (int)(fb - kv), kv, t->fallback);
                kv = buf;
            }
            kv_set(c, kv);
        }
        if ((calib_failed || fallback_failed) && !expired(t)) {
            c->status = C_FAILED;
            snprintf(c->verdict, sizeof c->verdict, "failed");
            snprintf(c->why, sizeof c->why, "%s",
                     calib_failed ? "mopt calibrate failed on --inputs (see stderr)"
                                  : t->fallback_why);
            continue;
        }
        if (batches) c->batch = batches[k];
        if (expired(t)) {
            c->status = C_SKIPPED;
            snprintf(c->verdict, sizeof c->verdict, "skipped");
            snprintf(c->why, sizeof c->why, "--max-minutes %.4g reached before it was tried",
                     t->max_minutes);
            size_t len = strlen(t->skipped);
            snprintf(t->skipped + len, sizeof t->skipped - len, "%s#%d %s (stage %s)",
                     t->n_skipped ? ", " : "", c->id, c->label, stage);
            t->n_skipped++;
            continue;
        }
        progress(t, 0, "%s: loading #%d %s", stage, c->id, c->label);
        if (cand_open(t, c) != 0) {
            snprintf(c->verdict, sizeof c->verdict, "failed");
            snprintf(c->why, sizeof c->why, "does not load or run: %s", c->error);
            continue;
        }
        progress(t, 0, "%s: checking the quality of #%d %s", stage, c->id, c->label);
        if (strcmp(stage, "batch") == 0) {
            /* the same options as the incumbent: the same numbers per row */
            c->q = inc->q;
            c->q_checked = inc->q_checked;
            c->q_ok = inc->q_ok;
        } else {
            cand_quality(t, c, base);
        }
        c->status = C_MEASURED;
        list[n++] = c;
    }
    if (n == 2) {
        logf_(t, "- no candidate could be measured\n");
        return inc;
    }
    inc->n_rm = 0; /* this stage's rounds only: ratios pair rounds of one stage */
    shadow.live = inc->live;
    shadow.shadow_of = inc;
    shadow.id = inc->id;
    shadow.res = inc->res;
    shadow.status = C_MEASURED;
    snprintf(shadow.label, sizeof shadow.label, "%s (A/A)", inc->label);
    size_t k = runs_per_round(t, inc);
    logf_(t,
          "- %zu candidates and the incumbent (twice: an A/A slot for the noise), %" PRId64
          " interleaved rounds of %zu runs each (after an untimed warm-up round)\n",
          n - 2, t->rounds, k);
    int trc = time_rounds(t, list, n, stage, k);
    free(shadow.samples);
    if (trc != 0) return inc;
    size_t pick = judge(t, list, n);
    for (size_t j = 0; j < n; j++)
        if (j != 1) finish_stats(list[j]);
    cand *win = list[pick];
    for (size_t j = 2; j < n; j++)
        if (list[j] != win) cand_close(list[j]);
    if (win != inc) {
        if (inc != base) cand_close(inc);
        logf_(t, "- kept #%d %s\n", win->id, win->label);
    } else {
        logf_(t, "- kept the incumbent #%d %s\n", inc->id, inc->label);
    }
    return win;
}

/* ---- output --------------------------------------------------------------- */

static void human(char *buf, size_t cap, int64_t b) {
    if (b >= (int64_t)1 << 30)
        snprintf(buf, cap, "%.2f GiB", (double)b / (double)((int64_t)1 << 30));
    else if (b >= (int64_t)1 << 20)
        snprintf(buf, cap, "%.1f MiB", (double)b / (double)((int64_t)1 << 20));
    else
        snprintf(buf, cap, "%.0f KiB", (double)b / 1024.0);
}

static void quality_str(const cand *c, char *buf, size_t cap) {
    if (!c->q_checked)
        snprintf(buf, cap, "-");
    else if (c->q_error)
        snprintf(buf, cap, "error");
    else
        snprintf(buf, cap, "%s, cos %.6f", c->q_ok ? "holds" : "BREAKS", c->q.worst_cosine);
}

static int write_options(tuner *t, const cand *w) {
    char path[1024];
    snprintf(path, sizeof path, "%s/options.yaml", t->out);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "# libmopt options chosen by mopt tune (target %s) for %s\n",
            k_target_names[t->target], t->model);
    if (w->batch)
        fprintf(f, "# serve in batches of %" PRId64 " (not a libmopt option)\n", w->batch);
    if (!w->n_kv) fprintf(f, "{}  # the library defaults\n");
    for (int i = 0; i < w->n_kv; i++) {
        const char *eq = strchr(w->kv[i], '=');
        fprintf(f, "%.*s: %s\n", (int)(eq - w->kv[i]), w->kv[i], eq + 1);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static void cand_free(cand *c) {
    if (!c) return;
    bench_close(c->live, &c->res);
    bench_result_free(&c->res);
    bench_config_free(&c->cfg);
    free(c->samples);
    free(c);
}

/* Per op type, the median over k profiled runs of its time in each run. */
typedef struct op_times {
    char (*op)[64];
    double *ms; /* n_ops x k, op-major */
    double *median;
    size_t n, cap, k;
} op_times;

static void op_times_free(op_times *o) {
    free(o->op);
    free(o->ms);
    free(o->median);
    memset(o, 0, sizeof *o);
}

static int op_times_add(op_times *o, const char *op, size_t run, double ms) {
    size_t i = 0;
    while (i < o->n && strcmp(o->op[i], op) != 0)
        i++;
    if (i == o->n) {
        if (o->n == o->cap) {
            size_t cap = o->cap ? 2 * o->cap : 32;
            char(*nop)[64] = realloc(o->op, cap * sizeof *nop);
            if (nop) o->op = nop;
            double *nms = nop ? realloc(o->ms, cap * o->k * sizeof *nms) : NULL;
            if (nms) o->ms = nms;
            if (!nop || !nms) return -1;
            o->cap = cap;
        }
        snprintf(o->op[i], sizeof o->op[i], "%s", op);
        memset(o->ms + i * o->k, 0, o->k * sizeof *o->ms);
        o->n++;
    }
    o->ms[i * o->k + run] += ms;
    return 0;
}

static cand *profile_open(tuner *t, const cand *c, char *err, size_t cap) {
    cand *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    memcpy(p->kv, c->kv, sizeof p->kv);
    p->n_kv = c->n_kv;
    p->batch = c->batch;
    snprintf(p->label, sizeof p->label, "%s (profiled)", c->label);
    bench_config_init(&p->cfg);
    bench_result_init(&p->res, NULL);
    if (bench_config_set_str(&p->cfg.profile, "1") != 0 || cand_open(t, p) != 0) {
        snprintf(err, cap, "%s", p->error[0] ? p->error : "out of memory");
        cand_free(p);
        return NULL;
    }
    return p;
}

/* One profiled run of p: its op types' times go to run r of out (r < 0:
 * a warm-up, not recorded). 0 or -1. */
static int profile_step(cand *p, op_times *out, long r, char *err, size_t cap) {
    double s;
    if (bench_time(p->live, &p->res, 1, &s) != 0) {
        snprintf(err, cap, "%s", p->res.error);
        return -1;
    }
    if (r < 0) return 0;
    const mopt_session *ss = bench_live_session(p->live);
    size_t n = mopt_session_profile_count(ss);
    for (size_t q = 0; q < n; q++) {
        const char *op = mopt_session_profile_op(ss, q);
        if (op_times_add(out, op ? op : "?", (size_t)r,
                         (double)mopt_session_profile_ns(ss, q) / 1e6) != 0) {
            snprintf(err, cap, "out of memory");
            return -1;
        }
    }
    return 0;
}

static int profile_medians(op_times *o) {
    o->median = calloc(o->n + 1, sizeof *o->median);
    double *tmp = malloc((o->k ? o->k : 1) * sizeof *tmp);
    for (size_t i = 0; o->median && tmp && i < o->n; i++) {
        memcpy(tmp, o->ms + i * o->k, o->k * sizeof *tmp);
        o->median[i] = median_of(tmp, o->k);
    }
    int rc = o->median && tmp ? 0 : -1;
    free(tmp);
    return rc;
}

/* Fresh profiled loads (profile=1) of a and b, run alternately: k/2
 * warm-up runs each, then k recorded runs each; per op type, the median
 * over the runs of its time in a run. 0, or -1 (*err says why). */
static int profile_pair(tuner *t, const cand *a, const cand *b, size_t k, op_times *oa,
                        op_times *ob, char *err, size_t cap) {
    memset(oa, 0, sizeof *oa);
    memset(ob, 0, sizeof *ob);
    oa->k = ob->k = k;
    cand *pa = profile_open(t, a, err, cap);
    cand *pb = pa ? profile_open(t, b, err, cap) : NULL;
    int rc = pa && pb ? 0 : -1;
    for (long r = -(long)(k / 2); rc == 0 && r < (long)k; r++)
        rc = profile_step(pa, oa, r, err, cap) || profile_step(pb, ob, r, err, cap) ? -1 : 0;
    if (rc == 0 && (profile_medians(oa) || profile_medians(ob))) {
        snprintf(err, cap, "out of memory");
        rc = -1;
    }
    if (rc) {
        op_times_free(oa);
        op_times_free(ob);
    }
    cand_free(pa);
    cand_free(pb);
    return rc;
}

static double op_median(const op_times *o, const char *op) {
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->op[i], op) == 0) return o->median[i];
    return 0;
}

static int write_plots(tuner *t, cand *base, cand *win, char *notes, size_t cap) {
    char path[1024];
    int rc = 0;
    size_t used = 0;
    /* CDF */
    plot_series *s = calloc(t->n_c + 1, sizeof *s);
    char(*labels)[64] = calloc(t->n_c + 1, sizeof *labels);
    double *x = calloc(t->n_c + 1, sizeof *x), *y = calloc(t->n_c + 1, sizeof *y);
    int *ok = calloc(t->n_c + 1, sizeof *ok);
    const char **lp = calloc(t->n_c + 1, sizeof *lp);
    char(*ids)[16] = calloc(t->n_c + 1, sizeof *ids);
    if (!s || !labels || !x || !y || !ok || !lp || !ids) {
        rc = -1;
        goto done;
    }
    size_t ns = 0, np = 0;
    for (size_t i = 0; i < t->n_c; i++) {
        cand *c = t->c[i];
        if (!c->n_samples) continue;
        snprintf(labels[i], sizeof labels[i], "#%d %.40s", c->id, c->id ? c->label : "baseline");
        s[ns++] = (plot_series){labels[i], c->samples, c->n_samples};
        if (c->q_checked && !c->q_error) {
            x[np] = c->res.ok ? metric_of(t, c->samples, c->n_samples, c->res.items) : NAN;
            y[np] = c->q.worst_cosine;
            ok[np] = c->q_ok;
            snprintf(ids[np], sizeof ids[np], "#%d", c->id);
            lp[np] = ids[np];
            np++;
        }
    }
    char title[128];
    snprintf(title, sizeof title, "latency per run, every candidate (x cut at the 99th pct)");
    snprintf(path, sizeof path, "%s/latency_cdf.png", t->out);
    if (plot_cdf_png(path, title, "ms per run", s, ns) != 0) rc = -1;
    snprintf(path, sizeof path, "%s/quality_speed.png", t->out);
    char xl[64];
    snprintf(xl, sizeof xl, "%s over all runs (lower is faster)", metric_unit(t));
    if (plot_scatter_png(path, "quality vs speed (a cross: breaks the budget)", xl,
                         "worst cosine vs REF", x, y, lp, ok, np) != 0)
        rc = -1;
    /* per-op bars, from fresh profiled loads */
    size_t k = 3 * runs_per_round(t, base);
    if (k < 30) k = 30;
    char err[512] = "";
    op_times oa, ob;
    progress(t, 1, "profiling the baseline and the winner");
    int pr = profile_pair(t, base, win, k, &oa, &ob, err, sizeof err);
    if (pr == 0) {
        /* the 12 op types with the largest median time in either */
        const char *rows[12];
        double va[12], vb[12];
        size_t nr = 0;
        int *used_a = calloc(oa.n + ob.n + 1, sizeof *used_a);
        while (used_a && nr < 12) {
            size_t best = SIZE_MAX;
            double bv = -1;
            for (size_t i = 0; i < oa.n + ob.n; i++) {
                if (used_a[i]) continue;
                const char *op = i < oa.n ? oa.op[i] : ob.op[i - oa.n];
                double v = fmax(op_median(&oa, op), op_median(&ob, op));
                if (v > bv) {
                    bv = v;
                    best = i;
                }
            }
            if (best == SIZE_MAX) break;
            const char *op = best < oa.n ? oa.op[best] : ob.op[best - oa.n];
            for (size_t i = 0; i < oa.n + ob.n; i++) /* both copies of the name */
                if (strcmp(i < oa.n ? oa.op[i] : ob.op[i - oa.n], op) == 0) used_a[i] = 1;
            rows[nr] = op;
            va[nr] = op_median(&oa, op);
            vb[nr] = op_median(&ob, op);
            nr++;
        }
        free(used_a);
        snprintf(path, sizeof path, "%s/op_times.png", t->out);
        char bl[64];
        snprintf(bl, sizeof bl, "winner #%d", win->id);
        if (plot_bars_png(path, "time per op type (median ms per run, profiled)", "ms per run",
                          rows, va, vb, nr, "baseline", bl) != 0)
            rc = -1;
        used += (size_t)snprintf(notes + used, cap - used,
                                 "Profiled over %zu runs each (profile=1, fresh loads run "
                                 "alternately after a warm-up); per op type, the median over the "
                                 "runs of its time in a run:\n\n"
                                 "| op type | baseline ms/run | winner ms/run |\n|---|---:|---:|\n",
                                 k);
        for (size_t i = 0; i < nr && used < cap; i++)
            used += (size_t)snprintf(notes + used, cap - used, "| %s | %.4f | %.4f |\n", rows[i],
                                     va[i], vb[i]);
        op_times_free(&oa);
        op_times_free(&ob);
    } else {
        snprintf(notes, cap, "Profiling failed: %s\n", err);
        rc = -1;
    }
done:
    free(s);
    free(labels);
    free(x);
    free(y);
    free(ok);
    free(lp);
    free(ids);
    return rc;
}

static void cand_row(FILE *f, const tuner *t, const cand *c) {
    char q[64], rss[32], set[256], ratio[64];
    quality_str(c, q, sizeof q);
    settings_str(c, set, sizeof set);
    if (c->status != C_MEASURED || !c->res.ok) {
        /* the columns of a measured row: no figures, then quality and "verdict: why" */
        fprintf(f, "| %d | %s | %s | - | - | - | - | - | - | - | %s | %s: %s |\n", c->id, c->stage,
                c->id ? c->label : "baseline", q, c->verdict, c->why);
        return;
    }
    human(rss, sizeof rss, c->rss_added);
    if (c->judged)
        snprintf(ratio, sizeof ratio, "%.3f (%.3f..%.3f)", c->med, c->lo, c->hi);
    else
        snprintf(ratio, sizeof ratio, "-");
    const bench_latency *l = &c->res.latency_ms;
    (void)t;
    fprintf(f, "| %d | %s | %s | %.4g | %.4g | %.4g | %.1f | %.1f | %s | %s | %s | %s: %s |\n",
            c->id, c->stage, c->id ? c->label : "baseline", l->p50, l->p95, l->p99,
            c->res.items_per_s, c->res.load_ms, rss, ratio, q, c->verdict, c->why);
}

static int write_report(tuner *t, cand *base, cand *win, const char *ops, double conf_med,
                        double conf_lo, double conf_hi, double elapsed_s) {
    char path[1024];
    snprintf(path, sizeof path, "%s/report.md", t->out);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    char cpu[256], set[256];
    bench_cpu_model(cpu, sizeof cpu);
    fprintf(f, "# mopt tune report\n\n");
    fprintf(f, "- model: `%s`\n- inputs: `%s` (first input set timed)\n", t->model, t->inputs);
    fprintf(f, "- golden set: `%s` (references: %s)\n", t->golden,
            t->refs_stored ? "stored outputs" : "computed by the FP32 model with the defaults");
    fprintf(f, "- quality budget: `%s`%s\n", t->budget, t->budget_note);
    fprintf(f, "- target: %s (%s, lower is better)\n", k_target_names[t->target], metric_unit(t));
    fprintf(f, "- machine: %s, %d CPUs; libmopt %s\n", cpu, bench_cpu_count(), mopt_version());
    fprintf(f, "- time: %.1f s", elapsed_s);
    if (t->max_minutes > 0) fprintf(f, " (--max-minutes %.4g)", t->max_minutes);
    fprintf(f, "\n\n## Decision\n\n");
    settings_str(win, set, sizeof set);
    if (win == base) {
        fprintf(f, "Kept the **baseline** (library defaults): no candidate was faster beyond "
                   "noise while holding the budget.\n\n");
    } else {
        fprintf(f, "Winner: **#%d %s**, settings `%s`.\n\n", win->id, win->label, set);
        if (!isnan(conf_med))
            fprintf(f,
                    "Confirmed against the baseline in a final interleaved run: %s ratio "
                    "winner/baseline %.3f (90%% interval %.3f..%.3f), i.e. %.2fx.\n\n",
                    metric_unit(t), conf_med, conf_lo, conf_hi, 1.0 / conf_med);
    }
    fprintf(f, "Quality of the winner: ");
    char q[64];
    quality_str(win, q, sizeof q);
    fprintf(f, "%s.\n\n", q);
    if (t->n_skipped) fprintf(f, "**Skipped** (time budget): %s.\n\n", t->skipped);
    fprintf(f, "Files: `model.mopt` (the winner, optimized), `options.yaml`, "
               "`latency_cdf.png`, `op_times.png`, `quality_speed.png`, `work/` (comparison "
               "tables `quality_N.txt`, batch inputs).\n\n");
    fprintf(f,
            "## How it is judged\n\n"
            "Stages run in order (opt_level, precision, backend, threads, batch); each tries its "
            "candidates on top of the current incumbent (the best so far). Within a stage the "
            "incumbent, an A/A slot (the incumbent's own session once more) and the candidates "
            "are timed in interleaved rounds, after one untimed warm-up round; the order is "
            "shuffled each round (seeded) and each slot starts with k/4 (at least 2) untimed runs. "
            "Per round, each slot's target "
            "metric is taken over that round's runs, and its ratio to the incumbent's in the "
            "same round is formed (paired, so slow drifts of a shared machine cancel). The "
            "**noise** is what the A/A slot shows: the largest distance from 1 of the 90%% "
            "bootstrap interval (%d resamples, fixed seed) of its median ratio. A candidate is "
            "**faster** when its median ratio is below 1 - threshold, threshold = "
            "max(--min-gain %.1f%%, noise), and the upper end of the same interval of its "
            "median ratio is below 1 (at a noise of 100%% or more nothing can win). A "
            "candidate that breaks the quality budget is never kept. Among the faster ones, the "
            "earliest in list order whose median ratio is within the threshold of the best "
            "one's is kept (simpler first). The bootstrap is seeded, so the same timings give "
            "the same decision; a re-run decides differently only when a median ratio lies "
            "within noise of 1 - threshold.\n\n",
            BOOT_N, 100 * t->min_gain);
    fprintf(f, "## Steps\n%s\n", t->stage_log);
    fprintf(f,
            "## Candidates\n\nLatencies in ms per run over all its timed runs; items/s = "
            "throughput x batch; load = mopt_model_load ms; RSS = peak RSS growth over load, "
            "first run and warm-up; ratio = median per-round %s ratio to the stage's "
            "incumbent (90%% interval).\n\n",
            metric_unit(t));
    fprintf(f, "| # | stage | candidate | p50 | p95 | p99 | items/s | load ms | RSS | ratio | "
               "quality | verdict |\n|---:|---|---|---:|---:|---:|---:|---:|---:|---|---|---|\n");
    for (size_t i = 0; i < t->n_c; i++)
        cand_row(f, t, t->c[i]);
    fprintf(f, "\n## Per-op time, baseline vs winner\n\n%s\n", ops);
    fprintf(f, "## Candidates that break the quality budget\n\n");
    int n_bad = 0;
    for (size_t i = 0; i < t->n_c; i++) {
        cand *c = t->c[i];
        if (!c->q_checked || c->q_ok) continue;
        n_bad++;
        fprintf(f, "- #%d %s: %s\n", c->id, c->label,
                c->q.violation[0] ? c->q.violation : "comparison failed");
    }
    if (!n_bad) fprintf(f, "None.\n");
    fprintf(f, "\nThe winner's comparison table (`mopt compare` output):\n\n```\n");
    char qp[1024];
    snprintf(qp, sizeof qp, "%s/work/quality_%d.txt", t->out, win->id);
    FILE *qf = fopen(qp, "r");
    if (qf) {
        char line[512];
        while (fgets(line, sizeof line, qf))
            fputs(line, f);
        fclose(qf);
    }
    fprintf(f, "```\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- the command ---------------------------------------------------------- */

static int parse_list(const char *flag, const char *s, int64_t *out, int *n, int64_t min) {
    *n = 0;
    const char *p = s;
    while (*p) {
        char *end = NULL;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || end == p || v < min || *n >= MAX_LIST || (*end && *end != ','))
            return usage_error("%s %s: expected a comma-separated list of numbers >= %" PRId64
                               " (at most %d)",
                               flag, s, min, MAX_LIST);
        out[(*n)++] = v;
        p = *end ? end + 1 : end;
    }
    if (!*n) return usage_error("%s: empty list", flag);
    return 0;
}

static int setup_inputs(tuner *t) {
    golden_set *sets = NULL;
    size_t n_sets = 0;
    if (list_sets(t->inputs, &sets, &n_sets) != 0) return EXIT_USAGE;
    mopt_options *o = NULL;
    mopt_model *m = NULL;
    int rc = 0;
    mopt_status st = mopt_options_create(&o);
    if (!st) st = mopt_model_load(t->model, o, &m);
    if (st) {
        fprintf(stderr, "mopt: model '%s': ", t->model);
        fail(st);
        rc = EXIT_USAGE;
        goto done;
    }
    t->n_inputs = mopt_model_io_count(m, MOPT_INPUT);
    t->input_names = calloc(t->n_inputs + 1, sizeof *t->input_names);
    t->input_paths = calloc(t->n_inputs + 1, sizeof *t->input_paths);
    if (!t->input_names || !t->input_paths) {
        rc = EXIT_USAGE;
        goto done;
    }
    t->batch_symbolic = t->n_inputs > 0;
    for (size_t i = 0; i < t->n_inputs; i++) {
        const char *name = mopt_model_io_name(m, MOPT_INPUT, i);
        t->input_names[i] = strdup(name);
        t->input_paths[i] = sets[0].is_file ? strdup(sets[0].path)
                                            : find_tensor_file(sets[0].path, "input", i, name);
        if (!t->input_paths[i]) {
            fprintf(stderr, "mopt: --inputs %s: set '%s' has no file for input %zu '%s'\n",
                    t->inputs, sets[0].name, i, name);
            rc = EXIT_USAGE;
            goto done;
        }
        if (mopt_model_io_rank(m, MOPT_INPUT, i) < 1 || mopt_model_io_dim(m, MOPT_INPUT, i, 0) >= 0)
            t->batch_symbolic = 0;
    }
    /* does the golden set store references? */
    golden_set *gs = NULL;
    size_t ng = 0;
    if (list_sets(t->golden, &gs, &ng) == 0) {
        for (size_t s = 0; s < ng && !gs[s].is_file; s++) {
            char *p = find_tensor_file(gs[s].path, "output", 0, NULL);
            if (p) t->refs_stored = 1;
            free(p);
        }
        free_sets(gs, ng);
    } else {
        rc = EXIT_USAGE;
    }
done:
    mopt_model_destroy(m);
    mopt_options_destroy(o);
    free_sets(sets, n_sets);
    return rc;
}

int cmd_tune(int argc, char **argv) {
    tuner t;
    memset(&t, 0, sizeof t);
    t.target = -1;
    t.rounds = 10;
    t.min_gain = 0.03;
    t.max_minutes = 10;
    const char *batch_s = NULL, *threads_s = NULL;
    const string_flag strings[] = {
        {"--inputs", &t.inputs}, {"--golden", &t.golden}, {"--budget", &t.budget},   {"-o", &t.out},
        {"--output", &t.out},    {"--batch", &batch_s},   {"--threads", &threads_s}, {NULL, NULL}};
    for (int i = 2; i < argc; i++) {
        const char *v = NULL;
        int r;
        if ((r = string_flags(argc, argv, &i, strings)) != 0) {
            /* stored; a missing value is caught below */
        } else if ((r = flag_value(argc, argv, &i, "--target", &v)) != 0) {
            for (int k = 0; r > 0 && k < 3; k++)
                if (strcmp(v, k_target_names[k]) == 0) t.target = k;
            if (r > 0 && t.target < 0)
                return usage_error("--target %s: expected p50, p95 or throughput", v);
        } else if ((r = flag_value(argc, argv, &i, "--max-minutes", &v)) != 0) {
            char *end = NULL;
            if (r > 0 && ((t.max_minutes = strtod(v, &end)), !end || *end || !(t.max_minutes >= 0)))
                return usage_error("--max-minutes %s: expected a number >= 0 (0: no limit)", v);
        } else if ((r = flag_value(argc, argv, &i, "--min-gain", &v)) != 0) {
            char *end = NULL;
            if (r > 0 && ((t.min_gain = strtod(v, &end)),
                          !end || *end || !(t.min_gain >= 0) || t.min_gain >= 1))
                return usage_error("--min-gain %s: expected a fraction in [0, 1)", v);
        } else if ((r = flag_value(argc, argv, &i, "--rounds", &v)) != 0) {
            if (r > 0 && (!parse_i64(v, &t.rounds) || t.rounds < 2 || t.rounds > MAX_ROUNDS))
                return usage_error("--rounds %s: expected 2..%d", v, MAX_ROUNDS);
        } else if ((r = flag_value(argc, argv, &i, "--runs", &v)) != 0) {
            if (r > 0 && (!parse_i64(v, &t.runs) || t.runs < 1 || t.runs > 100000))
                return usage_error("--runs %s: expected 1..100000", v);
        } else if ((r = model_arg("tune", argv[i], &t.model)) != 0) {
            return r;
        }
        if (r < 0) return EXIT_USAGE;
    }
    if (!t.model) return usage_error("'mopt tune' needs a MODEL file");
    if (!t.inputs) return usage_error("'mopt tune' needs --inputs DIR (a golden-set layout)");
    if (!t.out) return usage_error("'mopt tune' needs -o OUT (a folder)");
    if (t.target < 0) return usage_error("'mopt tune' needs --target p50, p95 or throughput");
    int rc;
    if (batch_s && (rc = parse_list("--batch", batch_s, t.batches, &t.n_batches, 1)) != 0)
        return rc;
    if (threads_s && (rc = parse_list("--threads", threads_s, t.threads, &t.n_threads, 0)) != 0)
        return rc;
    if (!t.golden) t.golden = t.inputs;
    if (make_dirs(t.out) != 0) {
        fprintf(stderr, "mopt: cannot create '%s': %s\n", t.out, strerror(errno));
        return EXIT_USAGE;
    }
    char work[1024], budget_path[1024];
    snprintf(work, sizeof work, "%s/work", t.out);
    if (make_dirs(work) != 0) {
        fprintf(stderr, "mopt: cannot create '%s': %s\n", work, strerror(errno));
        return EXIT_USAGE;
    }
    if (!t.budget) {
        snprintf(budget_path, sizeof budget_path, "%s/quality.yaml", t.out);
        FILE *f = fopen(budget_path, "w");
        if (!f ||
            fputs("# the default budget of mopt tune (no --budget given)\n"
                  "- metric: cosine\n  min: 0.999\n",
                  f) < 0 ||
            fclose(f) != 0) {
            fprintf(stderr, "mopt: cannot write '%s'\n", budget_path);
            return EXIT_USAGE;
        }
        t.budget = budget_path;
        snprintf(t.budget_note, sizeof t.budget_note,
                 " (no --budget: the default, cosine >= 0.999 on every output)");
    }
    t.tty = isatty(2);
    double t0 = bench_now_s();
    if (t.max_minutes > 0) t.deadline = t0 + t.max_minutes * 60.0;
    if ((rc = setup_inputs(&t)) != 0) goto out;

    /* the baseline */
    cand *base = cand_new(&t, NULL, "baseline", "library defaults");
    if (!base) {
        rc = EXIT_USAGE;
        goto out;
    }
    snprintf(base->verdict, sizeof base->verdict, "baseline");
    progress(&t, 0, "loading the baseline");
    if (cand_open(&t, base) != 0) {
        progress_done(&t);
        fprintf(stderr, "mopt: the model does not run with the defaults: %s\n", base->error);
        rc = EXIT_FAILURE;
        goto out;
    }
    base->status = C_MEASURED;
    progress(&t, 0, "checking the baseline's quality");
    cand_quality(&t, base, base);
    if (base->q_error) {
        progress_done(&t);
        fprintf(stderr,
                "mopt: the quality check failed on the baseline (see %s/work/quality_0.txt"
                " and the messages above)\n",
                t.out);
        rc = EXIT_USAGE;
        goto out;
    }
    snprintf(base->why, sizeof base->why, "%s",
             base->q_ok ? "the reference point"
                        : "the reference point; it breaks the budget itself against the stored "
                          "references");
    cand *inc = base;

    /* stages from the list, then threads and batch */
    size_t nch = sizeof k_choices / sizeof k_choices[0];
    for (size_t a = 0; a < nch;) {
        size_t b = a;
        while (b < nch && strcmp(k_choices[b].stage, k_choices[a].stage) == 0)
            b++;
        char buf[MAX_LIST][96];
        const char *labels[MAX_LIST], *sets_buf[MAX_LIST][3];
        for (size_t k = a; k < b && k - a < MAX_LIST; k++) {
            size_t len = 0;
            buf[k - a][0] = '\0';
            for (int s = 0; s < 3 && k_choices[k].set[s]; s++) {
                const char *kv = k_choices[k].set[s], *at = strstr(kv, "=@");
                len += (size_t)snprintf(buf[k - a] + len, len < 96 ? 96 - len : 0, "%s%.*s",
                                        s ? " " : "", at ? (int)(at - kv) : (int)strlen(kv), kv);
            }
            labels[k - a] = buf[k - a];
            memcpy(sets_buf[k - a], k_choices[k].set, sizeof sets_buf[0]);
        }
        inc = run_stage(&t, inc, base, k_choices[a].stage, (const char *const(*)[3])sets_buf,
                        labels, NULL, b - a);
        a = b;
    }
    if (t.n_threads) {
        char buf[MAX_LIST][32];
        const char *labels[MAX_LIST], *sets_buf[MAX_LIST][3];
        for (int k = 0; k < t.n_threads; k++) {
            snprintf(buf[k], sizeof buf[k], "threads=%" PRId64, t.threads[k]);
            labels[k] = buf[k];
            sets_buf[k][0] = buf[k];
            sets_buf[k][1] = NULL;
        }
        inc = run_stage(&t, inc, base, "threads", (const char *const(*)[3])sets_buf, labels, NULL,
                        (size_t)t.n_threads);
    }
    if (t.n_batches) {
        char buf[MAX_LIST][32];
        const char *labels[MAX_LIST];
        int64_t bs[MAX_LIST];
        size_t nb = 0;
        for (int k = 0; k < t.n_batches; k++) {
            if (t.batches[k] == 1 && !inc->batch) continue; /* that is the incumbent */
            snprintf(buf[nb], sizeof buf[nb], "batch=%" PRId64, t.batches[k]);
            labels[nb] = buf[nb];
            bs[nb++] = t.batches[k];
        }
        if (!t.batch_symbolic)
            logf_(&t, "\n### Stage: batch\n\n- skipped: the model's inputs have a fixed first "
                      "dimension\n");
        else if (nb)
            inc = run_stage(&t, inc, base, "batch", NULL, labels, bs, nb);
    }
    cand *win = inc;
    snprintf(win->verdict, sizeof win->verdict, "%s", win == base ? "baseline" : "kept");

    /* confirm the winner against the baseline */
    double cm = NAN, clo = NAN, chi = NAN;
    if (win != base) {
        cand conf_b, conf_w;
        memset(&conf_b, 0, sizeof conf_b);
        memset(&conf_w, 0, sizeof conf_w);
        conf_b.live = base->live;
        conf_w.live = win->live;
        conf_b.res = base->res;
        conf_w.res = win->res;
        conf_b.id = base->id;
        conf_w.id = win->id;
        snprintf(conf_b.label, sizeof conf_b.label, "%s", base->label);
        snprintf(conf_w.label, sizeof conf_w.label, "%s", win->label);
        cand *list[2] = {&conf_b, &conf_w};
        logf_(&t, "\n### Confirmation: winner #%d against the baseline\n\n", win->id);
        if (time_rounds(&t, list, 2, "confirm", runs_per_round(&t, base)) == 0 && conf_w.n_rm) {
            double q[MAX_ROUNDS];
            int m = conf_w.n_rm < conf_b.n_rm ? conf_w.n_rm : conf_b.n_rm;
            for (int r = 0; r < m; r++)
                q[r] = conf_w.rm[r] / conf_b.rm[r];
            boot_median(q, (size_t)m, &cm, &clo, &chi);
            logf_(&t, "- median ratio winner/baseline %.3f (90%% interval %.3f..%.3f)\n", cm, clo,
                  chi);
        }
        if (!conf_b.live) base->live = NULL; /* closed on a failed run */
        if (!conf_w.live) win->live = NULL;
        free(conf_b.samples);
        free(conf_w.samples);
    }

    /* outputs */
    char path[1024], ops[8192] = "";
    snprintf(path, sizeof path, "%s/model.mopt", t.out);
    progress(&t, 1, "saving the winner");
    mopt_status st = win->live ? mopt_model_save(bench_live_model(win->live), path) : MOPT_OK;
    if (!win->live) {
        progress_done(&t);
        fprintf(stderr, "mopt: the winner failed a run while it was confirmed\n");
        rc = EXIT_FAILURE;
        goto out;
    }
    if (st) {
        progress_done(&t);
        fprintf(stderr, "mopt: saving %s: ", path);
        rc = fail(st);
        goto out;
    }
    if (write_options(&t, win) != 0) {
        rc = EXIT_FAILURE;
        goto out;
    }
    int prc = write_plots(&t, base, win, ops, sizeof ops);
    if (write_report(&t, base, win, ops, cm, clo, chi, bench_now_s() - t0) != 0) rc = EXIT_FAILURE;
    if (prc) rc = EXIT_FAILURE;
    progress_done(&t);
    char set[256];
    settings_str(win, set, sizeof set);
    printf("mopt tune: %s\n", win == base ? "kept the baseline (library defaults)" : "winner");
    printf("  #%d %s: %s; %s %.4g (baseline %.4g)", win->id, win->label, set, metric_unit(&t),
           metric_of(&t, win->samples, win->n_samples, win->res.items),
           metric_of(&t, base->samples, base->n_samples, base->res.items));
    if (!isnan(cm)) printf("; confirmed ratio %.3f (%.3f..%.3f)", cm, clo, chi);
    printf("\n");
    if (t.n_skipped) printf("  skipped (time budget): %s\n", t.skipped);
    printf("  wrote %s/model.mopt, options.yaml, report.md, latency_cdf.png, op_times.png, "
           "quality_speed.png\n",
           t.out);
    if (fflush(stdout) != 0) rc = EXIT_FAILURE;
out:
    progress_done(&t);
    for (size_t i = 0; i < t.n_c; i++)
        cand_free(t.c[i]);
    free(t.c);
    for (size_t i = 0; i < t.n_inputs; i++) {
        if (t.input_names) free(t.input_names[i]);
        if (t.input_paths) free(t.input_paths[i]);
    }
    free(t.input_names);
    free(t.input_paths);
    return rc;
}
