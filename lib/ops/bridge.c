/*
 * bridge.c — dtype bridging (see bridge.h). Rules:
 *  - Bridging is tried only when the op's own infer fails with
 *    MOPT_ERR_TYPE; whatever the op implements natively runs natively.
 *  - Floats: f16, bf16 and f64 inputs are converted to f32 (f16/bf16 to f32
 *    is exact); outputs that come out f32 are rounded back (nearest even) to
 *    the dtype of the op's first floating input when that input was bridged.
 *    So a result is the f32 computation rounded once, which is what numpy
 *    does for one f16 ufunc; f64 results carry f32 precision (rtol ~1e-7).
 *    Ops whose semantics depend on a named output dtype (Cast, CastLike,
 *    EyeLike, ConstantOfShape, Constant, Random*) declare no rule.
 *  - Integers: only for ops whose declared rule says their result is exact when
 *    computed in int64 and wrapped back to the narrow type (two's
 *    complement: add, sub, mul, truncating div, floor mod, min, max,
 *    comparisons ...): i8 i16 u8 u16 u32 -> i64, and u64 -> i64 only for
 *    ops where wrap-around keeps the result exact (add, sub, mul, sums).
 *    Only the outputs the rule names are converted back.
 * Each op declares its rule in its table row (op_def.bridge, bridge.h).
 */
#include "ops/bridge.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kernels/ref/ref_logic.h"

/* An integer rule (an op's op_bridge, unpacked): whether u64 is exact,
 * outputs mapped back (bit mask; 0 = none, e.g. comparisons whose output is
 * bool) */
typedef struct int_rule {
    const char *op;
    bool u64_ok;  /* u64 -> i64 keeps results exact (wrap-around ops) */
    bool bool_ok; /* bool (0/1) -> i64 too (max/min reductions) */
    bool via_f32; /* 8/16-bit integers go through f32 (exact), not i64 */
    unsigned out_mask;
} int_rule;

/* What the bridge knows of an op: may floats go through f32, and its
 * integer rule (NULL: none). */
typedef struct bridged {
    const op_def *orig;
    bool float_ok;
    const int_rule *irule;
    int_rule own_rule; /* irule's storage */
} bridged;

static bool is_narrow_float(mopt_dtype t) {
    return t == MOPT_DTYPE_F16 || t == MOPT_DTYPE_BF16 || t == MOPT_DTYPE_F64;
}

static bool is_small_int(mopt_dtype t) {
    return t == MOPT_DTYPE_I8 || t == MOPT_DTYPE_I16 || t == MOPT_DTYPE_U8 || t == MOPT_DTYPE_U16;
}

static bool rule_takes(const int_rule *r, mopt_dtype t) {
    if (r->via_f32) return is_small_int(t);
    return is_small_int(t) || t == MOPT_DTYPE_U32 || (r->u64_ok && t == MOPT_DTYPE_U64) ||
           (r->bool_ok && t == MOPT_DTYPE_BOOL);
}

typedef op_bridge_plan bplan;

static void plan_make(const bridged *b, const op_tensor *in, int n_in, bplan *p) {
    memset(p, 0, sizeof *p);
    bool primary_seen = false;
    for (int k = 0; k < n_in && k < 32; k++) {
        mopt_dtype t = in[k].dtype;
        p->in_to[k] = MOPT_DTYPE_UNDEFINED;
        bool is_f = t == MOPT_DTYPE_F32 || is_narrow_float(t);
        bool is_i = b->irule && (t == MOPT_DTYPE_I64 || t == MOPT_DTYPE_I32 ||
                                 t == MOPT_DTYPE_U64 || t == MOPT_DTYPE_U32 || is_small_int(t) ||
                                 (b->irule->bool_ok && t == MOPT_DTYPE_BOOL));
        if (b->float_ok && is_narrow_float(t)) {
            p->in_to[k] = MOPT_DTYPE_F32;
            p->any = 1;
            if (!primary_seen) p->float_back = t;
        } else if (b->irule && rule_takes(b->irule, t)) {
            p->in_to[k] = b->irule->via_f32 ? MOPT_DTYPE_F32 : MOPT_DTYPE_I64;
            p->any = 1;
            if (!primary_seen) {
                p->int_back = t;
                p->int_wide = p->in_to[k];
                p->int_mask = b->irule->out_mask;
            }
        }
        if (is_f || is_i) {
            /* the first numeric input decides: bridge only when it is
             * narrow, and only other inputs of its very dtype */
            if (!primary_seen && p->in_to[k] == MOPT_DTYPE_UNDEFINED) {
                p->any = 0;
                return;
            }
            if (primary_seen && p->in_to[k] != MOPT_DTYPE_UNDEFINED &&
                t != (p->float_back ? p->float_back : p->int_back)) {
                p->any = 0;
                return;
            }
            primary_seen = true;
        }
    }
}

