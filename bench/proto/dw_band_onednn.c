/*
 * dw_band_onednn.c — times a 1x1 conv followed by a depthwise kxk conv run in
 * bands of rows (the 1x1 on rows [r0, r1), then the depthwise conv on the
 * output rows whose input rows are complete, band after band, so the
 * intermediate is still in L2 when the depthwise conv reads it) against the
 * two whole oneDNN primitives, and prints the implementations oneDNN picks
 * (issue 10; bench/proto/dw_band_onednn.md). Not library code, not built by
 * meson.
 *   gcc -O2 -fopenmp bench/proto/dw_band_onednn.c -ldnnl -lm -o /tmp/dwb
 *   OMP_NUM_THREADS=1 /tmp/dwb C_IN C_OUT H K S [blk|nhwc] [ITERS] [BAND...]
 * Batch 1, relu after both convs. BAND: depthwise output rows per band.
 * Band views: "strided" = primitives over views of the full tensors (same
 * strides, H = band rows); "perblk" (blk only) = the 1x1's output and the
 * depthwise conv split into 16-channel blocks, each a dense view (strided
 * blocked views run oneDNN's ref:any: only with STRIDED=1). Checks the
 * banded result against the whole pair. Process CPU time, rounds alternate.
 */
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto_onednn.h"
#define CK(x) PROTO_CHECK(x, exit(1))
static dnnl_engine_t eng;
static dnnl_stream_t st;
static dnnl_format_tag_t TAG;
static int verbose_impl = 1;
typedef struct {
    dnnl_primitive_t p;
    dnnl_memory_t src, wei, bia, dst;
    char *sp, *dp; /* base pointers (views: set per run) */
} prim;

/* A view of an activation tensor (N=1, C, Hfull, W) restricted to `rows`
 * rows: dims {1, C, rows, W}, strides of the full tensor. */
static dnnl_memory_desc_t view_md(int C, int Hfull, int W, int rows) {
    dnnl_memory_desc_t full, v;
    dnnl_dims_t fd = {1, C, Hfull, W}, vd = {1, C, rows, W};
    CK(dnnl_memory_desc_init_by_tag(&full, 4, fd, dnnl_f32, TAG));
    CK(dnnl_memory_desc_init_by_tag(&v, 4, vd, dnnl_f32, TAG));
    if (TAG != dnnl_nhwc && C > 16) /* else the dense strides address the same bytes */
        for (int i = 1; i < 4; i++)
            v.format_desc.blocking.strides[i] = full.format_desc.blocking.strides[i];
    return v;
}
static size_t row_bytes(int C, int W) { return (size_t)W * (TAG == dnnl_nhwc ? C : 16) * 4; }
static size_t cblk_bytes(int H, int W) { return (size_t)H * W * 16 * 4; }

/* Deterministic user weights (oihw / goihw plain) reordered into the
 * primitive's format; `o0` selects output channels [o0, o0 + co). */
static dnnl_memory_t weights(const dnnl_memory_desc_t *want, int co, int ci, int k, int dw, int o0,
                             int salt) {
    dnnl_memory_desc_t umd;
    if (dw) {
        dnnl_dims_t d = {co, 1, 1, k, k};
        CK(dnnl_memory_desc_init_by_tag(&umd, 5, d, dnnl_f32, dnnl_goihw));
    } else {
        dnnl_dims_t d = {co, ci, k, k};
        CK(dnnl_memory_desc_init_by_tag(&umd, 4, d, dnnl_f32, dnnl_oihw));
    }
    dnnl_memory_t u, m;
    CK(dnnl_memory_create(&u, &umd, eng, DNNL_MEMORY_ALLOCATE));
    float *h;
    dnnl_memory_get_data_handle(u, (void **)&h);
    size_t per = (size_t)(dw ? 1 : ci) * k * k;
    for (int o = 0; o < co; o++)
        for (size_t i = 0; i < per; i++)
            h[o * per + i] = (float)(((o + o0) * 131 + i * 71 + salt) % 17) / 17.f - 0.45f;
    CK(dnnl_memory_create(&m, want, eng, DNNL_MEMORY_ALLOCATE));
    dnnl_primitive_desc_t rpd;
    CK(dnnl_reorder_primitive_desc_create(&rpd, &umd, eng, want, eng, NULL));
    dnnl_primitive_t r;
    CK(dnnl_primitive_create(&r, rpd));
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, u}, {DNNL_ARG_TO, m}};
    CK(dnnl_primitive_execute(r, st, 2, a));
    dnnl_stream_wait(st);
    return m;
}
static dnnl_memory_t bias(int co, int o0) {
    dnnl_memory_desc_t md;
    dnnl_dims_t d = {co};
    CK(dnnl_memory_desc_init_by_tag(&md, 1, d, dnnl_f32, dnnl_a));
    dnnl_memory_t m;
    CK(dnnl_memory_create(&m, &md, eng, DNNL_MEMORY_ALLOCATE));
    float *h;
    dnnl_memory_get_data_handle(m, (void **)&h);
    for (int i = 0; i < co; i++)
        h[i] = (float)((i + o0) % 5) * 0.1f - 0.2f;
    return m;
}
/* conv (1x1 when !dw; else depthwise kxk stride s, pads pt/pb, left/right k/2)
 * with relu, given src/dst mds (views or full). */
