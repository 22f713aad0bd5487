/*
 * calibrate.c — `mopt calibrate MODEL --inputs DIR -o TABLE.yaml [--method
 * minmax|percentile|entropy] [--percentile P] [--bias-correction]`: runs
 * the model (opt_level 0, the experimental option calibration_capture,
 * which makes every f32 input of MatMul/Gemm/Conv an extra output) on each
 * input set of DIR (the
 * golden-set layout of `mopt compare`: test_data_set_N/input_N.pb|.npy or
 * <set>/<input name>.npy folders, or lone .npy files) twice: once for
 * min/max, mean and std, once for two histograms (2048 bins of x over
 * [min, max], 8192 bins of |x| over [0, max|x|] without the exact zeros).
 * From them, per tensor:
 *   minmax      [min, max]
 *   percentile  the (100 - P)th and Pth percentiles (P = 99.99 by default),
 *               read from the histogram with linear interpolation in a bin
 *   entropy     [-t, t] clipped to [min, max], where t minimises the KL
 *               divergence between the |x| histogram cut at t (the clipped
 *               mass put in the last bin) and its quantization to L levels
 *               (entropy_levels: 255 for a tensor >= 0), as TensorRT
 *               describes it, with candidates spreading each level over at
 *               least 4 bins
 * and the u8 asymmetric quantization of the chosen method's range (widened
 * to hold 0): scale = (hi - lo) / 255, zero_point = round(-lo / scale).
 * Weights are not in the table: the library quantizes them per output
 * channel (symmetric s8) when it loads the model with calibration=TABLE.
 * For tensors of rank >= 3 (a convolution's [N, C, ...] input) it also
 * records each channel's min and max (channel_min, channel_max): the
 * static INT8 pass gives a depthwise convolution's input one scale per
 * channel from them (clipped to the method's range). With --bias-correction
 * it also writes each channel's mean and the shape seen (channel_mean,
 * dims): the pass then corrects each Conv's bias for the mean error of its
 * s8 weights (off by default: tools/mopt/README.md says when it helps).
 * With --rounding-correction a third run over the sets writes, for the
 * same tensors, each channel's mean of Q(x) - x with the scale and zero
 * point written (channel_qerr, with dims): the pass folds W . channel_qerr
 * into each Conv's bias (the mean error of X's rounding, a bias rather than
 * noise where X has flat regions, such as a page's background).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/mopt_format.h" /* mfmt_hash64: the table names its model */
#include "mopt_cli.h"

#define CAL_BINS 2048
/* The |x| histogram of the entropy search: finer, so that every candidate
 * threshold spreads each quantization level over >= ENT_MIN_BINS bins (with
 * one bin per level the histogram cannot see rounding, and the KL
 * divergence favours the smallest threshold) */
#define CAL_ABINS 8192
#define ENT_MIN_BINS 4
#define ENT_STEP 8 /* candidate thresholds every ENT_STEP bins */

typedef struct cal_tensor {
    const char *name;
    size_t out_index;
    double mn, mx, sum, sumsq;
    int64_t count;
    double hist[CAL_BINS], ahist[CAL_ABINS]; /* ahist: |x| without the exact zeros */
    double zeros;                            /* values exactly 0 */
    double r_minmax[2], r_pct[2], r_ent[2];
    int64_t n_ch;        /* rank >= 3: channels (axis 1), else 0 */
    double *cmn, *cmx;   /* their min and max over the finite values */
    double *csum, *ccnt; /* their sum and count (channel_mean) */
    double *cqerr;       /* their sum of Q(x) - x (channel_qerr) */
    double scale;        /* the u8 quantization written (pass 2 rounds with it) */
    int zp;
    int rank;                    /* 0 until the first set */
    int64_t dims[MOPT_MAX_RANK]; /* the shape seen, -1 where the sets differ */
    int bad_ch;                  /* the channel count changed between sets: not written */
} cal_tensor;

static uint64_t file_hash(const char *path, int *ok) {
    *ok = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) return 0;
    uint64_t h = mfmt_hash64(buf, n);
    free(buf);
    *ok = 1;
    return h;
}

