/*
 * onednn_qconv.c — the static INT8 convolution on oneDNN (onednn.h's
 * onednn_qconv_*; issue 11): u8 source, s8 weights reordered once into the
 * blocked layout oneDNN's JIT kernels want, and the whole epilogue fused
 * into the primitive:
 *   output scales  scale[c] per channel (the s32 sum to f32),
 *   bias           bias[c] / scale[c] (oneDNN 2.x adds it before scaling),
 *   (bias)         X's zero point's share, -zp * sum(w[c]) (zp_in_bias; X
 *                  is padded by hand with its zero point where the window
 *                  reaches the padding: pad_x),
 *   sum post-op    the f32 residual, pre-loaded into Y (a u8 Y: see split_u8),
 *   eltwise        the activation,
 *   eltwise linear the post affine post_scale * y + post_shift (FusedConv's),
 *                  merged with the next one for a u8 Y,
 *   eltwise linear 1 / y_scale, + y_zp for a u8 Y (oneDNN rounds to
 *                  nearest even and saturates on the store).
 * Only JIT kernels are taken: a reference (`ref:`) or im2col (`gemm:`)
 * choice is declined, and our own kernels run (MOPT_VERBOSE says which).
 * Without VNNI oneDNN's u8 x s8 pairs saturate in s16 (vpmaddubsw), and our
 * weights are 8-bit: declined there too (onednn_int8_exact).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/log.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/rowquant.h"
#include "kernels/omp_threads.h"
#include "kernels/onednn/onednn_priv.h"

#define QCACHE_SIZE 32

struct onednn_qweights {
    dnnl_memory_desc_t md; /* the layout data is in */
    void *data;
    float *scales; /* per output channel */
    float *bias;   /* bias[c] / scales[c], or NULL */
    int64_t c_out;
};

/* ---- descriptors -------------------------------------------------------- */

/* A u8 Y with a residual, channels-last: the primitive writes f32 with the
 * residual as a sum post-op (a full-tensor binary one sends oneDNN 2.6 from
 * brgconv to its older jit_int8 kernels, 2.6x slower on 3x3 64->64 at 56x56),
 * and cpu_quantize_u8 (rowquant.h) makes the u8 Y in one pass. */
static bool split_u8(const onednn_qconv_desc *d) { return d->y_u8 && d->has_residual && d->y_nhwc; }

/* X's zero point where every tap of every output position lies inside X
 * (no padding reached, e.g. a 1x1 convolution): its share -zp * sum(w[c])
 * is one constant per channel, folded into the bias (a binary post-op would
 * send oneDNN from brgconv_1x1 to jit_int8_1x1; oneDNN's own src zero
 * points ran the ResNet stem 12x slower). Else pad_desc / pad_x first. */
static bool zp_in_bias(const onednn_qconv_desc *d) {
    if (d->x_zp == 0) return false;
    for (int32_t i = 0; i < d->S; i++)
        if (d->pad_l[i] != 0 ||
            (d->out[i] - 1) * d->stride[i] + (d->k[i] - 1) * d->dilation[i] >= d->in[i])
            return false;
    return true;
}

/* Whether X must be padded by hand (a zero point, and taps reaching the
 * padding); then p is d with its pads moved into the input sizes and the
 * element count of the padded X in *n. */
static bool pad_desc(const onednn_qconv_desc *d, onednn_qconv_desc *p, size_t *n) {
    if (d->x_zp == 0 || zp_in_bias(d)) return false;
    *p = *d;
    *n = (size_t)d->batch * (size_t)d->c_in;
    for (int32_t i = 0; i < d->S; i++) {
        p->in[i] = d->in[i] + d->pad_l[i] + d->pad_r[i];
        p->pad_l[i] = p->pad_r[i] = 0;
        *n *= (size_t)p->in[i];
    }
    return true;
}

