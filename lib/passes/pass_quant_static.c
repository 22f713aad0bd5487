/*
 * pass_quant_static.c — static INT8 from a calibration table (issue 13):
 *
 *   X (f32, in the table) -> MatMul | Gemm | Conv | mopt.FusedMatMul | mopt.FusedConv
 *                            (constant W, constant bias, f32 residual)
 *   =>  X -> mopt.StaticQMatMul | mopt.StaticQConv (qstatic.h)
 *
 * X is quantized to u8 with the table's scale and zero point (no run-time
 * min/max scan); W becomes s8, symmetric per output channel (max |w| / 127
 * per column of a product, per output channel of a convolution). Then,
 * where a static node's output is read only by static nodes as their X
 * (with only a fused activation between: the fusions before this pass put
 * it in the node) and all of them use the same table entry, the node
 * writes u8 with that quantization and they read it as is: the tensor
 * between stays int8. A node whose X is not in the table is left as it was
 * (precision=int8's dynamic path), said with MOPT_VERBOSE. A FusedConv's
 * post affine (post_scale/post_shift: a scalar Mul/Add after the
 * activation, PP-LCNet's learnable affine) goes with it: StaticQConv applies
 * it after the activation, before the u8 store (declining it left 28 of
 * PP-OCRv4 rec's 38 Convs FP32).
 *
 * A depthwise Conv (group = C_in, one input channel per group) whose X has
 * per-channel ranges in the table (channel_min/channel_max) gets one scale
 * per input channel (attribute x_channel_scales) with one zero point shared
 * by all (oneDNN takes only a common source zero point; it is chosen to
 * minimise the sum of the log scales): the channels of such inputs span
 * ranges 7-19x apart in PP-OCR rec, and one scale for the tensor left the
 * weak ones a few levels. Output channel o reads input channel o / (C_out /
 * group) only, so x_scale[c] folds into its per-output-channel scale and the
 * integer convolution is unchanged; only the quantization on entry is per
 * channel. Such a node never reads a u8 X from the node before it.
 *
 * By default a depthwise Conv stays float (issues 11/13): its int8 form
 * cannot be faster. Each output sums only its k x k taps of one channel
 * (9 or 25 multiply-adds), so the convolution is memory bound and VNNI's
 * 4-wide u8 x s8 dot products have nothing to reduce over; on top of it
 * the f32 X is quantized per channel on entry (it is never kept u8 from
 * the node before) and padded by hand with its zero point. On PP-OCRv4 rec
 * (Xeon, AVX-512 VNNI, 1 thread) oneDNN's int8 depthwise kernel alone
 * (brdgmm_dw) took 1.5-1.8x the time of its f32 one (jit_dw), and the
 * whole node 1.1-1.9x its FP32 FusedConv; our im2col + VNNI path is slower
 * still (a gemm of K = k x k per channel). MOPT_VERBOSE names each such
 * node with this reason; the option int8_depthwise=int8 (t->int8_depthwise)
 * makes them static int8 as before (the per-channel X scales above).
 *
 * On PP-OCRv4 det the float depthwise Convs lower the output's cosine to
 * FP32 (0.978 against 0.989, 6 pages). Not a wrong scale: both forms match
 * a numpy model of the table's quantization exactly. One node accounts for
 * it, p2o.Conv.3 (float alone: 0.981), through its X's quantization only:
 * the table's zero point for X (4 at scale 0.18, round(4.36)) puts the u8
 * floor at -0.719, above X's minimum -0.784; the per-channel ranges are
 * clipped to the tensor's, so 86% of channel 5 (near the hardswish
 * minimum) is clipped, +0.040 on its mean. That shift offsets part of the
 * mean (DC) error the int8 layers make on pages (mostly flat background:
 * X rounding is a bias there, not noise): the same +0.040 added to that
 * channel of an ONNX copy gives 0.991 with p2o.Conv.3 float (0.986 with
 * every depthwise Conv float) and costs FP32 alone 0.993. The rounding
 * correction below removes that mean error: 0.997 with them float.
 * See tools/mopt/README.md.
 *
 * No SmoothQuant for the Convs of group 1: folding per-channel X scales
 * (alpha 0.5-0.9) into W measured no better than bias correction alone on
 * PP-OCRv4 rec's selection lines (0.989 against 0.991, both renderers in
 * the calibration set) and cost ~4% CPU time (X quantized per channel on
 * entry, no u8 kept in between); see tools/mopt/README.md.
 *
 * Bias correction: where the table has X's channel means (channel_mean),
 * each Conv's bias loses the mean error its s8 weights make, sum over c, t
 * of (dequantized w - w)[o, c, t] * mean[c] * tap[t] (tap[t]: the share of
 * outputs for which tap t reads X, not padding, from X's spatial size in
 * the graph or as calibration saw it, `dims`). PP-OCRv4 rec, minmax:
 * 0.9840 -> 0.9879 (0.9882 with the padding share); 5 dB more SQNR on the
 * backbone's tensors.
 *
 * Rounding correction: where the table has X's channel_qerr (`mopt
 * calibrate --rounding-correction`: the mean of Q(x) - x per channel with
 * the table's scale and zero point), the bias also loses sum over c, t of
 * dequantized w[o, c, t] * qerr[c] * tap[t], the mean error X's rounding
 * makes (not for a depthwise Conv with per-channel X scales: its X is not
 * rounded with the table's scale). On inputs with flat regions the rounding
 * is a bias: PP-OCRv4 det's text pages, cosine to FP32 0.978 -> 0.997 with
 * the depthwise Convs float (0.989 -> 0.990 with them int8).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/log.h"
#include "passes/fusion.h"

static pass_qentry *qt_find(pass_qtable *t, const char *name) {
    for (int32_t i = 0; i < t->n; i++)
        if (strcmp(t->e[i].name, name) == 0) return &t->e[i];
    return NULL;
}

static bool is_mopt(const ir_node *n, const char *op) {
    return !n->dead && strcmp(n->domain, "mopt") == 0 && strcmp(n->op_type, op) == 0;
}

typedef struct qs_match {
    bool conv;
    bool trans_b;
    float alpha;
    int32_t bias, residual; /* values, or -1 */
} qs_match;

