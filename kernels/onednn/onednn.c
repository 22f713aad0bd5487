/*
 * onednn.c — the oneDNN backend's C layer (see onednn.h): memory
 * descriptors for our plain f32 tensors, post-op chains for the fused
 * epilogues, one-time weight reorders, and a small per-session cache of
 * primitives keyed by the run-time problem (each entry owns its memory
 * objects, user-mode scratchpad and activation reorders).
 *
 * Thread safety: the CPU engine is process-wide (created once, safe to share
 * for primitive creation); each session has its own stream and primitives,
 * and every primitive uses its own scratchpad, so sessions may run
 * concurrently.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>

#include "core/alloc.h"
#include "core/cpu.h"
#include "core/error.h"
#include "core/log.h"
#include "kernels/cpu/bf16cvt.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/rowquant.h"
#include "kernels/limits.h"
#include "kernels/omp_threads.h"
#include "kernels/onednn/onednn.h"
#include "kernels/onednn/onednn_priv.h"

#define CACHE_SIZE 16

/* ---- engine ------------------------------------------------------------- */

static dnnl_engine_t g_engine;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static char g_version[32];
static bool g_verbose;     /* MOPT_VERBOSE set: print oneDNN's choice per primitive */
static bool g_fail_on_ref; /* MOPT_FAIL_ON_REF=1: a reference implementation is an error */
/* INT8 matmul: bytes of f32 Y per block of rows run as one product and its
 * epilogue while the block is in L2 (per thread; MOPT_INT8_ROW_BLOCK=KiB
 * changes it, 0 runs the whole product, then the epilogue) */
static int64_t g_int8_block_bytes = 256 << 10;

static void engine_init(void) {
    const char *verbose = getenv("MOPT_VERBOSE");
    g_verbose = verbose && *verbose && strcmp(verbose, "0") != 0;
    const char *fail = getenv("MOPT_FAIL_ON_REF");
    g_fail_on_ref = fail && strcmp(fail, "1") == 0;
    const char *blk = getenv("MOPT_INT8_ROW_BLOCK");
    if (blk && *blk) g_int8_block_bytes = (int64_t)strtol(blk, NULL, 10) << 10;
    if (!dnnl_engine_create || !dnnl_version) return;
    if (dnnl_engine_create(&g_engine, dnnl_cpu, 0) != dnnl_success) {
        g_engine = NULL;
        return;
    }
    const dnnl_version_t *v = dnnl_version();
    snprintf(g_version, sizeof g_version, "oneDNN %d.%d.%d", v->major, v->minor, v->patch);
}

void onednn_set_int8_block_bytes(int64_t bytes) {
    pthread_once(&g_once, engine_init); /* so that the environment does not override it later */
    g_int8_block_bytes = bytes;
}

bool onednn_available(void) {
    pthread_once(&g_once, engine_init);
    return g_engine != NULL;
}

const char *onednn_version(void) { return onednn_available() ? g_version : ""; }

void onednn_td_dense(onednn_td *t, int32_t ndims, const int64_t *dims) {
    t->ndims = ndims;
    int64_t s = 1;
    for (int32_t i = ndims - 1; i >= 0; i--) {
        t->dims[i] = dims[i];
        t->strides[i] = s;
        s *= dims[i] > 0 ? dims[i] : 1;
    }
}

/* One operand of g: its batch dims (1 where it broadcasts), then its stored
 * rows x cols with row stride ld, swapped to the logical order when trans. */
static void operand_td(const kn_gemm *g, const int64_t *bs, int64_t rows, int64_t cols, int64_t ld,
                       bool trans, onednn_td *t) {
    int32_t r = g->batch_rank + 2;
    int64_t dims[ONEDNN_MAX_DIMS];
    for (int32_t i = 0; i < g->batch_rank; i++)
        dims[i] = bs[i] != 0 ? g->batch[i] : 1;
    dims[r - 2] = rows;
    dims[r - 1] = cols;
    onednn_td_dense(t, r, dims);
    /* the given strides where they matter (axes longer than 1) */
    if (rows > 1) t->strides[r - 2] = ld;
    for (int32_t i = 0; i < g->batch_rank; i++)
        if (dims[i] > 1) t->strides[i] = bs[i];
    if (trans) {
        int64_t d = t->dims[r - 2], st = t->strides[r - 2];
        t->dims[r - 2] = t->dims[r - 1];
        t->strides[r - 2] = t->strides[r - 1];
        t->dims[r - 1] = d;
        t->strides[r - 1] = st;
    }
}

bool onednn_matmul_geometry(const kn_gemm *g, onednn_matmul_desc *d) {
    if (g->batch_rank < 0 || g->batch_rank > ONEDNN_MAX_DIMS - 2) return false;
    operand_td(g, g->a_bs, g->trans_a ? g->K : g->M, g->trans_a ? g->M : g->K, g->lda, g->trans_a,
               &d->a);
    operand_td(g, g->b_bs, g->trans_b ? g->N : g->K, g->trans_b ? g->K : g->N, g->ldb, g->trans_b,
               &d->b);
    operand_td(g, g->c_bs, g->M, g->N, g->ldc, false, &d->y);
    d->alpha = g->alpha;
    return true;
}

/* ---- descriptors and attributes ----------------------------------------- */

static dnnl_data_type_t dt_of(onednn_prec p) {
    return p == ONEDNN_BF16 ? dnnl_bf16 : p == ONEDNN_INT8 ? dnnl_s8 : dnnl_f32;
}

static bool md_strided(dnnl_memory_desc_t *md, const onednn_td *t, dnnl_data_type_t dt) {
    dnnl_dims_t dims, strides;
    for (int32_t i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        strides[i] = t->strides[i];
    }
    return dnnl_memory_desc_init_by_strides(md, t->ndims, dims, dt, strides) == dnnl_success;
}

static bool md_dense(dnnl_memory_desc_t *md, int32_t ndims, const int64_t *dims,
                     dnnl_data_type_t dt) {
    onednn_td t;
    onednn_td_dense(&t, ndims, dims);
    return md_strided(md, &t, dt);
}

/* Channels-last f32/bf16 layout of logical [N, C, spatial...] dims. */
static bool md_nhwc(dnnl_memory_desc_t *md, int32_t ndims, const int64_t *dims,
                    dnnl_data_type_t dt) {
    onednn_td t;
    t.ndims = ndims;
    int64_t s = dims[1];
    for (int32_t i = ndims - 1; i >= 2; i--) {
        t.dims[i] = dims[i];
        t.strides[i] = s;
        s *= dims[i];
    }
    t.dims[0] = dims[0];
    t.strides[0] = s;
    t.dims[1] = dims[1];
    t.strides[1] = 1;
    return md_strided(md, &t, dt);
}

/* oneDNN's blocked f32/bf16 layout nC[d|h]w16c of logical [N, C, spatial...]
 * dims, C a multiple of 16 (no padding; onednn_conv_desc.x_blk). */
static bool md_blk16(dnnl_memory_desc_t *md, int32_t ndims, const int64_t *dims,
                     dnnl_data_type_t dt) {
    if (ndims < 3 || ndims > 5 || dims[1] % 16) return false;
    dnnl_dims_t d;
    for (int32_t i = 0; i < ndims; i++)
        d[i] = dims[i];
    dnnl_format_tag_t tag = ndims == 3 ? dnnl_nCw16c : ndims == 4 ? dnnl_nChw16c : dnnl_nCdhw16c;
    return dnnl_memory_desc_init_by_tag(md, ndims, d, dt, tag) == dnnl_success;
}

/* The layout a conv's X or Y has in memory: blocked, channels-last or plain. */
static bool md_user(dnnl_memory_desc_t *md, int32_t ndims, const int64_t *dims, dnnl_data_type_t dt,
                    bool nhwc, bool blk) {
    return blk    ? md_blk16(md, ndims, dims, dt)
           : nhwc ? md_nhwc(md, ndims, dims, dt)
                  : md_dense(md, ndims, dims, dt);
}

static bool md_any(dnnl_memory_desc_t *md, int32_t ndims, const int64_t *dims,
                   dnnl_data_type_t dt) {
    dnnl_dims_t d;
    for (int32_t i = 0; i < ndims; i++)
        d[i] = dims[i];
    return dnnl_memory_desc_init_by_tag(md, ndims, d, dt, dnnl_format_tag_any) == dnnl_success;
}

static bool append_act(dnnl_post_ops_t po, kn_act act, float alpha, float beta) {
    dnnl_status_t s = dnnl_success;
    switch (act) {
    case KN_ACT_NONE: break;
    case KN_ACT_RELU: s = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_relu, 0, 0); break;
    case KN_ACT_LEAKY_RELU:
        s = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_relu, alpha, 0);
        break;
    case KN_ACT_CLIP:
        s = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_clip_v2, alpha, beta);
        break;
    case KN_ACT_HARD_SWISH:
        s = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_hardswish, 1.f / 6.f, 0.5f);
        break;
    case KN_ACT_HARD_SIGMOID:
        s = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_linear, alpha, beta);
        if (s == dnnl_success)
            s = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_clip_v2, 0.f, 1.f);
        break;
    case KN_ACT_SIGMOID:
        s = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_logistic, 0, 0);
        break;
    case KN_ACT_TANH: s = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_tanh, 0, 0); break;
    case KN_ACT_SWISH: s = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_swish, 1.f, 0); break;
    case KN_ACT_GELU: s = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_gelu_erf, 0, 0); break;
    case KN_ACT_GELU_TANH:
        s = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_gelu_tanh, 0, 0);
        break;
    default: return false;
    }
    return s == dnnl_success;
}

/* Whether d's post affine goes into the primitive's post-ops: not after a
 * HardSigmoid, itself a linear then a clip: oneDNN 2.6's bf16 brgconv then
 * applies the first linear's alpha and beta to the second (PP-OCRv4 det in
 * bf16: cosine 0.2); the post affine then runs on Y after the primitive. */
static bool post_in_prim(const onednn_conv_desc *d) {
    return d->has_post && d->act != KN_ACT_HARD_SIGMOID;
}

/* Attributes: user scratchpad, output scale alpha, then post-ops in order
 * [sum(sum_scale)] [binary add(bin_md)] [binary add(bin2_md)] [activation]
 * [linear post[0] * y + post[1] (post not NULL)]. */
/* The end of building attr: po set as its post-ops (when ok so far) and
 * destroyed; attr, or NULL (attr destroyed) when a step failed. */
static dnnl_primitive_attr_t attr_done(dnnl_primitive_attr_t attr, dnnl_post_ops_t po, bool ok) {
    if (ok) ok = dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
    if (po) dnnl_post_ops_destroy(po);
    if (!ok) {
        dnnl_primitive_attr_destroy(attr);
        return NULL;
    }
    return attr;
}

static dnnl_primitive_attr_t make_attr(float alpha, int64_t n_scales, const float *scales,
                                       int scale_mask, float sum_scale,
                                       const dnnl_memory_desc_t *bin_md,
                                       const dnnl_memory_desc_t *bin2_md, kn_act act,
                                       float act_alpha, float act_beta, const float *post) {
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success) return NULL;
    bool ok =
        dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success;
    if (ok && scales) {
        ok = dnnl_primitive_attr_set_output_scales(attr, n_scales, scale_mask, scales) ==
             dnnl_success;
    } else if (ok && alpha != 1.f) {
        ok = dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha) == dnnl_success;
    }
    if (ok) ok = dnnl_post_ops_create(&po) == dnnl_success;
    if (ok && sum_scale != 0.f) ok = dnnl_post_ops_append_sum(po, sum_scale) == dnnl_success;
    if (ok && bin_md) ok = dnnl_post_ops_append_binary(po, dnnl_binary_add, bin_md) == dnnl_success;
    if (ok && bin2_md)
        ok = dnnl_post_ops_append_binary(po, dnnl_binary_add, bin2_md) == dnnl_success;
    if (ok) ok = append_act(po, act, act_alpha, act_beta);
    if (ok && post)
        ok = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_linear, post[0], post[1]) ==
             dnnl_success;
    return attr_done(attr, po, ok);
}

/* ---- the one door to oneDNN: sizes checked (issue 17) -------------------- */

static bool md_fits(const dnnl_memory_desc_t *md, const char *what, char *why, size_t n) {
    if (md->ndims == 0) return true; /* absent (no bias) */
    char sub[160];
    if (kn_limits_tensor(md->ndims, md->dims, NULL, sub, sizeof sub)) return true;
    snprintf(why, n, "%s: %s", what, sub);
    return false;
}

/* Window of a convolution/deconvolution (kernel sizes from its weights) or
 * a pooling; oneDNN's dilations count from 0. */
static bool window_fits(const dnnl_memory_desc_t *src, const int64_t *k, const int64_t *strides,
                        const int64_t *dil0, const dnnl_dims_t pad[2], char *why, size_t n) {
    int32_t S = src->ndims - 2;
    if (S < 1 || S > 3) return true; /* oneDNN refuses these itself */
    int64_t dil[3];
    for (int32_t i = 0; i < S; i++)
        dil[i] = dil0 ? (dil0[i] >= 0 && dil0[i] < KN_LIMIT - 1 ? dil0[i] + 1 : -1) : 1;
    char sub[160];
    if (kn_limits_window(S, src->dims + 2, k, strides, dil, pad[0], pad[1], sub, sizeof sub))
        return true;
    snprintf(why, n, "window: %s", sub);
    return false;
}

bool onednn_desc_fits(const void *op_desc, char *why, size_t n) {
    char dummy[8];
    if (!why) {
        why = dummy;
        n = sizeof dummy;
    }
    why[0] = '\0';
    dnnl_primitive_kind_t kind = *(const dnnl_primitive_kind_t *)op_desc;
    switch (kind) {
    case dnnl_convolution:
    case dnnl_deconvolution: {
        const dnnl_convolution_desc_t *c = op_desc;
        const dnnl_memory_desc_t *w = &c->weights_desc;
        int32_t S = c->src_desc.ndims - 2;
        if (!md_fits(&c->src_desc, "source", why, n) || !md_fits(w, "weights", why, n) ||
            !md_fits(&c->bias_desc, "bias", why, n) ||
            !md_fits(&c->dst_desc, "destination", why, n))
            return false;
        if (S < 1 || S > 3 || w->ndims < S) return true;
        if (kind == dnnl_deconvolution) {
            /* the convolution it is the backward of runs its window over the
             * destination: each pad is bounded by the span the source
             * covers there ((in - 1) * stride + extent; dims are < 2^31
             * here, so this cannot overflow); output_padding or
             * output_shape make an end pad negative, bounded the same way */
            for (int32_t s = 0; s < 2; s++)
                for (int32_t i = 0; i < S; i++) {
                    int64_t p = c->padding[s][i], in = c->src_desc.dims[2 + i];
                    int64_t k = w->dims[w->ndims - S + i], st = c->strides[i];
                    int64_t dl = c->dilates[i];
                    if (st < 1 || st >= KN_LIMIT || dl < 0 || dl >= KN_LIMIT || in < 1) {
                        snprintf(why, n, "window: axis %d: stride %lld, dilation %lld", (int)i,
                                 (long long)st, (long long)dl);
                        return false;
                    }
                    int64_t span = (in - 1) * st + (k - 1) * (dl + 1) + 1;
                    if (p > span || -p > span + c->dst_desc.dims[2 + i]) {
                        snprintf(why, n, "window: axis %d: pad %lld for a span of %lld", (int)i,
                                 (long long)p, (long long)span);
                        return false;
                    }
                }
            return true;
        }
        return window_fits(&c->src_desc, w->dims + (w->ndims - S), c->strides, c->dilates,
                           c->padding, why, n);
    }
    case dnnl_pooling:
    case dnnl_pooling_v2: {
        const dnnl_pooling_v2_desc_t *p = op_desc; /* pooling_desc_t is its prefix */
        if (!md_fits(&p->src_desc, "source", why, n) ||
            !md_fits(&p->dst_desc, "destination", why, n))
            return false;
        return window_fits(&p->src_desc, p->kernel, p->strides,
                           kind == dnnl_pooling_v2 ? p->dilation : NULL, p->padding, why, n);
    }
    case dnnl_matmul: {
        const dnnl_matmul_desc_t *m = op_desc;
        return md_fits(&m->src_desc, "source", why, n) &&
               md_fits(&m->weights_desc, "weights", why, n) &&
               md_fits(&m->bias_desc, "bias", why, n) &&
               md_fits(&m->dst_desc, "destination", why, n);
    }
    default: return true; /* kinds we do not create */
    }
}

