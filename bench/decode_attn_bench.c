/*
 * decode_attn_bench.c — times the decode attention kernel alone
 * (cpu_decode_attn_f32_<tier>, kernels/cpu/decode_attn-impl.h) on a decode
 * step's problem: one query row per head over T cached positions of
 * token-major K and V caches, per tier, with the caches hot (the same call
 * repeated) and cold-ish (EVICT bytes of other data swept between calls, as
 * a decoder's weights sweep them between two steps). Prints ns per key and
 * head. Run by hand, not a test. --tiles: the same over the caches as bf16
 * tiles (kv_cache_dtype=bf16; kernels.h kn_kvt_*), the tiers' tiles
 * kernels (bf16 widened) and the AVX512-BF16 one ("avx512bf16").
 *
 *   decode_attn_bench [--heads H] [--dim D] [--evict KB] [--reps N] [--tiles] [T ...]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/decode_attn_tiles.h"

#include "clock_bench.h"

int main(int argc, char **argv) {
    int64_t H = 4, D = 24, evict_kb = 1024, reps = 400;
    int64_t Ts[16];
    int nT = 0, tiles = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tiles") == 0)
            tiles = 1;
        else if (strcmp(argv[i], "--heads") == 0 && i + 1 < argc)
            H = atoll(argv[++i]);
        else if (strcmp(argv[i], "--dim") == 0 && i + 1 < argc)
            D = atoll(argv[++i]);
        else if (strcmp(argv[i], "--evict") == 0 && i + 1 < argc)
            evict_kb = atoll(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoll(argv[++i]);
        else if (nT < 16)
            Ts[nT++] = atoll(argv[i]);
    }
    if (nT == 0) Ts[nT++] = 31, Ts[nT++] = 271, Ts[nT++] = 527, Ts[nT++] = 1019;
    if (H < 1 || D < 1 || D > CPU_DECODE_ATTN_MAX_D || reps < 1) return 2;
    int64_t Tmax = 0;
    for (int i = 0; i < nT; i++)
        Tmax = Ts[i] > Tmax ? Ts[i] : Tmax;
    float *q = malloc((size_t)(H * D) * sizeof(float)),
          *y = malloc((size_t)(H * D) * sizeof(float));
    float *k = malloc((size_t)(Tmax * H * D) * sizeof(float));
    float *v = malloc((size_t)(Tmax * H * D) * sizeof(float));
    size_t ev_n = (size_t)evict_kb * 256;
    float *ev = malloc(ev_n * sizeof(float) + 1);
    uint8_t *keep = malloc((size_t)Tmax);
    srand(1);
    for (int64_t i = 0; i < H * D; i++)
        q[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    for (int64_t i = 0; i < Tmax * H * D; i++) {
        k[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        v[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    }
    for (size_t i = 0; i < ev_n; i++)
        ev[i] = 1.0f;
    memset(keep, 1, (size_t)Tmax);
    /* the same caches as bf16 tiles (truncated: the values do not matter) */
    const int64_t cap = (Tmax + 31) / 32 * 32;
    uint16_t *kb = calloc((size_t)kn_kvt_elems(cap, H, D), 2),
             *vb = calloc((size_t)kn_kvt_elems(cap, H, D), 2);
    for (int64_t tt = 0; tt < Tmax; tt++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t d = 0; d < D; d++) {
                uint32_t u;
                memcpy(&u, &k[(tt * H + h) * D + d], 4);
                kb[kn_kvt_k_index(H, D, tt, h, d)] = (uint16_t)(u >> 16);
                memcpy(&u, &v[(tt * H + h) * D + d], 4);
                vb[kn_kvt_v_index(H, D, tt, h, d)] = (uint16_t)(u >> 16);
            }
    static const char *tiers[] = {"avx512", "avx2", "portable", "avx512bf16"};
    int64_t *t = malloc((size_t)reps * sizeof *t);
    volatile float sink = 0;
    printf("H %lld, D %lld, evict %lld KB, %lld reps: ns per key and head (median)\n", (long long)H,
           (long long)D, (long long)evict_kb, (long long)reps);
    printf("| tier | mask | T | hot | swept |\n|---|---|---|---|---|\n");
    for (int ti = 0; ti < (tiles ? 4 : 3); ti++) {
        const cpu_kernels *kt = cpu_kernels_for(ti < 3 ? tiers[ti] : "avx512");
        if (!kt || (ti == 3 && !cpu_decode_attn_tiles_bf16_ok())) continue;
        cpu_decode_attn_fn fn = !tiles    ? kt->decode_attn_f32
                                : ti == 3 ? cpu_decode_attn_tiles_avx512bf16
                                          : kt->decode_attn_tiles;
        for (int mk = 0; mk < 2; mk++)
            for (int i = 0; i < nT; i++) {
                kn_decode_attn p = {.B = 1, .H = H, .M = 1, .T = Ts[i], .D = D, .Dv = D};
                p.q = q, p.k = k, p.v = v, p.y = y, p.scale = 0.2f, p.fill = -1e9f;
                if (mk) p.mask.keep = keep, p.mask.sk = 1;
                if (tiles) p.kt = kb, p.vt = vb;
                double res[2];
                for (int sweep = 0; sweep < 2; sweep++) {
                    for (int64_t r = 0; r < reps; r++) {
                        if (sweep) sink += bench_sweep(ev, ev_n);
                        int64_t t0 = bench_now_ns();
                        fn(&p, 0, H);
                        t[r] = bench_now_ns() - t0;
                    }
                    qsort(t, (size_t)reps, sizeof *t, bench_cmp_i64);
                    res[sweep] = (double)t[reps / 2] / (double)(Ts[i] * H);
                }
                printf("| %s | %s | %lld | %.2f | %.2f |\n", tiers[ti], mk ? "keep" : "none",
                       (long long)Ts[i], res[0], res[1]);
            }
    }
    if (sink < 0) printf("(sink %g)\n", (double)sink); /* the sweeps are not optimized out */
    free(q), free(y), free(k), free(v), free(ev), free(keep), free(t), free(kb), free(vb);
    return 0;
}