static bool const_f32(const ir_graph *g, int32_t v) {
    return v >= 0 && fu_is_const(g, v) && g->values[v]->dtype == MOPT_DTYPE_F32;
}

/* Whether n is a node this pass rewrites (apart from the table). */
static bool match(const fu_graph *f, const ir_node *n, qs_match *m) {
    const ir_graph *g = f->g;
    memset(m, 0, sizeof *m);
    m->alpha = 1.f;
    m->bias = m->residual = -1;
    bool mm = fu_is(n, "MatMul"), fmm = is_mopt(n, "FusedMatMul"), gemm = fu_is(n, "Gemm");
    bool cv = fu_is(n, "Conv"), fcv = is_mopt(n, "FusedConv");
    if (!(mm || fmm || gemm || cv || fcv) || n->n_inputs < 2 || n->n_outputs != 1) return false;
    int32_t x = n->inputs[0], w = n->inputs[1];
    if (x < 0 || fu_is_const(g, x) || g->values[x]->dtype != MOPT_DTYPE_F32 || !const_f32(g, w))
        return false;
    if (g->values[n->outputs[0]]->dtype != MOPT_DTYPE_F32) return false;
    const ir_shape *ws = &g->values[w]->shape, *xs = &g->values[x]->shape;
    m->conv = cv || fcv;
    if (n->n_inputs > 2 && n->inputs[2] >= 0) {
        if (!const_f32(g, n->inputs[2])) return false;
        m->bias = n->inputs[2];
    }
    if (gemm && n->n_inputs > 2 && n->inputs[2] >= 0 && ir_node_attr_float(n, "beta", 1.f) != 1.f)
        return false;
    if (!gemm && n->n_inputs > 3 && n->inputs[3] >= 0) {
        int32_t r = n->inputs[3];
        if (g->values[r]->dtype != MOPT_DTYPE_F32 ||
            !fu_same_shape(&g->values[r]->shape, &g->values[n->outputs[0]]->shape))
            return false;
        m->residual = r;
    }
    if (m->conv) {
        if (ws->rank < 3 || !ir_shape_is_concrete(ws)) return false;
        if (fcv && ir_node_attr_int(n, "layout", 0) != 0) return false;
        if (m->bias >= 0 && ir_shape_numel(&g->values[m->bias]->shape) != ws->dims[0]) return false;
        return fu_attrs_copyable(n);
    }
    if (ws->rank != 2 || !ir_shape_is_concrete(ws) || xs->rank < 2) return false;
    if (fmm) {
        if (ir_node_attr_int(n, "transA", 0) != 0) return false;
        m->trans_b = ir_node_attr_int(n, "transB", 0) != 0;
        m->alpha = ir_node_attr_float(n, "alpha", 1.f);
    } else if (gemm) {
        if (ir_node_attr_int(n, "transA", 0) != 0 || xs->rank != 2) return false;
        m->trans_b = ir_node_attr_int(n, "transB", 0) != 0;
        m->alpha = ir_node_attr_float(n, "alpha", 1.f);
    }
    int64_t N = m->trans_b ? ws->dims[0] : ws->dims[1];
    if (m->bias >= 0) { /* along N only */
        const ir_shape *bs = &g->values[m->bias]->shape;
        if (!ir_shape_is_concrete(bs) || ir_shape_numel(bs) != N ||
            (bs->rank > 0 && bs->dims[bs->rank - 1] != N))
            return false;
    }
    return fu_attrs_copyable(n);
}

