/*
 * test_float8.c — the float8 conversions of lib/core/float8.c and the 4-bit
 * integer casts of kernels/ref/logic.c, checked code by code against the
 * properties the ONNX Cast specification states (not against a copy of the
 * implementation): every finite code survives a round trip, values are
 * strictly increasing, midpoints round to the even code, overflow saturates
 * or becomes inf/NaN per format.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../test_main.h"

#include "core/float8.h"
#include "kernels/ref/ref_logic.h"

static const mopt_dtype k_types[] = {MOPT_DTYPE_F8E4M3FN, MOPT_DTYPE_F8E4M3FNUZ, MOPT_DTYPE_F8E5M2,
                                     MOPT_DTYPE_F8E5M2FNUZ};

static bool is_nan_code(mopt_dtype t, unsigned c) {
    switch (t) {
    case MOPT_DTYPE_F8E4M3FN: return (c & 0x7F) == 0x7F;
    case MOPT_DTYPE_F8E5M2: return (c & 0x7F) > 0x7C;
    default: return c == 0x80;
    }
}

MOPT_TEST(test_round_trip) {
    for (size_t k = 0; k < 4; k++) {
        mopt_dtype t = k_types[k];
        for (unsigned c = 0; c < 256; c++) {
            float v = f8_to_f32(t, (uint8_t)c);
            if (is_nan_code(t, c)) {
                assert_true(isnan(v));
                continue;
            }
            assert_false(isnan(v));
            assert_int_equal(f8_from_f64(t, v, false), c);
            if (!isinf(v)) assert_int_equal(f8_from_f64(t, v, true), c);
        }
    }
}

MOPT_TEST(test_max_and_smallest) {
    assert_true(f8_max(MOPT_DTYPE_F8E4M3FN) == 448.0);
    assert_true(f8_max(MOPT_DTYPE_F8E4M3FNUZ) == 240.0);
    assert_true(f8_max(MOPT_DTYPE_F8E5M2) == 57344.0);
    assert_true(f8_max(MOPT_DTYPE_F8E5M2FNUZ) == 57344.0);
    assert_true(f8_to_f32(MOPT_DTYPE_F8E4M3FN, 1) == ldexpf(1, -9));
    assert_true(f8_to_f32(MOPT_DTYPE_F8E4M3FNUZ, 1) == ldexpf(1, -10));
    assert_true(f8_to_f32(MOPT_DTYPE_F8E5M2, 1) == ldexpf(1, -16));
    assert_true(f8_to_f32(MOPT_DTYPE_F8E5M2FNUZ, 1) == ldexpf(1, -17));
    assert_true(isinf(f8_to_f32(MOPT_DTYPE_F8E5M2, 0x7C)));
    assert_true(f8_to_f32(MOPT_DTYPE_F8E5M2, 0xFC) < 0);
}

/* Between each pair of neighbouring positive finite codes: below the
 * midpoint the lower, above it the upper, at it the even code. */
MOPT_TEST(test_ties_to_even) {
    for (size_t k = 0; k < 4; k++) {
        mopt_dtype t = k_types[k];
        unsigned top = 0;
        while (top < 0x7F && !is_nan_code(t, top + 1) && !isinf(f8_to_f32(t, (uint8_t)(top + 1))))
            top++;
        for (unsigned c = 0; c < top; c++) {
            double a = f8_to_f32(t, (uint8_t)c), b = f8_to_f32(t, (uint8_t)(c + 1));
            assert_true(a < b);
            double mid = (a + b) / 2, eps = (b - a) / 64;
            assert_int_equal(f8_from_f64(t, mid - eps, false), c);
            assert_int_equal(f8_from_f64(t, mid + eps, false), c + 1);
            assert_int_equal(f8_from_f64(t, mid, false), (c % 2 == 0) ? c : c + 1);
            /* negative values mirror them, FNUZ has no -0 */
            unsigned neg = f8_from_f64(t, -(mid + eps), false);
            assert_int_equal(neg, 0x80u | (c + 1));
        }
    }
}

