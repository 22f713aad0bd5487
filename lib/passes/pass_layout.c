/*
 * pass_layout.c — keeps CNN activations channels-last (NHWC) between
 * convolutions, and chains of large ones in oneDNN's blocked layout
 * (opt_level 3; issue 10). oneDNN's convolutions prefer
 * channels-last (or blocked) data: with plain NCHW tensors every one of them
 * reorders its input in and its output back on each run. This pass finds the
 * values that can stay channels-last in memory and tells their producers and
 * consumers so; shapes in the IR stay the logical [N, C, spatial...] ones.
 *
 * A value V is kept channels-last when
 *  - it is a 3-5-D f32 tensor, not a graph output, produced by a
 *    convolution (Conv, or mopt.FusedConv), by a layout-agnostic
 *    elementwise node (below) whose every full-shape input is kept too, by
 *    a squeeze-excitation scale Mul(X, S) whose X is kept, or by an
 *    inference BatchNormalization with constant [C] parameters whose X is
 *    kept (it becomes mopt.ChannelsLastAffine: one scale and shift per
 *    channel), or by a channel-axis Concat or Split (whatever its inputs);
 *  - every node reading it reads it as a convolution's X, as a FusedConv's
 *    residual when that FusedConv's Y is kept too (and then Y only when the
 *    residual is), as a GlobalAveragePool's X, as the X of such a pool or
 *    Resize whose output is kept, as a full-shape operand of
 *    a layout-agnostic node or the X of a scale whose output is kept, or as
 *    an input of a channel-axis Concat or Split.
 * A channel-axis Concat or Split with any value kept becomes
 * mopt.ChannelsLastConcat/Split (lib/ops/movement.c), which reads and writes
 * each of its values in its own layout (one bit each), converting while it
 * copies: YOLOv8's C2f blocks (Split -> convs -> Concat) then need no
 * reorder.
 * A nearest Resize of H and W (opset 11+, N and C provably unchanged, roi,
 * scales and sizes constant or absent) keeps its output channels-last with
 * its input: it copies whole pixels (mopt.ChannelsLastResize,
 * lib/ops/resize.c), never in the blocked layout. Its output's size is not
 * provably that of any other value, so an elementwise node adding it to
 * another (an FPN's top-down Add, as in PP-OCR det) gets the attribute
 * mopt_same_shape = 1: the node then refuses operands of different shapes
 * at run time (broadcasting) with a clear error instead of mixing layouts.
 * Layout-agnostic: unary elementwise activations (Relu, Sigmoid, Clip, ...)
 * and Add/Sub/Mul/Div/Max/Min, whose every input is either a value of the output's
 * shape or a constant of one element: they work element for element,
 * whatever the order in memory. A scale is Mul(X, S) with S [N or 1, C or
 * 1, 1...] (squeeze-excitation). Everything else (a graph output, a linear
 * Resize, ...) reads plain data, so the node producing it writes plain, as before.
 *
 * The static INT8 convolution (mopt.StaticQConv) counts as a convolution:
 * its u8 X and Y may stay channels-last too (its residual is input 4).
 * Convolutions reading or writing a kept value become mopt.FusedConv (a
 * Conv with no epilogue is one; a StaticQConv stays one) with the `layout` attribute: bit 0 X, bit
 * 1 Y (and residual) channels-last (ops/conv.h CONV_LAYOUT_*). FusedConv's oneDNN implementation
 * gives those layouts to its primitive; its reference run (any fallback) converts to plain and
 * back, so every implementation is correct for any layout. A GlobalAveragePool reading
 * channels-last and a scale writing it become mopt.ChannelsLastGlobalAveragePool and
 * mopt.ChannelsLastScale (lib/ops/layout.c). Channels-last has the plain
 * layout's size: the memory planner needs nothing new. The pass runs only when oneDNN is
 * available (ops_conv_channels_last_ok).
 *
 * Blocked values (choose_blocked): a kept value goes one step further, into
 * oneDNN's blocked layout nC[d|h]w16c (CONV_LAYOUT_X_BLK16/Y_BLK16), when
 * its channel count is a known multiple of 16 (no padding: still the plain
 * size), it has at least BLK_MIN_SPATIAL known positions per image, and it
 * is made and read only by f32 1x1, depthwise or first-layer convolutions
 * (blk_conv; X, or a residual when that convolution's Y is blocked too) and layout-agnostic
 * elementwise nodes whose other full operands and output are blocked as well. Everything else keeps
 * channels-last. A convolution between a blocked and a channels-last value is a chain edge:
 * oneDNN 2.6 has no non-reference kernel that mixes them, so its entry offers the larger side as it
 * is and reorders the other in its ports (one reorder per edge; a plain X with a blocked Y, as in a
 * stem conv, needs none). Measured on oneDNN 2.6, Zen 4, 1 thread (standalone convs): at 112x112
 * and 56x56 the blocked jit_1x1 / jit_dw / first-layer kernels beat the channels-last brgconv /
 * brdgmm ones (16 -> 16 with a residual 0.73x at batch 1, 0.35x at batch 8; depthwise 0.7-0.85x;
 * the stem conv reads the NCHW input directly instead of reordering it); at 28x28 and below they do
 * not (1x1 convs within +-10%, either way), and channel counts such as 24, 40, 72 would need padded
 * tensors, which the memory planner and the elementwise ops do not size for.
 * Winograd chains (wino_conv): oneDNN's Winograd kernels take X and Y only blocked, so on a CPU
 * where the conv glue will pick them (ops_conv_wino_blocked) the values they make or read are
 * blocked at any known spatial size, with the pools and elementwise nodes feeding them and any f32
 * convolution beside them (blocked MaxPool/AveragePool: attribute blocked=1). A GlobalAveragePool
 * reads blocked X as well (mopt.ChannelsLastGlobalAveragePool blocked=1: ResNet's last block).
 * ResNet-18-like on the Xeon (model 207, 1 thread): 27 reorders gone, batch 1 0.98 -> 0.92x ORT,
 * batch 8 0.77 -> 0.65x.
 * At precision=bf16 where bf16 convolutions run on AMX (pass_layout's bf16_nhwc, from
 * ops_conv_bf16_amx) nothing is blocked: oneDNN 2.6 runs bf16 convolutions on AMX
 * (brgconv:avx512_core_amx_bf16, 600-1700 GFLOP/s) only on channels-last data; on blocked data it
 * answers jit_bf16:avx512_core_bf16 (~90 GFLOP/s). The conv impls then read and write those
 * channels-last activations as bf16 (op_impl.bf16_io, conv_onednn.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ops/conv.h"
#include "ops/impls.h"
#include "passes/fusion.h"

/* What a node is to the pass. */
enum {
    NODE_OTHER = 0,
    NODE_CONV,     /* conv_ok */
    NODE_AGNOSTIC, /* agnostic: output kept with its full operands */
    NODE_GAP,      /* GlobalAveragePool: may read channels-last, writes plain */
    NODE_SCALE,    /* se_scale: like NODE_AGNOSTIC for X; S stays plain */
    NODE_POOL,     /* MaxPool/AveragePool, nearest Resize: output kept with its input */
    NODE_AFFINE,   /* inference BatchNormalization, constant [C] parameters */
    NODE_FLEX,     /* channel-axis Concat/Split: any layout in, any layout out */
    NODE_RESIZE,   /* nearest Resize of H and W: output kept with its input */
};

