/*
 * movement_cpu.c — the "cpu" backend for Transpose. Axes of size 1 are
 * dropped and axes that stay neighbours are merged; then
 *  - a permutation that keeps the last (merged) axis last, e.g. [B,S,H,D] ->
 *    [B,H,S,D], copies contiguous runs (any element size);
 *  - batch axes in place and the last two swapped, e.g. [B,S,H,D] ->
 *    [B,H,D,S], is a batched 2-D blocked transpose (4-byte elements);
 * anything else goes to the reference run.
 * Also Pad in constant mode with pads >= 0: the trailing axes it leaves
 * alone are merged into one contiguous run per row (the reference walks
 * rows of the last axis, e.g. a row per pixel for NHWC data with C = 1),
 * then the rows are filled and copied, split over the first axis when it is
 * not padded.
 * And Slice on 4-byte elements: axes merged where the source is contiguous,
 * then rows of the last axis copied (memcpy at step 1, a strided loop
 * otherwise, e.g. YOLOX's Focus slices with step 2), rows over threads.
 */
#include <string.h>

#include "kernels/ref/ref_movement.h"
#include "ops/cpu/ops_cpu.h"

#define GRAIN 32768 /* elements per thread */

typedef enum tr_kind { TR_COPY, TR_RUNS, TR_SWAP2, TR_OTHER } tr_kind;

typedef struct tr_plan {
    int32_t rank;
    int64_t dims[IR_MAX_RANK]; /* merged input dims */
    int32_t perm[IR_MAX_RANK]; /* merged permutation */
} tr_plan;

/* Drops size-1 axes (when dims are known) and merges output neighbours
 * that are input neighbours; dims may be NULL (load time: the perm alone). */
static tr_kind tr_classify(int32_t rank, const int64_t *dims, const int32_t *perm, tr_plan *pl) {
    int32_t keep[IR_MAX_RANK], map[IR_MAX_RANK], q[IR_MAX_RANK], m = 0, n = 0;
    for (int32_t a = 0; a < rank; a++) {
        map[a] = -1;
        if (dims && dims[a] == 1) continue;
        map[a] = n;
        keep[n++] = a;
    }
    for (int32_t i = 0; i < rank; i++)
        if (map[perm[i]] >= 0) q[m++] = map[perm[i]];
    /* groups of output positions whose input axes follow each other */
    int32_t gstart[IR_MAX_RANK], glen[IR_MAX_RANK], G = 0;
    for (int32_t i = 0; i < m; i++) {
        if (i > 0 && q[i] == q[i - 1] + 1) {
            glen[G - 1]++;
        } else {
            gstart[G] = q[i];
            glen[G++] = 1;
        }
    }
    pl->rank = G;
    for (int32_t g = 0; g < G; g++) {
        int32_t r = 0; /* the group's place in input order */
        for (int32_t h = 0; h < G; h++)
            r += gstart[h] < gstart[g];
        int64_t d = 1;
        for (int32_t a = gstart[g]; a < gstart[g] + glen[g]; a++)
            d *= dims ? dims[keep[a]] : 2;
        pl->perm[g] = r;
        pl->dims[r] = d;
    }
    if (G <= 1) return TR_COPY;
    if (pl->perm[G - 1] == G - 1) return TR_RUNS;
    for (int32_t i = 0; i < G - 2; i++)
        if (pl->perm[i] != i) return TR_OTHER;
    return pl->perm[G - 2] == G - 1 && pl->perm[G - 1] == G - 2 ? TR_SWAP2 : TR_OTHER;
}

static bool transpose_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                               const op_tensor *out, int n_out) {
    const ir_shape *x = &in[0].shape;
    size_t esz = mopt_dtype_size(in[0].dtype);
    int32_t perm[IR_MAX_RANK];
    tr_plan pl;
    if (esz == 0 || in[0].dtype == MOPT_DTYPE_STRING || x->rank < 0 ||
        ops_transpose_perm(ctx, x->rank, false, perm))
        return false;
    tr_kind kind = tr_classify(x->rank, NULL, perm, &pl);
    return kind == TR_COPY || kind == TR_RUNS || (kind == TR_SWAP2 && esz == 4);
}

typedef struct tr_job {
    const cpu_kernels *k;
    tr_plan pl;
    const char *x;
    char *y;
    size_t esz;
    int64_t rows, cols, nblk;                                /* TR_SWAP2 */
    int64_t run, src_st[IR_MAX_RANK], out_dims[IR_MAX_RANK]; /* TR_RUNS */
} tr_job;

#define TR_BLK 32