MOPT_TEST(test_overflow) {
    /* E4M3FN: 464 is the midpoint of 448 and the NaN slot: ties to 448 */
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E4M3FN, 464, false), 0x7E);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E4M3FN, 465, false), 0x7F);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E4M3FN, -465, false), 0xFF);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E4M3FN, 1e6, true), 0x7E);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E4M3FN, -INFINITY, true), 0xFE);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E4M3FN, INFINITY, false), 0x7F);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E4M3FNUZ, 1e6, false), 0x80);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E4M3FNUZ, -1e6, true), 0xFF);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E5M2, 61440, false), 0x7C); /* tie to even: inf */
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E5M2, 61439, false), 0x7B);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E5M2, -1e6, false), 0xFC);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E5M2, INFINITY, true), 0x7B);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E5M2FNUZ, INFINITY, false), 0x80);
    /* NaN, zero and tiny negatives */
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E4M3FN, NAN, true), 0x7F);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E5M2FNUZ, NAN, true), 0x80);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E4M3FN, -1e-7, true), 0x80);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E4M3FNUZ, -1e-7, true), 0x00);
    assert_int_equal(f8_from_f64(MOPT_DTYPE_F8E5M2FNUZ, -0.0, true), 0x00);
}

MOPT_TEST(test_cast_4bit) {
    float x[25];
    int8_t i4[25];
    uint8_t u4[25];
    for (int i = 0; i < 25; i++)
        x[i] = (float)(i - 9);
    assert_int_equal(ref_cast_sat(MOPT_DTYPE_F32, x, MOPT_DTYPE_I4, i4, 25, true, F8E8M0_UP), 0);
    assert_int_equal(ref_cast_sat(MOPT_DTYPE_F32, x, MOPT_DTYPE_U4, u4, 25, true, F8E8M0_UP), 0);
    for (int i = 0; i < 25; i++) {
        int v = i - 9;
        assert_int_equal(i4[i], v >= -8 && v <= 7 ? v : 0);
        assert_int_equal(u4[i], v >= 0 && v <= 15 ? v : 0);
    }
    /* integers wrap to the low 4 bits; i4 reads sign-extended */
    int32_t w[3] = {17, -9, 8}, back[3];
    assert_int_equal(ref_cast(MOPT_DTYPE_I32, w, MOPT_DTYPE_I4, i4, 3), 0);
    assert_int_equal(ref_cast(MOPT_DTYPE_I4, i4, MOPT_DTYPE_I32, back, 3), 0);
    assert_int_equal(back[0], 1);
    assert_int_equal(back[1], 7);
    assert_int_equal(back[2], -8);
    /* float8 through Cast: saturate on and off */
    float big[2] = {1e6f, 0.5f};
    uint8_t f8[2];
    assert_int_equal(ref_cast_sat(MOPT_DTYPE_F32, big, MOPT_DTYPE_F8E5M2, f8, 2, false, F8E8M0_UP),
                     0);
    assert_int_equal(f8[0], 0x7C);
    assert_int_equal(f8[1], 0x38);
    assert_int_equal(ref_cast_sat(MOPT_DTYPE_F32, big, MOPT_DTYPE_F8E5M2, f8, 2, true, F8E8M0_UP),
                     0);
    assert_int_equal(f8[0], 0x7B);
}

