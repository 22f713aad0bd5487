/*
 * decode_attn_bench.c — times the decode attention kernel alone
 * (cpu_decode_attn_f32_<tier>, kernels/cpu/decode_attn-impl.h) on a decode
 * step's problem: one query row per head over T cached positions of
 * token-major K and V caches, per tier, with the caches hot (the same call
 * repeated) and cold-ish (EVICT bytes of other data swept between calls, as
 * a decoder's weights sweep them between two steps). Prints ns per key and
 * head. Run by hand, not a test.
 *
 *   decode_attn_bench [--heads H] [--dim D] [--evict KB] [--reps N] [T ...]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cpu/cpu_kernels.h"

#include "clock_bench.h"

int main(int argc, char **argv) {
    int64_t H = 4, D = 24, evict_kb = 1024, reps = 400;
    int64_t Ts[16];
    int nT = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--heads") == 0 && i + 1 < argc)
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
    static const char *tiers[] = {"avx512", "avx2", "portable"};
    int64_t *t = malloc((size_t)reps * sizeof *t);
    volatile float sink = 0;
    printf("H %lld, D %lld, evict %lld KB, %lld reps: ns per key and head (median)\n", (long long)H,
           (long long)D, (long long)evict_kb, (long long)reps);
    printf("| tier | mask | T | hot | swept |\n|---|---|---|---|---|\n");
    for (int ti = 0; ti < 3; ti++) {
        const cpu_kernels *kt = cpu_kernels_for(tiers[ti]);
        if (!kt) continue;
        for (int mk = 0; mk < 2; mk++)
            for (int i = 0; i < nT; i++) {
                kn_decode_attn p = {.B = 1, .H = H, .M = 1, .T = Ts[i], .D = D, .Dv = D};
                p.q = q, p.k = k, p.v = v, p.y = y, p.scale = 0.2f, p.fill = -1e9f;
                if (mk) p.mask.keep = keep, p.mask.sk = 1;
                double res[2];
                for (int sweep = 0; sweep < 2; sweep++) {
                    for (int64_t r = 0; r < reps; r++) {
                        if (sweep) sink += bench_sweep(ev, ev_n);
                        int64_t t0 = bench_now_ns();
                        kt->decode_attn_f32(&p, 0, H);
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
    free(q), free(y), free(k), free(v), free(ev), free(keep), free(t);
    return 0;
}
