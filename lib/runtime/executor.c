/*
 * executor.c — runs a model's nodes in order for one set of inputs: binds
 * and checks inputs (symbolic dims must agree across inputs), infers each
 * node's concrete output shapes, places outputs (in the arena of the memory
 * plan for this input-shape signature, straight in the caller's buffer for
 * graph outputs the caller provides, else on the heap), runs the kernel,
 * frees heap intermediates after their last use, and hands outputs over.
 * With a plan in place and caller-provided outputs, a run allocates nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/log.h"
#include "kernels/cpu/bf16cvt.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/rowquant.h"
#include "ops/impls.h"
#include "runtime/runtime.h"

/* Frees a value's data if this run allocated it; the value is then unset
 * (data NULL). Weights stay bound for the session's life. */
static void release_value(mopt_session *s, int32_t v) {
    rt_slot *sl = &s->slots[v];
    op_tensor *t = &s->vals[v];
    if (sl->owned) {
        mopt_aligned_free(t->data);
        int64_t n = ir_shape_numel(&t->shape);
        s->live_bytes -= n * (int64_t)mopt_dtype_size(t->dtype);
    }
    sl->owned = false;
    sl->refs = 0;
    t->data = NULL;
}

static void release_all(mopt_session *s) {
    const ir_graph *g = s->model->graph;
    for (int32_t i = 0; i < g->n_values; i++)
        if (s->vals[i].data && !(g->values[i]->flags & IR_VALUE_INITIALIZER)) release_value(s, i);
    s->live_bytes = 0;
}

void rt_session_bind_weights(mopt_session *s) {
    const ir_graph *g = s->model->graph;
    for (int32_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        if (!(v->flags & IR_VALUE_INITIALIZER)) continue;
        op_tensor *t = &s->vals[i];
        t->dtype = v->dtype;
        t->shape = v->shape;
        t->data = v->data ? v->data : (void *)&s->consumers; /* any non-NULL for empty */
    }
}

/* The names of the graph inputs as "'a', 'b'" (those not fed, when fed is
 * given), for error messages. */
static const char *input_list(const ir_graph *g, const bool *fed, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (int32_t k = 0; k < g->n_inputs && len < cap; k++)
        if (!fed || !fed[k])
            len += (size_t)snprintf(buf + len, cap - len, "%s'%s'", len ? ", " : "",
                                    g->values[g->inputs[k]]->name);
    return buf;
}

/* Which "dim.<name>" option fixed input idx's axis, or NULL. */
static const rt_fixed_dim *fixed_dim(const mopt_model *m, int32_t idx, int32_t axis) {
    for (int32_t i = 0; i < m->n_fixed; i++)
        if (m->fixed[i].input == idx && m->fixed[i].axis == axis) return &m->fixed[i];
    return NULL;
}

/* Checks the feed as a whole before binding: every name known, none twice,
 * every input fed; each error names the inputs at fault. */
static mopt_status check_feed(const ir_graph *g, size_t n_inputs, const char *const *names,
                              const mopt_tensor *const *inputs) {
    char list[512];
    if (n_inputs && !inputs) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "inputs is NULL");
    if (!names) {
        if (n_inputs != (size_t)g->n_inputs)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "the model has %d input%s (%s) but %zu were given", (int)g->n_inputs,
                             g->n_inputs == 1 ? "" : "s", input_list(g, NULL, list, sizeof list),
                             n_inputs);
        return MOPT_OK;
    }
    bool fed[256] = {false};
    if (g->n_inputs > 256) return MOPT_OK; /* bind_inputs checks one by one */
    for (size_t i = 0; i < n_inputs; i++) {
        if (!names[i]) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "input name %zu is NULL", i);
        int32_t idx = -1;
        for (int32_t k = 0; k < g->n_inputs && idx < 0; k++)
            if (strcmp(g->values[g->inputs[k]]->name, names[i]) == 0) idx = k;
        if (idx < 0)
            return mopt_fail(MOPT_ERR_NOT_FOUND, "the model has no input '%s' (its inputs: %s)",
                             names[i], input_list(g, NULL, list, sizeof list));
        if (fed[idx])
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "input '%s' is given twice", names[i]);
        fed[idx] = true;
    }
    if (n_inputs != (size_t)g->n_inputs)
        return mopt_fail(
            MOPT_ERR_INVALID_ARGUMENT, "missing input%s %s: every model input must be fed",
            (size_t)g->n_inputs - n_inputs == 1 ? "" : "s", input_list(g, fed, list, sizeof list));
    return MOPT_OK;
}

static mopt_status bind_inputs(mopt_session *s, size_t n_inputs, const char *const *names,
                               const mopt_tensor *const *inputs) {
    const ir_graph *g = s->model->graph;
    mopt_status cst = check_feed(g, n_inputs, names, inputs);
    if (cst) return cst;
    if (n_inputs != (size_t)g->n_inputs)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "the model has %d inputs but %zu were given",
                         (int)g->n_inputs, n_inputs);
    /* symbol bindings: value of each symbol, and which input fixed it */
    int64_t sym_val[256];
    int32_t sym_from[256];
    int32_t n_sym = g->n_symbols < 256 ? g->n_symbols : 256;
    for (int32_t i = 0; i < n_sym; i++)
        sym_from[i] = -1;
    for (size_t i = 0; i < n_inputs; i++) {
        int32_t idx = (int32_t)i;
        if (names) {
            if (!names[i]) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "input name %zu is NULL", i);
            idx = -1;
            for (int32_t k = 0; k < g->n_inputs; k++)
                if (strcmp(g->values[g->inputs[k]]->name, names[i]) == 0) idx = k;
            if (idx < 0)
                return mopt_fail(MOPT_ERR_NOT_FOUND, "the model has no input '%s'", names[i]);
        }
        const ir_value *v = g->values[g->inputs[idx]];
        op_tensor *slt = &s->vals[g->inputs[idx]];
        if (slt->data)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "input '%s' is given twice", v->name);
        const mopt_tensor *t = inputs[i];
        if (!t) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "input '%s' tensor is NULL", v->name);
        if (v->dtype != MOPT_DTYPE_UNDEFINED && t->dtype != v->dtype)
            return mopt_fail(MOPT_ERR_TYPE, "input '%s' must be %s, not %s", v->name,
                             mopt_dtype_name(v->dtype), mopt_dtype_name(t->dtype));
        char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP];
        ir_shape ts;
        ir_shape_set(&ts, t->rank, t->dims);
        if (v->shape.rank >= 0) {
            if (v->shape.rank != t->rank)
                return mopt_fail(MOPT_ERR_SHAPE, "input '%s' must have shape %s, not %s", v->name,
                                 ir_shape_str(&v->shape, g, a, sizeof a),
                                 ir_shape_str(&ts, g, b, sizeof b));
            for (int32_t d = 0; d < t->rank; d++) {
                int32_t sy = v->shape.syms[d];
                const rt_fixed_dim *fx =
                    sy == 0 && v->shape.dims[d] != t->dims[d] ? fixed_dim(s->model, idx, d) : NULL;
                if (fx)
                    return mopt_fail(MOPT_ERR_SHAPE,
                                     "input '%s': dimension '%s' (axis %d) was fixed to %" PRId64
                                     " when the model was loaded (option dim.%s), but the tensor "
                                     "has %" PRId64 " (shape %s)",
                                     v->name, fx->name, (int)d, fx->value, fx->name, t->dims[d],
                                     ir_shape_str(&ts, g, b, sizeof b));
                if (sy == 0 && v->shape.dims[d] != t->dims[d])
                    return mopt_fail(MOPT_ERR_SHAPE,
                                     "input '%s' must have shape %s, not %s (axis %d)", v->name,
                                     ir_shape_str(&v->shape, g, a, sizeof a),
                                     ir_shape_str(&ts, g, b, sizeof b), (int)d);
                if (sy > 0 && sy <= n_sym) {
                    if (sym_from[sy - 1] < 0) {
                        sym_from[sy - 1] = idx;
                        sym_val[sy - 1] = t->dims[d];
                    } else if (sym_val[sy - 1] != t->dims[d]) {
                        return mopt_fail(MOPT_ERR_SHAPE,
                                         "dimension '%s' is %" PRId64 " in input '%s' but %" PRId64
                                         " in input '%s'",
                                         g->symbols[sy - 1], sym_val[sy - 1],
                                         g->values[g->inputs[sym_from[sy - 1]]]->name, t->dims[d],
                                         v->name);
                    }
                }
            }
        }
        slt->dtype = t->dtype;
        slt->shape = ts;
        s->run_dtypes[g->inputs[idx]] = t->dtype;
        s->run_shapes[g->inputs[idx]] = ts;
        slt->data = t->data ? t->data : (void *)&s->consumers; /* any non-NULL for empty */
        s->slots[g->inputs[idx]].owned = false;
    }
    return MOPT_OK;
}