/* The value at fraction q (0..1) of the mass of h over [lo, hi]. */
static double hist_quantile(const double *h, double total, double lo, double hi, double q) {
    double want = q * total, acc = 0, w = (hi - lo) / CAL_BINS;
    for (int i = 0; i < CAL_BINS; i++) {
        if (acc + h[i] >= want && h[i] > 0) return lo + w * (i + (want - acc) / h[i]);
        acc += h[i];
    }
    return hi;
}

/* The KL-optimal threshold of |x| histogram h (CAL_ABINS bins of width w,
 * exact zeros left out), `levels` quantization levels over [0, t]: for each
 * candidate t = i bins (i >= ENT_MIN_BINS * levels, every ENT_STEP bins), P
 * is h[0..i) with the mass above added to its last bin, Q is h[0..i) merged
 * into `levels` groups and spread back over each group's nonzero bins; t
 * minimizes KL(P || Q) (TensorRT's method). */
static double entropy_threshold(const double *h, double w, int levels) {
    static double total_above[CAL_ABINS + 1], p[CAL_ABINS], q[CAL_ABINS];
    total_above[CAL_ABINS] = 0;
    for (int i = CAL_ABINS - 1; i >= 0; i--)
        total_above[i] = total_above[i + 1] + h[i];
    if (total_above[0] <= 0) return CAL_ABINS * w;
    double best = INFINITY;
    int best_i = CAL_ABINS;
    int first = (ENT_MIN_BINS * levels + ENT_STEP - 1) / ENT_STEP * ENT_STEP;
    for (int i = first < CAL_ABINS ? first : CAL_ABINS; i <= CAL_ABINS; i += ENT_STEP) {
        double ps = 0;
        for (int b = 0; b < i; b++)
            p[b] = h[b];
        p[i - 1] += total_above[i];
        for (int b = 0; b < i; b++)
            ps += p[b];
        if (ps <= 0) continue;
        for (int j = 0; j < levels; j++) {
            int s = (int)((int64_t)j * i / levels), e = (int)((int64_t)(j + 1) * i / levels);
            double tot = 0;
            int nz = 0;
            for (int b = s; b < e; b++) {
                tot += h[b];
                nz += h[b] > 0;
            }
            for (int b = s; b < e; b++)
                q[b] = h[b] > 0 ? tot / nz : 0;
        }
        double qs = 0;
        for (int b = 0; b < i; b++)
            qs += q[b];
        double kl = 0;
        for (int b = 0; b < i; b++) {
            if (p[b] <= 0) continue;
            double pb = p[b] / ps, qb = qs > 0 ? q[b] / qs : 0;
            kl += qb > 0 ? pb * log(pb / qb) : pb * log(pb / 1e-12);
        }
        if (kl < best) {
            best = kl;
            best_i = i;
        }
    }
    return best_i * w;
}

/* Levels of the u8 quantization over [0, t] for a tensor of range
 * [mn, mx]: 255 for a tensor >= 0; for one that is mostly positive (a
 * Hardswish, a leaky ReLU: -mn <= mx / 4) the share of the 255 that
 * [0, mx] gets in [mn, mx]; 128 for a two-sided one. */
static int entropy_levels(double mn, double mx) {
    if (mn >= 0) return 255;
    if (-mn <= mx / 4) return (int)(255 * mx / (mx - mn));
    return 128;
}

static void quant_params(const double r[2], double *scale, int *zp) {
    double lo = r[0] < 0 ? r[0] : 0, hi = r[1] > 0 ? r[1] : 0;
    *scale = hi > lo ? (hi - lo) / 255.0 : 1.0;
    double z = nearbyint(-lo / *scale);
    *zp = z < 0 ? 0 : z > 255 ? 255 : (int)z;
}

static void yaml_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\x%02x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Runs every set, calling visit for each captured tensor's data. */
typedef struct cal_run {
    mopt_session *session;
    const mopt_model *model;
    golden_set *sets;
    size_t n_sets, n_in, n_out;
    cal_tensor *t;
    size_t n_t;
} cal_run;

