/*
 * elementwise_cpu.c — the "cpu" backend for the elementwise family: binary
 * Add/Sub/Mul/Div/Max/Min (and Pow by a constant 2) on f32 with any numpy broadcast (axes
 * collapsed, then an outer loop over contiguous inner runs whose operands are each contiguous or a
 * broadcast scalar; the per-channel pattern [N,C,H,W] op [N|1,C,1,1] as rows against one scalar
 * each), and the f32 activations and math of kernels/cpu (Relu ... Reciprocal, Gelu, Clip). Big
 * tensors are split over ctx->threads. Also the tier check shared by every *_cpu.c family.
 */
#include <math.h>
#include <string.h>

#include "core/cpu.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/elementwise.h"

mopt_status ops_cpu_prepare(const char *isa, void **state) {
    const cpu_kernels *k = cpu_kernels_for(isa);
    if (!k) return MOPT_ERR_UNSUPPORTED;
    *state = (void *)(uintptr_t)k;
    return MOPT_OK;
}

bool ops_cpu_has_vnni(void) { return cpu_kernels_for("avx512") && cpu_get()->avx512_vnni; }

const char *ops_cpu_variant_vnni(const void *state) {
    return state ? "cpu-vnni-packed" : "cpu-vnni";
}

const char *ops_cpu_variant_portable(const void *state) {
    return state ? "cpu-portable-packed" : "cpu-portable";
}

/* Elements per thread below which splitting does not pay. */
#define GRAIN_CHEAP 32768
#define GRAIN_MATH 8192

/* ---- binary ------------------------------------------------------------- */

/* The kernels/cpu op of a node's params; false when not covered. */
static bool bin_op_of(const op_ctx *ctx, cpu_binop *op) {
    const ew_binary_params *p = ctx->params;
    switch (p->op) {
    case REF_BIN_ADD: *op = CPU_BIN_ADD; break;
    case REF_BIN_SUB: *op = CPU_BIN_SUB; break;
    case REF_BIN_MUL: *op = CPU_BIN_MUL; break;
    case REF_BIN_DIV: *op = CPU_BIN_DIV; break;
    case REF_BIN_MAX: *op = CPU_BIN_MAX; break;
    case REF_BIN_MIN: *op = CPU_BIN_MIN; break;
    case REF_BIN_POW: *op = CPU_BIN_MUL; break; /* only as x*x: pow_is_square */
    default: return false;
    }
    return p->kind != EW_BIN_MEAN;
}

/* Pow whose exponent is a constant single f32 of exactly 2 (power spectra,
 * variances) runs as x*x: powf(x, 2) is the correctly rounded square, so the
 * result is the same. Any other Pow stays with the reference kernel. */
static bool pow_is_square(const op_tensor *e) {
    int64_t n = 1;
    for (int32_t i = 0; i < e->shape.rank; i++)
        n *= e->shape.dims[i];
    return e->dtype == MOPT_DTYPE_F32 && e->data && n == 1 && *(const float *)e->data == 2.0f;
}

static bool binary_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            int n_out) {
    cpu_binop op;
    const ew_binary_params *p = ctx->params;
    return bin_op_of(ctx, &op) && n_in == 2 && in[0].dtype == MOPT_DTYPE_F32 &&
           in[1].dtype == MOPT_DTYPE_F32 && (p->op != REF_BIN_POW || pow_is_square(&in[1]));
}

/* The broadcast collapsed: axes of size 1 dropped, neighbours merged when
 * both operands walk them as one; the last axis is the inner run. */
typedef struct bin_job {
    const cpu_kernels *k;
    cpu_binop op;
    int32_t rank;
    int64_t dims[IR_MAX_RANK], sa[IR_MAX_RANK], sb[IR_MAX_RANK];
    const float *a, *b;
    float *y;
} bin_job;

static int64_t bin_plan(bin_job *j, const ir_shape *ys, const int64_t *sa, const int64_t *sb) {
    int64_t numel = 1;
    int32_t r = 0;
    for (int32_t i = 0; i < ys->rank; i++) {
        numel *= ys->dims[i];
        if (ys->dims[i] == 1) continue;
        if (r > 0 && j->sa[r - 1] == sa[i] * ys->dims[i] && j->sb[r - 1] == sb[i] * ys->dims[i]) {
            j->dims[r - 1] *= ys->dims[i];
            j->sa[r - 1] = sa[i];
            j->sb[r - 1] = sb[i];
        } else {
            j->dims[r] = ys->dims[i];
            j->sa[r] = sa[i];
            j->sb[r] = sb[i];
            r++;
        }
    }
    if (r == 0) {
        j->dims[0] = 1;
        j->sa[0] = j->sb[0] = 0;
        r = 1;
    }
    j->rank = r;
    return numel;
}