/* Does this run's output k of node n agree with the plan? A node whose
 * inference ran may give other shapes (data-dependent ones): then the plan
 * is broken for the rest of the run and every later node infers again. */
static void check_against_plan(mopt_session *s, const ir_node *n, const op_tensor *out) {
    const rt_mem_plan *p = s->plan;
    for (int32_t k = 0; k < n->n_outputs && !s->plan_broken; k++) {
        int32_t v = n->outputs[k];
        if (v < 0) continue;
        if (p->dtypes[v] != out[k].dtype || p->shapes[v].rank != out[k].shape.rank ||
            memcmp(p->shapes[v].dims, out[k].shape.dims,
                   (size_t)out[k].shape.rank * sizeof(int64_t)) != 0)
            s->plan_broken = true;
    }
}

/* Never a silent slow path (issue 10): with verbose set, the first run of
 * each input-shape signature says why node i's kernel declined and what runs
 * instead. Clears the decline's error either way. */
static void fallback_note(const mopt_session *s, int32_t i, const char *declined,
                          const char *next) {
    if (s->config.verbose && (!s->plan || s->plan_broken)) {
        const ir_node *n = s->model->graph->nodes[i];
        const char *why = mopt_error_message();
        mopt_log(MOPT_LOG_INFO, "mopt: node %d '%s' (%s): %s declined, fell back to %s because: %s",
                 (int)i, n->name, n->op_type, declined, next, why[0] ? why : "(no reason given)");
    }
    mopt_clear_error();
}

/* The fallbacks of node i after `declined` declined, then the reference. */
static mopt_status run_fallbacks(mopt_session *s, int32_t i, op_view *v, const char *declined) {
    const rt_node_plan *plan = &s->model->plans[i];
    op_ctx *ctx = &v->ctx;
    mopt_status st = MOPT_ERR_UNSUPPORTED;
    for (int j = 0; st == MOPT_ERR_UNSUPPORTED && j < plan->n_next; j++) {
        fallback_note(s, i, declined, plan->next[j]->name);
        declined = plan->next[j]->name;
        st = plan->next[j]->run(ctx, v->in, v->n_in, v->out, v->n_out);
    }
    if (st == MOPT_ERR_UNSUPPORTED) {
        fallback_note(s, i, declined, "reference");
        st = ops_run_reference(ctx->def, ctx, v->in, v->n_in, v->out, v->n_out);
    }
    return st;
}

/* Whether value val is kept as a u8 rows block (the storage plan's). */
static bool u8_stored(const mopt_session *s, int32_t val) {
    return val >= 0 && s->model->u8_store && s->model->u8_store[val];
}

/* Whether a view holds tensors the storage plan keeps bf16 or u8. */
static bool has_stored(const mopt_session *s, const ir_node *n, const op_view *v) {
    for (int k = 0; k < v->n_in; k++)
        if ((v->in[k].dtype == MOPT_DTYPE_BF16 && v->in[k].data && s->model->bf16_store) ||
            (k < n->n_inputs && u8_stored(s, n->inputs[k])))
            return true;
    for (int k = 0; k < v->n_out; k++)
        if ((v->out[k].dtype == MOPT_DTYPE_BF16 && s->model->bf16_store) ||
            (k < n->n_outputs && u8_stored(s, n->outputs[k])))
            return true;
    return false;
}

/* A u8 rows block's logical f32 shape, rows and row length. */
static void rowq_logical(const op_tensor *t, ir_shape *shape, int64_t *rows, int64_t *K) {
    *shape = t->shape;
    shape->dims[shape->rank - 1] -= CPU_ROWQ_EXTRA;
    *K = shape->dims[shape->rank - 1];
    int64_t numel = ir_shape_numel(shape);
    *rows = *K > 0 ? numel / *K : 0;
}

/* The fallbacks of a node whose stored tensors (bf16, u8 rows blocks) only
 * its chosen impl reads or writes as such: they run on f32 copies (the rare
 * path: a decline at run time), outputs converted back after (u8 rows
 * quantized here, as the chosen impl would have). */
static mopt_status run_fallbacks_f32(mopt_session *s, int32_t i, op_view *v, const char *declined) {
    const ir_node *n = s->model->graph->nodes[i];
    op_tensor keep[2 * OP_MAX_IO];
    memcpy(keep, v->in, (size_t)v->n_in * sizeof *keep);
    memcpy(keep + OP_MAX_IO, v->out, (size_t)v->n_out * sizeof *keep);
    mopt_status st = MOPT_OK;
    for (int k = 0; k < 2 * OP_MAX_IO && !st; k++) {
        bool input = k < OP_MAX_IO;
        int j = input ? k : k - OP_MAX_IO;
        if (input ? j >= v->n_in : j >= v->n_out) continue;
        op_tensor *t = input ? &v->in[j] : &v->out[j];
        int32_t val =
            input ? (j < n->n_inputs ? n->inputs[j] : -1) : (j < n->n_outputs ? n->outputs[j] : -1);
        bool u8 = u8_stored(s, val) && t->dtype == MOPT_DTYPE_U8 && t->shape.rank >= 1;
        bool bf16 = t->dtype == MOPT_DTYPE_BF16 && s->model->bf16_store;
        if ((!u8 && !bf16) || (input && !t->data)) continue;
        ir_shape shape = t->shape;
        int64_t rows = 0, K = 0;
        if (u8) rowq_logical(t, &shape, &rows, &K);
        int64_t n_el = ir_shape_numel(&shape);
        float *f = mopt_aligned_alloc((size_t)(n_el > 0 ? n_el : 1) * sizeof(float));
        if (!f) {
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory widening stored tensors");
            break;
        }
        if (input && u8)
            cpu_rowq_to_f32(t->data, rows, K, f);
        else if (input)
            cpu_bf16_to_f32(t->data, f, n_el);
        t->data = f;
        t->dtype = MOPT_DTYPE_F32;
        t->shape = shape;
    }
    if (!st) st = run_fallbacks(s, i, v, declined);
    for (int k = 0; k < 2 * OP_MAX_IO; k++) {
        bool input = k < OP_MAX_IO;
        int j = input ? k : k - OP_MAX_IO;
        if (input ? j >= v->n_in : j >= v->n_out) continue;
        op_tensor *t = input ? &v->in[j] : &v->out[j];
        if (t->data == keep[k].data) continue; /* never widened */
        if (!input && !st && keep[k].dtype == MOPT_DTYPE_U8) {
            ir_shape shape;
            int64_t rows, K;
            rowq_logical(&keep[k], &shape, &rows, &K);
            float *sc = mopt_malloc((size_t)(rows > 0 ? rows : 1) * sizeof *sc);
            int32_t *zp = mopt_malloc((size_t)(rows > 0 ? rows : 1) * sizeof *zp);
            if (sc && zp)
                cpu_rowq_from_f32(t->data, rows, K, cpu_kernels_for("avx512") != NULL, keep[k].data,
                                  sc, zp);
            else
                st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory quantizing an output");
            mopt_free(sc);
            mopt_free(zp);
        } else if (!input && !st) {
            cpu_f32_to_bf16(t->data, keep[k].data, ir_shape_numel(&t->shape));
        }
        mopt_aligned_free(t->data);
    }
    memcpy(v->in, keep, (size_t)v->n_in * sizeof *keep);
    memcpy(v->out, keep + OP_MAX_IO, (size_t)v->n_out * sizeof *keep);
    return st;
}

