/*
 * bridge.h — dtype bridging for operators: an op that implements f32 (or
 * i64) also runs on f16/bf16/f64 (or narrower integer) tensors by converting
 * its inputs, running the f32/i64 implementation and converting the results
 * back. Only ops on a vetted list are bridged, and only when their own
 * inference rejects the dtypes with MOPT_ERR_TYPE, so native paths are
 * untouched. See bridge.c for the exact rules.
 */
#ifndef MOPT_OPS_BRIDGE_H
#define MOPT_OPS_BRIDGE_H

#include "ops/ops.h"

/* The op_def to hand out for d: d itself, or its bridged twin. */
const op_def *ops_bridge_wrap(const op_def *d);
/* The original op_def behind a bridged one (d itself when not bridged): for
 * ops that delegate to another op's infer/run under their own node. */
const op_def *ops_bridge_unwrap(const op_def *d);

#endif