/* Rows [lo, hi) of the collapsed [outer, inner] view. */
static void bin_rows(void *arg, int64_t lo, int64_t hi) {
    const bin_job *j = arg;
    const int32_t last = j->rank - 1;
    const int64_t inner = j->dims[last];
    int64_t idx[IR_MAX_RANK] = {0}, oa = 0, ob = 0, rem = lo;
    for (int32_t d = last - 1; d >= 0; d--) {
        idx[d] = rem % j->dims[d];
        rem /= j->dims[d];
        oa += idx[d] * j->sa[d];
        ob += idx[d] * j->sb[d];
    }
    for (int64_t o = lo; o < hi; o++) {
        j->k->binary_f32(j->op, j->a + oa, j->sa[last], j->b + ob, j->sb[last], j->y + o * inner,
                         inner);
        for (int32_t d = last - 1; d >= 0; d--) {
            oa += j->sa[d];
            ob += j->sb[d];
            if (++idx[d] < j->dims[d]) break;
            oa -= j->sa[d] * j->dims[d];
            ob -= j->sb[d] * j->dims[d];
            idx[d] = 0;
        }
    }
}

/* The per-channel broadcast: the last two collapsed axes are [C, L], one
 * operand walks them as contiguous rows (strides L, 1), the other as one
 * scalar per row (strides 1, 0); axes before are walked per block of C
 * rows. Rows [lo, hi) of the [blocks * C, L] view. */
static void bin_rowscalar(void *arg, int64_t lo, int64_t hi) {
    const bin_job *j = arg;
    const int32_t last = j->rank - 1, ch = last - 1;
    const int64_t len = j->dims[last], C = j->dims[ch];
    const bool row_a = j->sa[last] == 1;
    const int64_t *srow = row_a ? j->sa : j->sb, *ssc = row_a ? j->sb : j->sa;
    const float *xrow = row_a ? j->a : j->b, *xsc = row_a ? j->b : j->a;
    for (int64_t o = lo; o < hi;) {
        int64_t blk = o / C, c0 = o % C, n = C - c0 < hi - o ? C - c0 : hi - o;
        int64_t orow = c0 * srow[ch], osc = c0 * ssc[ch], rem = blk;
        for (int32_t d = ch - 1; d >= 0; d--) {
            int64_t i = rem % j->dims[d];
            rem /= j->dims[d];
            orow += i * srow[d];
            osc += i * ssc[d];
        }
        j->k->binary_rows_f32(j->op, xrow + orow, xsc + osc, j->y + o * len, n, len, row_a);
        o += n;
    }
}

/* Is the collapsed broadcast the per-channel pattern of bin_rowscalar? */
static bool bin_is_rowscalar(const bin_job *j) {
    if (j->rank < 2) return false;
    const int32_t last = j->rank - 1, ch = last - 1;
    const int64_t len = j->dims[last];
    bool a_rows = j->sa[last] == 1 && j->sa[ch] == len && j->sb[last] == 0 && j->sb[ch] == 1;
    bool b_rows = j->sb[last] == 1 && j->sb[ch] == len && j->sa[last] == 0 && j->sa[ch] == 1;
    return a_rows || b_rows;
}

/* Elements [lo, hi) of a single row (outer == 1). */
static void bin_span(void *arg, int64_t lo, int64_t hi) {
    const bin_job *j = arg;
    j->k->binary_f32(j->op, j->a + lo * j->sa[0], j->sa[0], j->b + lo * j->sb[0], j->sb[0],
                     j->y + lo, hi - lo);
}

static mopt_status binary_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    bin_job j;
    memset(&j, 0, sizeof j);
    j.k = ctx->state;
    if (!bin_op_of(ctx, &j.op) || n_in != 2)
        return op_fail(ctx, MOPT_ERR_INTERNAL, "not a binary op of kernels/cpu");
    const ir_shape *ys = &out[0].shape;
    int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK];
    const bool square = ((const ew_binary_params *)ctx->params)->op == REF_BIN_POW;
    if (square && !pow_is_square(&in[1]))
        return op_fail(ctx, MOPT_ERR_INTERNAL, "Pow on kernels/cpu needs the exponent 2");
    op_broadcast_strides(&in[0].shape, ys, sa);
    op_broadcast_strides(square ? &in[0].shape : &in[1].shape, ys, sb);
    int64_t numel = bin_plan(&j, ys, sa, sb);
    if (numel == 0) return MOPT_OK;
    j.a = in[0].data;
    j.b = square ? in[0].data : in[1].data;
    j.y = out[0].data;
    const int64_t inner = j.dims[j.rank - 1];
    if (inner == numel) {
        cpu_parallel_for(ctx->threads, numel, GRAIN_CHEAP, bin_span, &j);
    } else {
        int64_t grain = GRAIN_CHEAP / inner;
        cpu_parallel_for(ctx->threads, numel / inner, grain,
                         bin_is_rowscalar(&j) ? bin_rowscalar : bin_rows, &j);
    }
    return MOPT_OK;
}