static bool qd_valid(const onednn_qconv_desc *d) {
    if (d->S < 1 || d->S > 3 || d->batch <= 0 || d->c_in <= 0 || d->c_out <= 0 || d->group <= 0 ||
        d->c_in % d->group || d->c_out % d->group || d->x_zp < 0 || d->x_zp > 255)
        return false;
    if (d->y_u8 && (!(d->y_scale > 0) || d->y_zp < 0 || d->y_zp > 255)) return false;
    /* oneDNN 2.6 mixed a HardSigmoid's alpha/beta into the linear post-op
     * after it (onednn.c's post_in_prim): our kernels run that case */
    if (d->has_post && d->act == KN_ACT_HARD_SIGMOID) return false;
    for (int32_t i = 0; i < d->S; i++)
        if (d->in[i] <= 0 || d->out[i] <= 0 || d->k[i] <= 0 || d->stride[i] <= 0 ||
            d->dilation[i] <= 0 || d->pad_l[i] < 0 || d->pad_r[i] < 0)
            return false;
    return onednn_int8_exact();
}

static void qd_dims(const onednn_qconv_desc *d, int64_t *x, int64_t *w, int32_t *wnd, int64_t *y) {
    onednn_priv_conv_dims(ONEDNN_CONV_GEOM(d), x, w, wnd, y);
}

/* Dense (channels_last: [N, spatial..., C] in memory) layout of logical
 * [N, C, spatial...] dims. */
static bool md_of(dnnl_memory_desc_t *md, int32_t nd, const int64_t *dims, dnnl_data_type_t dt,
                  bool channels_last) {
    dnnl_dims_t dd, st;
    int64_t s = 1;
    if (channels_last) {
        s = dims[1];
        for (int32_t i = nd - 1; i >= 2; i--) {
            st[i] = s;
            s *= dims[i];
        }
        st[1] = 1;
        st[0] = s;
    } else {
        for (int32_t i = nd - 1; i >= 0; i--) {
            st[i] = s;
            s *= dims[i];
        }
    }
    for (int32_t i = 0; i < nd; i++)
        dd[i] = dims[i];
    return dnnl_memory_desc_init_by_strides(md, nd, dd, dt, st) == dnnl_success;
}

static bool md_any(dnnl_memory_desc_t *md, int32_t nd, const int64_t *dims, dnnl_data_type_t dt) {
    dnnl_dims_t dd;
    for (int32_t i = 0; i < nd; i++)
        dd[i] = dims[i];
    return dnnl_memory_desc_init_by_tag(md, nd, dd, dt, dnnl_format_tag_any) == dnnl_success;
}

/* The f32 residual of a u8 Y, as the binary post-op reads it: channels-last
 * (the layout oneDNN's int8 kernels write). */
static bool res_md(const onednn_qconv_desc *d, dnnl_memory_desc_t *md) {
    int64_t xd[5], wd[6], yd[5];
    int32_t wnd;
    qd_dims(d, xd, wd, &wnd, yd);
    return md_of(md, 2 + d->S, yd, dnnl_f32, true);
}

/* Post-ops: [sum (f32 Y) or binary add (u8 Y): the residual] [activation] [linear 1 / y_scale,
 * y_zp: u8 Y]. */
static dnnl_primitive_attr_t qd_attr(const onednn_qconv_desc *d, const float *scales) {
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success) return NULL;
    bool ok =
        dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success &&
        dnnl_primitive_attr_set_output_scales(attr, d->c_out, 1 << 1, scales) == dnnl_success;
    if (ok) ok = dnnl_post_ops_create(&po) == dnnl_success;
    dnnl_memory_desc_t rmd;
    if (ok && d->has_residual && d->y_u8 && !split_u8(d))
        ok = res_md(d, &rmd) &&
             dnnl_post_ops_append_binary(po, dnnl_binary_add, &rmd) == dnnl_success;
    else if (ok && d->has_residual)
        ok = dnnl_post_ops_append_sum(po, 1.f) == dnnl_success;
    if (ok) ok = onednn_priv_append_act(po, d->act, d->act_alpha, d->act_beta);
    /* the post affine a * y + b and the u8 store's y / y_scale + y_zp: one
     * linear post-op */
    float a = d->has_post ? d->post_scale : 1.f, b = d->has_post ? d->post_shift : 0.f;
    if (ok && d->y_u8 && !split_u8(d))
        ok = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_linear, a / d->y_scale,
                                          b / d->y_scale + (float)d->y_zp) == dnnl_success;
    else if (ok && d->has_post)
        ok = dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_linear, a, b) == dnnl_success;
    return onednn_priv_attr_done(attr, po, ok);
}

