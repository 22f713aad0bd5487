/*
 * pass_qdq.c — QDQ models (ONNX Runtime's quantize_static, NNCF) onto the
 * static INT8 ops (issue 13):
 *
 *   x -> QuantizeLinear(sx, zx) -> DequantizeLinear(sx, zx) --\
 *   wq (const s8) -> DequantizeLinear(sw, 0) -----------------> MatMul | Gemm | Conv [-> Relu]
 *   (bias: const f32, or DequantizeLinear of const int32)   --/
 *   =>  x -> mopt.StaticQMatMul | mopt.StaticQConv (qstatic.h)
 *
 * x is quantized by the static op exactly as the QuantizeLinear did (an s8
 * x with zero point zx is the u8 x with zx + 128); wq is used as stored
 * (s8, symmetric: zero point 0; per tensor or per output channel: axis 1
 * of a product's [K, N], axis 0 of a convolution's W); the scale per
 * channel is sx * sw[c]. A following Relu goes into the op. An x that is
 * already u8 (no QuantizeLinear before its DequantizeLinear) is read as is.
 * The Q/DQ pairs left without readers are removed by dead-code
 * elimination, and where the product's output goes through
 * QuantizeLinear -> DequantizeLinear into the next static op, that op
 * reads it with the same quantization: the u8 tensor is kept in between
 * (pass_quant_static.c's chaining, run at the end of this pass).
 * ORT's transformer pattern MatMul -> QuantizeLinear -> DequantizeLinear ->
 * Add(constant bias, or DequantizeLinear of a u8/s8/int32 constant)
 * [-> Relu] becomes one static op with the bias (and Relu) in its epilogue:
 * the output is not rounded to the 8-bit grid before the Add, so it differs
 * from ORT's by up to one step of that grid per element (closer to FP32:
 * tests/quant/test_quant.py).
 * Runs before constant folding, which would otherwise turn DQ(wq) into f32
 * weights.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/log.h"
#include "passes/fusion.h"

/* A constant scalar zero point (absent: 0) of type u8 or s8. */
static bool const_zp(const ir_graph *g, const ir_node *q, int32_t *zp, bool *s8) {
    *zp = 0;
    *s8 = false;
    if (q->n_inputs < 3 || q->inputs[2] < 0) return true;
    const ir_value *v = g->values[q->inputs[2]];
    if (!v->data || ir_shape_numel(&v->shape) != 1) return false;
    if (v->dtype == MOPT_DTYPE_U8)
        *zp = *(const uint8_t *)v->data;
    else if (v->dtype == MOPT_DTYPE_I8)
        *zp = *(const int8_t *)v->data, *s8 = true;
    else
        return false;
    return true;
}

/* A constant scalar f32 scale. */
static bool const_scale(const ir_graph *g, const ir_node *q, float *s) {
    int64_t n = 0;
    const float *d = q->n_inputs >= 2 ? fu_const_f32(g, q->inputs[1], &n) : NULL;
    if (!d || n != 1 || !(d[0] > 0) || !isfinite(d[0])) return false;
    *s = d[0];
    return true;
}

/* The zero points of DequantizeLinear dq are absent, or constant zeros of
 * an integer dtype. */
static bool zero_points_zero(const ir_graph *g, const ir_node *dq, mopt_dtype dtype) {
    if (dq->n_inputs <= 2 || dq->inputs[2] < 0) return true;
    const ir_value *z = g->values[dq->inputs[2]];
    if (!z->data || z->dtype != dtype) return false;
    const uint8_t *b = z->data; /* an integer is 0 when all its bytes are */
    size_t n = (size_t)ir_shape_numel(&z->shape) * mopt_dtype_size(dtype);
    for (size_t i = 0; i < n; i++)
        if (b[i]) return false;
    return true;
}

typedef struct qdq_match {
    int32_t x; /* f32 x (input of the QuantizeLinear), or the u8 x */
    float sx;
    int32_t zx; /* as u8 */
    ir_node *dqx, *qx, *dqw, *relu;
    const int8_t *wq;
    const float *sw;
    int64_t n_sw;
    int32_t bias_v;    /* const f32 bias value, or -1 */
    const int32_t *bq; /* or an int32 bias with its scale(s) */
    const float *bs;
    int64_t n_bs;
    bool conv, trans_b;
    float alpha;
    /* MatMul -> QuantizeLinear -> DequantizeLinear -> Add(bias) [-> Relu]
     * (ORT's transformers): the Add's constant operand becomes the bias */
    ir_node *oq, *odq, *add;
    float *add_bias; /* n_ch floats (owned by the match until rewrite) */
} qdq_match;

