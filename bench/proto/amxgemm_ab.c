/*
 * amxgemm_ab.c — the own AMX bf16 GEMM (kernels/cpu/amxgemm.h) against
 * oneDNN's bf16 matmul (brg:avx512_core_amx_bf16) on one problem Y[M,N] =
 * post(X[M,K] W[K,N] + bias), bf16 X and Y, alternating in one process
 * (process CPU time per call; best and mean), the outputs compared; also
 * oneDNN's call split into N panels (NC) or M blocks (mMC), the question
 * of matmul_split_amx.md. Not library code, not built by meson:
 *   gcc -O2 -fopenmp -march=sapphirerapids -I. -Iinclude -Ibuild bench/proto/amxgemm_ab.c \
 *       kernels/cpu/amxgemm.c kernels/cpu/amxgemm-amx.c -ldnnl -lm -o /tmp/amxab
 *   OMP_NUM_THREADS=1 /tmp/amxab M K N [ITERS] [gelu|add|none] [NC...] [mMC...]
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "kernels/cpu/amxgemm.h"
#ifdef AMX_OLD /* a second build of the kernel to compare, its run renamed */
void cpu_amx_run_old(const cpu_amx_plan *p, const cpu_amx_io *io, int64_t u0, int64_t u1,
                     void *scratch);
#endif
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto_onednn.h"
#define CK(x) PROTO_CHECK(x, exit(1))
static dnnl_engine_t eng;
static dnnl_stream_t st;
static uint16_t f2bf(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
static float bf2f(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

typedef struct {
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, bias, dst, res, scratch;
    int64_t n0, m0;
} part;

static const char *post = "none";

/* A matmul of rows [m0, m0+mc) and columns [n0, n0+nc) of the whole problem,
 * its weights packed in the layout oneDNN picks for that panel. */
static void make_part(part *p, int64_t M, int64_t K, int64_t N, int64_t m0, int64_t mc, int64_t n0,
                      int64_t nc, uint16_t *X, const float *W, const float *B, uint16_t *Y,
                      uint16_t *R) {
    dnnl_memory_desc_t a, wany, bias, y, r, wplain;
    dnnl_dims_t ad = {mc, K}, as = {K, 1}, wd = {K, nc}, bd = {1, nc}, yd = {mc, nc}, ys = {N, 1};
    CK(dnnl_memory_desc_init_by_strides(&a, 2, ad, dnnl_bf16, as));
    CK(dnnl_memory_desc_init_by_tag(&wany, 2, wd, dnnl_bf16, dnnl_format_tag_any));
    CK(dnnl_memory_desc_init_by_tag(&bias, 2, bd, dnnl_f32, dnnl_ab));
    CK(dnnl_memory_desc_init_by_strides(&y, 2, yd, dnnl_bf16, ys));
    CK(dnnl_memory_desc_init_by_strides(&r, 2, yd, dnnl_bf16, ys));
    dnnl_primitive_attr_t attr;
    CK(dnnl_primitive_attr_create(&attr));
    CK(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));
    dnnl_post_ops_t po;
    CK(dnnl_post_ops_create(&po));
    if (!strcmp(post, "gelu"))
        CK(dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_gelu_erf, 0, 0));
    if (!strcmp(post, "add")) CK(dnnl_post_ops_append_binary(po, dnnl_binary_add, &r));
    CK(dnnl_primitive_attr_set_post_ops(attr, po));
    dnnl_matmul_desc_t md;
    CK(dnnl_matmul_desc_init(&md, &a, &wany, &bias, &y));
    dnnl_primitive_desc_t pd;
    CK(dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL));
    const char *impl;
    CK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
    static int said;
    if (!said++) printf("impl %s\n", impl);
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    CK(dnnl_primitive_create(&p->prim, pd));
    /* weights: plain f32 panel -> bf16 plain -> packed */
    uint16_t *wp = malloc((size_t)K * nc * 2);
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < nc; j++)
            wp[k * nc + j] = f2bf(W[k * N + n0 + j]);
    CK(dnnl_memory_desc_init_by_tag(&wplain, 2, wd, dnnl_bf16, dnnl_ab));
    dnnl_memory_t wsrc;
    CK(dnnl_memory_create(&wsrc, &wplain, eng, wp));
    CK(dnnl_memory_create(&p->wei, wmd, eng, DNNL_MEMORY_ALLOCATE));
    dnnl_primitive_desc_t rpd;
    CK(dnnl_reorder_primitive_desc_create(&rpd, &wplain, eng, wmd, eng, NULL));
    dnnl_primitive_t rp;
    CK(dnnl_primitive_create(&rp, rpd));
    dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, wsrc}, {DNNL_ARG_TO, p->wei}};
    CK(dnnl_primitive_execute(rp, st, 2, ra));
    CK(dnnl_stream_wait(st));
    CK(dnnl_memory_create(&p->src, &a, eng, X + m0 * K));
    CK(dnnl_memory_create(&p->bias, &bias, eng, (void *)(B + n0)));
    CK(dnnl_memory_create(&p->dst, &y, eng, Y + m0 * N + n0));
    CK(dnnl_memory_create(&p->res, &r, eng, R + m0 * N + n0));
    CK(dnnl_memory_create(&p->scratch, smd, eng, DNNL_MEMORY_ALLOCATE));
}

