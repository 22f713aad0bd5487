/*
 * time_load.c — measures mopt_model_load: the median and minimum wall time
 * of N loads of each MODEL (an .onnx is loaded and optimized; a .mopt is
 * mapped), with the option verify_weights set as given. A measurement aid
 * for the .mopt format (docs/mopt_format.md), not part of the build:
 *   cc -O2 -Iinclude scripts/time_load.c -Lbuild -lmopt -Wl,-rpath,$PWD/build -o /tmp/time_load
 *   /tmp/time_load [-n N] [-v 0|1] MODEL...
 */
#include <mopt/mopt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int n = 20, verify = -1, first = 1;
    while (first < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "-n") == 0 && first + 1 < argc)
            n = atoi(argv[++first]);
        else if (strcmp(argv[first], "-v") == 0 && first + 1 < argc)
            verify = atoi(argv[++first]);
        first++;
    }
    if (n < 1 || n > 10000 || first >= argc) {
        fprintf(stderr, "usage: time_load [-n N] [-v 0|1] MODEL...\n");
        return 2;
    }
    mopt_options *o = NULL;
    if (mopt_options_create(&o) || mopt_options_set_int(o, "threads", 1)) return 1;
    if (verify >= 0 && mopt_options_set_int(o, "verify_weights", verify)) return 1;
    double *t = malloc((size_t)n * sizeof *t);
    if (!t) return 1;
    for (int a = first; a < argc; a++) {
        size_t nodes = 0;
        for (int i = 0; i < n; i++) {
            mopt_model *m = NULL;
            double t0 = now_ms();
            mopt_status st = mopt_model_load(argv[a], o, &m);
            t[i] = now_ms() - t0;
            if (st) {
                fprintf(stderr, "%s: %s: %s\n", argv[a], mopt_status_string(st), mopt_last_error());
                return 1;
            }
            nodes = mopt_model_node_count(m);
            mopt_model_destroy(m);
        }
        qsort(t, (size_t)n, sizeof *t, cmp_d);
        printf("%-48s nodes %5zu  load median %9.3f ms  min %9.3f ms  (n=%d, verify_weights=%s)\n",
               argv[a], nodes, t[n / 2], t[0], n,
               verify < 0 ? "default"
               : verify   ? "1"
                          : "0");
    }
    free(t);
    mopt_options_destroy(o);
    return 0;
}
