/*
 * run.c — one configuration end to end through <mopt/mopt.h> only: options,
 * load, inputs (files or seeded random data), first run, warm-up, timed runs,
 * session statistics and the per-node profile. Never exits; errors go into
 * bench_result.error with the library's message.
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include "run.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mopt/mopt.h>

#include "sysinfo.h"

#define MAX_SAMPLES ((size_t)50 * 1000 * 1000)

void bench_result_init(bench_result *r, const bench_config *c) {
    memset(r, 0, sizeof *r);
    r->config = c;
    r->threads = -1;
    r->opt_level = -1;
    bench_prof_init(&r->prof);
    if (c) bench_config_label(c, r->label, sizeof r->label);
}

void bench_result_free(bench_result *r) { bench_prof_free(&r->prof); }

static int rfail(bench_result *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    r->ok = 0;
    return -1;
}

static int api_fail(bench_result *r, const char *what, mopt_status st) {
    return rfail(r, "%s: %s: %s", what, mopt_status_string(st), mopt_last_error());
}

/* ---- seeded random data (splitmix64) ---- */

static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1) with 24 random bits (exact in float32). */
static float rng_float(uint64_t *s) {
    return (float)((double)(rng_next(s) >> 40) / 8388608.0 - 1.0);
}

/* Uniform integer in [lo, hi), hi > lo. */
static int64_t rng_int(uint64_t *s, int64_t lo, int64_t hi) {
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    return (int64_t)((uint64_t)lo + rng_next(s) % span);
}

static uint16_t f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7FFFu + ((u >> 16) & 1u); /* round to nearest even; inputs are finite */
    return (uint16_t)(u >> 16);
}

