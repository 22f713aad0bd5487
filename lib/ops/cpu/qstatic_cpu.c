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
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/dynquant.h"
#include "kernels/cpu/qconv.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/impls.h"
#include "ops/op_common.h"
#include "ops/qstatic.h"

typedef struct qs_state {
    ops_cpu_qrows rows; /* StaticQMatMul: W packed for the rows kernel */
    void *wpack;        /* StaticQConv: W packed for the integer convolution */
    ref_conv_params wg; /* the geometry it was packed for (c_out, group, window) */
} qs_state;

static bool qs_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                        int n_out) {
    (void)ctx, (void)n_in, (void)out, (void)n_out;
    return in[1].dtype == MOPT_DTYPE_I8 && in[1].data != NULL;
}

static void qs_release(void *state) {
    qs_state *s = state;
    if (s) {
        ops_cpu_qrows_free(&s->rows);
        mopt_aligned_free(s->wpack);
    }
    mopt_free(s);
}

/* StaticQConv: W [c_out, c_in / group, k...] packed once (the x zero
 * point is a constant of the node). OUT_OF_MEMORY (reported) or OK. */
static mopt_status conv_pack(const op_ctx *ctx, const op_tensor *w, qs_state *s) {
    const qstatic_params *p = ctx->params;
    const ir_shape *ws = &w->shape;
    ref_conv_params *g = &s->wg;
    memset(g, 0, sizeof *g);
    g->batch = 1, g->group = p->conv.group, g->c_out = ws->dims[0];
    g->c_in = ws->dims[1] * p->conv.group;
    for (int d = 0; d < REF_WIN_MAX; d++) {
        int32_t a = ws->rank - REF_WIN_MAX + d; /* leading window axes are 1 */
        g->k[d] = a >= 2 ? ws->dims[a] : 1;
        g->in[d] = g->out[d] = g->stride[d] = g->dilation[d] = 1;
    }
    int32_t zero = 0;
    ref_qconv_args a = {.x_zp = p->x_zp, .w = w->data, .w_s8 = true, .w_zp = &zero};
    s->wpack = mopt_aligned_alloc(cpu_qconv_wpack_bytes(g));
    if (!s->wpack) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the packed weights");
    cpu_qconv_pack_w(g, &a, s->wpack);
    return MOPT_OK;
}

static mopt_status qs_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out, void **state) {
    (void)n_in, (void)out, (void)n_out;
    *state = NULL;
    if (!ops_cpu_has_vnni()) return MOPT_ERR_UNSUPPORTED;
    qs_state *s = mopt_calloc(1, sizeof *s);
    if (!s) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    mopt_status st = ((const qstatic_params *)ctx->params)->is_conv
                         ? conv_pack(ctx, &in[1], s)
                         : ops_cpu_qrows_pack(ctx, &in[1], false, &s->rows);
    if (st) {
        qs_release(s);
        return st;
    }
    *state = s;
    return MOPT_OK;
}

#if defined(__x86_64__)
static mopt_status vnni_conv(const op_ctx *ctx, const ref_conv_params *g, const ref_qconv_args *a,
                             int32_t *acc) {
    const qs_state *s = ctx->state;
    const ref_conv_params *w = &s->wg;
    bool packed = s->wpack && w->c_out == g->c_out && w->c_in == g->c_in && w->group == g->group;
    for (int d = 0; packed && d < REF_WIN_MAX; d++)
        packed = w->k[d] == g->k[d];
    if (!packed) return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "cpu: W was not packed for this shape");
    void *work = op_work_get(ctx, OPS_QCONV_WORK, cpu_qconv_slots_bytes(g, ctx->threads));
    if (!work) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the integer convolution");
    cpu_qconv_s32_wpacked(g, a, s->wpack, cpu_qgemm_u8s8_vnni, ctx->threads, work, acc);
    op_work_put(ctx, work);
    return MOPT_OK;
}

static void vnni_rows(const op_ctx *ctx, const uint8_t *a, int64_t m, int64_t K, const int8_t *w,
                      int64_t N, int32_t *y, int64_t ldy) {
    (void)w;
    const qs_state *s = ctx->state;
    ops_cpu_qrows_job j = {&s->rows, a, y, ldy};
    cpu_parallel_for(ctx->threads, m, ops_cpu_qrows_grain(K, N), ops_cpu_qrows_range, &j);
}

static void avx512_act(float *y, int64_t n, const kn_act_params *act) {
    const cpu_unary_params up = {act->alpha, act->beta};
    cpu_kernels_for("avx512")->unary_f32((cpu_unop)act->act, y, y, n, &up);
}

static const qstatic_kernels k_vnni = {cpu_dyn_quantize_u8_avx512, vnni_conv, vnni_rows,
                                       avx512_act};
#endif

static mopt_status qs_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    (void)n_out;
#if defined(__x86_64__)
    const qs_state *s = ctx->state;
    if (!((const qstatic_params *)ctx->params)->is_conv &&
        (!s || !s->rows.wp || s->rows.K != in[1].shape.dims[0] || s->rows.N != in[1].shape.dims[1]))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "cpu: W was not packed");
    return ops_qstatic_run(ctx, in, n_in, out, &k_vnni);
#else
    (void)ctx, (void)in, (void)n_in, (void)out;
    return MOPT_ERR_UNSUPPORTED; /* prepare never takes it */
#endif
}

const op_impl ops_impl_cpu_qstatic_vnni =
    OPS_CPU_STATE_IMPL("cpu-vnni", qs_supports, qs_prepare, qs_release, qs_run, NULL);
