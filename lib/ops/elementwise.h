/*
 * elementwise.h — private to the elementwise family (elementwise.c) and its
 * cpu implementations (cpu/elementwise_cpu.c): the params each node's
 * attributes are parsed into once, when the node is planned.
 */
#ifndef MOPT_OPS_ELEMENTWISE_H
#define MOPT_OPS_ELEMENTWISE_H

#include "kernels/ref/ref_elementwise.h"
#include "ops/ops.h"

typedef enum ew_bin_kind { EW_BIN_PLAIN, EW_BIN_VARIADIC, EW_BIN_MEAN } ew_bin_kind;

/* Add Sub Mul Div Pow Mod PRelu Min Max Sum Mean */
typedef struct ew_binary_params {
    ref_binop op; /* the kernel op: Mod with fmod = 1 is REF_BIN_FMOD */
    ew_bin_kind kind;
    bool float_only; /* f32/f64 inputs only (PRelu, Mean) */
    /* attribute mopt_same_shape = 1 (pass_layout.c): the layout pass keeps
     * the operands in one layout assuming they have one shape (an operand
     * from a Resize); infer refuses other shapes instead of broadcasting */
    bool same_shape;
} ew_binary_params;

/* The unary ops and Clip (one struct: they share the cpu impl list). */
typedef struct ew_unary_params {
    bool clip;           /* Clip; else a unary op */
    ref_unop op;         /* unary: the kernel op (Gelu's approximate resolved) */
    ref_unary_params p;  /* unary: alpha, beta, gamma (attribute or default) */
    bool has_lo, has_hi; /* Clip before opset 11: the min/max attributes */
    float lo, hi;
} ew_unary_params;

#endif
