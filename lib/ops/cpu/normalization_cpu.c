/*
 * normalization_cpu.c — the "cpu" backend for Softmax/LogSoftmax along any
 * axis (the last one, or the whole coerced row before opset 13, as rows; an
 * axis with trailing dims as [outer, len, inner] blocks vectorized across
 * inner, split over outer x column chunks) and LayerNormalization
 * whose Scale/B hold one value per normalized element; rows are split over
 * ctx->threads; LayerNorm also reads and writes bf16-stored X / Y
 * (op_impl.bf16_io), statistics in f32, and at precision=int8 writes Y or
 * mopt.LayerNormalization's copy of Y as a u8 rows block (op_impl.u8_io),
 * each row quantized right after it is normalized. Other run-time layouts (broadcast Scale, empty
 * tensors) go to the op's reference run. Also BatchNormalization in inference mode (kernels/cpu's
 * affine on [N, C, spatial] rows, scale and shift per channel).
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/bf16cvt.h"
#include "kernels/cpu/rowquant.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/normalization.h"

/* Floats per thread below which splitting does not pay. */
#define GRAIN 16384

typedef struct rows_job {
    const cpu_kernels *k;
    const float *x, *scale, *bias;
    float *y, *mean, *inv_std;
    int64_t len;
    float eps;
    bool log;
    bool x_bf16, y_bf16; /* LayerNorm: X / Y stored as bf16 */
    /* LayerNorm at precision=int8: u8 rows blocks (kernels/cpu/rowquant.h)
     * that Y (q[0]) and mopt.LayerNormalization's copy of Y (q[1]) are
     * kept as, else NULL; copy: that copy in f32; rows: X's row count */
    uint8_t *q[2];
    float *copy;
    int64_t rows;
    bool avx512;
} rows_job;

static int64_t product(const ir_shape *s, int32_t from, int32_t to) {
    int64_t p = 1;
    for (int32_t i = from; i < to; i++)
        p *= s->dims[i];
    return p;
}

static int64_t row_grain(int64_t len) { return len >= GRAIN ? 1 : GRAIN / len; }

/* ---- Softmax, LogSoftmax ------------------------------------------------ */

static bool softmax_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                             int n_out) {
    if (in[0].dtype != MOPT_DTYPE_F32) return false;
    return true; /* rows of dims[axis:] before opset 13, else any axis */
}

/* The strided case: [outer, len, inner], blocks of CHUNK columns. */
#define CHUNK 256

typedef struct cols_job {
    const cpu_kernels *k;
    const float *x;
    float *y;
    int64_t len, inner, chunks;
    bool log;
} cols_job;

static void softmax_cols(void *arg, int64_t lo, int64_t hi) {
    const cols_job *j = arg;
    for (int64_t t = lo; t < hi; t++) {
        int64_t o = t / j->chunks, c = (t % j->chunks) * CHUNK;
        int64_t w = j->inner - c < CHUNK ? j->inner - c : CHUNK;
        size_t off = (size_t)(o * j->len * j->inner + c);
        j->k->softmax_cols_f32(j->x + off, j->y + off, j->len, j->inner, w, j->log);
    }
}

static void softmax_rows(void *arg, int64_t lo, int64_t hi) {
    const rows_job *j = arg;
    j->k->softmax_f32(j->x + lo * j->len, j->y + lo * j->len, hi - lo, j->len, j->log);
}

static mopt_status softmax_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    const softmax_params *p = ctx->params;
    const ir_shape *x = &in[0].shape;
    int64_t axis = p->axis;
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank || op_numel(&in[0]) == 0) return MOPT_ERR_UNSUPPORTED;
    int64_t inner = ctx->opset >= 13 ? product(x, (int32_t)axis + 1, x->rank) : 1;
    if (inner > 1) {
        cols_job c = {.k = ctx->state, .x = in[0].data, .y = out[0].data, .log = p->log};
        c.len = x->dims[axis];
        c.inner = inner;
        c.chunks = (inner + CHUNK - 1) / CHUNK;
        int64_t tasks = product(x, 0, (int32_t)axis) * c.chunks;
        int64_t per = c.len * CHUNK;
        cpu_parallel_for(ctx->threads, tasks, per >= GRAIN ? 1 : GRAIN / per, softmax_cols, &c);
        return MOPT_OK;
    }
    rows_job j = {.k = ctx->state, .x = in[0].data, .y = out[0].data};
    j.len = product(x, (int32_t)axis, x->rank);
    j.log = p->log;
    cpu_parallel_for(ctx->threads, op_numel(&in[0]) / j.len, row_grain(j.len), softmax_rows, &j);
    return MOPT_OK;
}

OPS_CPU_IMPLS(softmax)

/* ---- LayerNormalization ------------------------------------------------- */

