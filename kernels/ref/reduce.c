/*
 * reduce.c — portable reference kernels for the "reduce" op family
 * (declared in ref_reduce.h). Each output element walks its reduced
 * sub-space with a counter; f32 accumulates in double. Obvious and correct;
 * the oracle for faster backends. Never sees the IR.
 */
#include <math.h>
#include <stdint.h>

#include "kernels/ref/ref_reduce.h"

/* The input split into kept axes (the output) and reduced axes, with
 * element strides; adjacent reduced axes that are contiguous are merged. */
typedef struct red_view {
    int32_t nk, nr;
    int64_t kd[REF_REDUCE_MAX_RANK], ks[REF_REDUCE_MAX_RANK];
    int64_t rd[REF_REDUCE_MAX_RANK], rs[REF_REDUCE_MAX_RANK];
    int64_t n_out, n_red;
} red_view;

static void red_split(int32_t rank, const int64_t *dims, const uint8_t *mask, red_view *v) {
    int64_t st[REF_REDUCE_MAX_RANK], s = 1;
    for (int32_t a = rank - 1; a >= 0; a--) {
        st[a] = s;
        s *= dims[a];
    }
    v->nk = v->nr = 0;
    v->n_out = v->n_red = 1;
    for (int32_t a = 0; a < rank; a++) {
        if (mask[a]) {
            v->n_red *= dims[a];
            if (dims[a] == 1) continue;
            if (v->nr > 0 && v->rs[v->nr - 1] == st[a] * dims[a]) {
                v->rd[v->nr - 1] *= dims[a];
                v->rs[v->nr - 1] = st[a];
            } else {
                v->rd[v->nr] = dims[a];
                v->rs[v->nr] = st[a];
                v->nr++;
            }
        } else {
            v->n_out *= dims[a];
            v->kd[v->nk] = dims[a];
            v->ks[v->nk] = st[a];
            v->nk++;
        }
    }
}