static void run_part(part *p) {
    dnnl_exec_arg_t args[6] = {{DNNL_ARG_SRC, p->src},
                               {DNNL_ARG_WEIGHTS, p->wei},
                               {DNNL_ARG_BIAS, p->bias},
                               {DNNL_ARG_DST, p->dst},
                               {DNNL_ARG_SCRATCHPAD, p->scratch},
                               {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, p->res}};
    CK(dnnl_primitive_execute(p->prim, st, strcmp(post, "add") ? 5 : 6, args));
}

typedef struct {
    const char *name;
    part *parts;
    int n;
    uint16_t *Y;
    double best, sum;
} variant;

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s M K N [ITERS] [gelu|add|none] [NC...] [mMC...]\n", argv[0]);
        return 2;
    }
    int64_t M = atol(argv[1]), K = atol(argv[2]), N = atol(argv[3]);
    int iters = argc > 4 ? atoi(argv[4]) : 20;
    if (argc > 5) post = argv[5];
    CK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    CK(dnnl_stream_create(&st, eng, dnnl_stream_default_flags));
    uint16_t *X = malloc((size_t)M * K * 2), *R = malloc((size_t)M * N * 2);
    float *W = malloc((size_t)K * N * 4), *B = malloc((size_t)N * 4);
    srand(1);
    for (int64_t i = 0; i < M * K; i++)
        X[i] = f2bf((float)rand() / RAND_MAX - 0.5f);
    for (int64_t i = 0; i < K * N; i++)
        W[i] = ((float)rand() / RAND_MAX - 0.5f) / sqrtf((float)K);
    for (int64_t i = 0; i < N; i++)
        B[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int64_t i = 0; i < M * N; i++)
        R[i] = f2bf((float)rand() / RAND_MAX - 0.5f);
    variant v[16];
    int nv = 0;
    v[nv].name = "whole";
    v[nv].Y = calloc((size_t)M * N, 2);
    v[nv].parts = malloc(sizeof(part));
    v[nv].n = 1;
    make_part(&v[nv].parts[0], M, K, N, 0, M, 0, N, X, W, B, v[nv].Y, R);
    nv++;
    for (int i = 6; i < argc && nv < 16; i++) {
        bool rows = argv[i][0] == 'm';
        int64_t c = atol(argv[i] + rows);
        int64_t total = rows ? M : N;
        int n = (int)((total + c - 1) / c);
        char *nm = malloc(32);
        snprintf(nm, 32, "%s%lld", rows ? "M/" : "N/", (long long)c);
        v[nv].name = nm;
        v[nv].Y = calloc((size_t)M * N, 2);
        v[nv].parts = malloc(sizeof(part) * n);
        v[nv].n = n;
        for (int j = 0; j < n; j++) {
            int64_t o = j * c, len = o + c <= total ? c : total - o;
            if (rows)
                make_part(&v[nv].parts[j], M, K, N, o, len, 0, N, X, W, B, v[nv].Y, R);
            else
                make_part(&v[nv].parts[j], M, K, N, 0, M, o, len, X, W, B, v[nv].Y, R);
        }
        nv++;
    }
    for (int i = 0; i < nv; i++) {
        v[i].best = 1e9;
        v[i].sum = 0;
    }
    /* the own kernel: B packed, bias, GELU (erf) or the residual */
    cpu_amx_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.K = K, pl.N = N, pl.Kp = (K + 31) / 32 * 32, pl.Np = (N + 31) / 32 * 32;
    int64_t mb = (1 << 20) / (pl.Kp * 2) / 32 * 32;
    pl.mb = (int)(mb < 32 ? 32 : mb > 256 ? 256 : mb);
    if (getenv("AMX_MB")) pl.mb = atoi(getenv("AMX_MB"));
    pl.kc = getenv("AMX_KC") ? atoi(getenv("AMX_KC")) : 512;
    pl.pg = 1;
    /* AMX_FLUSH=1: 64 MB touched before every call (weights cold, as in a model) */
    static char *junk;
    bool flush = getenv("AMX_FLUSH") != NULL;
    if (flush) junk = malloc(64 << 20);
    uint16_t *bp = aligned_alloc(64, cpu_amx_packed_elems(K, N) * 2);
    cpu_amx_pack(W, K, N, false, bp);
    pl.bp = bp, pl.bias = B, pl.alpha = 1.f;
    pl.act = !strcmp(post, "gelu") ? KN_ACT_GELU : KN_ACT_NONE;
    uint16_t *Yamx = calloc((size_t)M * N, 2);
    cpu_amx_io io = {X, K, M, !strcmp(post, "add") ? R : NULL, Yamx, true, true, true};
    void *scr = aligned_alloc(64, (cpu_amx_scratch_bytes(&pl) + 63) / 64 * 64);
    if (syscall(SYS_arch_prctl, 0x1023, 18)) return 1;
    double amx_best = 1e9, amx_sum = 0, old_best = 1e9, old_sum = 0;
    for (int it = 0; it < iters + 2; it++)
        for (int i = 0; i < nv; i++) {
            if (flush) memset(junk, it + i, 64 << 20);
            double t0 = now();
            for (int j = 0; j < v[i].n; j++)
                run_part(&v[i].parts[j]);
            CK(dnnl_stream_wait(st));
            double t = now() - t0;
            if (it >= 2) {
                v[i].sum += t;
                if (t < v[i].best) v[i].best = t;
            }
            if (i == nv - 1) {
                if (flush) memset(junk, it, 64 << 20);
                t0 = now();
                cpu_amx_run(&pl, &io, 0, cpu_amx_units(&pl, M), scr);
                t = now() - t0;
                if (it >= 2) {
                    amx_sum += t;
                    if (t < amx_best) amx_best = t;
                }
#ifdef AMX_OLD
                if (flush) memset(junk, it + 1, 64 << 20);
                t0 = now();
                cpu_amx_run_old(&pl, &io, 0, cpu_amx_units(&pl, M), scr);
                t = now() - t0;
                if (it >= 2) {
                    old_sum += t;
                    if (t < old_best) old_best = t;
                }
#endif
            }
        }
    double flop = 2.0 * M * K * N;
    for (int i = 0; i < nv; i++) {
        double md = 0;
        for (int64_t e = 0; e < M * N; e++) {
            double d = fabs(bf2f(v[i].Y[e]) - bf2f(v[0].Y[e]));
            if (d > md) md = d;
        }
        printf("%-8s best %8.3f ms  mean %8.3f ms  %7.1f GFLOP/s  (x whole %.3f)  maxdiff %.3g\n",
               v[i].name, v[i].best * 1e3, v[i].sum / iters * 1e3, flop / v[i].best * 1e-9,
               v[i].best / v[0].best, md);
    }
    double md = 0;
    for (int64_t e = 0; e < M * N; e++) {
        double d = fabs(bf2f(Yamx[e]) - bf2f(v[0].Y[e]));
        if (d > md) md = d;
    }
    printf("%-8s best %8.3f ms  mean %8.3f ms  %7.1f GFLOP/s  (x whole %.3f)  maxdiff %.3g\n",
           "own-amx", amx_best * 1e3, amx_sum / iters * 1e3, flop / amx_best * 1e-9,
           amx_best / v[0].best, md);
    if (old_best < 1e9)
        printf("%-8s best %8.3f ms  mean %8.3f ms  %7.1f GFLOP/s  (x whole %.3f)\n", "old-amx",
               old_best * 1e3, old_sum / iters * 1e3, flop / old_best * 1e-9, old_best / v[0].best);
    return 0;
}
