/*
 * amxgemm.c — the portable half of the AMX bf16 GEMM (amxgemm.h): the
 * weight packing into the tile layout, the work units, the activations the
 * epilogue covers. No ISA flags here; the tiles are in amxgemm-amx.c.
 */
#include "kernels/cpu/amxgemm.h"

#include <string.h>

bool cpu_amx_act_ok(kn_act act) { return act >= KN_ACT_NONE && act < KN_ACT_COUNT; }

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

size_t cpu_amx_packed_elems(int64_t K, int64_t N) {
    return (size_t)round_up(K, CPU_AMX_KS) * (size_t)round_up(N, CPU_AMX_NR);
}

/* f32 -> bf16, nearest even; NaN stays a (quiet) NaN */
static uint16_t to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

void cpu_amx_pack(const float *b, int64_t K, int64_t N, bool trans, uint16_t *bp) {
    int64_t Kp = round_up(K, CPU_AMX_KS), Np = round_up(N, CPU_AMX_NR);
    for (int64_t p = 0; p < Np / CPU_AMX_NR; p++)
        for (int64_t s = 0; s < Kp / CPU_AMX_KS; s++)
            for (int h = 0; h < 2; h++) {
                uint16_t *t = bp + p * CPU_AMX_NR * Kp + s * 1024 + h * 512;
                for (int r = 0; r < 16; r++)
                    for (int j = 0; j < 16; j++)
                        for (int e = 0; e < 2; e++) {
                            int64_t k = s * CPU_AMX_KS + 2 * r + e, n = p * CPU_AMX_NR + 16 * h + j;
                            float v = k < K && n < N ? (trans ? b[n * K + k] : b[k * N + n]) : 0.f;
                            t[r * 32 + 2 * j + e] = to_bf16(v);
                        }
            }
}

int64_t cpu_amx_units(const cpu_amx_plan *p, int64_t M) {
    int64_t blocks = (M + p->mb - 1) / p->mb, panels = p->Np / CPU_AMX_NR;
    return blocks * ((panels + p->pg - 1) / p->pg);
}

size_t cpu_amx_scratch_bytes(const cpu_amx_plan *p) {
    return (size_t)p->mb * 32 * sizeof(float) + (size_t)p->mb * (size_t)p->Kp * sizeof(uint16_t);
}