/* The primitive for d: X and Y as given (channels-last) when `forced`, else
 * in the layouts oneDNN picks; weights always its choice. */
static dnnl_primitive_desc_t qd_pd(const onednn_qconv_desc *d, const float *scales, bool forced) {
    int64_t xd[5], wd[6], yd[5];
    int32_t wnd, nd = 2 + d->S;
    qd_dims(d, xd, wd, &wnd, yd);
    dnnl_data_type_t ydt = d->y_u8 && !split_u8(d) ? dnnl_u8 : dnnl_f32;
    dnnl_memory_desc_t x, w, b, y;
    bool ok = forced && d->x_nhwc ? md_of(&x, nd, xd, dnnl_u8, true) : md_any(&x, nd, xd, dnnl_u8);
    ok = ok && (forced && d->y_nhwc ? md_of(&y, nd, yd, ydt, true) : md_any(&y, nd, yd, ydt));
    ok = ok && md_any(&w, wnd, wd, dnnl_s8);
    bool has_b = d->has_bias || zp_in_bias(d);
    if (ok && has_b) ok = md_of(&b, 1, &d->c_out, dnnl_f32, false);
    if (!ok) return NULL;
    dnnl_dims_t strides, dil, pl, pr;
    for (int32_t i = 0; i < d->S; i++) {
        strides[i] = d->stride[i];
        dil[i] = d->dilation[i] - 1;
        pl[i] = d->pad_l[i];
        pr[i] = d->pad_r[i];
    }
    dnnl_convolution_desc_t cd;
    if (dnnl_dilated_convolution_forward_desc_init(
            &cd, dnnl_forward_inference, dnnl_convolution_direct, &x, &w, has_b ? &b : NULL, &y,
            strides, dil, pl, pr) != dnnl_success)
        return NULL;
    dnnl_primitive_attr_t attr = qd_attr(d, scales);
    if (!attr) return NULL;
    dnnl_primitive_desc_t pd = onednn_priv_pd_create(&cd, attr);
    dnnl_primitive_attr_destroy(attr);
    return pd;
}

/* oneDNN's im2col + gemm convolution ("gemm:jit"): ours is as good, and a
 * JIT direct kernel is what this path is for. */
static bool pd_is_gemm(dnnl_primitive_desc_t pd) {
    return strncmp(onednn_priv_impl(pd), "gemm", 4) == 0;
}

/* The primitive for d, channels-last X/Y offered first; NULL (error set)
 * when oneDNN refuses, would use a reference kernel (counted, or INTERNAL
 * with MOPT_FAIL_ON_REF) or its gemm one. */
static mopt_status qd_pd_accepted(const onednn_qconv_desc *d, const float *scales,
                                  dnnl_primitive_desc_t *out) {
    *out = NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (d->x_nhwc || d->y_nhwc) {
        pd = qd_pd(d, scales, true);
        if (pd && (strncmp(onednn_priv_impl(pd), "ref", 3) == 0 || pd_is_gemm(pd))) {
            dnnl_primitive_desc_destroy(pd);
            pd = NULL;
        }
    }
    if (!pd) pd = qd_pd(d, scales, false);
    if (!pd) return mopt_fail(MOPT_ERR_UNSUPPORTED, "oneDNN: no int8 convolution for this problem");
    mopt_status st = onednn_priv_accept(pd, "int8 convolution");
    if (!st && pd_is_gemm(pd)) {
        st = mopt_fail(MOPT_ERR_UNSUPPORTED, "oneDNN int8 convolution: declined its %s kernel",
                       onednn_priv_impl(pd));
        if (onednn_priv_verbose())
            mopt_log(MOPT_LOG_INFO, "mopt: oneDNN int8 convolution: %s (im2col) declined",
                     onednn_priv_impl(pd));
    }
    if (st) {
        dnnl_primitive_desc_destroy(pd);
        return st;
    }
    *out = pd;
    return MOPT_OK;
}