static uint16_t f32_to_f16(float f) {
    /* |f| < 1 here, so no overflow; denormals flush to zero. */
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    int32_t exp = (int32_t)((u >> 23) & 0xFF) - 127 + 15;
    uint32_t mant = u & 0x7FFFFFu;
    if (exp <= 0) return sign;
    uint32_t h = ((uint32_t)exp << 10) | (mant >> 13);
    if ((mant & 0x1FFFu) > 0x1000u || ((mant & 0x1FFFu) == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

static int name_is_mask(const char *name) {
    for (const char *p = name; *p; p++)
        if (strncasecmp(p, "mask", 4) == 0) return 1;
    return 0;
}

/* Fills t with seeded data; reports what it did in io->source. */
static int fill_random(bench_result *r, const bench_config *c, const char *name, mopt_tensor *t,
                       uint64_t *rng, bench_io *io) {
    mopt_dtype dt = mopt_tensor_dtype(t);
    int64_t n = mopt_tensor_element_count(t);
    void *data = mopt_tensor_data(t);
    int mask = name_is_mask(name);
    int64_t lo = c->int_lo, hi = c->int_hi;
    int64_t tmin = INT64_MIN, tmax = INT64_MAX;
    switch (dt) {
    case MOPT_DTYPE_I8: tmin = INT8_MIN, tmax = INT8_MAX; break;
    case MOPT_DTYPE_U8: tmin = 0, tmax = UINT8_MAX; break;
    case MOPT_DTYPE_I16: tmin = INT16_MIN, tmax = INT16_MAX; break;
    case MOPT_DTYPE_U16: tmin = 0, tmax = UINT16_MAX; break;
    case MOPT_DTYPE_I32: tmin = INT32_MIN, tmax = INT32_MAX; break;
    case MOPT_DTYPE_U32: tmin = 0, tmax = UINT32_MAX; break;
    case MOPT_DTYPE_U64: tmin = 0; break;
    default: break;
    }
    snprintf(io->source, sizeof io->source, "%s", "random");
    if (dt == MOPT_DTYPE_F32 || dt == MOPT_DTYPE_F64 || dt == MOPT_DTYPE_F16 ||
        dt == MOPT_DTYPE_BF16) {
        for (int64_t i = 0; i < n; i++) {
            float v = rng_float(rng);
            if (dt == MOPT_DTYPE_F32)
                ((float *)data)[i] = v;
            else if (dt == MOPT_DTYPE_F64)
                ((double *)data)[i] = v;
            else if (dt == MOPT_DTYPE_F16)
                ((uint16_t *)data)[i] = f32_to_f16(v);
            else
                ((uint16_t *)data)[i] = f32_to_bf16(v);
        }
        return 0;
    }
    if (dt == MOPT_DTYPE_BOOL) {
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)data)[i] = mask ? 1 : (uint8_t)(rng_next(rng) & 1u);
        if (mask) snprintf(io->source, sizeof io->source, "%s", "ones");
        return 0;
    }
    if (dt == MOPT_DTYPE_STRING || dt == MOPT_DTYPE_UNDEFINED || mopt_dtype_size(dt) == 0)
        return rfail(r, "input '%s': cannot make random data of type %s; give --input %s=FILE",
                     name, mopt_dtype_name(dt), name);
    if (!mask && (lo < tmin || hi - 1 > tmax))
        return rfail(r,
                     "input '%s' is %s: the integer range [%" PRId64 ", %" PRId64
                     ") does not fit; use --int-range",
                     name, mopt_dtype_name(dt), lo, hi);
    if (mask) snprintf(io->source, sizeof io->source, "%s", "ones");
    for (int64_t i = 0; i < n; i++) {
        int64_t v = mask ? 1 : rng_int(rng, lo, hi);
        switch (dt) {
        case MOPT_DTYPE_I8: ((int8_t *)data)[i] = (int8_t)v; break;
        case MOPT_DTYPE_U8: ((uint8_t *)data)[i] = (uint8_t)v; break;
        case MOPT_DTYPE_I16: ((int16_t *)data)[i] = (int16_t)v; break;
        case MOPT_DTYPE_U16: ((uint16_t *)data)[i] = (uint16_t)v; break;
        case MOPT_DTYPE_I32: ((int32_t *)data)[i] = (int32_t)v; break;
        case MOPT_DTYPE_U32: ((uint32_t *)data)[i] = (uint32_t)v; break;
        case MOPT_DTYPE_I64: ((int64_t *)data)[i] = v; break;
        case MOPT_DTYPE_U64: ((uint64_t *)data)[i] = (uint64_t)v; break;
        default: return rfail(r, "input '%s': unsupported type %s", name, mopt_dtype_name(dt));
        }
    }
    return 0;
}

/* ---- symbolic dims ---- */

typedef struct sym_use {
    int batch, seq;
    int dims[64];
} sym_use;

/* Value of a symbolic dim, or -1 when nothing gives it. */
static int64_t sym_value(const bench_config *c, const char *sym, sym_use *use) {
    if (!sym) return -1;
    if (strcmp(sym, "batch") == 0 && c->batch >= 0) {
        use->batch = 1;
        return c->batch;
    }
    if (strcmp(sym, "seq") == 0 && c->seq >= 0) {
        use->seq = 1;
        return c->seq;
    }
    for (size_t i = 0; i < c->n_dims; i++)
        if (strcmp(c->dims[i].name, sym) == 0) {
            if (i < 64) use->dims[i] = 1;
            if (strcmp(sym, "batch") == 0) use->batch = 1;
            if (strcmp(sym, "seq") == 0) use->seq = 1;
            return c->dims[i].value;
        }
    if (strcmp(sym, "batch") == 0) return 1; /* documented default */
    return -1;
}

static void sym_list(const mopt_model *m, char *buf, size_t len) {
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < mopt_model_io_count(m, MOPT_INPUT); i++) {
        int rank = mopt_model_io_rank(m, MOPT_INPUT, i);
        for (int a = 0; a < rank; a++) {
            const char *s = mopt_model_io_dim_name(m, MOPT_INPUT, i, a);
            if (!s) continue;
            char tmp[136];
            snprintf(tmp, sizeof tmp, "'%s'", s);
            if (strstr(buf, tmp)) continue;
            int k = snprintf(buf + n, len > n ? len - n : 0, "%s%s", n ? ", " : "", tmp);
            if (k > 0) n += (size_t)k;
            if (n >= len) return;
        }
    }
    if (!buf[0]) snprintf(buf, len, "none");
}

/* Fails the run: sym=value was given, but no random input has a dim named
 * sym; example is the shape template the message suggests. Returns -1. */
static int unmapped_sym(bench_result *r, const mopt_model *m, const char *sym, int64_t value,
                        const char *example) {
    char syms[512];
    sym_list(m, syms, sizeof syms);
    return rfail(r,
                 "%s=%" PRId64 " was given, but no random input has a dim named '%s' "
                 "(model symbols: %s); map it with a shape template, e.g. --shape NAME=%s",
                 sym, value, sym, syms, example);
}