#define FLEX_MAX 32 /* inputs of a Concat, outputs of a Split */

static const char *const k_unary[] = {"Relu",      "LeakyRelu", "Sigmoid",  "Tanh", "HardSigmoid",
                                      "HardSwish", "Clip",      "Elu",      "Abs",  "Neg",
                                      "Exp",       "Sqrt",      "Softplus", "Erf",  "Gelu"};
static const char *const k_binary[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};

static bool in_list(const ir_node *n, const char *const *list, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (fu_is(n, list[i])) return true;
    return false;
}

/* mopt.StaticQConv (the static INT8 convolution, ops/qstatic.h): u8 or f32
 * X and Y, s8 W, its residual in slot 4; it takes `layout` as it is. */
static bool is_qconv(const ir_node *n) {
    return strcmp(n->op_type, "StaticQConv") == 0 && strcmp(n->domain, "mopt") == 0;
}

static bool is_conv(const ir_node *n) {
    return !n->dead && (fu_is(n, "Conv") || is_qconv(n) ||
                        (strcmp(n->op_type, "FusedConv") == 0 && strcmp(n->domain, "mopt") == 0));
}

static bool is_fused(const ir_node *n) {
    return strcmp(n->op_type, "FusedConv") == 0 || is_qconv(n);
}

/* The input slot of a convolution's residual. */
static int32_t res_slot(const ir_node *n) { return is_qconv(n) ? 4 : 3; }

static bool f32_spatial(const ir_value *v) {
    return v->dtype == MOPT_DTYPE_F32 && v->shape.rank >= 3 && v->shape.rank <= 5;
}

/* A convolution oneDNN may run with channels-last X/Y: f32, constant W of
 * X's rank, one output; attributes a FusedConv can take. */
static bool conv_ok(const ir_graph *g, const ir_node *n) {
    if (!is_conv(n) || n->n_outputs != 1 || n->outputs[0] < 0 || n->n_inputs < 2 ||
        n->inputs[0] < 0 || n->inputs[1] < 0)
        return false;
    const ir_value *x = g->values[n->inputs[0]], *w = g->values[n->inputs[1]];
    const ir_value *y = g->values[n->outputs[0]];
    if (is_qconv(n)) { /* u8 or f32 activations, s8 W */
        bool xs = x->dtype == MOPT_DTYPE_U8 || f32_spatial(x);
        bool ys = y->dtype == MOPT_DTYPE_U8 || f32_spatial(y);
        return xs && ys && x->shape.rank >= 3 && x->shape.rank <= 5 && w->dtype == MOPT_DTYPE_I8 &&
               w->data && w->shape.rank == x->shape.rank && y->shape.rank == x->shape.rank;
    }
    if (!f32_spatial(x) || !f32_spatial(y) || w->dtype != MOPT_DTYPE_F32 || !w->data ||
        w->shape.rank != x->shape.rank || y->shape.rank != x->shape.rank)
        return false;
    if (!is_fused(n)) return fu_attrs_copyable(n);
    return true;
}

/* Spatial signatures: two values with the same signature have the same
 * spatial sizes for every input, though inference may not know them (an
 * OCR model's H and W are unknown): a convolution's is its X's when it keeps
 * the size (stride 1, pads making up for the window), else a hash of its X's
 * and its window attributes; an elementwise node's is its full operand's; any
 * other value's is its own index. */
static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t mix_ints(uint64_t h, const ir_node *n, const char *name) {
    const int64_t *v = NULL;
    int64_t k = ir_node_attr_ints(n, name, &v);
    h = mix(h, (uint64_t)k);
    for (int64_t i = 0; i < k; i++)
        h = mix(h, (uint64_t)v[i]);
    return h;
}

/* Whether a convolution keeps X's spatial sizes whatever they are: stride
 * 1 and pads (explicit or SAME) that make up for the window. */
