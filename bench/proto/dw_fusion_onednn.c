/*
 * dw_fusion_onednn.c — times oneDNN's 1x1 conv with a fused 3x3 depthwise
 * post-op (dnnl_post_ops_append_dw) against the two separate primitives,
 * and prints the implementation oneDNN picks for each (issue 10;
 * bench/proto/dw_fusion_onednn.md). Not library code, not built by meson.
 *   gcc -O2 bench/proto/dw_fusion_onednn.c -ldnnl -o /tmp/dwf
 *   OMP_NUM_THREADS=1 /tmp/dwf N C_IN C_OUT H DW_STRIDE ACT [blk|nhwc] [ITERS]
 * ACT: 0 none, 1 relu, 2 hard-swish (after the 1x1 and after the dw).
 * Process CPU time: 5 rounds, each ITERS runs of the 1x1, of the dw, then
 * of the fused primitive.
 */
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto_onednn.h"
#define CK(x) PROTO_CHECK(x, return NULL)
static dnnl_engine_t eng;
static dnnl_stream_t st;
typedef struct {
    dnnl_primitive_t p;
    int nargs;
    dnnl_exec_arg_t args[8];
    const char *impl;
} prim;
static dnnl_memory_t mem(const dnnl_memory_desc_t *md) {
    dnnl_memory_t m;
    dnnl_memory_create(&m, md, eng, DNNL_MEMORY_ALLOCATE);
    void *h;
    dnnl_memory_get_data_handle(m, &h);
    size_t sz = dnnl_memory_desc_get_size(md);
    for (size_t i = 0; i < sz / 4; i++)
        ((float *)h)[i] = (float)((i * 7919) % 13) / 13.f - 0.4f;
    return m;
}
static void append_act(dnnl_post_ops_t po, int act) {
    if (act == 1)
        dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_relu, 0, 0);
    else if (act == 2)
        dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_hardswish, 1.f / 6, 0.5f);
}
static prim *mk(int N, int ci, int co, int H, int W, int kk, int s, int groups,
                dnnl_format_tag_t tag, int act, int dw, int dwstride, int dwact,
                dnnl_memory_t *srcm, dnnl_memory_t *dstm) {
    prim *r = calloc(1, sizeof *r);
    int p = kk / 2;
    int OH = (H + 2 * p - kk) / s + 1, OW = (W + 2 * p - kk) / s + 1;
    dnnl_dims_t sd = {N, ci, H, W}, dd = {N, co, OH, OW}, bd = {co};
    dnnl_memory_desc_t smd, wmd, bmd, dmd;
    CK(dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, tag));
    CK(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, groups > 1 ? tag : dnnl_format_tag_any));
    CK(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a));
    dnnl_convolution_desc_t cd;
    dnnl_dims_t st_ = {s, s}, pl = {p, p};
    if (groups > 1) {
        dnnl_dims_t wd = {groups, co / groups, ci / groups, kk, kk};
        CK(dnnl_memory_desc_init_by_tag(&wmd, 5, wd, dnnl_f32, dnnl_format_tag_any));
    } else {
        dnnl_dims_t wd = {co, ci, kk, kk};
        CK(dnnl_memory_desc_init_by_tag(&wmd, 4, wd, dnnl_f32, dnnl_format_tag_any));
    }
    CK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                          &smd, &wmd, &bmd, &dmd, st_, pl, pl));
    dnnl_primitive_attr_t at;
    dnnl_primitive_attr_create(&at);
    dnnl_primitive_attr_set_scratchpad_mode(at, dnnl_scratchpad_mode_library);
    dnnl_post_ops_t po;
    dnnl_post_ops_create(&po);
    append_act(po, act);
    if (dw) {
        CK(dnnl_post_ops_append_dw(po, dnnl_f32, dnnl_f32, dnnl_f32, 3, dwstride, 1, 0, 0, NULL));
        append_act(po, dwact);
    }
    dnnl_primitive_attr_set_post_ops(at, po);
    dnnl_primitive_desc_t pd;
    CK(dnnl_primitive_desc_create(&pd, &cd, at, eng, NULL));
    const char *impl;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    r->impl = impl;
    CK(dnnl_primitive_create(&r->p, pd));
    const dnnl_memory_desc_t *q;
    q = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    *srcm = srcm && *srcm ? *srcm : mem(q);
    r->args[r->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, *srcm};
    r->args[r->nargs++] = (dnnl_exec_arg_t){
        DNNL_ARG_WEIGHTS, mem(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0))};
    r->args[r->nargs++] = (dnnl_exec_arg_t){
        DNNL_ARG_BIAS, mem(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1))};
    q = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    *dstm = mem(q);
    r->args[r->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, *dstm};
    if (dw) {
        r->args[r->nargs++] = (dnnl_exec_arg_t){
            DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS,
            mem(dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md,
                                             DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS))};
        r->args[r->nargs++] = (dnnl_exec_arg_t){
            DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS,
            mem(dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md,
                                             DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS))};
    }
    return r;
}
static void run(prim *p) { dnnl_primitive_execute(p->p, st, p->nargs, p->args); }
int main(int argc, char **argv) {
    int N = atoi(argv[1]), ci = atoi(argv[2]), co = atoi(argv[3]), H = atoi(argv[4]),
        s = atoi(argv[5]), act = atoi(argv[6]);
    dnnl_format_tag_t tag = argc > 7 && !strcmp(argv[7], "nhwc") ? dnnl_nhwc : dnnl_aBcd16b;
    int iters = argc > 8 ? atoi(argv[8]) : 500;
    dnnl_engine_create(&eng, dnnl_cpu, 0);
    dnnl_stream_create(&st, eng, dnnl_stream_default_flags);
    dnnl_memory_t x = NULL, y1, y2, fx = NULL, fy;
    prim *a = mk(N, ci, co, H, H, 1, 1, 1, tag, act, 0, 0, 0, &x, &y1);
    prim *b = mk(N, co, co, H, H, 3, s, co, tag, act, 0, 0, 0, &y1, &y2);
    prim *f = mk(N, ci, co, H, H, 1, 1, 1, tag, act, 1, s, act, &fx, &fy);
    if (!a || !b || !f) return 1;
    printf("1x1: %s\ndw:  %s\nfused: %s\n", a->impl, b->impl, f->impl);
    for (int i = 0; i < 20; i++) {
        run(a);
        run(b);
        run(f);
    }
    double ta = 0, tb = 0, tf = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (int i = 0; i < iters; i++)
            run(a);
        double t1 = now();
        for (int i = 0; i < iters; i++)
            run(b);
        double t2 = now();
        for (int i = 0; i < iters; i++)
            run(f);
        double t3 = now();
        ta += t1 - t0;
        tb += t2 - t1;
        tf += t3 - t2;
    }
    double k = 1e6 / (5.0 * iters);
    printf("N=%d %d->%d %dx%d s%d act%d: 1x1 %.1f us + dw %.1f us = %.1f us; fused %.1f us; ratio "
           "%.3f\n",
           N, ci, co, H, H, s, act, ta * k, tb * k, (ta + tb) * k, tf * k, tf / (ta + tb));
    return 0;
}