static void input_list(const mopt_model *m, char *buf, size_t len) {
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < mopt_model_io_count(m, MOPT_INPUT) && n < len; i++) {
        int k =
            snprintf(buf + n, len - n, "%s%s", i ? ", " : "", mopt_model_io_name(m, MOPT_INPUT, i));
        if (k > 0) n += (size_t)k;
    }
}

/* 0 when the model has an input called name (given with option opt); else
 * the run fails naming the inputs it has. */
static int want_input(bench_result *r, const mopt_model *m, const char *opt, const char *name) {
    size_t idx;
    if (mopt_model_io_find(m, MOPT_INPUT, name, &idx) == MOPT_OK) return 0;
    char names[512];
    input_list(m, names, sizeof names);
    return rfail(r, "%s %s: the model has no input of that name (inputs: %s)", opt, name, names);
}

static const bench_kv *find_file(const bench_config *c, const char *name) {
    for (size_t i = 0; i < c->n_inputs; i++)
        if (strcmp(c->inputs[i].key, name) == 0) return &c->inputs[i];
    return NULL;
}

static const bench_shape *find_shape(const bench_config *c, const char *name) {
    for (size_t i = 0; i < c->n_shapes; i++)
        if (strcmp(c->shapes[i].name, name) == 0) return &c->shapes[i];
    return NULL;
}

/* Builds the tensor of model input i. */
static int make_input(bench_result *r, const bench_config *c, const mopt_model *m, size_t i,
                      uint64_t *rng, sym_use *use, mopt_tensor **out, bench_io *io) {
    const char *name = mopt_model_io_name(m, MOPT_INPUT, i);
    const bench_kv *f = find_file(c, name);
    mopt_status st;
    if (f) {
        st = mopt_tensor_load(f->value, out);
        if (st)
            return rfail(r, "input '%s': cannot read '%s': %s: %s", name, f->value,
                         mopt_status_string(st), mopt_last_error());
        snprintf(io->source, sizeof io->source, "%s", "file");
        return 0;
    }
    mopt_dtype dt = mopt_model_io_dtype(m, MOPT_INPUT, i);
    if (dt == MOPT_DTYPE_UNDEFINED)
        return rfail(r, "input '%s' has no known element type; give --input %s=FILE.npy", name,
                     name);
    int64_t dims[BENCH_MAX_RANK];
    int rank;
    const bench_shape *s = find_shape(c, name);
    if (s) {
        rank = s->rank;
        for (int a = 0; a < rank; a++) {
            dims[a] = s->dims[a];
            if (s->syms[a]) {
                dims[a] = sym_value(c, s->syms[a], use);
                if (dims[a] < 0)
                    return rfail(r,
                                 "input '%s': dim %d of the given shape is the symbol '%s'; "
                                 "give --dim %s=N",
                                 name, a, s->syms[a], s->syms[a]);
            }
        }
    } else {
        rank = mopt_model_io_rank(m, MOPT_INPUT, i);
        if (rank < 0)
            return rfail(r, "input '%s' has an unknown rank; give --shape %s=DIMS", name, name);
        if (rank > BENCH_MAX_RANK)
            return rfail(r, "input '%s' has rank %d (more than %d)", name, rank, BENCH_MAX_RANK);
        for (int a = 0; a < rank; a++) {
            dims[a] = mopt_model_io_dim(m, MOPT_INPUT, i, a);
            if (dims[a] >= 0) continue;
            const char *sym = mopt_model_io_dim_name(m, MOPT_INPUT, i, a);
            if (!sym)
                return rfail(r, "input '%s': dim %d is unknown; give --shape %s=DIMS", name, a,
                             name);
            dims[a] = sym_value(c, sym, use);
            if (dims[a] < 0)
                return rfail(r,
                             "input '%s': dim %d is the symbol '%s'; give --dim %s=N "
                             "(or --shape %s=DIMS)",
                             name, a, sym, sym, name);
        }
    }
    st = mopt_tensor_create(dt, rank, dims, out);
    if (st) return api_fail(r, "creating a random input", st);
    return fill_random(r, c, name, *out, rng, io);
}

/* ---- progress bar ---- */

typedef struct progress {
    int on;
    double last;
    const char *label;
} progress;

void bench_progress_bar(char *bar, int width, double frac) {
    if (frac < 0) frac = 0;
    if (frac > 1) frac = 1;
    int fill = (int)(frac * width);
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
}