OPS_CPU_IMPLS(binary)

/* ---- unary and Clip ----------------------------------------------------- */

typedef struct un_job {
    const cpu_kernels *k;
    cpu_unop op;
    cpu_unary_params p;
    const float *x;
    float *y;
} un_job;

/* The kernel op for a node, and its parameters; false when not covered. */
static bool un_resolve(const op_ctx *ctx, const op_tensor *in, int n_in, cpu_unop *op,
                       cpu_unary_params *p) {
    const ew_unary_params *up = ctx->params;
    if (up->clip) {
        *op = CPU_UN_CLIP;
        p->alpha = -INFINITY;
        p->beta = INFINITY;
        if (ctx->opset < 11) {
            if (up->has_lo) p->alpha = up->lo;
            if (up->has_hi) p->beta = up->hi;
        } else {
            /* bounds are f32 scalars (inference checked); read at run time */
            for (int k = 1; k < n_in && k < 3; k++) {
                if (in[k].dtype == MOPT_DTYPE_UNDEFINED) continue;
                if (in[k].dtype != MOPT_DTYPE_F32) return false;
                if (!ctx->runtime) continue;
                if (!in[k].data || op_numel(&in[k]) != 1) return false;
                float v = *(const float *)in[k].data;
                if (k == 1)
                    p->alpha = v;
                else
                    p->beta = v;
            }
        }
        return true;
    }
    switch (up->op) {
    case REF_UN_RELU: *op = CPU_UN_RELU; break;
    case REF_UN_LEAKY_RELU: *op = CPU_UN_LEAKY_RELU; break;
    case REF_UN_SIGMOID: *op = CPU_UN_SIGMOID; break;
    case REF_UN_TANH: *op = CPU_UN_TANH; break;
    case REF_UN_ERF: *op = CPU_UN_ERF; break;
    case REF_UN_GELU: *op = CPU_UN_GELU; break;
    case REF_UN_GELU_TANH: *op = CPU_UN_GELU_TANH; break;
    case REF_UN_EXP: *op = CPU_UN_EXP; break;
    case REF_UN_HARD_SWISH: *op = CPU_UN_HARD_SWISH; break;
    case REF_UN_HARD_SIGMOID: *op = CPU_UN_HARD_SIGMOID; break;
    case REF_UN_SQRT: *op = CPU_UN_SQRT; break;
    case REF_UN_NEG: *op = CPU_UN_NEG; break;
    case REF_UN_ABS: *op = CPU_UN_ABS; break;
    case REF_UN_RECIPROCAL: *op = CPU_UN_RECIPROCAL; break;
    default: return false;
    }
    /* the attributes, or the op's defaults (alpha of LeakyRelu, alpha and
     * beta of HardSigmoid; 0 elsewhere) */
    p->alpha = up->p.alpha;
    p->beta = up->p.beta;
    return true;
}

static bool unary_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                           int n_out) {
    cpu_unop op;
    cpu_unary_params p;
    return n_in >= 1 && in[0].dtype == MOPT_DTYPE_F32 && un_resolve(ctx, in, n_in, &op, &p);
}

static void un_span(void *arg, int64_t lo, int64_t hi) {
    const un_job *j = arg;
    j->k->unary_f32(j->op, j->x + lo, j->y + lo, hi - lo, &j->p);
}

static mopt_status unary_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    un_job j;
    j.k = ctx->state;
    if (!un_resolve(ctx, in, n_in, &j.op, &j.p)) return MOPT_ERR_UNSUPPORTED;
    j.x = in[0].data;
    j.y = out[0].data;
    const bool cheap = j.op == CPU_UN_RELU || j.op == CPU_UN_LEAKY_RELU || j.op == CPU_UN_CLIP ||
                       j.op == CPU_UN_NEG || j.op == CPU_UN_ABS;
    cpu_parallel_for(ctx->threads, op_numel(&in[0]), cheap ? GRAIN_CHEAP : GRAIN_MATH, un_span, &j);
    return MOPT_OK;
}

OPS_CPU_IMPLS(unary)
