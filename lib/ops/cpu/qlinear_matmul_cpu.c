/*
 * qlinear_matmul_cpu.c — the "cpu" backend's QLinearMatMul (issue 13):
 * a constant 2-D s8 B (zero points 0; scale per tensor or per column, the
 * per-column form ORT's quantize_static writes with per_channel) packed
 * once at load for the VNNI rows kernel (kernels/cpu/qconv.h); A u8 (or s8,
 * made u8 as a + 128 with its zero point), rows split over the threads;
 * y = saturate(round_half_even((acc - za * sum_k b[k, n]) * (sa * sb[n] /
 * sy)) + zy), the multiplier formed in f32 as the reference does. Other
 * forms (a run-time or u8 B, nonzero B zero points) are declined: the
 * reference runs them. One impl, "cpu-vnni" (prepare refuses machines
 * without AVX512-VNNI).
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/qconv.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/impls.h"
#include "ops/op_common.h"

enum { QA, QA_SCALE, QA_ZP, QB, QB_SCALE, QB_ZP, QY_SCALE, QY_ZP };

static bool qlmm_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    (void)ctx, (void)n_in, (void)out, (void)n_out;
    const op_tensor *B = &in[QB];
    if (B->dtype != MOPT_DTYPE_I8 || !B->data || B->shape.rank != 2 ||
        !ir_shape_is_concrete(&B->shape))
        return false;
    if (!in[QB_SCALE].data) return false;
    int64_t ns = op_numel(&in[QB_SCALE]);
    if (ns != 1 && ns != B->shape.dims[1]) return false;
    if (op_has_input(in, n_in, QB_ZP)) {
        const op_tensor *z = &in[QB_ZP];
        if (!z->data || z->dtype != MOPT_DTYPE_I8) return false;
        for (int64_t i = 0; i < op_numel(z); i++)
            if (((const int8_t *)z->data)[i] != 0) return false;
    }
    return (in[QA].dtype == MOPT_DTYPE_U8 || in[QA].dtype == MOPT_DTYPE_I8) &&
           (out[0].dtype == MOPT_DTYPE_U8 || out[0].dtype == MOPT_DTYPE_I8);
}

mopt_status ops_cpu_qrows_pack(const op_ctx *ctx, const op_tensor *w, bool with_sums,
                               ops_cpu_qrows *q) {
    q->K = w->shape.dims[0], q->N = w->shape.dims[1];
    q->wp = mopt_aligned_alloc(cpu_qrows_pack_bytes(q->K, q->N));
    int32_t *sums = mopt_malloc((size_t)(q->N ? q->N : 1) * sizeof(int32_t));
    if (!q->wp || !sums) {
        mopt_free(sums);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the packed weights");
    }
    cpu_qrows_pack(w->data, true, q->K, q->N, q->N, q->wp, sums);
    if (with_sums)
        q->wsum = sums;
    else
        mopt_free(sums);
    return MOPT_OK;
}

void ops_cpu_qrows_free(ops_cpu_qrows *q) {
    mopt_aligned_free(q->wp);
    mopt_free(q->wsum);
    memset(q, 0, sizeof *q);
}

#if defined(__x86_64__)
void ops_cpu_qrows_range(void *job, int64_t lo, int64_t hi) {
    const ops_cpu_qrows_job *j = job;
    const ops_cpu_qrows *w = j->w;
    cpu_qrows_u8s8_vnni(j->a + lo * w->K, w->K, hi - lo, w->K, w->wp, w->N, j->acc + lo * j->ldy,
                        j->ldy);
}
#endif

int64_t ops_cpu_qrows_grain(int64_t K, int64_t N) {
    int64_t grain = 1 + (int64_t)(1 << 19) / (K * N > 0 ? K * N : 1);
    return grain < 4 ? 4 : grain;
}

static void qlmm_release(void *state) {
    if (state) ops_cpu_qrows_free(state);
    mopt_free(state);
}

static mopt_status qlmm_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                const op_tensor *out, int n_out, void **state) {
    (void)n_in, (void)out, (void)n_out;
    *state = NULL;
    if (!ops_cpu_has_vnni()) return MOPT_ERR_UNSUPPORTED;
    ops_cpu_qrows *s = mopt_calloc(1, sizeof *s);
    if (!s) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    mopt_status st = ops_cpu_qrows_pack(ctx, &in[QB], true, s);
    if (st) {
        qlmm_release(s);
        return st;
    }
    *state = s;
    return MOPT_OK;
}

#if defined(__x86_64__)
typedef struct qlmm_job {
    ops_cpu_qrows_job rows; /* acc [m, ldy] = A (u8 rows [m, K]) x B */
    int32_t za;             /* as u8 */
    const float *mult;
    int32_t zy;
    bool y_s8;
    void *y;
} qlmm_job;

