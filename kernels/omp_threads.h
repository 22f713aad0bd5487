/*
 * omp_threads.h — the OpenMP runtime calls the oneDNN and OpenBLAS backends
 * need to honour a session's thread count without changing the host's
 * settings. Declared here rather than through <omp.h> because the library
 * is built without -fopenmp (see meson.build: it links GNU libgomp, the
 * runtime both backends use).
 *
 * omp_set_num_threads() writes the calling thread's nthreads-var, which is
 * also what the host's own parallel regions on that thread read. So every
 * backend call brackets its work: mopt_omp_enter() sets the session's count
 * and returns the caller's, mopt_omp_leave() puts it back. No call into the
 * library returns with the host's OpenMP thread count changed (issue 14).
 */
#ifndef MOPT_KERNELS_OMP_THREADS_H
#define MOPT_KERNELS_OMP_THREADS_H

#include "kernels/cpu/cpu_meter.h"

void omp_set_num_threads(int n);
int omp_get_max_threads(void);

/* Sets the calling thread's OpenMP team size for the next parallel regions
 * to n (>= 1) and returns the previous value, to give to mopt_omp_leave.
 * The team's other n - 1 threads are counted in the calling thread's
 * cpu_meter (its mopt_threadpool, if any) until mopt_omp_leave. */
static inline int mopt_omp_enter(int n) {
    if (n < 1) n = 1;
    int old = omp_get_max_threads();
    if (old != n) omp_set_num_threads(n);
    if (n > 1) cpu_meter_add(cpu_meter_bound(), n - 1);
    return old;
}

/* Restores the value mopt_omp_enter returned (only when it differs, to keep
 * the call cheap); n is the count given to that mopt_omp_enter, whose team
 * leaves the meter. */
static inline void mopt_omp_leave(int old, int n) {
    if (n > 1) cpu_meter_add(cpu_meter_bound(), -(n - 1));
    if (old >= 1 && omp_get_max_threads() != old) omp_set_num_threads(old);
}

#endif