static void plan_apply_types(const bplan *p, const op_tensor *in, int n_in, op_tensor *in2) {
    for (int k = 0; k < n_in; k++) {
        in2[k] = in[k];
        if (k < 32 && p->in_to[k] != MOPT_DTYPE_UNDEFINED) in2[k].dtype = p->in_to[k];
    }
}

static void map_back(const bplan *p, op_tensor *out, int n_out) {
    for (int k = 0; k < n_out; k++) {
        if (p->float_back && out[k].dtype == MOPT_DTYPE_F32) out[k].dtype = p->float_back;
        if (p->int_back && k < 32 && (p->int_mask >> k & 1) && out[k].dtype == p->int_wide)
            out[k].dtype = p->int_back;
    }
}

static mopt_status bridge_infer_with(const bridged *b, const op_ctx *ctx, const op_tensor *in,
                                     int n_in, op_tensor *out, int n_out) {
    mopt_status st = b->orig->infer(ctx, in, n_in, out, n_out);
    if (st != MOPT_ERR_TYPE || n_in > 32) return st;
    bplan p;
    plan_make(b, in, n_in, &p);
    if (!p.any) return st;
    op_tensor in2[32];
    plan_apply_types(&p, in, n_in, in2);
    /* Inference may read small inputs (scalars, shapes): give it converted
     * copies. Larger ones keep their pointer (inference never reads values
     * of big tensors) and are converted by bridge_run. */
    void *tmp[32] = {0};
    for (int k = 0; k < n_in; k++) {
        if (p.in_to[k] == MOPT_DTYPE_UNDEFINED || !in[k].data || in[k].shape.rank < 0 ||
            !ir_shape_is_concrete(&in[k].shape))
            continue;
        int64_t n = op_numel(&in[k]);
        if (n > 4096) continue;
        tmp[k] = mopt_aligned_alloc((size_t)(n > 0 ? n : 1) * mopt_dtype_size(p.in_to[k]));
        if (!tmp[k]) {
            st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "bridge: no memory for input %d", k);
            break;
        }
        if (n > 0) ref_cast(in[k].dtype, in[k].data, p.in_to[k], tmp[k], n);
        in2[k].data = tmp[k];
    }
    if (st == MOPT_ERR_TYPE) {
        st = b->orig->infer(ctx, in2, n_in, out, n_out);
        if (st != MOPT_OK)
            st = b->orig->infer(ctx, in, n_in, out, n_out); /* the original message */
        else
            map_back(&p, out, n_out);
    }
    for (int k = 0; k < n_in; k++)
        mopt_aligned_free(tmp[k]);
    return st;
}

/* Aligned room for n elements of dtype t, for carving the scratch. */
static size_t room(int64_t n, mopt_dtype t) {
    size_t b = (size_t)(n > 0 ? n : 1) * mopt_dtype_size(t);
    return (b + 63) & ~(size_t)63;
}

