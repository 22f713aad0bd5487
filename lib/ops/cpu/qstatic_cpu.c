/*
 * qstatic_cpu.c — the "cpu" backend's static INT8 ops (mopt.StaticQMatMul,
 * mopt.StaticQConv; lib/ops/qstatic.h): the reference's run with the
 * AVX-512 quantizer (kernels/cpu/dynquant.h), the exact im2col + VNNI
 * integer convolution (kernels/cpu/qconv.h) and, for the product, the VNNI
 * rows kernel on W packed once at load, rows split over the threads.
 * One impl, "cpu-vnni"; prepare refuses machines without AVX512-VNNI
 * (they run the reference).
 */
#include <string.h>

#include "core/alloc.h"
#include "core/cpu.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/dynquant.h"
#include "kernels/cpu/qconv.h"
#include "ops/impls.h"
#include "ops/op_common.h"
#include "ops/qstatic.h"

typedef struct qs_state {
    int8_t *wp; /* StaticQMatMul: W packed for the rows kernel */
    int64_t K, N;
} qs_state;

static bool qs_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                        int n_out) {
    (void)ctx, (void)n_in, (void)out, (void)n_out;
    return in[1].dtype == MOPT_DTYPE_I8 && in[1].data != NULL;
}

static void qs_release(void *state) {
    qs_state *s = state;
    if (s) mopt_aligned_free(s->wp);
    mopt_free(s);
}

static mopt_status qs_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out, void **state) {
    (void)n_in, (void)out, (void)n_out;
    *state = NULL;
#if defined(__x86_64__)
    const cpu_features *f = cpu_get();
    if (!cpu_kernels_for("avx512") || !f->avx512_vnni) return MOPT_ERR_UNSUPPORTED;
    qs_state *s = mopt_calloc(1, sizeof *s);
    if (!s) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    if (strcmp(ctx->def->op_type, "StaticQMatMul") == 0) {
        s->K = in[1].shape.dims[0], s->N = in[1].shape.dims[1];
        s->wp = mopt_aligned_alloc(cpu_qrows_pack_bytes(s->K, s->N));
        int32_t *wsum = mopt_malloc((size_t)(s->N ? s->N : 1) * sizeof(int32_t));
        if (!s->wp || !wsum) {
            mopt_free(wsum);
            qs_release(s);
            return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the packed W");
        }
        cpu_qrows_pack(in[1].data, true, s->K, s->N, s->N, s->wp, wsum);
        mopt_free(wsum);
    }
    *state = s;
    return MOPT_OK;
#else
    (void)ctx, (void)in;
    return MOPT_ERR_UNSUPPORTED;
#endif
}

#if defined(__x86_64__)
static mopt_status vnni_conv(const op_ctx *ctx, const ref_conv_params *g, const ref_qconv_args *a,
                             int32_t *acc) {
    size_t bytes = cpu_qconv_work_bytes(g, ctx->threads);
    void *work = mopt_aligned_alloc(bytes);
    if (!work) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the integer convolution");
    cpu_qconv_s32(g, a, cpu_qgemm_u8s8_vnni, ctx->threads, work, acc);
    mopt_aligned_free(work);
    return MOPT_OK;
}

typedef struct rows_job {
    const uint8_t *a;
    int64_t K, N, ldy;
    const int8_t *wp;
    int32_t *y;
} rows_job;

static void rows_range(void *arg, int64_t lo, int64_t hi) {
    const rows_job *j = arg;
    cpu_qrows_u8s8_vnni(j->a + lo * j->K, j->K, hi - lo, j->K, j->wp, j->N, j->y + lo * j->ldy,
                        j->ldy);
}

static void vnni_rows(const op_ctx *ctx, const uint8_t *a, int64_t m, int64_t K, const int8_t *w,
                      int64_t N, int32_t *y, int64_t ldy) {
    (void)w;
    const qs_state *s = ctx->state;
    rows_job j = {a, K, N, ldy, s->wp, y};
    /* at least ~1 MFLOP per chunk */
    int64_t grain = 1 + (int64_t)(1 << 19) / (K * N > 0 ? K * N : 1);
    cpu_parallel_for(ctx->threads, m, grain < 4 ? 4 : grain, rows_range, &j);
}

static const qstatic_kernels k_vnni = {cpu_dyn_quantize_u8_avx512, vnni_conv, vnni_rows};
#endif

static mopt_status qs_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    (void)n_out;
#if defined(__x86_64__)
    const qs_state *s = ctx->state;
    if (strcmp(ctx->def->op_type, "StaticQMatMul") == 0 &&
        (!s || !s->wp || s->K != in[1].shape.dims[0] || s->N != in[1].shape.dims[1]))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "cpu: W was not packed");
    return ops_qstatic_run(ctx, in, n_in, out, &k_vnni);
#else
    (void)ctx, (void)in, (void)n_in, (void)out;
    return MOPT_ERR_UNSUPPORTED; /* prepare never takes it */
#endif
}

const op_impl ops_impl_cpu_qstatic_vnni = {.name = "cpu-vnni",
                                           .backend = "cpu",
                                           .supports = qs_supports,
                                           .prepare = qs_prepare,
                                           .release = qs_release,
                                           .run = qs_run};