static bool plain_w_md(const onednn_qconv_desc *d, dnnl_memory_desc_t *md) {
    int64_t xd[5], wd[6], yd[5];
    int32_t wnd;
    qd_dims(d, xd, wd, &wnd, yd);
    return md_of(md, wnd, wd, dnnl_s8, false);
}

/* ---- weights ------------------------------------------------------------ */

void onednn_qweights_free(onednn_qweights *w) {
    if (!w) return;
    mopt_aligned_free(w->data);
    mopt_free(w->scales);
    mopt_free(w->bias);
    mopt_free(w);
}

static mopt_status qpack_body(const onednn_qconv_desc *d, const int8_t *w, const float *scale,
                              const float *bias, onednn_qweights **out) {
    onednn_qweights *q = mopt_calloc(1, sizeof *q);
    if (!q) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "oneDNN: out of memory packing weights");
    q->c_out = d->c_out;
    q->scales = mopt_malloc((size_t)d->c_out * sizeof(float));
    if (bias) q->bias = mopt_malloc((size_t)d->c_out * sizeof(float));
    if (!q->scales || (bias && !q->bias)) {
        onednn_qweights_free(q);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "oneDNN: out of memory packing weights");
    }
    for (int64_t c = 0; c < d->c_out; c++) {
        q->scales[c] = scale[c];
        if (bias) q->bias[c] = scale[c] != 0.f ? bias[c] / scale[c] : 0.f;
    }
    dnnl_primitive_desc_t pd = NULL;
    mopt_status st = qd_pd_accepted(d, q->scales, &pd);
    dnnl_memory_desc_t plain;
    if (!st && !plain_w_md(d, &plain)) st = MOPT_ERR_UNSUPPORTED;
    if (!st) {
        q->md = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        size_t size = dnnl_memory_desc_get_size(&q->md);
        q->data = mopt_aligned_alloc(size ? size : 1);
        if (!q->data)
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "oneDNN: out of memory packing weights");
        else if (!onednn_priv_reorder_now(&plain, w, &q->md, q->data))
            st = mopt_fail(MOPT_ERR_UNSUPPORTED, "oneDNN: cannot reorder the int8 weights");
    }
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (st) {
        onednn_qweights_free(q);
        return st;
    }
    *out = q;
    return MOPT_OK;
}

mopt_status onednn_qconv_pack(const onednn_qconv_desc *d, const int8_t *w, const float *scale,
                              const float *bias, int threads, onednn_qweights **out) {
    *out = NULL;
    if (!onednn_available() || !qd_valid(d) || (d->has_bias != (bias != NULL)))
        return MOPT_ERR_UNSUPPORTED;
    onednn_qconv_desc p;
    size_t n;
    if (pad_desc(d, &p, &n)) d = &p; /* what the runs will ask for */
    int host = mopt_omp_enter(threads);
    mopt_status st = qpack_body(d, w, scale, bias, out);
    mopt_omp_leave(host, threads);
    return st;
}

/* ---- the per-session cache ---------------------------------------------- */

typedef struct qkey {
    onednn_qconv_desc d;
    const onednn_qweights *w;
    int threads;
} qkey;

typedef struct qentry {
    qkey key;
    bool used;
    uint64_t stamp;
    onednn_entry p; /* onednn_priv.h; bin: a u8 Y's residual as the binary post-op reads it */
    void *bin_buf;
    float *stage; /* split_u8: the f32 Y before cpu_quantize_u8 */
    float *fbias; /* zp_in_bias: the bias with X's zero point folded in */
} qentry;

struct onednn_qcache {
    dnnl_stream_t stream;
    uint64_t clock;
    qentry e[QCACHE_SIZE];
    uint8_t *xpad; /* pad_x's copy of X */
    size_t xpad_cap;
};

static void entry_free(qentry *e) {
    onednn_priv_entry_free(&e->p);
    mopt_aligned_free(e->bin_buf);
    mopt_aligned_free(e->stage);
    mopt_free(e->fbias);
    memset(e, 0, sizeof *e);
}

void onednn_qcache_free(onednn_qcache *c) {
    if (!c) return;
    for (int i = 0; i < QCACHE_SIZE; i++)
        if (c->e[i].used) entry_free(&c->e[i]);
    if (c->stream) dnnl_stream_destroy(c->stream);
    mopt_aligned_free(c->xpad);
    mopt_free(c);
}

