/*
 * ref.h — shared declarations of the portable reference kernels (kernels/ref).
 * Each family has its own header beside this one (ref_<family>.h). Kernels
 * see only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_REF_H
#define MOPT_KERNELS_REF_REF_H

#include <stddef.h>
#include <stdint.h>

float ref_f32_identity(float x);

/* Defines a static row function (the ref_row2_fn shape of ref_elementwise.h)
 * computing y[i] = EXPR from x (a element, type TA) and z (b element, type
 * TB) into TY, with separate loops for the common stride patterns so that
 * the compiler can vectorize them. y may alias a when sa == 1. Shared by the
 * elementwise, logic and bitwise row functions. */
#define REF_ROW2(name, TA, TB, TY, EXPR)                                                           \
    static void name(const void *pa, int64_t sa, const void *pb, int64_t sb, void *py,             \
                     int64_t n) {                                                                  \
        const TA *a = pa;                                                                          \
        const TB *b = pb;                                                                          \
        TY *y = py;                                                                                \
        if (sa == 1 && sb == 1) {                                                                  \
            for (int64_t i = 0; i < n; i++) {                                                      \
                TA x = a[i];                                                                       \
                TB z = b[i];                                                                       \
                y[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else if (sa == 1 && sb == 0) {                                                           \
            const TB z = b[0];                                                                     \
            for (int64_t i = 0; i < n; i++) {                                                      \
                TA x = a[i];                                                                       \
                y[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else if (sa == 0 && sb == 1) {                                                           \
            const TA x = a[0];                                                                     \
            for (int64_t i = 0; i < n; i++) {                                                      \
                TB z = b[i];                                                                       \
                y[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                TA x = a[i * sa];                                                                  \
                TB z = b[i * sb];                                                                  \
                y[i] = (EXPR);                                                                     \
            }                                                                                      \
        }                                                                                          \
    }

#endif