static bool keeps_size(const ir_graph *g, const ir_node *n) {
    const ir_shape *w = &g->values[n->inputs[1]]->shape;
    int32_t S = w->rank - 2;
    const int64_t *st = NULL, *pads = NULL, *dil = NULL;
    int64_t n_st = ir_node_attr_ints(n, "strides", &st);
    int64_t n_pads = ir_node_attr_ints(n, "pads", &pads);
    int64_t n_dil = ir_node_attr_ints(n, "dilations", &dil);
    const char *ap = ir_node_attr_string(n, "auto_pad", "NOTSET");
    bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
    if (!same && strcmp(ap, "NOTSET") != 0) return false;
    if ((n_st >= 0 && n_st != S) || (n_dil >= 0 && n_dil != S) ||
        (!same && n_pads >= 0 && n_pads != 2 * S))
        return false;
    for (int32_t i = 0; i < S; i++) {
        if (w->syms[2 + i] || w->dims[2 + i] < 1) return false;
        if (n_st >= 0 && st[i] != 1) return false;
        if (same) continue;
        int64_t d = n_dil >= 0 ? dil[i] : 1;
        int64_t pad = n_pads >= 0 ? pads[i] + pads[S + i] : 0;
        if (pad != d * (w->dims[2 + i] - 1)) return false;
    }
    return true;
}

static uint64_t conv_sig(const ir_graph *g, const ir_node *n, uint64_t x) {
    if (keeps_size(g, n)) return x;
    uint64_t h = mix(x, 0xc0);
    const ir_shape *w = &g->values[n->inputs[1]]->shape;
    for (int32_t i = 2; i < w->rank; i++)
        h = mix(h, (uint64_t)w->dims[i]);
    h = mix_ints(h, n, "strides");
    h = mix_ints(h, n, "pads");
    h = mix_ints(h, n, "dilations");
    const char *ap = ir_node_attr_string(n, "auto_pad", "NOTSET");
    for (const char *c = ap; *c; c++)
        h = mix(h, (uint64_t)(unsigned char)*c);
    return h;
}

/* The spatial signature of a nearest Resize's output: its size is not
 * derived from any other value's, so an elementwise node with such an
 * operand is kept only with a run-time check that its operands have one
 * shape (attribute mopt_same_shape, lib/ops/elementwise.c). */
#define SIG_RESIZED ((uint64_t)0)

/* Axis i of a and b provably equal (same known size or same symbol). */
static bool same_dim(const ir_shape *a, const ir_shape *b, int32_t i) {
    if (a->syms[i] || b->syms[i]) return a->syms[i] == b->syms[i];
    return a->dims[i] >= 0 && a->dims[i] == b->dims[i];
}

/* A layout-agnostic elementwise node: one f32 output; each input a
 * one-element constant of at most the output's rank, or a "full" operand:
 * a non-constant f32 value of the output's rank (the first input of a
 * unary op; both of a binary one when they provably have the same shape:
 * batch and channels equal, same spatial signature). Returns the mask of
 * full operands (0: not agnostic). */
static unsigned agnostic(const ir_graph *g, const ir_node *n, const uint64_t *sig, bool *checked) {
    if (n->dead || n->n_outputs != 1 || n->outputs[0] < 0 || n->n_inputs > 8) return 0;
    bool unary = in_list(n, k_unary, sizeof k_unary / sizeof k_unary[0]);
    if (!unary && !in_list(n, k_binary, sizeof k_binary / sizeof k_binary[0])) return 0;
    const ir_value *y = g->values[n->outputs[0]];
    if (!f32_spatial(y)) return 0;
    unsigned full = 0;
    int32_t first = -1;
    for (int32_t k = 0; k < n->n_inputs; k++) {
        int32_t v = n->inputs[k];
        if (v < 0) continue;
        const ir_value *val = g->values[v];
        if (fu_is_const(g, v)) {
            if (ir_shape_numel(&val->shape) != 1 || val->shape.rank > y->shape.rank) return 0;
            continue;
        }
        if ((unary && k != 0) || val->dtype != MOPT_DTYPE_F32 || val->shape.rank != y->shape.rank)
            return 0;
        if (first >= 0) {
            const ir_shape *a = &g->values[first]->shape;
            bool loose = sig[first] == SIG_RESIZED || sig[v] == SIG_RESIZED;
            if ((sig[first] != sig[v] && !loose) || !same_dim(a, &val->shape, 0) ||
                !same_dim(a, &val->shape, 1))
                return 0;
            if (loose) *checked = true;
        }
        if (first < 0) first = v;
        full |= 1u << k;
    }
    return full;
}

/* A squeeze-excitation scale: Mul(X, S) (either order) with X a 3-5-D f32
 * value and S of its rank, [N or 1, C or 1, 1...]: returns the mask of X's
 * slot (0: not one). */
static unsigned se_scale(const ir_graph *g, const ir_node *n) {
    if (!fu_is(n, "Mul") || n->n_inputs != 2 || n->n_outputs != 1 || n->outputs[0] < 0 ||
        n->inputs[0] < 0 || n->inputs[1] < 0)
        return 0;
    const ir_value *y = g->values[n->outputs[0]];
    if (!f32_spatial(y)) return 0;
    for (int k = 0; k < 2; k++) {
        const ir_value *x = g->values[n->inputs[k]], *sv = g->values[n->inputs[1 - k]];
        const ir_shape *xs = &x->shape, *ss = &sv->shape;
        if (fu_is_const(g, n->inputs[k]) || x->dtype != MOPT_DTYPE_F32 ||
            sv->dtype != MOPT_DTYPE_F32 || xs->rank != y->shape.rank || ss->rank != xs->rank ||
            !same_dim(xs, &y->shape, 0) || !same_dim(xs, &y->shape, 1))
            continue;
        bool ok = true;
        for (int32_t i = 2; ok && i < ss->rank; i++)
            ok = ss->syms[i] == 0 && ss->dims[i] == 1;
        for (int32_t i = 0; ok && i < 2; i++)
            ok = (ss->syms[i] == 0 && ss->dims[i] == 1) || same_dim(ss, xs, i);
        if (ok) return 1u << k;
    }
    return 0;
}

/* The [C] f32 constant v, or NULL. */
static const float *channel_const(const ir_graph *g, int32_t v, int64_t c) {
    int64_t n = 0;
    const float *p = v >= 0 ? fu_const_f32(g, v, &n) : NULL;
    return p && n == c && g->values[v]->shape.rank == 1 ? p : NULL;
}