/* Every primitive descriptor is made here, after onednn_desc_fits: NULL
 * (with the reason as the thread's error, status UNSUPPORTED) when the
 * problem is outside the sizes oneDNN is trusted with or oneDNN refuses it. */
static dnnl_primitive_desc_t pd_create(const void *op_desc, const_dnnl_primitive_attr_t attr) {
    char why[256];
    if (!onednn_desc_fits(op_desc, why, sizeof why)) {
        mopt_fail(MOPT_ERR_UNSUPPORTED, "oneDNN declined: %s (backend size limits)", why);
        if (g_verbose)
            mopt_log(MOPT_LOG_INFO, "mopt: oneDNN declined: %s (backend size limits)", why);
        return NULL;
    }
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_primitive_desc_create(&pd, op_desc, attr, g_engine, NULL) != dnnl_success) pd = NULL;
    return pd;
}

/* pd_create with attr, which it then destroys; NULL when attr is NULL (a
 * failed make_attr). */
static dnnl_primitive_desc_t pd_of(const void *op_desc, dnnl_primitive_attr_t attr) {
    if (!attr) return NULL;
    dnnl_primitive_desc_t pd = pd_create(op_desc, attr);
    dnnl_primitive_attr_destroy(attr);
    return pd;
}

static const char *pd_impl(dnnl_primitive_desc_t pd);

/* The first implementation of op_desc whose name starts with `want`, in
 * oneDNN's order, instead of pd (kept when there is none). */
static dnnl_primitive_desc_t pd_prefer(dnnl_primitive_desc_t pd, const void *op_desc,
                                       const_dnnl_primitive_attr_t attr, const char *want) {
    dnnl_primitive_desc_iterator_t it = NULL;
    if (!dnnl_primitive_desc_iterator_create ||
        dnnl_primitive_desc_iterator_create(&it, op_desc, attr, g_engine, NULL) != dnnl_success)
        return pd;
    while (dnnl_primitive_desc_iterator_next(it) == dnnl_success) {
        dnnl_primitive_desc_t q = dnnl_primitive_desc_iterator_fetch(it);
        if (q && strncmp(pd_impl(q), want, strlen(want)) == 0) {
            dnnl_primitive_desc_destroy(pd);
            pd = q;
            break;
        }
        if (q) dnnl_primitive_desc_destroy(q);
    }
    dnnl_primitive_desc_iterator_destroy(it);
    return pd;
}

/* ---- one-shot reorders -------------------------------------------------- */

static bool reorder_now(const dnnl_memory_desc_t *from_md, const void *from,
                        const dnnl_memory_desc_t *to_md, void *to) {
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t r = NULL;
    dnnl_memory_t mf = NULL, mt = NULL;
    dnnl_stream_t s = NULL;
    bool ok = dnnl_reorder_primitive_desc_create(&pd, from_md, g_engine, to_md, g_engine, NULL) ==
              dnnl_success;
    if (ok) ok = dnnl_primitive_create(&r, pd) == dnnl_success;
    if (ok) ok = dnnl_memory_create(&mf, from_md, g_engine, (void *)from) == dnnl_success;
    if (ok) ok = dnnl_memory_create(&mt, to_md, g_engine, to) == dnnl_success;
    if (ok) ok = dnnl_stream_create(&s, g_engine, dnnl_stream_default_flags) == dnnl_success;
    if (ok) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, mf}, {DNNL_ARG_TO, mt}};
        ok = dnnl_primitive_execute(r, s, 2, args) == dnnl_success;
        if (ok) ok = dnnl_stream_wait(s) == dnnl_success;
    }
    if (s) dnnl_stream_destroy(s);
    if (mt) dnnl_memory_destroy(mt);
    if (mf) dnnl_memory_destroy(mf);
    if (r) dnnl_primitive_destroy(r);
    if (pd) dnnl_primitive_desc_destroy(pd);
    return ok;
}

/* ---- weights ------------------------------------------------------------ */

struct onednn_weights {
    dnnl_memory_desc_t plain; /* the layout the weights came in (f32) */
    dnnl_memory_desc_t md;    /* the layout they are in now */
    void *data;
    float *scales;    /* INT8: per output column */
    float *colw;      /* INT8: scales[n] * sum_k of column n (zero points' share) */
    bool same_layout; /* md is plain's layout in another data type */
};

bool onednn_weights_plain(const onednn_weights *w) { return !w || w->same_layout; }

void onednn_weights_free(onednn_weights *w) {
    if (!w) return;
    mopt_aligned_free(w->data);
    mopt_free(w->scales);
    mopt_free(w->colw);
    mopt_free(w);
}

/* Packs `src` (plain layout) into want (oneDNN's choice, or the plain layout
 * in another type: same_layout); NULL result with OK when want is the plain
 * layout itself. */
static mopt_status pack(const dnnl_memory_desc_t *plain, const dnnl_memory_desc_t *want,
                        bool same_layout, const void *src, onednn_weights **out) {
    *out = NULL;
    if (dnnl_memory_desc_equal(plain, want)) return MOPT_OK;
    size_t size = dnnl_memory_desc_get_size(want);
    onednn_weights *w = mopt_calloc(1, sizeof *w);
    if (!w) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "oneDNN: out of memory packing weights");
    w->plain = *plain;
    w->md = *want;
    w->same_layout = same_layout;
    w->data = mopt_aligned_alloc(size ? size : 1);
    if (!w->data) {
        mopt_free(w);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY,
                         "oneDNN: out of memory packing weights (%zu bytes)", size);
    }
    if (!reorder_now(plain, src, want, w->data)) {
        onednn_weights_free(w);
        return mopt_fail(MOPT_ERR_UNSUPPORTED, "oneDNN: cannot reorder the weights");
    }
    *out = w;
    return MOPT_OK;
}

/* Packs src, stored as plain, into the weights layout that pd chose, then
 * destroys pd; UNSUPPORTED when there is no pd. plain_w: the weights stay as
 * stored, in the compute type (plain_c), and pd was made for that layout. */
static mopt_status pack_for(dnnl_primitive_desc_t pd, bool plain_w, const dnnl_memory_desc_t *plain,
                            const dnnl_memory_desc_t *plain_c, const void *src,
                            onednn_weights **out) {
    if (!pd) return MOPT_ERR_UNSUPPORTED;
    if (plain_w) {
        dnnl_primitive_desc_destroy(pd);
        return pack(plain, plain_c, true, src, out);
    }
    dnnl_memory_desc_t want = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dnnl_primitive_desc_destroy(pd);
    return pack(plain, &want, dnnl_memory_desc_equal(&want, plain_c), src, out);
}

/* ---- matmul descriptors ------------------------------------------------- */

/* oneDNN 2.6 can divide by zero creating some primitives for empty tensors:
 * those never reach it. */
static bool td_empty(const onednn_td *t) {
    for (int32_t i = 0; i < t->ndims; i++)
        if (t->dims[i] <= 0) return true;
    return false;
}

/* INT8 with a bf16 A: each row is widened on the stack before it is
 * quantized, so rows up to this length */
#define INT8_BF16_MAX_K 8192

/* INT8 epilogue limits (ours, after dequantization): a bias along N
 * (dense), a residual of Y's dims (dense), one activation; no sum. */
static bool int8_ok(const onednn_matmul_desc *d) {
    if (d->prec != ONEDNN_INT8) return true;
    if (d->sum_beta != 0.f) return false;
    int32_t r = d->y.ndims;
    if (d->has_residual) {
        if (d->residual.ndims != r) return false;
        for (int32_t i = 0; i < r; i++)
            if (d->residual.dims[i] != d->y.dims[i] ||
                d->residual.strides[i] !=
                    (i == r - 1 ? 1 : d->residual.strides[i + 1] * d->residual.dims[i + 1]))
                return false;
    }
    if (d->has_bias) {
        if (d->bias.ndims != r || d->bias.dims[r - 1] != d->y.dims[r - 1]) return false;
        if (d->bias.strides[r - 1] != 1 && d->bias.dims[r - 1] != 1) return false;
        for (int32_t i = 0; i < r - 1; i++)
            if (d->bias.dims[i] != 1) return false;
    }
    for (int32_t i = 0; i < r; i++) /* A is quantized as one dense block */
        if (d->a.strides[i] != (i == r - 1 ? 1 : d->a.strides[i + 1] * d->a.dims[i + 1]))
            return false;
    return true;
}

static bool td_fits(const onednn_td *t, const char *what) {
    char why[160];
    if (kn_limits_tensor(t->ndims, t->dims, t->strides, why, sizeof why)) return true;
    mopt_fail(MOPT_ERR_UNSUPPORTED, "oneDNN declined: %s: %s (backend size limits)", what, why);
    return false;
}

static bool matmul_valid(const onednn_matmul_desc *d) {
    bool bf16_io = d->a_bf16 || d->res_bf16 || d->y_bf16;
    bool int8_bf16 = d->prec == ONEDNN_INT8 && !d->res_bf16; /* A or Y: ours to convert */
    return int8_ok(d) && (!bf16_io || d->prec == ONEDNN_BF16 || int8_bf16) &&
           (!(d->a_u8 || d->y_u8) || d->prec == ONEDNN_INT8) && !(d->a_u8 && d->a_bf16) &&
           !(d->y_u8 && d->y_bf16) &&
           (!d->a_bf16 || d->prec != ONEDNN_INT8 || d->a.dims[d->a.ndims - 1] <= INT8_BF16_MAX_K) &&
           d->a.ndims >= 2 && d->a.ndims <= ONEDNN_MAX_DIMS && d->b.ndims == d->a.ndims &&
           d->y.ndims == d->a.ndims && !td_empty(&d->a) && !td_empty(&d->b) && !td_empty(&d->y) &&
           td_fits(&d->a, "A") && td_fits(&d->b, "B") && td_fits(&d->y, "Y") &&
           (!d->has_bias || td_fits(&d->bias, "bias")) &&
           (!d->has_residual || td_fits(&d->residual, "residual"));
}

/* window: also check the convolution window (a deconvolution's, with
 * output_padding, may have a negative end pad: its extents are checked by the
 * tensor limits and by onednn_desc_fits) */
static bool conv_valid_sizes(const onednn_conv_desc *d, bool window) {
    bool ok = d->S >= 1 && d->S <= 3 && d->batch > 0 && d->c_in > 0 && d->c_out > 0 &&
              d->group > 0 && d->c_in % d->group == 0 && d->c_out % d->group == 0;
    for (int32_t i = 0; ok && i < d->S; i++)
        ok = d->in[i] > 0 && d->out[i] > 0 && d->k[i] > 0 && d->stride[i] > 0 && d->dilation[i] > 0;
    if (!ok) return false;
    /* sizes: the tensors (products checked before they are formed) and the
     * window */
    int64_t x[5] = {d->batch, d->c_in}, y[5] = {d->batch, d->c_out}, w[5] = {d->c_out, d->c_in};
    for (int32_t i = 0; i < d->S; i++) {
        x[2 + i] = d->in[i];
        y[2 + i] = d->out[i];
        w[2 + i] = d->k[i];
    }
    char why[160];
    const int64_t *t[3] = {x, y, w};
    const char *names[4] = {"X", "Y", "W", "window"};
    int bad = -1;
    for (int i = 0; i < 3 && bad < 0; i++)
        if (!kn_limits_tensor(2 + d->S, t[i], NULL, why, sizeof why)) bad = i;
    if (bad < 0 && window &&
        !kn_limits_window(d->S, d->in, d->k, d->stride, d->dilation, d->pad_l, d->pad_r, why,
                          sizeof why))
        bad = 3;
    if (bad >= 0)
        mopt_fail(MOPT_ERR_UNSUPPORTED,
                  "oneDNN declined the convolution: %s: %s (backend size limits)", names[bad], why);
    return bad < 0;
}

/* A bf16 convolution whose stride exceeds the padded input along an axis
 * (one output there; ONNX allows strides up to 2^63 - 1): oneDNN 2.6's
 * jit:avx512_core_amx_bf16 crashes on it (strides 2^31 - 1, hostile
 * sweep_limits.py), so it is declined (the f32 variant or the reference
 * runs it). */
static bool conv_bf16_stride_ok(const onednn_conv_desc *d) {
    for (int32_t i = 0; d->prec == ONEDNN_BF16 && i < d->S; i++)
        if (d->stride[i] > d->in[i] + d->pad_l[i] + (d->pad_r[i] > 0 ? d->pad_r[i] : 0)) {
            mopt_fail(MOPT_ERR_UNSUPPORTED,
                      "oneDNN declined the convolution: stride %lld beyond the padded input "
                      "(bf16)",
                      (long long)d->stride[i]);
            return false;
        }
    return true;
}

static bool conv_valid(const onednn_conv_desc *d) {
    return conv_valid_sizes(d, true) && conv_bf16_stride_ok(d);
}

/* The bias goes in as a binary post-op (broadcast like any addend) instead
 * of oneDNN's matmul bias when alpha != 1 (oneDNN scales its bias with the
 * product) or when it is not one value per output column: a scalar or
 * per-row bias (FusedMatMul's `+ eps` of a mel filterbank) made oneDNN
 * answer with ref:any (declined, then OpenBLAS ran it: 150 us per call for
 * an [8,130]x[130,24] product). */
static bool bias_as_post_op(const onednn_matmul_desc *d) {
    if (!d->has_bias || d->prec == ONEDNN_INT8) return false;
    int32_t r = d->bias.ndims;
    return d->alpha != 1.f || (r > 0 && d->bias.dims[r - 1] == 1 && d->y.dims[r - 1] != 1);
}

/* wmd: the weights layout to use; NULL = format `any`. INT8: scales are the
 * static per-column output scales (NULL: ones, enough to choose layouts);
 * its epilogue (run-time scale of A, bias) is ours, not a post-op. */