/* f4e2m1: the eight magnitudes, ties to even, saturation, NaN to 0x8 */
MOPT_TEST(test_f4e2m1) {
    static const double mags[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    for (unsigned c = 0; c < 16; c++) {
        double v = (c & 8) ? -mags[c & 7] : mags[c & 7];
        assert_true(f4e2m1_to_f32((uint8_t)c) == (float)v);
        assert_int_equal(f4e2m1_from_f64(v), c);
    }
    assert_int_equal(f4e2m1_from_f64(0.25), 0x0); /* tie between 0 and 0.5: even */
    assert_int_equal(f4e2m1_from_f64(0.75), 0x2); /* tie between 0.5 and 1: even 1 */
    assert_int_equal(f4e2m1_from_f64(-3.5), 0xE); /* tie between 3 and 4: 4 */
    assert_int_equal(f4e2m1_from_f64(2.5), 0x4);  /* tie between 2 and 3: 2 */
    assert_int_equal(f4e2m1_from_f64(1e6), 0x7);  /* saturates */
    assert_int_equal(f4e2m1_from_f64(-INFINITY), 0xF);
    assert_int_equal(f4e2m1_from_f64(NAN), 0x8);
}

/* f8e8m0: powers of two exact; the three round modes between them */
MOPT_TEST(test_e8m0) {
    for (unsigned c = 0; c < 255; c++) {
        float v = e8m0_to_f32((uint8_t)c);
        assert_true(v == ldexpf(1.0f, (int)c - 127));
        for (int m = 0; m < 3; m++)
            assert_int_equal(e8m0_from_f64(v, true, m), c);
    }
    assert_true(isnan(e8m0_to_f32(0xFF)));
    assert_int_equal(e8m0_from_f64(1.1, true, F8E8M0_UP), 128);
    assert_int_equal(e8m0_from_f64(1.9, true, F8E8M0_DOWN), 127);
    assert_int_equal(e8m0_from_f64(1.4, true, F8E8M0_NEAREST), 127);
    assert_int_equal(e8m0_from_f64(1.6, true, F8E8M0_NEAREST), 128);
    assert_int_equal(e8m0_from_f64(1.5, true, F8E8M0_NEAREST), 128); /* tie: even code */
    assert_int_equal(e8m0_from_f64(3.0, true, F8E8M0_NEAREST), 128);
    assert_int_equal(e8m0_from_f64(0.0, true, F8E8M0_UP), 0);
    assert_int_equal(e8m0_from_f64(-1.0, true, F8E8M0_UP), 0xFF);
    assert_int_equal(e8m0_from_f64(1e300, true, F8E8M0_UP), 0xFE);
    assert_int_equal(e8m0_from_f64(1e300, false, F8E8M0_UP), 0xFF);
    assert_int_equal(e8m0_from_f64(INFINITY, true, F8E8M0_UP), 0xFE);
}

MOPT_TEST(test_cast_2bit) {
    float x[7] = {-3, -2, -1, 0, 1, 2, 3};
    int8_t i2[7];
    uint8_t u2[7];
    assert_int_equal(ref_cast_sat(MOPT_DTYPE_F32, x, MOPT_DTYPE_I2, i2, 7, true, F8E8M0_UP), 0);
    assert_int_equal(ref_cast_sat(MOPT_DTYPE_F32, x, MOPT_DTYPE_U2, u2, 7, true, F8E8M0_UP), 0);
    for (int i = 0; i < 7; i++) {
        int v = (int)x[i];
        assert_int_equal(i2[i], v >= -2 && v <= 1 ? v : 0);
        assert_int_equal(u2[i], v >= 0 && v <= 3 ? v : 0);
    }
    int32_t w[2] = {6, 3}, back[2];
    assert_int_equal(ref_cast(MOPT_DTYPE_I32, w, MOPT_DTYPE_I2, i2, 2), 0);
    assert_int_equal(ref_cast(MOPT_DTYPE_I2, i2, MOPT_DTYPE_I32, back, 2), 0);
    assert_int_equal(back[0], -2);
    assert_int_equal(back[1], -1);
}

MOPT_TEST_MAIN(cmocka_unit_test(test_round_trip), cmocka_unit_test(test_max_and_smallest),
               cmocka_unit_test(test_ties_to_even), cmocka_unit_test(test_overflow),
               cmocka_unit_test(test_cast_4bit), cmocka_unit_test(test_f4e2m1),
               cmocka_unit_test(test_e8m0), cmocka_unit_test(test_cast_2bit))