/* An inference BatchNormalization of a 3-5-D f32 X with a known channel
 * count and constant [C] scale, B, mean and var, whose statistics outputs
 * are unused: a scale and shift per channel (mopt.ChannelsLastAffine when
 * its X and Y stay channels-last). */
static bool bn_affine(const ir_graph *g, const ir_node *n) {
    if (!fu_is(n, "BatchNormalization") || n->n_inputs != 5 || n->n_outputs < 1 ||
        n->outputs[0] < 0 || n->inputs[0] < 0 || ir_node_attr_int(n, "training_mode", 0) != 0)
        return false;
    for (int32_t k = 1; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) return false;
    const ir_value *x = g->values[n->inputs[0]];
    if (!f32_spatial(x) || x->shape.syms[1] != 0 || x->shape.dims[1] <= 0) return false;
    for (int32_t k = 1; k < 5; k++)
        if (!channel_const(g, n->inputs[k], x->shape.dims[1])) return false;
    return true;
}

/* A Concat (inputs) or Split (outputs) along the channel axis of f32
 * [N, C, spatial...] values, at most FLEX_MAX of them; a Split's output
 * channel counts known at load. It reads and writes each value in either
 * layout (mopt.ChannelsLastConcat/Split copy with the conversion), so it
 * never forces a layout on its neighbours. */
static bool flex(const ir_graph *g, const ir_node *n) {
    bool cat = fu_is(n, "Concat"), split = fu_is(n, "Split");
    if ((!cat && !split) || n->dead || n->n_inputs < 1 || n->inputs[0] < 0 || n->n_outputs < 1 ||
        !fu_attrs_copyable(n))
        return false;
    int32_t nv = cat ? n->n_inputs : n->n_outputs;
    const int32_t *vals = cat ? n->inputs : n->outputs;
    if (nv > FLEX_MAX || (cat && n->n_outputs != 1) || (split && n->n_inputs > 2)) return false;
    const ir_value *one = g->values[cat ? n->outputs[0] : n->inputs[0]];
    if (!f32_spatial(one)) return false;
    int64_t axis = ir_node_attr_int(n, "axis", cat ? -1000 : 0);
    if (axis < 0) axis += one->shape.rank;
    if (axis != 1) return false;
    for (int32_t k = 0; k < nv; k++) {
        if (vals[k] < 0) return false;
        const ir_value *v = g->values[vals[k]];
        if (!f32_spatial(v) || v->shape.rank != one->shape.rank) return false;
        if (split && (v->shape.syms[1] != 0 || v->shape.dims[1] < 0)) return false;
    }
    return true;
}

/* A nearest-neighbour Resize of the spatial axes of a 4-D f32 X (N and C
 * provably unchanged; roi, scales and sizes constant or absent): it reads
 * and writes channels-last as mopt.ChannelsLastResize, copying whole pixels
 * (YOLO's upsampling between a conv and a channel Concat then needs no
 * reorder on either side). */
static bool cl_resize(const ir_graph *g, const ir_node *n) {
    if (!fu_is(n, "Resize") || n->dead || n->n_outputs != 1 || n->outputs[0] < 0 ||
        n->n_inputs < 1 || n->inputs[0] < 0 || !fu_attrs_copyable(n) ||
        ir_graph_opset(g, "") < 11) /* ChannelsLastResize takes opset 11+'s inputs */
        return false;
    const ir_value *x = g->values[n->inputs[0]], *y = g->values[n->outputs[0]];
    if (!f32_spatial(x) || x->shape.rank != 4 || y->dtype != MOPT_DTYPE_F32 || y->shape.rank != 4 ||
        !same_dim(&x->shape, &y->shape, 0) || !same_dim(&x->shape, &y->shape, 1))
        return false;
    if (strcmp(ir_node_attr_string(n, "mode", "nearest"), "nearest") != 0 ||
        ir_node_attr_int(n, "antialias", 0) != 0 ||
        strcmp(ir_node_attr_string(n, "coordinate_transformation_mode", "half_pixel"),
               "tf_crop_and_resize") == 0)
        return false;
    for (int32_t k = 1; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0 && !fu_is_const(g, n->inputs[k])) return false;
    return true;
}

typedef struct layout_state {
    ir_graph *g;
    fu_graph f;
    ir_uses uses;
    bool *keep;    /* per value: kept channels-last (or blocked) */
    bool *blk;     /* per value: kept in oneDNN's blocked layout (a subset of keep) */
    uint8_t *ok;   /* per node: NODE_* */
    uint8_t *full; /* per agnostic node: mask of its full operands */
    bool *checked; /* per agnostic node: operands of one shape only by a run-time check */
    uint64_t *sig; /* per value: spatial signature */
    bool *wnear;   /* per value: made or read (X, residual) by a Winograd conv (wino_conv) */
} layout_state;

/* The live readers of value v, one per call: e starts at first_use(s, v);
 * NULL after the last. Uses left by dead nodes or rewired slots are skipped.
 * still_ok and blk_still_ok walk v's readers with it. */
static int32_t first_use(const layout_state *s, int32_t v) {
    return v < s->uses.n_head ? s->uses.head[v] : -1;
}

static const ir_use *next_reader(const layout_state *s, int32_t v, int32_t *e) {
    while (*e >= 0) {
        const ir_use *u = &s->uses.entries[*e];
        *e = u->next;
        const ir_node *n = s->g->nodes[u->node];
        if (!n->dead && u->slot < n->n_inputs && n->inputs[u->slot] == v) return u;
    }
    return NULL;
}