static dnnl_primitive_desc_t matmul_pd(const onednn_matmul_desc *d, const dnnl_memory_desc_t *wmd,
                                       const float *scales) {
    dnnl_memory_desc_t a, b, bias, y, res;
    dnnl_data_type_t dt = dt_of(d->prec);
    bool int8 = d->prec == ONEDNN_INT8;
    bool ok;
    bool bf = d->prec == ONEDNN_BF16;
    if (d->prec == ONEDNN_F32 || (bf && d->a_bf16))
        ok = md_strided(&a, &d->a, bf ? dnnl_bf16 : dnnl_f32);
    else if (int8) /* quantized by us, per row, into a dense u8 buffer */
        ok = md_dense(&a, d->a.ndims, d->a.dims, dnnl_u8);
    else
        ok = md_any(&a, d->a.ndims, d->a.dims, dt);
    if (ok && wmd)
        b = *wmd;
    else if (ok)
        ok = md_any(&b, d->b.ndims, d->b.dims, dt);
    if (ok) ok = md_strided(&y, &d->y, bf && d->y_bf16 ? dnnl_bf16 : dnnl_f32);
    bool has_bias = d->has_bias && !int8;
    if (ok && has_bias) ok = md_strided(&bias, &d->bias, dnnl_f32);
    if (ok && d->has_residual)
        ok = md_strided(&res, &d->residual, bf && d->res_bf16 ? dnnl_bf16 : dnnl_f32);
    if (!ok) return NULL;
    /* oneDNN scales the bias with the product: with alpha != 1 the bias is
     * added by a binary post-op instead */
    bool bias_post = bias_as_post_op(d);
    dnnl_matmul_desc_t md;
    if (dnnl_matmul_desc_init(&md, &a, &b, has_bias && !bias_post ? &bias : NULL, &y) !=
        dnnl_success)
        return NULL;
    dnnl_primitive_attr_t attr;
    if (int8) {
        int64_t N = d->y.dims[d->y.ndims - 1];
        float *ones = NULL;
        if (!scales) {
            ones = mopt_malloc((size_t)N * sizeof(float));
            if (!ones) return NULL;
            for (int64_t i = 0; i < N; i++)
                ones[i] = 1.f;
        }
        attr = make_attr(1.f, N, scales ? scales : ones, 1 << (d->y.ndims - 1), 0.f, NULL, NULL,
                         KN_ACT_NONE, 0, 0, NULL);
        mopt_free(ones);
    } else {
        attr = make_attr(d->alpha, 0, NULL, 0, d->sum_beta, bias_post ? &bias : NULL,
                         d->has_residual ? &res : NULL, d->act, d->act_alpha, d->act_beta, NULL);
    }
    return pd_of(&md, attr);
}

static bool matmul_plain_b(const onednn_matmul_desc *d, dnnl_memory_desc_t *md) {
    return md_strided(md, &d->b, dnnl_f32);
}

/* Whether oneDNN's u8 x s8 products are exact for all of u8 x s8 (VNNI's
 * vpdpbusd); without VNNI they go through s16 pairs that saturate
 * (2 * 255 * 127 > 32767), so B keeps 7 bits there (|q| <= 63: 2 * 255 * 63
 * fits; better on MiniLM than a 7-bit A). ONEDNN_MAX_CPU_ISA lowers what
 * oneDNN reports. */
static bool isa_has(dnnl_cpu_isa_t want) {
    if (!onednn_available() || !dnnl_get_effective_cpu_isa) return false;
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
    return (isa & (unsigned)want) == (unsigned)want;
}

bool onednn_isa_avx512(void) { return isa_has(dnnl_cpu_isa_avx512_core); }

bool onednn_isa_amx(void) { return isa_has(dnnl_cpu_isa_avx512_core_amx); }

bool onednn_int8_exact(void) {
    return isa_has(dnnl_cpu_isa_avx512_core_vnni) || isa_has(dnnl_cpu_isa_avx2_vnni);
}

/* INT8: B [1.., K, N] (strided) quantized per column into a dense s8
 * [1.., K, N] buffer; scales[n] = max_k |B[k, n]| / 127 (63 without VNNI:
 * onednn_int8_exact; 1 for a zero column), colw[n] = scales[n] * sum_k q[k, n]. */
static mopt_status quantize_b(const onednn_matmul_desc *d, const float *b, int8_t **q,
                              float **scales, float **colw) {
    int32_t r = d->b.ndims;
    int64_t K = d->b.dims[r - 2], N = d->b.dims[r - 1];
    int64_t sk = d->b.strides[r - 2], sn = d->b.strides[r - 1];
    *q = mopt_aligned_alloc((size_t)(K * N));
    *scales = mopt_malloc((size_t)N * sizeof(float));
    *colw = mopt_malloc((size_t)N * sizeof(float));
    if (!*q || !*scales || !*colw) {
        mopt_aligned_free(*q);
        mopt_free(*scales);
        mopt_free(*colw);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "oneDNN: out of memory quantizing weights");
    }
    float wmax = onednn_int8_exact() ? 127.f : 63.f;
    for (int64_t n = 0; n < N; n++) {
        float m = 0;
        for (int64_t k = 0; k < K; k++)
            m = fmaxf(m, fabsf(b[k * sk + n * sn]));
        float sc = m > 0 ? m / wmax : 1.f, inv = 1.f / sc;
        (*scales)[n] = sc;
        int64_t sum = 0;
        for (int64_t k = 0; k < K; k++) {
            float v = fminf(fmaxf(b[k * sk + n * sn] * inv, -wmax), wmax);
            (*q)[k * N + n] = (int8_t)lrintf(v);
            sum += (*q)[k * N + n];
        }
        (*colw)[n] = sc * (float)sum;
    }
    return MOPT_OK;
}

static mopt_status matmul_pack_int8(const onednn_matmul_desc *d, const float *b,
                                    onednn_weights **out) {
    for (int32_t i = 0; i < d->b.ndims - 2; i++)
        if (d->b.dims[i] != 1) return MOPT_ERR_UNSUPPORTED;
    dnnl_memory_desc_t plain, qplain;
    if (!matmul_plain_b(d, &plain) || !md_dense(&qplain, d->b.ndims, d->b.dims, dnnl_s8))
        return MOPT_ERR_UNSUPPORTED;
    dnnl_primitive_desc_t pd = matmul_pd(d, NULL, NULL);
    if (!pd) return MOPT_ERR_UNSUPPORTED;
    dnnl_memory_desc_t want = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dnnl_primitive_desc_destroy(pd);
    int8_t *q = NULL;
    float *scales = NULL, *colw = NULL;
    mopt_status st = quantize_b(d, b, &q, &scales, &colw);
    if (st) return st;
    onednn_weights *w = mopt_calloc(1, sizeof *w);
    size_t size = dnnl_memory_desc_get_size(&want);
    if (w) w->data = mopt_aligned_alloc(size ? size : 1);
    if (!w || !w->data) {
        mopt_aligned_free(q);
        mopt_free(scales);
        mopt_free(colw);
        if (w) mopt_free(w);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "oneDNN: out of memory packing weights");
    }
    w->plain = plain;
    w->md = want;
    w->scales = scales;
    w->colw = colw;
    bool ok = reorder_now(&qplain, q, &want, w->data);
    mopt_aligned_free(q);
    if (!ok) {
        onednn_weights_free(w);
        return MOPT_ERR_UNSUPPORTED;
    }
    *out = w;
    return MOPT_OK;
}

/* ---- batch folding ------------------------------------------------------ */

/* Whether t's batch dims and its rows (dims [0, ndims-1)) form one strided
 * axis (dims of 1 are free): *rows gets its length, *stride its stride. */
static bool merge_rows(const onednn_td *t, int64_t *rows, int64_t *stride) {
    int64_t n = 1, st = t->strides[t->ndims - 2];
    bool have = false;
    for (int32_t i = t->ndims - 2; i >= 0; i--) {
        if (t->dims[i] == 1) continue;
        if (have && t->strides[i] != st * n) return false;
        if (!have) st = t->strides[i];
        have = true;
        n *= t->dims[i];
    }
    *rows = n;
    *stride = st;
    return true;
}

/* An addend (bias, residual) of folded Y (rows): a row broadcast, or as
 * many rows as Y's, merged. */
static bool fold_addend(const onednn_td *t, int64_t rows, onednn_td *out) {
    int64_t n, st;
    if (!merge_rows(t, &n, &st) || (n != 1 && n != rows)) return false;
    int32_t r = t->ndims;
    memset(out, 0, sizeof *out);
    out->ndims = 2;
    out->dims[0] = n, out->dims[1] = t->dims[r - 1];
    out->strides[0] = n == 1 ? t->dims[r - 1] * t->strides[r - 1] : st;
    out->strides[1] = t->strides[r - 1];
    return true;
}

/* A matmul whose B has no batch (all batch dims 1) over A and Y whose batch
 * dims and rows are one strided axis is one 2-D product: M = batch x rows.
 * oneDNN 2.6 runs the 3-D form as per-batch products that copy B into its
 * blocked layout each time (bert768's FFN in bf16: 29.5 -> 25.5 ms). False
 * when d does not fold (then d is used as is). */
static bool matmul_fold(const onednn_matmul_desc *d, onednn_matmul_desc *f) {
    int32_t r = d->a.ndims;
    if (r <= 2) return false;
    for (int32_t i = 0; i < r - 2; i++)
        if (d->b.dims[i] != 1) return false;
    int64_t ma, sa, my, sy;
    if (!merge_rows(&d->a, &ma, &sa) || !merge_rows(&d->y, &my, &sy) || ma != my) return false;
    *f = *d;
    if (d->has_bias && !fold_addend(&d->bias, my, &f->bias)) return false;
    if (d->has_residual && !fold_addend(&d->residual, my, &f->residual)) return false;
    const onednn_td *src[3] = {&d->a, &d->b, &d->y};
    onednn_td *dst[3] = {&f->a, &f->b, &f->y};
    int64_t rows[3] = {ma, d->b.dims[r - 2], my};
    int64_t rstride[3] = {sa, d->b.strides[r - 2], sy};
    for (int k = 0; k < 3; k++) {
        memset(dst[k], 0, sizeof *dst[k]);
        dst[k]->ndims = 2;
        dst[k]->dims[0] = rows[k], dst[k]->dims[1] = src[k]->dims[r - 1];
        dst[k]->strides[0] = rstride[k], dst[k]->strides[1] = src[k]->strides[r - 1];
    }
    return true;
}

static mopt_status matmul_pack_body(const onednn_matmul_desc *d, const float *b, int threads,
                                    onednn_weights **out) {
    *out = NULL;
    if (!onednn_available() || !matmul_valid(d)) return MOPT_ERR_UNSUPPORTED;
    if (d->prec == ONEDNN_INT8) return matmul_pack_int8(d, b, out);
    dnnl_memory_desc_t plain, plain_c; /* plain_c: the stored layout in the compute type */
    if (!matmul_plain_b(d, &plain) || !md_strided(&plain_c, &d->b, dt_of(d->prec)))
        return MOPT_ERR_UNSUPPORTED;
    /* plain_w: the weights stay as stored, if oneDNN can use them so */
    dnnl_primitive_desc_t pd = matmul_pd(d, d->plain_w ? &plain_c : NULL, NULL);
    return pack_for(pd, d->plain_w, &plain, &plain_c, b, out);
}

mopt_status onednn_matmul_pack(const onednn_matmul_desc *d, const float *b, int threads,
                               onednn_weights **out) {
    onednn_matmul_desc f;
    if (matmul_fold(d, &f)) d = &f;
    int host = mopt_omp_enter(threads);
    mopt_status st = matmul_pack_body(d, b, threads, out);
    mopt_omp_leave(host, threads);
    return st;
}

/* ---- conv descriptors --------------------------------------------------- */

void onednn_priv_conv_dims(onednn_conv_geom g, int64_t *x, int64_t *w, int32_t *wnd, int64_t *y) {
    x[0] = y[0] = g.batch;
    x[1] = g.c_in;
    y[1] = g.c_out;
    int32_t o = 0;
    if (g.group > 1) w[o++] = g.group;
    w[o++] = g.c_out / g.group;
    w[o++] = g.c_in / g.group;
    for (int32_t i = 0; i < g.S; i++) {
        x[2 + i] = g.in[i];
        y[2 + i] = g.out[i];
        w[o++] = g.k[i];
    }
    *wnd = o;
}

static void conv_dims(const onednn_conv_desc *d, int64_t *x, int64_t *w, int32_t *wnd, int64_t *y) {
    onednn_priv_conv_dims(ONEDNN_CONV_GEOM(d), x, w, wnd, y);
}

static bool conv_plain_w(const onednn_conv_desc *d, dnnl_memory_desc_t *md, dnnl_data_type_t dt) {
    int64_t x[5], w[6], y[5];
    int32_t wnd;
    conv_dims(d, x, w, &wnd, y);
    return md_dense(md, wnd, w, dt);
}

/* The forward-inference descriptor of d's convolution (of its
 * deconvolution when transposed) with algorithm alg, on X x and Y y, the
 * weights wmd (`any` in type dt when NULL) and an f32 bias when d has one.
 * False when oneDNN refuses it (or lacks the deconvolution's entry point). */
static bool conv_fwd_desc(const onednn_conv_desc *d, bool transposed, dnnl_alg_kind_t alg,
                          const dnnl_memory_desc_t *x, const dnnl_memory_desc_t *wmd,
                          dnnl_data_type_t dt, const dnnl_memory_desc_t *y,
                          dnnl_convolution_desc_t *cd) {
    int64_t xd[5], wd[6], yd[5];
    int32_t wnd;
    conv_dims(d, xd, wd, &wnd, yd);
    dnnl_memory_desc_t w, b;
    if (wmd)
        w = *wmd;
    else if (!md_any(&w, wnd, wd, dt))
        return false;
    if (d->has_bias && !md_dense(&b, 1, &d->c_out, dnnl_f32)) return false;
    dnnl_dims_t strides, dil, pl, pr; /* oneDNN counts dilations from 0 */
    for (int32_t i = 0; i < d->S; i++) {
        strides[i] = d->stride[i];
        dil[i] = d->dilation[i] - 1;
        pl[i] = d->pad_l[i];
        pr[i] = d->pad_r[i];
    }
    const dnnl_memory_desc_t *bias = d->has_bias ? &b : NULL;
    if (!transposed)
        return dnnl_dilated_convolution_forward_desc_init(cd, dnnl_forward_inference, alg, x, &w,
                                                          bias, y, strides, dil, pl,
                                                          pr) == dnnl_success;
    return dnnl_dilated_deconvolution_forward_desc_init &&
           dnnl_dilated_deconvolution_forward_desc_init(cd, dnnl_forward_inference, alg, x, &w,
                                                        bias, y, strides, dil, pl,
                                                        pr) == dnnl_success;
}

/* A chain edge: X and Y one blocked, the other channels-last. oneDNN 2.6
 * has only ref:any for such a pair, so conv_pd_as offers the larger of the
 * two as it is and lets oneDNN pick the other (reordered in the port: 64ch
 * 56x56 in -> 24ch out reorders the 24ch output, padded to 32, instead of
 * the 64ch input). */
static bool conv_mixed(const onednn_conv_desc *d) {
    return (d->x_blk && d->y_nhwc) || (d->x_nhwc && d->y_blk);
}

/* wmd: weights layout to use (NULL = any). Source/destination are `any` so
 * oneDNN can pick its blocked layouts (the entry reorders to/from the
 * user's), unless `forced`: then a channels-last or blocked X or Y
 * (d->x_nhwc, d->x_blk, ...) is given as such, so no reorder is needed for it. */
