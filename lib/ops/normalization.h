/*
 * normalization.h — the parsed attributes of the normalization ops whose
 * backend implementations (lib/ops/cpu/normalization_cpu.c) read them:
 * Softmax/LogSoftmax and LayerNormalization (normalization.c parses them).
 */
#ifndef MOPT_OPS_NORMALIZATION_H
#define MOPT_OPS_NORMALIZATION_H

#include <stdbool.h>
#include <stdint.h>

/* Softmax, LogSoftmax: the axis attribute as given (default -1 from opset
 * 13, 1 before; normalized against the rank by infer), and which of the
 * two the node is. */
/* BatchNormalization */
typedef struct batchnorm_params {
    float epsilon, momentum;
    bool training; /* training_mode=1 (opset 14+): statistics of X, running ones out */
} batchnorm_params;

typedef struct softmax_params {
    int64_t axis;
    bool log;
} softmax_params;

/* LayerNormalization: axis as given (default -1) and epsilon. */
typedef struct layernorm_params {
    int64_t axis;
    float epsilon;
} layernorm_params;

/* mopt.LayerNormalization (outputs Y, Mean, InvStdDev, then Y again at this
 * slot): the copy of Y that int8 matmuls read, which precision=int8 keeps
 * as a u8 rows block quantized by the LayerNorm itself
 * (lib/passes/pass_ln_copy.c, docs/fused_ops.md). */
#define LN_COPY_OUT 3

#endif