/* Whether value v may stay channels-last given the current `keep` set. */
static bool still_ok(const layout_state *s, int32_t v) {
    const ir_graph *g = s->g;
    const ir_value *val = g->values[v];
    if (val->flags & IR_VALUE_OUTPUT) return false;
    int32_t pi = s->f.prod[v];
    if (pi < 0) return false;
    const ir_node *p = g->nodes[pi];
    if (s->ok[pi] == NODE_AGNOSTIC || s->ok[pi] == NODE_SCALE || s->ok[pi] == NODE_POOL ||
        s->ok[pi] == NODE_AFFINE || s->ok[pi] == NODE_RESIZE) {
        for (int32_t k = 0; k < p->n_inputs; k++)
            if ((s->full[pi] >> k & 1u) && !s->keep[p->inputs[k]]) return false;
    } else if (s->ok[pi] == NODE_CONV) {
        /* Y with a residual: both or neither */
        int32_t r = res_slot(p);
        if (p->n_inputs > r && p->inputs[r] >= 0 && !s->keep[p->inputs[r]]) return false;
    } else if (s->ok[pi] != NODE_FLEX) {
        return false;
    }
    const ir_use *u;
    for (int32_t e = first_use(s, v); (u = next_reader(s, v, &e)) != NULL;) {
        const ir_node *n = g->nodes[u->node];
        uint8_t kind = s->ok[u->node];
        if (kind == NODE_CONV && u->slot == 0) continue;
        if (kind == NODE_CONV && u->slot == res_slot(n) && s->keep[n->outputs[0]]) continue;
        if (kind == NODE_GAP && u->slot == 0) continue;
        if (kind == NODE_FLEX && (fu_is(n, "Concat") || u->slot == 0)) continue;
        if ((kind == NODE_AGNOSTIC || kind == NODE_SCALE || kind == NODE_POOL ||
             kind == NODE_AFFINE || kind == NODE_RESIZE) &&
            (s->full[u->node] >> u->slot & 1u) && s->keep[n->outputs[0]])
            continue;
        return false;
    }
    return true;
}

/* Blocked candidates: a kept 3-5-D value with a known channel count, a
 * multiple of CONV_BLK (no padding, so the plain layout's size), and at
 * least BLK_MIN_SPATIAL known spatial positions per image. Below that size
 * oneDNN 2.6's channels-last kernels are as fast (Zen 4, 1 thread, batch
 * 1 and 8: 14x14 and 7x7 layers within +-5%); above it the blocked ones
 * win at batch 8 (MobileNetV3's 16 -> 16 with a residual at 112x112:
 * 0.42x, 16 -> 64: 0.75x, depthwise 0.8x). */
#define BLK_MIN_SPATIAL (56 * 56)

static bool blk_shape(const ir_value *v, bool wino_near) {
    const ir_shape *sh = &v->shape;
    if (!f32_spatial(v) || sh->syms[1] || sh->dims[1] <= 0 || sh->dims[1] % CONV_BLK) return false;
    int64_t sp = 1;
    for (int32_t i = 2; i < sh->rank; i++) {
        if (sh->syms[i] || sh->dims[i] <= 0) return false;
        sp *= sh->dims[i];
    }
    return sp >= BLK_MIN_SPATIAL || wino_near;
}

/* A convolution oneDNN will run on its Winograd kernels (the rule of
 * ops_conv_wino_blocked: 3x3, stride 1, no dilation, one group, size kept,
 * channel counts known; f32): they read and write only the blocked layout,
 * so channels-last X and Y would cost a reorder each way on every run
 * (ResNet-18-like at batch 1 on the Xeon: 27 reorders, 1.7 of 24 ms). */
static bool wino_conv(const ir_graph *g, const ir_node *n) {
    if (!is_conv(n) || is_qconv(n) || ir_node_attr_int(n, "group", 1) != 1 || !keeps_size(g, n))
        return false;
    const ir_shape *w = &g->values[n->inputs[1]]->shape;
    const ir_shape *x = &g->values[n->inputs[0]]->shape;
    if (w->rank != 4 || x->rank != 4 || w->syms[0] || w->syms[1] || x->syms[1] || w->dims[2] != 3 ||
        w->dims[3] != 3 || x->dims[1] != w->dims[1])
        return false;
    const int64_t *dil = NULL;
    int64_t n_dil = ir_node_attr_ints(n, "dilations", &dil);
    for (int64_t i = 0; i < n_dil; i++)
        if (dil[i] != 1) return false;
    return ops_conv_wino_blocked(w->dims[1], w->dims[0]);
}

/* An f32 convolution that may read or write the blocked layout (not the
 * static INT8 one): a 1x1, a depthwise one, or a first layer (at most 4
 * input channels, as a stem reading an image). Dense kxk convolutions stay
 * channels-last, where brgconv is as fast or faster (ddddocr's YOLOX det
 * 416 ran ~10% slower with its 208x208 and 104x104 3x3 convs blocked). */
static bool blk_conv(const layout_state *s, int32_t i) {
    const ir_node *n = s->g->nodes[i];
    if (s->ok[i] != NODE_CONV || is_qconv(n)) return false;
    const ir_shape *w = &s->g->values[n->inputs[1]]->shape;
    const ir_shape *x = &s->g->values[n->inputs[0]]->shape;
    bool one = true;
    for (int32_t k = 2; k < w->rank; k++)
        one = one && w->dims[k] == 1;
    int64_t group = ir_node_attr_int(n, "group", 1);
    bool dw = group > 1 && x->syms[1] == 0 && x->dims[1] == group && w->dims[0] == group;
    bool first = x->syms[1] == 0 && x->dims[1] > 0 && x->dims[1] <= 4;
    /* a Winograd conv, or any dense one beside it (its X or Y read or made
     * by one): oneDNN's blocked direct kernel (jit:avx512_core) runs ResNet's
     * stride-2 3x3 convs within 5% of channels-last brgconv, and a chain
     * edge would cost a reorder */
    bool wino = s->wnear[n->inputs[0]] || s->wnear[n->outputs[0]];
    return one || dw || first || wino;
}

/* Whether kept value v may stay blocked given the current `blk` set: made
 * by an f32 convolution (whose residual, if any, is blocked too) or by an
 * agnostic node whose full operands are all blocked; read only as an f32
 * convolution's X, as the residual of one whose Y is blocked, or as a full
 * operand of an agnostic node whose output is blocked. */
