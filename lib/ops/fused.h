/*
 * fused.h — helpers shared by the implementations of the fused operators
 * (mopt.FusedMatMul, mopt.FusedConv; docs/fused_ops.md): the activation
 * attributes of the epilogue, for the reference run and backend impls.
 */
#ifndef MOPT_OPS_FUSED_H
#define MOPT_OPS_FUSED_H

#include "kernels/ref/ref_epilogue.h"
#include "ops/ops.h"

/* Reads the `activation`, `activation_alpha` and `activation_beta`
 * attributes of a fused node (defaults per docs/fused_ops.md). Fails
 * (INVALID_MODEL) on an unknown activation name. */
mopt_status fused_read_activation(const op_ctx *ctx, ref_act_params *p);

/* The name of an activation as the `activation` attribute spells it. */
const char *fused_activation_name(ref_act act);

#endif
