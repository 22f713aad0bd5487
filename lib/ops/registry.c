/*
 * registry.c — the table of supported operators, assembled from the op
 * families. Lookup is by (op_type, domain); "ai.onnx" equals "".
 *
 * ops_find runs for every node of every load: it searches an index of all
 * ops sorted by op_type (ties in table order, so the first match in table
 * order still wins), built once per process under pthread_once.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

typedef const op_def *(*family_fn)(size_t *count);

static const family_fn k_families[] = {
    ops_family_elementwise,    /* lib/ops/elementwise.c */
    ops_family_logic,          /* lib/ops/logic.c */
    ops_family_matmul,         /* lib/ops/matmul.c */
    ops_family_conv,           /* lib/ops/conv.c */
    ops_family_pool,           /* lib/ops/pool.c */
    ops_family_normalization,  /* lib/ops/normalization.c */
    ops_family_reduce,         /* lib/ops/reduce.c */
    ops_family_shape,          /* lib/ops/shape.c */
    ops_family_movement,       /* lib/ops/movement.c */
    ops_family_fused,          /* lib/ops/fused.c */
    ops_family_kvcache,        /* lib/ops/kvcache.c */
    ops_family_attention,      /* lib/ops/attention.c */
    ops_family_bitwise,        /* lib/ops/bitwise.c */
    ops_family_attention_onnx, /* lib/ops/attention_onnx.c */
    ops_family_loss,           /* lib/ops/loss.c */
    ops_family_cumulative,     /* lib/ops/cumulative.c */
    ops_family_sort,           /* lib/ops/sort.c */
    ops_family_index,          /* lib/ops/index.c */
    ops_family_quant,          /* lib/ops/quant.c */
    ops_family_layout,         /* lib/ops/layout.c */
    ops_family_resize,         /* lib/ops/resize.c */
    ops_family_signal,         /* lib/ops/signal.c */
    ops_family_linalg,         /* lib/ops/linalg.c */
    ops_family_lrn,            /* lib/ops/lrn.c */
    ops_family_conv_transpose, /* lib/ops/conv_transpose.c */
    ops_family_recurrent,      /* lib/ops/recurrent.c */
    ops_family_einsum,         /* lib/ops/einsum.c */
    ops_family_detection,      /* lib/ops/detection.c */
    ops_family_unique,         /* lib/ops/unique.c */
    ops_family_fold,           /* lib/ops/fold.c */
    ops_family_crop,           /* lib/ops/crop.c */
    ops_family_grid,           /* lib/ops/grid.c */
    ops_family_spectral,       /* lib/ops/spectral.c */
    ops_family_conv_quant,     /* lib/ops/conv_quant.c */
    ops_family_qstatic,        /* lib/ops/qstatic.c */
    ops_family_deform_conv,    /* lib/ops/deform_conv.c */
    ops_family_control,        /* lib/ops/control.c */
    ops_family_rotary,         /* lib/ops/rotary.c */
    ops_family_state_space,    /* lib/ops/state_space.c */
    ops_family_ml,             /* lib/ops/ml.c */
    ops_family_flex_attention, /* lib/ops/flex_attention.c */
};

#define N_FAMILIES (sizeof k_families / sizeof k_families[0])

static int domain_is_default(const char *d) { return !d || !*d || strcmp(d, "ai.onnx") == 0; }

/* The first match in table order, scanning every family. */
static const op_def *find_linear(const char *op_type, const char *domain) {
    for (size_t f = 0; f < N_FAMILIES; f++) {
        size_t n = 0;
        const op_def *defs = k_families[f](&n);
        for (size_t i = 0; i < n; i++) {
            if (strcmp(defs[i].op_type, op_type) != 0) continue;
            if (domain_is_default(defs[i].domain) ? domain_is_default(domain)
                                                  : (domain && strcmp(defs[i].domain, domain) == 0))
                return &defs[i];
        }
    }
    return NULL;
}

/* Every op, sorted by op_type and then by table position (capacity fixed:
 * no allocation, so no budget or failure injection involved; a registry
 * outgrowing it makes ops_find scan instead). */
enum { INDEX_CAP = 2048 };
static struct index_row {
    const op_def *def;
    size_t pos;
} g_index[INDEX_CAP];
static size_t g_index_n;
static pthread_once_t g_index_once = PTHREAD_ONCE_INIT;

static int index_row_cmp(const void *a, const void *b) {
    const struct index_row *x = a, *y = b;
    int c = strcmp(x->def->op_type, y->def->op_type);
    if (c) return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void index_build(void) {
    size_t pos = 0;
    for (size_t f = 0; f < N_FAMILIES; f++) {
        size_t n = 0;
        const op_def *defs = k_families[f](&n);
        for (size_t i = 0; i < n; i++, pos++)
            if (pos < INDEX_CAP) g_index[pos] = (struct index_row){&defs[i], pos};
    }
    if (pos > INDEX_CAP) return; /* g_index_n stays 0: linear search */
    qsort(g_index, pos, sizeof g_index[0], index_row_cmp);
    g_index_n = pos;
}

const op_def *ops_find(const char *op_type, const char *domain) {
    pthread_once(&g_index_once, index_build);
    if (!g_index_n) return find_linear(op_type, domain);
    size_t lo = 0, hi = g_index_n; /* first row with op_type >= the one sought */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(g_index[mid].def->op_type, op_type) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < g_index_n && strcmp(g_index[lo].def->op_type, op_type) == 0; lo++) {
        const op_def *d = g_index[lo].def;
        if (domain_is_default(d->domain) ? domain_is_default(domain)
                                         : (domain && strcmp(d->domain, domain) == 0))
            return d;
    }
    return NULL;
}

size_t ops_count(void) {
    size_t total = 0;
    for (size_t f = 0; f < N_FAMILIES; f++) {
        size_t n = 0;
        k_families[f](&n);
        total += n;
    }
    return total;
}

const op_def *ops_at(size_t index) {
    for (size_t f = 0; f < N_FAMILIES; f++) {
        size_t n = 0;
        const op_def *defs = k_families[f](&n);
        if (index < n) return &defs[index];
        index -= n;
    }
    return NULL;
}