static dnnl_primitive_desc_t conv_pd_as(const onednn_conv_desc *d, const dnnl_memory_desc_t *wmd,
                                        bool forced) {
    int64_t xd[5], wd[6], yd[5];
    int32_t wnd, nd = 2 + d->S;
    conv_dims(d, xd, wd, &wnd, yd);
    dnnl_data_type_t dt = dt_of(d->prec);
    dnnl_memory_desc_t x, y;
    bool force_x = forced && (d->x_nhwc || d->x_blk), force_y = forced && (d->y_nhwc || d->y_blk);
    if (force_x && force_y && conv_mixed(d)) { /* a chain edge: give the larger one as it is */
        int64_t xs = d->c_in, ys = d->c_out;
        for (int32_t i = 0; i < d->S; i++) {
            xs *= d->in[i];
            ys *= d->out[i];
        }
        force_x = xs >= ys;
        force_y = !force_x;
    }
    /* bf16 X is offered in its layout where that picks oneDNN's AMX kernels
     * (brgconv:avx512_core_amx_bf16 on channels-last bf16; `any` picks the
     * blocked jit_bf16 one, 10x slower), or where it is stored bf16 */
    bool bf_x = dt == dnnl_bf16 && (d->x_bf16 || onednn_isa_amx());
    dnnl_data_type_t ydt = d->y_bf16 ? dnnl_bf16 : dnnl_f32;
    bool ok = force_x && (dt == dnnl_f32 || bf_x) ? md_user(&x, nd, xd, dt, d->x_nhwc, d->x_blk)
                                                  : md_any(&x, nd, xd, dt);
    ok = ok && (force_y ? md_user(&y, nd, yd, ydt, d->y_nhwc, d->y_blk) : md_any(&y, nd, yd, ydt));
    dnnl_convolution_desc_t cd;
    if (!ok || !conv_fwd_desc(d, false, dnnl_convolution_direct, &x, wmd, dt, &y, &cd)) return NULL;
    float post[2] = {d->post_scale, d->post_shift};
    dnnl_primitive_attr_t attr =
        make_attr(1.f, 0, NULL, 0, d->has_residual ? 1.f : 0.f, NULL, NULL, d->act, d->act_alpha,
                  d->act_beta, post_in_prim(d) ? post : NULL);
    if (!attr) return NULL;
    dnnl_primitive_desc_t pd = pd_create(&cd, attr);
    /* f32 depthwise: oneDNN 2.6 ranks brdgmm_dw first, but its jit_dw runs
     * the depthwise convs of MobileNetV3 10-25% faster (Zen 4, 1 thread) */
    bool dw = d->group > 1 && d->group == d->c_in && d->group == d->c_out;
    if (pd && dw && dt == dnnl_f32 && strncmp(pd_impl(pd), "brdgmm_dw", 9) == 0)
        pd = pd_prefer(pd, &cd, attr, "jit_dw");
    dnnl_primitive_attr_destroy(attr);
    return pd;
}

static bool pd_is_ref(dnnl_primitive_desc_t pd);

/* Whether d's X/Y layouts are worth offering as they are: some are not
 * plain (conv_pd_as offers only the larger side of a chain edge). */
static bool conv_forced_ok(const onednn_conv_desc *d) {
    return d->x_nhwc || d->y_nhwc || d->x_blk || d->y_blk;
}

static dnnl_primitive_desc_t conv_pd(const onednn_conv_desc *d, const dnnl_memory_desc_t *wmd) {
    return conv_pd_as(d, wmd, false);
}

/* ---- Winograd ----------------------------------------------------------- */

/* Whether d asks for and fits oneDNN 2.6's f32 Winograd kernels (jit_wino_4x3,
 * jit_fp32_wino_2x3; avx512_core only): 3x3, stride 1, no dilation, one group,
 * at least 16 channels in and out (oneDNN checks the rest; it pads channels
 * to multiples of 16). On Zen 4 (1 thread) they run 64-512 channel 3x3
 * convs at 140-330 GFLOP/s where brgconv reaches 100-115 (YOLOv8, ResNet
 * shapes), PP-OCR's 96 -> 24 at 160x160 in 7.9 ms instead of 15.9, at a max
 * error of a few 1e-6 of the output's scale. Below 16 channels they are
 * slower than the direct kernel (8 -> 8 at 80x80: 0.29 against 0.16 ms).
 * On Intel (Xeon model 207, Emerald Rapids, 1 thread) the direct kernel
 * does better where channels are few: Winograd takes X and Y only in its
 * own blocked layout, so in a channels-last chain it pays two reorders
 * and an activation pass that the direct conv fuses, and its gain grows
 * with c_in * c_out / (c_in + c_out). Measured in the models (CPU ms per
 * node, Winograd / direct): YOLOv8n 16 -> 16 at 80x80 0.70 / 0.24, 32 -> 32
 * at 40x40 0.30 / 0.20, 64 -> 64 at 40x40 0.63 / 0.79; PP-OCRv4 det 96 ->
 * 24 at 160x160 26.2 / 17.8; ResNet-18 (64-512 channels) 0.55-0.77 of the
 * direct time. So there it takes Winograd only from
 * c_in * c_out / (c_in + c_out) >= 24 (64 -> 64, 128 -> 32, not 96 -> 24). */
#define WINO_INTEL_MIN_HARMONIC 24

static bool wino_geometry(const onednn_conv_desc *d) {
    if (d->prec != ONEDNN_F32 || d->S != 2 || d->group != 1 || d->c_in < 16 || d->c_out < 16)
        return false;
    for (int32_t i = 0; i < 2; i++)
        if (d->k[i] != 3 || d->stride[i] != 1 || d->dilation[i] != 1) return false;
    return true;
}

/* The CPU rule above: false when the direct conv is the faster here. */
static bool wino_pays(const onednn_conv_desc *d) {
    return cpu_get()->amd || d->c_in * d->c_out >= WINO_INTEL_MIN_HARMONIC * (d->c_in + d->c_out);
}

bool onednn_conv_wino_likely(int64_t c_in, int64_t c_out) {
    const cpu_features *c = cpu_get();
    onednn_conv_desc d;
    memset(&d, 0, sizeof d);
    d.prec = ONEDNN_F32;
    d.S = 2;
    d.group = 1;
    d.c_in = c_in;
    d.c_out = c_out;
    for (int32_t i = 0; i < 2; i++) {
        d.k[i] = 3;
        d.stride[i] = 1;
        d.dilation[i] = 1;
    }
    return onednn_available() && c->avx512f && c->avx512bw && c->avx512vl && c->avx512dq &&
           wino_geometry(&d) && wino_pays(&d);
}

static bool conv_wino_shape(const onednn_conv_desc *d) {
    return d->wino && wino_geometry(d) && wino_pays(d);
}

/* oneDNN picks between its two Winograd kernels (2x3 and 4x3 output tiles:
 * different arithmetic, so different roundings) by the thread count: the
 * one it picks for 1 thread is taken at every count, so a node's results do
 * not depend on the threads it runs on (tests/unit/test_threadpool.c runs
 * sessions on a shared pool that narrows nodes). NULL when that kernel does
 * not take the problem at this count.
 *
 * At 1 thread and batch 1 oneDNN 2.6 picks the 2x3 kernel, whose smaller
 * tiles lose where an image has many output positions: from
 * WINO_4X3_MIN_POSITIONS (batch x output positions) the 4x3 kernel is
 * taken instead when it accepts the problem. Xeon model 207, 1 thread,
 * ResNet-18-like batch 1 (bench/genmodels.py), CPU us per node 2x3 -> 4x3:
 * 64 -> 64 at 56x56 866 -> 706; at 28x28 (784 positions) 2x3 stays ahead
 * (935 -> 950), at 14x14 and 7x7 far ahead (1330 -> 1500, 2010 -> 4000).
 * At batch 8 oneDNN picks 4x3 for every ResNet layer itself. */
#define WINO_4X3_MIN_POSITIONS (56 * 56)
#define WINO_4X3_IMPL "jit_wino_4x3"

static dnnl_primitive_desc_t wino_pd_pinned(const dnnl_convolution_desc_t *cd,
                                            const_dnnl_primitive_attr_t attr, int64_t positions) {
    int cur = omp_get_max_threads();
    if (cur != 1) omp_set_num_threads(1);
    dnnl_primitive_desc_t pd = pd_create(cd, attr);
    if (pd && positions >= WINO_4X3_MIN_POSITIONS &&
        strncmp(pd_impl(pd), WINO_4X3_IMPL, strlen(WINO_4X3_IMPL)) != 0) {
        pd = pd_prefer(pd, cd, attr, WINO_4X3_IMPL);
        if (g_verbose && strncmp(pd_impl(pd), WINO_4X3_IMPL, strlen(WINO_4X3_IMPL)) == 0)
            mopt_log(MOPT_LOG_INFO,
                     "mopt: oneDNN Winograd convolution: 4x3 tiles, not 2x3 "
                     "(%lld output positions >= %d)",
                     (long long)positions, WINO_4X3_MIN_POSITIONS);
    }
    if (cur != 1) omp_set_num_threads(cur);
    if (!pd || cur == 1) return pd;
    char want[64];
    snprintf(want, sizeof want, "%s", pd_impl(pd));
    dnnl_primitive_desc_destroy(pd);
    pd = pd_create(cd, attr);
    if (pd && strcmp(pd_impl(pd), want) != 0) pd = pd_prefer(pd, cd, attr, want);
    if (pd && strcmp(pd_impl(pd), want) != 0) {
        dnnl_primitive_desc_destroy(pd);
        pd = NULL;
    }
    return pd;
}

/* The Winograd primitive for d (W in wmd, or `any` when NULL); X and Y are
 * `any` (it takes only its blocked layout). Its post-ops are the residual's
 * sum and relu: for another activation the primitive is made without it and
 * *act_after says the caller must apply d->act to Y. NULL when oneDNN has
 * no Winograd kernel for d (or only a reference one). */
static dnnl_primitive_desc_t conv_wino_pd(const onednn_conv_desc *d, const dnnl_memory_desc_t *wmd,
                                          bool *act_after) {
    *act_after = false;
    if (!conv_wino_shape(d)) return NULL;
    int64_t xd[5], wd[6], yd[5];
    int32_t wnd, nd = 2 + d->S;
    conv_dims(d, xd, wd, &wnd, yd);
    dnnl_memory_desc_t x, y;
    dnnl_convolution_desc_t cd;
    if (!md_any(&x, nd, xd, dnnl_f32) || !md_any(&y, nd, yd, dnnl_f32) ||
        !conv_fwd_desc(d, false, dnnl_convolution_winograd, &x, wmd, dnnl_f32, &y, &cd))
        return NULL;
    float post[2] = {d->post_scale, d->post_shift};
    for (int after = 0; after < 2; after++) {
        if (after && d->act == KN_ACT_NONE && !d->has_post) break;
        dnnl_primitive_attr_t attr = make_attr(
            1.f, 0, NULL, 0, d->has_residual ? 1.f : 0.f, NULL, NULL, after ? KN_ACT_NONE : d->act,
            d->act_alpha, d->act_beta, after || !post_in_prim(d) ? NULL : post);
        if (!attr) return NULL;
        dnnl_primitive_desc_t pd = wino_pd_pinned(&cd, attr, d->batch * d->out[0] * d->out[1]);
        dnnl_primitive_attr_destroy(attr);
        if (pd && !pd_is_ref(pd)) {
            *act_after = after != 0;
            return pd;
        }
        if (pd) dnnl_primitive_desc_destroy(pd);
    }
    return NULL;
}

/* ---- the primitive cache ------------------------------------------------ */

enum { KIND_EMPTY = 0, KIND_MATMUL, KIND_CONV, KIND_DECONV, KIND_POOL };

typedef struct cache_key {
    int kind;
    int threads;
    const onednn_weights *w;
    union {
        onednn_matmul_desc mm;
        onednn_conv_desc cv;
        onednn_pool_desc pl;
    } u;
} cache_key;

typedef struct cache_entry {
    cache_key key;
    uint64_t stamp;
    onednn_entry p; /* onednn_priv.h; src and dst plain f32 */
    io_port wport;  /* non-constant weights in another layout: reordered per run */
    uint8_t *qa;    /* INT8: A quantized per row on each run */
    int64_t qa_n;
    float *qa_scale; /* INT8: per row of A */
    int32_t *qa_zp;
    float *qa_colw;  /* INT8: alpha * the weights' colw */
    int qa_max;      /* INT8: the largest u8 of A (255) */
    bool int8;       /* INT8: the per-row work around the product is ours */
    float *qy;       /* INT8, Y a u8 rows block: the product's f32 Y */
    float *qy_scale; /* INT8, Y a u8 rows block: per row of Y */
    int32_t *qy_zp;
    int64_t blk;    /* INT8: rows per block product (0: one product of all rows) */
    float *yblk;    /* INT8, blocked, Y a u8 rows block or bf16: one block's f32 Y */
    bool declined;  /* the build said UNSUPPORTED: kept so runs do not retry */
    bool act_after; /* conv: the activation runs on Y after the primitive (Winograd) */
    char why[192];  /* its message, repeated by declined_again() */
} cache_entry;

struct onednn_cache {
    dnnl_stream_t stream;
    uint64_t clock;
    cache_entry e[CACHE_SIZE];
};

static void port_free(io_port *p) {
    if (p->reorder) dnnl_primitive_destroy(p->reorder);
    if (p->prim && p->prim != p->user) dnnl_memory_destroy(p->prim);
    if (p->user) dnnl_memory_destroy(p->user);
    mopt_aligned_free(p->buf);
    memset(p, 0, sizeof *p);
}

static void mems_free(const dnnl_memory_t *m, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (m[i]) dnnl_memory_destroy(m[i]);
}

void onednn_priv_entry_free(onednn_entry *p) {
    if (p->prim) dnnl_primitive_destroy(p->prim);
    port_free(&p->src);
    port_free(&p->dst);
    if (p->res_reorder) dnnl_primitive_destroy(p->res_reorder);
    dnnl_memory_t m[] = {p->res_user, p->wei, p->bias, p->bin, p->scratch};
    mems_free(m, sizeof m / sizeof m[0]);
    mopt_aligned_free(p->scratch_buf);
    mopt_aligned_free(p->own_w);
    memset(p, 0, sizeof *p);
}

static void entry_free(cache_entry *e) {
    onednn_priv_entry_free(&e->p);
    port_free(&e->wport);
    mopt_aligned_free(e->qa);
    mopt_free(e->qa_scale);
    mopt_free(e->qa_zp);
    mopt_free(e->qa_colw);
    mopt_aligned_free(e->qy);
    mopt_aligned_free(e->yblk);
    mopt_free(e->qy_scale);
    mopt_free(e->qy_zp);
    memset(e, 0, sizeof *e);
}

void onednn_cache_free(onednn_cache *c) {
    if (!c) return;
    for (int i = 0; i < CACHE_SIZE; i++)
        if (c->e[i].key.kind != KIND_EMPTY) entry_free(&c->e[i]);
    if (c->stream) dnnl_stream_destroy(c->stream);
    mopt_free(c);
}

static mopt_status stream_new(dnnl_stream_t *s) {
    if (dnnl_stream_create(s, g_engine, dnnl_stream_default_flags) != dnnl_success)
        return mopt_fail(MOPT_ERR_INTERNAL, "oneDNN: cannot create a stream");
    return MOPT_OK;
}

static mopt_status cache_get(onednn_cache **pc, onednn_cache **out) {
    if (!*pc) {
        onednn_cache *c = mopt_calloc(1, sizeof *c);
        if (!c) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "oneDNN: out of memory");
        mopt_status st = stream_new(&c->stream);
        if (st) {
            mopt_free(c);
            return st;
        }
        *pc = c;
    }
    *out = *pc;
    return MOPT_OK;
}

