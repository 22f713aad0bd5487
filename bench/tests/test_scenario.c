/*
 * test_scenario.c — scenario YAML parsing: defaults and overrides, cartesian
 * expansion, shape templates, and errors that name the line (bad YAML,
 * unknown keys, wrong values).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../tests/test_main.h"
#include "scenario.h"

static int parse(const char *text, const bench_config *defs, bench_config_list *l, char *err,
                 size_t errlen) {
    return bench_scenario_parse(text, strlen(text), "bench.yaml", "/scen", defs, l, err, errlen);
}

/* Parsing must fail with a message starting "bench.yaml:LINE:" and containing
 * the given fragment. */
static void expect_error(const char *text, int line, const char *fragment) {
    bench_config_list l;
    char err[1024];
    int rc = parse(text, NULL, &l, err, sizeof err);
    if (rc == 0) fail_msg("expected an error at line %d for:\n%s", line, text);
    assert_int_equal(l.count, 0);
    assert_null(l.items);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "bench.yaml:%d:", line);
    if (strncmp(err, prefix, strlen(prefix)) != 0)
        fail_msg("error should start with '%s', got '%s'", prefix, err);
    if (!strstr(err, fragment)) fail_msg("error should mention '%s', got '%s'", fragment, err);
}

MOPT_TEST(scenario_expands_cartesian_product) {
    const char *y = "defaults:\n"
                    "  warmup: 2\n"
                    "  threads: 4\n"
                    "configs:\n"
                    "  - name: bert\n"
                    "    model: models/bert.onnx\n"
                    "    batch: [1, 8]\n"
                    "    seq: [32, 64, 128]\n"
                    "    precision: [fp32, bf16]\n"
                    "  - model: /abs/cnn.onnx\n"
                    "    threads: 1\n"
                    "    warmup: 0\n";
    bench_config_list l;
    char err[512];
    assert_int_equal(parse(y, NULL, &l, err, sizeof err), 0);
    assert_int_equal(l.count, 2 * 3 * 2 + 1);
    /* seq varies fastest, then batch, then threads/opt_level/backend, precision slowest */
    const int64_t want_batch[] = {1, 1, 1, 8, 8, 8};
    const int64_t want_seq[] = {32, 64, 128};
    for (size_t i = 0; i < 12; i++) {
        const bench_config *c = &l.items[i];
        assert_string_equal(c->model, "/scen/models/bert.onnx");
        assert_string_equal(c->name, "bert");
        assert_int_equal(c->batch, want_batch[i % 6]);
        assert_int_equal(c->seq, want_seq[i % 3]);
        assert_string_equal(c->precision, i < 6 ? "fp32" : "bf16");
        assert_int_equal(c->threads, 4);
        assert_int_equal(c->warmup, 2);
        assert_int_equal(c->iterations, BENCH_DEFAULT_ITERATIONS);
    }
    const bench_config *cnn = &l.items[12];
    assert_string_equal(cnn->model, "/abs/cnn.onnx");
    assert_null(cnn->name);
    assert_int_equal(cnn->threads, 1);
    assert_int_equal(cnn->warmup, 0);
    assert_int_equal(cnn->batch, -1);
    assert_null(cnn->precision);
    bench_config_list_free(&l);
    assert_int_equal(l.count, 0);
}

