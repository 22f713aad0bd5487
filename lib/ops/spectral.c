/*
 * spectral.c — the "spectral" operator family: DFT (opset 17: axis
 * attribute; opset 20: axis input; dft_length, inverse, onesided: RFFT and
 * IRFFT, real or complex input), STFT (frame_step, optional window and
 * frame_length, onesided) and MelWeightMatrix (any numeric
 * output_datatype). Shape/type inference, validation and attribute parsing;
 * the math is in kernels/ref/spectral.c. DFT and STFT compute in f32 at the
 * edges and double inside (f16/bf16/f64 through the float bridge).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_logic.h"
#include "kernels/ref/ref_spectral.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

static bool known(const ir_shape *s, int32_t i) { return s->rank > i && s->syms[i] == 0; }

/* An optional scalar integer input k: 1 (value in *v), 0 (not given, or
 * unknown at load time; *given says which) or -1 (error set). */
static int scalar_input(const op_ctx *ctx, const op_tensor *in, int n_in, int k, const char *what,
                        int64_t *v, bool *given) {
    *given = k < n_in && op_wired(ctx, k);
    if (!*given) return 0;
    int64_t buf[1], n = 0;
    int r = op_known_ints(ctx, &in[k], what, buf, 1, &n);
    if (r <= 0) return r;
    if (n != 1) {
        op_fail(ctx, MOPT_ERR_SHAPE, "%s must be a scalar", what);
        return -1;
    }
    *v = buf[0];
    return 1;
}

/* scalar_input for a size that must be >= 1: *got is scalar_input's 1 or 0;
 * an unreadable input is a SHAPE error, a given value below 1 an
 * INVALID_ARGUMENT one. */
static mopt_status size_input(const op_ctx *ctx, const op_tensor *in, int n_in, int k,
                              const char *what, int64_t *v, bool *given, int *got) {
    *got = scalar_input(ctx, in, n_in, k, what, v, given);
    if (*got < 0) return MOPT_ERR_SHAPE;
    if (*got == 1 && *v < 1)
        return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT, "%s is %" PRId64 "; must be >= 1", what, *v);
    return MOPT_OK;
}

/* ---- DFT ---------------------------------------------------------------------- */

typedef struct dft_params {
    int64_t axis;         /* the attribute (opset 17), or the default -2 (opset 20) */
    bool axis_from_input; /* opset >= 20: input 2 when given */
    bool inverse, onesided;
} dft_params;

static mopt_status dft_parse(const op_ctx *ctx, void *params) {
    dft_params *p = params;
    mopt_status st = op_attr_bool(ctx, "inverse", 0, &p->inverse);
    if (!st) st = op_attr_bool(ctx, "onesided", 0, &p->onesided);
    if (st) return st;
    p->axis_from_input = ctx->opset >= 20;
    p->axis = p->axis_from_input ? -2 : ir_node_attr_int(ctx->node, "axis", 1);
    return MOPT_OK;
}

/* What DFT computes for input x: the axis (-1 when unknown at load time),
 * the transform length n (-1 when unknown), and the output shape. */
typedef struct dft_geom {
    int32_t axis;
    int64_t n, c_in;
} dft_geom;

