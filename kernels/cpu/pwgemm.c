/*
 * pwgemm.c — the ISA-free parts of the pointwise-conv GEMM (pwgemm.h): the
 * weight packing (run once at model build) and the work split; the tiles
 * are pwgemm-avx512.c.
 */
#include "kernels/cpu/pwgemm.h"

bool cpu_pw_act_ok(kn_act act) {
    return act == KN_ACT_NONE || act == KN_ACT_RELU || act == KN_ACT_LEAKY_RELU ||
           act == KN_ACT_CLIP || act == KN_ACT_HARD_SWISH || act == KN_ACT_HARD_SIGMOID;
}

size_t cpu_pw_packed_floats(int64_t K, int64_t N) { return (size_t)(K * ((N + 15) / 16 * 16)); }

void cpu_pw_pack(const float *w, int64_t K, int64_t N, int nr, float *wp) {
    for (int64_t n0 = 0; n0 < N; n0 += nr) {
        const int64_t width = N - n0 >= nr ? nr : (N - n0 + 15) / 16 * 16;
        float *panel = wp + n0 * K;
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < width; j++)
                panel[k * width + j] = n0 + j < N ? w[(n0 + j) * K + k] : 0.f;
    }
}

int64_t cpu_pw_units(const cpu_pw_plan *p, int64_t batch) {
    const int64_t panels = (p->N + p->nr - 1) / p->nr, tiles = (p->hw + p->mr - 1) / p->mr;
    return batch * panels * tiles;
}
