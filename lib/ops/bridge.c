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
 *    EyeLike, ConstantOfShape, Constant, Random*) are never bridged.
 *  - Integers: only for ops on an explicit list whose result is exact when
 *    computed in int64 and wrapped back to the narrow type (two's
 *    complement: add, sub, mul, truncating div, floor mod, min, max,
 *    comparisons ...): i8 i16 u8 u16 u32 -> i64, and u64 -> i64 only for
 *    ops where wrap-around keeps the result exact (add, sub, mul, sums).
 *    Only the outputs the list names are converted back.
 */
#include "ops/bridge.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_logic.h"

#define MAXB 192 /* table slots (ops with a bridged twin) */

/* ops never bridged for floats */
static const char *const k_no_float[] = {
    "Cast",
    "CastLike",
    "EyeLike",
    "ConstantOfShape",
    "Constant",
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "Multinomial",
    "Bernoulli",
    "QuantizeLinear",
    "DynamicQuantizeLinear",
    "Shape",
    "Size",
};

/* ops bridged for integers: name, whether u64 is exact, outputs mapped back
 * (bit mask; 0 = none, e.g. comparisons whose output is bool) */
typedef struct int_rule {
    const char *op;
    bool u64_ok;  /* u64 -> i64 keeps results exact (wrap-around ops) */
    bool bool_ok; /* bool (0/1) -> i64 too (max/min reductions) */
    bool via_f32; /* 8/16-bit integers go through f32 (exact), not i64 */
    unsigned out_mask;
} int_rule;

static const int_rule k_int_rules[] = {
    {"Add", true, false, false, 1},
    {"Sub", true, false, false, 1},
    {"Mul", true, false, false, 1},
    {"Sum", true, false, false, 1},
    {"Neg", true, false, false, 1},
    {"Div", false, false, false, 1},
    {"Mod", false, false, false, 1},
    {"Min", false, false, false, 1},
    {"Max", false, false, false, 1},
    {"Abs", false, false, false, 1},
    {"Sign", false, false, false, 1},
    {"Clip", false, false, false, 1},
    {"ReduceSum", true, false, false, 1},
    {"ReduceProd", true, false, false, 1},
    {"ReduceMax", false, true, false, 1},
    {"ReduceMin", false, true, false, 1},
    {"Equal", true, false, false, 0},
    {"Less", false, false, false, 0},
    {"Greater", false, false, false, 0},
    {"LessOrEqual", false, false, false, 0},
    {"GreaterOrEqual", false, false, false, 0},
    {"MaxPool", false, false, true, 1},
    {"CumSum", true, false, false, 1},
    {"ArgMax", false, false, false, 0},
    {"ArgMin", false, false, false, 0},
    {"TopK", false, false, false, 1},
    {"ReduceL1", false, false, false, 1},
    {"ReduceSumSquare", true, false, false, 1},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct bridged {
    op_def def;
    const op_def *orig;
    bool float_ok;
    const int_rule *irule;
} bridged;

static bridged g_bridged[MAXB];
static size_t g_n_bridged;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* The plan for one call: which inputs convert to what, and the dtype the
 * mapped outputs return to. */
typedef struct bplan {
    mopt_dtype in_to[32];
    mopt_dtype float_back, int_back; /* UNDEFINED: outputs not mapped */
    mopt_dtype int_wide;             /* what int_back computes in: i64 or f32 */
    unsigned int_mask;
    int any;
} bplan;

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

static mopt_status bridge_infer(const bridged *b, const op_ctx *ctx, const op_tensor *in, int n_in,
                                op_tensor *out, int n_out) {
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

static mopt_status bridge_run(const bridged *b, const op_ctx *ctx, const op_tensor *in, int n_in,
                              op_tensor *out, int n_out) {
    bplan p;
    if (n_in > 32 || n_out > 32) return b->orig->run(ctx, in, n_in, out, n_out);
    plan_make(b, in, n_in, &p);
    if (!p.any) return b->orig->run(ctx, in, n_in, out, n_out);
    /* Natively accepted? Then no bridging. */
    op_tensor probe[32];
    for (int k = 0; k < n_out; k++)
        probe[k] = out[k];
    if (b->orig->infer(ctx, in, n_in, probe, n_out) == MOPT_OK)
        return b->orig->run(ctx, in, n_in, out, n_out);
    op_tensor in2[32], out2[32];
    void *tmp[64] = {0};
    int n_tmp = 0;
    mopt_status st = MOPT_OK;
    plan_apply_types(&p, in, n_in, in2);
    for (int k = 0; k < n_in && st == MOPT_OK; k++) {
        if (p.in_to[k] == MOPT_DTYPE_UNDEFINED || !in[k].data) continue;
        int64_t n = op_numel(&in[k]);
        size_t es = mopt_dtype_size(p.in_to[k]);
        void *buf = mopt_aligned_alloc(n > 0 ? (size_t)n * es : es);
        if (!buf) {
            st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "bridge: no memory for input %d", k);
            break;
        }
        tmp[n_tmp++] = buf;
        if (n > 0 && ref_cast(in[k].dtype, in[k].data, p.in_to[k], buf, n) != 0)
            st = op_fail(ctx, MOPT_ERR_INTERNAL, "bridge: cannot convert input %d", k);
        in2[k].data = buf;
    }
    /* outputs: the mapped ones go through f32/i64 buffers */
    bool mapped[32] = {false};
    for (int k = 0; k < n_out && st == MOPT_OK; k++) {
        out2[k] = out[k];
        mopt_dtype wide = MOPT_DTYPE_UNDEFINED;
        if (p.float_back && out[k].dtype == p.float_back) wide = MOPT_DTYPE_F32;
        if (p.int_back && (p.int_mask >> k & 1) && out[k].dtype == p.int_back) wide = p.int_wide;
        if (wide == MOPT_DTYPE_UNDEFINED) continue;
        int64_t n = op_numel(&out[k]);
        size_t es = mopt_dtype_size(wide);
        void *buf = mopt_aligned_alloc(n > 0 ? (size_t)n * es : es);
        if (!buf) {
            st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "bridge: no memory for output %d", k);
            break;
        }
        tmp[n_tmp++] = buf;
        out2[k].dtype = wide;
        out2[k].data = buf;
        mapped[k] = true;
    }
    if (st == MOPT_OK) st = b->orig->run(ctx, in2, n_in, out2, n_out);
    for (int k = 0; k < n_out && st == MOPT_OK; k++) {
        if (!mapped[k]) continue;
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
    for (int i = 0; i < n_tmp; i++)
        mopt_aligned_free(tmp[i]);
    return st;
}

/* One infer/run trampoline pair per table slot: an op_def carries no user
 * data, and the node's op_type cannot identify the op (an op may delegate to
 * another's infer/run under its own node, as FusedConv does with Conv). */
#define TRAMP(name, idx)                                                                           \
    static mopt_status infer_##name(const op_ctx *c, const op_tensor *in, int ni, op_tensor *out,  \
                                    int no) {                                                      \
        return bridge_infer(&g_bridged[idx], c, in, ni, out, no);                                  \
    }                                                                                              \
    static mopt_status run_##name(const op_ctx *c, const op_tensor *in, int ni, op_tensor *out,    \
                                  int no) {                                                        \
        return bridge_run(&g_bridged[idx], c, in, ni, out, no);                                    \
    }