static mopt_status entry_build(qentry *e, const onednn_qconv_desc *d, const onednn_qweights *w,
                               const int8_t *wplain) {
    int64_t xd[5], wd[6], yd[5];
    int32_t wnd, nd = 2 + d->S;
    qd_dims(d, xd, wd, &wnd, yd);
    dnnl_memory_desc_t plain_w, user_x, user_y, user_r, bmd;
    if (!plain_w_md(d, &plain_w) || !md_of(&user_x, nd, xd, dnnl_u8, d->x_nhwc) ||
        !md_of(&user_y, nd, yd, d->y_u8 && !split_u8(d) ? dnnl_u8 : dnnl_f32, d->y_nhwc) ||
        !md_of(&user_r, nd, yd, dnnl_f32, d->y_nhwc))
        return MOPT_ERR_UNSUPPORTED;
    dnnl_primitive_desc_t pd = NULL;
    mopt_status st = qd_pd_accepted(d, w->scales, &pd);
    if (st) return st;
    bool ok = dnnl_primitive_create(&e->p.prim, pd) == dnnl_success;
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (ok && smd && dnnl_memory_desc_get_size(smd) > 0)
        ok = onednn_priv_mem_alloc(&e->p.scratch, smd, &e->p.scratch_buf);
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    if (ok && dnnl_memory_desc_equal(wmd, &w->md)) {
        ok = dnnl_memory_create(&e->p.wei, wmd, onednn_priv_engine(), w->data) == dnnl_success;
    } else if (ok && dnnl_memory_desc_equal(wmd, &plain_w)) {
        ok = onednn_priv_mem_new(&e->p.wei, wmd);
        e->p.wei_from_input = true;
    } else if (ok) { /* reordered from the stored weights at the first run */
        ok = onednn_priv_mem_alloc(&e->p.wei, wmd, &e->p.own_w);
        e->p.wei_from_input = false;
    }
    const dnnl_memory_desc_t *xmd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *ymd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    if (ok) ok = onednn_priv_port_init(&e->p.src, &user_x, xmd, true);
    if (ok) ok = onednn_priv_port_init(&e->p.dst, &user_y, ymd, false);
    if (ok && split_u8(d)) { /* user_y is then the f32 stage */
        e->stage = mopt_aligned_alloc(dnnl_memory_desc_get_size(&user_y));
        ok = e->stage != NULL;
    }
    dnnl_memory_desc_t rmd;
    if (ok && d->has_residual && d->y_u8 && !split_u8(d)) { /* binary: in place if channels-last */
        ok = res_md(d, &rmd);
        if (ok && dnnl_memory_desc_equal(&rmd, &user_r))
            ok = onednn_priv_mem_new(&e->p.bin, &rmd);
        else if (ok)
            ok = onednn_priv_mem_alloc(&e->p.bin, &rmd, &e->bin_buf) &&
                 onednn_priv_mem_new(&e->p.res_user, &user_r) &&
                 onednn_priv_reorder_prim(&e->p.res_reorder, &user_r, &rmd);
    } else if (ok && d->has_residual && e->p.dst.reorder) {
        ok = onednn_priv_mem_new(&e->p.res_user, &user_r) &&
             onednn_priv_reorder_prim(&e->p.res_reorder, &user_r, ymd);
    }
    float *bias = w->bias;
    if (ok && zp_in_bias(d)) { /* bias / scale - zp * sum(w[c]), before the scales */
        ok = (e->fbias = mopt_malloc((size_t)d->c_out * sizeof(float))) != NULL;
        int64_t per = d->c_in / d->group;
        for (int32_t i = 0; i < d->S; i++)
            per *= d->k[i];
        for (int64_t c = 0; ok && c < d->c_out; c++) {
            int64_t s = 0;
            for (int64_t j = 0; j < per; j++)
                s += wplain[c * per + j];
            e->fbias[c] = (w->bias ? w->bias[c] : 0.f) - (float)((int64_t)d->x_zp * s);
        }
        bias = e->fbias;
    }
    if (ok && bias)
        ok = md_of(&bmd, 1, &d->c_out, dnnl_f32, false) &&
             dnnl_memory_create(&e->p.bias, &bmd, onednn_priv_engine(), bias) == dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    return ok ? MOPT_OK : mopt_fail(MOPT_ERR_UNSUPPORTED, "oneDNN: int8 convolution setup failed");
}