/* W quantized per output channel: q (s8, [K, N] for a product, W's layout
 * for a convolution) and scale[c] = x_scale * max|w_c| / 127 * alpha (a
 * channel of |w| < 1e-30: zeros, scale x_scale * alpha). */
static void quantize_w(const ir_graph *g, const ir_node *n, const qs_match *m, float x_scale,
                       const float *x_cs, int64_t mult, int64_t ksz, const float *mean,
                       const float *qerr, const float *tap, int64_t group, double *corr, int8_t *q,
                       float *scale, int64_t *n_ch) {
    const ir_value *wv = g->values[n->inputs[1]];
    const float *w = wv->data;
    const ir_shape *ws = &wv->shape;
    int64_t C, K, sc, sk; /* channels, reduction; strides of w along them */
    if (m->conv) {
        C = ws->dims[0], K = ir_shape_numel(ws) / C, sc = K, sk = 1;
    } else if (m->trans_b) {
        C = ws->dims[0], K = ws->dims[1], sc = K, sk = 1;
    } else {
        C = ws->dims[1], K = ws->dims[0], sc = 1, sk = C;
    }
    *n_ch = C;
    for (int64_t c = 0; c < C; c++) {
        if (x_cs) x_scale = x_cs[c / mult];
        float mx = 0;
        for (int64_t k = 0; k < K; k++)
            mx = fmaxf(mx, fabsf(w[c * sc + k * sk]));
        /* a dead channel (PP-OCR rec has weights of 1e-39 after BN folding):
         * its scale would underflow, and bias / scale in the kernels became
         * inf, the channel NaN; it is all zeros, with scale x_scale */
        bool dead = !(mx >= 1e-30f) || !isnormal(x_scale * (mx / 127.f) * m->alpha);
        float s = dead ? 1.f : mx / 127.f, inv = dead ? 0.f : 1.f / s;
        double err = 0; /* sum_k (dequantized w - w) * mean of the X channel k reads */
        int64_t c0 = c / (C / group) * (K / ksz);
        for (int64_t k = 0; k < K; k++) {
            float v = fminf(fmaxf(nearbyintf(w[c * sc + k * sk] * inv), -127.f), 127.f);
            /* a product's q is [K, N]; a convolution's keeps W's layout */
            q[m->conv ? c * K + k : k * C + c] = (int8_t)v;
        }
        for (int64_t k = 0; (mean || qerr) && !dead && k < K; k++) {
            double v = q[m->conv ? c * K + k : k * C + c], t = tap[k % ksz];
            if (mean) err += (v * s - w[c * sc + k * sk]) * mean[c0 + k / ksz] * t;
            if (qerr) err += v * s * qerr[c0 + k / ksz] * t; /* X's mean rounding error */
        }
        if (corr) corr[c] = err;
        scale[c] = x_scale * s * m->alpha;
    }
}

/* The per-channel scales of a depthwise Conv's X (c_in channels), false
 * when it is not one or the table has no per-channel ranges for X. Each
 * channel's range (clipped to the tensor's, widened to hold 0) gets scale
 * s_c(z) = max(hi_c / (255 - z), -lo_c / z) for the common zero point z
 * that minimises sum_c log s_c(z); no scale falls below the tensor's / 256
 * (a channel that is always 0). */