static bool match_x(const fu_graph *f, int32_t v, qdq_match *m) {
    const ir_graph *g = f->g;
    ir_node *dq = fu_producer_is(f, v, "DequantizeLinear");
    int32_t zp;
    bool zp_s8;
    if (!dq || !const_scale(g, dq, &m->sx) || !const_zp(g, dq, &zp, &zp_s8)) return false;
    if (ir_node_attr_int(dq, "block_size", 0) != 0) return false;
    int32_t xq = dq->inputs[0];
    /* the quantized type is xq's (a zero point may be absent) */
    mopt_dtype qt = g->values[xq]->dtype;
    if (qt != MOPT_DTYPE_U8 && qt != MOPT_DTYPE_I8) return false;
    bool s8 = qt == MOPT_DTYPE_I8;
    ir_node *q = fu_producer_is(f, xq, "QuantizeLinear");
    m->dqx = dq;
    m->zx = s8 ? zp + 128 : zp;
    if (!q) { /* a u8 x as is */
        if (s8) return false;
        m->x = xq;
        return true;
    }
    float qs;
    int32_t qz;
    bool qzs8;
    if (!const_scale(g, q, &qs) || !const_zp(g, q, &qz, &qzs8) || qs != m->sx || qz != zp ||
        ir_node_attr_int(q, "saturate", 1) != 1 || g->values[q->inputs[0]]->dtype != MOPT_DTYPE_F32)
        return false;
    m->qx = q;
    m->x = q->inputs[0];
    return true;
}

/* v = DequantizeLinear(a constant of dtype t, constant f32 scales, zero
 * points 0 or absent): the node, with the constant in *q and the ns scales
 * in *s; else NULL. */
static ir_node *dq_of_const(const fu_graph *f, int32_t v, mopt_dtype t, const ir_value **q,
                            const float **s, int64_t *ns) {
    ir_node *dq = fu_producer_is(f, v, "DequantizeLinear");
    if (!dq || dq->n_inputs < 2) return NULL;
    const ir_value *qv = f->g->values[dq->inputs[0]];
    if (!qv->data || qv->dtype != t || !zero_points_zero(f->g, dq, t)) return NULL;
    *ns = 0;
    if (!(*s = fu_const_f32(f->g, dq->inputs[1], ns))) return NULL;
    *q = qv;
    return dq;
}

/* W = DequantizeLinear(const s8, scale per tensor or per output channel c of
 * n_ch, zero point 0). */
static bool match_w(const fu_graph *f, int32_t v, int32_t ch_axis, int64_t n_ch, qdq_match *m) {
    const ir_value *wv = NULL;
    const float *s = NULL;
    int64_t ns = 0;
    ir_node *dq = dq_of_const(f, v, MOPT_DTYPE_I8, &wv, &s, &ns);
    if (!dq || ir_node_attr_int(dq, "block_size", 0) != 0 || !ir_shape_is_concrete(&wv->shape))
        return false;
    if (ns != 1) {
        int64_t axis = ir_node_attr_int(dq, "axis", 1);
        if (axis < 0) axis += wv->shape.rank;
        if (axis != ch_axis || ns != n_ch) return false;
    }
    for (int64_t i = 0; i < ns; i++)
        if (!(s[i] > 0) || !isfinite(s[i])) return false;
    m->dqw = dq;
    m->wq = wv->data;
    m->sw = s;
    m->n_sw = ns;
    return true;
}

static bool match_bias(const fu_graph *f, int32_t v, int64_t n_ch, qdq_match *m) {
    const ir_graph *g = f->g;
    m->bias_v = -1;
    if (v < 0) return true;
    const ir_value *bv = g->values[v];
    if (bv->data && bv->dtype == MOPT_DTYPE_F32)
        return ir_shape_numel(&bv->shape) == n_ch && (m->bias_v = v, true);
    const ir_value *q = NULL;
    const float *s = NULL;
    int64_t ns = 0;
    if (!dq_of_const(f, v, MOPT_DTYPE_I32, &q, &s, &ns) || ir_shape_numel(&q->shape) != n_ch ||
        (ns != 1 && ns != n_ch))
        return false;
    m->bq = q->data;
    m->bs = s;
    m->n_bs = ns;
    return true;
}