static bool run_reorder(onednn_qcache *c, dnnl_primitive_t r, dnnl_memory_t from,
                        dnnl_memory_t to) {
    return onednn_priv_run_reorder(c->stream, r, from, to);
}

static mopt_status cache_ensure(onednn_qcache **pc) {
    if (*pc) return MOPT_OK;
    onednn_qcache *c = mopt_calloc(1, sizeof *c);
    if (!c) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "oneDNN: out of memory");
    mopt_status st = onednn_priv_stream_new(&c->stream);
    if (st)
        mopt_free(c);
    else
        *pc = c;
    return st;
}

static mopt_status entry_get(onednn_qcache **pc, const onednn_qconv_desc *d,
                             const onednn_qweights *w, const int8_t *wplain, int threads,
                             qentry **out) {
    mopt_status st = cache_ensure(pc);
    if (st) return st;
    onednn_qcache *c = *pc;
    qkey key;
    memset(&key, 0, sizeof key);
    key.d = *d;
    key.w = w;
    key.threads = threads;
    qentry *lru = &c->e[0];
    c->clock++;
    for (int i = 0; i < QCACHE_SIZE; i++) {
        qentry *e = &c->e[i];
        if (e->used && memcmp(&e->key, &key, sizeof key) == 0) {
            e->stamp = c->clock;
            *out = e;
            return MOPT_OK;
        }
        if (!e->used || (lru->used && e->stamp < lru->stamp)) lru = e;
    }
    if (lru->used) entry_free(lru);
    st = entry_build(lru, d, w, wplain);
    if (!st && lru->p.own_w) { /* the packed layout does not fit this shape */
        dnnl_memory_desc_t plain;
        const dnnl_memory_desc_t *wmd = NULL;
        if (dnnl_memory_get_memory_desc(lru->p.wei, &wmd) != dnnl_success ||
            !plain_w_md(d, &plain) || !onednn_priv_reorder_now(&plain, wplain, wmd, lru->p.own_w))
            st = mopt_fail(MOPT_ERR_UNSUPPORTED, "oneDNN: cannot reorder the int8 weights");
    }
    if (st) {
        entry_free(lru);
        return st;
    }
    lru->key = key;
    lru->used = true;
    lru->stamp = c->clock;
    *out = lru;
    return MOPT_OK;
}

static size_t y_numel(const onednn_qconv_desc *d) {
    size_t n = (size_t)d->batch * (size_t)d->c_out;
    for (int32_t i = 0; i < d->S; i++)
        n *= (size_t)d->out[i];
    return n;
}

static mopt_status qrun_body(onednn_qcache **cache, const onednn_qconv_desc *d,
                             const onednn_qweights *w, const uint8_t *x, const int8_t *wplain,
                             const float *residual, void *y, int threads) {
    qentry *e = NULL;
    mopt_status st = entry_get(cache, d, w, wplain, threads, &e);
    if (st) return st;
    onednn_qcache *c = *cache;
    void *yf = e->stage ? (void *)e->stage : y; /* what the primitive's port writes */
    bool ok = dnnl_memory_set_data_handle(e->p.src.user, (void *)x) == dnnl_success &&
              dnnl_memory_set_data_handle(e->p.dst.user, yf) == dnnl_success;
    if (ok && e->p.wei_from_input)
        ok = dnnl_memory_set_data_handle(e->p.wei, (void *)wplain) == dnnl_success;
    if (ok && e->p.src.reorder) ok = run_reorder(c, e->p.src.reorder, e->p.src.user, e->p.src.prim);
    if (ok && d->has_residual && e->p.bin) {
        if (e->p.res_reorder)
            ok = dnnl_memory_set_data_handle(e->p.res_user, (void *)residual) == dnnl_success &&
                 run_reorder(c, e->p.res_reorder, e->p.res_user, e->p.bin);
        else
            ok = dnnl_memory_set_data_handle(e->p.bin, (void *)residual) == dnnl_success;
    } else if (ok && d->has_residual) {
        if (e->p.res_reorder)
            ok = dnnl_memory_set_data_handle(e->p.res_user, (void *)residual) == dnnl_success &&
                 run_reorder(c, e->p.res_reorder, e->p.res_user, e->p.dst.prim);
        else if (yf != residual)
            memcpy(yf, residual, y_numel(d) * sizeof(float));
    }
    /* bin: the residual's binary add, the first post-op */
    if (ok) ok = onednn_priv_conv_exec(c->stream, &e->p);
    if (!ok) return mopt_fail(MOPT_ERR_INTERNAL, "oneDNN: int8 convolution execution failed");
    if (e->stage) cpu_quantize_u8(e->stage, (int64_t)y_numel(d), d->y_scale, (float)d->y_zp, y);
    return MOPT_OK;
}

