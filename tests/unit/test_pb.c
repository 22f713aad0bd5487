/*
 * test_pb.c — unit tests of the protobuf wire-format decoder (lib/io/pb.c):
 * varints (10-byte, overlong, overflowing, truncated), fixed32/64, lengths
 * past the end, skipping unknown fields of every wire type, rejected wire
 * types, packed and unpacked repeated fields, and the error messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"
#include "core/alloc.h"
#include "core/error.h"
#include "io/pb.h"

static const char *const k_names[] = {[1] = "alpha", [4] = "input"};

static void init(pb_reader *r, const uint8_t *buf, size_t len) {
    pb_init(r, buf, len, "TestProto", k_names, sizeof k_names / sizeof k_names[0]);
}

MOPT_TEST(pb_varint_decoding) {
    uint64_t v = 0;
    const uint8_t one[] = {0x01};
    assert_int_equal(pb_decode_varint(one, 1, &v), 1);
    assert_int_equal(v, 1);
    const uint8_t v300[] = {0xac, 0x02};
    assert_int_equal(pb_decode_varint(v300, 2, &v), 2);
    assert_int_equal(v, 300);
    /* non-minimal but within 10 bytes: accepted, as protobuf does */
    const uint8_t padded[] = {0x81, 0x80, 0x00};
    assert_int_equal(pb_decode_varint(padded, 3, &v), 3);
    assert_int_equal(v, 1);
    /* -1 as int64: ten bytes, the last one 0x01 */
    const uint8_t neg[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    assert_int_equal(pb_decode_varint(neg, 10, &v), 10);
    assert_true(v == UINT64_MAX);
    /* tenth byte carrying bits beyond 64: overflow */
    const uint8_t ovf[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    assert_int_equal(pb_decode_varint(ovf, 10, &v), -1);
    /* eleven bytes: overlong */
    const uint8_t longv[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    assert_int_equal(pb_decode_varint(longv, 11, &v), -1);
    /* truncated: continuation bit set on the last available byte */
    assert_int_equal(pb_decode_varint(v300, 1, &v), 0);
    assert_int_equal(pb_decode_varint(v300, 0, &v), 0);
}

MOPT_TEST(pb_fields_of_each_wire_type) {
    const uint8_t buf[] = {
        0x08, 0x96, 0x01,                            /* 1: varint 150 */
        0x11, 1,    2,    3,    4,    5,    6, 7, 8, /* 2: fixed64 */
        0x1d, 0x00, 0x00, 0x80, 0x3f,                /* 3: fixed32 1.0f */
        0x22, 0x03, 'a',  'b',  'c',                 /* 4: "abc" */
        0xf8, 0xff, 0xff, 0xff, 0x0f, 0x05,          /* 536870911 (max field), varint 5 */
    };
    pb_reader r;
    pb_field f;
    init(&r, buf, sizeof buf);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(f.num, 1);
    assert_int_equal(f.wire, PB_VARINT);
    assert_int_equal(f.u, 150);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(f.wire, PB_I64);
    assert_true(f.u == 0x0807060504030201ull);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(f.wire, PB_I32);
    assert_int_equal(f.u, 0x3f800000u);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(f.wire, PB_LEN);
    assert_int_equal(f.len, 3);
    assert_memory_equal(f.data, "abc", 3);
    assert_int_equal(f.data_offset, 19);
    char *s = NULL;
    size_t sl = 0;
    assert_int_equal(pb_string(&r, &f, false, &s, &sl), MOPT_OK);
    assert_string_equal(s, "abc");
    assert_int_equal(sl, 3);
    mopt_free(s);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(f.num, 536870911u);
    assert_int_equal(f.u, 5);
    assert_false(pb_more(&r));
}

/* Skipping: a reader that wants only field 9 passes over all other wire
 * types and finds it. */
MOPT_TEST(pb_skips_unknown_fields) {
    const uint8_t buf[] = {
        0x50, 0xff, 0xff, 0x03,                /* 10: varint */
        0x59, 0,    0,    0,    0, 0, 0, 0, 0, /* 11: fixed64 */
        0x65, 0,    0,    0,    0,             /* 12: fixed32 */
        0x6a, 0x02, 0x08, 0x01,                /* 13: nested bytes */
        0x48, 0x2a,                            /* 9: varint 42 */
    };
    pb_reader r;
    pb_field f;
    init(&r, buf, sizeof buf);
    uint64_t found = 0;
    int n = 0;
    while (pb_more(&r)) {
        assert_int_equal(pb_next(&r, &f), MOPT_OK);
        n++;
        if (f.num == 9) found = f.u;
    }
    assert_int_equal(n, 5);
    assert_int_equal(found, 42);
}

MOPT_TEST(pb_rejects_group_and_invalid_wire_types) {
    const uint8_t wires[] = {3, 4, 6, 7};
    for (size_t i = 0; i < sizeof wires; i++) {
        uint8_t buf[] = {(uint8_t)((4 << 3) | wires[i]), 0, 0, 0, 0, 0, 0, 0, 0};
        pb_reader r;
        pb_field f;
        init(&r, buf, sizeof buf);
        assert_int_equal(pb_next(&r, &f), MOPT_ERR_PARSE);
        assert_non_null(strstr(mopt_error_message(), "wire type"));
        assert_non_null(strstr(mopt_error_message(), "TestProto.input"));
    }
    /* field number 0 */
    const uint8_t zero[] = {0x00, 0x01};
    pb_reader r;
    pb_field f;
    init(&r, zero, sizeof zero);
    assert_int_equal(pb_next(&r, &f), MOPT_ERR_PARSE);
    assert_non_null(strstr(mopt_error_message(), "field number"));
}

MOPT_TEST(pb_rejects_length_past_end) {
    /* field 4, length 5, only 3 bytes follow; at offset 2 inside the buffer */
    const uint8_t buf[] = {0x08, 0x01, 0x22, 0x05, 'a', 'b', 'c'};
    pb_reader r;
    pb_field f;
    init(&r, buf, sizeof buf);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(pb_next(&r, &f), MOPT_ERR_PARSE);
    const char *m = mopt_error_message();
    assert_non_null(strstr(m, "truncated length-delimited field 4 (TestProto.input) at offset 2"));
    /* a huge length (2^63) must not wrap around */
    const uint8_t huge[] = {0x22, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 'x'};
    init(&r, huge, sizeof huge);
    assert_int_equal(pb_next(&r, &f), MOPT_ERR_PARSE);
    assert_non_null(strstr(mopt_error_message(), "truncated"));
    /* a length whose own varint is cut */
    const uint8_t cut[] = {0x22, 0x80};
    init(&r, cut, sizeof cut);
    assert_int_equal(pb_next(&r, &f), MOPT_ERR_PARSE);
}

MOPT_TEST(pb_rejects_truncated_scalars) {
    const uint8_t v[] = {0x08, 0x80};
    const uint8_t f64[] = {0x11, 1, 2, 3};
    const uint8_t f32[] = {0x1d, 1, 2};
    const uint8_t tag[] = {0x88};
    const uint8_t longv[] = {0x08, 0x80, 0x80, 0x80, 0x80, 0x80,
                             0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    struct {
        const uint8_t *b;
        size_t n;
        const char *msg;
    } cases[] = {{v, sizeof v, "truncated varint field 1 (TestProto.alpha)"},
                 {f64, sizeof f64, "truncated fixed64"},
                 {f32, sizeof f32, "truncated fixed32"},
                 {tag, sizeof tag, "truncated field tag"},
                 {longv, sizeof longv, "overlong"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pb_reader r;
        pb_field f;
        init(&r, cases[i].b, cases[i].n);
        assert_int_equal(pb_next(&r, &f), MOPT_ERR_PARSE);
        assert_non_null(strstr(mopt_error_message(), cases[i].msg));
    }
}

MOPT_TEST(pb_nested_offsets_are_absolute) {
    /* field 4 holds a message whose field 1 has a length past its end */
    const uint8_t buf[] = {0x08, 0x00, 0x22, 0x03, 0x0a, 0x05, 'x'};
    pb_reader r, sub;
    pb_field f;
    init(&r, buf, sizeof buf);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    pb_sub(&r, &f, "Inner", NULL, 0, &sub);
    assert_int_equal(pb_next(&sub, &f), MOPT_ERR_PARSE);
    assert_non_null(strstr(mopt_error_message(), "field 1 (Inner.#1) at offset 4"));
}

MOPT_TEST(pb_packed_and_unpacked) {
    const uint8_t buf[] = {
        0x08, 0x05,                         /* 1: unpacked varint 5 */
        0x0a, 0x04, 0x01, 0xac, 0x02, 0x7f, /* 1: packed varints 1, 300, 127 */
        0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* -1 */
        0x12, 0x08, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, /* 2: packed floats 1, 2 */
        0x15, 0x00, 0x00, 0x40, 0x40,                               /* 2: unpacked float 3 */
        0x1a, 0x08, 1,    0,    0,    0,    0,    0,    0,    0,    /* 3: packed fixed64 1 */
    };
    pb_reader r;
    pb_field f;
    pb_vec ints = {0}, floats = {0}, f64 = {0};
    init(&r, buf, sizeof buf);
    while (pb_more(&r)) {
        assert_int_equal(pb_next(&r, &f), MOPT_OK);
        if (f.num == 1) assert_int_equal(pb_repeated(&r, &f, PB_VARINT, &ints), MOPT_OK);
        if (f.num == 2) assert_int_equal(pb_repeated(&r, &f, PB_I32, &floats), MOPT_OK);
        if (f.num == 3) assert_int_equal(pb_repeated(&r, &f, PB_I64, &f64), MOPT_OK);
    }
    assert_int_equal(ints.n, 5);
    const uint64_t *iv = ints.data;
    assert_int_equal(iv[0], 5);
    assert_int_equal(iv[1], 1);
    assert_int_equal(iv[2], 300);
    assert_int_equal(iv[3], 127);
    assert_int_equal((int64_t)iv[4], -1);
    assert_int_equal(floats.n, 3);
    float fv[3];
    memcpy(fv, floats.data, sizeof fv);
    assert_true(fv[0] == 1.0f && fv[1] == 2.0f && fv[2] == 3.0f);
    assert_int_equal(f64.n, 1);
    pb_vec_free(&ints);
    pb_vec_free(&floats);
    pb_vec_free(&f64);
}

MOPT_TEST(pb_packed_errors) {
    pb_reader r;
    pb_field f;
    pb_vec v = {0};
    /* packed floats with 5 bytes */
    const uint8_t odd[] = {0x12, 0x05, 0, 0, 0, 0, 0};
    init(&r, odd, sizeof odd);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(pb_repeated(&r, &f, PB_I32, &v), MOPT_ERR_PARSE);
    assert_non_null(strstr(mopt_error_message(), "multiple"));
    pb_vec_free(&v);
    /* packed varints whose last element is cut */
    const uint8_t cut[] = {0x0a, 0x02, 0x01, 0x80};
    init(&r, cut, sizeof cut);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(pb_repeated(&r, &f, PB_VARINT, &v), MOPT_ERR_PARSE);
    assert_non_null(strstr(mopt_error_message(), "packed field 1 (TestProto.alpha) at offset 3"));
    pb_vec_free(&v);
    /* a fixed32 where varints are expected */
    const uint8_t wrong[] = {0x0d, 0, 0, 0, 0};
    init(&r, wrong, sizeof wrong);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(pb_repeated(&r, &f, PB_VARINT, &v), MOPT_ERR_PARSE);
    assert_non_null(strstr(mopt_error_message(), "expected varint"));
    pb_vec_free(&v);
}

MOPT_TEST(pb_string_rejects_nul) {
    const uint8_t buf[] = {0x0a, 0x03, 'a', 0, 'b'};
    pb_reader r;
    pb_field f;
    char *s = NULL;
    size_t n = 0;
    init(&r, buf, sizeof buf);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(pb_string(&r, &f, false, &s, NULL), MOPT_ERR_PARSE);
    assert_null(s);
    assert_non_null(strstr(mopt_error_message(), "NUL"));
    assert_int_equal(pb_string(&r, &f, true, &s, &n), MOPT_OK);
    assert_int_equal(n, 3);
    assert_memory_equal(s, "a\0b", 4);
    mopt_free(s);
}

/* pb_str_read: short strings in the buffer, long ones (up to the buffer's
 * size and past it) on the heap, replaced on a second read; NUL rejected. */
MOPT_TEST(pb_str_short_and_long) {
    uint8_t buf[2 * 300];
    size_t at = 0;
    const size_t lens[] = {0, 3, 119, 120, 121, 200};
    pb_str o = {0};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        at = 0;
        buf[at++] = 0x0a;
        if (lens[k] < 128) {
            buf[at++] = (uint8_t)lens[k];
        } else {
            buf[at++] = (uint8_t)(0x80 | (lens[k] & 0x7f));
            buf[at++] = (uint8_t)(lens[k] >> 7);
        }
        for (size_t i = 0; i < lens[k]; i++)
            buf[at++] = (uint8_t)('a' + i % 26);
        pb_reader r;
        pb_field f;
        init(&r, buf, at);
        assert_int_equal(pb_next(&r, &f), MOPT_OK);
        assert_int_equal(pb_str_read(&r, &f, &o), MOPT_OK); /* replaces the previous one */
        assert_int_equal(strlen(o.s), lens[k]);
        assert_memory_equal(o.s, buf + at - lens[k], lens[k]);
        assert_true((o.s == o.buf) == (lens[k] < sizeof o.buf));
    }
    pb_str_free(&o);
    assert_null(o.s);
    assert_null(o.heap);
    const uint8_t nul[] = {0x0a, 0x03, 'a', 0, 'b'};
    pb_reader r;
    pb_field f;
    init(&r, nul, sizeof nul);
    assert_int_equal(pb_next(&r, &f), MOPT_OK);
    assert_int_equal(pb_str_read(&r, &f, &o), MOPT_ERR_PARSE);
    assert_non_null(strstr(mopt_error_message(), "NUL"));
    assert_null(o.s);
    pb_str_free(&o);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pb_str_short_and_long),
        cmocka_unit_test(pb_varint_decoding),
        cmocka_unit_test(pb_fields_of_each_wire_type),
        cmocka_unit_test(pb_skips_unknown_fields),
        cmocka_unit_test(pb_rejects_group_and_invalid_wire_types),
        cmocka_unit_test(pb_rejects_length_past_end),
        cmocka_unit_test(pb_rejects_truncated_scalars),
        cmocka_unit_test(pb_nested_offsets_are_absolute),
        cmocka_unit_test(pb_packed_and_unpacked),
        cmocka_unit_test(pb_packed_errors),
        cmocka_unit_test(pb_string_rejects_nul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