static void progress_draw(progress *p, const char *phase, double frac, int64_t done, int force) {
    if (!p->on) return;
    double now = bench_now_s();
    if (!force && now - p->last < 0.1) return;
    p->last = now;
    if (frac < 0) frac = 0;
    if (frac > 1) frac = 1;
    char bar[31];
    bench_progress_bar(bar, 30, frac);
    fprintf(stderr, "\r\033[K[%s] %3d%% %s %s %" PRId64, bar, (int)(frac * 100.0), p->label, phase,
            done);
    fflush(stderr);
}

static void progress_clear(progress *p) {
    if (!p->on) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
}

/* ---- the run ---- */

static void read_effective(bench_result *r, const mopt_options *o) {
    const char *s = NULL;
    int64_t v;
    if (mopt_options_get_string(o, "precision", &s) == MOPT_OK && s)
        snprintf(r->precision, sizeof r->precision, "%s", s);
    if (mopt_options_get_string(o, "backend", &s) == MOPT_OK && s)
        snprintf(r->backend, sizeof r->backend, "%s", s);
    if (mopt_options_get_int(o, "threads", &v) == MOPT_OK) r->threads = v;
    if (mopt_options_get_int(o, "opt_level", &v) == MOPT_OK) r->opt_level = v;
}

static int set_options(bench_result *r, const bench_config *c, mopt_options *o) {
    mopt_status st = MOPT_OK;
    if (c->threads >= 0 && (st = mopt_options_set_int(o, "threads", c->threads)))
        return api_fail(r, "option threads", st);
    if (c->opt_level >= 0 && (st = mopt_options_set_int(o, "opt_level", c->opt_level)))
        return api_fail(r, "option opt_level", st);
    if (c->backend && (st = mopt_options_set_string(o, "backend", c->backend)))
        return api_fail(r, "option backend", st);
    if (c->precision && (st = mopt_options_set_string(o, "precision", c->precision)))
        return api_fail(r, "option precision", st);
    if (c->profile && *c->profile && (st = mopt_options_set_string(o, "profile", c->profile)))
        return api_fail(r, "option profile", st);
    for (size_t i = 0; i < c->n_options; i++)
        if ((st = mopt_options_set_string(o, c->options[i].key, c->options[i].value))) {
            char what[160];
            snprintf(what, sizeof what, "option %s=%s", c->options[i].key, c->options[i].value);
            return api_fail(r, what, st);
        }
    return 0;
}

static void collect_profile(bench_result *r, const mopt_session *s, int *oom) {
    size_t n = mopt_session_profile_count(s);
    for (size_t k = 0; k < n && !*oom; k++)
        if (bench_prof_add(&r->prof, k, mopt_session_profile_node(s, k),
                           mopt_session_profile_op(s, k), mopt_session_profile_kernel(s, k),
                           mopt_session_profile_ns(s, k), mopt_session_profile_flops(s, k)) != 0)
            *oom = 1;
    if (n) bench_prof_end_run(&r->prof);
}

/* A configuration loaded and ready to time (bench_open). */
struct bench_live {
    const bench_config *c;
    mopt_options *o;
    mopt_model *m;
    mopt_session *s;
    mopt_tensor **in, **out;
    size_t n_in, n_out;
    int profiling, oom;
    progress pg;
};

const mopt_model *bench_live_model(const bench_live *l) { return l ? l->m : NULL; }
const mopt_session *bench_live_session(const bench_live *l) { return l ? l->s : NULL; }

void bench_close(bench_live *l, bench_result *r) {
    if (!l) return;
    progress_clear(&l->pg);
    for (size_t i = 0; l->in && i < l->n_in; i++)
        mopt_tensor_destroy(l->in[i]);
    for (size_t i = 0; l->out && i < l->n_out; i++)
        mopt_tensor_destroy(l->out[i]);
    free(l->in);
    free(l->out);
    mopt_session_destroy(l->s); /* writes the Chrome trace, if asked for */
    if (l->s && r->trace_path[0] && mopt_last_error()[0] && r->ok) {
        rfail(r, "writing the trace '%s': %s", r->trace_path, mopt_last_error());
    }
    mopt_model_destroy(l->m);
    mopt_options_destroy(l->o);
    free(l);
}