/* Runs node i's chosen implementation; when it declines (UNSUPPORTED), its
 * fallbacks in order, then the reference (on f32 copies of bf16-stored
 * tensors). Bridged nodes run the reference through the dtype bridge. */
static mopt_status run_impl(mopt_session *s, int32_t i, op_view *v) {
    const rt_node_plan *plan = &s->model->plans[i];
    op_ctx *ctx = &v->ctx;
    const op_def *d = ctx->def;
    if (plan->bridge || plan->bridge_per_run)
        return ops_bridge_run(ctx, plan->bridge, &s->bridge_scratch[i], v->in, v->n_in, v->out,
                              v->n_out);
    if (!plan->impl) return ops_run_reference(d, ctx, v->in, v->n_in, v->out, v->n_out);
    ctx->state = plan->state;
    ctx->scratch = &s->scratch[i];
    mopt_status st = plan->impl->run(ctx, v->in, v->n_in, v->out, v->n_out);
    ctx->state = NULL;
    ctx->scratch = NULL;
    if (st != MOPT_ERR_UNSUPPORTED) return st;
    /* in place: the fallbacks read a copy of the input output 0 shares */
    int j = plan->inplace_in;
    void *copy = NULL, *keep = NULL;
    if (j >= 0 && v->n_out > 0 && v->out[0].data == v->in[j].data) {
        size_t nbytes = (size_t)ir_shape_numel(&v->in[j].shape) * mopt_dtype_size(v->in[j].dtype);
        copy = mopt_aligned_alloc(nbytes ? nbytes : 1);
        if (!copy) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory copying an input");
        memcpy(copy, v->in[j].data, nbytes);
        keep = v->in[j].data;
        v->in[j].data = copy;
    }
    st = (s->model->bf16_store || s->model->u8_store) && has_stored(s, s->model->graph->nodes[i], v)
             ? run_fallbacks_f32(s, i, v, plan->kernel)
             : run_fallbacks(s, i, v, plan->kernel);
    if (copy) {
        v->in[j].data = keep;
        mopt_aligned_free(copy);
    }
    return st;
}

/* The storage plan's bf16 tensors and u8 rows blocks seen as the graph's
 * f32 (shape and type inference), or back (to_f32 false); outputs are only
 * ever set to the stored form. */
static void storage_view(const mopt_session *s, const ir_node *n, op_view *v, bool to_f32) {
    const bool *store = s->model->bf16_store;
    for (int32_t k = 0; store && k < n->n_inputs && k < v->n_in; k++)
        if (n->inputs[k] >= 0 && store[n->inputs[k]])
            v->in[k].dtype = to_f32 ? MOPT_DTYPE_F32 : MOPT_DTYPE_BF16;
    for (int32_t k = 0; !to_f32 && store && k < n->n_outputs && k < v->n_out; k++)
        if (n->outputs[k] >= 0 && store[n->outputs[k]] && v->out[k].dtype == MOPT_DTYPE_F32)
            v->out[k].dtype = MOPT_DTYPE_BF16;
    for (int32_t k = 0; k < n->n_inputs && k < v->n_in; k++) {
        op_tensor *t = &v->in[k];
        if (!u8_stored(s, n->inputs[k]) || t->shape.rank < 1 ||
            t->dtype != (to_f32 ? MOPT_DTYPE_U8 : MOPT_DTYPE_F32))
            continue;
        t->dtype = to_f32 ? MOPT_DTYPE_F32 : MOPT_DTYPE_U8;
        t->shape.dims[t->shape.rank - 1] += to_f32 ? -CPU_ROWQ_EXTRA : CPU_ROWQ_EXTRA;
    }
    for (int32_t k = 0; !to_f32 && k < n->n_outputs && k < v->n_out; k++) {
        op_tensor *t = &v->out[k];
        if (u8_stored(s, n->outputs[k]) && t->dtype == MOPT_DTYPE_F32 && t->shape.rank >= 1) {
            t->dtype = MOPT_DTYPE_U8;
            t->shape.dims[t->shape.rank - 1] += CPU_ROWQ_EXTRA;
        }
    }
}

/* The threads node i gets: the session's, unless its work is below
 * par_min_flops (then 1: a fork-join costs more than it saves on a small
 * op, and far more when another process holds one of the cores). Work is
 * the op's flop count, or for ops without one the elements read and
 * written. Nodes with subgraphs keep the session's count. */
static int node_threads(const mopt_session *s, const ir_node *n, op_view *v) {
    if (s->threads <= 1 || v->ctx.subgraphs) return s->threads;
    int64_t work = n->op->flops ? n->op->flops(&v->ctx, v->in, v->n_in, v->out, v->n_out) : -1;
    if (work < 0) {
        work = 0;
        for (int k = 0; k < v->n_in + v->n_out && work < s->par_min_flops; k++) {
            const op_tensor *t = k < v->n_in ? &v->in[k] : &v->out[k - v->n_in];
            int64_t numel = t->data || k >= v->n_in ? ir_shape_numel(&t->shape) : 0;
            if (numel > 0) work += numel;
        }
    }
    return work < s->par_min_flops ? 1 : s->threads;
}

/* Adaptive threads: which arm node i runs this time (0: 1 thread, 1: the
 * session's), see rt_thread_tune. */
static int tune_pick(const rt_thread_tune *t, int64_t run) {
    if (!(t->seen & 2)) return 1;
    if (!(t->seen & 1)) return 0;
    int best = t->ns[1] <= t->ns[0];
    return run >= t->next_try ? !best : best;
}

/* Runs until the slower arm is tried again: the backoff, times how much
 * slower it was (a try costs that much), at most 1024. */
static int64_t tune_interval(rt_thread_tune *t) {
    int64_t lo = t->ns[0] < t->ns[1] ? t->ns[0] : t->ns[1];
    int64_t hi = t->ns[0] < t->ns[1] ? t->ns[1] : t->ns[0];
    int64_t ratio = lo > 0 ? hi / lo : 1;
    if (ratio < 1) ratio = 1;
    if (t->backoff > 1024) t->backoff = 1024;
    int64_t k = (int64_t)t->backoff * ratio;
    return k < 1024 ? k : 1024;
}

static void tune_note(rt_thread_tune *t, int32_t node, int64_t run, int arm, int64_t ns) {
    if ((t->seen & 3) != 3) { /* the first sample of an arm */
        t->ns[arm] = ns;
        t->seen |= (uint8_t)(1 << arm);
        t->backoff = 16;
        t->next_try = run + tune_interval(t) + node % 16; /* spread the tries over runs */
        return;
    }
    int best = t->ns[1] <= t->ns[0];
    if (arm == best) {
        t->ns[arm] += (ns - t->ns[arm]) / 4;
        return;
    }
    /* a try of the other arm: its old figure is stale, take the new one */
    t->ns[arm] = ns;
    t->backoff = ns < t->ns[best] ? 16 : t->backoff * 2;
    t->next_try = run + tune_interval(t);
}