static bool layernorm_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                               const op_tensor *out, int n_out) {
    if (in[0].dtype != MOPT_DTYPE_F32 || in[1].dtype != MOPT_DTYPE_F32) return false;
    return !(op_has_input(in, n_in, 2) && in[2].dtype != MOPT_DTYPE_F32);
}

/* Longest row LayerNorm reads or writes in bf16 (converted per row through
 * stack buffers; op_impl.bf16_io says no beyond it). */
#define LN_BF16_MAX 4096

/* Row r of a u8 rows block from its f32 values y (cpu_rowq_from_f32's
 * bytes: the same quantization, its scale and zero point in the tail). */
static void quant_row(const rows_job *j, uint8_t *blk, const float *y, int64_t r) {
    float s;
    int32_t z;
    cpu_quant_rows_u8(y, 1, j->len, j->len, 255, j->avx512, blk + r * j->len, &s, &z);
    uint8_t *tail = blk + j->rows * j->len;
    memcpy(tail + r * (int64_t)sizeof s, &s, sizeof s);
    memcpy(tail + j->rows * (int64_t)sizeof s + r * (int64_t)sizeof z, &z, sizeof z);
}

static void layernorm_rows(void *arg, int64_t lo, int64_t hi) {
    const rows_job *j = arg;
    if (!j->x_bf16 && !j->y_bf16 && !j->q[0] && !j->q[1]) {
        j->k->layernorm_f32(j->x + lo * j->len, j->scale, j->bias, j->eps, j->y + lo * j->len,
                            j->mean ? j->mean + lo : NULL, j->inv_std ? j->inv_std + lo : NULL,
                            hi - lo, j->len);
        if (j->copy)
            memcpy(j->copy + lo * j->len, j->y + lo * j->len,
                   (size_t)((hi - lo) * j->len) * sizeof(float));
        return;
    }
    /* bf16 or u8 storage (accumulation in f32): row by row through f32
     * buffers, each row quantized while it is in L1 */
    float xb[LN_BF16_MAX], yb[LN_BF16_MAX];
    for (int64_t r = lo; r < hi; r++) {
        const float *x = j->x + r * j->len;
        float *y = j->y_bf16 || j->q[0] ? yb : j->y + r * j->len;
        if (j->x_bf16) {
            cpu_bf16_to_f32((const uint16_t *)j->x + r * j->len, xb, j->len);
            x = xb;
        }
        j->k->layernorm_f32(x, j->scale, j->bias, j->eps, y, j->mean ? j->mean + r : NULL,
                            j->inv_std ? j->inv_std + r : NULL, 1, j->len);
        if (j->y_bf16) cpu_f32_to_bf16(yb, (uint16_t *)j->y + r * j->len, j->len);
        for (int i = 0; i < 2; i++)
            if (j->q[i]) quant_row(j, j->q[i], y, r);
        if (j->copy) memcpy(j->copy + r * j->len, y, (size_t)j->len * sizeof(float));
    }
}

/* The normalized length of X, or -1 when not known. */
static int64_t layernorm_len(const op_ctx *ctx, const ir_shape *x) {
    int64_t axis = ((const layernorm_params *)ctx->params)->axis;
    if (x->rank < 0) return -1;
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank) return -1;
    int64_t len = 1;
    for (int32_t i = (int32_t)axis; i < x->rank; i++) {
        if (x->syms[i] != 0) return -1;
        len *= x->dims[i];
    }
    return len;
}

/* bf16 storage of X and Y (not Mean / InvStdDev), rows of known length up
 * to LN_BF16_MAX, where the conversions are vectorized */
static bool layernorm_bf16_io(const op_ctx *ctx, const op_tensor *in, int n_in, bool output,
                              int k) {
    int64_t len = layernorm_len(ctx, &in[0].shape);
    return k == 0 && ctx->precision == OP_PREC_BF16 && cpu_bf16cvt_fast() && len > 0 &&
           len <= LN_BF16_MAX;
}

/* precision=int8: Y (when every consumer is an int8 matmul) or
 * mopt.LayerNormalization's copy of Y kept as a u8 rows block, quantized per
 * row here (the rows of the last dim: X normalized along it alone, within
 * the stack buffers) */
static bool layernorm_u8_io(const op_ctx *ctx, const op_tensor *in, int n_in, bool output, int k) {
    const ir_shape *x = &in[0].shape;
    int64_t len = layernorm_len(ctx, x);
    return output && (k == 0 || k == LN_COPY_OUT) && ctx->precision == OP_PREC_INT8 && len > 0 &&
           len <= LN_BF16_MAX && x->syms[x->rank - 1] == 0 && x->dims[x->rank - 1] == len;
}

