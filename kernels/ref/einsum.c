/*
 * einsum.c — reference kernel of the "einsum" op family (ref_einsum.h).
 * Operands are contracted left to right: both sides are gathered (a strided
 * copy that also takes diagonals, broadcasts dims of 1 and sums the labels
 * no later step needs) into [batch, M, K] and [batch, K, N], then multiplied
 * by a batched GEMM into [batch, M, N]; a last gather orders (and sums) the
 * result into the output. Never sees the IR.
 */
#include "kernels/ref/ref_einsum.h"

#include <stdbool.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_matmul.h"

#define MAXL REF_EIN_LABELS
#define SIZE_LIMIT ((int64_t)1 << 62)

/* A strided view whose labels are all different. */
typedef struct view {
    int n;
    uint8_t lab[MAXL];
    int64_t dim[MAXL];
    int64_t str[MAXL]; /* elements */
    const void *data;
} view;

static int view_find(const view *v, uint8_t l) {
    for (int j = 0; j < v->n; j++)
        if (v->lab[j] == l) return j;
    return -1;
}

/* An operand as a view: a label repeated in it keeps one dim whose stride is
 * the sum of its strides (the diagonal). */
static void view_of(const ref_ein_operand *o, view *v) {
    int64_t st[MAXL], s = 1;
    for (int d = o->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= o->dims[d];
    }
    v->n = 0;
    v->data = o->data;
    for (int d = 0; d < o->rank; d++) {
        int j = view_find(v, o->labels[d]);
        if (j >= 0) {
            v->str[j] += st[d];
            continue;
        }
        v->lab[v->n] = o->labels[d];
        v->dim[v->n] = o->dims[d];
        v->str[v->n] = st[d];
        v->n++;
    }
}

/* The next index of idx[0..n) over dims dim (last axis fastest), *off
 * following it with strides str. */
static inline void odometer_next(int n, int64_t *idx, const int64_t *dim, const int64_t *str,
                                 int64_t *off) {
    for (int d = n - 1; d >= 0; d--) {
        *off += str[d];
        if (++idx[d] < dim[d]) break;
        *off -= str[d] * dim[d];
        idx[d] = 0;
    }
}

/* dst (contiguous, dims kdim[0..nk)) = v gathered in the order of keep[],
 * summed over v's labels that are not kept. A kept label that v lacks, or
 * has with size 1, broadcasts (stride 0). */
#define DEFINE_GATHER(NAME, T, ACC, OUT)                                                           \
    static void NAME(const T *src, int nk, const int64_t *kdim, const int64_t *ks, int ns,         \
                     const int64_t *sd, const int64_t *ss, T *dst) {                               \
        int64_t total = 1, nsum = 1;                                                               \
        for (int d = 0; d < nk; d++)                                                               \
            total *= kdim[d];                                                                      \
        for (int d = 0; d < ns; d++)                                                               \
            nsum *= sd[d];                                                                         \
        int64_t ki[MAXL] = {0}, si[MAXL], off = 0;                                                 \
        for (int64_t o = 0; o < total; o++) {                                                      \
            ACC acc = 0;                                                                           \
            int64_t soff = 0;                                                                      \
            memset(si, 0, sizeof(int64_t) * (size_t)ns);                                           \
            for (int64_t s = 0; s < nsum; s++) {                                                   \
                acc += (ACC)src[off + soff];                                                       \
                odometer_next(ns, si, sd, ss, &soff);                                              \
            }                                                                                      \
            dst[o] = OUT(acc);                                                                     \
            odometer_next(nk, ki, kdim, ks, &off);                                                 \
        }                                                                                          \
    }

#define AS_F32(x) ((float)(x))
#define AS_F64(x) (x)
#define AS_I32(x) ((int32_t)(uint32_t)(x))
#define AS_I64(x) ((int64_t)(x))
DEFINE_GATHER(gather_f32, float, double, AS_F32)
DEFINE_GATHER(gather_f64, double, double, AS_F64)
DEFINE_GATHER(gather_i32, int32_t, uint64_t, AS_I32)
DEFINE_GATHER(gather_i64, int64_t, uint64_t, AS_I64)