static int run_all(cal_run *r, int pass) {
    mopt_tensor **in = calloc(r->n_in + 1, sizeof *in), **out = calloc(r->n_out + 1, sizeof *out);
    int rc = in && out ? 0 : 1;
    for (size_t s = 0; !rc && s < r->n_sets; s++) {
        const golden_set *g = &r->sets[s];
        for (size_t i = 0; !rc && i < r->n_in; i++) {
            const char *name = mopt_model_io_name(r->model, MOPT_INPUT, i);
            char *p = g->is_file ? (r->n_in == 1 ? strdup(g->path) : NULL)
                                 : find_tensor_file(g->path, "input", i, name);
            if (!p) {
                fprintf(stderr, "mopt: input set '%s': no file for input %zu '%s'\n", g->name, i,
                        name);
                rc = EXIT_USAGE;
                break;
            }
            mopt_status st = mopt_tensor_load(p, &in[i]);
            if (st) {
                fprintf(stderr, "mopt: input set '%s': '%s': ", g->name, p);
                rc = fail(st);
            }
            free(p);
        }
        mopt_status st = rc ? MOPT_OK
                            : mopt_session_run(r->session, r->n_in, NULL,
                                               (const mopt_tensor *const *)in, r->n_out, NULL, out);
        if (!rc && st) {
            fprintf(stderr, "mopt: input set '%s': ", g->name);
            rc = fail(st);
        }
        for (size_t j = 0; !rc && j < r->n_t; j++) {
            cal_tensor *c = &r->t[j];
            const mopt_tensor *o = out[c->out_index];
            const float *x = mopt_tensor_data_const(o);
            int64_t n = 1;
            for (int d = 0; d < mopt_tensor_rank(o); d++)
                n *= mopt_tensor_dims(o)[d];
            if (mopt_tensor_dtype(o) != MOPT_DTYPE_F32) continue;
            if (pass == 0 && mopt_tensor_rank(o) <= MOPT_MAX_RANK) {
                int rk = mopt_tensor_rank(o);
                for (int d = 0; d < rk; d++) {
                    int64_t v = mopt_tensor_dims(o)[d];
                    c->dims[d] = c->rank == 0 || (c->rank == rk && c->dims[d] == v) ? v : -1;
                }
                if (c->rank != 0 && c->rank != rk) rk = -1; /* rank changed: not written */
                if (c->rank >= 0) c->rank = rk;
            }
            if (pass == 0 && mopt_tensor_rank(o) >= 3 && n > 0 && !c->bad_ch) {
                int64_t C = mopt_tensor_dims(o)[1], plane = n / mopt_tensor_dims(o)[0] / C;
                if (!c->cmn) {
                    c->cmn = malloc((size_t)C * sizeof *c->cmn);
                    c->cmx = malloc((size_t)C * sizeof *c->cmx);
                    c->csum = calloc((size_t)C, sizeof *c->csum);
                    c->ccnt = calloc((size_t)C, sizeof *c->ccnt);
                    if (!c->cmn || !c->cmx || !c->csum || !c->ccnt) {
                        rc = 1;
                        fprintf(stderr, "mopt: out of memory\n");
                        break;
                    }
                    for (int64_t ch = 0; ch < C; ch++)
                        c->cmn[ch] = INFINITY, c->cmx[ch] = -INFINITY;
                    c->n_ch = C;
                }
                if (C != c->n_ch) c->bad_ch = 1;
                for (int64_t i = 0; !c->bad_ch && i < n; i++) {
                    double v = x[i];
                    int64_t ch = i / plane % C;
                    if (!isfinite(v)) continue;
                    if (v < c->cmn[ch]) c->cmn[ch] = v;
                    if (v > c->cmx[ch]) c->cmx[ch] = v;
                    c->csum[ch] += v, c->ccnt[ch] += 1;
                }
            }
            if (pass == 2) { /* the mean rounding error per channel, the table's u8 */
                if (c->n_ch <= 0 || c->bad_ch || !(c->scale > 0) || mopt_tensor_rank(o) < 3 ||
                    mopt_tensor_dims(o)[1] != c->n_ch || n <= 0)
                    continue;
                int64_t plane = n / mopt_tensor_dims(o)[0] / c->n_ch;
                if (!c->cqerr && !(c->cqerr = calloc((size_t)c->n_ch, sizeof *c->cqerr))) {
                    rc = 1;
                    fprintf(stderr, "mopt: out of memory\n");
                    break;
                }
                for (int64_t i = 0; i < n; i++) {
                    double v = x[i];
                    if (!isfinite(v)) continue;
                    double q = nearbyint(v / c->scale) + c->zp;
                    q = q < 0 ? 0 : q > 255 ? 255 : q;
                    c->cqerr[i / plane % c->n_ch] += (q - c->zp) * c->scale - v;
                }
                continue;
            }
            for (int64_t i = 0; i < n; i++) {
                double v = x[i];
                if (!isfinite(v)) continue;
                if (pass == 0) {
                    if (c->count == 0 || v < c->mn) c->mn = v;
                    if (c->count == 0 || v > c->mx) c->mx = v;
                    c->sum += v, c->sumsq += v * v;
                    c->count++;
                } else {
                    double span = c->mx - c->mn, am = fmax(fabs(c->mn), fabs(c->mx));
                    int b = span > 0 ? (int)((v - c->mn) / span * CAL_BINS) : 0;
                    int ab = am > 0 ? (int)(fabs(v) / am * CAL_ABINS) : 0;
                    c->hist[b < CAL_BINS ? b : CAL_BINS - 1] += 1;
                    if (v == 0)
                        c->zeros += 1; /* exact at any threshold (the zero point) */
                    else
                        c->ahist[ab < CAL_ABINS ? ab : CAL_ABINS - 1] += 1;
                }
            }
        }
        for (size_t i = 0; i < r->n_in; i++) {
            mopt_tensor_destroy(in[i]);
            in[i] = NULL;
        }
        for (size_t j = 0; j < r->n_out; j++) {
            mopt_tensor_destroy(out[j]);
            out[j] = NULL;
        }
    }
    free(in);
    free(out);
    return rc;
}