/* Finds the entry for key, or frees the least recently used slot for it
 * (*hit = false). */
static cache_entry *cache_slot(onednn_cache *c, const cache_key *key, bool *hit) {
    cache_entry *lru = &c->e[0];
    c->clock++;
    for (int i = 0; i < CACHE_SIZE; i++) {
        cache_entry *e = &c->e[i];
        if (e->key.kind != KIND_EMPTY && memcmp(&e->key, key, sizeof *key) == 0) {
            e->stamp = c->clock;
            *hit = true;
            return e;
        }
        if (e->key.kind == KIND_EMPTY || e->stamp < lru->stamp) lru = e;
    }
    if (lru->key.kind != KIND_EMPTY) entry_free(lru);
    *hit = false;
    return lru;
}

/* A primitive's key: every byte set (padding zeroed), as keys compare with
 * memcmp. desc is the kind's descriptor (onednn_matmul_desc, _conv_desc). */
static void key_init(cache_key *key, int kind, int threads, const onednn_weights *w,
                     const void *desc, size_t desc_size) {
    memset(key, 0, sizeof *key);
    key->kind = kind;
    key->threads = threads;
    key->w = w;
    memcpy(&key->u, desc, desc_size);
}

/* After the build (status st) of a slot cache_slot() missed: keeps it under
 * key, or frees what the failed build left. Returns st. */
static mopt_status slot_built(onednn_cache *c, cache_entry *e, const cache_key *key,
                              mopt_status st) {
    if (st) {
        entry_free(e);
        if (st == MOPT_ERR_UNSUPPORTED) { /* the same problem declines the same way */
            e->key = *key;
            e->stamp = c->clock;
            e->declined = true;
            snprintf(e->why, sizeof e->why, "%s", mopt_error_message());
        }
        return st;
    }
    e->key = *key;
    e->stamp = c->clock;
    return MOPT_OK;
}

/* A run of a problem whose build was declined (slot_built): declined again,
 * with the same message, without asking oneDNN anew (creating the primitive
 * descriptors of a declined problem on every run cost ~50 us each). */
static mopt_status declined_again(const cache_entry *e) {
    return mopt_fail(MOPT_ERR_UNSUPPORTED, "%s", e->why[0] ? e->why : "oneDNN: declined");
}

/* Builds the entry e of a missed key (its kind's descriptor in key->u, its
 * weights in key->w); plain: the op's weights as stored, or NULL. */
typedef mopt_status (*entry_build)(cache_entry *e, const cache_key *key, const float *plain);

/* The start of every run: the session's cache (*cache, made on the first
 * run) and in it the entry of (kind, threads, w, desc), built by build(e,
 * key, plain) on a miss; a declined or failed build's status otherwise. */
static mopt_status entry_get(onednn_cache **cache, int kind, int threads, const onednn_weights *w,
                             const void *desc, size_t desc_size, entry_build build,
                             const float *plain, cache_entry **out) {
    onednn_cache *c = NULL;
    mopt_status st = cache_get(cache, &c);
    if (st) return st;
    cache_key key;
    key_init(&key, kind, threads, w, desc, desc_size);
    bool hit;
    cache_entry *e = cache_slot(c, &key, &hit);
    if (!hit && (st = slot_built(c, e, &key, build(e, &key, plain)))) return st;
    if (e->declined) return declined_again(e);
    *out = e;
    return MOPT_OK;
}

static bool mem_new(dnnl_memory_t *m, const dnnl_memory_desc_t *md) {
    return dnnl_memory_create(m, md, g_engine, DNNL_MEMORY_NONE) == dnnl_success;
}

static bool alloc_mem(dnnl_memory_t *m, const dnnl_memory_desc_t *md, void **buf) {
    size_t size = dnnl_memory_desc_get_size(md);
    *buf = mopt_aligned_alloc(size ? size : 1);
    if (!*buf) return false;
    return dnnl_memory_create(m, md, g_engine, *buf) == dnnl_success;
}

static bool reorder_prim(dnnl_primitive_t *r, const dnnl_memory_desc_t *from,
                         const dnnl_memory_desc_t *to) {
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_reorder_primitive_desc_create(&pd, from, g_engine, to, g_engine, NULL) != dnnl_success)
        return false;
    bool ok = dnnl_primitive_create(r, pd) == dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    return ok;
}

/* Sets up a port: user layout `user_md`, primitive layout `prim_md`. */
static bool port_init(io_port *p, const dnnl_memory_desc_t *user_md,
                      const dnnl_memory_desc_t *prim_md, bool input) {
    if (!mem_new(&p->user, user_md)) return false;
    if (dnnl_memory_desc_equal(user_md, prim_md)) {
        p->prim = p->user;
        return true;
    }
    if (!alloc_mem(&p->prim, prim_md, &p->buf)) return false;
    return input ? reorder_prim(&p->reorder, user_md, prim_md)
                 : reorder_prim(&p->reorder, prim_md, user_md);
}

static bool exec(onednn_cache *c, dnnl_primitive_t p, int n, dnnl_exec_arg_t *args) {
    return dnnl_primitive_execute(p, c->stream, n, args) == dnnl_success;
}

static bool stream_reorder(dnnl_stream_t s, dnnl_primitive_t r, dnnl_memory_t from,
                           dnnl_memory_t to) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    return dnnl_primitive_execute(r, s, 2, args) == dnnl_success;
}

static bool run_reorder(onednn_cache *c, dnnl_primitive_t r, dnnl_memory_t from, dnnl_memory_t to) {
    return stream_reorder(c->stream, r, from, to);
}

static bool conv_exec(dnnl_stream_t s, const onednn_entry *p) {
    dnnl_exec_arg_t args[6];
    int n = 0;
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, p->src.prim};
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, p->wei};
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_DST, p->dst.prim};
    if (p->bias) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, p->bias};
    if (p->scratch) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, p->scratch};
    if (p->bin) /* the binary post-op is the first one */
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, p->bin};
    bool ok = dnnl_primitive_execute(p->prim, s, n, args) == dnnl_success;
    if (ok && p->dst.reorder) ok = stream_reorder(s, p->dst.reorder, p->dst.prim, p->dst.user);
    return ok && dnnl_stream_wait(s) == dnnl_success;
}

/* A conv or deconv run's inputs: the user's X, Y, weights (when the entry
 * reads them as stored) and bias bound, X reordered for the primitive. */
static bool conv_bind(onednn_cache *c, cache_entry *e, const float *x, const float *wplain,
                      const float *bias, float *y) {
    bool ok = dnnl_memory_set_data_handle(e->p.src.user, (void *)x) == dnnl_success &&
              dnnl_memory_set_data_handle(e->p.dst.user, y) == dnnl_success;
    if (ok && e->p.wei_from_input)
        ok = dnnl_memory_set_data_handle(e->p.wei, (void *)wplain) == dnnl_success;
    if (ok && e->p.bias) ok = dnnl_memory_set_data_handle(e->p.bias, (void *)bias) == dnnl_success;
    if (ok && e->p.src.reorder) ok = run_reorder(c, e->p.src.reorder, e->p.src.user, e->p.src.prim);
    return ok;
}

/* What oneDNN chose for pd: "brg:avx512_core", "jit:avx512_core", ... */
static const char *pd_impl(dnnl_primitive_desc_t pd) {
    const char *info = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &info) != dnnl_success || !info)
        info = "";
    return info;
}

/* oneDNN's reference implementations: "ref:any", "ref_int8:any", ... */
static bool pd_is_ref(dnnl_primitive_desc_t pd) { return strncmp(pd_impl(pd), "ref", 3) == 0; }

/* Keeps pd only when oneDNN did not fall back to a reference implementation
 * for it (destroys it otherwise): used for a weights layout given in advance
 * (prepacked for another shape, or the stored one), so the caller then asks
 * for `any` weights and reorders its plain copy for this shape. */
static dnnl_primitive_desc_t pd_unless_ref(dnnl_primitive_desc_t pd, const char *what,
                                           const char *layout) {
    if (!pd || !pd_is_ref(pd)) return pd;
    if (g_verbose)
        mopt_log(MOPT_LOG_INFO,
                 "mopt: oneDNN %s: %s weights would get %s; weights reordered for this shape", what,
                 layout, pd_impl(pd));
    dnnl_primitive_desc_destroy(pd);
    return NULL;
}

static atomic_llong g_ref_count; /* reference implementations oneDNN chose (declined) */

long long onednn_ref_count(void) { return atomic_load(&g_ref_count); }

static atomic_llong g_wino_count;             /* Winograd primitives made */
static atomic_llong g_bf16_amx, g_bf16_other; /* BF16 convolutions on an AMX machine */

void onednn_conv_bf16_counts(long long *amx, long long *other) {
    *amx = atomic_load(&g_bf16_amx);
    *other = atomic_load(&g_bf16_other);
}

/* Never a silent slow path: on an AMX machine a BF16 convolution (not a
 * depthwise one) that oneDNN answers with a non-AMX kernel (jit_bf16, ...:
 * 10x slower) is counted and, with MOPT_VERBOSE, said. */
static void conv_bf16_note(const onednn_conv_desc *d, dnnl_primitive_desc_t pd) {
    bool dw = d->group > 1 && d->group == d->c_in && d->group == d->c_out;
    if (dw || !onednn_isa_amx()) return;
    const char *info = pd_impl(pd);
    bool amx = strstr(info, "amx") != NULL;
    atomic_fetch_add(amx ? &g_bf16_amx : &g_bf16_other, 1);
    if (!amx && g_verbose)
        mopt_log(MOPT_LOG_INFO,
                 "mopt: oneDNN convolution (bf16) %lld -> %lld channels, group %lld, X %s%s, Y "
                 "%s: %s is not an AMX kernel on this AMX machine (slow path)",
                 (long long)d->c_in, (long long)d->c_out, (long long)d->group,
                 d->x_nhwc  ? "channels-last"
                 : d->x_blk ? "blocked"
                            : "plain",
                 d->x_bf16 ? " bf16" : "",
                 d->y_nhwc  ? "channels-last"
                 : d->y_blk ? "blocked"
                            : "plain",
                 info);
}

long long onednn_wino_count(void) { return atomic_load(&g_wino_count); }

/* Never a silent slow path: a reference implementation oneDNN chose ("ref:any",
 * "ref_int8:any", ...) is declined (UNSUPPORTED: the caller's impl declines and
 * the executor runs ours) and counted; with MOPT_FAIL_ON_REF=1 in the
 * environment it is an error instead (INTERNAL), so a test finds it. With
 * MOPT_VERBOSE set, each choice is printed. */
static mopt_status pd_accepted(dnnl_primitive_desc_t pd, const char *what) {
    const char *info = pd_impl(pd);
    bool ok = strncmp(info, "ref", 3) != 0;
    if (g_verbose)
        mopt_log(MOPT_LOG_INFO, "mopt: oneDNN %s: implementation %s%s", what, info,
                 ok ? "" : " (a reference implementation: declined)");
    if (ok) return MOPT_OK;
    atomic_fetch_add(&g_ref_count, 1);
    if (g_fail_on_ref)
        return mopt_fail(MOPT_ERR_INTERNAL,
                         "oneDNN %s: chose its reference implementation %s (MOPT_FAIL_ON_REF=1)",
                         what, info);
    return mopt_fail(MOPT_ERR_UNSUPPORTED, "oneDNN %s: declined its reference implementation %s",
                     what, info);
}

/* Common tail of entry creation: the check of oneDNN's choice, primitive,
 * scratchpad. */
static mopt_status entry_prim(cache_entry *e, dnnl_primitive_desc_t pd, const char *what) {
    mopt_status st = pd_accepted(pd, what);
    if (st) return st;
    if (dnnl_primitive_create(&e->p.prim, pd) != dnnl_success) return MOPT_ERR_UNSUPPORTED;
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (smd && dnnl_memory_desc_get_size(smd) > 0 &&
        !alloc_mem(&e->p.scratch, smd, &e->p.scratch_buf))
        return MOPT_ERR_UNSUPPORTED;
    return MOPT_OK;
}

/* ---- matmul run --------------------------------------------------------- */

/* INT8: rows per block of a blocked product (its f32 Y block fits
 * g_int8_block_bytes per thread; a multiple of 16), or 0 for one product:
 * when blocks are off, when fewer than two blocks would run, or when B has
 * batch dims (A and Y are dense: rows follow rows across A's batch dims) */
static int64_t int8_block_rows(const onednn_matmul_desc *d, int64_t rows, int threads) {
    int32_t r = d->a.ndims;
    int64_t N = d->y.dims[r - 1];
    for (int32_t i = 0; i < r - 2; i++)
        if (d->b.dims[i] != 1) return 0;
    if (g_int8_block_bytes <= 0 || N <= 0) return 0;
    int64_t blk = g_int8_block_bytes * (threads > 1 ? threads : 1) / (N * (int64_t)sizeof(float));
    blk = blk / 16 * 16;
    if (blk < 32) blk = 32;
    return rows >= 2 * blk ? blk : 0;
}

/* The desc of one block of n rows of d's product: A [1.., n, K] as a u8
 * block given per run, Y [1.., n, N] f32, no epilogue (ours, per block). */
static void int8_block_desc(const onednn_matmul_desc *d, int64_t n, onednn_matmul_desc *b) {
    memset(b, 0, sizeof *b);
    int32_t r = d->a.ndims;
    int64_t dims[ONEDNN_MAX_DIMS];
    for (int32_t i = 0; i < r - 2; i++)
        dims[i] = 1;
    dims[r - 2] = n, dims[r - 1] = d->a.dims[r - 1];
    onednn_td_dense(&b->a, r, dims);
    b->b = d->b;
    dims[r - 1] = d->y.dims[r - 1];
    onednn_td_dense(&b->y, r, dims);
    b->alpha = d->alpha;
    b->prec = ONEDNN_INT8;
    b->b_const = d->b_const;
    b->a_u8 = true;
}

