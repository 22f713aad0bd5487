/*
 * dispatch.c — plans every node once, at model build: parses its params
 * (the op's parse), decides whether it runs through the dtype bridge, and
 * chooses which implementation runs it: the first op_impl of the op's list
 * that the `backend` option allows and that supports the node (then
 * prepares its state, e.g. reordered weights), else the op's reference run.
 * The stateless impls after the chosen one are kept, in order, as the
 * fallbacks the executor tries when a run declines (then the reference).
 *
 * backend=auto   every impl is eligible, in the op's preference order
 * backend=X      impls of backend X first; ops X lacks use the auto order
 * backend=ref    reference kernels only
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/cpu.h"
#include "core/error.h"
#include "core/log.h"
#include "kernels/limits.h"
#include "ops/impls.h"
#include "ops/node_view.h"
#include "runtime/runtime.h"

op_precision rt_bf16_or_fp32(void) { return cpu_get()->bf16_compute ? OP_PREC_BF16 : OP_PREC_FP32; }

bool rt_float_convs_bf16(const rt_config *cfg) {
    op_precision p = rt_config_precision(cfg);
    return (p == OP_PREC_BF16 || (p == OP_PREC_INT8 && !cfg->qtable)) && ops_conv_bf16_amx();
}

/* Whether g runs static INT8 ops (a calibration table's, a QDQ model's, or a
 * .mopt's): then the convolutions left in float (depthwise, RGB stems) stay
 * FP32, as `mopt quantize-check`'s quality budget measures them. */
static bool has_static_int8(const ir_graph *g) {
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (strncmp(g->nodes[i]->op_type, "StaticQ", 7) == 0) return true;
    return false;
}

/* A convolution in float (not one of the static INT8 ops): at precision=int8
 * it has no int8 kernel, and on AMX its bf16 kernels beat f32 ones several
 * times (ResNet-18-like b1, dynamic int8, i.e. convs in float: f32 ~26 ms,
 * bf16 ~6 ms), so it runs BF16 there (rt_float_convs_bf16) unless the model
 * is static INT8 (has_static_int8). */
static bool float_conv(const ir_node *n) {
    static const char *const ops[] = {"Conv", "FusedConv", "FusedConvDw", "ConvTranspose"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(n->op_type, ops[i]) == 0) return true;
    return false;
}

op_precision rt_config_precision(const rt_config *cfg) {
    if (strcmp(cfg->precision, "bf16") == 0) return rt_bf16_or_fp32();
    if (strcmp(cfg->precision, "int8") == 0) return OP_PREC_INT8;
    return OP_PREC_FP32;
}

/* Tries impl on the view's node; *taken tells whether it was chosen (state
 * in *state). Errors are real failures only. */
static mopt_status try_impl(const op_impl *impl, op_view *v, bool *taken, void **state) {
    *taken = false;
    *state = NULL;
    op_ctx *ctx = &v->ctx;
    if (impl->supports && !impl->supports(ctx, v->in, v->n_in, v->out, v->n_out)) return MOPT_OK;
    if (impl->prepare) {
        mopt_status st = impl->prepare(ctx, v->in, v->n_in, v->out, v->n_out, state);
        if (st == MOPT_ERR_UNSUPPORTED) {
            mopt_clear_error();
            return MOPT_OK;
        }
        if (st) return st;
    }
    *taken = true;
    return MOPT_OK;
}

static bool eligible(const op_impl *impl, const char *backend, int pass, bool any) {
    bool mine = strcmp(impl->backend, backend) == 0;
    if (pass == 0) return mine;
    return any || !mine;
}

/* ---- sizes, before any backend sees a shape (issue 17) ------------------ */

#define RT_MAX_TENSOR_BYTES ((size_t)1 << 46) /* as the executor's per-output cap */

/* The window of a node with ONNX window attributes (pads, strides,
 * dilations, kernel_shape, or the kernel from a weights input 1) over input
 * 0's spatial axes; true when there is none or it is within limits. */