/* The constant f32 value of v, n elements along the last axis (shape [n]
 * or [1, ..., 1, n]): an f32 initializer, or DequantizeLinear of a u8, s8
 * or int32 initializer with a scalar scale and zero point. Fills out[n]. */
static bool const_row(const fu_graph *f, int32_t v, int64_t n, float *out) {
    const ir_graph *g = f->g;
    const ir_value *bv = g->values[v];
    ir_node *dq = bv->data ? NULL : fu_producer_is(f, v, "DequantizeLinear");
    const ir_value *src = dq ? g->values[dq->inputs[0]] : bv;
    if (!src->data || ir_shape_numel(&src->shape) != n) return false;
    for (int32_t a = 0; a + 1 < src->shape.rank; a++)
        if (src->shape.dims[a] != 1) return false;
    if (!dq) {
        if (src->dtype != MOPT_DTYPE_F32) return false;
        memcpy(out, src->data, (size_t)n * sizeof(float));
        return true;
    }
    float s;
    double z = 0;
    if (dq->n_inputs < 2 || !const_scale(g, dq, &s) || ir_node_attr_int(dq, "block_size", 0) != 0)
        return false;
    if (dq->n_inputs > 2 && dq->inputs[2] >= 0) {
        const ir_value *zv = g->values[dq->inputs[2]];
        if (!zv->data || ir_shape_numel(&zv->shape) != 1 || zv->dtype != src->dtype) return false;
        z = zv->dtype == MOPT_DTYPE_U8    ? *(const uint8_t *)zv->data
            : zv->dtype == MOPT_DTYPE_I8  ? *(const int8_t *)zv->data
            : zv->dtype == MOPT_DTYPE_I32 ? *(const int32_t *)zv->data
                                          : NAN;
        if (isnan(z)) return false;
    }
    for (int64_t i = 0; i < n; i++) {
        double q = src->dtype == MOPT_DTYPE_U8    ? ((const uint8_t *)src->data)[i]
                   : src->dtype == MOPT_DTYPE_I8  ? ((const int8_t *)src->data)[i]
                   : src->dtype == MOPT_DTYPE_I32 ? ((const int32_t *)src->data)[i]
                                                  : NAN;
        if (isnan(q)) return false;
        out[i] = (float)((q - z) * s);
    }
    return true;
}

/* After a MatMul's output y: QuantizeLinear -> DequantizeLinear (one scale
 * and zero point, y read by nothing else) -> Add(const bias of n_ch along
 * the last axis) [-> Relu]. Fills m->oq, odq, add, add_bias (and relu). */
static bool match_bias_add(const fu_graph *f, int32_t y, int64_t n_ch, qdq_match *m) {
    const ir_graph *g = f->g;
    if (g->values[y]->flags & IR_VALUE_OUTPUT) return false;
    ir_node *q = fu_sole_consumer(f, y, NULL);
    if (!fu_is(q, "QuantizeLinear") || q->n_outputs != 1 ||
        (g->values[q->outputs[0]]->flags & IR_VALUE_OUTPUT))
        return false;
    ir_node *dq = fu_sole_consumer(f, q->outputs[0], NULL);
    float qs, ds;
    int32_t qz, dz;
    bool qs8, ds8;
    if (!fu_is(dq, "DequantizeLinear") || !const_scale(g, q, &qs) || !const_zp(g, q, &qz, &qs8) ||
        !const_scale(g, dq, &ds) || !const_zp(g, dq, &dz, &ds8) || qs != ds || qz != dz ||
        ir_node_attr_int(q, "block_size", 0) != 0 || ir_node_attr_int(dq, "block_size", 0) != 0 ||
        (g->values[dq->outputs[0]]->flags & IR_VALUE_OUTPUT))
        return false;
    ir_node *add = fu_sole_consumer(f, dq->outputs[0], NULL);
    if (!fu_is(add, "Add") || add->n_inputs != 2 || add->n_outputs != 1) return false;
    int k = fu_other_input(add, dq->outputs[0]);
    int32_t other = k < 0 ? -1 : add->inputs[k];
    if (other < 0 || !fu_same_shape(&g->values[add->outputs[0]]->shape, &g->values[y]->shape))
        return false;
    float *b = mopt_malloc((size_t)n_ch * sizeof(float));
    if (!b) return false;
    if (!const_row(f, other, n_ch, b)) {
        mopt_free(b);
        return false;
    }
    m->oq = q, m->odq = dq, m->add = add, m->add_bias = b;
    ir_node *next = fu_sole_consumer(f, add->outputs[0], NULL);
    if (fu_is(next, "Relu") && next->n_outputs == 1 &&
        !(g->values[add->outputs[0]]->flags & IR_VALUE_OUTPUT))
        m->relu = next;
    return true;
}