static mopt_status matmul_entry_int8(cache_entry *e, const onednn_matmul_desc *d,
                                     const onednn_weights *w, int threads) {
    int32_t r = d->a.ndims;
    int64_t N = d->y.dims[r - 1], na = 1;
    for (int32_t i = 0; i < r; i++)
        na *= d->a.dims[i];
    if (!w->colw) return MOPT_ERR_UNSUPPORTED;
    float *scales = mopt_malloc((size_t)N * sizeof(float));
    e->qa_colw = mopt_malloc((size_t)N * sizeof(float));
    if (!scales || !e->qa_colw) {
        mopt_free(scales);
        return MOPT_ERR_OUT_OF_MEMORY;
    }
    for (int64_t n = 0; n < N; n++) {
        scales[n] = w->scales[n] * d->alpha;
        e->qa_colw[n] = w->colw[n] * d->alpha;
    }
    dnnl_primitive_desc_t pd = matmul_pd(d, &w->md, scales);
    mopt_free(scales);
    if (!pd) return MOPT_ERR_UNSUPPORTED;
    int64_t rows = na / d->a.dims[r - 1];
    e->int8 = true;
    e->blk = int8_block_rows(d, rows, threads);
    /* In blocks the products run on the blocks' own entries (int8_blocked):
     * this one keeps the per-row work, and only checks oneDNN's choice for
     * the whole shape (no primitive, JIT code or scratchpad of its own) */
    mopt_status st = e->blk ? pd_accepted(pd, "matmul (int8)") : entry_prim(e, pd, "matmul (int8)");
    bool ok = st == MOPT_OK;
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    if (ok && !e->blk) ok = dnnl_memory_create(&e->p.wei, wmd, g_engine, w->data) == dnnl_success;
    /* A as a u8 rows block comes quantized: its handle is set per run */
    e->qa = d->a_u8 ? NULL : mopt_aligned_alloc((size_t)na);
    e->qa_n = na;
    e->qa_scale = mopt_malloc((size_t)rows * sizeof(float));
    e->qa_zp = mopt_malloc((size_t)rows * sizeof(int32_t));
    e->qa_max = 255;
    if (ok) ok = (e->qa || d->a_u8) && e->qa_scale && e->qa_zp;
    if (ok && e->blk && (d->y_u8 || d->y_bf16)) { /* one block's f32 Y */
        e->yblk = mopt_aligned_alloc((size_t)e->blk * (size_t)N * sizeof(float));
        ok = e->yblk != NULL;
    }
    if (ok && (d->y_u8 || d->y_bf16)) { /* the product's f32 Y, then the block or bf16 */
        e->qy = e->blk ? NULL : mopt_aligned_alloc((size_t)rows * (size_t)N * sizeof(float));
        e->qy_scale = mopt_malloc((size_t)rows * sizeof(float));
        e->qy_zp = mopt_malloc((size_t)rows * sizeof(int32_t));
        ok = (e->qy || e->blk) && e->qy_scale && e->qy_zp;
    }
    const dnnl_memory_desc_t *src_md = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    if (ok && !e->blk)
        ok = dnnl_memory_create(&e->p.src.user, src_md, g_engine, e->qa) == dnnl_success;
    e->p.src.prim = e->p.src.user;
    if (ok && !e->blk)
        ok = mem_new(&e->p.dst.user, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0));
    e->p.dst.prim = e->p.dst.user;
    dnnl_primitive_desc_destroy(pd);
    return st ? st : ok ? MOPT_OK : MOPT_ERR_UNSUPPORTED;
}

/* INT8 per-row work outside oneDNN, split by rows over the call's threads
 * (cpu_parallel_for): the quantization of A before the product, the
 * epilogue after it. */
typedef struct int8_rows {
    cache_entry *e;
    const onednn_matmul_desc *d;
    const float *a, *bias, *residual;
    float *y;
    uint8_t *yq;   /* Y as a u8 rows block (d->y_u8): y is then e->qy */
    uint16_t *ybf; /* Y as bf16 (d->y_bf16): y is then e->qy */
    int64_t y0;    /* the row of Y that y holds first (a block's; 0: all of Y) */
    int64_t K, N;
    const cpu_kernels *k; /* the best cpu tier (residual add, activation) */
    bool avx512;
} int8_rows;

static void int8_rows_init(int8_rows *j, cache_entry *e, const onednn_matmul_desc *d) {
    memset(j, 0, sizeof *j);
    j->e = e, j->d = d;
    j->K = d->a.dims[d->a.ndims - 1];
    j->N = d->y.dims[d->y.ndims - 1];
    j->avx512 = cpu_kernels_for("avx512") != NULL;
    j->k = cpu_kernels_for("avx512");
    if (!j->k) j->k = cpu_kernels_for("avx2");
    if (!j->k) j->k = cpu_kernels_for("portable");
}

/* rows [lo, hi) of A quantized into e->qa (u8), e->qa_scale, e->qa_zp */
static void quantize_rows(void *arg, int64_t lo, int64_t hi) {
    const int8_rows *j = arg;
    cache_entry *e = j->e;
    if (j->d->a_bf16) { /* widened a row at a time (K <= INT8_BF16_MAX_K) */
        float row[INT8_BF16_MAX_K];
        const uint16_t *a = (const uint16_t *)(const void *)j->a;
        for (int64_t m = lo; m < hi; m++) {
            cpu_bf16_to_f32(a + m * j->K, row, j->K);
            cpu_quant_rows_u8(row, 1, j->K, j->K, e->qa_max, j->avx512, e->qa + m * j->K,
                              e->qa_scale + m, e->qa_zp + m);
        }
        return;
    }
    cpu_quant_rows_u8(j->a + lo * j->K, hi - lo, j->K, j->K, e->qa_max, j->avx512,
                      e->qa + lo * j->K, e->qa_scale + lo, e->qa_zp + lo);
}

/* rows [lo, hi) of Y, which hold alpha * sw[n] * sum q w:
 * y = s[m] * (y - z[m] * alpha * colw[n]) (+ bias along N), + residual
 * (dense, Y's dims), then the activation */
/* The activation on n values of Y: the erf GELU by its fast AVX-512 form
 * (rowquant.h; this output carries the product's quantization error) */
static void epilogue_act(const int8_rows *j, float *y, int64_t n) {
    const onednn_matmul_desc *d = j->d;
    if (d->act == KN_ACT_NONE) return;
#if defined(__x86_64__)
    if (d->act == KN_ACT_GELU && j->avx512) {
        cpu_gelu_erf_fast_avx512(y, n);
        return;
    }
#endif
    cpu_unary_params p = {d->act_alpha, d->act_beta};
    j->k->unary_f32((cpu_unop)d->act, y, y, n, &p);
}

/* Rows [lo, hi) one at a time, each in one pass while it is in L1
 * (cpu_epilogue_row_avx512: dequantization, bias, residual, GELU and the
 * row's min/max for its u8 quantization), then its u8 or bf16 copy: the
 * same bits as the passes of epilogue_rows. */
static bool epilogue_rows_fused(const int8_rows *j, int64_t lo, int64_t hi) {
#if defined(__x86_64__)
    const onednn_matmul_desc *d = j->d;
    if (!j->avx512 || (d->act != KN_ACT_NONE && d->act != KN_ACT_GELU)) return false;
    const cache_entry *e = j->e;
    for (int64_t m = lo; m < hi; m++) {
        float *y = j->y + (m - j->y0) * j->N, mn = 0.f, mx = 0.f;
        cpu_epilogue_row_avx512(y, j->N, e->qa_scale[m], (float)e->qa_zp[m], e->qa_colw, j->bias,
                                d->has_residual ? j->residual + m * j->N : NULL,
                                d->act == KN_ACT_GELU, j->yq ? &mn : NULL, j->yq ? &mx : NULL);
        if (j->yq)
            cpu_quant_row_u8_mm(y, j->N, mn, mx, 255, true, j->yq + m * j->N, e->qy_scale + m,
                                e->qy_zp + m);
        if (j->ybf) cpu_f32_to_bf16(y, j->ybf + m * j->N, j->N);
    }
    return true;
#else
    (void)j, (void)lo, (void)hi;
    return false;
#endif
}

static void epilogue_rows(void *arg, int64_t lo, int64_t hi) {
    const int8_rows *j = arg;
    const onednn_matmul_desc *d = j->d;
    if (epilogue_rows_fused(j, lo, hi)) return;
    float *y = j->y + (lo - j->y0) * j->N;
    int64_t n = (hi - lo) * j->N;
    cpu_dequant_rows(y, hi - lo, j->N, j->N, j->e->qa_scale + lo, j->e->qa_zp + lo, j->e->qa_colw,
                     j->bias, j->avx512);
    if (d->has_residual) j->k->binary_f32(CPU_BIN_ADD, y, 1, j->residual + lo * j->N, 1, y, n);
    epilogue_act(j, y, n);
    if (j->yq) /* rows of the block, while they are in cache; scales after */
        cpu_quant_rows_u8(y, hi - lo, j->N, j->N, 255, j->avx512, j->yq + lo * j->N,
                          j->e->qy_scale + lo, j->e->qy_zp + lo);
    if (j->ybf) cpu_f32_to_bf16(y, j->ybf + lo * j->N, n);
}

/* rows of at least ~16K elements per chunk */
static int64_t rows_grain(int64_t width) { return width >= 16384 ? 1 : 16384 / width; }

/* epilogue_rows on rows [lo, hi) of the block that starts at row y0 */
static void epilogue_block(void *arg, int64_t lo, int64_t hi) {
    const int8_rows *j = arg;
    epilogue_rows(arg, lo + j->y0, hi + j->y0);
}

static mopt_status matmul_entry(cache_entry *e, const cache_key *key, const float *b);

/* The INT8 product of A's quantized rows (qa) in blocks of e->blk rows, each
 * block's epilogue run while its f32 Y (in Y itself, or in e->yblk when Y
 * is a u8 rows block or bf16) is still in L2: the f32 Y of the whole
 * product (4 MB at [1024, 1024]) is never written out and read back. Each
 * block size is its own cached primitive (the last block's too). The same
 * bits as one product then the epilogue (int32 sums, the same per-element
 * operations). */
static mopt_status int8_blocked(onednn_cache **cache, cache_entry *e, const onednn_matmul_desc *d,
                                const onednn_weights *w, int8_rows *job, const uint8_t *qa,
                                const float *b, float *y, int threads) {
    int64_t rows = e->qa_n / job->K, N = job->N;
    for (int64_t lo = 0; lo < rows; lo += e->blk) {
        int64_t n = rows - lo < e->blk ? rows - lo : e->blk;
        onednn_matmul_desc bd;
        int8_block_desc(d, n, &bd);
        cache_entry *be = NULL; /* e stays: it was used last, so it is not the LRU slot */
        mopt_status st =
            entry_get(cache, KIND_MATMUL, threads, w, &bd, sizeof bd, matmul_entry, b, &be);
        if (st) return st;
        float *yb = e->yblk ? e->yblk : y + lo * N;
        bool ok = dnnl_memory_set_data_handle(be->p.src.user, (void *)(qa + lo * job->K)) ==
                      dnnl_success &&
                  dnnl_memory_set_data_handle(be->p.dst.user, yb) == dnnl_success;
        dnnl_exec_arg_t args[4];
        int na = 0;
        args[na++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, be->p.src.prim};
        args[na++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, be->p.wei};
        args[na++] = (dnnl_exec_arg_t){DNNL_ARG_DST, be->p.dst.user};
        if (be->p.scratch) args[na++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, be->p.scratch};
        if (ok) ok = exec(*cache, be->p.prim, na, args);
        if (ok) ok = dnnl_stream_wait((*cache)->stream) == dnnl_success;
        if (!ok) return mopt_fail(MOPT_ERR_INTERNAL, "oneDNN: matmul execution failed");
        job->y = yb;
        job->y0 = lo;
        cpu_parallel_for(threads, n, rows_grain(N), epilogue_block, job);
    }
    if (job->yq) cpu_rowq_put(job->yq, rows, N, e->qy_scale, e->qy_zp);
    return MOPT_OK;
}

/* entry_build of a matmul (b: B as stored). */
static mopt_status matmul_entry(cache_entry *e, const cache_key *key, const float *b) {
    const onednn_matmul_desc *d = &key->u.mm;
    const onednn_weights *w = key->w;
    dnnl_memory_desc_t plain_b, user_a;
    bool bf = d->prec == ONEDNN_BF16;
    if (!matmul_plain_b(d, &plain_b) ||
        !md_strided(&user_a, &d->a, bf && d->a_bf16 ? dnnl_bf16 : dnnl_f32))
        return MOPT_ERR_UNSUPPORTED;
    dnnl_primitive_desc_t pd = NULL;
    const dnnl_memory_desc_t *wmd = NULL;
    bool packed = false;
    if (d->prec == ONEDNN_INT8) { /* needs B quantized at build */
        if (!w || !w->scales || !dnnl_memory_desc_equal(&w->plain, &plain_b))
            return MOPT_ERR_UNSUPPORTED;
        return matmul_entry_int8(e, d, w, key->threads);
    }
    const char *what = d->prec == ONEDNN_BF16 ? "matmul (bf16)" : "matmul";
    /* a given weights layout (prepacked for another shape, or the stored
     * one) must never force a reference implementation on this shape: then
     * B is reordered from its plain copy for this shape (issue 10) */
    if (w && dnnl_memory_desc_equal(&w->plain, &plain_b)) {
        pd = pd_unless_ref(matmul_pd(d, &w->md, NULL), what, "prepacked");
        packed = pd != NULL;
    }
    dnnl_memory_desc_t plain_c; /* the stored layout in the compute type */
    if (!pd && d->plain_w && md_strided(&plain_c, &d->b, dt_of(d->prec)))
        pd = pd_unless_ref(matmul_pd(d, &plain_c, NULL), what, "stored");
    if (!pd && !d->plain_w && d->prec == ONEDNN_F32)
        pd = pd_unless_ref(matmul_pd(d, &plain_b, NULL), what, "stored");
    if (!pd) pd = matmul_pd(d, NULL, NULL); /* weights reordered below */
    if (!pd) return MOPT_ERR_UNSUPPORTED;
    mopt_status st = entry_prim(e, pd, what);
    bool ok = st == MOPT_OK;
    wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    if (ok && packed) {
        ok = dnnl_memory_create(&e->p.wei, wmd, g_engine, w->data) == dnnl_success;
    } else if (ok && dnnl_memory_desc_equal(wmd, &plain_b)) {
        ok = mem_new(&e->p.wei, wmd);
        e->p.wei_from_input = true;
    } else if (ok && d->b_const) {
        ok = alloc_mem(&e->p.wei, wmd, &e->p.own_w) && reorder_now(&plain_b, b, wmd, e->p.own_w);
    } else if (ok) {
        ok = port_init(&e->wport, &plain_b, wmd, true);
    }
    const dnnl_memory_desc_t *src_md = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    if (ok) ok = port_init(&e->p.src, &user_a, src_md, true);
    if (ok) ok = mem_new(&e->p.dst.user, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0));
    e->p.dst.prim = e->p.dst.user;
    dnnl_memory_desc_t md;
    if (ok && d->has_bias) ok = md_strided(&md, &d->bias, dnnl_f32) && mem_new(&e->p.bias, &md);
    if (ok && d->has_residual)
        ok = md_strided(&md, &d->residual, bf && d->res_bf16 ? dnnl_bf16 : dnnl_f32) &&
             mem_new(&e->p.bin, &md);
    dnnl_primitive_desc_destroy(pd);
    return st ? st : ok ? MOPT_OK : MOPT_ERR_UNSUPPORTED;
}