static bool window_fits(const ir_graph *g, const ir_node *n, char *why, size_t cap) {
    const int64_t *pads = NULL, *strides = NULL, *dil = NULL, *ks = NULL;
    int64_t np = ir_node_attr_ints(n, "pads", &pads);
    int64_t ns = ir_node_attr_ints(n, "strides", &strides);
    int64_t nd = ir_node_attr_ints(n, "dilations", &dil);
    int64_t nk = ir_node_attr_ints(n, "kernel_shape", &ks);
    if (np <= 0 && ns <= 0 && nd <= 0) return true;
    if (n->n_inputs < 1 || n->inputs[0] < 0) return true;
    const ir_shape *x = &g->values[n->inputs[0]]->shape;
    if (!ir_shape_is_concrete(x) || x->rank < 3 || x->rank > 5) return true;
    int32_t S = x->rank - 2;
    int64_t k[3], st[3], dl[3], pl[3], pr[3];
    const ir_shape *w =
        n->n_inputs > 1 && n->inputs[1] >= 0 ? &g->values[n->inputs[1]]->shape : NULL;
    for (int32_t i = 0; i < S; i++) {
        if (nk == S)
            k[i] = ks[i];
        else if (w && w->rank == x->rank && w->syms[2 + i] == 0)
            k[i] = w->dims[2 + i];
        else
            k[i] = 1;
        st[i] = ns == S ? strides[i] : 1;
        dl[i] = nd == S ? dil[i] : 1;
        pl[i] = np == 2 * S ? pads[i] : 0;
        pr[i] = np == 2 * S ? pads[S + i] : 0;
    }
    return kn_limits_window(S, x->dims + 2, k, st, dl, pl, pr, why, cap);
}

mopt_status rt_node_sizes(const ir_graph *g, const ir_node *n, bool *backends_ok, char *why,
                          size_t cap) {
    *backends_ok = true;
    why[0] = '\0';
    char b[IR_SHAPE_STR_CAP], sub[160];
    for (int32_t io = 0; io < 2; io++) {
        int32_t count = io ? n->n_outputs : n->n_inputs;
        const int32_t *ids = io ? n->outputs : n->inputs;
        for (int32_t k = 0; k < count; k++) {
            if (ids[k] < 0) continue;
            const ir_value *v = g->values[ids[k]];
            if (!ir_shape_is_concrete(&v->shape)) continue;
            int64_t numel = ir_shape_numel(&v->shape);
            size_t esz = mopt_dtype_size(v->dtype), bytes = 0;
            if (numel < 0 || (esz && (!mopt_mul_overflow((size_t)numel, esz, &bytes) ||
                                      bytes > RT_MAX_TENSOR_BYTES))) {
                snprintf(why, cap, "%s '%s' %s is too large", io ? "output" : "input", v->name,
                         ir_shape_str(&v->shape, g, b, sizeof b));
                return MOPT_ERR_LIMIT;
            }
            if (*backends_ok &&
                !kn_limits_tensor(v->shape.rank, v->shape.dims, NULL, sub, sizeof sub)) {
                *backends_ok = false;
                snprintf(why, cap, "%s '%s' %s: %s", io ? "output" : "input", v->name,
                         ir_shape_str(&v->shape, g, b, sizeof b), sub);
            }
        }
    }
    if (*backends_ok && !window_fits(g, n, sub, sizeof sub)) {
        *backends_ok = false;
        snprintf(why, cap, "window: %s", sub);
    }
    return MOPT_OK;
}

/* Backends whose libraries index in 32 bits somewhere (kernels/limits.h). */
static bool external_backend(const op_impl *impl) {
    return strcmp(impl->backend, "onednn") == 0 || strcmp(impl->backend, "openblas") == 0;
}

/* Chooses node i's implementation and its fallbacks. */
static mopt_status choose_impl(mopt_model *m, int32_t i, op_view *v) {
    const ir_node *n = m->graph->nodes[i];
    rt_node_plan *p = &m->plans[i];
    const op_impl *const *impls = n->op->impls;
    const char *backend = m->config.backend;
    bool backends_ok;
    char why[512];
    mopt_status st = rt_node_sizes(m->graph, n, &backends_ok, why, sizeof why);
    if (st) return mopt_fail(st, "node '%s' (%s): %s", n->name, n->op_type, why);
    if (!impls || strcmp(backend, "ref") == 0 || p->bridge || p->bridge_per_run) return MOPT_OK;
    bool any = strcmp(backend, "auto") == 0;
    if (!backends_ok && m->config.verbose)
        mopt_log(MOPT_LOG_INFO,
                 "mopt: node %d '%s': no oneDNN/OpenBLAS kernel, sizes beyond their limits (%s)",
                 (int)i, n->name, why);
    /* pass 0: the requested backend; pass 1: everything else in order */
    for (int pass = any ? 1 : 0; pass < 2; pass++) {
        for (int k = 0; impls[k]; k++) {
            const op_impl *impl = impls[k];
            if (!eligible(impl, backend, pass, any)) continue;
            if (!backends_ok && external_backend(impl)) continue;
            if (p->impl) {
                /* a fallback: stateless impls that support the node */
                if (p->n_next < RT_FALLBACKS_MAX && !impl->prepare &&
                    (!impl->supports || impl->supports(&v->ctx, v->in, v->n_in, v->out, v->n_out)))
                    p->next[p->n_next++] = impl;
                continue;
            }
            bool taken;
            void *state;
            st = try_impl(impl, v, &taken, &state);
            if (st)
                return mopt_fail_context(st, "node '%s' (%s), kernel %s", n->name, n->op_type,
                                         impl->name);
            if (!taken) continue;
            p->impl = impl;
            p->state = state;
            v->ctx.state = state;
        }
    }
    if (p->impl) p->kernel = p->impl->variant ? p->impl->variant(p->state) : p->impl->name;
    return MOPT_OK;
}

