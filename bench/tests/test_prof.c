/*
 * test_prof.c — aggregation of per-node profiles over runs: sums, grouping by
 * op type, ordering, GFLOP/s, unnamed nodes, and the text tables.
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../tests/test_main.h"

#include "prof.h"
#include "report.h"

static void fill(bench_prof *p) {
    bench_prof_init(p);
    for (int run = 0; run < 3; run++) {
        assert_int_equal(bench_prof_add(p, 0, "mm1", "MatMul", "ref", 1000, 4000), 0);
        assert_int_equal(bench_prof_add(p, 1, "", "Relu", "ref", 100, 0), 0);
        assert_int_equal(bench_prof_add(p, 2, "mm2", "MatMul", "cpu", 3000, 6000), 0);
        assert_int_equal(bench_prof_add(p, 3, "sm", "Softmax", NULL, 500, 0), 0);
        bench_prof_end_run(p);
    }
}

/* A table row's sums over the runs: time, calls and FLOPs. */
static void check_sums(const bench_prof_row *r, int64_t ns, int64_t calls, int64_t flops) {
    assert_int_equal(r->ns, ns);
    assert_int_equal(r->calls, calls);
    assert_int_equal(r->flops, flops);
}

MOPT_TEST(prof_sums_nodes_over_runs) {
    bench_prof p;
    fill(&p);
    assert_int_equal(p.runs, 3);
    assert_int_equal(p.n, 4);
    assert_int_equal(bench_prof_total_ns(&p), 3 * 4600);
    bench_prof_row *rows;
    size_t n;
    assert_int_equal(bench_prof_sorted_nodes(&p, &rows, &n), 0);
    assert_int_equal(n, 4);
    assert_string_equal(rows[0].node, "mm2");
    check_sums(&rows[0], 9000, 3, 18000);
    assert_string_equal(rows[0].kernel, "cpu");
    assert_true(bench_prof_gflops(&rows[0]) == 2.0); /* 18000 flop / 9000 ns */
    assert_string_equal(rows[1].node, "mm1");
    assert_string_equal(rows[2].node, "sm");
    assert_string_equal(rows[3].node, "Relu#1"); /* unnamed node */
    assert_true(bench_prof_gflops(&rows[3]) == 0.0);
    free(rows);
    bench_prof_free(&p);
}

MOPT_TEST(prof_groups_by_op_type) {
    bench_prof p;
    fill(&p);
    bench_prof_row *rows;
    size_t n;
    assert_int_equal(bench_prof_by_op(&p, &rows, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].op, "MatMul");
    assert_int_equal(rows[0].nodes, 2);
    check_sums(&rows[0], 12000, 6, 30000);
    assert_string_equal(rows[1].op, "Softmax");
    assert_string_equal(rows[2].op, "Relu");
    assert_null(rows[0].node);
    free(rows);
    bench_prof_free(&p);
}

MOPT_TEST(prof_handles_reordered_and_new_nodes) {
    bench_prof p;
    bench_prof_init(&p);
    assert_int_equal(bench_prof_add(&p, 0, "a", "Add", "ref", 10, 0), 0);
    assert_int_equal(bench_prof_add(&p, 1, "b", "Mul", "ref", 20, 0), 0);
    bench_prof_end_run(&p);
    /* a second run where the order differs and a node appears */
    assert_int_equal(bench_prof_add(&p, 0, "b", "Mul", "ref", 20, 0), 0);
    assert_int_equal(bench_prof_add(&p, 1, "c", "Add", "ref", 5, 0), 0);
    assert_int_equal(bench_prof_add(&p, 2, "a", "Add", "ref", 10, 0), 0);
    bench_prof_end_run(&p);
    assert_int_equal(p.n, 3);
    assert_int_equal(p.rows[0].calls, 2);
    assert_int_equal(p.rows[1].calls, 2);
    assert_int_equal(p.rows[2].calls, 1);
    assert_int_equal(bench_prof_total_ns(&p), 65);
    bench_prof_row *rows;
    size_t n;
    bench_prof_free(&p);
    assert_int_equal(bench_prof_by_op(&p, &rows, &n), 0); /* empty profile */
    assert_int_equal(n, 0);
    assert_null(rows);
}

MOPT_TEST(prof_tables_print) {
    bench_result r;
    memset(&r, 0, sizeof r);
    fill(&r.prof);
    r.ok = 1;
    r.profiled = 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    bench_report_print_profile(f, &r, 2);
    fclose(f);
    /* by op: MatMul 12000/13800 ns = 87.0%, GFLOP/s 2.50 */
    assert_non_null(strstr(buf, "Top 2 op types (3 runs; node time 0.005 ms/run)"));
    assert_non_null(strstr(buf, "MatMul"));
    assert_non_null(strstr(buf, "87.0%"));
    assert_non_null(strstr(buf, "2.50"));
    assert_non_null(strstr(buf, "(1 more op types)"));
    assert_non_null(strstr(buf, "mm2"));
    assert_null(strstr(buf, "Relu#1")); /* beyond the top 2 nodes */
    assert_non_null(strstr(buf, "(2 more nodes)"));
    free(buf);
    bench_prof_free(&r.prof);
}

MOPT_TEST_MAIN(cmocka_unit_test(prof_sums_nodes_over_runs),
               cmocka_unit_test(prof_groups_by_op_type),
               cmocka_unit_test(prof_handles_reordered_and_new_nodes),
               cmocka_unit_test(prof_tables_print))