/* Runs BODY for every element offset OFF of the reduced sub-space at BASE. */
#define FOR_REDUCED(v, base, OFF, BODY)                                                            \
    do {                                                                                           \
        int64_t c_[REF_REDUCE_MAX_RANK] = {0};                                                     \
        int64_t OFF = (base);                                                                      \
        for (int64_t r_ = 0; r_ < (v)->n_red; r_++) {                                              \
            BODY;                                                                                  \
            for (int32_t a_ = (v)->nr - 1; a_ >= 0; a_--) {                                        \
                OFF += (v)->rs[a_];                                                                \
                if (++c_[a_] < (v)->rd[a_]) break;                                                 \
                OFF -= (v)->rs[a_] * (v)->rd[a_];                                                  \
                c_[a_] = 0;                                                                        \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* Advances the output counter and base offset. */
static void next_out(const red_view *v, int64_t *cnt, int64_t *base) {
    for (int32_t a = v->nk - 1; a >= 0; a--) {
        *base += v->ks[a];
        if (++cnt[a] < v->kd[a]) return;
        *base -= v->ks[a] * v->kd[a];
        cnt[a] = 0;
    }
}

void ref_reduce_f32(ref_reduce_op op, const float *x, float *y, int32_t rank, const int64_t *dims,
                    const uint8_t *mask) {
    red_view v;
    red_split(rank, dims, mask, &v);
    int64_t cnt[REF_REDUCE_MAX_RANK] = {0}, base = 0;
    for (int64_t o = 0; o < v.n_out; o++) {
        double acc = 0.0;
        switch (op) {
        case REF_REDUCE_SUM: FOR_REDUCED(&v, base, off, acc += x[off]); break;
        case REF_REDUCE_MEAN:
            FOR_REDUCED(&v, base, off, acc += x[off]);
            acc = v.n_red ? acc / (double)v.n_red : NAN;
            break;
        case REF_REDUCE_MAX:
            acc = -INFINITY;
            FOR_REDUCED(&v, base, off, {
                double t = x[off];
                if (t > acc || t != t) acc = t;
            });
            break;
        case REF_REDUCE_MIN:
            acc = INFINITY;
            FOR_REDUCED(&v, base, off, {
                double t = x[off];
                if (t < acc || t != t) acc = t;
            });
            break;
        case REF_REDUCE_PROD:
            acc = 1.0;
            FOR_REDUCED(&v, base, off, acc *= x[off]);
            break;
        case REF_REDUCE_L1: FOR_REDUCED(&v, base, off, acc += fabs((double)x[off])); break;
        case REF_REDUCE_L2:
            FOR_REDUCED(&v, base, off, acc += (double)x[off] * x[off]);
            acc = sqrt(acc);
            break;
        case REF_REDUCE_SUM_SQUARE:
            FOR_REDUCED(&v, base, off, acc += (double)x[off] * x[off]);
            break;
        case REF_REDUCE_LOG_SUM:
            FOR_REDUCED(&v, base, off, acc += x[off]);
            acc = log(acc);
            break;
        case REF_REDUCE_LOG_SUM_EXP: {
            double m = -INFINITY;
            FOR_REDUCED(&v, base, off, {
                double t = x[off];
                if (t > m || t != t) m = t;
            });
            if (isinf(m) || isnan(m)) {
                acc = m;
            } else {
                FOR_REDUCED(&v, base, off, acc += exp((double)x[off] - m));
                acc = m + log(acc);
            }
            break;
        }
        }
        y[o] = (float)acc;
        next_out(&v, cnt, &base);
    }
}

/* Integer reductions in wrapping unsigned arithmetic (no signed overflow). */
#define DEFINE_REDUCE_INT(NAME, T, UT, TMIN, TMAX)                                                 \
    void NAME(ref_reduce_op op, const T *x, T *y, int32_t rank, const int64_t *dims,               \
              const uint8_t *mask) {                                                               \
        red_view v;                                                                                \
        red_split(rank, dims, mask, &v);                                                           \
        int64_t cnt[REF_REDUCE_MAX_RANK] = {0}, base = 0;                                          \
        for (int64_t o = 0; o < v.n_out; o++) {                                                    \
            UT acc = 0;                                                                            \
            T m;                                                                                   \
            switch (op) {                                                                          \
            case REF_REDUCE_SUM: FOR_REDUCED(&v, base, off, acc += (UT)x[off]); break;             \
            case REF_REDUCE_SUM_SQUARE:                                                            \
                FOR_REDUCED(&v, base, off, acc += (UT)x[off] * (UT)x[off]);                        \
                break;                                                                             \
            case REF_REDUCE_L1:                                                                    \
                FOR_REDUCED(&v, base, off, acc += x[off] < 0 ? (UT)0 - (UT)x[off] : (UT)x[off]);   \
                break;                                                                             \
            case REF_REDUCE_PROD:                                                                  \
                acc = 1;                                                                           \
                FOR_REDUCED(&v, base, off, acc *= (UT)x[off]);                                     \
                break;                                                                             \
            case REF_REDUCE_MAX:                                                                   \
                m = TMIN;                                                                          \
                FOR_REDUCED(&v, base, off, if (x[off] > m) m = x[off]);                            \
                acc = (UT)m;                                                                       \
                break;                                                                             \
            case REF_REDUCE_MIN:                                                                   \
                m = TMAX;                                                                          \
                FOR_REDUCED(&v, base, off, if (x[off] < m) m = x[off]);                            \
                acc = (UT)m;                                                                       \
                break;                                                                             \
            default: return;                                                                       \
            }                                                                                      \
            y[o] = (T)acc;                                                                         \
            next_out(&v, cnt, &base);                                                              \
        }                                                                                          \
    }

DEFINE_REDUCE_INT(ref_reduce_i64, int64_t, uint64_t, INT64_MIN, INT64_MAX)
DEFINE_REDUCE_INT(ref_reduce_i32, int32_t, uint32_t, INT32_MIN, INT32_MAX)

#define DEFINE_ARGREDUCE(NAME, T, ISNAN)                                                           \
    void NAME(const T *x, int64_t *y, int64_t outer, int64_t n, int64_t inner, int is_max,         \
              int select_last) {                                                                   \
        for (int64_t o = 0; o < outer; o++) {                                                      \
            for (int64_t i = 0; i < inner; i++) {                                                  \
                const T *p = x + o * n * inner + i;                                                \
                int64_t best_i = 0;                                                                \
                T best = p[0];                                                                     \
                for (int64_t j = 1; j < n && !ISNAN(best); j++) {                                  \
                    T t = p[j * inner];                                                            \
                    int better;                                                                    \
                    if (ISNAN(t))                                                                  \
                        better = 1;                                                                \
                    else if (is_max)                                                               \
                        better = select_last ? t >= best : t > best;                               \
                    else                                                                           \
                        better = select_last ? t <= best : t < best;                               \
                    if (better) {                                                                  \
                        best = t;                                                                  \
                        best_i = j;                                                                \
                    }                                                                              \
                }                                                                                  \
                y[o * inner + i] = best_i;                                                         \
            }                                                                                      \
        }                                                                                          \
    }

#define NOT_NAN(t) 0
#define F_ISNAN(t) ((t) != (t))
DEFINE_ARGREDUCE(ref_argreduce_f32, float, F_ISNAN)
DEFINE_ARGREDUCE(ref_argreduce_i64, int64_t, NOT_NAN)
DEFINE_ARGREDUCE(ref_argreduce_i32, int32_t, NOT_NAN)

void ref_hardmax(int64_t outer, int64_t len, int64_t inner, const float *x, float *y) {
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *row = x + o * len * inner + i;
            int64_t best = 0;
            for (int64_t j = 1; j < len; j++)
                if (row[j * inner] > row[best * inner]) best = j;
            for (int64_t j = 0; j < len; j++)
                y[(o * len + j) * inner + i] = j == best ? 1.0f : 0.0f;
        }
}
