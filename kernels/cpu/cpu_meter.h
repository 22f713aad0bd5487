/*
 * cpu_meter.h — an instrumented count of the threads computing for one
 * mopt_threadpool (lib/runtime/threadpool.c), and the calling thread's
 * binding to it. The runtime binds a run's thread to its pool's meter; the
 * parallel regions started from that thread count themselves into it:
 * cpu_pool.c's workers while they run a chunk, an OpenMP region (oneDNN,
 * OpenBLAS, see omp_threads.h) at its team size for the call's duration.
 * The pool's tests read the peak to check that the budget really bounds
 * the threads at work.
 */
#ifndef MOPT_KERNELS_CPU_METER_H
#define MOPT_KERNELS_CPU_METER_H

#include <stdatomic.h>

typedef struct cpu_meter {
    atomic_int active; /* threads computing now */
    atomic_int peak;   /* most at once since the meter was zeroed */
} cpu_meter;

/* Adds k (may be negative) to m's active count and raises its peak. NULL m:
 * no-op. */
void cpu_meter_add(cpu_meter *m, int k);

/* The calling thread's meter (NULL: none), and setting it; returns the
 * previous binding so that nested runs can restore it. */
cpu_meter *cpu_meter_bound(void);
cpu_meter *cpu_meter_bind(cpu_meter *m);

#endif
