/*
 * ref_loss.h — reference kernels of the "loss" op family:
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (f32).
 */
#ifndef MOPT_KERNELS_REF_LOSS_H
#define MOPT_KERNELS_REF_LOSS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum ref_reduction { REF_RED_NONE, REF_RED_SUM, REF_RED_MEAN } ref_reduction;

typedef struct ref_nll_params {
    int64_t n, c, d; /* input viewed as [n, c, d], target as [n, d] */
    ref_reduction reduction;
    bool has_ignore;
    int64_t ignore_index;
} ref_nll_params;

/* loss = -x[n, t, d] * w[t] (0 where t == ignore_index); y gets [n*d]
 * values (NONE) or one (SUM; MEAN divides by the summed weights). x holds
 * log-probabilities. target is int64 (already converted). weight may be
 * NULL. Returns -1 with *bad set to the offending target when one is out of
 * range. */
int ref_nll_loss(const ref_nll_params *p, const float *x, const int64_t *target,
                 const float *weight, float *y, int64_t *bad);

/* log_softmax over axis 1 of x viewed as [n, c, d] into y. */
void ref_log_softmax_axis1(int64_t n, int64_t c, int64_t d, const float *x, float *y);

#endif