static prim *mk(const dnnl_memory_desc_t *smd, const dnnl_memory_desc_t *dmd, int ci, int co, int k,
                int s, int pt, int pb, int dw, int o0, const char *what) {
    prim *r = calloc(1, sizeof *r);
    dnnl_memory_desc_t wmd, bmd;
    dnnl_dims_t bd = {co};
    CK(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a));
    if (dw) {
        dnnl_dims_t wd = {co, 1, 1, k, k};
        CK(dnnl_memory_desc_init_by_tag(&wmd, 5, wd, dnnl_f32, dnnl_format_tag_any));
    } else {
        dnnl_dims_t wd = {co, ci, 1, 1};
        CK(dnnl_memory_desc_init_by_tag(&wmd, 4, wd, dnnl_f32, dnnl_format_tag_any));
    }
    dnnl_convolution_desc_t cd;
    dnnl_dims_t sd = {s, s}, pl = {pt, k / 2}, pr = {pb, k / 2};
    if (!dw) pl[1] = pr[1] = 0;
    CK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, smd,
                                          &wmd, &bmd, dmd, sd, pl, pr));
    dnnl_primitive_attr_t at;
    dnnl_primitive_attr_create(&at);
    dnnl_primitive_attr_set_scratchpad_mode(at, dnnl_scratchpad_mode_library);
    dnnl_post_ops_t po;
    dnnl_post_ops_create(&po);
    dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_relu, 0, 0);
    dnnl_primitive_attr_set_post_ops(at, po);
    dnnl_primitive_desc_t pd;
    CK(dnnl_primitive_desc_create(&pd, &cd, at, eng, NULL));
    const char *impl;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    if (verbose_impl || strstr(impl, "ref")) {
        printf("  %-28s %s\n", what, impl);
    } else {
        static char seen[16][64];
        static int nseen;
        int i = 0;
        while (i < nseen && strcmp(seen[i], impl))
            i++;
        if (i == nseen && nseen < 16) {
            snprintf(seen[nseen++], 64, "%s", impl);
            printf("  (first %s: %s)\n", what, impl);
        }
    }
    CK(dnnl_primitive_create(&r->p, pd));
    r->wei = weights(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), co, ci, dw ? k : 1,
                     dw, o0, dw ? 3 : 1);
    r->bia = bias(co, o0);
    CK(dnnl_memory_create(&r->src, smd, eng, DNNL_MEMORY_NONE));
    CK(dnnl_memory_create(&r->dst, dmd, eng, DNNL_MEMORY_NONE));
    return r;
}
static void run(prim *p) {
    dnnl_memory_set_data_handle(p->src, p->sp);
    dnnl_memory_set_data_handle(p->dst, p->dp);
    dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, p->src},
                            {DNNL_ARG_WEIGHTS, p->wei},
                            {DNNL_ARG_BIAS, p->bia},
                            {DNNL_ARG_DST, p->dst}};
    dnnl_primitive_execute(p->p, st, 4, a);
}
static size_t tsize(int C, int H, int W) {
    int Cp = TAG == dnnl_nhwc ? C : (C + 15) / 16 * 16;
    return (size_t)Cp * H * W * 4;
}
static void *zalloc(size_t n) {
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    memset(p, 0, n);
    return p;
}

typedef struct {
    prim **p;
    int n;
} sched;
static void add(sched *s, prim *p) {
    s->p = realloc(s->p, (s->n + 1) * sizeof *s->p);
    s->p[s->n++] = p;
}
static void run_sched1(sched *s) {
    for (int i = 0; i < s->n; i++)
        run(s->p[i]);
}
/* SPLIT=1: variant i runs its two halves on two OpenMP threads, each
 * primitive single-threaded inside the parallel region (the halves share
 * the halo row of the intermediate: both write the same values). */