static bool match(const fu_graph *f, const ir_node *n, qdq_match *m) {
    const ir_graph *g = f->g;
    memset(m, 0, sizeof *m);
    m->alpha = 1.f;
    bool mm = fu_is(n, "MatMul"), gemm = fu_is(n, "Gemm"), cv = fu_is(n, "Conv");
    if (!(mm || gemm || cv) || n->n_inputs < 2 || n->n_outputs != 1 || n->inputs[1] < 0)
        return false;
    if (g->values[n->outputs[0]]->dtype != MOPT_DTYPE_F32) return false;
    if (!match_x(f, n->inputs[0], m)) return false;
    const ir_node *dqw = fu_producer_is(f, n->inputs[1], "DequantizeLinear");
    if (!dqw) return false;
    const ir_shape *ws = &g->values[dqw->inputs[0]]->shape;
    const ir_shape *xs = &g->values[n->inputs[0]]->shape;
    int64_t n_ch;
    int32_t axis;
    if (cv) {
        if (ws->rank < 3 || !fu_attrs_copyable(n)) return false;
        n_ch = ws->dims[0], axis = 0;
        m->conv = true;
    } else {
        if (ws->rank != 2 || xs->rank < 2) return false;
        if (gemm) {
            if (ir_node_attr_int(n, "transA", 0) != 0 || xs->rank != 2) return false;
            m->trans_b = ir_node_attr_int(n, "transB", 0) != 0;
            m->alpha = ir_node_attr_float(n, "alpha", 1.f);
            if (n->n_inputs > 2 && n->inputs[2] >= 0 && ir_node_attr_float(n, "beta", 1.f) != 1.f)
                return false;
        }
        n_ch = m->trans_b ? ws->dims[0] : ws->dims[1];
        axis = m->trans_b ? 0 : 1;
    }
    if (!match_w(f, n->inputs[1], axis, n_ch, m)) return false;
    if (!match_bias(f, (cv || gemm) && n->n_inputs > 2 ? n->inputs[2] : -1, n_ch, m)) return false;
    if (!cv && m->bias_v < 0 && !m->bq && match_bias_add(f, n->outputs[0], n_ch, m)) return true;
    ir_node *next = fu_sole_consumer(f, n->outputs[0], NULL);
    if (fu_is(next, "Relu") && next->n_outputs == 1) m->relu = next;
    return true;
}