/* The inputs (or outputs) of node n that an impl's storage predicate
 * (op_impl's bf16_io or u8_io) takes in that storage: bit k for slot k < 32. */
static uint32_t io_mask(const ir_node *n, const op_view *v,
                        bool (*io)(const op_ctx *ctx, const op_tensor *in, int n_in, bool output,
                                   int k),
                        bool output) {
    const int32_t n_slots = output ? n->n_outputs : n->n_inputs;
    const int32_t *slots = output ? n->outputs : n->inputs;
    uint32_t mask = 0;
    for (int32_t k = 0; k < n_slots && k < 32; k++)
        if (slots[k] >= 0 && io(&v->ctx, v->in, v->n_in, output, (int)k)) mask |= 1u << k;
    return mask;
}

mopt_status rt_plan_kernels(mopt_model *m) {
    const ir_graph *g = m->graph;
    size_t nn = (size_t)(g->n_nodes ? g->n_nodes : 1);
    m->plans = mopt_calloc(nn, sizeof *m->plans);
    /* one block for every node's params, each 16-byte aligned */
    size_t total = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        total += (g->nodes[i]->op->params_size + 15) & ~(size_t)15;
    m->params_block = mopt_aligned_alloc(total ? total : 1);
    op_view *v = mopt_malloc(sizeof *v);
    if (!m->plans || !m->params_block || !v) {
        mopt_free(v);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory planning kernels");
    }
    op_view_src src = {.graph = m->graph,
                       .outputs_from_ir = true,
                       .precision = rt_config_precision(&m->config),
                       .opt_level = m->config.opt_level,
                       .threads = 1};
    if (m->config.verbose && strcmp(m->config.precision, "bf16") == 0 &&
        src.precision == OP_PREC_FP32)
        mopt_log(MOPT_LOG_INFO,
                 "mopt: precision=bf16 runs the FP32 kernels: bf16 products are no faster than "
                 "f32 ones on this CPU (%s; bf16 pays with AMX or on AMD's AVX512-BF16); "
                 "MOPT_BF16_COMPUTE=1 forces bf16",
                 cpu_get()->avx512_bf16 ? "AVX512-BF16 without AMX" : "no AVX512-BF16");
    uint8_t *at = m->params_block;
    mopt_status st = MOPT_OK;
    const bool float_convs_bf16 =
        src.precision == OP_PREC_INT8 && rt_float_convs_bf16(&m->config) && !has_static_int8(g);
    int32_t n_conv_bf16 = 0;
    for (int32_t i = 0; i < g->n_nodes && !st; i++) {
        const ir_node *n = g->nodes[i];
        rt_node_plan *p = &m->plans[i];
        p->kernel = "ref";
        p->inplace_in = -1;
        p->precision = src.precision;
        if (p->precision == OP_PREC_INT8 && pass_name_listed(m->config.int8_exclude, n->name)) {
            p->precision = m->config.int8_fallback_bf16 ? rt_bf16_or_fp32() : OP_PREC_FP32;
            if (m->config.verbose)
                mopt_log(MOPT_LOG_INFO, "mopt: int8_exclude: node '%s' (%s) runs %s", n->name,
                         n->op_type, p->precision == OP_PREC_BF16 ? "BF16" : "FP32");
        } else if (p->precision == OP_PREC_INT8 && float_convs_bf16 && float_conv(n)) {
            p->precision = OP_PREC_BF16;
            n_conv_bf16++;
        }
        st = op_view_init(v, &src, n, NULL);
        if (st) break;
        v->ctx.precision = p->precision;
        if (n->op->params_size) {
            memcpy(at, v->params_buf, n->op->params_size);
            p->params = at;
            at += (n->op->params_size + 15) & ~(size_t)15;
        }
        op_bridge_plan bp;
        if (ops_bridge_plan(&v->ctx, v->in, v->n_in, v->out, v->n_out, &bp)) {
            p->bridge = mopt_malloc(sizeof *p->bridge);
            if (!p->bridge) {
                st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory planning kernels");
                break;
            }
            *p->bridge = bp;
        } else {
            /* an input dtype unknown at build: bridging is decided per run */
            for (int32_t k = 0; k < n->n_inputs; k++)
                if (n->inputs[k] >= 0 && v->in[k].dtype == MOPT_DTYPE_UNDEFINED &&
                    ops_bridge_may_apply(n->op))
                    p->bridge_per_run = true;
        }
        st = choose_impl(m, i, v);
        if (!st && p->impl && p->impl->inplace) {
            int j = p->impl->inplace(&v->ctx, v->in, v->n_in);
            if (j >= 0 && j < n->n_inputs && j < INT8_MAX && n->inputs[j] >= 0)
                p->inplace_in = (int8_t)j;
        }
        if (!st && p->impl && p->impl->bf16_io) {
            p->bf16_in |= io_mask(n, v, p->impl->bf16_io, false);
            p->bf16_out |= io_mask(n, v, p->impl->bf16_io, true);
        }
        if (!st && p->impl && p->impl->u8_io) {
            p->u8_in |= io_mask(n, v, p->impl->u8_io, false);
            p->u8_out |= io_mask(n, v, p->impl->u8_io, true);
        }
    }
    mopt_free(v);
    if (n_conv_bf16 && m->config.verbose)
        mopt_log(MOPT_LOG_INFO,
                 "mopt: precision=int8 without a calibration table: %d convolutions (no int8 "
                 "kernel) run BF16 on AMX, faster than f32",
                 (int)n_conv_bf16);
    if (!st) st = rt_plan_storage(m);
    return st;
}