static void qlmm_range(void *arg, int64_t lo, int64_t hi) {
    qlmm_job *j = arg;
    const ops_cpu_qrows *s = j->rows.w;
    ops_cpu_qrows_range(&j->rows, lo, hi);
    float lo_y = j->y_s8 ? -128.f : 0.f, hi_y = j->y_s8 ? 127.f : 255.f;
    for (int64_t r = lo; r < hi; r++) {
        const int32_t *ar = j->rows.acc + r * j->rows.ldy;
        for (int64_t n = 0; n < s->N; n++) {
            float v = nearbyintf((float)(ar[n] - j->za * s->wsum[n]) * j->mult[n]) + (float)j->zy;
            v = fminf(fmaxf(v, lo_y), hi_y);
            if (j->y_s8)
                ((int8_t *)j->y)[r * s->N + n] = (int8_t)v;
            else
                ((uint8_t *)j->y)[r * s->N + n] = (uint8_t)v;
        }
    }
}
#endif

static int32_t zp_of(const op_tensor *in, int n_in, int k) {
    if (!op_has_input(in, n_in, k)) return 0;
    return in[k].dtype == MOPT_DTYPE_I8 ? *(const int8_t *)in[k].data
                                        : *(const uint8_t *)in[k].data;
}

static mopt_status qlmm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    (void)n_out;
#if defined(__x86_64__)
    const ops_cpu_qrows *s = ctx->state;
    const op_tensor *A = &in[QA];
    if (!s || A->shape.rank < 2 || A->shape.dims[A->shape.rank - 1] != s->K ||
        op_numel(&in[QA_SCALE]) != 1 || op_numel(&in[QY_SCALE]) != 1 ||
        (op_has_input(in, n_in, QA_ZP) && op_numel(&in[QA_ZP]) != 1) ||
        (op_has_input(in, n_in, QY_ZP) && op_numel(&in[QY_ZP]) != 1))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "cpu: per-row A or per-tensor-only forms");
    int64_t m = op_numel(A) / s->K, ldy = (s->N + 15) / 16 * 16;
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    bool a_s8 = A->dtype == MOPT_DTYPE_I8;
    uint8_t *au = NULL;
    int32_t *acc = op_work_get(ctx, 0, (size_t)(m * ldy) * sizeof(int32_t));
    float *mult = op_work_get(ctx, 1, (size_t)s->N * sizeof(float));
    if (a_s8) au = op_work_get(ctx, 2, (size_t)(m * s->K));
    if (!acc || !mult || (a_s8 && !au)) {
        op_work_put(ctx, acc), op_work_put(ctx, mult), op_work_put(ctx, au);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for QLinearMatMul");
    }
    if (a_s8)
        for (int64_t i = 0; i < m * s->K; i++)
            au[i] = (uint8_t)(((const int8_t *)A->data)[i] + 128);
    const float sa = *(const float *)in[QA_SCALE].data, sy = *(const float *)in[QY_SCALE].data;
    const float *sb = in[QB_SCALE].data;
    bool per_col = op_numel(&in[QB_SCALE]) > 1;
    for (int64_t n = 0; n < s->N; n++)
        mult[n] = sa * sb[per_col ? n : 0] / sy;
    qlmm_job j = {.rows = {s, a_s8 ? au : A->data, acc, ldy},
                  .za = zp_of(in, n_in, QA_ZP) + (a_s8 ? 128 : 0),
                  .mult = mult,
                  .zy = zp_of(in, n_in, QY_ZP),
                  .y_s8 = out[0].dtype == MOPT_DTYPE_I8,
                  .y = out[0].data};
    cpu_parallel_for(ctx->threads, m, ops_cpu_qrows_grain(s->K, s->N), qlmm_range, &j);
    op_work_put(ctx, acc), op_work_put(ctx, mult), op_work_put(ctx, au);
    return MOPT_OK;
#else
    (void)ctx, (void)in, (void)n_in, (void)out;
    return MOPT_ERR_UNSUPPORTED; /* prepare never takes it */
#endif
}

const op_impl ops_impl_cpu_qlinear_matmul_vnni =
    OPS_CPU_STATE_IMPL("cpu-vnni", qlmm_supports, qlmm_prepare, qlmm_release, qlmm_run, NULL);