static mopt_status bridge_run_with(const bridged *b, const bplan *planned,
                                   op_bridge_scratch *scratch, const op_ctx *ctx,
                                   const op_tensor *in, int n_in, op_tensor *out, int n_out) {
    bplan p;
    if (planned) {
        p = *planned;
    } else {
        /* not planned (dtypes unknown when the model was built): decide now */
        if (n_in > 32 || n_out > 32) return ops_run_reference(b->orig, ctx, in, n_in, out, n_out);
        plan_make(b, in, n_in, &p);
        if (!p.any) return ops_run_reference(b->orig, ctx, in, n_in, out, n_out);
        op_tensor probe[32];
        for (int k = 0; k < n_out; k++)
            probe[k] = out[k];
        if (b->orig->infer(ctx, in, n_in, probe, n_out) == MOPT_OK)
            return ops_run_reference(b->orig, ctx, in, n_in, out, n_out);
    }
    op_tensor in2[32], out2[32];
    mopt_dtype wide_of[32];
    plan_apply_types(&p, in, n_in, in2);
    /* one scratch buffer holds every converted input and widened output */
    size_t need = 0;
    for (int k = 0; k < n_in; k++)
        if (p.in_to[k] != MOPT_DTYPE_UNDEFINED && in[k].data)
            need += room(op_numel(&in[k]), p.in_to[k]);
    for (int k = 0; k < n_out; k++) {
        out2[k] = out[k];
        wide_of[k] = MOPT_DTYPE_UNDEFINED;
        if (p.float_back && out[k].dtype == p.float_back) wide_of[k] = MOPT_DTYPE_F32;
        if (p.int_back && (p.int_mask >> k & 1) && out[k].dtype == p.int_back)
            wide_of[k] = p.int_wide;
        if (wide_of[k] != MOPT_DTYPE_UNDEFINED) need += room(op_numel(&out[k]), wide_of[k]);
    }
    if (need > scratch->cap) {
        void *mem = mopt_aligned_alloc(need);
        if (!mem)
            return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "bridge: no memory (%zu bytes)", need);
        mopt_aligned_free(scratch->mem);
        scratch->mem = mem;
        scratch->cap = need;
    }
    uint8_t *at = scratch->mem;
    mopt_status st = MOPT_OK;
    for (int k = 0; k < n_in && st == MOPT_OK; k++) {
        if (p.in_to[k] == MOPT_DTYPE_UNDEFINED || !in[k].data) continue;
        int64_t n = op_numel(&in[k]);
        if (n > 0 && ref_cast(in[k].dtype, in[k].data, p.in_to[k], at, n) != 0)
            st = op_fail(ctx, MOPT_ERR_INTERNAL, "bridge: cannot convert input %d", k);
        in2[k].data = at;
        at += room(n, p.in_to[k]);
    }
    for (int k = 0; k < n_out; k++) {
        if (wide_of[k] == MOPT_DTYPE_UNDEFINED) continue;
        out2[k].dtype = wide_of[k];
        out2[k].data = at;
        at += room(op_numel(&out[k]), wide_of[k]);
    }
    if (st == MOPT_OK) st = ops_run_reference(b->orig, ctx, in2, n_in, out2, n_out);
    for (int k = 0; k < n_out && st == MOPT_OK; k++) {
        if (wide_of[k] == MOPT_DTYPE_UNDEFINED) continue;
        int64_t n = op_numel(&out[k]);
        if (out[k].dtype == MOPT_DTYPE_BOOL && out2[k].dtype == MOPT_DTYPE_I64) {
            /* bool through i64 (max/min reductions): x > 0, so the empty
             * reductions' INT64_MIN/INT64_MAX give false/true as ONNX says */
            for (int64_t i = 0; i < n; i++)
                ((uint8_t *)out[k].data)[i] = ((const int64_t *)out2[k].data)[i] > 0;
            continue;
        }
        if (n > 0 && ref_cast(out2[k].dtype, out2[k].data, out[k].dtype, out[k].data, n) != 0)
            st = op_fail(ctx, MOPT_ERR_INTERNAL, "bridge: cannot convert output %d", k);
    }
    return st;
}

/* The rules ops declare in their tables (bridge.h). */
const op_bridge ops_bridge_float = {.float_ok = true};
const op_bridge ops_bridge_wrap_arith = {
    .float_ok = true, .ints = true, .u64_ok = true, .out_mask = 1};
const op_bridge ops_bridge_arith = {.float_ok = true, .ints = true, .out_mask = 1};
const op_bridge ops_bridge_minmax_bool = {
    .float_ok = true, .ints = true, .bool_ok = true, .out_mask = 1};
const op_bridge ops_bridge_compare_wrap = {.float_ok = true, .ints = true, .u64_ok = true};
const op_bridge ops_bridge_compare = {.float_ok = true, .ints = true};
const op_bridge ops_bridge_via_f32 = {
    .float_ok = true, .ints = true, .via_f32 = true, .out_mask = 1};