/* A node's failure names the node, when the op's message does not yet. */
static mopt_status node_failed(const ir_node *n, mopt_status st) {
    if (n->name[0] && !strstr(mopt_error_message(), n->name))
        return mopt_fail_context(st, "node '%s' (%s)", n->name, n->op_type);
    return st;
}

/* Whether output 0 may share input j's buffer in this run: same dtype and
 * byte size (the memory plan made them share it). */
static bool shared_ok(const op_view *v, int j) {
    const op_tensor *a = &v->in[j], *b = &v->out[0];
    return a->dtype == b->dtype && ir_shape_numel(&a->shape) == ir_shape_numel(&b->shape);
}

/* Moves output 0 to a heap block of its own. */
static mopt_status own_output(mopt_session *s, const ir_node *n, op_tensor *out, bool *heap) {
    size_t nbytes = (size_t)ir_shape_numel(&out[0].shape) * mopt_dtype_size(out[0].dtype);
    void *d = mopt_budget_fits(mopt_budget_current(), nbytes)
                  ? mopt_aligned_alloc(nbytes ? nbytes : 1)
                  : NULL;
    if (!d) {
        for (int32_t k = 1; k < n->n_outputs; k++)
            if (heap[k]) mopt_aligned_free(out[k].data);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "node '%s' (%s): out of memory for output 0",
                         n->name, n->op_type);
    }
    out[0].data = d;
    heap[0] = true;
    s->heap_tensors++;
    s->live_bytes += (int64_t)nbytes;
    return MOPT_OK;
}

static mopt_status run_nodes(mopt_session *s) {
    const ir_graph *g = s->model->graph;
    const rt_node_plan *plans = s->model->plans;
    op_view *v = s->view;
    op_view_src src = {.graph = (ir_graph *)g,
                       .values = s->vals,
                       .runtime = true,
                       .precision = rt_config_precision(&s->model->config),
                       .opt_level = s->model->config.opt_level,
                       .threads = s->threads,
                       .kv_tiles = s->kv_tiles,
                       .n_kv_tiles = s->n_kv_tiles};
    const mopt_run_options *ro = s->run_opts;
    mopt_budget *budget = mopt_budget_current();
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (ro && atomic_load_explicit(&ro->terminate, memory_order_relaxed)) {
            if (s->config.verbose)
                mopt_log(MOPT_LOG_INFO, "mopt: run%s%s%s cancelled before node %d '%s'",
                         ro->tag[0] ? " '" : "", ro->tag, ro->tag[0] ? "'" : "", (int)i, n->name);
            return mopt_fail(MOPT_ERR_CANCELLED,
                             "run%s%s%s cancelled (terminate flag set) before node %d of %d '%s'",
                             ro->tag[0] ? " '" : "", ro->tag, ro->tag[0] ? "'" : "", (int)i,
                             (int)g->n_nodes, n->name);
        }
        bool heap[OP_MAX_IO];
        src.subgraphs = rt_subgraphs_service(s, i);
        mopt_status st = op_view_init(v, &src, n, plans[i].params);
        if (st) return st;
        v->ctx.precision = plans[i].precision;
        v->ctx.work = &s->work[i];
        op_tensor *in = v->in, *out = v->out;
        if (s->plan && !s->plan_broken &&
            (s->plan->shapes_fixed[i] & (s->plan_elastic ? RT_SHAPES_ELASTIC_STABLE : 1))) {
            /* this signature's plan holds every output shape of the node */
            for (int32_t k = 0; k < n->n_outputs; k++) {
                int32_t val = n->outputs[k];
                out[k].dtype = s->plan->dtypes[val];
                out[k].shape = s->plan->shapes[val];
            }
        } else {
            s->run_inferred++;
            storage_view(s, n, v, true);
            st = op_view_infer(v);
            storage_view(s, n, v, false);
            if (st) return node_failed(n, st);
            if (s->plan && !s->plan_elastic) check_against_plan(s, n, out);
        }
        for (int32_t k = 0; k < n->n_outputs; k++) {
            char b[IR_SHAPE_STR_CAP];
            int64_t numel = ir_shape_numel(&out[k].shape);
            size_t esz = mopt_dtype_size(out[k].dtype);
            if (numel < 0 && esz != 0 && ir_shape_is_concrete(&out[k].shape))
                return mopt_fail(MOPT_ERR_LIMIT, "node '%s' (%s): output %d is too large (%s)",
                                 n->name, n->op_type, (int)k,
                                 ir_shape_str(&out[k].shape, g, b, sizeof b));
            if (numel < 0 || esz == 0)
                return mopt_fail(MOPT_ERR_INTERNAL,
                                 "node '%s' (%s): output %d has no concrete shape/type (%s %s)",
                                 n->name, n->op_type, (int)k, mopt_dtype_name(out[k].dtype),
                                 ir_shape_str(&out[k].shape, g, b, sizeof b));
            size_t nbytes;
            if (!mopt_mul_overflow((size_t)numel, esz, &nbytes) || nbytes > ((size_t)1 << 46))
                return mopt_fail(MOPT_ERR_LIMIT, "node '%s' (%s): output %d is too large (%s)",
                                 n->name, n->op_type, (int)k,
                                 ir_shape_str(&out[k].shape, g, b, sizeof b));
            int32_t val = n->outputs[k];
            /* 1: the caller's buffer, when this is a requested graph output */
            const mopt_tensor *ut = val >= 0 ? s->user_out[val] : NULL;
            if (ut && ut->dtype == out[k].dtype && ut->rank == out[k].shape.rank &&
                memcmp(ut->dims, out[k].shape.dims, (size_t)ut->rank * sizeof(int64_t)) == 0 &&
                ut->nbytes == nbytes) {
                out[k].data = ut->data ? ut->data : (void *)&s->consumers;
                heap[k] = false;
                continue;
            }
            /* 2: the arena, when the plan agrees on this value's shape */
            if (s->plan && val >= 0 && s->plan->offsets[val] >= 0) {
                const rt_mem_plan *p = s->plan;
                bool fits = s->plan_elastic
                                ? p->dtypes[val] == out[k].dtype &&
                                      nbytes <= (size_t)ir_shape_numel(&p->shapes[val]) * esz
                                : p->dtypes[val] == out[k].dtype &&
                                      p->shapes[val].rank == out[k].shape.rank &&
                                      memcmp(p->shapes[val].dims, out[k].shape.dims,
                                             (size_t)out[k].shape.rank * sizeof(int64_t)) == 0;
                if (fits) {
                    out[k].data = s->arena + s->plan->offsets[val];
                    heap[k] = false;
                    continue;
                }
                s->plan_broken = true;
            }
            /* 3: the heap, charged to the run's budget (memory_limit) */
            out[k].data =
                mopt_budget_fits(budget, nbytes) ? mopt_aligned_alloc(nbytes ? nbytes : 1) : NULL;
            if (!out[k].data) {
                for (int32_t j = 0; j < k; j++)
                    if (heap[j]) mopt_aligned_free(out[j].data);
                if (!mopt_budget_fits(budget, nbytes))
                    return mopt_fail(MOPT_ERR_LIMIT,
                                     "node '%s' (%s): output %d needs %zu bytes; memory_limit "
                                     "%" PRId64 " would be exceeded (%" PRId64
                                     " in use: arena, intermediates, scratch)",
                                     n->name, n->op_type, (int)k, nbytes, mopt_budget_limit(budget),
                                     mopt_budget_used(budget));
                return mopt_fail(MOPT_ERR_OUT_OF_MEMORY,
                                 "node '%s' (%s): out of memory for output %d (%zu bytes)", n->name,
                                 n->op_type, (int)k, nbytes);
            }
            heap[k] = true;
            s->heap_tensors++;
            s->live_bytes += (int64_t)nbytes;
        }
        if (s->live_bytes > s->peak_bytes) s->peak_bytes = s->live_bytes;
        if (plans[i].inplace_in >= 0 && n->n_outputs > 0 && !heap[0] &&
            out[0].data == in[plans[i].inplace_in].data && !shared_ok(v, plans[i].inplace_in)) {
            /* an elastic plan's shapes that differ: not the same tensor */
            st = own_output(s, n, out, heap);
            if (st) return st;
        }
        v->ctx.threads = node_threads(s, n, v);
        int arm = -1;
        int64_t t_tune = 0;
        if (s->tune && v->ctx.threads > 1) {
            arm = tune_pick(&s->tune[i], s->runs);
            if (arm == 0) v->ctx.threads = 1;
            t_tune = mopt_now_ns();
        }
        /* a shared pool: the node's extra threads are cores it can get now,
         * without waiting (none: the calling thread does it alone) */
        int widened = 0;
        if (s->run_pool && v->ctx.threads > 1) {
            widened = rt_pool_widen(s->run_pool, v->ctx.threads - 1);
            if (widened < v->ctx.threads - 1) arm = -1; /* not the arm's width: no sample */
            v->ctx.threads = 1 + widened;
        }
        int64_t t_start = s->profiling ? mopt_now_ns() : 0;
        mopt_budget_clear_refusal(budget);
        st = run_impl(s, i, v);
        rt_pool_narrow(s->run_pool, widened);
        size_t refused;
        int64_t in_use;
        if (st == MOPT_ERR_OUT_OF_MEMORY && mopt_budget_refused(budget, &refused, &in_use))
            st = mopt_fail(MOPT_ERR_LIMIT,
                           "node '%s' (%s): its kernel's scratch or workspace needs %zu more "
                           "bytes; memory_limit %" PRId64 " would be exceeded (%" PRId64
                           " in use: arena, intermediates, scratch)",
                           n->name, n->op_type, refused, mopt_budget_limit(budget), in_use);
        if (arm >= 0 && !st) tune_note(&s->tune[i], i, s->runs, arm, mopt_now_ns() - t_tune);
        if (s->profiling && !st) {
            rt_prof_entry *pe = &s->prof[i];
            pe->start_ns = t_start - s->t0_ns;
            pe->ns = mopt_now_ns() - t_start;
            pe->flops =
                n->op->flops ? n->op->flops(&v->ctx, in, n->n_inputs, out, n->n_outputs) : 0;
            if (s->config.profile[0] && strcmp(s->config.profile, "1") != 0) {
                if (s->n_trace == s->cap_trace) {
                    size_t cap = s->cap_trace ? s->cap_trace * 2 : 1024;
                    rt_trace_event *nt = mopt_realloc(s->trace, cap * sizeof *nt);
                    if (nt) {
                        s->trace = nt;
                        s->cap_trace = cap;
                    }
                }
                if (s->n_trace < s->cap_trace && s->n_trace < ((size_t)1 << 24))
                    s->trace[s->n_trace++] =
                        (rt_trace_event){i, (int32_t)s->runs, s->run_tag, pe->start_ns, pe->ns};
            }
        }
        /* store outputs (even on failure, so release_all frees them) */
        for (int32_t k = 0; k < n->n_outputs; k++) {
            int32_t val = n->outputs[k];
            if (val < 0) {
                if (heap[k]) {
                    s->live_bytes -=
                        ir_shape_numel(&out[k].shape) * (int64_t)mopt_dtype_size(out[k].dtype);
                    mopt_aligned_free(out[k].data);
                }
                continue;
            }
            rt_slot *sl = &s->slots[val];
            s->vals[val] = out[k];
            sl->owned = heap[k];
            s->run_shapes[val] = out[k].shape;
            s->run_dtypes[val] = out[k].dtype;
            sl->refs = s->consumers[val];
            if (sl->refs == 0) release_value(s, val);
        }
        if (st) return node_failed(n, st);
        for (int32_t k = 0; k < n->n_inputs; k++) {
            int32_t val = n->inputs[k];
            if (val < 0) continue;
            rt_slot *sl = &s->slots[val];
            if (sl->owned && --sl->refs == 0) release_value(s, val);
        }
    }
    return MOPT_OK;
}