/* ---- the storage plan (precision=bf16) ---------------------------------- */

/* Whether value val may be kept bf16: an f32 intermediate, not a graph
 * input or output, not a weight. */
static bool storable(const ir_graph *g, int32_t val) {
    const ir_value *v = g->values[val];
    if (v->dtype != MOPT_DTYPE_F32 || (v->flags & IR_VALUE_INITIALIZER) || v->producer < 0)
        return false;
    for (int32_t k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] == val) return false;
    return true;
}

/* Which of a node plan's declarations a storage plan reads: bit k of *in /
 * *out says the impl reads input k / writes output k in that storage. */
typedef struct storage_kind {
    uint32_t (*in)(const rt_node_plan *p);
    uint32_t (*out)(const rt_node_plan *p);
} storage_kind;

static uint32_t u8_in_of(const rt_node_plan *p) { return p->u8_in; }
static uint32_t u8_out_of(const rt_node_plan *p) { return p->u8_out; }
static uint32_t bf16_in_of(const rt_node_plan *p) { return p->bf16_in; }
static uint32_t bf16_out_of(const rt_node_plan *p) { return p->bf16_out; }

/* The storage plan's one rule, for either storage: an f32 intermediate is
 * kept when its producer declared the output and every consumer declared
 * the input (with need_reader, at least one consumer too); values marked in
 * skip are left alone. *store is the mask, or NULL when nothing is kept;
 * *kept the count. */
static mopt_status mark_storage(const mopt_model *m, storage_kind kind, const bool *skip,
                                bool need_reader, bool **store_out, int32_t *kept_out) {
    const ir_graph *g = m->graph;
    *store_out = NULL;
    *kept_out = 0;
    bool any = false;
    for (int32_t i = 0; i < g->n_nodes && !any; i++)
        any = kind.out(&m->plans[i]) != 0;
    if (!any) return MOPT_OK;
    bool *store = mopt_calloc((size_t)g->n_values, sizeof *store);
    bool *read = mopt_calloc((size_t)g->n_values, sizeof *read);
    if (!store || !read) {
        mopt_free(store);
        mopt_free(read);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory planning tensor storage");
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        uint32_t out = kind.out(&m->plans[i]);
        for (int32_t k = 0; k < n->n_outputs && k < 32; k++)
            if (n->outputs[k] >= 0 && (out >> k & 1u) && storable(g, n->outputs[k]) &&
                !(skip && skip[n->outputs[k]]))
                store[n->outputs[k]] = true;
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        uint32_t in = kind.in(&m->plans[i]);
        for (int32_t k = 0; k < n->n_inputs; k++) {
            if (n->inputs[k] < 0) continue;
            if (k < 32 && (in >> k & 1u))
                read[n->inputs[k]] = true;
            else
                store[n->inputs[k]] = false;
        }
    }
    int32_t kept = 0;
    for (int32_t v = 0; v < g->n_values; v++) {
        store[v] = store[v] && (read[v] || !need_reader);
        kept += store[v];
    }
    mopt_free(read);
    if (!kept) {
        mopt_free(store);
        return MOPT_OK;
    }
    *store_out = store;
    *kept_out = kept;
    return MOPT_OK;
}

