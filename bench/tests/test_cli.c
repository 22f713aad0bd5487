/*
 * test_cli.c — mopt-bench's command-line parsing: values, both option forms,
 * dims lists, and clear errors for bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../tests/test_main.h"

#include "cli.h"

#define ARGV(...) ((char *[]){"mopt-bench", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){"mopt-bench", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(cli, err, ...)                                                                       \
    bench_cli_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), cli, err, sizeof err)

MOPT_TEST(cli_parses_everything) {
    bench_cli cli;
    char err[512];
    int rc = PARSE(&cli, err, "m.onnx", "--input", "ids=ids.npy", "--shape=input=1x3x32x32",
                   "--shape", "tok=batch,seq", "--dim", "seq=128", "--precision", "bf16",
                   "--backend=ref", "--opt-level", "0", "--threads", "4", "--warmup", "3",
                   "--iterations", "20", "--json", "o.json", "--journal", "j.jsonl", "--top", "5",
                   "--int-range", "-3,7", "--seed", "9", "--batch", "2");
    if (rc) fail_msg("%s", err);
    const bench_config *c = &cli.base;
    assert_string_equal(cli.target, "m.onnx");
    assert_false(cli.is_scenario);
    assert_string_equal(c->model, "m.onnx");
    assert_int_equal(c->n_inputs, 1);
    assert_string_equal(c->inputs[0].key, "ids");
    assert_string_equal(c->inputs[0].value, "ids.npy");
    assert_int_equal(c->n_shapes, 2);
    assert_int_equal(c->shapes[0].rank, 4);
    assert_int_equal(c->shapes[0].dims[1], 3);
    assert_int_equal(c->shapes[1].rank, 2);
    assert_string_equal(c->shapes[1].syms[0], "batch");
    assert_string_equal(c->shapes[1].syms[1], "seq");
    assert_int_equal(c->n_dims, 1);
    assert_int_equal(c->dims[0].value, 128);
    assert_string_equal(c->precision, "bf16");
    assert_string_equal(c->backend, "ref");
    assert_int_equal(c->opt_level, 0);
    assert_int_equal(c->threads, 4);
    assert_int_equal(c->warmup, 3);
    assert_int_equal(c->iterations, 20);
    assert_string_equal(cli.json_path, "o.json");
    assert_string_equal(cli.journal_path, "j.jsonl");
    assert_int_equal(c->top, 5);
    assert_string_equal(c->profile, "1"); /* --top alone profiles without a trace */
    assert_int_equal(c->int_lo, -3);
    assert_int_equal(c->int_hi, 7);
    assert_int_equal(c->seed, 9);
    assert_int_equal(c->batch, 2);
    bench_cli_free(&cli);
}

MOPT_TEST(cli_profile_path_and_scenario) {
    bench_cli cli;
    char err[512];
    assert_int_equal(PARSE(&cli, err, "s.yaml", "--profile", "t.json", "--duration", "2.5"), 0);
    assert_true(cli.is_scenario);
    assert_null(cli.base.model);
    assert_string_equal(cli.base.profile, "t.json");
    assert_true(cli.base.duration_s == 2.5);
    bench_cli_free(&cli);
}

MOPT_TEST(cli_explicit_options_override_scenario) {
    bench_cli cli;
    char err[512];
    assert_int_equal(PARSE(&cli, err, "s.yaml", "--iterations", "7", "--threads", "3", "--shape",
                           "x=batch,4", "--dim", "seq=9"),
                     0);
    bench_config c;
    bench_config_init(&c);
    c.iterations = 50;
    c.duration_s = 2.0;
    c.threads = 1;
    c.warmup = 9; /* not given on the command line: kept */
    assert_int_equal(bench_config_set_str(&c.precision, "bf16"), 0);
    assert_int_equal(bench_config_add_dim(&c, "seq", 64), 0);
    assert_int_equal(bench_cli_apply(&cli, &c), 0);
    assert_int_equal(c.iterations, 7);
    assert_true(c.duration_s == 0.0);
    assert_int_equal(c.threads, 3);
    assert_int_equal(c.warmup, 9);
    assert_string_equal(c.precision, "bf16");
    assert_int_equal(c.n_dims, 1);
    assert_int_equal(c.dims[0].value, 9);
    assert_int_equal(c.n_shapes, 1);
    assert_string_equal(c.shapes[0].syms[0], "batch");
    assert_int_equal(c.shapes[0].dims[1], 4);
    bench_config_free(&c);
    bench_cli_free(&cli);
}

static void expect_cli_error(int argc, char **argv, const char *fragment) {
    bench_cli cli;
    char err[512];
    if (bench_cli_parse(argc, argv, &cli, err, sizeof err) == 0)
        fail_msg("expected an error mentioning '%s'", fragment);
    if (!strstr(err, fragment)) fail_msg("error should mention '%s', got '%s'", fragment, err);
}
/* The arguments after the program name are refused with a message holding fragment. */
#define EXPECT_CLI_ERROR(fragment, ...)                                                            \
    expect_cli_error(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), fragment)

MOPT_TEST(cli_errors) {
    EXPECT_CLI_ERROR("no model", "--threads", "2");
    EXPECT_CLI_ERROR("--threads wants an integer", "m.onnx", "--threads", "x");
    EXPECT_CLI_ERROR("needs a value", "m.onnx", "--threads");
    EXPECT_CLI_ERROR("NAME=VALUE", "m.onnx", "--input", "x.npy");
    EXPECT_CLI_ERROR("--shape x", "m.onnx", "--shape", "x=1x-2");
    EXPECT_CLI_ERROR("not both", "m.onnx", "--iterations", "5", "--duration", "1");
    EXPECT_CLI_ERROR("unknown option '--bogus'", "m.onnx", "--bogus", "1");
    EXPECT_CLI_ERROR("more than one", "a.onnx", "b.onnx");
    EXPECT_CLI_ERROR("LO < HI", "m.onnx", "--int-range", "5,5");
    EXPECT_CLI_ERROR(">= 1", "m.onnx", "--iterations", "0");
}

MOPT_TEST(cli_dims_syntax) {
    bench_shape s;
    char err[256];
    memset(&s, 0, sizeof s);
    assert_int_equal(bench_shape_parse_dims("[ 2, seq ,7 ]", &s, err, sizeof err), 0);
    assert_int_equal(s.rank, 3);
    assert_int_equal(s.dims[0], 2);
    assert_string_equal(s.syms[1], "seq");
    assert_int_equal(s.dims[2], 7);
    assert_int_equal(bench_shape_parse_dims("4x5", &s, err, sizeof err), 0);
    assert_int_equal(s.rank, 2);
    assert_null(s.syms[1]);
    assert_int_equal(bench_shape_parse_dims("", &s, err, sizeof err), 0);
    assert_int_equal(s.rank, 0);
    assert_int_equal(bench_shape_parse_dims("1,,2", &s, err, sizeof err), -1);
    assert_int_equal(bench_shape_parse_dims("1,2,3,4,5,6,7,8,9", &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "more than 8"));
    assert_int_equal(bench_shape_parse_dims("a b", &s, err, sizeof err), -1);
    bench_shape_free(&s);
}

MOPT_TEST_MAIN(cmocka_unit_test(cli_parses_everything),
               cmocka_unit_test(cli_profile_path_and_scenario),
               cmocka_unit_test(cli_explicit_options_override_scenario),
               cmocka_unit_test(cli_errors), cmocka_unit_test(cli_dims_syntax))
