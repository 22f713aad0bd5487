/*
 * eltwise_bench.c — micro-benchmark of the memory-bound ops at typical
 * transformer sizes: each op's reference run against its cpu-portable,
 * cpu-avx2 and cpu-avx512 implementations (glue + kernels/cpu, exactly what
 * a session runs), printing GB/s (bytes read + written per call / time,
 * best of several timed batches). Tiers the CPU lacks are shown as "-".
 * Not a test: run it by hand.
 *
 * usage: eltwise_bench [--threads N] [--ms MILLISECONDS]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/cpu.h"
#include "ir/ir.h"
#include "kernels/cpu/cpu_kernels.h"
#include "ops/node_view.h"
#include "ops/ops.h"

typedef struct bcase {
    const char *label;
    const char *op;
    int n_in;
    int32_t rank[3];
    int64_t dims[3][4];
    const char *attr_name; /* one int attribute, or NULL */
    int64_t attr;
    const char *sattr_name; /* one string attribute, or NULL */
    const char *sattr;
    const int64_t *perm; /* Transpose */
} bcase;

/* With one thread, time is this thread's CPU time, so that other processes
 * taking the core do not count (the machine may be shared); with more, the
 * wall clock. */
static clockid_t g_clock = CLOCK_MONOTONIC;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(g_clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *rand_buf(int64_t n) {
    float *x = mopt_aligned_alloc((size_t)n * sizeof *x);
    if (!x) return NULL;
    uint32_t s = 12345;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 16777216.0f * 4.0f - 2.0f;
    }
    return x;
}

/* Best GB/s of `run` over batches of calls for about `ms` milliseconds. */
static double time_run(op_run_fn run, const op_ctx *ctx, op_tensor *in, int n_in, op_tensor *out,
                       double bytes, double ms) {
    int reps = 1;
    for (;;) { /* calibrate a batch to ~ms/10 */
        double t0 = now_s();
        for (int r = 0; r < reps; r++)
            if (run(ctx, in, n_in, out, 1) != MOPT_OK) return -1;
        double dt = now_s() - t0;
        if (dt > ms / 10000.0 || reps > (1 << 24)) break;
        reps *= 2;
    }
    double best = 1e30, t_end = now_s() + ms / 1000.0;
    while (now_s() < t_end) {
        double t0 = now_s();
        for (int r = 0; r < reps; r++)
            run(ctx, in, n_in, out, 1);
        double dt = (now_s() - t0) / reps;
        if (dt < best) best = dt;
    }
    return bytes / best / 1e9;
}