static sched half[32][2];
static int split[32];
static sched v[32];
static void run_sched(sched *s) { run_sched1(s); }
static void run_var(int i) {
    if (split[i]) {
#pragma omp parallel for num_threads(2)
        for (int h = 0; h < 2; h++)
            run_sched1(&half[i][h]);
        return;
    }
    run_sched1(&v[i]);
}

/* Banded schedule of OB depthwise output rows per band. */
static sched part[2][32]; /* [0]: the 1x1s, [1]: the depthwise convs of a schedule */
static int npart;
static sched banded(int ci, int co, int H, int k, int s, int OB, int perblk, char *x, char *y,
                    char *z, int oa, int ob) {
    sched S = {0};
    sched *P = part[0] + npart, *D = part[1] + npart;
    npart++;
    int W = H, p = k / 2, OH = (H + 2 * p - k) / s + 1, OW = OH;
    int done = oa * s - k / 2 > 0 ? oa * s - k / 2 : 0; /* intermediate rows computed */
    int nblk = perblk ? (co + 15) / 16 : 1, cb = perblk ? 16 : co;
    char name[64];
    for (int o0 = oa; o0 < ob; o0 += OB) {
        int o1 = o0 + OB < ob ? o0 + OB : ob;
        int need = (o1 - 1) * s - p + k; /* exclusive end of input rows */
        if (need > H) need = H;
        if (need > done) {
            int rows = need - done;
            dnnl_memory_desc_t smd = view_md(ci, H, W, rows);
            for (int b = 0; b < nblk; b++) {
                dnnl_memory_desc_t dmd = view_md(cb, H, W, rows);
                snprintf(name, sizeof name, "1x1 rows %d+%d blk %d", done, rows, b);
                prim *q = mk(&smd, &dmd, ci, cb, 1, 1, 0, 0, 0, b * 16, name);
                q->sp = x + done * row_bytes(ci, W);
                q->dp = y + b * cblk_bytes(H, W) + done * row_bytes(co, W);
                add(&S, q);
                add(P, q);
            }
            done = need;
        }
        int i0 = o0 * s - p, pt = 0;
        if (i0 < 0) pt = -i0, i0 = 0;
        int i1 = need; /* exclusive */
        int pb = (o1 - o0 - 1) * s + k - (i1 - i0) - pt;
        if (pb < 0) pb = 0;
        for (int b = 0; b < nblk; b++) {
            dnnl_memory_desc_t smd = view_md(cb, H, W, i1 - i0);
            dnnl_memory_desc_t dmd = view_md(cb, OH, OW, o1 - o0);
            snprintf(name, sizeof name, "dw in %d+%d out %d+%d blk %d", i0, i1 - i0, o0, o1 - o0,
                     b);
            prim *q = mk(&smd, &dmd, cb, cb, k, s, pt, pb, 1, b * 16, name);
            q->sp = y + b * cblk_bytes(H, W) + i0 * row_bytes(co, W);
            q->dp = z + b * cblk_bytes(OH, OW) + o0 * row_bytes(co, OW);
            add(&S, q);
            add(D, q);
        }
    }
    return S;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s C_IN C_OUT H K S [blk|nhwc] [ITERS] [BAND...]\n", argv[0]);
        return 2;
    }
    int ci = atoi(argv[1]), co = atoi(argv[2]), H = atoi(argv[3]), k = atoi(argv[4]),
        s = atoi(argv[5]);
    TAG = argc > 6 && !strcmp(argv[6], "nhwc") ? dnnl_nhwc : dnnl_aBcd16b;
    int iters = argc > 7 ? atoi(argv[7]) : 200;
    int bands[16], nb = 0;
    for (int i = 8; i < argc && nb < 16; i++)
        bands[nb++] = atoi(argv[i]);
    if (!nb) bands[nb++] = 4, bands[nb++] = 8, bands[nb++] = 14;
    int W = H, p = k / 2, OH = (H + 2 * p - k) / s + 1;
    CK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    CK(dnnl_stream_create(&st, eng, dnnl_stream_default_flags));
    char *x = zalloc(tsize(ci, H, W)), *y = zalloc(tsize(co, H, W)), *z = zalloc(tsize(co, OH, OH)),
         *zb = zalloc(tsize(co, OH, OH));
    float *xf = (float *)x;
    for (size_t i = 0; i < tsize(ci, H, W) / 4; i++)
        xf[i] = (float)((i * 7919) % 13) / 13.f - 0.4f;
    if (TAG != dnnl_nhwc && ci % 16) {
        /* zero the padded channels of the blocked input */
        for (size_t i = 0; i < tsize(ci, H, W) / 4; i++)
            if ((int)((i / ((size_t)H * W * 16)) * 16 + i % 16) >= ci) xf[i] = 0;
    }
    printf("%d->%d %dx%d, dw %dx%d s%d, %s, relu, batch 1\n", ci, co, H, W, k, k, s,
           TAG == dnnl_nhwc ? "nhwc" : "nChw16c");
    /* whole pair */
    sched whole = {0};
    {
        dnnl_memory_desc_t a = view_md(ci, H, W, H), b = view_md(co, H, W, H),
                           c = view_md(co, OH, OH, OH);
        prim *q = mk(&a, &b, ci, co, 1, 1, 0, 0, 0, 0, "whole 1x1");
        q->sp = x, q->dp = y;
        add(&whole, q);
        int pb = (OH - 1) * s + k - H - p;
        q = mk(&b, &c, co, co, k, s, p, pb < 0 ? 0 : pb, 1, 0, "whole dw");
        q->sp = y, q->dp = z;
        add(&whole, q);
    }
    int nv = 0;

    char vname[32][32];
    for (int i = 0; i < nb; i++)
        for (int pbk = TAG != dnnl_nhwc && !getenv("STRIDED"); pbk < (TAG == dnnl_nhwc ? 1 : 2);
             pbk++) {
            verbose_impl = 0;
            printf(" band %d out rows, %s (ref impls listed):\n", bands[i],
                   pbk ? "perblk" : "strided");
            v[nv] = banded(ci, co, H, k, s, bands[i], pbk, x, y, zb, 0, OH);
            if (getenv("SPLIT")) { /* two halves of the output rows, one per thread */
                half[nv][0] = banded(ci, co, H, k, s, bands[i], pbk, x, y, zb, 0, OH / 2);
                half[nv][1] = banded(ci, co, H, k, s, bands[i], pbk, x, y, zb, OH / 2, OH);
                split[nv] = 1;
            }
            /* show the impls of the first band's primitives */
            snprintf(vname[nv], 32, "band%d%s", bands[i], pbk ? "-perblk" : "");
            nv++;
        }
    /* one pass of each to show impls and check results */
    run_sched(&whole);
    dnnl_stream_wait(st);
    size_t nz = tsize(co, OH, OH) / 4;
    for (int i = 0; i < nv; i++) {
        memset(zb, 0, nz * 4);
        run_var(i);
        double md = 0;
        for (size_t j = 0; j < nz; j++)
            md = fmax(md, fabs(((float *)z)[j] - ((float *)zb)[j]));
        printf(" %-16s %3d primitive runs, max |diff| vs whole %.3g\n", vname[i], v[i].n, md);
    }
    for (int w = 0; w < 10; w++) {
        run_sched(&whole);
        for (int i = 0; i < nv; i++)
            run_var(i);
    }
    double tw = 0, tv[32] = {0}, tp[2][32] = {{0}}, twp[2] = {0};
    int R = 10;
    for (int r = 0; r < R; r++) {
        double t0 = now();
        for (int it = 0; it < iters; it++)
            run_sched(&whole);
        tw += now() - t0;
        if (getenv("PARTS"))
            for (int j = 0; j < 2; j++) {
                t0 = now();
                for (int it = 0; it < iters; it++)
                    run(whole.p[j]);
                twp[j] += now() - t0;
                for (int i = 0; i < nv; i++) {
                    t0 = now();
                    for (int it = 0; it < iters; it++)
                        run_sched(&part[j][i]);
                    tp[j][i] += now() - t0;
                }
            }
        for (int i = 0; i < nv; i++) {
            t0 = now();
            for (int it = 0; it < iters; it++)
                run_var(i);
            tv[i] += now() - t0;
        }
    }
    double kk = 1e6 / (R * (double)iters);
    printf(" whole pair       %8.1f us", tw * kk);
    if (getenv("PARTS")) printf("  (1x1 %.1f, dw %.1f)", twp[0] * kk, twp[1] * kk);
    printf("\n");
    for (int i = 0; i < nv; i++) {
        printf(" %-16s %8.1f us  ratio %.3f", vname[i], tv[i] * kk, tv[i] / tw);
        if (getenv("PARTS"))
            printf("  (1x1s alone %.1f, dws alone %.1f)", tp[0][i] * kk, tp[1][i] * kk);
        printf("\n");
    }
    return 0;
}