static bool blk_still_ok(const layout_state *s, int32_t v) {
    const ir_graph *g = s->g;
    int32_t pi = s->f.prod[v];
    if (pi < 0 || !s->keep[v]) return false;
    const ir_node *p = g->nodes[pi];
    if (s->ok[pi] == NODE_AGNOSTIC || s->ok[pi] == NODE_POOL) {
        for (int32_t k = 0; k < p->n_inputs; k++)
            if ((s->full[pi] >> k & 1u) && !s->blk[p->inputs[k]]) return false;
    } else if (blk_conv(s, pi)) {
        int32_t r = res_slot(p);
        if (p->n_inputs > r && p->inputs[r] >= 0 && !s->blk[p->inputs[r]]) return false;
    } else {
        return false;
    }
    const ir_use *u;
    for (int32_t e = first_use(s, v); (u = next_reader(s, v, &e)) != NULL;) {
        const ir_node *n = g->nodes[u->node];
        if (blk_conv(s, u->node) && u->slot == 0) continue;
        if (blk_conv(s, u->node) && u->slot == res_slot(n) && s->blk[n->outputs[0]]) continue;
        if ((s->ok[u->node] == NODE_AGNOSTIC || s->ok[u->node] == NODE_POOL) &&
            (s->full[u->node] >> u->slot & 1u) && s->blk[n->outputs[0]])
            continue;
        if (s->ok[u->node] == NODE_GAP && u->slot == 0) continue; /* blocked=1 */
        return false;
    }
    return true;
}

/* The blocked subset of the kept values (after `keep` is final). */
static void choose_blocked(layout_state *s) {
    const ir_graph *g = s->g;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (s->ok[i] != NODE_CONV || !wino_conv(g, n)) continue;
        s->wnear[n->inputs[0]] = s->wnear[n->outputs[0]] = true;
        int32_t r = res_slot(n);
        if (n->n_inputs > r && n->inputs[r] >= 0) s->wnear[n->inputs[r]] = true;
    }
    /* back through pools and elementwise nodes (ResNet's stem MaxPool),
     * latest first so a chain of them is crossed in one sweep */
    for (int32_t i = g->n_nodes - 1; i >= 0; i--) {
        const ir_node *n = g->nodes[i];
        if ((s->ok[i] != NODE_POOL && s->ok[i] != NODE_AGNOSTIC) || !s->wnear[n->outputs[0]])
            continue;
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (s->full[i] >> k & 1u) s->wnear[n->inputs[k]] = true;
    }
    for (int32_t v = 0; v < g->n_values; v++)
        s->blk[v] = s->keep[v] && blk_shape(g->values[v], s->wnear[v]);
    for (bool changed = true; changed;) {
        changed = false;
        for (int32_t v = 0; v < g->n_values; v++)
            if (s->blk[v] && !blk_still_ok(s, v)) {
                s->blk[v] = false;
                changed = true;
            }
    }
}

/* Node n replaced in its place by mopt.<op> reading `ins` (the replaced
 * node moves past the node count the pass started with). */
static ir_node *replace(layout_state *s, ir_node *n, const char *op, int32_t n_in,
                        const int32_t *ins) {
    if (!fu_use_mopt_domain(s->g)) return NULL;
    ir_node *f = fu_replace_node(&s->f, n, op, "mopt", n->name, n_in, n->outputs[0]);
    if (!f) return NULL;
    for (int32_t k = 0; k < n_in; k++)
        f->inputs[k] = ins[k];
    return f;
}

/* BatchNormalization n (bn_affine) as mopt.ChannelsLastAffine(X, A, B):
 * A = scale / sqrt(var + eps), B = bias - mean * A (ref_batchnorm_f32's
 * own arithmetic, so results are the same). */
static mopt_status to_affine(layout_state *s, ir_node *n) {
    ir_graph *g = s->g;
    int64_t c = g->values[n->inputs[0]]->shape.dims[1];
    const float *scale = channel_const(g, n->inputs[1], c),
                *bias = channel_const(g, n->inputs[2], c);
    const float *mean = channel_const(g, n->inputs[3], c), *var = channel_const(g, n->inputs[4], c);
    float eps = ir_node_attr_float(n, "epsilon", 1e-5f);
    float *ab = mopt_malloc((size_t)(2 * c) * sizeof *ab);
    if (!ab) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory (layout)");
    for (int64_t j = 0; j < c; j++) {
        ab[j] = scale[j] / sqrtf(var[j] + eps);
        ab[c + j] = bias[j] - mean[j] * ab[j];
    }
    char base[256];
    snprintf(base, sizeof base, "%.200s_affine_a", n->name);
    int32_t ins[3] = {n->inputs[0], fu_add_f32_weight(g, base, 1, &c, ab), -1};
    snprintf(base, sizeof base, "%.200s_affine_b", n->name);
    if (ins[1] >= 0) ins[2] = fu_add_f32_weight(g, base, 1, &c, ab + c);
    mopt_free(ab);
    if (ins[2] < 0) return mopt_fail_context(MOPT_ERR_OUT_OF_MEMORY, "layout of '%s'", n->name);
    return replace(s, n, "ChannelsLastAffine", 3, ins) ? MOPT_OK : MOPT_ERR_OUT_OF_MEMORY;
}

/* A Concat/Split (flex) any of whose values stays channels-last, as
 * mopt.ChannelsLastConcat/Split with its layout bits. */