int bench_open(const bench_config *c, const bench_run_opts *opts, bench_result *r,
               bench_live **out_live) {
    bench_result_init(r, c);
    *out_live = NULL;
    bench_live *l = calloc(1, sizeof *l);
    if (!l) return rfail(r, "out of memory");
    l->c = c;
    l->pg = (progress){opts && opts->progress, 0.0, r->label};
    mopt_status st;

    if (!c->model) {
        free(l);
        return rfail(r, "no model given");
    }
    r->peak_rss_is_per_config = bench_peak_rss_reset() == 0;
    if ((st = mopt_options_create(&l->o))) {
        api_fail(r, "options", st);
        goto fail;
    }
    if (set_options(r, c, l->o)) goto fail;
    read_effective(r, l->o);
    l->profiling = c->profile && *c->profile;
    if (l->profiling && strcmp(c->profile, "1") != 0)
        snprintf(r->trace_path, sizeof r->trace_path, "%s", c->profile);

    progress_draw(&l->pg, "loading", 0.0, 0, 1);
    double t0 = bench_now_s();
    st = mopt_model_load(c->model, l->o, &l->m);
    r->load_ms = (bench_now_s() - t0) * 1e3;
    if (st) {
        rfail(r, "model load failed: %s: %s", mopt_status_string(st), mopt_last_error());
        goto fail;
    }
    r->model_nodes = (int64_t)mopt_model_node_count(l->m);
    r->model_params = mopt_model_parameter_count(l->m);
    t0 = bench_now_s();
    st = mopt_session_create(l->m, l->o, &l->s);
    r->session_ms = (bench_now_s() - t0) * 1e3;
    if (st) {
        api_fail(r, "creating the session", st);
        goto fail;
    }

    /* Inputs */
    const mopt_model *m = l->m;
    size_t n_in = l->n_in = mopt_model_io_count(m, MOPT_INPUT);
    size_t n_out = l->n_out = mopt_model_io_count(m, MOPT_OUTPUT);
    l->in = calloc(n_in ? n_in : 1, sizeof *l->in);
    l->out = calloc(n_out ? n_out : 1, sizeof *l->out);
    if (!l->in || !l->out) {
        rfail(r, "out of memory");
        goto fail;
    }
    mopt_tensor **in = l->in;
    char syms[512];
    for (size_t i = 0; i < c->n_inputs; i++)
        if (want_input(r, m, "--input", c->inputs[i].key)) goto fail;
    for (size_t i = 0; i < c->n_shapes; i++)
        if (want_input(r, m, "--shape", c->shapes[i].name)) goto fail;
    uint64_t rng = c->seed;
    sym_use use;
    memset(&use, 0, sizeof use);
    for (size_t i = 0; i < n_in; i++) {
        bench_io tmp_io;
        memset(&tmp_io, 0, sizeof tmp_io);
        bench_io *io = i < 16 ? &r->io[i] : &tmp_io;
        if (make_input(r, c, m, i, &rng, &use, &in[i], io)) goto fail;
        snprintf(io->name, sizeof io->name, "%s", mopt_model_io_name(m, MOPT_INPUT, i));
        snprintf(io->dtype, sizeof io->dtype, "%s", mopt_dtype_name(mopt_tensor_dtype(in[i])));
        io->rank = mopt_tensor_rank(in[i]);
        for (int a = 0; a < io->rank && a < BENCH_MAX_RANK; a++)
            io->dims[a] = mopt_tensor_dim(in[i], a);
        if (i < 16) r->n_io = (int)i + 1;
    }
    if ((c->batch >= 0 && !use.batch && unmapped_sym(r, m, "batch", c->batch, "batch,...")) ||
        (c->seq >= 0 && !use.seq && unmapped_sym(r, m, "seq", c->seq, "batch,seq")))
        goto fail;
    for (size_t i = 0; i < c->n_dims && i < 64; i++)
        if (!use.dims[i] && strcmp(c->dims[i].name, "batch") && strcmp(c->dims[i].name, "seq")) {
            sym_list(m, syms, sizeof syms);
            rfail(r, "--dim %s: no random input has a dim of that name (model symbols: %s)",
                  c->dims[i].name, syms);
            goto fail;
        }
    /* items per inference: the batch size */
    if (c->batch >= 0)
        r->items = c->batch;
    else {
        int64_t b = -1;
        for (size_t i = 0; i < c->n_dims; i++)
            if (strcmp(c->dims[i].name, "batch") == 0) b = c->dims[i].value;
        if (b < 0 && n_in > 0 && mopt_tensor_rank(in[0]) >= 1) b = mopt_tensor_dim(in[0], 0);
        r->items = b >= 0 ? b : 1;
    }

    /* First run: outputs are created by the library, then reused. */
    progress_draw(&l->pg, "first run", 0.0, 0, 1);
    t0 = bench_now_s();
    st = mopt_session_run(l->s, n_in, NULL, (const mopt_tensor *const *)in, n_out, NULL, l->out);
    r->first_run_ms = (bench_now_s() - t0) * 1e3;
    if (st) {
        api_fail(r, "first run", st);
        goto fail;
    }
    for (int64_t w = 0; w < c->warmup; w++) {
        progress_draw(&l->pg, "warm-up", (double)w / (double)c->warmup, w, 0);
        st =
            mopt_session_run(l->s, n_in, NULL, (const mopt_tensor *const *)in, n_out, NULL, l->out);
        if (st) {
            api_fail(r, "warm-up run", st);
            goto fail;
        }
    }
    progress_clear(&l->pg);
    r->peak_rss_bytes = bench_peak_rss_bytes();
    *out_live = l;
    return 0;
fail:
    r->peak_rss_bytes = bench_peak_rss_bytes();
    bench_close(l, r);
    return -1;
}

