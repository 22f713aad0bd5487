/*
 * prof.c — summing per-node profile entries over runs and grouping them by
 * op type (see prof.h).
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include "prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_prof_init(bench_prof *p) { memset(p, 0, sizeof *p); }

void bench_prof_free(bench_prof *p) {
    for (size_t i = 0; i < p->n; i++) {
        free(p->rows[i].node);
        free(p->rows[i].op);
        free(p->rows[i].kernel);
    }
    free(p->rows);
    memset(p, 0, sizeof *p);
}

static int row_is(const bench_prof_row *r, const char *node, const char *op) {
    return strcmp(r->node, node) == 0 && strcmp(r->op, op) == 0;
}

int bench_prof_add(bench_prof *p, size_t index, const char *node, const char *op,
                   const char *kernel, int64_t ns, int64_t flops) {
    char fallback[160];
    if (!op) op = "?";
    if (!node || !*node) {
        snprintf(fallback, sizeof fallback, "%s#%zu", op, index);
        node = fallback;
    }
    bench_prof_row *r = NULL;
    if (index < p->n && row_is(&p->rows[index], node, op)) r = &p->rows[index];
    for (size_t i = 0; !r && i < p->n; i++)
        if (row_is(&p->rows[i], node, op)) r = &p->rows[i];
    if (!r) {
        if (p->n == p->cap) {
            size_t ncap = p->cap ? p->cap * 2 : 64;
            bench_prof_row *nr = realloc(p->rows, ncap * sizeof *nr);
            if (!nr) return -1;
            p->rows = nr;
            p->cap = ncap;
        }
        r = &p->rows[p->n];
        memset(r, 0, sizeof *r);
        r->node = strdup(node);
        r->op = strdup(op);
        if (!r->node || !r->op) {
            free(r->node);
            free(r->op);
            return -1;
        }
        r->nodes = 1;
        p->n++;
    }
    if (kernel && (!r->kernel || strcmp(r->kernel, kernel) != 0)) {
        char *k = strdup(kernel);
        if (!k) return -1;
        free(r->kernel);
        r->kernel = k;
    }
    r->ns += ns > 0 ? ns : 0;
    r->flops += flops > 0 ? flops : 0;
    r->calls++;
    return 0;
}

void bench_prof_end_run(bench_prof *p) { p->runs++; }

int64_t bench_prof_total_ns(const bench_prof *p) {
    int64_t t = 0;
    for (size_t i = 0; i < p->n; i++)
        t += p->rows[i].ns;
    return t;
}

static int cmp_rows(const void *pa, const void *pb) {
    const bench_prof_row *a = pa, *b = pb;
    if (a->ns != b->ns) return a->ns < b->ns ? 1 : -1;
    int c = strcmp(a->op, b->op);
    if (c) return c;
    return strcmp(a->node ? a->node : "", b->node ? b->node : "");
}

int bench_prof_sorted_nodes(const bench_prof *p, bench_prof_row **rows, size_t *n) {
    *rows = NULL;
    *n = 0;
    if (!p->n) return 0;
    bench_prof_row *r = malloc(p->n * sizeof *r);
    if (!r) return -1;
    memcpy(r, p->rows, p->n * sizeof *r);
    qsort(r, p->n, sizeof *r, cmp_rows);
    *rows = r;
    *n = p->n;
    return 0;
}

int bench_prof_by_op(const bench_prof *p, bench_prof_row **rows, size_t *n) {
    *rows = NULL;
    *n = 0;
    if (!p->n) return 0;
    bench_prof_row *r = calloc(p->n, sizeof *r);
    if (!r) return -1;
    size_t m = 0;
    for (size_t i = 0; i < p->n; i++) {
        const bench_prof_row *s = &p->rows[i];
        size_t j = 0;
        while (j < m && strcmp(r[j].op, s->op) != 0)
            j++;
        if (j == m) {
            r[m].op = s->op;
            m++;
        }
        r[j].ns += s->ns;
        r[j].flops += s->flops;
        r[j].calls += s->calls;
        r[j].nodes++;
    }
    qsort(r, m, sizeof *r, cmp_rows);
    *rows = r;
    *n = m;
    return 0;
}

double bench_prof_gflops(const bench_prof_row *r) {
    if (r->flops <= 0 || r->ns <= 0) return 0.0;
    return (double)r->flops / (double)r->ns; /* flop/ns == GFLOP/s */
}