static mopt_status to_flex(layout_state *s, ir_node *n, int32_t *n_flex) {
    bool cat = fu_is(n, "Concat");
    int64_t in_l = 0, out_l = 0;
    for (int32_t k = 0; k < (cat ? n->n_inputs : 1); k++)
        in_l |= (int64_t)s->keep[n->inputs[k]] << k;
    for (int32_t k = 0; k < (cat ? 1 : n->n_outputs); k++)
        out_l |= (int64_t)s->keep[n->outputs[k]] << k;
    if (!in_l && !out_l) return MOPT_OK;
    if (!fu_use_mopt_domain(s->g)) return MOPT_ERR_OUT_OF_MEMORY;
    ir_node *f = fu_replace_node(&s->f, n, cat ? "ChannelsLastConcat" : "ChannelsLastSplit", "mopt",
                                 n->name, cat ? n->n_inputs : 1, n->outputs[0]);
    if (!f) return MOPT_ERR_OUT_OF_MEMORY;
    for (int32_t k = 0; k < (cat ? n->n_inputs : 1); k++)
        f->inputs[k] = n->inputs[k];
    if (!cat) { /* the other outputs, and the channel counts */
        int32_t *outs = mopt_malloc((size_t)n->n_outputs * sizeof *outs);
        ir_attr *a = ir_node_add_attr(f, "sizes", IR_ATTR_INTS);
        int64_t *sz = a ? mopt_malloc((size_t)n->n_outputs * sizeof *sz) : NULL;
        if (!outs || !sz) {
            mopt_free(outs);
            mopt_free(sz);
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory (layout)");
        }
        for (int32_t k = 0; k < n->n_outputs; k++) {
            outs[k] = n->outputs[k];
            sz[k] = s->g->values[n->outputs[k]]->shape.dims[1];
        }
        a->ints = sz;
        a->n = (size_t)n->n_outputs;
        mopt_free(f->outputs);
        f->outputs = outs;
        f->n_outputs = n->n_outputs;
        int32_t at = s->g->values[outs[0]]->producer;
        for (int32_t k = 1; k < f->n_outputs; k++) {
            s->f.prod[outs[k]] = at;
            s->g->values[outs[k]]->producer = at;
        }
    }
    if (!fu_set_int(f, "axis", 1) || !fu_set_int(f, "in_layout", in_l) ||
        !fu_set_int(f, "out_layout", out_l))
        return MOPT_ERR_OUT_OF_MEMORY;
    (*n_flex)++;
    return MOPT_OK;
}

/* Sets the layouts: a convolution with a channels-last X or Y becomes a
 * FusedConv (a Conv is one with no epilogue) with its `layout`; a
 * GlobalAveragePool reading channels-last, a scale writing it, their
 * mopt.ChannelsLast* operator. */
static mopt_status relayout(layout_state *s, int32_t nn, int32_t *n_conv, int32_t *n_se,
                            int32_t *n_pool, int32_t *n_affine, int32_t *n_flex, int32_t *n_blk,
                            int32_t *n_resize) {
    for (int32_t i = 0; i < nn; i++) {
        ir_node *n = s->g->nodes[i];
        if (s->ok[i] == NODE_FLEX) {
            mopt_status st = to_flex(s, n, n_flex);
            if (st) return st;
            continue;
        }
        if (s->ok[i] == NODE_GAP && s->keep[n->inputs[0]]) {
            ir_node *f = replace(s, n, "ChannelsLastGlobalAveragePool", 1, n->inputs);
            if (!f || (s->blk[f->inputs[0]] && !fu_set_int(f, "blocked", 1)))
                return MOPT_ERR_OUT_OF_MEMORY;
            (*n_se)++;
            continue;
        }
        if (s->ok[i] == NODE_SCALE && s->keep[n->outputs[0]]) {
            int32_t x = s->full[i] & 1u ? 0 : 1, ins[2] = {n->inputs[x], n->inputs[1 - x]};
            if (!replace(s, n, "ChannelsLastScale", 2, ins)) return MOPT_ERR_OUT_OF_MEMORY;
            (*n_se)++;
            continue;
        }
        if (s->ok[i] == NODE_AFFINE && s->keep[n->outputs[0]]) {
            mopt_status st = to_affine(s, n);
            if (st) return st;
            (*n_affine)++;
            continue;
        }
        if (s->ok[i] == NODE_POOL && s->keep[n->outputs[0]]) {
            ir_node *f = replace(
                s, n, fu_is(n, "MaxPool") ? "ChannelsLastMaxPool" : "ChannelsLastAveragePool", 1,
                n->inputs);
            if (!f || !fu_copy_attrs(f, n) ||
                (s->blk[f->outputs[0]] && !fu_set_int(f, "blocked", 1)))
                return MOPT_ERR_OUT_OF_MEMORY;
            (*n_pool)++;
            continue;
        }
        if (s->ok[i] == NODE_AGNOSTIC && s->checked[i] && s->keep[n->outputs[0]]) {
            if (!fu_set_int(n, "mopt_same_shape", 1)) return MOPT_ERR_OUT_OF_MEMORY;
            continue;
        }
        if (s->ok[i] == NODE_RESIZE && s->keep[n->outputs[0]]) {
            ir_node *f = replace(s, n, "ChannelsLastResize", n->n_inputs, n->inputs);
            if (!f || !fu_copy_attrs(f, n)) return MOPT_ERR_OUT_OF_MEMORY;
            (*n_resize)++;
            continue;
        }
        if (s->ok[i] != NODE_CONV) continue;
        int32_t x = n->inputs[0], y = n->outputs[0];
        int64_t layout = (s->blk[x]    ? CONV_LAYOUT_X_BLK16
                          : s->keep[x] ? CONV_LAYOUT_X_NHWC
                                       : 0) |
                         (s->blk[y]    ? CONV_LAYOUT_Y_BLK16
                          : s->keep[y] ? CONV_LAYOUT_Y_NHWC
                                       : 0);
        if (s->blk[x] || s->blk[y]) (*n_blk)++;
        if (!layout) continue;
        if (!is_fused(n)) {
            bool has_b = n->n_inputs > 2 && n->inputs[2] >= 0;
            ir_node *f = replace(s, n, "FusedConv", has_b ? 3 : 2, n->inputs);
            if (!f || !fu_copy_attrs(f, n)) return MOPT_ERR_OUT_OF_MEMORY;
            n = f;
        }
        if (!fu_set_int(n, "layout", layout)) return MOPT_ERR_OUT_OF_MEMORY;
        (*n_conv)++;
    }
    return MOPT_OK;
}