int bench_time(bench_live *l, bench_result *r, size_t n, double *samples_ms) {
    for (size_t k = 0; k < n; k++) {
        double a = bench_now_s();
        mopt_status st = mopt_session_run(l->s, l->n_in, NULL, (const mopt_tensor *const *)l->in,
                                          l->n_out, NULL, l->out);
        double b = bench_now_s();
        if (st) return api_fail(r, "timed run", st);
        samples_ms[k] = (b - a) * 1e3;
        if (l->profiling && !l->oom) collect_profile(r, l->s, &l->oom);
    }
    return 0;
}

int bench_finish(bench_live *l, bench_result *r, const double *samples, size_t n,
                 double measure_s) {
    r->measure_s = measure_s;
    if (l->oom) return rfail(r, "out of memory while aggregating the profile");
    if (bench_latency_compute(samples, n, &r->latency_ms) != 0)
        return rfail(r, "no valid timing samples");
    double sum_ms = 0.0;
    for (size_t i = 0; i < n; i++)
        sum_ms += samples[i];
    /* Throughput from the summed run times (excludes the harness's own loop). */
    r->throughput_per_s = sum_ms > 0 ? (double)n * 1e3 / sum_ms : 0.0;
    r->items_per_s = r->throughput_per_s * (double)r->items;
    int64_t v = 0;
    if (mopt_session_get_stat(l->s, "arena_bytes", &v) == MOPT_OK) r->arena_bytes = v;
    if (mopt_session_get_stat(l->s, "peak_bytes", &v) == MOPT_OK) r->peak_bytes = v;
    r->profiled = l->profiling && r->prof.runs > 0;
    r->ok = 1;
    return 0;
}

int bench_run(const bench_config *c, const bench_run_opts *opts, bench_result *r) {
    bench_live *l = NULL;
    double *samples = NULL;
    int rc = -1;
    if (bench_open(c, opts, r, &l) != 0) return -1;

    /* Timed runs */
    size_t cap = c->duration_s > 0 ? 1024 : (size_t)c->iterations;
    if (cap == 0 || cap > MAX_SAMPLES) cap = cap ? MAX_SAMPLES : 1;
    samples = malloc(cap * sizeof *samples);
    if (!samples) {
        rfail(r, "out of memory for %zu samples", cap);
        goto done;
    }
    size_t n = 0;
    double start = bench_now_s();
    for (;;) {
        double elapsed = bench_now_s() - start;
        if (c->duration_s > 0) {
            if (n > 0 && elapsed >= c->duration_s) break;
            progress_draw(&l->pg, "measuring", elapsed / c->duration_s, (int64_t)n, 0);
        } else {
            if ((int64_t)n >= c->iterations) break;
            progress_draw(&l->pg, "measuring", (double)n / (double)c->iterations, (int64_t)n, 0);
        }
        if (n == MAX_SAMPLES) break;
        if (n == cap) {
            size_t ncap = cap * 2 > MAX_SAMPLES ? MAX_SAMPLES : cap * 2;
            double *ns = realloc(samples, ncap * sizeof *ns);
            if (!ns) break; /* keep what we have */
            samples = ns;
            cap = ncap;
        }
        if (bench_time(l, r, 1, &samples[n]) != 0) goto done;
        n++;
    }
    progress_clear(&l->pg);
    if (bench_finish(l, r, samples, n, bench_now_s() - start) != 0) goto done;
    rc = 0;
done:
    progress_clear(&l->pg);
    r->peak_rss_bytes = bench_peak_rss_bytes();
    free(samples);
    bench_close(l, r);
    if (rc == 0 && !r->ok) rc = -1;
    return rc;
}