bool pass_qs_channel_scales(const pass_qentry *e, int64_t c_in, float *cs, int32_t *zp) {
    if (e->n_ch != c_in || c_in < 1) return false;
    double t_lo = -(double)e->zero_point * e->scale, t_hi = (255.0 - e->zero_point) * e->scale;
    double floor = (double)e->scale / 256, best = INFINITY;
    int32_t best_z = e->zero_point;
    for (int32_t z = 0; z <= 255; z++) {
        double sum = 0;
        for (int64_t c = 0; c < c_in; c++) {
            double lo = fmin(fmax(e->ch_range[2 * c], t_lo), 0.0);
            double hi = fmax(fmin(e->ch_range[2 * c + 1], t_hi), 0.0);
            double s = floor;
            if (hi > 0) s = z < 255 ? fmax(s, hi / (255 - z)) : INFINITY;
            if (lo < 0) s = z > 0 ? fmax(s, -lo / z) : INFINITY;
            sum += log(s);
        }
        if (sum < best) best = sum, best_z = z;
    }
    if (!isfinite(best)) return false;
    for (int64_t c = 0; c < c_in; c++) {
        double lo = fmin(fmax(e->ch_range[2 * c], t_lo), 0.0);
        double hi = fmax(fmin(e->ch_range[2 * c + 1], t_hi), 0.0), s = floor;
        if (hi > 0) s = fmax(s, hi / (255 - best_z));
        if (lo < 0) s = fmax(s, -lo / best_z);
        cs[c] = (float)s;
    }
    *zp = best_z;
    return true;
}

/* tap[t] for each of W's ksz taps: the fraction of a Conv's outputs for
 * which tap t reads X rather than the zero padding (1 along an axis of
 * unknown size or with auto_pad). */
static void tap_fractions(const ir_graph *g, const ir_node *n, const pass_qentry *e, float *tap,
                          int64_t ksz) {
    const ir_shape *xs = &g->values[n->inputs[0]]->shape, *ws = &g->values[n->inputs[1]]->shape;
    int32_t S = ws->rank - 2;
    const int64_t *pads = NULL, *str = NULL, *dil = NULL;
    int64_t np = ir_node_attr_ints(n, "pads", &pads), ns = ir_node_attr_ints(n, "strides", &str);
    int64_t nd = ir_node_attr_ints(n, "dilations", &dil);
    const char *ap = ir_node_attr_string(n, "auto_pad", "NOTSET");
    for (int64_t t = 0; t < ksz; t++)
        tap[t] = 1.f;
    if (xs->rank != ws->rank || strcmp(ap, "NOTSET") != 0) return;
    for (int32_t d = 0, inner = 1; d < S; d++) {
        int32_t ax = S - 1 - d; /* innermost first: tap t's index along ax is t / inner % k */
        int64_t I = xs->dims[2 + ax], k = ws->dims[2 + ax];
        bool known = xs->syms[2 + ax] == 0;
        if (!known && e->rank == xs->rank && e->dims[2 + ax] > 0) /* the size calibration saw */
            I = e->dims[2 + ax], known = true;
        int64_t s = ns == S ? str[ax] : 1, dl = nd == S ? dil[ax] : 1;
        int64_t pb = np == 2 * S ? pads[ax] : 0, pe = np == 2 * S ? pads[S + ax] : 0;
        int64_t O = s > 0 ? (I + pb + pe - dl * (k - 1) - 1) / s + 1 : 0;
        if (known && O > 0 && O < (1 << 20))
            for (int64_t t = 0; t < ksz; t++) {
                int64_t j = t / inner % k, cnt = 0;
                for (int64_t o = 0; o < O; o++) {
                    int64_t i = o * s - pb + j * dl;
                    cnt += i >= 0 && i < I;
                }
                tap[t] *= (float)cnt / (float)O;
            }
        inner *= (int32_t)k;
    }
}

static bool depthwise(const ir_graph *g, const ir_node *n, const qs_match *m, int64_t *c_in) {
    const ir_shape *ws = &g->values[n->inputs[1]]->shape;
    int64_t group = ir_node_attr_int(n, "group", 1);
    *c_in = group;
    return m->conv && group > 1 && ws->dims[1] == 1 && ws->dims[0] % group == 0;
}

