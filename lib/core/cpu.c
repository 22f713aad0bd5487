/*
 * cpu.c — CPUID/XGETBV-based feature detection (x86-64), with the OS
 * support checks for AVX and AVX-512 state; other architectures report the
 * portable tier.
 */
#include "core/cpu.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static cpu_features g_cpu;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Linux hands out the AMX tile data state only on request (arch_prctl
 * ARCH_REQ_XCOMP_PERM = 0x1023 for XFEATURE_XTILEDATA = 18), once per
 * process, before any thread's first tile instruction (which would fault
 * otherwise); each thread then loads its own tile configuration. False:
 * not granted (old kernel, or not Linux), so no AMX. */
static bool amx_permit(void) {
#if defined(__linux__) && defined(SYS_arch_prctl)
    return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#else
    return false;
#endif
}

static unsigned long long xgetbv0(void) {
    unsigned int eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}

static void detect(void) {
    unsigned int a, b, c, d;
    cpu_features f;
    memset(&f, 0, sizeof f);
    if (__get_cpuid(0, &a, &b, &c, &d)) /* vendor string in EBX, EDX, ECX */
        f.amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u; /* "AuthenticAMD" */
    bool tiles_ok = false; /* XCR0 bits 17-18: the OS saves AMX tile state */
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
        bool ymm_ok = false, zmm_ok = false;
        if (osxsave) {
            unsigned long long x = xgetbv0();
            ymm_ok = (x & 0x6) == 0x6;
            zmm_ok = (x & 0xe6) == 0xe6;
            tiles_ok = (x & 0x60000) == 0x60000;
        }
        f.fma = ymm_ok && ((c >> 12) & 1);
        f.f16c = ymm_ok && ((c >> 29) & 1);
        if (avx && ymm_ok && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
            f.avx2 = (b >> 5) & 1;
            if (zmm_ok) {
                f.avx512f = (b >> 16) & 1;
                f.avx512dq = (b >> 17) & 1;
                f.avx512bw = (b >> 30) & 1;
                f.avx512vl = (b >> 31) & 1;
                f.avx512_vnni = (c >> 11) & 1;
            }
            f.amx_bf16 = tiles_ok && ((d >> 22) & 1);
            unsigned int a1, b1, c1, d1;
            if (__get_cpuid_count(7, 1, &a1, &b1, &c1, &d1)) {
                f.avx_vnni = (a1 >> 4) & 1;
                f.avx512_bf16 = zmm_ok && ((a1 >> 5) & 1);
            }
        }
    }
    const char *cap = getenv("MOPT_ISA");
    if (cap && strcmp(cap, "avx2") == 0) {
        f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.avx512_bf16 = f.avx512_vnni = false;
        f.amx_bf16 = false;
    } else if (cap && strcmp(cap, "portable") == 0) {
        bool amd = f.amd;
        memset(&f, 0, sizeof f);
        f.amd = amd;
    }
    if (f.amx_bf16 && !amx_permit()) f.amx_bf16 = false;
    f.bf16_compute = f.avx512_bf16 && (f.amx_bf16 || f.amd);
    const char *force = getenv("MOPT_BF16_COMPUTE");
    if (force && (strcmp(force, "1") == 0 || strcmp(force, "0") == 0))
        f.bf16_compute = f.avx512_bf16 && force[0] == '1';
    bool t512 = f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq;
    bool t2 = f.avx2 && f.fma;
    strcpy(f.isa, t512 ? "avx512" : t2 ? "avx2" : "portable");
    g_cpu = f;
}
#else
static void detect(void) { strcpy(g_cpu.isa, "portable"); }
#endif

const cpu_features *cpu_get(void) {
    pthread_once(&g_once, detect);
    return &g_cpu;
}