static mopt_status matmul_run_body(onednn_cache **cache, const onednn_matmul_desc *d,
                                   const onednn_weights *w, const float *a, const float *b,
                                   const float *bias, const float *residual, float *y,
                                   int threads) {
    if (!onednn_available() || !matmul_valid(d)) return MOPT_ERR_UNSUPPORTED;
    cache_entry *e = NULL;
    mopt_status st = entry_get(cache, KIND_MATMUL, threads, w, d, sizeof *d, matmul_entry, b, &e);
    if (st) return st;
    onednn_cache *c = *cache;
    /* INT8 in blocks: no primitive (and no memories) of its own */
    bool ok = (e->int8 && e->blk) ||
              dnnl_memory_set_data_handle(e->p.dst.user, e->qy ? (void *)e->qy : (void *)y) ==
                  dnnl_success;
    int8_rows job;
    if (e->int8) {
        int8_rows_init(&job, e, d);
        job.a = a;
        if (d->a_u8) { /* quantized by its producer: the block's scales */
            cpu_rowq_get((const uint8_t *)a, e->qa_n / job.K, job.K, e->qa_scale, e->qa_zp);
            if (ok && !e->blk)
                ok = dnnl_memory_set_data_handle(e->p.src.user, (void *)a) == dnnl_success;
        } else {
            cpu_parallel_for(threads, e->qa_n / job.K, rows_grain(job.K), quantize_rows, &job);
        }
        if (e->blk) {
            job.bias = d->has_bias ? bias : NULL;
            job.residual = residual;
            job.yq = d->y_u8 ? (uint8_t *)y : NULL;
            job.ybf = d->y_bf16 ? (uint16_t *)(void *)y : NULL;
            return int8_blocked(cache, e, d, w, &job, d->a_u8 ? (const uint8_t *)a : e->qa, b, y,
                                threads);
        }
    } else if (ok)
        ok = dnnl_memory_set_data_handle(e->p.src.user, (void *)a) == dnnl_success;
    if (ok && e->p.wei_from_input)
        ok = dnnl_memory_set_data_handle(e->p.wei, (void *)b) == dnnl_success;
    if (ok && e->p.bias) ok = dnnl_memory_set_data_handle(e->p.bias, (void *)bias) == dnnl_success;
    if (ok && e->p.bin)
        ok = dnnl_memory_set_data_handle(e->p.bin, (void *)residual) == dnnl_success;
    if (ok && e->p.src.reorder) ok = run_reorder(c, e->p.src.reorder, e->p.src.user, e->p.src.prim);
    if (ok && e->wport.reorder)
        ok = dnnl_memory_set_data_handle(e->wport.user, (void *)b) == dnnl_success &&
             run_reorder(c, e->wport.reorder, e->wport.user, e->wport.prim);
    dnnl_exec_arg_t args[9];
    int n = 0;
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, e->p.src.prim};
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, e->wport.prim ? e->wport.prim : e->p.wei};
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_DST, e->p.dst.user};
    int post = d->sum_beta != 0.f ? 1 : 0; /* index of the first binary post-op */
    if (e->p.bias && bias_as_post_op(d))
        args[n++] =
            (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(post++) | DNNL_ARG_SRC_1, e->p.bias};
    else if (e->p.bias)
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, e->p.bias};
    if (e->p.bin)
        args[n++] =
            (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(post) | DNNL_ARG_SRC_1, e->p.bin};
    if (e->p.scratch) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, e->p.scratch};
    if (ok) ok = exec(c, e->p.prim, n, args);
    if (ok) ok = dnnl_stream_wait(c->stream) == dnnl_success;
    if (!ok) return mopt_fail(MOPT_ERR_INTERNAL, "oneDNN: matmul execution failed");
    if (e->int8) {
        int64_t rows = e->qa_n / job.K;
        job.bias = d->has_bias ? bias : NULL;
        job.residual = residual;
        job.y = e->qy ? e->qy : y;
        job.yq = d->y_u8 ? (uint8_t *)y : NULL;
        job.ybf = d->y_bf16 ? (uint16_t *)(void *)y : NULL;
        cpu_parallel_for(threads, rows, rows_grain(job.N), epilogue_rows, &job);
        if (job.yq) cpu_rowq_put(job.yq, rows, job.N, e->qy_scale, e->qy_zp);
    }
    return MOPT_OK;
}

mopt_status onednn_matmul_run(onednn_cache **cache, const onednn_matmul_desc *d,
                              const onednn_weights *w, const float *a, const float *b,
                              const float *bias, const float *residual, float *y, int threads) {
    onednn_matmul_desc f;
    if (matmul_fold(d, &f)) d = &f;
    int host = mopt_omp_enter(threads);
    mopt_status st = matmul_run_body(cache, d, w, a, b, bias, residual, y, threads);
    mopt_omp_leave(host, threads);
    return st;
}

/* ---- conv run ----------------------------------------------------------- */

/* A conv or deconv entry's weights and its X and Y ports: `packed`'s data
 * (prepacked weights pd takes), else the op's input as stored when pd takes
 * that layout (plain_w), else wplain reordered into the entry now. */
static bool conv_entry_mems(cache_entry *e, dnnl_primitive_desc_t pd, const onednn_weights *packed,
                            const dnnl_memory_desc_t *plain_w, const float *wplain,
                            const dnnl_memory_desc_t *user_x, const dnnl_memory_desc_t *user_y) {
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    bool ok;
    if (packed) {
        ok = dnnl_memory_create(&e->p.wei, wmd, g_engine, packed->data) == dnnl_success;
    } else if (dnnl_memory_desc_equal(wmd, plain_w)) {
        ok = mem_new(&e->p.wei, wmd);
        e->p.wei_from_input = true;
    } else {
        ok =
            alloc_mem(&e->p.wei, wmd, &e->p.own_w) && reorder_now(plain_w, wplain, wmd, e->p.own_w);
    }
    const dnnl_memory_desc_t *xmd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *ymd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    return ok && port_init(&e->p.src, user_x, xmd, true) &&
           port_init(&e->p.dst, user_y, ymd, false);
}

/* entry_build of a convolution (wplain: W as stored). */
static mopt_status conv_entry(cache_entry *e, const cache_key *key, const float *wplain) {
    const onednn_conv_desc *d = &key->u.cv;
    const onednn_weights *w = key->w;
    int64_t xd[5], wd[6], yd[5];
    int32_t wnd, nd = 2 + d->S;
    conv_dims(d, xd, wd, &wnd, yd);
    dnnl_memory_desc_t plain_w, user_x, user_y, user_res;
    dnnl_data_type_t bf = dnnl_bf16, f = dnnl_f32;
    if (!conv_plain_w(d, &plain_w, dnnl_f32) ||
        !md_user(&user_x, nd, xd, d->x_bf16 ? bf : f, d->x_nhwc, d->x_blk) ||
        !md_user(&user_y, nd, yd, d->y_bf16 ? bf : f, d->y_nhwc, d->y_blk) ||
        !md_user(&user_res, nd, yd, d->res_bf16 ? bf : f, d->y_nhwc, d->y_blk))
        return MOPT_ERR_UNSUPPORTED;
    dnnl_primitive_desc_t pd = NULL;
    bool packed = false;
    const char *what = d->prec == ONEDNN_BF16 ? "convolution (bf16)" : "convolution";
    /* Winograd first when asked (W prepacked for it when its layout is this
     * shape's), else the direct convolution below */
    bool wino = (pd = conv_wino_pd(d, NULL, &e->act_after)) != NULL;
    if (wino) {
        const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        packed =
            w && dnnl_memory_desc_equal(&w->plain, &plain_w) && dnnl_memory_desc_equal(&w->md, wmd);
        what = "convolution (winograd)";
    }
    /* W prepacked for the load-time guess of the shape (or kept as stored)
     * must never force a reference implementation on this shape: then it is
     * reordered from the plain weights for this shape, once, into this
     * entry (issue 10). Channels-last X/Y are first offered to the primitive
     * as they are (no reorder), then oneDNN picks (reorders in the ports). */
    dnnl_memory_desc_t plain_c; /* the stored layout in the compute type */
    bool has_plain_c = d->plain_w && conv_plain_w(d, &plain_c, dt_of(d->prec));
    for (int forced = pd ? -1 : conv_forced_ok(d); !pd && forced >= 0; forced--) {
        if (w && dnnl_memory_desc_equal(&w->plain, &plain_w)) {
            pd = pd_unless_ref(conv_pd_as(d, &w->md, forced), what, "prepacked");
            packed = pd != NULL;
        }
        if (!pd && has_plain_c) pd = pd_unless_ref(conv_pd_as(d, &plain_c, forced), what, "stored");
        /* weights reordered below */
        if (!pd && forced) pd = pd_unless_ref(conv_pd_as(d, NULL, true), what, "channels-last");
    }
    if (!pd) pd = conv_pd(d, NULL); /* weights reordered below */
    if (!pd) return MOPT_ERR_UNSUPPORTED;
    mopt_status st = entry_prim(e, pd, what);
    bool ok = st == MOPT_OK;
    if (ok && wino) atomic_fetch_add(&g_wino_count, 1);
    if (ok && d->prec == ONEDNN_BF16) conv_bf16_note(d, pd);
    if (ok) ok = conv_entry_mems(e, pd, packed ? w : NULL, &plain_w, wplain, &user_x, &user_y);
    /* the residual into the primitive's Y: reordered when Y's layout or
     * storage type differs from it, else copied (conv_run_body) */
    if (ok && d->has_residual && (e->p.dst.reorder || d->res_bf16 != d->y_bf16)) {
        const dnnl_memory_desc_t *ymd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
        ok = mem_new(&e->p.res_user, &user_res) && reorder_prim(&e->p.res_reorder, &user_res, ymd);
    }
    dnnl_memory_desc_t bmd;
    if (ok && d->has_bias) ok = md_dense(&bmd, 1, &d->c_out, dnnl_f32) && mem_new(&e->p.bias, &bmd);
    dnnl_primitive_desc_destroy(pd);
    return st ? st : ok ? MOPT_OK : MOPT_ERR_UNSUPPORTED;
}

typedef struct act_job {
    const cpu_kernels *k;
    cpu_unop op;
    cpu_unary_params p;
    float *y;
    const float *post; /* {scale, shift} after the activation, or NULL */
} act_job;

static void act_range(void *arg, int64_t lo, int64_t hi) {
    const act_job *j = arg;
    if (j->op != (cpu_unop)KN_ACT_NONE)
        j->k->unary_f32(j->op, j->y + lo, j->y + lo, hi - lo, &j->p);
    if (!j->post) return;
    const float a = j->post[0], b = j->post[1];
    float *y = j->y;
    for (int64_t i = lo; i < hi; i++)
        y[i] = y[i] * a + b;
}

/* d's activation (when act) then its post affine on Y (n floats) in place,
 * with the AVX-512 unary kernels (the Winograd primitives exist only on
 * AVX-512 machines; elsewhere the portable ones). */
static void conv_act_after(const onednn_conv_desc *d, bool act, float *y, int threads) {
    int64_t n = d->batch * d->c_out;
    for (int32_t i = 0; i < d->S; i++)
        n *= d->out[i];
    float post[2] = {d->post_scale, d->post_shift};
    act_job j = {cpu_kernels_for("avx512"),
                 (cpu_unop)(act ? d->act : KN_ACT_NONE),
                 {d->act_alpha, d->act_beta},
                 y,
                 d->has_post ? post : NULL};
    if (!j.k) j.k = &cpu_kernels_portable;
    cpu_parallel_for(threads, n, 16384, act_range, &j);
}

static mopt_status conv_run_body(onednn_cache **cache, const onednn_conv_desc *d,
                                 const onednn_weights *w, const float *x, const float *wplain,
                                 const float *bias, const float *residual, float *y, int threads) {
    if (!onednn_available() || !conv_valid(d)) return MOPT_ERR_UNSUPPORTED;
    /* bf16 storage: BF16 convolutions only, the epilogue all in the
     * primitive (Winograd and a post affine after it run on f32 Y) */
    if ((d->x_bf16 || d->y_bf16 || d->res_bf16) &&
        (d->prec != ONEDNN_BF16 || (d->y_bf16 && d->has_post && !post_in_prim(d)) ||
         (d->has_residual && y == residual && d->res_bf16 != d->y_bf16)))
        return MOPT_ERR_UNSUPPORTED;
    cache_entry *e = NULL;
    mopt_status st = entry_get(cache, KIND_CONV, threads, w, d, sizeof *d, conv_entry, wplain, &e);
    if (st) return st;
    onednn_cache *c = *cache;
    bool ok = conv_bind(c, e, x, wplain, bias, y);
    if (ok && d->has_residual) {
        if (e->p.res_reorder) {
            ok = dnnl_memory_set_data_handle(e->p.res_user, (void *)residual) == dnnl_success &&
                 run_reorder(c, e->p.res_reorder, e->p.res_user, e->p.dst.prim);
        } else if (y != residual) { /* else in place: the residual is Y already */
            size_t n = (size_t)d->batch * (size_t)d->c_out;
            for (int32_t i = 0; i < d->S; i++)
                n *= (size_t)d->out[i];
            memcpy(y, residual, n * (d->y_bf16 ? sizeof(uint16_t) : sizeof(float)));
        }
    }
    if (ok) ok = conv_exec(c->stream, &e->p);
    if (!ok) return mopt_fail(MOPT_ERR_INTERNAL, "oneDNN: convolution execution failed");
    if (e->act_after)
        conv_act_after(d, true, y, threads);
    else if (d->has_post && !post_in_prim(d))
        conv_act_after(d, false, y, threads); /* the post affine only */
    return MOPT_OK;
}

mopt_status onednn_conv_run(onednn_cache **cache, const onednn_conv_desc *d,
                            const onednn_weights *w, const float *x, const float *wplain,
                            const float *bias, const float *residual, float *y, int threads) {
    int host = mopt_omp_enter(threads);
    mopt_status st = conv_run_body(cache, d, w, x, wplain, bias, residual, y, threads);
    mopt_omp_leave(host, threads);
    return st;
}

/* ---- transposed convolution (deconvolution) ----------------------------- */

/* oneDNN's deconvolution takes weights [g, c_out/g, c_in/g, k...]; ONNX
 * stores ConvTranspose's W as [c_in, c_out/g, k...] = [g, c_in/g, c_out/g,
 * k...]: the stored layout is the logical one with the two channel axes'
 * strides swapped. No kernel flip: oneDNN's deconvolution is the backward
 * data pass of a convolution, y[o*s - pl + k*d] += x[i] * w[i, o, k], which
 * is ONNX's definition. */
static bool deconv_plain_w(const onednn_conv_desc *d, dnnl_memory_desc_t *md, dnnl_data_type_t dt) {
    onednn_td t;
    int64_t ksz = 1, og = d->c_out / d->group, ig = d->c_in / d->group;
    for (int32_t i = 0; i < d->S; i++)
        ksz *= d->k[i];
    int32_t o = 0;
    if (d->group > 1) {
        t.dims[o] = d->group;
        t.strides[o++] = ig * og * ksz;
    }
    t.dims[o] = og;
    t.strides[o++] = ksz;
    t.dims[o] = ig;
    t.strides[o++] = og * ksz;
    int64_t s = ksz;
    for (int32_t i = 0; i < d->S; i++) {
        s /= d->k[i];
        t.dims[o] = d->k[i];
        t.strides[o++] = s;
    }
    t.ndims = o;
    return md_strided(md, &t, dt);
}

static bool deconv_valid(const onednn_conv_desc *d) {
    bool ok = conv_valid_sizes(d, false);
    for (int32_t i = 0; ok && i < d->S; i++)
        ok = d->pad_l[i] >= 0 && (d->in[i] - 1) * d->stride[i] + (d->k[i] - 1) * d->dilation[i] +
                                         1 - d->pad_l[i] - d->pad_r[i] ==
                                     d->out[i];
    return ok;
}

/* As conv_pd, for the deconvolution; plain_io: X and Y in the user's plain
 * layout instead of `any`. */