static mopt_status dft_geometry(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom) {
    dft_geom *g = geom;
    const dft_params *p = ctx->params;
    const ir_shape *x = &in[0].shape;
    char sx[IR_SHAPE_STR_CAP];
    int32_t r = x->rank;
    g->axis = -1;
    g->n = -1;
    g->c_in = known(x, r - 1) ? x->dims[r - 1] : -1;
    if (r < 2)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "input %s must have rank >= 2 (signal axes, then 1 or 2 for the real and "
                       "imaginary parts)",
                       op_shape_str(ctx, x, sx));
    if (g->c_in >= 0 && g->c_in != 1 && g->c_in != 2)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "input %s must end in 1 (real) or 2 (complex), not %" PRId64,
                       op_shape_str(ctx, x, sx), g->c_in);
    if (p->onesided && !p->inverse && g->c_in == 2)
        return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                       "a one-sided forward DFT (RFFT) takes real input (last dim 1), not %s",
                       op_shape_str(ctx, x, sx));
    if (p->onesided && p->inverse && g->c_in == 1)
        return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                       "a one-sided inverse DFT (IRFFT) takes complex input (last dim 2), not %s",
                       op_shape_str(ctx, x, sx));
    int64_t a = p->axis;
    bool given = false;
    if (p->axis_from_input) {
        int k = scalar_input(ctx, in, n_in, 2, "axis", &a, &given);
        if (k < 0) return MOPT_ERR_SHAPE;
        if (k == 0 && given) return MOPT_OK; /* axis unknown at load time */
    }
    if (a < -r || a > r - 2 || a == -1)
        return op_fail(ctx, given ? MOPT_ERR_INVALID_ARGUMENT : MOPT_ERR_INVALID_MODEL,
                       "axis %" PRId64 " is out of range for input %s: [-%d, -2] or [0, %d] (the "
                       "last axis holds the real and imaginary parts)",
                       a, op_shape_str(ctx, x, sx), (int)r, (int)r - 2);
    g->axis = (int32_t)(a < 0 ? a + r : a);
    int64_t n = -1;
    int k;
    mopt_status st = size_input(ctx, in, n_in, 1, "dft_length", &n, &given, &k);
    if (st) return st;
    if (k == 0 && !given && known(x, g->axis)) {
        int64_t len = x->dims[g->axis];
        n = p->inverse && p->onesided ? 2 * (len - 1) : len;
        if (n < 1)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "input %s gives a DFT of length %" PRId64 " along axis %d; pass "
                           "dft_length",
                           op_shape_str(ctx, x, sx), n, (int)g->axis);
    }
    if (n > ((int64_t)1 << 40))
        return op_fail(ctx, MOPT_ERR_LIMIT, "dft_length %" PRId64 " is too large", n);
    g->n = n;
    return MOPT_OK;
}

static mopt_status dft_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const dft_params *p = ctx->params;
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (!st && n_in > 1 && op_has_input(in, n_in, 1)) st = op_expect_index(ctx, &in[1], 1);
    if (!st && n_in > 2 && op_has_input(in, n_in, 2)) st = op_expect_index(ctx, &in[2], 2);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    if (in[0].shape.rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    dft_geom g;
    st = dft_geometry(ctx, in, n_in, &g);
    if (st) return st;
    ir_shape y = in[0].shape;
    int32_t r = y.rank;
    y.dims[r - 1] = p->inverse && p->onesided ? 1 : 2;
    y.syms[r - 1] = 0;
    if (g.axis < 0) {
        for (int32_t i = 0; i < r - 1; i++)
            y.syms[i] = -1;
    } else if (g.n < 0) {
        y.syms[g.axis] = -1;
    } else {
        y.dims[g.axis] = p->onesided && !p->inverse ? g.n / 2 + 1 : g.n;
        y.syms[g.axis] = 0;
    }
    out[0].shape = y;
    return MOPT_OK;
}

static mopt_status dft_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const dft_params *p = ctx->params;
    const dft_geom *g = ctx->geom; /* dft_geometry's */
    const ir_shape *x = &in[0].shape;
    ref_dft_params k = {.len_in = x->dims[g->axis],
                        .c_in = g->c_in,
                        .len_out = out[0].shape.dims[g->axis],
                        .inverse = p->inverse,
                        .onesided = p->onesided};
    op_axis_split(x, g->axis, &k.outer, NULL, &k.inner);
    k.inner /= g->c_in;
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    ref_fft f;
    if (ref_fft_init(&f, g->n)) {
        ref_fft_free(&f);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for a DFT of length %" PRId64, g->n);
    }
    ref_dft_f32(&k, &f, in[0].data, out[0].data);
    ref_fft_free(&f);
    return MOPT_OK;
}

/* ---- STFT --------------------------------------------------------------------- */

typedef struct stft_params {
    bool onesided;
} stft_params;

static const op_attr_spec k_stft_attrs[] = {OP_ATTR_BOOL(stft_params, onesided, "onesided", 1)};

/* Frame length n, step and frame count (each -1 when unknown at load). */
typedef struct stft_geom {
    int64_t n, step, frames;
} stft_geom;

