/*
 * bridge.h — dtype bridging for operators: an op that implements f32 (or
 * i64) also runs on f16/bf16/f64 (or narrower integer) tensors by converting
 * its inputs, running the f32/i64 implementation and converting the results
 * back. Only ops whose rule allows it are bridged, and only when their own
 * inference rejects the dtypes with MOPT_ERR_TYPE, so native paths are
 * untouched. Dispatch plans it once per node (ops_bridge_plan); the
 * executor converts through a per-session scratch buffer (ops_bridge_run).
 * See bridge.c for the exact rules.
 */
#ifndef MOPT_OPS_BRIDGE_H
#define MOPT_OPS_BRIDGE_H

#include "ops/ops.h"

/* A node's bridging: which inputs convert to what, and the dtype the mapped
 * outputs return to. */
typedef struct op_bridge_plan {
    mopt_dtype in_to[32];
    mopt_dtype float_back, int_back; /* UNDEFINED: outputs not mapped */
    mopt_dtype int_wide;             /* what int_back computes in: i64 or f32 */
    unsigned int_mask;
    int any;
} op_bridge_plan;

/* Grow-only conversion buffer (per session and node). */
typedef struct op_bridge_scratch {
    void *mem;
    size_t cap;
} op_bridge_scratch;

/* The rules an op_def's `bridge` points to (what each op may bridge):
 *  float            f16/bf16/f64 through f32 (most float ops)
 *  wrap_arith       + narrow ints and u64 through i64, result back (Add Sub
 *                   Mul Sum Neg CumSum ReduceSum ReduceProd ReduceSumSquare)
 *  arith            + narrow ints (not u64) through i64 (Div Mod Min Max Abs
 *                   Sign Clip TopK ReduceL1)
 *  minmax_bool      arith, and bool too (ReduceMax ReduceMin)
 *  compare_wrap     ints and u64 through i64, bool output kept (Equal)
 *  compare          ints through i64, output kept (Less Greater LessOrEqual
 *                   GreaterOrEqual ArgMax ArgMin)
 *  via_f32          8/16-bit ints through f32 (MaxPool)
 * Ops whose meaning depends on a named output dtype (Cast, Constant,
 * Random*, Shape, QuantizeLinear, ...) declare none. */
extern const op_bridge ops_bridge_float;
extern const op_bridge ops_bridge_wrap_arith;
extern const op_bridge ops_bridge_arith;
extern const op_bridge ops_bridge_minmax_bool;
extern const op_bridge ops_bridge_compare_wrap;
extern const op_bridge ops_bridge_compare;
extern const op_bridge ops_bridge_via_f32;

/* ctx->def's inference, through the bridge when the op's own inference
 * rejects the dtypes and its rule allows them. */
mopt_status ops_bridge_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out);

/* Decides, from load-time dtypes, whether the node runs bridged: true with
 * *plan filled when it does. False when it runs natively, or when an input
 * dtype is unknown (then ops_bridge_may_apply says whether to decide per run). */
bool ops_bridge_plan(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                     int n_out, op_bridge_plan *plan);
/* Whether op d has a bridge rule at all. */
bool ops_bridge_may_apply(const op_def *d);

/* Runs the node's reference through the bridge: with plan (planned once),
 * or plan NULL (dtypes were unknown at build: decided for this call). */
mopt_status ops_bridge_run(const op_ctx *ctx, const op_bridge_plan *plan,
                           op_bridge_scratch *scratch, const op_tensor *in, int n_in,
                           op_tensor *out, int n_out);
void ops_bridge_scratch_free(op_bridge_scratch *scratch);

#endif
