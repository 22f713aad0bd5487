/*
 * test_report.c — the JSON writer (commas, nesting, escaping, non-finite
 * numbers), byte formatting and the summary text. The JSON schema itself is
 * checked by check_json.py on the files report_sample writes.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../tests/test_main.h"

#include "report.h"

MOPT_TEST(report_json_writer_compact) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    bench_json j;
    bench_json_init(&j, f, 0);
    bench_json_begin_object(&j);
    bench_json_key(&j, "a");
    bench_json_begin_array(&j);
    bench_json_int(&j, 1);
    bench_json_int(&j, -2);
    bench_json_begin_object(&j);
    bench_json_end_object(&j);
    bench_json_begin_array(&j);
    bench_json_end_array(&j);
    bench_json_end_array(&j);
    bench_json_key(&j, "s\"q");
    bench_json_string(&j, "tab\there\nline \\ \x01 caf\xc3\xa9");
    bench_json_key(&j, "n");
    bench_json_null(&j);
    bench_json_key(&j, "x");
    bench_json_double(&j, 0.25);
    bench_json_key(&j, "inf");
    bench_json_double(&j, INFINITY);
    bench_json_key(&j, "nan");
    bench_json_double(&j, NAN);
    bench_json_key(&j, "t");
    bench_json_bool(&j, 1);
    bench_json_key(&j, "null_str");
    bench_json_string(&j, NULL);
    bench_json_end_object(&j);
    fclose(f);
    assert_string_equal(buf, "{\"a\":[1,-2,{},[]],\"s\\\"q\":\"tab\\there\\nline \\\\ \\u0001 "
                             "caf\xc3\xa9\",\"n\":null,\"x\":0.25,\"inf\":null,\"nan\":null,"
                             "\"t\":true,\"null_str\":null}");
    free(buf);
}

MOPT_TEST(report_format_bytes) {
    char b[32];
    bench_format_bytes(b, sizeof b, 0);
    assert_string_equal(b, "0 B");
    bench_format_bytes(b, sizeof b, 1023);
    assert_string_equal(b, "1023 B");
    bench_format_bytes(b, sizeof b, 1536);
    assert_string_equal(b, "1.5 KiB");
    bench_format_bytes(b, sizeof b, (int64_t)3 << 30);
    assert_string_equal(b, "3.0 GiB");
}

MOPT_TEST(report_summary_shows_failure) {
    bench_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.label, sizeof r.label, "cnn batch=1");
    snprintf(r.error, sizeof r.error, "loading 'x.onnx': I/O error: no such file");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    bench_report_print_summary(f, &r);
    fclose(f);
    assert_non_null(strstr(buf, "== cnn batch=1 =="));
    assert_non_null(strstr(buf, "FAILED: loading 'x.onnx'"));
    free(buf);
}

MOPT_TEST_MAIN(cmocka_unit_test(report_json_writer_compact), cmocka_unit_test(report_format_bytes),
               cmocka_unit_test(report_summary_shows_failure))
