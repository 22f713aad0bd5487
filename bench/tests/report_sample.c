/*
 * report_sample.c — writes made-up benchmark results as --json and --journal
 * files (the journal gets two appends), for check_json.py to validate the
 * schema with Python's json module. Usage: report_sample OUT.json OUT.jsonl
 */
#include <stdio.h>
#include <string.h>

#include "report.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: report_sample OUT.json OUT.jsonl\n");
        return 2;
    }
    bench_config c[2];
    bench_config_init(&c[0]);
    bench_config_init(&c[1]);
    int bad = bench_config_set_str(&c[0].model, "tests/models/bert/model.onnx");
    bad |= bench_config_set_str(&c[0].name, "bert \"quoted\"\tname");
    bad |= bench_config_add_dim(&c[0], "seq", 128);
    bad |= bench_config_set_str(&c[0].profile, "1");
    c[0].batch = 8;
    bad |= bench_config_set_str(&c[1].model, "missing.onnx");
    c[1].duration_s = 2.0;
    if (bad) return 1;

    bench_result r[2];
    bench_result_init(&r[0], &c[0]);
    bench_result_init(&r[1], &c[1]);
    bench_result *a = &r[0];
    a->ok = 1;
    snprintf(a->precision, sizeof a->precision, "fp32");
    snprintf(a->backend, sizeof a->backend, "auto");
    a->threads = 0;
    a->opt_level = 2;
    a->n_io = 2;
    snprintf(a->io[0].name, sizeof a->io[0].name, "input_ids");
    snprintf(a->io[0].dtype, sizeof a->io[0].dtype, "i64");
    snprintf(a->io[0].source, sizeof a->io[0].source, "random");
    a->io[0].rank = 2;
    a->io[0].dims[0] = 8;
    a->io[0].dims[1] = 128;
    a->io[1] = a->io[0];
    snprintf(a->io[1].name, sizeof a->io[1].name, "attention_mask");
    snprintf(a->io[1].source, sizeof a->io[1].source, "ones");
    a->items = 8;
    a->load_ms = 12.5;
    a->session_ms = 0.1;
    a->first_run_ms = 3.25;
    a->measure_s = 0.2;
    a->latency_ms = (bench_latency){100, 1.0, 4.0, 1.5, 0.25, 1.4, 2.0, 2.5, 3.9};
    a->throughput_per_s = 666.6;
    a->items_per_s = 5332.8;
    a->peak_rss_bytes = 12345678;
    a->peak_rss_is_per_config = 1;
    a->arena_bytes = 0;
    a->peak_bytes = 4096;
    a->model_nodes = 120;
    a->model_params = 139000;
    a->profiled = 1;
    for (int run = 0; run < 2; run++) {
        if (bench_prof_add(&a->prof, 0, "MatMul_0", "MatMul", "ref", 5000, 20000) ||
            bench_prof_add(&a->prof, 1, "", "Add", "ref", 700, 0))
            return 1;
        bench_prof_end_run(&a->prof);
    }
    snprintf(r[1].error, sizeof r[1].error, "loading 'missing.onnx': I/O error: \"gone\"");

    bench_env env;
    bench_env_collect(&env);
    char err[512];
    remove(argv[2]);
    if (bench_report_write_json(argv[1], r, 2, &env, err, sizeof err) ||
        bench_report_append_journal(argv[2], r, 2, &env, err, sizeof err) ||
        bench_report_append_journal(argv[2], r, 1, &env, err, sizeof err)) {
        fprintf(stderr, "report_sample: %s\n", err);
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        bench_result_free(&r[i]);
        bench_config_free(&c[i]);
    }
    return 0;
}
