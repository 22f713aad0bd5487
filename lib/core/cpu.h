/*
 * cpu.h — run-time CPU feature detection, so kernels are chosen for the
 * machine they run on (never assumed at build time). MOPT_ISA=portable|avx2|
 * avx512 in the environment caps what is reported, to test slower paths;
 * MOPT_AMX=0 turns off the library's own AMX kernels (amx_kernels).
 */
#ifndef MOPT_CORE_CPU_H
#define MOPT_CORE_CPU_H

#include <stdbool.h>

typedef struct cpu_features {
    bool avx2, fma, f16c;
    bool avx512f, avx512bw, avx512vl, avx512dq;
    bool avx512_bf16, avx512_vnni, avx_vnni;
    bool amd; /* vendor AuthenticAMD (a tuning rule, never a feature test) */
    /* AMX tiles with bf16, enabled by the OS (XCR0 tile state) and granted
     * to this process (Linux: arch_prctl ARCH_REQ_XCOMP_PERM, requested at
     * detection); MOPT_ISA=avx2|portable clears it */
    bool amx_bf16;
    /* Whether the library's own AMX kernels run (the fused attention's
     * cpu-amx, the GEMM's cpu-amx-bf16): amx_bf16 with AVX512-BF16, unless MOPT_AMX=0 in the
     * environment (then the AVX512-BF16 kernels run instead: A/B and tests;
     * oneDNN and the bf16 rule below still see amx_bf16) */
    bool amx_kernels;
    /* Whether bf16 products beat f32 ones here, so that precision=bf16 runs
     * bf16 kernels: AMX, or AVX512-BF16 on AMD (Zen 4 and later: vdpbf16ps
     * does twice the multiply-adds of an f32 FMA in the same time). On an
     * Intel core without AMX vdpbf16ps issues on one port where f32 FMAs use
     * two, so bf16 is no faster than f32 and the conversions make it slower
     * (BERT-like encoder, Xeon model 207: bf16 1.5x FP32; OpenVINO's bf16
     * the same). MOPT_BF16_COMPUTE=1 (0) in the environment forces it on
     * (off) where AVX512-BF16 exists. */
    bool bf16_compute;
    char isa[16]; /* best tier: "avx512", "avx2" or "portable" */
} cpu_features;

/* Detected once (thread-safe); never NULL. */
const cpu_features *cpu_get(void);

#endif