/* The bridge rule op d declares in its table; false when it has none. */
static bool rule_of(const op_def *d, bridged *b) {
    memset(b, 0, sizeof *b);
    b->orig = d;
    if (!d) return false;
    if (d->bridge) {
        b->float_ok = d->bridge->float_ok;
        if (d->bridge->ints) {
            b->own_rule = (int_rule){d->op_type, d->bridge->u64_ok, d->bridge->bool_ok,
                                     d->bridge->via_f32, d->bridge->out_mask};
            b->irule = &b->own_rule;
        }
    }
    return b->float_ok || b->irule;
}

/* What every inferred output must be, whatever the op (issue 17: an invalid
 * model never reaches the executor as "a bug in libmopt"): a rank within
 * IR_MAX_RANK, no negative concrete dim (a negative K, sizes or pads) and an
 * element count that fits in int64. A failed inference always leaves a
 * message naming the node. */
static mopt_status check_outputs(const op_ctx *ctx, mopt_status st, const op_tensor *out,
                                 int n_out) {
    if (st != MOPT_OK) {
        if (mopt_error_message()[0] == '\0')
            op_fail(ctx, st, "shape inference failed (%s)", mopt_status_string(st));
        return st;
    }
    /* at run time the shape may come from input values; at load only from
     * the model itself */
    mopt_status bad = ctx->runtime ? MOPT_ERR_SHAPE : MOPT_ERR_INVALID_MODEL;
    char b[IR_SHAPE_STR_CAP];
    for (int k = 0; k < n_out; k++) {
        const ir_shape *s = &out[k].shape;
        if (s->rank < 0) continue;
        if (s->rank > IR_MAX_RANK)
            return op_fail(ctx, bad, "output %d would have rank %d (at most %d)", k, (int)s->rank,
                           IR_MAX_RANK);
        uint64_t n = 1;
        bool big = false;
        for (int32_t i = 0; i < s->rank; i++) {
            if (s->syms[i] != 0) continue;
            if (s->dims[i] < 0)
                return op_fail(ctx, bad, "output %d would have the negative dim %" PRId64 " (%s)",
                               k, s->dims[i], op_shape_str(ctx, s, b));
            if (s->dims[i] && n > (uint64_t)INT64_MAX / (uint64_t)s->dims[i]) big = true;
            n = big ? n : n * (uint64_t)s->dims[i];
        }
        if (big && ir_shape_is_concrete(s))
            return op_fail(ctx, MOPT_ERR_LIMIT, "output %d %s has more than 2^63 elements", k,
                           op_shape_str(ctx, s, b));
    }
    return MOPT_OK;
}

mopt_status ops_bridge_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    bridged b;
    mopt_status st = rule_of(ctx->def, &b) ? bridge_infer_with(&b, ctx, in, n_in, out, n_out)
                                           : ctx->def->infer(ctx, in, n_in, out, n_out);
    return check_outputs(ctx, st, out, n_out);
}

bool ops_bridge_plan(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                     int n_out, op_bridge_plan *plan) {
    memset(plan, 0, sizeof *plan);
    bridged b;
    if (!rule_of(ctx->def, &b) || n_in > 32 || n_out > 32) return false;
    for (int k = 0; k < n_in; k++)
        if (k < ctx->node->n_inputs && ctx->node->inputs[k] >= 0 &&
            in[k].dtype == MOPT_DTYPE_UNDEFINED)
            return false; /* a dtype unknown at build: decided per run */
    plan_make(&b, in, n_in, plan);
    if (!plan->any) return false;
    op_tensor probe[OP_MAX_IO];
    for (int k = 0; k < n_out; k++)
        probe[k] = out[k];
    mopt_status st = ctx->def->infer(ctx, in, n_in, probe, n_out);
    mopt_clear_error();
    if (st != MOPT_ERR_TYPE) plan->any = 0; /* runs natively (or fails natively) */
    return plan->any != 0;
}

bool ops_bridge_may_apply(const op_def *d) {
    bridged b;
    return rule_of(d, &b);
}

mopt_status ops_bridge_run(const op_ctx *ctx, const op_bridge_plan *plan,
                           op_bridge_scratch *scratch, const op_tensor *in, int n_in,
                           op_tensor *out, int n_out) {
    bridged b;
    rule_of(ctx->def, &b);
    return bridge_run_with(&b, plan, scratch, ctx, in, n_in, out, n_out);
}

void ops_bridge_scratch_free(op_bridge_scratch *scratch) {
    if (!scratch) return;
    mopt_aligned_free(scratch->mem);
    scratch->mem = NULL;
    scratch->cap = 0;
}