static mopt_status stft_geometry(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom) {
    stft_geom *g = geom;
    const stft_params *p = ctx->params;
    const ir_shape *x = &in[0].shape;
    char sx[IR_SHAPE_STR_CAP], sw[IR_SHAPE_STR_CAP];
    g->n = g->step = g->frames = -1;
    if (x->rank >= 0 && x->rank != 3)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "signal %s must be [batch, length, 1] (real) or [batch, length, 2] "
                       "(complex)",
                       op_shape_str(ctx, x, sx));
    if (known(x, 2) && x->dims[2] != 1 && x->dims[2] != 2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "signal %s must end in 1 (real) or 2 (complex)",
                       op_shape_str(ctx, x, sx));
    if (p->onesided && known(x, 2) && x->dims[2] == 2)
        return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                       "signal %s is complex: a one-sided STFT needs real input (set onesided=0)",
                       op_shape_str(ctx, x, sx));
    bool given;
    int k;
    mopt_status st = size_input(ctx, in, n_in, 1, "frame_step", &g->step, &given, &k);
    if (st) return st;
    bool has_w = n_in > 2 && op_wired(ctx, 2);
    const ir_shape *w = has_w ? &in[2].shape : NULL;
    if (w && w->rank >= 0 && w->rank != 1)
        return op_fail(ctx, MOPT_ERR_SHAPE, "window %s must be 1-D", op_shape_str(ctx, w, sw));
    int64_t wlen = w && known(w, 0) ? w->dims[0] : -1;
    bool fl_given;
    int64_t fl = -1;
    if ((st = size_input(ctx, in, n_in, 3, "frame_length", &fl, &fl_given, &k))) return st;
    if (k == 1) {
        if (wlen >= 0 && wlen != fl)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "window %s must have frame_length = %" PRId64 " values",
                           op_shape_str(ctx, w, sw), fl);
        g->n = fl;
    } else if (!fl_given) {
        g->n = has_w ? wlen : (known(x, 1) ? x->dims[1] : -1);
    }
    if (g->n == 0) return op_fail(ctx, MOPT_ERR_SHAPE, "the frame length is 0");
    if (g->n > 0 && g->step > 0 && known(x, 1)) {
        if (x->dims[1] < g->n)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "signal %s is shorter than one frame of %" PRId64 " samples",
                           op_shape_str(ctx, x, sx), g->n);
        g->frames = (x->dims[1] - g->n) / g->step + 1;
    }
    return MOPT_OK;
}

static mopt_status stft_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const stft_params *p = ctx->params;
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (!st) st = op_expect_index(ctx, &in[1], 1);
    if (!st && n_in > 2 && op_has_input(in, n_in, 2)) st = op_expect_f32(ctx, &in[2], 2);
    if (!st && n_in > 3 && op_has_input(in, n_in, 3)) st = op_expect_index(ctx, &in[3], 3);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    stft_geom g;
    st = stft_geometry(ctx, in, n_in, &g);
    if (st) return st;
    ir_shape y;
    memset(&y, 0, sizeof y);
    y.rank = 4;
    y.syms[0] = y.syms[1] = y.syms[2] = -1;
    y.dims[3] = 2;
    if (in[0].shape.rank >= 0) y.dims[0] = in[0].shape.dims[0], y.syms[0] = in[0].shape.syms[0];
    if (g.frames >= 0) y.dims[1] = g.frames, y.syms[1] = 0;
    if (g.n > 0) y.dims[2] = p->onesided ? g.n / 2 + 1 : g.n, y.syms[2] = 0;
    out[0].shape = y;
    return MOPT_OK;
}

static mopt_status stft_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const stft_geom *g = ctx->geom; /* stft_geometry's */
    const ir_shape *x = &in[0].shape;
    ref_stft_params k = {.batch = x->dims[0],
                         .len = x->dims[1],
                         .c_in = x->dims[2],
                         .frames = g->frames,
                         .step = g->step,
                         .bins = out[0].shape.dims[2]};
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    ref_fft f;
    if (ref_fft_init(&f, g->n)) {
        ref_fft_free(&f);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for frames of %" PRId64, g->n);
    }
    const float *window = n_in > 2 && op_has_input(in, n_in, 2) ? in[2].data : NULL;
    ref_stft_f32(&k, &f, in[0].data, window, out[0].data);
    ref_fft_free(&f);
    return MOPT_OK;
}

/* ---- MelWeightMatrix ---------------------------------------------------------- */

typedef struct mel_params {
    mopt_dtype out_type; /* output_datatype */
} mel_params;

static mopt_status mel_parse(const op_ctx *ctx, void *params) {
    mel_params *p = params;
    p->out_type = (mopt_dtype)ir_node_attr_int(ctx->node, "output_datatype", MOPT_DTYPE_F32);
    return MOPT_OK;
}

static bool mel_float_type(mopt_dtype t) {
    return t == MOPT_DTYPE_F32 || t == MOPT_DTYPE_F64 || t == MOPT_DTYPE_F16 ||
           t == MOPT_DTYPE_BF16;
}