int32_t rt_storage_u8_count(const mopt_model *m) {
    int32_t n = 0;
    for (int32_t v = 0; m->u8_store && v < m->graph->n_values; v++)
        n += m->u8_store[v];
    return n;
}

mopt_status rt_plan_storage(mopt_model *m) {
    const ir_graph *g = m->graph;
    if (m->config.opt_level < 3 || g->n_values == 0) return MOPT_OK;
    /* int8 first: u8 rows blocks between int8 ops (op_impl.u8_io), e.g. a
     * FusedMatMul+Gelu feeding the next int8 matmul, quantized by the
     * producer; a tensor needs a reader to be worth a block */
    int32_t kept = 0;
    mopt_status st =
        mark_storage(m, (storage_kind){u8_in_of, u8_out_of}, NULL, true, &m->u8_store, &kept);
    if (st) return st;
    if (kept && m->config.verbose)
        mopt_log(MOPT_LOG_INFO,
                 "mopt: u8 storage: %d tensors kept as u8 rows between int8 ops (quantized by "
                 "their producer)",
                 (int)kept);
    /* then bf16 (op_impl.bf16_io), never over a u8 block; none kept e.g. on
     * oneDNN without AVX-512, whose matmuls run f32 */
    bool *store = NULL;
    st =
        mark_storage(m, (storage_kind){bf16_in_of, bf16_out_of}, m->u8_store, false, &store, &kept);
    if (st || !store) return st;
    m->bf16_store = store;
    if (m->config.verbose) {
        int32_t stored, to_bf16, to_f32;
        rt_storage_counts(m, &stored, &to_bf16, &to_f32);
        mopt_log(MOPT_LOG_INFO,
                 "mopt: bf16 storage: %d tensors kept bf16 between ops; %d f32 tensors converted "
                 "by a bf16 consumer, %d outputs kept f32 for their consumers",
                 (int)stored, (int)to_bf16, (int)to_f32);
    }
    return MOPT_OK;
}

void rt_storage_counts(const mopt_model *m, int32_t *stored, int32_t *to_bf16, int32_t *to_f32) {
    const ir_graph *g = m->graph;
    *stored = *to_bf16 = *to_f32 = 0;
    for (int32_t v = 0; m->bf16_store && v < g->n_values; v++)
        *stored += m->bf16_store[v];
    for (int32_t i = 0; m->plans && i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_inputs && k < 32; k++) {
            int32_t val = n->inputs[k];
            if (val >= 0 && (m->plans[i].bf16_in >> k & 1u) &&
                g->values[val]->dtype == MOPT_DTYPE_F32 &&
                !(g->values[val]->flags & IR_VALUE_INITIALIZER) &&
                !(m->bf16_store && m->bf16_store[val]))
                (*to_bf16)++;
        }
        for (int32_t k = 0; k < n->n_outputs && k < 32; k++) {
            int32_t val = n->outputs[k];
            if (val >= 0 && (m->plans[i].bf16_out >> k & 1u) &&
                !(m->bf16_store && m->bf16_store[val]))
                (*to_f32)++;
        }
    }
}

void rt_release_kernels(mopt_model *m) {
    if (!m->plans) return;
    for (int32_t i = 0; i < m->graph->n_nodes; i++) {
        rt_node_plan *p = &m->plans[i];
        if (p->impl && p->impl->release && p->state) p->impl->release(p->state);
        mopt_free(p->bridge);
    }
    mopt_free(m->plans);
    mopt_free(m->bf16_store);
    m->bf16_store = NULL;
    mopt_free(m->u8_store);
    m->u8_store = NULL;
    mopt_aligned_free(m->params_block);
    m->plans = NULL;
    m->params_block = NULL;
}

const char *rt_node_kernel_name(const mopt_model *m, int32_t i) {
    if (!m->plans || i < 0 || i >= m->graph->n_nodes || !m->plans[i].kernel) return "ref";
    return m->plans[i].kernel;
}