MOPT_TEST(scenario_shapes_inputs_dims) {
    const char *y = "configs:\n"
                    "  - model: cnn.onnx\n"
                    "    shapes:\n"
                    "      input: [batch, 3, 32, 32]\n"
                    "      other: 2x5\n"
                    "    inputs: {ids: data/ids.npy, abs: /tmp/x.npy}\n"
                    "    dims: {seq: 17}\n"
                    "    int_range: [-5, 5]\n"
                    "    seed: 7\n"
                    "    profile: true\n"
                    "    top: 3\n"
                    "    duration: 1.5\n"
                    "    backend: [ref, auto]\n"
                    "    opt_level: [0, 2]\n";
    bench_config_list l;
    char err[512];
    if (parse(y, NULL, &l, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(l.count, 4);
    const bench_config *c = &l.items[0];
    assert_int_equal(c->n_shapes, 2);
    assert_string_equal(c->shapes[0].name, "input");
    assert_int_equal(c->shapes[0].rank, 4);
    assert_string_equal(c->shapes[0].syms[0], "batch");
    assert_null(c->shapes[0].syms[1]);
    assert_int_equal(c->shapes[0].dims[1], 3);
    assert_int_equal(c->shapes[0].dims[3], 32);
    assert_int_equal(c->shapes[1].rank, 2);
    assert_int_equal(c->shapes[1].dims[0], 2);
    assert_int_equal(c->shapes[1].dims[1], 5);
    assert_int_equal(c->n_inputs, 2);
    assert_string_equal(c->inputs[0].value, "/scen/data/ids.npy");
    assert_string_equal(c->inputs[1].value, "/tmp/x.npy");
    assert_int_equal(c->n_dims, 1);
    assert_string_equal(c->dims[0].name, "seq");
    assert_int_equal(c->dims[0].value, 17);
    assert_int_equal(c->int_lo, -5);
    assert_int_equal(c->int_hi, 5);
    assert_int_equal(c->seed, 7);
    assert_string_equal(c->profile, "1");
    assert_int_equal(c->top, 3);
    assert_true(c->duration_s == 1.5);
    /* backend (outer) x opt_level (inner) */
    assert_string_equal(l.items[0].backend, "ref");
    assert_int_equal(l.items[0].opt_level, 0);
    assert_string_equal(l.items[1].backend, "ref");
    assert_int_equal(l.items[1].opt_level, 2);
    assert_string_equal(l.items[3].backend, "auto");
    assert_int_equal(l.items[3].opt_level, 2);
    bench_config_list_free(&l);
}

MOPT_TEST(scenario_overrides_command_line_defaults) {
    bench_config defs;
    bench_config_init(&defs);
    defs.threads = 2;
    defs.duration_s = 3.0; /* e.g. --duration 3 */
    assert_int_equal(bench_config_set_str(&defs.precision, "bf16"), 0);
    const char *y = "- model: a.onnx\n"
                    "- model: b.onnx\n"
                    "  iterations: 50\n"
                    "  precision: int8\n";
    bench_config_list l;
    char err[512];
    assert_int_equal(parse(y, &defs, &l, err, sizeof err), 0);
    assert_int_equal(l.count, 2);
    assert_int_equal(l.items[0].threads, 2);
    assert_true(l.items[0].duration_s == 3.0);
    assert_string_equal(l.items[0].precision, "bf16");
    assert_true(l.items[1].duration_s == 0.0); /* iterations replaces the duration */
    assert_int_equal(l.items[1].iterations, 50);
    assert_string_equal(l.items[1].precision, "int8");
    bench_config_list_free(&l);
    bench_config_free(&defs);
}

MOPT_TEST(scenario_bad_yaml_names_line) {
    expect_error("configs:\n"
                 "  - model: a.onnx\n"
                 "    batch: [1, 2\n"
                 "    seq: 3\n",
                 4, "bad YAML");
    expect_error("configs:\n"
                 "  - model: a.onnx\n"
                 "    threads: 1: 2\n",
                 3, "bad YAML");
    expect_error("configs:\n"
                 "  - model: a.onnx\n"
                 "\tbatch: 1\n",
                 3, "bad YAML");
}

MOPT_TEST(scenario_unknown_key_names_line) {
    expect_error("configs:\n"
                 "  - model: a.onnx\n"
                 "    batch: 1\n"
                 "    itertions: 5\n",
                 4, "unknown key 'itertions'");
    expect_error("defaults:\n"
                 "  warmup: 1\n"
                 "  thread: 1\n"
                 "configs:\n"
                 "  - model: a.onnx\n",
                 3, "unknown key 'thread'");
    expect_error("config:\n"
                 "  - model: a.onnx\n",
                 1, "unknown top-level key 'config'");
}

MOPT_TEST(scenario_bad_values_name_line) {
    expect_error("configs:\n  - model: a.onnx\n    threads: many\n", 3, "wants an integer");
    expect_error("configs:\n  - model: a.onnx\n    batch: [1, 0]\n", 3, "must be >= 1");
    expect_error("configs:\n  - model: a.onnx\n    seq: []\n", 3, "empty list");
    expect_error("configs:\n  - model: a.onnx\n    model: {x: 1}\n", 3, "single value");
    expect_error("configs:\n  - model: a.onnx\n    iterations: 5\n    duration: 2\n", 4,
                 "not both");
    expect_error("configs:\n  - model: a.onnx\n    duration: -1\n", 3, "seconds > 0");
    expect_error("configs:\n  - model: a.onnx\n    int_range: [5, 1]\n", 3, "LO < HI");
    expect_error("configs:\n  - model: a.onnx\n    shapes: {x: [1, two words]}\n", 3, "input 'x'");
    expect_error("configs:\n  - batch: 1\n", 2, "has no 'model'");
    expect_error("configs: []\n", 1, "non-empty list");
    expect_error("configs:\n  - just a string\n", 2, "must be a mapping");
    expect_error("", 1, "empty scenario");
    expect_error("42\n", 1, "a scenario is a mapping");
}

MOPT_TEST(scenario_load_file_resolves_paths) {
    char path[] = "/tmp/mopt_bench_scen_XXXXXX.yaml";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("configs:\n  - model: m.onnx\n", f);
    fclose(f);
    bench_config_list l;
    char err[512];
    assert_int_equal(bench_scenario_load(path, NULL, &l, err, sizeof err), 0);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.items[0].model, "/tmp/m.onnx");
    bench_config_list_free(&l);
    remove(path);
    assert_int_equal(bench_scenario_load(path, NULL, &l, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open scenario"));
    assert_true(bench_is_scenario_path("x.yaml"));
    assert_true(bench_is_scenario_path("dir/x.yml"));
    assert_false(bench_is_scenario_path("model.onnx"));
    assert_false(bench_is_scenario_path(".yaml"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scenario_expands_cartesian_product),
        cmocka_unit_test(scenario_shapes_inputs_dims),
        cmocka_unit_test(scenario_overrides_command_line_defaults),
        cmocka_unit_test(scenario_bad_yaml_names_line),
        cmocka_unit_test(scenario_unknown_key_names_line),
        cmocka_unit_test(scenario_bad_values_name_line),
        cmocka_unit_test(scenario_load_file_resolves_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