static void gather(ref_ein_type t, const view *v, int nk, const uint8_t *keep, const int64_t *kdim,
                   void *dst) {
    int64_t ks[MAXL], sd[MAXL], ss[MAXL];
    int ns = 0;
    for (int k = 0; k < nk; k++) {
        int j = view_find(v, keep[k]);
        ks[k] = j < 0 || (v->dim[j] == 1 && kdim[k] != 1) ? 0 : v->str[j];
    }
    for (int j = 0; j < v->n; j++) {
        bool kept = false;
        for (int k = 0; k < nk && !kept; k++)
            kept = keep[k] == v->lab[j];
        if (kept) continue;
        sd[ns] = v->dim[j];
        ss[ns] = v->str[j];
        ns++;
    }
    switch (t) {
    case REF_EIN_F32: gather_f32(v->data, nk, kdim, ks, ns, sd, ss, dst); break;
    case REF_EIN_F64: gather_f64(v->data, nk, kdim, ks, ns, sd, ss, dst); break;
    case REF_EIN_I32: gather_i32(v->data, nk, kdim, ks, ns, sd, ss, dst); break;
    case REF_EIN_I64: gather_i64(v->data, nk, kdim, ks, ns, sd, ss, dst); break;
    }
}

/* C[b] (M x N) = A[b] (M x K) * B[b] (K x N) for b < nb, integers wrapping. */
#define DEFINE_IGEMM(NAME, T, OUT)                                                                 \
    static void NAME(int64_t nb, int64_t M, int64_t N, int64_t K, const T *A, const T *B, T *C) {  \
        for (int64_t b = 0; b < nb; b++) {                                                         \
            const T *a = A + b * M * K, *bb = B + b * K * N;                                       \
            T *c = C + b * M * N;                                                                  \
            for (int64_t i = 0; i < M; i++) {                                                      \
                T *row = c + i * N;                                                                \
                for (int64_t j = 0; j < N; j++)                                                    \
                    row[j] = 0;                                                                    \
                for (int64_t k = 0; k < K; k++) {                                                  \
                    uint64_t x = (uint64_t)a[i * K + k];                                           \
                    const T *brow = bb + k * N;                                                    \
                    for (int64_t j = 0; j < N; j++)                                                \
                        row[j] = OUT((uint64_t)row[j] + x * (uint64_t)brow[j]);                    \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_IGEMM(igemm_i32, int32_t, AS_I32)
DEFINE_IGEMM(igemm_i64, int64_t, AS_I64)

static void bgemm(ref_ein_type t, int64_t nb, int64_t M, int64_t N, int64_t K, const void *A,
                  const void *B, void *C) {
    for (int64_t b = 0; b < nb && (t == REF_EIN_F32 || t == REF_EIN_F64); b++) {
        if (t == REF_EIN_F32)
            ref_gemm_f32(M, N, K, (const float *)A + b * M * K, K, false,
                         (const float *)B + b * K * N, N, false, (float *)C + b * M * N, N, 1.0f,
                         0.0f);
        else
            ref_gemm_f64(M, N, K, (const double *)A + b * M * K, K, false,
                         (const double *)B + b * K * N, N, false, (double *)C + b * M * N, N, 1.0,
                         0.0);
    }
    if (t == REF_EIN_I32) igemm_i32(nb, M, N, K, A, B, C);
    if (t == REF_EIN_I64) igemm_i64(nb, M, N, K, A, B, C);
}

/* a * b, or -1 past SIZE_LIMIT. */
static int64_t mul_lim(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return -1;
    if (b && a > SIZE_LIMIT / b) return -1;
    return a * b;
}

/* The size of a label seen with sizes a and b: equal, or 1 broadcasts. */
static int64_t combine(int64_t a, int64_t b) { return a == 1 ? b : a; }

int ref_einsum(ref_ein_type type, int n, const ref_ein_operand *ops, int out_rank,
               const uint8_t *out_labels, const int64_t *out_dims, void *out) {
    const size_t es = type == REF_EIN_F32 || type == REF_EIN_I32 ? 4 : 8;
    /* last[l]: the last step that needs label l (n: the output) */
    int last[MAXL];
    for (int l = 0; l < MAXL; l++)
        last[l] = -1;
    for (int k = 0; k < n; k++)
        for (int d = 0; d < ops[k].rank; d++)
            last[ops[k].labels[d]] = k;
    for (int d = 0; d < out_rank; d++)
        last[out_labels[d]] = n;

    view cur;
    view_of(&ops[0], &cur);
    void *owned = NULL;
    int rc = 0;
    for (int i = 1; i < n && rc == 0; i++) {
        view b;
        view_of(&ops[i], &b);
        /* C's labels: batch (in both, needed later), M (cur only), N (b
         * only); K: in both, needed no more */
        uint8_t ca[MAXL], cb[MAXL], cc[MAXL];
        int64_t da[MAXL], db[MAXL], dc[MAXL];
        uint8_t kl[MAXL], ml[MAXL], nl[MAXL];
        int64_t kd[MAXL], md[MAXL], nd[MAXL];
        int nbt = 0, nm = 0, nn = 0, nk = 0;
        int64_t Bt = 1, M = 1, N = 1, K = 1;
        for (int j = 0; j < cur.n; j++) {
            uint8_t l = cur.lab[j];
            int jb = view_find(&b, l);
            bool later = last[l] > i;
            if (jb >= 0) {
                int64_t s = combine(cur.dim[j], b.dim[jb]);
                if (later) {
                    cc[nbt] = l;
                    dc[nbt++] = s;
                    Bt = mul_lim(Bt, s);
                } else {
                    kl[nk] = l;
                    kd[nk++] = s;
                    K = mul_lim(K, s);
                }
            } else if (later) {
                ml[nm] = l;
                md[nm++] = cur.dim[j];
                M = mul_lim(M, cur.dim[j]);
            }
        }
        for (int j = 0; j < b.n; j++)
            if (view_find(&cur, b.lab[j]) < 0 && last[b.lab[j]] > i) {
                nl[nn] = b.lab[j];
                nd[nn++] = b.dim[j];
                N = mul_lim(N, b.dim[j]);
            }
        int64_t sa = mul_lim(mul_lim(Bt, M), K), sb = mul_lim(mul_lim(Bt, K), N),
                sc = mul_lim(mul_lim(Bt, M), N);
        if (sa < 0 || sb < 0 || sc < 0) {
            rc = -2;
            break;
        }
        /* A: [batch, M, K]; B: [batch, K, N]; C: [batch, M, N] */
        int na = 0, nbb = 0;
        for (int j = 0; j < nbt; j++) {
            ca[na] = cb[nbb] = cc[j];
            da[na++] = db[nbb++] = dc[j];
        }
        int ncc = nbt;
        for (int j = 0; j < nm; j++) {
            ca[na] = ml[j];
            da[na++] = md[j];
            cc[ncc] = ml[j];
            dc[ncc++] = md[j];
        }
        for (int j = 0; j < nk; j++) {
            ca[na] = cb[nbb] = kl[j];
            da[na++] = db[nbb++] = kd[j];
        }
        for (int j = 0; j < nn; j++) {
            cb[nbb] = nl[j];
            db[nbb++] = nd[j];
            cc[ncc] = nl[j];
            dc[ncc++] = nd[j];
        }
        void *A = mopt_malloc((size_t)sa * es + 1), *B = mopt_malloc((size_t)sb * es + 1);
        void *C = mopt_malloc((size_t)sc * es + 1);
        if (A && B && C) {
            gather(type, &cur, na, ca, da, A);
            gather(type, &b, nbb, cb, db, B);
            bgemm(type, Bt, M, N, K, A, B, C);
        } else {
            rc = -1;
        }
        mopt_free(A);
        mopt_free(B);
        mopt_free(owned);
        owned = C;
        /* cur becomes C, contiguous */
        cur.n = ncc;
        cur.data = C;
        int64_t s = 1;
        for (int j = ncc - 1; j >= 0; j--) {
            cur.lab[j] = cc[j];
            cur.dim[j] = dc[j];
            cur.str[j] = s;
            s *= dc[j];
        }
    }
    if (rc == 0) gather(type, &cur, out_rank, out_labels, out_dims, out);
    mopt_free(owned);
    return rc;
}