/* Resolves requested output names to graph output indices and records the
 * caller's buffers so that producing nodes can write straight into them. */
static mopt_status resolve_outputs(mopt_session *s, size_t n_outputs, const char *const *names,
                                   mopt_tensor **outputs, int32_t *idx_of) {
    const ir_graph *g = s->model->graph;
    if (n_outputs > 256) return mopt_fail(MOPT_ERR_LIMIT, "at most 256 outputs per run");
    for (size_t i = 0; i < n_outputs; i++) {
        int32_t idx = (int32_t)i;
        if (names) {
            if (!names[i])
                return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "output name %zu is NULL", i);
            idx = -1;
            for (int32_t k = 0; k < g->n_outputs; k++)
                if (strcmp(g->values[g->outputs[k]]->name, names[i]) == 0) idx = k;
            if (idx < 0)
                return mopt_fail(MOPT_ERR_NOT_FOUND, "the model has no output '%s'", names[i]);
        } else if (idx >= g->n_outputs) {
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "output %zu asked for, but the model has only %d outputs", i,
                             (int)g->n_outputs);
        }
        idx_of[i] = idx;
        int32_t v = g->outputs[idx];
        if (outputs[i] && outputs[i]->read_only)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "output '%s': the given tensor is read-only (mopt_tensor_wrap_const); "
                             "an output needs a writable buffer",
                             g->values[v]->name);
        if (outputs[i] && !s->user_out[v]) s->user_out[v] = outputs[i];
    }
    return MOPT_OK;
}