int main(int argc, char **argv) {
    int threads = 1;
    double ms = 300;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ms") && i + 1 < argc)
            ms = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: eltwise_bench [--threads N] [--ms MILLISECONDS]\n");
            return 2;
        }
    }
    if (threads == 1) g_clock = CLOCK_THREAD_CPUTIME_ID;
    static const int64_t perm_bhsd[4] = {0, 2, 1, 3}, perm_bhds[4] = {0, 2, 3, 1};
    /* fields left out are NULL / 0 */
    const bcase cases[] = {
        {"Add bias [128,3072]+[3072]", "Add", 2, {2, 1}, {{128, 3072}, {3072}}},
        {"Add residual [128,768]x2", "Add", 2, {2, 2}, {{128, 768}, {128, 768}}},
        {"Mul scalar [128,3072]*[]", "Mul", 2, {2, 0}, {{128, 3072}, {0}}},
        {"Gelu erf [128,3072]", "Gelu", 1, {2}, {{128, 3072}}},
        {"Gelu tanh [128,3072]",
         "Gelu",
         1,
         {2},
         {{128, 3072}},
         .sattr_name = "approximate",
         .sattr = "tanh"},
        {"Erf [128,3072]", "Erf", 1, {2}, {{128, 3072}}},
        {"Tanh [128,3072]", "Tanh", 1, {2}, {{128, 3072}}},
        {"Sigmoid [128,3072]", "Sigmoid", 1, {2}, {{128, 3072}}},
        {"Exp [128,3072]", "Exp", 1, {2}, {{128, 3072}}},
        {"Relu [128,3072]", "Relu", 1, {2}, {{128, 3072}}},
        {"Softmax [12,128,128] rows 128", "Softmax", 1, {3}, {{12, 128, 128}}, "axis", -1},
        {"LogSoftmax [128,30522]", "LogSoftmax", 1, {2}, {{128, 30522}}, "axis", -1},
        {"LayerNorm [128,768]",
         "LayerNormalization",
         3,
         {2, 1, 1},
         {{128, 768}, {768}, {768}},
         "axis",
         -1},
        {"ReduceMean [128,768] last", "ReduceMean", 1, {2}, {{128, 768}}},
        {"Transpose [1,128,12,64]->BHSD",
         "Transpose",
         1,
         {4},
         {{1, 128, 12, 64}},
         .perm = perm_bhsd},
        {"Transpose [1,128,12,64]->BHDS",
         "Transpose",
         1,
         {4},
         {{1, 128, 12, 64}},
         .perm = perm_bhds},
    };
    static const char *const tiers[] = {"portable", "avx2", "avx512"};
    printf("eltwise_bench: %d thread(s), best of %.0f ms per cell, CPU tier %s; GB/s = bytes "
           "read+written / %s time\n\n",
           threads, ms, cpu_get()->isa, threads == 1 ? "thread CPU" : "wall");
    printf("| %-32s | %8s | %8s | %8s | %8s | %7s |\n", "op (f32)", "ref", "portable", "avx2",
           "avx512", "best/ref");
    printf("|%.34s|%.10s|%.10s|%.10s|%.10s|%.9s|\n", "----------------------------------",
           "----------", "----------", "----------", "----------", "---------");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const bcase *bc = &cases[c];
        ir_graph *g = ir_graph_create();
        ir_node *n = ir_graph_add_node(g, bc->op, "", "bench", bc->n_in, 1);
        if (!g || !n) return 1;
        char nm[16];
        for (int k = 0; k < bc->n_in; k++) {
            snprintf(nm, sizeof nm, "x%d", k);
            n->inputs[k] = ir_graph_value(g, nm);
        }
        n->outputs[0] = ir_graph_value(g, "y");
        n->op = ops_find(bc->op, "");
        if (bc->attr_name) ir_node_add_attr(n, bc->attr_name, IR_ATTR_INT)->i = bc->attr;
        if (bc->sattr_name) {
            ir_attr *a = ir_node_add_attr(n, bc->sattr_name, IR_ATTR_STRING);
            a->s_len = strlen(bc->sattr);
            a->s = mopt_malloc(a->s_len + 1);
            memcpy(a->s, bc->sattr, a->s_len + 1);
        }
        if (bc->perm) {
            ir_attr *a = ir_node_add_attr(n, "perm", IR_ATTR_INTS);
            a->ints = mopt_malloc(4 * sizeof(int64_t));
            memcpy(a->ints, bc->perm, 4 * sizeof(int64_t));
            a->n = 4;
        }
        op_tensor in[3], out[1];
        double bytes = 0;
        memset(in, 0, sizeof in);
        memset(out, 0, sizeof out);
        for (int k = 0; k < bc->n_in; k++) {
            in[k].dtype = MOPT_DTYPE_F32;
            ir_shape_set(&in[k].shape, bc->rank[k], bc->dims[k]);
            int64_t ne = ir_shape_numel(&in[k].shape);
            in[k].data = rand_buf(ne > 0 ? ne : 1);
            bytes += 4.0 * (double)ne;
        }
        /* the op's view of the node: its ctx with the params parsed (in v) */
        if (ir_graph_set_opset(g, "", 17) != 0) return 1;
        op_view v;
        op_view_src src = {.graph = g, .runtime = true, .threads = threads};
        if (op_view_init(&v, &src, n, NULL) != MOPT_OK) return 1;
        op_ctx ctx = v.ctx;
        if (n->op->infer(&ctx, in, bc->n_in, out, 1) != MOPT_OK) return 1;
        int64_t no = ir_shape_numel(&out[0].shape);
        out[0].data = mopt_aligned_alloc((size_t)no * 4);
        bytes += 4.0 * (double)no;
        double ref = time_run(n->op->run, &ctx, in, bc->n_in, out, bytes, ms), best = ref;
        printf("| %-32s | %8.2f |", bc->label, ref);
        for (int t = 0; t < 3; t++) {
            const cpu_kernels *k = cpu_kernels_for(tiers[t]);
            const op_impl *impl = NULL;
            char want[32];
            snprintf(want, sizeof want, "cpu-%s", tiers[t]);
            for (int i = 0; n->op->impls && n->op->impls[i]; i++)
                if (!strcmp(n->op->impls[i]->name, want)) impl = n->op->impls[i];
            if (!k || !impl) {
                printf(" %8s |", "-");
                continue;
            }
            op_ctx rc = ctx;
            rc.state = k;
            void *scratch = NULL;
            rc.scratch = &scratch;
            double gbs = time_run(impl->run, &rc, in, bc->n_in, out, bytes, ms);
            if (gbs > best) best = gbs;
            printf(" %8.2f |", gbs);
        }
        printf(" %6.1fx |\n", best / ref);
        for (int k = 0; k < bc->n_in; k++)
            mopt_aligned_free(in[k].data);
        mopt_aligned_free(out[0].data);
        ir_graph_destroy(g);
    }
    return 0;
}