static mopt_status rewrite(fu_graph *f, ir_node *n, const qdq_match *m) {
    ir_graph *g = f->g;
    const ir_value *wv = g->values[m->dqw->inputs[0]];
    int64_t numel = ir_shape_numel(&wv->shape);
    int64_t C = m->conv || m->trans_b ? wv->shape.dims[0] : wv->shape.dims[1];
    int64_t K = numel / C;
    int8_t *q = mopt_malloc((size_t)numel);
    float *scale = mopt_malloc((size_t)C * sizeof(float));
    float *bias = mopt_malloc((size_t)C * sizeof(float));
    if (!q || !scale || !bias) {
        mopt_free(q), mopt_free(scale), mopt_free(bias);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (m->trans_b) /* [N, K] -> [K, N] */
        for (int64_t c = 0; c < C; c++)
            for (int64_t k = 0; k < K; k++)
                q[k * C + c] = m->wq[c * K + k];
    else
        memcpy(q, m->wq, (size_t)numel);
    for (int64_t c = 0; c < C; c++) {
        scale[c] = m->sx * m->sw[m->n_sw > 1 ? c : 0] * m->alpha;
        if (m->bq) bias[c] = (float)m->bq[c] * m->bs[m->n_bs > 1 ? c : 0];
        if (m->add_bias) bias[c] = m->add_bias[c];
    }
    int64_t qdims[IR_MAX_RANK];
    int32_t qrank = wv->shape.rank;
    memcpy(qdims, wv->shape.dims, sizeof(int64_t) * (size_t)qrank);
    if (!m->conv) qdims[0] = K, qdims[1] = C;
    char base[256];
    snprintf(base, sizeof base, "%s_s8", wv->name);
    int32_t vq = fu_add_weight(g, base, MOPT_DTYPE_I8, qrank, qdims, q);
    snprintf(base, sizeof base, "%s_scale", wv->name);
    int32_t vs = vq < 0 ? -1 : fu_add_f32_weight(g, base, 1, &C, scale);
    int32_t vb = m->bias_v;
    bool new_bias = m->bq || m->add_bias;
    if (vs >= 0 && new_bias) {
        snprintf(base, sizeof base, "%s_bias", wv->name);
        vb = fu_add_f32_weight(g, base, 1, &C, bias);
    }
    mopt_free(q), mopt_free(scale), mopt_free(bias);
    if (vs < 0 || (new_bias && vb < 0)) return MOPT_ERR_OUT_OF_MEMORY;
    if (fu_refresh(f) || !fu_use_mopt_domain(g)) return MOPT_ERR_OUT_OF_MEMORY;
    ir_node *last = m->relu ? m->relu : m->add ? m->add : n;
    ir_node *qn = fu_replace_node(f, last, m->conv ? "StaticQConv" : "StaticQMatMul", "mopt",
                                  n->name, vb >= 0 ? 4 : 3, last->outputs[0]);
    if (!qn) return MOPT_ERR_OUT_OF_MEMORY;
    qn->inputs[0] = m->x;
    qn->inputs[1] = vq;
    qn->inputs[2] = vs;
    if (vb >= 0) qn->inputs[3] = vb;
    if ((m->conv && !fu_copy_attrs(qn, n)) || !fu_set_float(qn, "x_scale", m->sx) ||
        !fu_set_int(qn, "x_zero_point", m->zx) ||
        (m->relu && !fu_set_string(qn, "activation", "Relu")))
        return MOPT_ERR_OUT_OF_MEMORY;
    if (last != n) n->dead = true;
    if (m->add) { /* the Q/DQ pair and the Add are in the op now */
        m->oq->dead = m->odq->dead = true;
        if (last != m->add) m->add->dead = true;
    }
    return fu_refresh(f);
}

/* Counts: c[0] MatMul/Gemm and c[1] Conv rewritten, c[2] of them with a
 * bias Add absorbed, c[3] u8 tensors kept between static ops (finish). */
static mopt_status visit(fu_graph *f, ir_node *n, int32_t *c) {
    qdq_match m;
    if (n->dead || !match(f, n, &m)) return MOPT_OK;
    mopt_status st = rewrite(f, n, &m);
    c[2] += m.add != NULL;
    mopt_free(m.add_bias);
    c[m.conv ? 1 : 0]++;
    return st;
}

static mopt_status finish(ir_graph *g, int32_t *c) {
    if (c[0] + c[1] == 0) return MOPT_OK;
    ir_graph_mark_dead_code(g); /* the Q/DQ pairs no one reads */
    return pass_quant_chain(g, 0, &c[3]);
}

static const fu_pass qdq_pass = {
    .visit = visit,
    .finish = finish,
    .notes = {"QDQ MatMul/Gemm", "QDQ Conv", "bias Add absorbed", "u8 kept between"},
    .rewrites = 0x3u,
};

mopt_status pass_qdq(ir_graph *g, pass_result *r) {
    bool any = false;
    for (int32_t i = 0; i < g->n_nodes && !any; i++)
        any = fu_is(g->nodes[i], "DequantizeLinear");
    if (!any) return MOPT_OK;
    return fu_run_pass(g, r, &qdq_pass);
}