static mopt_status rewrite(fu_graph *f, ir_node *n, const qs_match *m, const pass_qentry *e,
                           int *per_channel, bool *corrected) {
    ir_graph *g = f->g;
    const ir_value *wv = g->values[n->inputs[1]];
    int64_t numel = ir_shape_numel(&wv->shape);
    int64_t C = m->conv || m->trans_b ? wv->shape.dims[0] : wv->shape.dims[1];
    int8_t *q = mopt_malloc((size_t)numel);
    float *scale = mopt_malloc((size_t)C * sizeof(float));
    mopt_status st = MOPT_OK;
    int64_t c_in = 0;
    float *cs = NULL;
    int32_t zp = e->zero_point;
    *per_channel = 0; /* 1: depthwise */
    *corrected = false;
    bool dw = depthwise(g, n, m, &c_in);
    if (dw && e->n_ch == c_in) {
        if (!(cs = mopt_malloc((size_t)c_in * sizeof *cs)))
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        else
            *per_channel = pass_qs_channel_scales(e, c_in, cs, &zp);
    }
    int64_t group = m->conv ? ir_node_attr_int(n, "group", 1) : 1;
    /* X's rounding error only where X is quantized with the table's scale */
    const float *qerr = *per_channel ? NULL : e->ch_qerr;
    bool bc = m->conv && (e->ch_mean || qerr) && e->n_ch == group * wv->shape.dims[1];
    double *corr = bc ? mopt_malloc((size_t)C * sizeof *corr) : NULL;
    if (!q || !scale || (bc && !corr)) st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    int64_t n_ch = 0, kk = m->conv ? numel / (C * wv->shape.dims[1]) : 1;
    const float *mean = bc ? e->ch_mean : NULL;
    float *tap = bc ? mopt_malloc((size_t)kk * sizeof *tap) : NULL;
    if (bc && !tap) st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    if (tap) tap_fractions(g, n, e, tap, kk);
    if (!st)
        quantize_w(g, n, m, e->scale, *per_channel ? cs : NULL, *per_channel ? C / c_in : 1, kk,
                   mean, bc ? qerr : NULL, tap, group, corr, q, scale, &n_ch);
    mopt_free(tap);
    float *bias = NULL;
    if (!st && corr) {
        const float *b0 = m->bias >= 0 ? g->values[m->bias]->data : NULL;
        if (!(bias = mopt_malloc((size_t)C * sizeof *bias)))
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        for (int64_t c = 0; bias && c < C; c++)
            bias[c] = (float)((b0 ? b0[c] : 0.) - corr[c]);
        *corrected = bias != NULL;
    }
    mopt_free(corr);
    char base[256];
    snprintf(base, sizeof base, "%s_s8", g->values[n->inputs[1]]->name);
    int64_t qdims[IR_MAX_RANK];
    int32_t qrank = wv->shape.rank;
    memcpy(qdims, wv->shape.dims, sizeof(int64_t) * (size_t)qrank);
    if (!m->conv) qdims[0] = numel / C, qdims[1] = C;
    int32_t vq = st ? -1 : fu_add_weight(g, base, MOPT_DTYPE_I8, qrank, qdims, q);
    snprintf(base, sizeof base, "%s_scale", g->values[n->inputs[1]]->name);
    int32_t vs = vq < 0 ? -1 : fu_add_f32_weight(g, base, 1, &C, scale);
    int32_t vb = -1;
    snprintf(base, sizeof base, "%s_bias", g->values[n->inputs[1]]->name);
    if (vs >= 0 && bias) /* corrected for the mean error of the s8 weights */
        vb = fu_add_f32_weight(g, m->bias >= 0 ? g->values[m->bias]->name : base, 1, &C, bias);
    else if (vs >= 0 && m->bias >= 0) /* a dense [C] copy (a product's may be [1, N]) */
        vb = fu_add_f32_weight(g, g->values[m->bias]->name, 1, &C, g->values[m->bias]->data);
    bool want_b = m->bias >= 0 || bias;
    mopt_free(q);
    mopt_free(scale);
    mopt_free(bias);
    if (vs < 0 || (want_b && vb < 0)) {
        mopt_free(cs);
        return st ? st : MOPT_ERR_OUT_OF_MEMORY;
    }
    if (fu_refresh(f) || !fu_use_mopt_domain(g)) {
        mopt_free(cs);
        return MOPT_ERR_OUT_OF_MEMORY;
    }
    int32_t n_in = m->residual >= 0 ? 5 : vb >= 0 ? 4 : 3;
    ir_node *qn = fu_replace_node(f, n, m->conv ? "StaticQConv" : "StaticQMatMul", "mopt", n->name,
                                  n_in, n->outputs[0]);
    if (!qn) {
        mopt_free(cs);
        return MOPT_ERR_OUT_OF_MEMORY;
    }
    qn->inputs[0] = n->inputs[0];
    qn->inputs[1] = vq;
    qn->inputs[2] = vs;
    if (n_in > 3) qn->inputs[3] = vb;
    if (n_in > 4) qn->inputs[4] = m->residual;
    bool ok = fu_copy_attrs(qn, n) && fu_set_float(qn, "x_scale", e->scale) &&
              fu_set_int(qn, "x_zero_point", zp);
    if (ok && *per_channel) {
        ir_attr *a = ir_node_add_attr(qn, "x_channel_scales", IR_ATTR_FLOATS);
        ok = a != NULL;
        if (ok) a->floats = cs, a->n = (size_t)c_in, cs = NULL;
    }
    mopt_free(cs);
    if (!ok) return MOPT_ERR_OUT_OF_MEMORY;
    return fu_refresh(f);
}