static mopt_status layernorm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const layernorm_params *p = ctx->params;
    const ir_shape *x = &in[0].shape;
    int64_t axis = p->axis;
    if (axis < 0) axis += x->rank;
    bool has_b = op_has_input(in, n_in, 2);
    int64_t len = axis >= 0 && axis < x->rank ? product(x, (int32_t)axis, x->rank) : 0;
    if (len == 0 || op_numel(&in[0]) == 0 || op_numel(&in[1]) != len ||
        (has_b && op_numel(&in[2]) != len))
        return MOPT_ERR_UNSUPPORTED;
    rows_job j = {.k = ctx->state, .x = in[0].data, .y = out[0].data, .len = len};
    j.x_bf16 = in[0].dtype == MOPT_DTYPE_BF16;
    j.y_bf16 = out[0].dtype == MOPT_DTYPE_BF16;
    j.rows = op_numel(&in[0]) / len;
    bool has_copy = n_out > LN_COPY_OUT && ctx->node->outputs[LN_COPY_OUT] >= 0;
    /* u8 rows blocks: [rows, len + CPU_ROWQ_EXTRA] bytes (the storage plan
     * keeps only those of rows of the last dim) */
    for (int i = 0; i < 2; i++) {
        const op_tensor *t = i == 0 ? &out[0] : has_copy ? &out[LN_COPY_OUT] : NULL;
        if (!t || t->dtype != MOPT_DTYPE_U8) continue;
        if (t->shape.rank < 1 || t->shape.dims[t->shape.rank - 1] != len + CPU_ROWQ_EXTRA)
            return MOPT_ERR_UNSUPPORTED;
        j.q[i] = t->data;
    }
    if (j.q[0]) j.y = NULL;
    if (has_copy && !j.q[1]) j.copy = out[LN_COPY_OUT].data;
    j.avx512 = cpu_kernels_for("avx512") != NULL;
    if ((j.x_bf16 || j.y_bf16 || j.q[0]) && len > LN_BF16_MAX) return MOPT_ERR_UNSUPPORTED;
    j.scale = in[1].data;
    j.bias = has_b ? in[2].data : NULL;
    j.eps = p->epsilon;
    j.mean = n_out > 1 && ctx->node->outputs[1] >= 0 ? out[1].data : NULL;
    j.inv_std = n_out > 2 && ctx->node->outputs[2] >= 0 ? out[2].data : NULL;
    cpu_parallel_for(ctx->threads, op_numel(&in[0]) / len, row_grain(len), layernorm_rows, &j);
    return MOPT_OK;
}

OPS_CPU_TIER_IO(layernorm, avx512, layernorm_bf16_io, layernorm_u8_io)
OPS_CPU_TIER_IO(layernorm, avx2, layernorm_bf16_io, layernorm_u8_io)
OPS_CPU_TIER_IO(layernorm, portable, layernorm_bf16_io, layernorm_u8_io)

/* ---- BatchNormalization (inference) --------------------------------------- */

typedef struct bn_job {
    const cpu_kernels *k;
    const float *x, *a, *b;
    float *y;
    int64_t C, inner;
} bn_job;

/* Rows [lo, hi) of the [N * C, inner] view. */
static void bn_rows(void *arg, int64_t lo, int64_t hi) {
    const bn_job *j = arg;
    for (int64_t r = lo; r < hi;) {
        int64_t c = r % j->C, n = j->C - c < hi - r ? j->C - c : hi - r;
        j->k->affine_f32(j->x + r * j->inner, j->a + c, j->b + c, j->y + r * j->inner, n, j->inner,
                         true);
        r += n;
    }
}

static bool batchnorm_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                               const op_tensor *out, int n_out) {
    const batchnorm_params *p = ctx->params;
    if (p->training || n_out > 1) return false;
    for (int k = 0; k < 5; k++)
        if (in[k].dtype != MOPT_DTYPE_F32) return false;
    return true;
}

static mopt_status batchnorm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const batchnorm_params *p = ctx->params;
    const ir_shape *x = &in[0].shape;
    if (x->rank < 2 || op_numel(&in[0]) == 0) return MOPT_ERR_UNSUPPORTED;
    const int64_t C = x->dims[1];
    for (int k = 1; k < 5; k++)
        if (op_numel(&in[k]) != C) return MOPT_ERR_UNSUPPORTED;
    float *ab = op_work_get(ctx, 0, (size_t)(2 * C) * sizeof(float));
    if (!ab) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the scale and shift");
    const float *scale = in[1].data, *bias = in[2].data, *mean = in[3].data, *var = in[4].data;
    /* as ref_batchnorm_f32: one scale and shift per channel */
    for (int64_t c = 0; c < C; c++) {
        ab[c] = scale[c] / sqrtf(var[c] + p->epsilon);
        ab[C + c] = bias[c] - mean[c] * ab[c];
    }
    bn_job j = {.k = ctx->state, .x = in[0].data, .a = ab, .b = ab + C, .y = out[0].data, .C = C};
    j.inner = product(x, 2, x->rank);
    cpu_parallel_for(ctx->threads, x->dims[0] * C, row_grain(j.inner), bn_rows, &j);
    op_work_put(ctx, ab);
    return MOPT_OK;
}

OPS_CPU_IMPLS(batchnorm)