static mopt_status deliver_outputs(mopt_session *s, size_t n_outputs, mopt_tensor **outputs,
                                   const int32_t *idx_of) {
    const ir_graph *g = s->model->graph;
    /* validate everything before handing anything over */
    for (size_t i = 0; i < n_outputs; i++) {
        int32_t idx = idx_of[i];
        const op_tensor *slt = &s->vals[g->outputs[idx]];
        const mopt_tensor *t = outputs[i];
        if (t) {
            ir_shape ts;
            ir_shape_set(&ts, t->rank, t->dims);
            char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP];
            if (t->dtype != slt->dtype)
                return mopt_fail(MOPT_ERR_TYPE, "output '%s' is %s but the given tensor is %s",
                                 g->values[g->outputs[idx]]->name, mopt_dtype_name(slt->dtype),
                                 mopt_dtype_name(t->dtype));
            if (t->rank != slt->shape.rank ||
                memcmp(t->dims, slt->shape.dims, (size_t)t->rank * sizeof(int64_t)) != 0)
                return mopt_fail(
                    MOPT_ERR_SHAPE, "output '%s' has shape %s but the given tensor has %s",
                    g->values[g->outputs[idx]]->name, ir_shape_str(&slt->shape, g, a, sizeof a),
                    ir_shape_str(&ts, g, b, sizeof b));
        }
    }
    /* Make the new tensors first so that failure hands nothing over. A
     * graph output the session allocated for this run (graph outputs are
     * never in the arena) is handed over as it is, without a copy. */
    mopt_tensor *made[256] = {0};
    bool stolen[256] = {false};
    mopt_status st = MOPT_OK;
    for (size_t i = 0; i < n_outputs && !st; i++) {
        if (outputs[i]) continue;
        int32_t v = g->outputs[idx_of[i]];
        const op_tensor *slt = &s->vals[v];
        int64_t numel = ir_shape_numel(&slt->shape);
        size_t nbytes = (size_t)numel * mopt_dtype_size(slt->dtype);
        bool steal = s->slots[v].owned;
        for (size_t j = 0; steal && j < i; j++)
            if (stolen[j] && g->outputs[idx_of[j]] == v) steal = false; /* asked twice */
        void *buf = steal ? slt->data : mopt_aligned_alloc(nbytes ? nbytes : 1);
        mopt_budget *b = mopt_budget_current();
        st = buf ? rt_tensor_new(slt->dtype, slt->shape.rank, slt->shape.dims, buf, nbytes, true,
                                 &made[i])
             : mopt_budget_refused(b, NULL, NULL)
                 ? mopt_fail(MOPT_ERR_LIMIT,
                             "output '%s': a copy of %zu bytes would exceed memory_limit %" PRId64
                             " (%" PRId64 " in use)",
                             g->values[v]->name, nbytes, mopt_budget_limit(b), mopt_budget_used(b))
                 : mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory for output '%s'",
                             g->values[v]->name);
        if (st && !steal) mopt_aligned_free(buf);
        stolen[i] = steal && !st;
    }
    if (st) {
        for (size_t j = 0; j < n_outputs; j++) {
            if (stolen[j]) made[j]->owned = false; /* the session still owns it */
            mopt_tensor_destroy(made[j]);
        }
        return st;
    }
    for (size_t i = 0; i < n_outputs; i++) {
        int32_t v = g->outputs[idx_of[i]];
        const op_tensor *slt = &s->vals[v];
        mopt_tensor *t = outputs[i] ? outputs[i] : made[i];
        if (made[i] && s->budget) { /* the caller's now: no longer charged to the session
                                       (a nested session's stay charged to the enclosing run) */
            mopt_alloc_detach(made[i]->data);
            mopt_alloc_detach(made[i]);
        }
        if (stolen[i]) {
            s->slots[v].owned = false; /* now the caller's */
            s->live_bytes -= (int64_t)t->nbytes;
        } else if (t->nbytes && t->data != slt->data) {
            memcpy(t->data, slt->data, t->nbytes);
        }
        outputs[i] = t;
    }
    return MOPT_OK;
}

/* ---- memory plans --------------------------------------------------------- */

/* The input-shape signature: per graph input, dtype, rank and dims. */
static size_t signature(mopt_session *s, int64_t *sig, size_t cap) {
    const ir_graph *g = s->model->graph;
    size_t n = 0;
    for (int32_t i = 0; i < g->n_inputs; i++) {
        const op_tensor *t = &s->vals[g->inputs[i]];
        const ir_shape *decl = &g->values[g->inputs[i]]->shape;
        if (n + 2 + (size_t)t->shape.rank > cap) return 0;
        s->sig_elastic[n] = s->sig_elastic[n + 1] = 0;
        sig[n++] = t->dtype;
        sig[n++] = t->shape.rank;
        for (int32_t d = 0; d < t->shape.rank; d++) {
            int32_t sy = decl->rank == t->shape.rank ? decl->syms[d] : 0;
            s->sig_elastic[n] = s->elastic_sym && sy > 0 && s->elastic_sym[sy - 1];
            sig[n++] = t->shape.dims[d];
        }
    }
    return n;
}

mopt_status rt_session_elastic_dim(mopt_session *s, const char *input, int axis) {
    const ir_graph *g = s->model->graph;
    for (int32_t i = 0; i < g->n_inputs; i++) {
        const ir_value *v = g->values[g->inputs[i]];
        if (strcmp(v->name, input) != 0) continue;
        if (axis < 0 || axis >= v->shape.rank || v->shape.syms[axis] <= 0)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "input '%s': axis %d is not a symbolic dimension", input, axis);
        if (!s->elastic_sym) {
            s->elastic_sym = mopt_calloc((size_t)g->n_symbols, 1);
            if (!s->elastic_sym)
                return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory (elastic dims)");
        }
        s->elastic_sym[v->shape.syms[axis] - 1] = 1;
        return MOPT_OK;
    }
    return mopt_fail(MOPT_ERR_NOT_FOUND, "the model has no input '%s'", input);
}

/* A node reading value v (the last), *n_readers the inputs of all nodes
 * that read it (graph outputs not counted). */
static const ir_node *kvt_consumers(const ir_graph *g, int32_t v, int32_t *n_readers) {
    const ir_node *one = NULL;
    *n_readers = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] == v) {
                (*n_readers)++;
                one = n;
            }
    }
    return one;
}

static bool kvt_is(const ir_node *n, const char *op) {
    return strcmp(n->domain, "mopt") == 0 && strcmp(n->op_type, op) == 0;
}

mopt_status rt_session_kv_tiles(mopt_session *s, int n, const char *const *past,
                                const char *const *present, void *const *bufs, const bool *value,
                                int64_t cap, int64_t heads, int64_t head_dim) {
    const ir_graph *g = s->model->graph;
    if (n <= 0 || cap <= 0 || cap % KN_KVT_ALIGN || heads <= 0 || head_dim <= 0)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "rt_session_kv_tiles: bad arguments");
    for (int i = 0; i < n; i++) {
        int32_t pv = ir_graph_find_value(g, past[i]), ov = ir_graph_find_value(g, present[i]);
        if (pv < 0 || ov < 0)
            return mopt_fail(MOPT_ERR_NOT_FOUND, "the model has no value '%s'",
                             pv < 0 ? past[i] : present[i]);
        int32_t readers;
        const ir_node *app = kvt_consumers(g, pv, &readers);
        if (readers != 1 || !kvt_is(app, "KVAppend") || app->inputs[0] != pv ||
            app->outputs[0] != ov)
            return mopt_fail(MOPT_ERR_UNSUPPORTED,
                             "'%s' is not read by one mopt.KVAppend making '%s' (load the model "
                             "with kv_cache=1; the bf16 tiles replace the rows, so nothing else "
                             "may read them)",
                             past[i], present[i]);
        for (int32_t j = 0; j < g->n_nodes; j++) {
            const ir_node *d = g->nodes[j];
            for (int32_t k = 0; k < d->n_inputs; k++) {
                if (d->inputs[k] != ov) continue;
                if (!kvt_is(d, "DecodeAttention") || k != (value[i] ? 2 : 1))
                    return mopt_fail(MOPT_ERR_UNSUPPORTED,
                                     "'%s' is read by node '%s' (%s%s%s, input %d), not only as "
                                     "the %s cache of mopt.DecodeAttention: the bf16 tiles "
                                     "replace the rows it reads (the attention was not fused)",
                                     present[i], d->name, d->domain, d->domain[0] ? "." : "",
                                     d->op_type, (int)k, value[i] ? "V" : "K");
            }
        }
    }
    op_kv_tiles *t = mopt_calloc((size_t)n, sizeof *t);
    if (!t) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory (kv tiles)");
    for (int i = 0; i < n; i++)
        t[i] = (op_kv_tiles){
            .buf = bufs[i], .cap = cap, .heads = heads, .head_dim = head_dim, .value = value[i]};
    mopt_free(s->kv_tiles);
    s->kv_tiles = t;
    s->n_kv_tiles = n;
    if (s->config.verbose)
        for (int32_t j = 0; j < g->n_nodes; j++)
            if (kvt_is(g->nodes[j], "DecodeAttention"))
                mopt_log(MOPT_LOG_INFO,
                         "mopt: node '%s' (mopt.DecodeAttention) reads bf16 KV tiles: kernel %s",
                         g->nodes[j]->name,
                         head_dim > CPU_DECODE_ATTN_MAX_D /* the cpu impls decline */
                             ? "ref (bf16 widened to f32)"
                             : ops_decode_attn_tiles_kernel(s->model->plans[j].kernel));
    return MOPT_OK;
}

