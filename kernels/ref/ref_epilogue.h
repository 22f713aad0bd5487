/*
 * ref_epilogue.h — the reference epilogue of the fused operators
 * (mopt.FusedMatMul, mopt.FusedConv): after the product, add a broadcast
 * bias, add a broadcast residual, then apply an activation, in place on the
 * output. The activation and addend descriptions are kernels.h's (kn_act,
 * kn_addend), shared with the other backends.
 */
#ifndef MOPT_KERNELS_REF_EPILOGUE_H
#define MOPT_KERNELS_REF_EPILOGUE_H

#include <mopt/mopt.h>
#include <stdbool.h>

#include "kernels/kernels.h"
#include "kernels/ref/ref.h"

/* y (dense, rank <= MOPT_MAX_RANK, dims) = act(y + bias + residual), in place. bias and
 * residual may be NULL. */
void ref_epilogue_f32(int32_t rank, const int64_t *dims, float *y, const kn_addend *bias,
                      const kn_addend *residual, const kn_act_params *act);

/* y[i] = act(y[i]) for i < n. */
void ref_activation_f32(float *y, int64_t n, const kn_act_params *act);

#endif
