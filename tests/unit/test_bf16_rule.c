/*
 * test_bf16_rule.c — precision=bf16 runs bf16 kernels only where bf16
 * products beat f32 ones (cpu_features.bf16_compute: AMX, or AVX512-BF16 on
 * AMD), else the FP32 kernels; MOPT_BF16_COMPUTE=1/0 forces the rule on/off.
 * meson runs this program three times: with the CPU's own rule
 * (MOPT_BF16_COMPUTE=auto), forced on and forced off, so each machine checks
 * the rule it has and both outcomes of the plan. Also: the library's AMX
 * kernels (cpu_features.amx_kernels: AMX with AVX512-BF16 unless MOPT_AMX=0,
 * run a fourth time) plan the attention of bf16 nodes as "cpu-amx".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"
#include "core/cpu.h"
#include "kernels/cpu/cpu_attention.h"
#include "runtime/runtime.h"
#include "test_bert_plan.h"

/* What bf16_compute must be for this CPU and environment. */
static bool expected_rule(const cpu_features *f) {
    const char *e = getenv("MOPT_BF16_COMPUTE");
    if (e && strcmp(e, "1") == 0) return f->avx512_bf16;
    if (e && strcmp(e, "0") == 0) return false;
    return f->avx512_bf16 && (f->amx_bf16 || f->amd);
}

MOPT_TEST(rule_follows_cpu_and_environment) {
    const cpu_features *f = cpu_get();
    assert_int_equal(f->bf16_compute, expected_rule(f));
    if (f->amx_bf16) assert_true(f->avx512_bf16 || getenv("MOPT_ISA"));
    const char *amx = getenv("MOPT_AMX");
    assert_int_equal(f->amx_kernels,
                     f->amx_bf16 && f->avx512_bf16 && !(amx && strcmp(amx, "0") == 0));
}

/* Nodes whose kernel is `name`. */
static int count_kernel(const mopt_model *m, const char *name) {
    int n = 0;
    for (int32_t i = 0; i < m->graph->n_nodes; i++)
        n += m->plans[i].kernel && strcmp(m->plans[i].kernel, name) == 0;
    return n;
}

/* Counts the nodes planned in bf16 and those whose kernel name says bf16. */
static void count_bf16(const mopt_model *m, int *prec, int *named) {
    *prec = *named = 0;
    for (int32_t i = 0; i < m->graph->n_nodes; i++) {
        *prec += m->plans[i].precision == OP_PREC_BF16;
        *named += strstr(m->plans[i].kernel, "bf16") != NULL;
    }
}

MOPT_TEST(bf16_plan_follows_rule) {
    const cpu_features *f = cpu_get();
    mopt_model *m = bert_load("bf16", 3, NULL, NULL);
    int prec, named;
    count_bf16(m, &prec, &named);
    if (f->bf16_compute && f->avx512f && f->avx512bw) {
        assert_true(prec > 0);
        assert_true(named > 0); /* the matmuls run oneDNN's bf16 variants */
    } else if (!f->bf16_compute) {
        assert_int_equal(prec, 0);
        assert_int_equal(named, 0);
        assert_null(m->bf16_store);
    }
    /* the fused attention runs on AMX tiles exactly when bf16 nodes exist there */
    if (f->amx_kernels && f->bf16_compute && cpu_attention_amx_built())
        assert_true(count_kernel(m, "cpu-amx") > 0);
    else
        assert_int_equal(count_kernel(m, "cpu-amx"), 0);
    mopt_model_destroy(m);
}

/* int8_fallback=bf16 follows the same rule: excluded nodes run FP32 where
 * bf16 does not pay. */
MOPT_TEST(int8_fallback_follows_rule) {
    const cpu_features *f = cpu_get();
    mopt_model *m = bert_load("int8", 3, "/layers.1/fc1/MatMul,/layers.1/fc2/MatMul", "bf16");
    int prec, named;
    count_bf16(m, &prec, &named);
    if (f->bf16_compute)
        assert_int_equal(prec, 2);
    else
        assert_int_equal(prec, 0);
    mopt_model_destroy(m);
}

MOPT_TEST_MAIN(cmocka_unit_test(rule_follows_cpu_and_environment),
               cmocka_unit_test(bf16_plan_follows_rule),
               cmocka_unit_test(int8_fallback_follows_rule))