static void tr_swap2(void *arg, int64_t lo, int64_t hi) {
    const tr_job *j = arg;
    const int64_t mat = j->rows * j->cols;
    for (int64_t it = lo; it < hi; it++) {
        int64_t b = it / j->nblk, c0 = (it % j->nblk) * TR_BLK;
        int64_t c1 = c0 + TR_BLK < j->cols ? c0 + TR_BLK : j->cols;
        j->k->transpose_x32((const uint32_t *)(const void *)j->x + b * mat,
                            (uint32_t *)(void *)j->y + b * mat, j->rows, j->cols, c0, c1);
    }
}

/* Output runs [lo, hi): run o is output index o over the first R-1 dims. */
static void tr_runs(void *arg, int64_t lo, int64_t hi) {
    const tr_job *j = arg;
    const int32_t R = j->pl.rank - 1;
    int64_t idx[IR_MAX_RANK] = {0}, off = 0, rem = lo;
    for (int32_t d = R - 1; d >= 0; d--) {
        idx[d] = rem % j->out_dims[d];
        rem /= j->out_dims[d];
        off += idx[d] * j->src_st[d];
    }
    const size_t bytes = (size_t)j->run * j->esz;
    for (int64_t o = lo; o < hi; o++) {
        memcpy(j->y + (size_t)o * bytes, j->x + (size_t)off * j->esz, bytes);
        for (int32_t d = R - 1; d >= 0; d--) {
            off += j->src_st[d];
            if (++idx[d] < j->out_dims[d]) break;
            off -= j->src_st[d] * j->out_dims[d];
            idx[d] = 0;
        }
    }
}

static mopt_status transpose_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const ir_shape *x = &in[0].shape;
    int32_t perm[IR_MAX_RANK];
    tr_job j;
    memset(&j, 0, sizeof j);
    j.k = ctx->state;
    j.x = in[0].data;
    j.y = out[0].data;
    j.esz = mopt_dtype_size(in[0].dtype);
    int64_t numel = op_numel(&in[0]);
    if (ops_transpose_perm(ctx, x->rank, false, perm)) return MOPT_ERR_UNSUPPORTED;
    if (numel == 0) return MOPT_OK;
    tr_kind kind = tr_classify(x->rank, x->dims, perm, &j.pl);
    const int32_t R = j.pl.rank;
    switch (kind) {
    case TR_COPY: memcpy(j.y, j.x, (size_t)numel * j.esz); return MOPT_OK;
    case TR_SWAP2:
        if (j.esz != 4) break;
        j.rows = j.pl.dims[R - 2];
        j.cols = j.pl.dims[R - 1];
        j.nblk = (j.cols + TR_BLK - 1) / TR_BLK;
        cpu_parallel_for(ctx->threads, numel / (j.rows * j.cols) * j.nblk,
                         GRAIN / (TR_BLK * j.rows) + 1, tr_swap2, &j);
        return MOPT_OK;
    case TR_RUNS: {
        int64_t in_st[IR_MAX_RANK], s = 1;
        for (int32_t a = R - 1; a >= 0; a--) {
            in_st[a] = s;
            s *= j.pl.dims[a];
        }
        j.run = j.pl.dims[R - 1];
        for (int32_t i = 0; i < R - 1; i++) {
            j.out_dims[i] = j.pl.dims[j.pl.perm[i]];
            j.src_st[i] = in_st[j.pl.perm[i]];
        }
        cpu_parallel_for(ctx->threads, numel / j.run, GRAIN / j.run + 1, tr_runs, &j);
        return MOPT_OK;
    }
    case TR_OTHER: break;
    }
    return MOPT_ERR_UNSUPPORTED;
}

OPS_CPU_IMPLS(transpose)

/* ---- Pad (constant) --------------------------------------------------------- */

typedef struct pad_job {
    const char *x;
    char *y;
    size_t esz, x_step, y_step; /* bytes per slice of axis 0 */
    int32_t rank;               /* of a slice */
    int64_t in[IR_MAX_RANK], out[IR_MAX_RANK], begin[IR_MAX_RANK];
    const unsigned char *value;
} pad_job;

static void pad_slices(void *arg, int64_t lo, int64_t hi) {
    const pad_job *j = arg;
    for (int64_t i = lo; i < hi; i++)
        ref_pad(j->y + (size_t)i * j->y_step, j->x + (size_t)i * j->x_step, j->esz, j->rank, j->in,
                j->out, j->begin, REF_PAD_CONSTANT, j->value);
}

static bool pad_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    size_t esz = mopt_dtype_size(in[0].dtype);
    return esz > 0 && esz <= 8;
}

