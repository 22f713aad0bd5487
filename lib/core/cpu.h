/*
 * cpu.h — run-time CPU feature detection, so kernels are chosen for the
 * machine they run on (never assumed at build time). MOPT_ISA=portable|avx2|
 * avx512 in the environment caps what is reported, to test slower paths.
 */
#ifndef MOPT_CORE_CPU_H
#define MOPT_CORE_CPU_H

#include <stdbool.h>

typedef struct cpu_features {
    bool avx2, fma, f16c;
    bool avx512f, avx512bw, avx512vl, avx512dq;
    bool avx512_bf16, avx512_vnni, avx_vnni;
    bool amd;     /* vendor AuthenticAMD (a tuning rule, never a feature test) */
    char isa[16]; /* best tier: "avx512", "avx2" or "portable" */
} cpu_features;

/* Detected once (thread-safe); never NULL. */
const cpu_features *cpu_get(void);

#endif