static void plan_clear(rt_mem_plan *p) {
    mopt_free(p->sig);
    mopt_free(p->offsets);
    mopt_free(p->shapes);
    mopt_free(p->dtypes);
    mopt_free(p->shapes_fixed);
    mopt_free(p->sig_elastic);
    memset(p, 0, sizeof *p);
}

void rt_session_release_plans(mopt_session *s) {
    for (int i = 0; i < s->n_plans; i++)
        plan_clear(&s->plans[i]);
    s->n_plans = 0;
    s->plan = NULL;
    mopt_aligned_free(s->arena);
    s->arena = NULL;
    s->arena_cap = 0;
}

/* Does plan p serve this run's signature through its elastic dims (equal
 * everywhere else, none larger than p's)? */
static bool elastic_match(const mopt_session *s, const rt_mem_plan *p, size_t n) {
    if (p->sig_len != n || !p->sig_elastic) return false;
    for (size_t j = 0; j < n; j++)
        if (s->sig[j] != p->sig[j] &&
            (!s->sig_elastic[j] || !p->sig_elastic[j] || s->sig[j] > p->sig[j]))
            return false;
    return true;
}

/* Makes the arena at least size bytes; false when out of memory. */
static bool grow_arena(mopt_session *s, size_t size) {
    uint8_t *a = mopt_aligned_alloc(size);
    if (!a) return false;
    mopt_aligned_free(s->arena);
    s->arena = a;
    s->arena_cap = size;
    return true;
}

/* Picks the plan for this run's signature (else, with elastic dims, the
 * smallest plan that covers it) and makes the arena big enough. */
static void plan_select(mopt_session *s) {
    const int64_t *sig = s->sig;
    size_t n = s->sig_len = signature(s, s->sig, RT_SIG_CAP);
    s->plan = NULL;
    s->plan_broken = false;
    s->plan_elastic = false;
    if (n == 0 && s->model->graph->n_inputs > 0) return;
    rt_mem_plan *found = NULL;
    for (int i = 0; i < s->n_plans && !found; i++)
        if (s->plans[i].sig_len == n && memcmp(s->plans[i].sig, sig, n * sizeof *sig) == 0)
            found = &s->plans[i];
    for (int i = 0; i < s->n_plans && !found && s->elastic_sym; i++) {
        rt_mem_plan *p = &s->plans[i];
        if (elastic_match(s, p, n) && (!s->plan_elastic || p->arena_size < s->plan->arena_size)) {
            s->plan = p;
            s->plan_elastic = true;
        }
    }
    if (!found) found = s->plan;
    s->plan = NULL;
    if (!found) {
        s->plan_elastic = false;
        return;
    }
    rt_mem_plan *p = found;
    if ((s->config.memory_limit && (int64_t)p->arena_size > s->config.memory_limit) ||
        (p->arena_size > s->arena_cap && !grow_arena(s, p->arena_size))) {
        s->plan_elastic = false; /* run on the heap instead */
        return;
    }
    p->last_used = ++s->plan_clock;
    s->plan = p;
}

/* Which nodes' output shapes follow from the input-shape signature alone:
 * inference run with the planned input shapes but no tensor data (only
 * weights have data, as at load time) must give the planned outputs exactly.
 * Those nodes skip inference in later runs with this signature; a node whose
 * shapes depend on tensor values (Reshape by a computed shape, NonZero) keeps
 * inferring every run. */
static void mark_fixed_shapes(mopt_session *s, rt_mem_plan *p) {
    const ir_graph *g = s->model->graph;
    op_view *v = s->view;
    op_view_src src = {.graph = (ir_graph *)g,
                       .precision = rt_config_precision(&s->model->config),
                       .opt_level = s->model->config.opt_level};
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        p->shapes_fixed[i] = 0;
        if (op_view_init(v, &src, n, s->model->plans[i].params)) continue;
        v->ctx.precision = s->model->plans[i].precision;
        bool ok = true;
        for (int32_t k = 0; k < n->n_inputs; k++) {
            int32_t val = n->inputs[k];
            if (val < 0) continue;
            v->in[k].dtype = p->dtypes[val] ? p->dtypes[val] : g->values[val]->dtype;
            if (g->values[val]->flags & IR_VALUE_INITIALIZER) continue;
            v->in[k].shape = p->shapes[val];
            ok = ok && v->in[k].dtype != MOPT_DTYPE_UNDEFINED;
        }
        if (!ok || op_view_infer(v) != MOPT_OK) continue;
        for (int32_t k = 0; k < n->n_outputs && ok; k++) {
            int32_t val = n->outputs[k];
            const op_tensor *o = &v->out[k];
            ok = val >= 0 && o->dtype == p->dtypes[val] && ir_shape_is_concrete(&o->shape) &&
                 o->shape.rank == p->shapes[val].rank &&
                 memcmp(o->shape.dims, p->shapes[val].dims,
                        (size_t)o->shape.rank * sizeof(int64_t)) == 0;
        }
        /* and under elastic dims: when load-time inference proved every
         * output dim fixed or a symbol that is not elastic, runs of any
         * elastic value have the plan's shapes too */
        uint8_t stable = ok && s->elastic_sym ? RT_SHAPES_ELASTIC_STABLE : 0;
        for (int32_t k = 0; k < n->n_outputs && stable; k++) {
            const ir_shape *ls = &g->values[n->outputs[k]]->shape;
            for (int32_t d = 0; d < ls->rank && stable; d++)
                if (ls->syms[d] < 0 || (ls->syms[d] > 0 && s->elastic_sym[ls->syms[d] - 1]))
                    stable = 0;
            if (ls->rank < 0) stable = 0;
        }
        p->shapes_fixed[i] = ok ? (uint8_t)(1 | stable) : 0;
    }
    mopt_clear_error();
}

/* After a successful run without a (valid) plan: plans the shapes this run
 * produced (recorded in s->run_shapes / run_dtypes). Failure to plan only
 * means the next run uses the heap again. */
