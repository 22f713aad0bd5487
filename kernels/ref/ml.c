/*
 * ml.c — reference kernels of the "ml" op family (ref_ml.h).
 */
#include "kernels/ref/ref_ml.h"

#include <float.h>
#include <math.h>
#include <string.h>

int ref_binarizer(mopt_dtype t, const void *x, double threshold, void *y, int64_t n) {
    switch (t) {
    case MOPT_DTYPE_F32:
        for (int64_t i = 0; i < n; i++)
            ((float *)y)[i] = (double)((const float *)x)[i] > threshold ? 1.0f : 0.0f;
        return 0;
    case MOPT_DTYPE_F64:
        for (int64_t i = 0; i < n; i++)
            ((double *)y)[i] = ((const double *)x)[i] > threshold ? 1.0 : 0.0;
        return 0;
    case MOPT_DTYPE_I32:
        for (int64_t i = 0; i < n; i++)
            ((int32_t *)y)[i] = (double)((const int32_t *)x)[i] > threshold;
        return 0;
    case MOPT_DTYPE_I64:
        for (int64_t i = 0; i < n; i++)
            ((int64_t *)y)[i] = (double)((const int64_t *)x)[i] > threshold;
        return 0;
    default: return -1;
    }
}

static int64_t token(const void *x, int is64, int64_t i) {
    return is64 ? ((const int64_t *)x)[i] : ((const int32_t *)x)[i];
}

/* Do the n pool tokens at gram equal the tokens at base + s, s + d, ...? */
static int gram_at(const int64_t *gram, int64_t n, const void *x, int is64, int64_t base, int64_t s,
                   int64_t d) {
    for (int64_t t = 0; t < n; t++)
        if (token(x, is64, base + s + t * d) != gram[t]) return 0;
    return 1;
}

void ref_tfidf(const ref_tfidf_params *p, const void *x, int is64, int64_t rows, int64_t cols,
               float *y) {
    for (int64_t i = 0; i < rows * p->out_size; i++)
        y[i] = 0;
    for (int64_t r = 0; r < rows; r++) {
        float *yr = y + r * p->out_size;
        int64_t base = r * cols, first_n = p->min_n;
        for (int64_t d = 1; d <= p->max_skip + 1; d++) {
            for (int64_t s = 0; s < cols; s++) {
                if (s + d * (first_n - 1) >= cols) break;
                for (int64_t i = 0, g = 0; i < p->n_counts; i++) {
                    int64_t n = i + 1, end = i + 1 < p->n_counts ? p->counts[i + 1] : p->n_pool;
                    int64_t count = (end - p->counts[i]) / n;
                    if (n < first_n || n > p->max_n || s + d * (n - 1) >= cols) {
                        g += count;
                        continue;
                    }
                    for (int64_t j = 0; j < count; j++, g++)
                        if (gram_at(p->pool + p->counts[i] + j * n, n, x, is64, base, s, d))
                            yr[p->out_idx[g]] += 1;
                }
            }
            if (first_n == 1) first_n = 2; /* unigrams count once, not per skip */
            if (first_n > p->max_n) break;
        }
        for (int64_t c = 0; c < p->out_size; c++) {
            float w = p->weights ? p->weights[c] : 1.0f;
            if (p->mode == 1)
                yr[c] = yr[c] > 0 ? w : 0;
            else if (p->mode == 2)
                yr[c] *= w;
        }
    }
}

void ref_array_feature_extract(const void *x, int64_t rows, int64_t cols, const int64_t *idx,
                               int64_t n_idx, size_t esize, void *y) {
    const unsigned char *s = x;
    unsigned char *d = y;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < n_idx; k++)
            memcpy(d + (size_t)(r * n_idx + k) * esize, s + (size_t)(r * cols + idx[k]) * esize,
                   esize);
}

static int tree_true(const ref_tree_ens *p, int64_t i, double v) {
    if (isnan(v) && p->missing_true && p->missing_true[i]) return 1;
    double s = p->split[i];
    switch (p->mode[i]) {
    case 0: return v <= s;
    case 1: return v < s;
    case 2: return v >= s;
    case 3: return v > s;
    case 4: return v == s;
    case 5: return v != s;
    default:
        for (int64_t k = 0; k < p->mem_len[i]; k++)
            if (p->mem[p->mem_off[i] + k] == v) return 1;
        return 0;
    }
}

int ref_tree_ensemble(const ref_tree_ens *p, const double *x, int64_t rows, int64_t cols,
                      double *y) {
    double init = p->agg == 2 ? DBL_MAX : p->agg == 3 ? -DBL_MAX : 0.0;
    for (int64_t r = 0; r < rows; r++) {
        const double *xr = x + r * cols;
        double *yr = y + r * p->n_targets;
        for (int64_t t = 0; t < p->n_targets; t++)
            yr[t] = init;
        for (int64_t k = 0; k < p->n_roots; k++) {
            int64_t i = p->roots[k], leaf;
            if (p->t_leaf[i] && p->f_leaf[i] && p->t_id[i] == p->f_id[i]) {
                leaf = p->t_id[i]; /* a tree that is one leaf */
            } else {
                int64_t steps = 0;
                for (;;) {
                    if (++steps > p->n_nodes) return -1;
                    int go = tree_true(p, i, xr[p->feat[i]]);
                    int64_t next = go ? p->t_id[i] : p->f_id[i];
                    if (go ? p->t_leaf[i] : p->f_leaf[i]) {
                        leaf = next;
                        break;
                    }
                    i = next;
                }
            }
            double w = p->leaf_w[leaf];
            double *o = yr + p->leaf_target[leaf];
            switch (p->agg) {
            case 0: *o += w / (double)p->n_roots; break;
            case 1: *o += w; break;
            case 2: *o = w < *o ? w : *o; break;
            default: *o = w > *o ? w : *o; break;
            }
        }
    }
    return 0;
}
