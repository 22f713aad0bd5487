/*
 * unique.c — reference kernel of the "unique" op family (ref_unique.h): a
 * stable merge sort of the item indices, then one pass over equal runs.
 * Never sees the IR.
 */
#include "kernels/ref/ref_unique.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"

typedef struct items {
    ref_unique_kind kind;
    const void *x;
    int64_t outer, n, inner;
} items;

/* -1, 0 or 1: elements ai and bi of it->x, as T, compared (in cmp_elem). */
#define CMP_INT(T)                                                                                 \
    ((((const T *)it->x)[ai] > ((const T *)it->x)[bi]) -                                           \
     (((const T *)it->x)[ai] < ((const T *)it->x)[bi]))

static int cmp_float(double a, double b) {
    bool na = isnan(a), nb = isnan(b);
    if (na || nb) return (int)na - (int)nb;
    return (a > b) - (a < b);
}

/* Element j of item i. */
static int cmp_elem(const items *it, int64_t i, int64_t k, int64_t j) {
    int64_t o = j / (it->inner ? it->inner : 1), in = j % (it->inner ? it->inner : 1);
    int64_t ai = (o * it->n + i) * it->inner + in, bi = (o * it->n + k) * it->inner + in;
    switch (it->kind) {
    case REF_UNIQUE_F32: return cmp_float(((const float *)it->x)[ai], ((const float *)it->x)[bi]);
    case REF_UNIQUE_F64: return cmp_float(((const double *)it->x)[ai], ((const double *)it->x)[bi]);
    case REF_UNIQUE_I8: return CMP_INT(int8_t);
    case REF_UNIQUE_I16: return CMP_INT(int16_t);
    case REF_UNIQUE_I32: return CMP_INT(int32_t);
    case REF_UNIQUE_I64: return CMP_INT(int64_t);
    case REF_UNIQUE_U8: return CMP_INT(uint8_t);
    case REF_UNIQUE_U16: return CMP_INT(uint16_t);
    case REF_UNIQUE_U32: return CMP_INT(uint32_t);
    case REF_UNIQUE_U64: return CMP_INT(uint64_t);
    }
    return 0;
}

/* Items i and k compared lexicographically. */
static int cmp_items(const items *it, int64_t i, int64_t k) {
    int64_t len = it->outer * it->inner;
    for (int64_t j = 0; j < len; j++) {
        int c = cmp_elem(it, i, k, j);
        if (c) return c;
    }
    return 0;
}

/* Stable bottom-up merge sort of idx[0..n) by item; tmp has room for n. */
static void sort_items(const items *it, int64_t *idx, int64_t *tmp, int64_t n) {
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                tmp[o++] = cmp_items(it, idx[b], idx[a]) < 0 ? idx[b++] : idx[a++];
            while (a < mid)
                tmp[o++] = idx[a++];
            while (b < hi)
                tmp[o++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

int64_t ref_unique(ref_unique_kind kind, const void *x, int64_t outer, int64_t n, int64_t inner,
                   bool sorted, int64_t *first, int64_t *inverse, int64_t *counts) {
    const items it = {kind, x, outer, n, inner};
    size_t sz = (size_t)n * sizeof(int64_t) + 1;
    int64_t *idx = mopt_malloc(sz), *tmp = mopt_malloc(sz), *grp = mopt_malloc(sz);
    int64_t *gfirst = mopt_malloc(sz), *gcount = mopt_malloc(sz), *rank = mopt_malloc(sz);
    int64_t U = -1;
    if (!idx || !tmp || !grp || !gfirst || !gcount || !rank) goto done;
    for (int64_t i = 0; i < n; i++)
        idx[i] = i;
    sort_items(&it, idx, tmp, n);
    /* equal runs of the sorted order are the groups, in ascending order; the
     * sort is stable, so a run starts with its first occurrence */
    U = 0;
    for (int64_t j = 0; j < n; j++) {
        if (j == 0 || cmp_items(&it, idx[j - 1], idx[j]) != 0) {
            gfirst[U] = idx[j];
            gcount[U++] = 0;
        }
        gcount[U - 1]++;
        grp[idx[j]] = U - 1;
    }
    /* rank[g]: the group's place in the output */
    if (sorted) {
        for (int64_t g = 0; g < U; g++)
            rank[g] = g;
    } else {
        int64_t next = 0;
        for (int64_t i = 0; i < n; i++)
            if (gfirst[grp[i]] == i) rank[grp[i]] = next++;
    }
    for (int64_t g = 0; g < U; g++) {
        if (first) first[rank[g]] = gfirst[g];
        if (counts) counts[rank[g]] = gcount[g];
    }
    for (int64_t i = 0; inverse && i < n; i++)
        inverse[i] = rank[grp[i]];
done:
    mopt_free(idx);
    mopt_free(tmp);
    mopt_free(grp);
    mopt_free(gfirst);
    mopt_free(gcount);
    mopt_free(rank);
    return U;
}