static void plan_record(mopt_session *s) {
    const ir_graph *g = s->model->graph;
    const int64_t *sig = s->sig; /* computed by plan_select while inputs were bound */
    size_t n = s->sig_len;
    if (n == 0 && g->n_inputs > 0) return;
    rt_mem_plan *p = s->plan;
    if (!p) {
        if (s->n_plans < RT_MAX_PLANS) {
            p = &s->plans[s->n_plans++];
        } else { /* evict the least recently used */
            p = &s->plans[0];
            for (int i = 1; i < s->n_plans; i++)
                if (s->plans[i].last_used < p->last_used) p = &s->plans[i];
        }
    }
    plan_clear(p);
    size_t nv = (size_t)(g->n_values ? g->n_values : 1);
    size_t *sizes = mopt_calloc(nv, sizeof *sizes);
    p->sig = mopt_malloc((n ? n : 1) * sizeof *sig);
    p->offsets = mopt_malloc(nv * sizeof *p->offsets);
    p->shapes = mopt_malloc(nv * sizeof *p->shapes);
    p->dtypes = mopt_malloc(nv * sizeof *p->dtypes);
    p->shapes_fixed = mopt_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), 1);
    p->sig_elastic = s->elastic_sym ? mopt_malloc(n ? n : 1) : NULL;
    if (!sizes || !p->sig || !p->offsets || !p->shapes || !p->dtypes || !p->shapes_fixed ||
        (s->elastic_sym && !p->sig_elastic))
        goto fail;
    memcpy(p->sig, sig, n * sizeof *sig);
    if (p->sig_elastic) memcpy(p->sig_elastic, s->sig_elastic, n);
    p->sig_len = n;
    memcpy(p->shapes, s->run_shapes, nv * sizeof *p->shapes);
    memcpy(p->dtypes, s->run_dtypes, nv * sizeof *p->dtypes);
    mark_fixed_shapes(s, p);
    for (int32_t v = 0; v < g->n_values; v++) {
        /* graph outputs stay out of the arena: they go to the caller's buffer
         * or are handed over without a copy */
        if (g->values[v]->producer < 0 || p->dtypes[v] == MOPT_DTYPE_UNDEFINED ||
            (g->values[v]->flags & IR_VALUE_OUTPUT))
            continue;
        int64_t numel = ir_shape_numel(&p->shapes[v]);
        if (numel < 0) continue;
        sizes[v] = (size_t)numel * mopt_dtype_size(p->dtypes[v]);
        if (!sizes[v]) sizes[v] = 1;
        p->intermediate_bytes += sizes[v];
    }
    int8_t *share = rt_inplace_enabled()
                        ? mopt_malloc((size_t)(g->n_nodes ? g->n_nodes : 1) * sizeof *share)
                        : NULL;
    for (int32_t i = 0; share && i < g->n_nodes; i++)
        share[i] = s->model->plans[i].inplace_in;
    mopt_status mst = rt_memplan(g, sizes, share, p->offsets, &p->arena_size, &p->n_inplace);
    mopt_free(share);
    if (mst != MOPT_OK) goto fail;
    p->last_used = ++s->plan_clock;
    s->plan = p;
    s->plans_recorded++;
    mopt_free(sizes);
    /* size the arena now, so that the next run with these shapes allocates
     * nothing at all */
    if (p->arena_size > s->arena_cap &&
        !(s->config.memory_limit && (int64_t)p->arena_size > s->config.memory_limit)) {
        uint8_t *a = mopt_aligned_alloc(p->arena_size);
        if (a) {
            mopt_aligned_free(s->arena);
            s->arena = a;
            s->arena_cap = p->arena_size;
        }
    }
    mopt_clear_error();
    return;
fail:
    mopt_free(sizes);
    plan_clear(p);
    /* keep the slot array dense */
    int idx = (int)(p - s->plans);
    s->plans[idx] = s->plans[s->n_plans - 1];
    memset(&s->plans[s->n_plans - 1], 0, sizeof s->plans[0]);
    s->n_plans--;
    s->plan = NULL;
    mopt_clear_error();
}

/* This run's profiling (the run options' choice, else the session's) and
 * its tag's index in the trace. Fails only when out of memory. */
static mopt_status run_setup(mopt_session *s, const mopt_run_options *ro) {
    s->run_opts = ro;
    s->profiling = ro && ro->profiling >= 0 ? ro->profiling != 0 : s->profile_session;
    if (s->profiling && !s->prof) {
        s->prof = mopt_calloc((size_t)(s->model->graph->n_nodes ? s->model->graph->n_nodes : 1),
                              sizeof *s->prof);
        if (!s->prof) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory for the profile");
    }
    s->run_tag = -1;
    bool tracing = s->profiling && s->config.profile[0] && strcmp(s->config.profile, "1") != 0;
    if (!tracing || !ro || !ro->tag[0]) return MOPT_OK;
    if (s->n_tags && strcmp(s->tags[s->n_tags - 1], ro->tag) == 0) {
        s->run_tag = s->n_tags - 1;
        return MOPT_OK;
    }
    if (s->n_tags == s->cap_tags) {
        int32_t cap = s->cap_tags ? s->cap_tags * 2 : 16;
        char **nt = mopt_realloc(s->tags, (size_t)cap * sizeof *nt);
        if (!nt) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory for the run tag");
        s->tags = nt;
        s->cap_tags = cap;
    }
    char *tag = mopt_strdup(ro->tag);
    if (!tag) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory for the run tag");
    s->tags[s->n_tags] = tag;
    s->run_tag = s->n_tags++;
    return MOPT_OK;
}

static mopt_status run_budgeted(mopt_session *s, const mopt_run_options *ro, size_t n_inputs,
                                const char *const *input_names, const mopt_tensor *const *inputs,
                                size_t n_outputs, const char *const *output_names,
                                mopt_tensor **outputs);

mopt_status rt_session_run(mopt_session *s, const mopt_run_options *ro, size_t n_inputs,
                           const char *const *input_names, const mopt_tensor *const *inputs,
                           size_t n_outputs, const char *const *output_names,
                           mopt_tensor **outputs) {
    if (n_outputs && !outputs) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "outputs is NULL");
    /* every block the run makes is charged to the session's budget (a nested
     * session's run, inside the enclosing run, to the enclosing budget) */
    bool own_budget = s->budget && !mopt_budget_current();
    if (own_budget) {
        mopt_budget_swap(s->budget);
        mopt_budget_reset_peak(s->budget);
    }
    mopt_status st =
        run_budgeted(s, ro, n_inputs, input_names, inputs, n_outputs, output_names, outputs);
    if (own_budget) {
        s->budget_peak = mopt_budget_peak(s->budget);
        mopt_budget_swap(NULL);
    }
    return st;
}

/* rt_session_run with the budget installed. */
static mopt_status run_budgeted(mopt_session *s, const mopt_run_options *ro, size_t n_inputs,
                                const char *const *input_names, const mopt_tensor *const *inputs,
                                size_t n_outputs, const char *const *output_names,
                                mopt_tensor **outputs) {
    const ir_graph *g = s->model->graph;
    release_all(s);
    memset(s->user_out, 0, (size_t)g->n_values * sizeof *s->user_out);
    s->peak_bytes = 0;
    s->run_inferred = 0;
    s->prof_valid = false;
    int64_t t_run = mopt_now_ns();
    int32_t idx_of[256];
    mopt_status st = run_setup(s, ro);
    if (!st) st = resolve_outputs(s, n_outputs, output_names, outputs, idx_of);
    if (!st) st = bind_inputs(s, n_inputs, input_names, inputs);
    if (!st) {
        plan_select(s);
        /* a seat in the shared pool for the nodes (the outer run's, when nested) */
        mopt_threadpool *outer = s->run_pool;
        s->run_pool = rt_pool_enter(s->pool);
        st = run_nodes(s);
        rt_pool_leave(s->run_pool);
        s->run_pool = outer;
    }
    if (!st) st = deliver_outputs(s, n_outputs, outputs, idx_of);
    release_all(s);
    if (!st) {
        if (s->plan && !s->plan_broken && (int64_t)s->plan->arena_size > s->peak_bytes)
            s->peak_bytes = (int64_t)s->plan->arena_size;
        if (s->plan_elastic && s->plan_broken) s->plan = NULL; /* keep the larger plan */
        if (!s->plan || s->plan_broken) plan_record(s);
        s->runs++;
        s->last_run_ns = mopt_now_ns() - t_run;
        s->prof_valid = s->profiling;
    }
    if (s->config.verbose >= 2)
        mopt_log(MOPT_LOG_DEBUG, "mopt: run%s%s%s #%" PRId64 ": %s in %.3f ms",
                 ro && ro->tag[0] ? " '" : "", ro ? ro->tag : "", ro && ro->tag[0] ? "'" : "",
                 s->runs, st ? mopt_status_string(st) : "ok",
                 (double)(mopt_now_ns() - t_run) / 1e6);
    s->run_opts = NULL;
    return st;
}