/* A float scalar input as double: 0, or -1 with an error set. */
static int float_scalar(const op_ctx *ctx, const op_tensor *t, const char *what, double *v) {
    if (op_numel(t) != 1) {
        op_fail(ctx, MOPT_ERR_SHAPE, "%s must be a scalar", what);
        return -1;
    }
    ref_cast(t->dtype, t->data, MOPT_DTYPE_F64, v, 1);
    if (!isfinite(*v)) {
        op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT, "%s is not finite", what);
        return -1;
    }
    return 0;
}

static mopt_status mel_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const mel_params *p = ctx->params;
    mopt_dtype t = p->out_type;
    if (mopt_dtype_size(t) == 0 || t == MOPT_DTYPE_BOOL || !ref_cast_supported(t))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "output_datatype %d is not supported", t);
    for (int k = 0; k < 3; k++) {
        mopt_status st = op_expect_index(ctx, &in[k], k);
        if (st) return st;
    }
    for (int k = 3; k < 5; k++)
        if (in[k].dtype != MOPT_DTYPE_UNDEFINED && !mel_float_type(in[k].dtype))
            return op_fail(ctx, MOPT_ERR_TYPE, "input %d has type %s; expected a float type", k,
                           mopt_dtype_name(in[k].dtype));
    out[0].dtype = t;
    ir_shape y;
    memset(&y, 0, sizeof y);
    y.rank = 2;
    y.syms[0] = y.syms[1] = -1;
    bool given;
    int64_t n_mel, dft_len;
    int k;
    mopt_status st = size_input(ctx, in, n_in, 0, "num_mel_bins", &n_mel, &given, &k);
    if (st) return st;
    if (k == 1) y.dims[1] = n_mel, y.syms[1] = 0;
    k = scalar_input(ctx, in, n_in, 1, "dft_length", &dft_len, &given);
    if (k < 0) return MOPT_ERR_SHAPE;
    if (k == 1) {
        if (dft_len < 1 || dft_len > ((int64_t)1 << 40))
            return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                           "dft_length is %" PRId64 "; must be >= 1", dft_len);
        y.dims[0] = dft_len / 2 + 1, y.syms[0] = 0;
    }
    int64_t rate;
    if ((st = size_input(ctx, in, n_in, 2, "sample_rate", &rate, &given, &k))) return st;
    if (in[3].data && in[4].data) {
        double lo, hi;
        if (float_scalar(ctx, &in[3], "lower_edge_hertz", &lo) ||
            float_scalar(ctx, &in[4], "upper_edge_hertz", &hi))
            return MOPT_ERR_INVALID_ARGUMENT;
        if (lo < 0 || hi <= lo)
            return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                           "the edges must satisfy 0 <= lower_edge_hertz < upper_edge_hertz; "
                           "they are %g and %g",
                           lo, hi);
    }
    out[0].shape = y;
    return MOPT_OK;
}

static mopt_status mel_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    int64_t n_mel = out[0].shape.dims[1], rows = out[0].shape.dims[0], v[3];
    bool given;
    for (int k = 1; k < 3; k++)
        if (scalar_input(ctx, in, n_in, k, k == 1 ? "dft_length" : "sample_rate", &v[k], &given) !=
            1)
            return MOPT_ERR_SHAPE;
    double lo, hi;
    if (float_scalar(ctx, &in[3], "lower_edge_hertz", &lo) ||
        float_scalar(ctx, &in[4], "upper_edge_hertz", &hi))
        return MOPT_ERR_INVALID_ARGUMENT;
    double *m = mopt_malloc((size_t)(rows * n_mel) * sizeof(double));
    if (!m) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    ref_mel_weight_matrix(n_mel, v[1], v[2], lo, hi, m);
    ref_cast(MOPT_DTYPE_F64, m, out[0].dtype, out[0].data, rows * n_mel);
    mopt_free(m);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"DFT", "", 1, 3, 1, 1, dft_infer, dft_run, NULL, OP_PARAMS(dft_params, dft_parse),
     OP_GEOM(dft_geom, dft_geometry), .bridge = &ops_bridge_float},
    {"STFT", "", 2, 4, 1, 1, stft_infer, stft_run, NULL, OP_ATTRS(stft_params, k_stft_attrs),
     OP_GEOM(stft_geom, stft_geometry), .bridge = &ops_bridge_float},
    /* output_datatype names the output: never bridged */
    {"MelWeightMatrix", "", 5, 5, 1, 1, mel_infer, mel_run, NULL, OP_PARAMS(mel_params, mel_parse)},
};

const op_def *ops_family_spectral(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