int cmd_calibrate(int argc, char **argv) {
    common_opts c = {0};
    const char *inputs = NULL, *out_path = NULL, *method = "minmax", *pct_s = NULL;
    bool bias_correction = false, rounding_correction = false;
    const string_flag strings[] = {{"--inputs", &inputs},
                                   {"-o", &out_path},
                                   {"--method", &method},
                                   {"--percentile", &pct_s},
                                   {"--threads", &c.threads},
                                   {"--options", &c.options_file},
                                   {NULL, NULL}};
    for (int i = 2; i < argc; i++) {
        int r;
        if ((r = string_flags(argc, argv, &i, strings)) != 0) {
            if (r < 0) return EXIT_USAGE;
        } else if (strcmp(argv[i], "--bias-correction") == 0) {
            bias_correction = true;
        } else if (strcmp(argv[i], "--rounding-correction") == 0) {
            rounding_correction = true;
        } else if (argv[i][0] == '-') {
            return usage_error("unknown flag '%s' for 'mopt calibrate'", argv[i]);
        } else if (c.model) {
            return usage_error("'mopt calibrate' takes one model, got '%s' and '%s'", c.model,
                               argv[i]);
        } else {
            c.model = argv[i];
        }
    }
    if (!c.model) return usage_error("'mopt calibrate' needs a MODEL file");
    if (!inputs) return usage_error("'mopt calibrate' needs --inputs DIR");
    if (!out_path || !*out_path) return usage_error("'mopt calibrate' needs -o TABLE.yaml");
    if (strcmp(method, "minmax") && strcmp(method, "percentile") && strcmp(method, "entropy"))
        return usage_error("--method %s: expected minmax, percentile or entropy", method);
    double pct = 99.99;
    if (pct_s) {
        char *end = NULL;
        pct = strtod(pct_s, &end);
        if (!end || *end || !(pct > 50 && pct <= 100))
            return usage_error("--percentile %s: expected a number in (50, 100]", pct_s);
    }
    int hash_ok;
    uint64_t hash = file_hash(c.model, &hash_ok);
    if (!hash_ok) {
        fprintf(stderr, "mopt: cannot read '%s': %s\n", c.model, strerror(errno));
        return 1;
    }
    c.opt_level = "0";
    mopt_options *plain_opts = NULL, *opts = NULL;
    mopt_model *plain = NULL, *model = NULL;
    mopt_session *session = NULL;
    golden_set *sets = NULL;
    cal_run run = {0};
    int rc = make_options(&c, &plain_opts);
    if (!rc) rc = make_options(&c, &opts);
    mopt_status st = MOPT_OK;
    if (!rc && (st = mopt_options_set_int(opts, "calibration_capture", 1)) != MOPT_OK)
        rc = fail(st);
    if (!rc && ((st = mopt_model_load(c.model, plain_opts, &plain)) != MOPT_OK ||
                (st = mopt_model_load(c.model, opts, &model)) != MOPT_OK ||
                (st = mopt_session_create(model, opts, &session)) != MOPT_OK))
        rc = fail(st);
    if (!rc) rc = list_sets(inputs, &sets, &run.n_sets);
    if (!rc) {
        size_t n_orig = mopt_model_io_count(plain, MOPT_OUTPUT);
        run.session = session;
        run.model = model;
        run.sets = sets;
        run.n_in = mopt_model_io_count(model, MOPT_INPUT);
        run.n_out = mopt_model_io_count(model, MOPT_OUTPUT);
        run.n_t = run.n_out - n_orig;
        run.t = calloc(run.n_t + 1, sizeof *run.t);
        if (!run.t) rc = 1;
        for (size_t j = 0; !rc && j < run.n_t; j++) {
            run.t[j].out_index = n_orig + j;
            run.t[j].name = mopt_model_io_name(model, MOPT_OUTPUT, n_orig + j);
        }
        if (!rc && run.n_t == 0) {
            fprintf(stderr,
                    "mopt: '%s' has no MatMul, Gemm or Conv with an f32 activation "
                    "input: nothing to calibrate\n",
                    c.model);
            rc = 1;
        }
    }
    if (!rc) rc = run_all(&run, 0);
    if (!rc) rc = run_all(&run, 1);
    for (size_t j = 0; !rc && j < run.n_t; j++) {
        cal_tensor *t = &run.t[j];
        if (t->count == 0) continue;
        double total = 0;
        for (int b = 0; b < CAL_BINS; b++)
            total += t->hist[b];
        t->r_minmax[0] = t->mn, t->r_minmax[1] = t->mx;
        t->r_pct[0] = hist_quantile(t->hist, total, t->mn, t->mx, 1 - pct / 100);
        t->r_pct[1] = hist_quantile(t->hist, total, t->mn, t->mx, pct / 100);
        double am = fmax(fabs(t->mn), fabs(t->mx));
        double th = entropy_threshold(t->ahist, am / CAL_ABINS, entropy_levels(t->mn, t->mx));
        t->r_ent[0] = fmax(t->mn, -th), t->r_ent[1] = fmin(t->mx, th);
        const double *r = strcmp(method, "minmax") == 0       ? t->r_minmax
                          : strcmp(method, "percentile") == 0 ? t->r_pct
                                                              : t->r_ent;
        quant_params(r, &t->scale, &t->zp);
    }
    if (!rc && rounding_correction) rc = run_all(&run, 2);
    FILE *f = NULL;
    if (!rc && !(f = fopen(out_path, "w"))) {
        fprintf(stderr, "mopt: cannot write '%s': %s\n", out_path, strerror(errno));
        rc = 1;
    }
    if (!rc) {
        fprintf(f,
                "# mopt calibration table: activation ranges of the inputs of MatMul/Gemm/Conv,\n"
                "# read by libmopt with options precision=int8 calibration=THIS_FILE.\n"
                "# Weights are quantized per output channel (symmetric s8) at load.\n");
        fprintf(f, "format: mopt-calibration/1\nmodel: ");
        yaml_str(f, base_name(c.model));
        fprintf(f, "\nmodel_hash: \"mh64:%016" PRIx64 "\"\nmethod: %s\npercentile: %g\n", hash,
                method, pct);
        fprintf(f, "input_sets: %zu\nhistogram_bins: %d\n", run.n_sets, CAL_BINS);
        /* informative: the pass corrects a Conv's bias where X has channel_mean */
        fprintf(f, "bias_correction: %s\n", bias_correction ? "true" : "false");
        fprintf(f, "rounding_correction: %s\n", rounding_correction ? "true" : "false");
        fprintf(f, "tensors:\n");
        for (size_t j = 0; j < run.n_t; j++) {
            cal_tensor *t = &run.t[j];
            if (t->count == 0) continue;
            double total = 0;
            for (int b = 0; b < CAL_BINS; b++)
                total += t->hist[b];
            double scale = t->scale;
            int zp = t->zp;
            double mean = t->sum / t->count;
            double sd = sqrt(fmax(t->sumsq / t->count - mean * mean, 0));
            fprintf(f, "  ");
            yaml_str(f, t->name);
            fprintf(f,
                    ":\n    dtype: uint8\n    scale: %.9g\n    zero_point: %d\n"
                    "    method: %s\n    min: %.9g\n    max: %.9g\n"
                    "    ranges: {minmax: [%.9g, %.9g], percentile: [%.9g, %.9g], "
                    "entropy: [%.9g, %.9g]}\n"
                    "    histogram: {values: %" PRId64 ", mean: %.6g, std: %.6g, "
                    "p0.01: %.6g, p50: %.6g, p99.99: %.6g}\n",
                    scale, zp, method, t->mn, t->mx, t->r_minmax[0], t->r_minmax[1], t->r_pct[0],
                    t->r_pct[1], t->r_ent[0], t->r_ent[1], t->count, mean, sd,
                    hist_quantile(t->hist, total, t->mn, t->mx, 0.0001),
                    hist_quantile(t->hist, total, t->mn, t->mx, 0.5),
                    hist_quantile(t->hist, total, t->mn, t->mx, 0.9999));
            for (int side = 0; t->n_ch > 0 && !t->bad_ch && side < 2; side++) {
                fprintf(f, "    %s: [", side ? "channel_max" : "channel_min");
                for (int64_t ch = 0; ch < t->n_ch; ch++) {
                    double v = side ? t->cmx[ch] : t->cmn[ch];
                    fprintf(f, "%s%.9g", ch ? ", " : "", isfinite(v) ? v : 0.0);
                }
                fprintf(f, "]\n");
            }
            if ((bias_correction || rounding_correction) && t->n_ch > 0 && !t->bad_ch &&
                t->rank >= 3) {
                fprintf(f, "    dims: [");
                for (int d = 0; d < t->rank; d++)
                    fprintf(f, "%s%" PRId64, d ? ", " : "", t->dims[d]);
                fprintf(f, "]\n");
            }
            if (bias_correction && t->n_ch > 0 && !t->bad_ch) {
                fprintf(f, "    channel_mean: [");
                for (int64_t ch = 0; ch < t->n_ch; ch++)
                    fprintf(f, "%s%.9g", ch ? ", " : "",
                            t->ccnt[ch] > 0 ? t->csum[ch] / t->ccnt[ch] : 0.0);
                fprintf(f, "]\n");
            }
            if (rounding_correction && t->cqerr) {
                fprintf(f, "    channel_qerr: [");
                for (int64_t ch = 0; ch < t->n_ch; ch++)
                    fprintf(f, "%s%.9g", ch ? ", " : "",
                            t->ccnt[ch] > 0 ? t->cqerr[ch] / t->ccnt[ch] : 0.0);
                fprintf(f, "]\n");
            }
        }
        if (fclose(f) != 0) {
            fprintf(stderr, "mopt: cannot write '%s'\n", out_path);
            rc = 1;
        } else {
            printf("calibrated %zu tensors of %s on %zu input sets (%s): %s\n", run.n_t, c.model,
                   run.n_sets, method, out_path);
        }
    }
    for (size_t j = 0; run.t && j < run.n_t; j++) {
        free(run.t[j].cmn);
        free(run.t[j].cmx);
        free(run.t[j].csum);
        free(run.t[j].ccnt);
        free(run.t[j].cqerr);
    }
    free(run.t);
    free_sets(sets, run.n_sets);
    mopt_session_destroy(session);
    mopt_model_destroy(model);
    mopt_model_destroy(plain);
    mopt_options_destroy(opts);
    mopt_options_destroy(plain_opts);
    return rc;
}