/* Keeps u8 between static nodes: node s's output, read only by static
 * nodes as X with one quantization, becomes u8 in it. */
mopt_status pass_quant_chain(ir_graph *g, int verbose, int32_t *n_chained) {
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *s = g->nodes[i];
        if (!is_mopt(s, "StaticQMatMul") && !is_mopt(s, "StaticQConv")) continue;
        int32_t y = s->outputs[0];
        if (g->values[y]->flags & IR_VALUE_OUTPUT) continue;
        bool ok = true, any = false;
        float xs = 0;
        int64_t zp = 0;
        ir_node *first = NULL;
        for (int32_t j = 0; ok && j < g->n_nodes; j++) {
            const ir_node *c = g->nodes[j];
            if (c->dead) continue;
            for (int32_t k = 0; ok && k < c->n_inputs; k++) {
                if (c->inputs[k] != y) continue;
                bool stat = is_mopt(c, "StaticQMatMul") || is_mopt(c, "StaticQConv");
                float cxs = ir_node_attr_float(c, "x_scale", 0.f);
                int64_t czp = ir_node_attr_int(c, "x_zero_point", 0);
                if (!stat || k != 0 || (any && (cxs != xs || czp != zp))) ok = false;
                if (ir_node_attr(c, "x_channel_scales")) ok = false; /* per-channel X */
                xs = cxs, zp = czp, any = true;
                if (!first) first = (ir_node *)c;
            }
        }
        if (!ok || !any) continue;
        if (!fu_set_float(s, "y_scale", xs) || !fu_set_int(s, "y_zero_point", zp))
            return MOPT_ERR_OUT_OF_MEMORY;
        g->values[y]->dtype = MOPT_DTYPE_U8;
        (*n_chained)++;
        if (verbose)
            mopt_log(MOPT_LOG_INFO, "mopt: static int8: %s -> %s: '%s' stays u8 in between",
                     s->name, first->name, g->values[y]->name);
    }
    return MOPT_OK;
}

/* A Conv with < 4 input channels per group (an RGB stem) and little work
 * per input value, C_out / group x window taps / strides < THIN_WORK, stays
 * float: VNNI's 4-deep u8 x s8 dot products run mostly on padding and the
 * quantize and hand padding of X on entry are not paid back (3x3 3 -> 16
 * stride 2, 36 per value: MobileNetV3-like 123 -> 195 us, PP-OCRv4 rec
 * even; ResNet's 7x7 3 -> 64 stride 2, 784 per value, 1425 -> 699 us). */
#define THIN_WORK 64
static bool thin_conv(const ir_graph *g, const ir_node *n, int64_t *cpg, int64_t *work) {
    const ir_shape *ws = &g->values[n->inputs[1]]->shape;
    int64_t group = ir_node_attr_int(n, "group", 1), taps = 1, stride = 1;
    const int64_t *str = NULL;
    int64_t ns = ir_node_attr_ints(n, "strides", &str);
    for (int32_t d = 2; d < ws->rank; d++)
        taps *= ws->dims[d];
    for (int64_t d = 0; d < ns; d++)
        stride *= str[d] > 0 ? str[d] : 1;
    *cpg = ws->dims[1];
    *work = ws->dims[0] / (group > 0 ? group : 1) * taps / stride;
    return *cpg < 4 && *work < THIN_WORK;
}

