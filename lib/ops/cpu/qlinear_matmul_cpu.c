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
#include "core/cpu.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/qconv.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/impls.h"
#include "ops/op_common.h"

enum { QA, QA_SCALE, QA_ZP, QB, QB_SCALE, QB_ZP, QY_SCALE, QY_ZP };

typedef struct qlmm_state {
    int8_t *wp;
    int32_t *wsum;
    int64_t K, N;
} qlmm_state;

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

static void qlmm_release(void *state) {
    qlmm_state *s = state;
    if (s) {
        mopt_aligned_free(s->wp);
        mopt_free(s->wsum);
    }
    mopt_free(s);
}

bool ops_cpu_qrows_pack(const op_tensor *w, int64_t *K, int64_t *N, int8_t **wp, int32_t **wsum) {
    *K = w->shape.dims[0], *N = w->shape.dims[1];
    *wp = mopt_aligned_alloc(cpu_qrows_pack_bytes(*K, *N));
    int32_t *sums = mopt_malloc((size_t)(*N ? *N : 1) * sizeof(int32_t));
    if (!*wp || !sums) {
        mopt_free(sums);
        return false;
    }
    cpu_qrows_pack(w->data, true, *K, *N, *N, *wp, sums);
    if (wsum)
        *wsum = sums;
    else
        mopt_free(sums);
    return true;
}

int64_t ops_cpu_qrows_grain(int64_t K, int64_t N) {
    int64_t grain = 1 + (int64_t)(1 << 19) / (K * N > 0 ? K * N : 1);
    return grain < 4 ? 4 : grain;
}

static mopt_status qlmm_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                const op_tensor *out, int n_out, void **state) {
    (void)n_in, (void)out, (void)n_out;
    *state = NULL;
#if defined(__x86_64__)
    if (!cpu_kernels_for("avx512") || !cpu_get()->avx512_vnni) return MOPT_ERR_UNSUPPORTED;
    qlmm_state *s = mopt_calloc(1, sizeof *s);
    if (!s) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    if (!ops_cpu_qrows_pack(&in[QB], &s->K, &s->N, &s->wp, &s->wsum)) {
        qlmm_release(s);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the packed B");
    }
    *state = s;
    return MOPT_OK;
#else
    (void)ctx, (void)in;
    return MOPT_ERR_UNSUPPORTED;
#endif
}

#if defined(__x86_64__)
typedef struct qlmm_job {
    const qlmm_state *s;
    const uint8_t *a; /* u8 rows [m, K] */
    int32_t za;       /* as u8 */
    const float *mult;
    int32_t zy;
    bool y_s8;
    void *y;
    int32_t *acc; /* [m, ldy] */
    int64_t ldy;
} qlmm_job;

static void qlmm_range(void *arg, int64_t lo, int64_t hi) {
    const qlmm_job *j = arg;
    const qlmm_state *s = j->s;
    int32_t *acc = j->acc + lo * j->ldy;
    cpu_qrows_u8s8_vnni(j->a + lo * s->K, s->K, hi - lo, s->K, s->wp, s->N, acc, j->ldy);
    float lo_y = j->y_s8 ? -128.f : 0.f, hi_y = j->y_s8 ? 127.f : 255.f;
    for (int64_t r = lo; r < hi; r++) {
        const int32_t *ar = j->acc + r * j->ldy;
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
    const qlmm_state *s = ctx->state;
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
    int32_t *acc = mopt_aligned_alloc((size_t)(m * ldy) * sizeof(int32_t));
    float *mult = mopt_malloc((size_t)s->N * sizeof(float));
    if (a_s8) au = mopt_aligned_alloc((size_t)(m * s->K));
    if (!acc || !mult || (a_s8 && !au)) {
        mopt_aligned_free(acc), mopt_free(mult), mopt_aligned_free(au);
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
    qlmm_job j = {.s = s,
                  .a = a_s8 ? au : A->data,
                  .za = zp_of(in, n_in, QA_ZP) + (a_s8 ? 128 : 0),
                  .mult = mult,
                  .zy = zp_of(in, n_in, QY_ZP),
                  .y_s8 = out[0].dtype == MOPT_DTYPE_I8,
                  .y = out[0].data,
                  .acc = acc,
                  .ldy = ldy};
    cpu_parallel_for(ctx->threads, m, ops_cpu_qrows_grain(s->K, s->N), qlmm_range, &j);
    mopt_aligned_free(acc), mopt_free(mult), mopt_aligned_free(au);
    return MOPT_OK;
#else
    (void)ctx, (void)in, (void)n_in, (void)out;
    return MOPT_ERR_UNSUPPORTED; /* prepare never takes it */
#endif
}

const op_impl ops_impl_cpu_qlinear_matmul_vnni =
    OPS_CPU_STATE_IMPL("cpu-vnni", qlmm_supports, qlmm_prepare, qlmm_release, qlmm_run, NULL);
