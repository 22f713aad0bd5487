/*
 * kernels.c — the shared pieces of the kernel contract (kernels.h): the one
 * walk over the batch of a kn_gemm, which every GEMM provider that computes
 * one matrix product at a time (ref, openblas) uses.
 */
#include "kernels/kernels.h"

int64_t kn_gemm_count(const kn_gemm *g) {
    int64_t n = 1;
    for (int32_t i = 0; i < g->batch_rank; i++)
        n *= g->batch[i];
    return n;
}

void kn_gemm_each(const kn_gemm *g, kn_gemm_one_fn fn, void *arg) {
    int64_t n = kn_gemm_count(g);
    int64_t idx[MOPT_MAX_RANK] = {0};
    int64_t oa = 0, ob = 0, oc = 0;
    for (int64_t t = 0; t < n; t++) {
        fn(arg, g, oa, ob, oc);
        /* advance the batch index, odometer style */
        for (int32_t d = g->batch_rank - 1; d >= 0; d--) {
            oa += g->a_bs[d];
            ob += g->b_bs[d];
            oc += g->c_bs[d];
            if (++idx[d] < g->batch[d]) break;
            oa -= g->a_bs[d] * g->batch[d];
            ob -= g->b_bs[d] * g->batch[d];
            oc -= g->c_bs[d] * g->batch[d];
            idx[d] = 0;
        }
    }
}