/* row r (a decimal literal) holds slots 8r .. 8r+7, named r0 .. r7 */
#define TRAMP8(r)                                                                                  \
    TRAMP(r##0, (r)*8 + 0)                                                                         \
    TRAMP(r##1, (r)*8 + 1)                                                                         \
    TRAMP(r##2, (r)*8 + 2)                                                                         \
    TRAMP(r##3, (r)*8 + 3)                                                                         \
    TRAMP(r##4, (r)*8 + 4)                                                                         \
    TRAMP(r##5, (r)*8 + 5)                                                                         \
    TRAMP(r##6, (r)*8 + 6)                                                                         \
    TRAMP(r##7, (r)*8 + 7)
TRAMP8(0)
TRAMP8(1)
TRAMP8(2)
TRAMP8(3)
TRAMP8(4)
TRAMP8(5)
TRAMP8(6)
TRAMP8(7)
TRAMP8(8)
TRAMP8(9)
TRAMP8(10)
TRAMP8(11)
TRAMP8(12)
TRAMP8(13)
TRAMP8(14)
TRAMP8(15)
TRAMP8(16)
TRAMP8(17)
TRAMP8(18)
TRAMP8(19)
TRAMP8(20)
TRAMP8(21)
TRAMP8(22)
TRAMP8(23)
#define ROW8(r)                                                                                    \
    {infer_##r##0, run_##r##0}, {infer_##r##1, run_##r##1}, {infer_##r##2, run_##r##2},            \
        {infer_##r##3, run_##r##3}, {infer_##r##4, run_##r##4}, {infer_##r##5, run_##r##5},        \
        {infer_##r##6, run_##r##6}, {                                                              \
        infer_##r##7, run_##r##7                                                                   \
    }

static const struct {
    op_infer_fn infer;
    op_run_fn run;
} k_tramps[MAXB] = {ROW8(0),  ROW8(1),  ROW8(2),  ROW8(3),  ROW8(4),  ROW8(5),  ROW8(6),  ROW8(7),
                    ROW8(8),  ROW8(9),  ROW8(10), ROW8(11), ROW8(12), ROW8(13), ROW8(14), ROW8(15),
                    ROW8(16), ROW8(17), ROW8(18), ROW8(19), ROW8(20), ROW8(21), ROW8(22), ROW8(23)};

static bool in_list(const char *const *list, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0) return true;
    return false;
}

static const int_rule *int_rule_for(const char *op) {
    for (size_t i = 0; i < COUNT(k_int_rules); i++)
        if (strcmp(k_int_rules[i].op, op) == 0) return &k_int_rules[i];
    return NULL;
}

static bool domain_default(const char *d) { return !d || !*d || strcmp(d, "ai.onnx") == 0; }

const op_def *ops_bridge_wrap(const op_def *d) {
    if (!d || !domain_default(d->domain)) return d;
    bool float_ok = !in_list(k_no_float, COUNT(k_no_float), d->op_type);
    const int_rule *ir = int_rule_for(d->op_type);
    if (!float_ok && !ir) return d;
    const op_def *res = d;
    pthread_mutex_lock(&g_lock);
    size_t i = 0;
    while (i < g_n_bridged && g_bridged[i].orig != d)
        i++;
    if (i == g_n_bridged && i < MAXB) {
        bridged *b = &g_bridged[i];
        b->def = *d;
        b->def.infer = k_tramps[i].infer;
        b->def.run = k_tramps[i].run;
        b->orig = d;
        b->float_ok = float_ok;
        b->irule = ir;
        g_n_bridged++;
    }
    if (i < g_n_bridged) res = &g_bridged[i].def;
    pthread_mutex_unlock(&g_lock);
    return res;
}

const op_def *ops_bridge_unwrap(const op_def *d) {
    for (size_t i = 0; i < MAXB; i++)
        if (d == &g_bridged[i].def) return g_bridged[i].orig;
    return d;
}