mopt_status pass_quant_static(ir_graph *g, pass_qtable *t, int verbose, pass_result *r) {
    fu_graph f;
    mopt_status st = fu_init(&f, g);
    int32_t n_static = 0, n_missing = 0, n_chained = 0, n_excluded = 0, n_per_channel = 0;
    int32_t n_corrected = 0, n_dw_float = 0, n_thin = 0;
    bool dw_int8 = t->int8_depthwise;
    for (int32_t i = 0; !st && i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        qs_match m;
        int64_t c_in = 0;
        if (n->dead || !match(&f, n, &m)) continue;
        bool dw = depthwise(g, n, &m, &c_in);
        int64_t cpg = 4, work = 0;
        if (m.conv && !dw && thin_conv(g, n, &cpg, &work)) {
            n_thin++;
            if (verbose)
                mopt_log(MOPT_LOG_INFO,
                         "mopt: static int8: node '%s' (%s) has %lld input channel%s per group "
                         "and %lld multiply-adds per input value (< 4 and < %d, e.g. a small "
                         "RGB stem): stays float, its int8 form cannot be faster (VNNI's 4-deep "
                         "dot products run mostly on padding, X quantized and padded on entry)",
                         n->name, n->op_type, (long long)cpg, cpg == 1 ? "" : "s", (long long)work,
                         THIN_WORK);
            continue;
        }
        if (!dw_int8 && dw) {
            n_dw_float++;
            if (verbose)
                mopt_log(MOPT_LOG_INFO,
                         "mopt: static int8: node '%s' (%s) is a depthwise Conv (group %lld, "
                         "one input channel per group): stays float, its int8 form cannot be "
                         "faster (k x k multiply-adds per output, memory bound, X quantized per "
                         "channel on entry; the option int8_depthwise=int8 makes it int8)",
                         n->name, n->op_type, (long long)c_in);
            continue;
        }
        if (pass_name_listed(t->exclude, n->name)) {
            n_excluded++;
            if (verbose)
                mopt_log(MOPT_LOG_INFO,
                         "mopt: static int8: node '%s' (%s) is in int8_exclude: "
                         "stays float",
                         n->name, n->op_type);
            continue;
        }
        const char *xname = g->values[n->inputs[0]]->name;
        pass_qentry *e = qt_find(t, xname);
        if (!e) {
            n_missing++;
            if (verbose)
                mopt_log(MOPT_LOG_INFO,
                         "mopt: static int8: node '%s' (%s): input '%s' is not in the "
                         "calibration table: left to dynamic int8",
                         n->name, n->op_type, xname);
            continue;
        }
        e->used = true;
        char name[128], op[64];
        snprintf(name, sizeof name, "%s", n->name);
        snprintf(op, sizeof op, "%s", n->op_type);
        int per_channel = 0;
        bool corrected = false;
        st = rewrite(&f, n, &m, e, &per_channel, &corrected);
        if (st) break;
        n_static++;
        n_per_channel += per_channel == 1;
        n_corrected += corrected;
        if (verbose)
            mopt_log(MOPT_LOG_INFO,
                     "mopt: static int8: node '%s' (%s) runs static int8: x '%s' scale %g "
                     "zero point %d%s%s",
                     name, op, xname, (double)e->scale, (int)e->zero_point,
                     per_channel ? " (depthwise: one scale per input channel)" : "",
                     corrected ? ", bias corrected" : "");
    }
    fu_free(&f);
    if (!st) st = pass_quant_chain(g, verbose, &n_chained);
    if (st) return st;
    r->rewrites = n_static;
    pass_note_add(r, n_static, "static int8");
    pass_note_add(r, n_per_channel, "per-channel X");
    pass_note_add(r, n_corrected, "bias corrected");
    pass_note_add(r, n_chained, "u8 kept between");
    pass_note_add(r, n_missing, "not in the table");
    pass_note_add(r, n_excluded, "excluded");
    pass_note_add(r, n_dw_float, "depthwise float");
    pass_note_add(r, n_thin, "thin stem float");
    return MOPT_OK;
}
