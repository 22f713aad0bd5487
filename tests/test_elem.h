/*
 * test_elem.h — helpers shared by the data-driven test runners
 * (tests/case_runner.c, tests/conformance/run_conformance.c): one element of
 * a tensor of any dtype as a double (f16/bf16 decoded exactly), and which
 * dtypes compare with a tolerance.
 */
#ifndef MOPT_TESTS_TEST_ELEM_H
#define MOPT_TESTS_TEST_ELEM_H

#include <math.h>
#include <mopt/mopt.h>
#include <stdint.h>
#include <string.h>

/* Element i of data d of dtype t; NAN for dtypes without a numeric value. */
static inline double test_elem(const void *d, mopt_dtype t, int64_t i) {
    switch (t) {
    case MOPT_DTYPE_F32: return ((const float *)d)[i];
    case MOPT_DTYPE_F64: return ((const double *)d)[i];
    case MOPT_DTYPE_I64: return (double)((const int64_t *)d)[i];
    case MOPT_DTYPE_I32: return ((const int32_t *)d)[i];
    case MOPT_DTYPE_I16: return ((const int16_t *)d)[i];
    case MOPT_DTYPE_I8: return ((const int8_t *)d)[i];
    case MOPT_DTYPE_U8:
    case MOPT_DTYPE_BOOL: return ((const uint8_t *)d)[i];
    case MOPT_DTYPE_U16: return ((const uint16_t *)d)[i];
    case MOPT_DTYPE_U32: return ((const uint32_t *)d)[i];
    case MOPT_DTYPE_U64: return (double)((const uint64_t *)d)[i];
    case MOPT_DTYPE_F16: {
        uint16_t h = ((const uint16_t *)d)[i];
        int e = (h >> 10) & 31, m = h & 1023;
        double v = e == 0    ? ldexp(m, -24)
                   : e == 31 ? (m ? NAN : INFINITY)
                             : ldexp(m + 1024, e - 25);
        return (h & 0x8000) ? -v : v;
    }
    case MOPT_DTYPE_BF16: {
        uint32_t u = (uint32_t)((const uint16_t *)d)[i] << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    default: return NAN;
    }
}

static inline int test_is_float(mopt_dtype t) {
    return t == MOPT_DTYPE_F32 || t == MOPT_DTYPE_F64 || t == MOPT_DTYPE_F16 ||
           t == MOPT_DTYPE_BF16;
}

#endif