mopt_status pass_layout(ir_graph *g, bool bf16_nhwc, pass_result *r) {
    if (!ops_conv_channels_last_ok()) return MOPT_OK;
    layout_state s;
    memset(&s, 0, sizeof s);
    s.g = g;
    mopt_status st = fu_init(&s.f, g);
    if (!st) st = ir_uses_build(&s.uses, g);
    int32_t nv = g->n_values, nn = g->n_nodes;
    if (!st) {
        s.keep = mopt_calloc((size_t)(nv ? nv : 1), sizeof *s.keep);
        s.blk = mopt_calloc((size_t)(nv ? nv : 1), sizeof *s.blk);
        s.ok = mopt_calloc((size_t)(nn ? nn : 1), sizeof *s.ok);
        s.full = mopt_calloc((size_t)(nn ? nn : 1), sizeof *s.full);
        s.checked = mopt_calloc((size_t)(nn ? nn : 1), sizeof *s.checked);
        s.sig = mopt_calloc((size_t)(nv ? nv : 1), sizeof *s.sig);
        s.wnear = mopt_calloc((size_t)(nv ? nv : 1), sizeof *s.wnear);
        if (!s.keep || !s.blk || !s.ok || !s.full || !s.sig || !s.wnear || !s.checked)
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory (layout)");
    }
    enum { N_KEPT, N_CONV, N_SE, N_AFFINE, N_FLEX, N_POOL, N_BLK, N_RESIZE };
    int32_t c[PASS_COUNTS_CAP] = {0};
    if (!st) {
        /* candidates: every output of a convolution or agnostic node */
        for (int32_t v = 0; v < nv; v++)
            s.sig[v] = mix(0x5157, (uint64_t)v);
        for (int32_t i = 0; i < nn; i++) {
            const ir_node *n = g->nodes[i];
            if (conv_ok(g, n)) {
                s.ok[i] = NODE_CONV;
                s.sig[n->outputs[0]] = conv_sig(g, n, s.sig[n->inputs[0]]);
            } else if (fu_is(n, "GlobalAveragePool") && n->n_outputs == 1 && n->inputs[0] >= 0 &&
                       f32_spatial(g->values[n->inputs[0]])) {
                s.ok[i] = NODE_GAP;
                continue; /* its output stays plain */
            } else if ((fu_is(n, "MaxPool") || fu_is(n, "AveragePool")) && n->n_inputs == 1 &&
                       n->inputs[0] >= 0 && f32_spatial(g->values[n->inputs[0]]) &&
                       (n->n_outputs == 1 || n->outputs[1] < 0) && n->outputs[0] >= 0 &&
                       fu_attrs_copyable(n)) {
                s.ok[i] = NODE_POOL;
                s.full[i] = 1;
                s.sig[n->outputs[0]] = mix(s.sig[n->inputs[0]], 0x9001 + (uint64_t)i);
            } else if (cl_resize(g, n)) {
                s.ok[i] = NODE_RESIZE;
                s.full[i] = 1;
                s.sig[n->outputs[0]] = SIG_RESIZED;
            } else if (flex(g, n)) {
                s.ok[i] = NODE_FLEX;
                bool cat = fu_is(n, "Concat");
                for (int32_t k = 0; k < (cat ? 1 : n->n_outputs); k++) {
                    s.sig[n->outputs[k]] = s.sig[n->inputs[0]];
                    s.keep[n->outputs[k]] = true;
                }
                continue;
            } else if (bn_affine(g, n)) {
                s.ok[i] = NODE_AFFINE;
                s.full[i] = 1;
                s.sig[n->outputs[0]] = s.sig[n->inputs[0]];
            } else if ((s.full[i] = (uint8_t)agnostic(g, n, s.sig, &s.checked[i])) != 0 ||
                       (s.full[i] = (uint8_t)se_scale(g, n)) != 0) {
                bool unused = false;
                s.ok[i] = agnostic(g, n, s.sig, &unused) ? NODE_AGNOSTIC : NODE_SCALE;
                int32_t k = 0;
                while (!(s.full[i] >> k & 1u))
                    k++;
                s.sig[n->outputs[0]] = s.sig[n->inputs[k]];
            }
            if (s.ok[i]) s.keep[n->outputs[0]] = true;
        }
        /* drop what breaks a rule until nothing changes (only removals:
         * it ends) */
        for (bool changed = true; changed;) {
            changed = false;
            for (int32_t v = 0; v < nv; v++)
                if (s.keep[v] && !still_ok(&s, v)) {
                    s.keep[v] = false;
                    changed = true;
                }
        }
        for (int32_t v = 0; v < nv; v++)
            c[N_KEPT] += s.keep[v];
        if (c[N_KEPT]) {
            if (!bf16_nhwc) choose_blocked(&s);
            st = relayout(&s, nn, &c[N_CONV], &c[N_SE], &c[N_POOL], &c[N_AFFINE], &c[N_FLEX],
                          &c[N_BLK], &c[N_RESIZE]);
        }
    }
    mopt_free(s.keep);
    mopt_free(s.blk);
    mopt_free(s.ok);
    mopt_free(s.full);
    mopt_free(s.checked);
    mopt_free(s.sig);
    mopt_free(s.wnear);
    ir_uses_free(&s.uses);
    fu_free(&s.f);
    static const char *const notes[PASS_COUNTS_CAP] = {
        "values channels-last", "convolutions", "squeeze-excitation ops", "batch-norm affines",
        "concats/splits",       "pools",        "blocked convolutions",   "resizes"};
    pass_note_counts(r, c, notes, 0xfeu); /* all but the kept values */
    return st;
}
