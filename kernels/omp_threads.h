/*
 * omp_threads.h — the two OpenMP runtime calls the oneDNN and OpenBLAS
 * backends need to honour a session's thread count. Declared here rather
 * than through <omp.h> because the library is built without -fopenmp (see
 * meson.build: it links GNU libgomp, the runtime both backends use).
 */
#ifndef MOPT_KERNELS_OMP_THREADS_H
#define MOPT_KERNELS_OMP_THREADS_H

void omp_set_num_threads(int n);
int omp_get_max_threads(void);

/* Sets the calling thread's OpenMP team size for the next parallel regions
 * (only when it differs, to keep the call cheap). */
static inline void mopt_omp_threads(int n) {
    if (n < 1) n = 1;
    if (omp_get_max_threads() != n) omp_set_num_threads(n);
}

#endif