static dnnl_primitive_desc_t deconv_pd_as(const onednn_conv_desc *d, const dnnl_memory_desc_t *wmd,
                                          bool plain_io) {
    int64_t xd[5], wd[6], yd[5];
    int32_t wnd, nd = 2 + d->S;
    conv_dims(d, xd, wd, &wnd, yd);
    dnnl_data_type_t dt = dt_of(d->prec);
    dnnl_memory_desc_t x, y;
    bool ok = plain_io ? md_dense(&x, nd, xd, dt) && md_dense(&y, nd, yd, dnnl_f32)
                       : md_any(&x, nd, xd, dt) && md_any(&y, nd, yd, dnnl_f32);
    dnnl_deconvolution_desc_t dd;
    if (!ok || !conv_fwd_desc(d, true, dnnl_deconvolution_direct, &x, wmd, dt, &y, &dd))
        return NULL;
    return pd_of(
        &dd, make_attr(1.f, 0, NULL, 0, 0.f, NULL, NULL, d->act, d->act_alpha, d->act_beta, NULL));
}

/* With fewer than 16 output channels per group, oneDNN's blocked layouts
 * (aBcd16b) pad Y's channels to 16: PP-OCRv4 det's last ConvTranspose (24 -> 1
 * channel, 2x2 stride 2, 160x160 -> 320x320) wrote and reordered a 16x larger
 * Y, 1.0 ms + the reorder, against 0.16 ms on plain NCHW data (gemm-based
 * x64:gemm:jit, no reorder; 1 thread, Zen 4). Such f32 problems ask for plain
 * X and Y first, and keep the answer unless it is a reference
 * implementation. */
static dnnl_primitive_desc_t deconv_pd(const onednn_conv_desc *d, const dnnl_memory_desc_t *wmd) {
    if (d->prec == ONEDNN_F32 && d->c_out / d->group < 16) {
        dnnl_primitive_desc_t pd = deconv_pd_as(d, wmd, true);
        if (pd && !pd_is_ref(pd)) return pd;
        if (pd) dnnl_primitive_desc_destroy(pd);
    }
    return deconv_pd_as(d, wmd, false);
}

/* The primitive whose weight layout a convolution's W is packed for at
 * load: Winograd when d asks for it, else the channels-last variant unless
 * it is a reference implementation, else conv_pd. stored: W as stored, in
 * the compute type (NULL: oneDNN picks). */
static dnnl_primitive_desc_t conv_pack_pd(const onednn_conv_desc *d,
                                          const dnnl_memory_desc_t *stored) {
    if (d->wino) {
        bool after;
        if (g_verbose && wino_geometry(d) && !wino_pays(d))
            mopt_log(MOPT_LOG_INFO,
                     "mopt: oneDNN convolution %lld -> %lld channels: direct, not Winograd "
                     "(c_in*c_out/(c_in+c_out) < %d on this non-AMD CPU)",
                     (long long)d->c_in, (long long)d->c_out, WINO_INTEL_MIN_HARMONIC);
        return conv_wino_pd(d, NULL, &after);
    }
    dnnl_primitive_desc_t pd = NULL;
    if (conv_forced_ok(d)) pd = conv_pd_as(d, stored, true);
    if (pd && pd_is_ref(pd)) {
        dnnl_primitive_desc_destroy(pd);
        pd = NULL;
    }
    return pd ? pd : conv_pd(d, stored);
}

/* W [the plain layout of the convolution, or of the deconvolution when
 * transposed] packed for the primitive picked for d, or kept as stored
 * when d->plain_w. */
static mopt_status conv_family_pack_body(const onednn_conv_desc *d, bool transposed, const float *w,
                                         onednn_weights **out) {
    *out = NULL;
    bool valid = transposed ? deconv_valid(d) && !d->has_residual : conv_valid(d);
    if (!onednn_available() || !valid) return MOPT_ERR_UNSUPPORTED;
    bool (*plain_w)(const onednn_conv_desc *, dnnl_memory_desc_t *, dnnl_data_type_t) =
        transposed ? deconv_plain_w : conv_plain_w;
    dnnl_memory_desc_t plain, plain_c; /* plain_c: the stored layout in the compute type */
    if (!plain_w(d, &plain, dnnl_f32) || !plain_w(d, &plain_c, dt_of(d->prec)))
        return MOPT_ERR_UNSUPPORTED;
    const dnnl_memory_desc_t *stored = d->plain_w ? &plain_c : NULL;
    dnnl_primitive_desc_t pd = transposed ? deconv_pd(d, stored) : conv_pack_pd(d, stored);
    /* Winograd always packs W into its own layout */
    bool keep_stored = d->plain_w && (transposed || !d->wino);
    return pack_for(pd, keep_stored, &plain, &plain_c, w, out);
}

/* onednn_conv_pack and onednn_deconv_pack: the body with `threads` OpenMP threads */
static mopt_status conv_family_pack(const onednn_conv_desc *d, bool transposed, const float *w,
                                    int threads, onednn_weights **out) {
    int host = mopt_omp_enter(threads);
    mopt_status st = conv_family_pack_body(d, transposed, w, out);
    mopt_omp_leave(host, threads);
    return st;
}

mopt_status onednn_conv_pack(const onednn_conv_desc *d, const float *w, int threads,
                             onednn_weights **out) {
    return conv_family_pack(d, false, w, threads, out);
}

mopt_status onednn_deconv_pack(const onednn_conv_desc *d, const float *w, int threads,
                               onednn_weights **out) {
    return conv_family_pack(d, true, w, threads, out);
}

/* entry_build of a deconvolution (wplain: W as stored). */
static mopt_status deconv_entry(cache_entry *e, const cache_key *key, const float *wplain) {
    const onednn_conv_desc *d = &key->u.cv;
    const onednn_weights *w = key->w;
    int64_t xd[5], wd[6], yd[5];
    int32_t wnd, nd = 2 + d->S;
    conv_dims(d, xd, wd, &wnd, yd);
    dnnl_memory_desc_t plain_w, user_x, user_y;
    if (!deconv_plain_w(d, &plain_w, dnnl_f32) || !md_dense(&user_x, nd, xd, dnnl_f32) ||
        !md_dense(&user_y, nd, yd, dnnl_f32))
        return MOPT_ERR_UNSUPPORTED;
    dnnl_primitive_desc_t pd = NULL;
    bool packed = false;
    if (w && dnnl_memory_desc_equal(&w->plain, &plain_w)) {
        pd = deconv_pd(d, &w->md);
        if (pd && pd_is_ref(pd)) { /* the layout packed for another shape: ask anew */
            dnnl_primitive_desc_destroy(pd);
            pd = NULL;
        }
        packed = pd != NULL;
    }
    dnnl_memory_desc_t plain_c;
    if (!pd && d->plain_w) {
        if (deconv_plain_w(d, &plain_c, dt_of(d->prec))) pd = deconv_pd(d, &plain_c);
    } else if (!pd) {
        pd = deconv_pd(d, NULL); /* weights reordered below */
    }
    if (!pd) return MOPT_ERR_UNSUPPORTED;
    bool ok =
        entry_prim(e, pd, d->prec == ONEDNN_BF16 ? "deconvolution (bf16)" : "deconvolution") ==
        MOPT_OK;
    if (ok) ok = conv_entry_mems(e, pd, packed ? w : NULL, &plain_w, wplain, &user_x, &user_y);
    dnnl_memory_desc_t bmd;
    if (ok && d->has_bias) ok = md_dense(&bmd, 1, &d->c_out, dnnl_f32) && mem_new(&e->p.bias, &bmd);
    dnnl_primitive_desc_destroy(pd);
    return ok ? MOPT_OK : MOPT_ERR_UNSUPPORTED;
}

static mopt_status deconv_run_body(onednn_cache **cache, const onednn_conv_desc *d,
                                   const onednn_weights *w, const float *x, const float *wplain,
                                   const float *bias, float *y, int threads) {
    if (!onednn_available() || !deconv_valid(d) || d->has_residual) return MOPT_ERR_UNSUPPORTED;
    cache_entry *e = NULL;
    mopt_status st =
        entry_get(cache, KIND_DECONV, threads, w, d, sizeof *d, deconv_entry, wplain, &e);
    if (st) return st;
    onednn_cache *c = *cache;
    bool ok = conv_bind(c, e, x, wplain, bias, y) && conv_exec(c->stream, &e->p);
    if (!ok) return mopt_fail(MOPT_ERR_INTERNAL, "oneDNN: deconvolution execution failed");
    return MOPT_OK;
}

mopt_status onednn_deconv_run(onednn_cache **cache, const onednn_conv_desc *d,
                              const onednn_weights *w, const float *x, const float *wplain,
                              const float *bias, float *y, int threads) {
    int host = mopt_omp_enter(threads);
    mopt_status st = deconv_run_body(cache, d, w, x, wplain, bias, y, threads);
    mopt_omp_leave(host, threads);
    return st;
}

/* ---- pooling ------------------------------------------------------------- */

static bool pool_valid(const onednn_pool_desc *d) {
    bool ok = d->S >= 1 && d->S <= 3 && d->batch > 0 && d->c > 0;
    for (int32_t i = 0; ok && i < d->S; i++)
        ok = d->in[i] > 0 && d->out[i] > 0 && d->k[i] > 0 && d->stride[i] > 0 &&
             d->dilation[i] > 0 && d->pad_l[i] >= 0 && d->pad_r[i] >= 0 &&
             (d->in[i] + d->pad_l[i] + d->pad_r[i] - (d->k[i] - 1) * d->dilation[i] - 1) /
                         d->stride[i] +
                     1 ==
                 d->out[i];
    return ok;
}

/* entry_build of a pooling. Source and destination in the user's plain
 * layout: pooling is memory bound, a reorder to a blocked layout and back
 * would cost as much. */
static mopt_status pool_entry(cache_entry *e, const cache_key *key, const float *unused) {
    const onednn_pool_desc *d = &key->u.pl;
    (void)unused;
    int64_t xd[5] = {d->batch, d->c}, yd[5] = {d->batch, d->c};
    int32_t nd = 2 + d->S;
    dnnl_dims_t strides, kernel, dil, pl, pr;
    for (int32_t i = 0; i < d->S; i++) {
        xd[2 + i] = d->in[i];
        yd[2 + i] = d->out[i];
        strides[i] = d->stride[i];
        kernel[i] = d->k[i];
        dil[i] = d->dilation[i] - 1;
        pl[i] = d->pad_l[i];
        pr[i] = d->pad_r[i];
    }
    dnnl_memory_desc_t x, y;
    if ((d->blk && (d->nhwc || d->c % 16)) || !md_user(&x, nd, xd, dnnl_f32, d->nhwc, d->blk) ||
        !md_user(&y, nd, yd, dnnl_f32, d->nhwc, d->blk) || !dnnl_pooling_v2_forward_desc_init)
        return MOPT_ERR_UNSUPPORTED;
    dnnl_alg_kind_t alg = d->max           ? dnnl_pooling_max
                          : d->include_pad ? dnnl_pooling_avg_include_padding
                                           : dnnl_pooling_avg_exclude_padding;
    dnnl_pooling_v2_desc_t pdesc;
    if (dnnl_pooling_v2_forward_desc_init(&pdesc, dnnl_forward_inference, alg, &x, &y, strides,
                                          kernel, dil, pl, pr) != dnnl_success)
        return MOPT_ERR_UNSUPPORTED;
    dnnl_primitive_desc_t pd =
        pd_of(&pdesc, make_attr(1.f, 0, NULL, 0, 0.f, NULL, NULL, KN_ACT_NONE, 0.f, 0.f, NULL));
    if (!pd) return MOPT_ERR_UNSUPPORTED;
    bool ok = entry_prim(e, pd, d->max ? "max pooling" : "average pooling") == MOPT_OK;
    if (ok) ok = mem_new(&e->p.src.user, &x) && mem_new(&e->p.dst.user, &y);
    e->p.src.prim = e->p.src.user;
    e->p.dst.prim = e->p.dst.user;
    dnnl_primitive_desc_destroy(pd);
    return ok ? MOPT_OK : MOPT_ERR_UNSUPPORTED;
}

static mopt_status pool_run_body(onednn_cache **cache, const onednn_pool_desc *d, const float *x,
                                 float *y, int threads) {
    if (!onednn_available() || !pool_valid(d)) return MOPT_ERR_UNSUPPORTED;
    cache_entry *e = NULL;
    mopt_status st = entry_get(cache, KIND_POOL, threads, NULL, d, sizeof *d, pool_entry, NULL, &e);
    if (st) return st;
    onednn_cache *c = *cache;
    bool ok = dnnl_memory_set_data_handle(e->p.src.user, (void *)x) == dnnl_success &&
              dnnl_memory_set_data_handle(e->p.dst.user, y) == dnnl_success;
    dnnl_exec_arg_t args[3];
    int n = 0;
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, e->p.src.user};
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_DST, e->p.dst.user};
    if (e->p.scratch) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, e->p.scratch};
    if (ok) ok = exec(c, e->p.prim, n, args);
    if (ok) ok = dnnl_stream_wait(c->stream) == dnnl_success;
    if (!ok) return mopt_fail(MOPT_ERR_INTERNAL, "oneDNN: pooling execution failed");
    return MOPT_OK;
}

mopt_status onednn_pool_run(onednn_cache **cache, const onednn_pool_desc *d, const float *x,
                            float *y, int threads) {
    int host = mopt_omp_enter(threads);
    mopt_status st = pool_run_body(cache, d, x, y, threads);
    mopt_omp_leave(host, threads);
    return st;
}

/* ---- shared with the backend's other files (onednn_priv.h) -------------- */

dnnl_engine_t onednn_priv_engine(void) { return onednn_available() ? g_engine : NULL; }

bool onednn_priv_verbose(void) { return g_verbose; }

dnnl_primitive_desc_t onednn_priv_pd_create(const void *op_desc, const_dnnl_primitive_attr_t attr) {
    return pd_create(op_desc, attr);
}

const char *onednn_priv_impl(dnnl_primitive_desc_t pd) { return pd_impl(pd); }

mopt_status onednn_priv_accept(dnnl_primitive_desc_t pd, const char *what) {
    return pd_accepted(pd, what);
}

dnnl_primitive_attr_t onednn_priv_attr_done(dnnl_primitive_attr_t attr, dnnl_post_ops_t po,
                                            bool ok) {
    return attr_done(attr, po, ok);
}

bool onednn_priv_append_act(dnnl_post_ops_t po, kn_act act, float alpha, float beta) {
    return append_act(po, act, alpha, beta);
}

bool onednn_priv_reorder_now(const dnnl_memory_desc_t *from_md, const void *from,
                             const dnnl_memory_desc_t *to_md, void *to) {
    return reorder_now(from_md, from, to_md, to);
}

bool onednn_priv_mem_new(dnnl_memory_t *m, const dnnl_memory_desc_t *md) { return mem_new(m, md); }

bool onednn_priv_mem_alloc(dnnl_memory_t *m, const dnnl_memory_desc_t *md, void **buf) {
    return alloc_mem(m, md, buf);
}

bool onednn_priv_reorder_prim(dnnl_primitive_t *r, const dnnl_memory_desc_t *from,
                              const dnnl_memory_desc_t *to) {
    return reorder_prim(r, from, to);
}

bool onednn_priv_port_init(io_port *p, const dnnl_memory_desc_t *user_md,
                           const dnnl_memory_desc_t *prim_md, bool input) {
    return port_init(p, user_md, prim_md, input);
}

mopt_status onednn_priv_stream_new(dnnl_stream_t *s) { return stream_new(s); }

bool onednn_priv_run_reorder(dnnl_stream_t s, dnnl_primitive_t r, dnnl_memory_t from,
                             dnnl_memory_t to) {
    return stream_reorder(s, r, from, to);
}

bool onednn_priv_conv_exec(dnnl_stream_t s, const onednn_entry *p) { return conv_exec(s, p); }