static mopt_status pad_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const ir_shape *x = &in[0].shape;
    int64_t begin[IR_MAX_RANK], end[IR_MAX_RANK];
    unsigned char value[16];
    mopt_status st = MOPT_OK;
    if (x->rank < 1 || !ops_pad_plan(ctx, in, n_in, begin, end, value, &st)) {
        mopt_clear_error();
        return MOPT_ERR_UNSUPPORTED;
    }
    int32_t last = -1;
    for (int32_t a = 0; a < x->rank; a++) {
        if (begin[a] < 0 || end[a] < 0) return MOPT_ERR_UNSUPPORTED;
        if (begin[a] || end[a]) last = a;
    }
    if (op_numel(&out[0]) == 0 || op_numel(&in[0]) == 0) return MOPT_ERR_UNSUPPORTED;
    pad_job j = {.x = in[0].data, .y = out[0].data, .esz = op_esize(&in[0]), .value = value};
    if (last < 0) {
        memcpy(j.y, j.x, (size_t)op_numel(&in[0]) * j.esz);
        return MOPT_OK;
    }
    int64_t inner = 1;
    for (int32_t a = last + 1; a < x->rank; a++)
        inner *= x->dims[a];
    /* axes [0, last], the trailing run merged into the last padded one;
     * an unpadded axis 0 (when another is padded) is split over threads */
    int32_t first = begin[0] == 0 && end[0] == 0 && last > 0 ? 1 : 0;
    int64_t slices = first ? x->dims[0] : 1;
    j.rank = last + 1 - first;
    for (int32_t a = first; a <= last; a++) {
        int64_t m = a == last ? inner : 1;
        j.in[a - first] = x->dims[a] * m;
        j.out[a - first] = out[0].shape.dims[a] * m;
        j.begin[a - first] = begin[a] * m;
    }
    j.x_step = (size_t)(op_numel(&in[0]) / slices) * j.esz;
    j.y_step = (size_t)(op_numel(&out[0]) / slices) * j.esz;
    int64_t per = op_numel(&out[0]) / slices;
    cpu_parallel_for(ctx->threads, slices, per >= GRAIN ? 1 : GRAIN / per, pad_slices, &j);
    return MOPT_OK;
}

OPS_CPU_IMPLS(pad)

/* ---- Slice (4-byte elements) --------------------------------------------- */

typedef struct slice_job {
    const uint32_t *x;
    uint32_t *y;
    int32_t rank;
    int64_t dims[IR_MAX_RANK], st[IR_MAX_RANK]; /* merged; the last is the row */
} slice_job;

static void slice_rows(void *arg, int64_t lo, int64_t hi) {
    const slice_job *j = arg;
    const int32_t last = j->rank - 1;
    const int64_t n = j->dims[last], s = j->st[last];
    int64_t idx[IR_MAX_RANK] = {0}, off = 0, rem = lo;
    for (int32_t d = last - 1; d >= 0; d--) {
        idx[d] = rem % j->dims[d];
        rem /= j->dims[d];
        off += idx[d] * j->st[d];
    }
    for (int64_t r = lo; r < hi; r++) {
        const uint32_t *src = j->x + off;
        uint32_t *dst = j->y + r * n;
        if (s == 1)
            memcpy(dst, src, (size_t)n * sizeof *dst);
        else if (s == 2)
            for (int64_t i = 0; i < n; i++)
                dst[i] = src[2 * i];
        else
            for (int64_t i = 0; i < n; i++)
                dst[i] = src[i * s];
        for (int32_t d = last - 1; d >= 0; d--) {
            off += j->st[d];
            if (++idx[d] < j->dims[d]) break;
            off -= j->st[d] * j->dims[d];
            idx[d] = 0;
        }
    }
}

static bool slice_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                           int n_out) {
    return mopt_dtype_size(in[0].dtype) == 4;
}

static mopt_status slice_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    int64_t off, st[IR_MAX_RANK];
    mopt_status s = MOPT_OK;
    if (in[0].shape.rank < 1 || op_numel(&out[0]) == 0 ||
        !ops_slice_plan(ctx, in, n_in, &off, st, &s)) {
        mopt_clear_error();
        return MOPT_ERR_UNSUPPORTED;
    }
    slice_job j = {.x = (const uint32_t *)in[0].data + off, .y = out[0].data};
    const ir_shape *y = &out[0].shape;
    /* drop unit axes, merge axes contiguous in the source */
    for (int32_t i = 0; i < y->rank; i++) {
        if (y->dims[i] == 1) continue;
        if (j.rank > 0 && j.st[j.rank - 1] == st[i] * y->dims[i]) {
            j.dims[j.rank - 1] *= y->dims[i];
            j.st[j.rank - 1] = st[i];
        } else {
            j.dims[j.rank] = y->dims[i];
            j.st[j.rank] = st[i];
            j.rank++;
        }
    }
    if (j.rank == 0) {
        j.dims[0] = j.st[0] = 1;
        j.rank = 1;
    }
    int64_t n = j.dims[j.rank - 1];
    cpu_parallel_for(ctx->threads, op_numel(&out[0]) / n, n >= GRAIN ? 1 : GRAIN / n, slice_rows,
                     &j);
    return MOPT_OK;
}

OPS_CPU_IMPLS(slice)