/* X padded by hand with its zero point (a real zero), into xp: then the
 * convolution has no padding and the zero point's share goes into the bias
 * (zp_in_bias). p: pad_desc's. */
static void pad_x(const onednn_qconv_desc *d, const onednn_qconv_desc *p, const uint8_t *x,
                  uint8_t *xp) {
    int32_t lead = 3 - d->S;
    int64_t in[3] = {1, 1, 1}, pin[3] = {1, 1, 1}, pl[3] = {0, 0, 0};
    for (int32_t i = 0; i < d->S; i++)
        in[lead + i] = d->in[i], pin[lead + i] = p->in[i], pl[lead + i] = d->pad_l[i];
    /* a unit: the C bytes of one position (channels-last) or one byte */
    size_t unit = d->x_nhwc ? (size_t)d->c_in : 1;
    int64_t planes = d->x_nhwc ? d->batch : d->batch * d->c_in;
    size_t row = (size_t)pin[2] * unit, pre = (size_t)pl[2] * unit, mid = (size_t)in[2] * unit;
    uint8_t zp = (uint8_t)d->x_zp;
    for (int64_t b = 0; b < planes; b++) {
        const uint8_t *src = x + (size_t)b * (size_t)(in[0] * in[1]) * mid;
        uint8_t *dst = xp + (size_t)b * (size_t)(pin[0] * pin[1]) * row;
        for (int64_t i0 = 0; i0 < pin[0]; i0++)
            for (int64_t i1 = 0; i1 < pin[1]; i1++, dst += row) {
                int64_t s0 = i0 - pl[0], s1 = i1 - pl[1];
                if (s0 < 0 || s0 >= in[0] || s1 < 0 || s1 >= in[1]) {
                    memset(dst, zp, row);
                    continue;
                }
                memset(dst, zp, pre);
                memcpy(dst + pre, src + (size_t)(s0 * in[1] + s1) * mid, mid);
                memset(dst + pre + mid, zp, row - pre - mid);
            }
    }
}

mopt_status onednn_qconv_run(onednn_qcache **cache, const onednn_qconv_desc *d,
                             const onednn_qweights *w, const uint8_t *x, const int8_t *wplain,
                             const float *residual, void *y, int threads) {
    if (!onednn_available() || !w || !qd_valid(d) || d->c_out != w->c_out ||
        d->has_bias != (w->bias != NULL))
        return MOPT_ERR_UNSUPPORTED;
    onednn_qconv_desc p;
    size_t n;
    if (pad_desc(d, &p, &n)) { /* pad X by hand: p has no padding */
        mopt_status st = cache_ensure(cache);
        if (st) return st;
        onednn_qcache *c = *cache;
        if (c->xpad_cap < n) {
            mopt_aligned_free(c->xpad);
            c->xpad_cap = 0;
            if (!(c->xpad = mopt_aligned_alloc(n)))
                return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "oneDNN: out of memory padding X");
            c->xpad_cap = n;
        }
        pad_x(d, &p, x, c->xpad);
        x = c->xpad;
        d = &p;
    }
    int host = mopt_omp_enter(threads);
    mopt_status st = qrun_body(cache, d, w, x, wplain, residual, y, threads);
    mopt_omp_leave(host, threads);
    return st;
}
