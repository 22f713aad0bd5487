/*
 * einsum.c — the "einsum" op family: ONNX Einsum (opset 12 and 28) for any
 * equation: explicit or implicit output, ellipsis broadcasting (right
 * aligned, as numpy), repeated labels (diagonals), sums, any number of
 * operands (up to EIN_MAX_OPS). f32, f64, i32, i64 natively; f16/bf16
 * through the float bridge, narrower integers (and u64) through i64. The
 * equation is parsed once (einsum_parse); the math (gathers and batched
 * GEMMs) is kernels/ref/einsum.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernels/ref/ref_einsum.h"
#include "ops/bridge.h"
#include "ops/ops.h"

#define EIN_MAX_OPS 32
#define EIN_ELL 255                /* the ellipsis in a parsed term */
#define EIN_LETTERS 52             /* labels 0..25 'A'..'Z', 26..51 'a'..'z' (ASCII order) */
#define EIN_TERM (IR_MAX_RANK + 1) /* labels of a term, the ellipsis counting one */

typedef struct einsum_params {
    const char *equation; /* for messages (the node's attribute) */
    int n_terms;
    bool explicit_out;
    uint8_t len[EIN_MAX_OPS];
    uint8_t terms[EIN_MAX_OPS][EIN_TERM];
    uint8_t out_len;
    uint8_t out[EIN_TERM];
} einsum_params;

static char label_char(int l) { return (char)(l < 26 ? 'A' + l : 'a' + (l - 26)); }

/* Parses one term (spaces already removed) of [s, e). */
static mopt_status parse_term(const op_ctx *ctx, const char *eq, const char *s, const char *e,
                              const char *what, uint8_t *labels, uint8_t *len) {
    int n = 0, letters = 0;
    bool ell = false;
    while (s < e) {
        int l;
        if (*s >= 'A' && *s <= 'Z') {
            l = *s - 'A';
        } else if (*s >= 'a' && *s <= 'z') {
            l = 26 + (*s - 'a');
        } else if (*s == '.') {
            if (e - s < 3 || s[1] != '.' || s[2] != '.')
                return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                               "equation '%s': '.' must be part of an ellipsis '...' (%s)", eq,
                               what);
            if (ell)
                return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                               "equation '%s': %s has more than one ellipsis", eq, what);
            ell = true;
            labels[n++] = EIN_ELL;
            s += 3;
            continue;
        } else {
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "equation '%s': invalid character '%c' in %s (labels are letters)", eq,
                           *s, what);
        }
        if (++letters > IR_MAX_RANK)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "equation '%s': %s has more than %d labels",
                           eq, what, IR_MAX_RANK);
        labels[n++] = (uint8_t)l;
        s++;
    }
    *len = (uint8_t)n;
    return MOPT_OK;
}

static mopt_status einsum_parse(const op_ctx *ctx, void *params) {
    einsum_params *p = params;
    const ir_attr *a = ir_node_attr(ctx->node, "equation");
    if (!a || a->type != IR_ATTR_STRING)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute equation (a string) is required");
    const char *eq = a->s;
    p->equation = eq;
    if (strlen(eq) != a->s_len)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "equation contains a NUL character");
    /* the equation without spaces */
    char buf[256];
    size_t n = 0;
    for (const char *c = eq; *c; c++) {
        if (*c == ' ') continue;
        if (n + 1 >= sizeof buf)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "equation '%.64s...' is too long", eq);
        buf[n++] = *c;
    }
    buf[n] = 0;
    const char *arrow = strstr(buf, "->");
    const char *lhs_end = arrow ? arrow : buf + n;
    if (arrow && strstr(arrow + 2, "->"))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "equation '%s' has more than one '->'", eq);
    mopt_status st;
    int k = 0;
    for (const char *s = buf;; k++) {
        const char *e = s;
        while (e < lhs_end && *e != ',')
            e++;
        if (k >= EIN_MAX_OPS)
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "equation '%s' has more than %d operands", eq,
                           EIN_MAX_OPS);
        char what[32];
        snprintf(what, sizeof what, "term %d", k);
        if ((st = parse_term(ctx, eq, s, e, what, p->terms[k], &p->len[k]))) return st;
        if (e == lhs_end) break;
        s = e + 1;
    }
    p->n_terms = k + 1;
    if (p->n_terms != ctx->node->n_inputs)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "equation '%s' has %d input terms but the node has %d inputs", eq,
                       p->n_terms, (int)ctx->node->n_inputs);
    bool in_seen[EIN_LETTERS] = {false}, any_ell = false;
    for (k = 0; k < p->n_terms; k++)
        for (int j = 0; j < p->len[k]; j++) {
            if (p->terms[k][j] == EIN_ELL)
                any_ell = true;
            else
                in_seen[p->terms[k][j]] = true;
        }
    p->explicit_out = arrow != NULL;
    if (!arrow) return MOPT_OK;
    if ((st = parse_term(ctx, eq, arrow + 2, buf + n, "the output", p->out, &p->out_len)))
        return st;
    bool out_seen[EIN_LETTERS] = {false};
    for (int j = 0; j < p->out_len; j++) {
        uint8_t l = p->out[j];
        if (l == EIN_ELL) {
            if (!any_ell)
                return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                               "equation '%s': the output has an ellipsis but no input term has",
                               eq);
            continue;
        }
        if (!in_seen[l])
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "equation '%s': output label '%c' is in no input term", eq,
                           label_char(l));
        if (out_seen[l])
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "equation '%s': output label '%c' appears twice", eq, label_char(l));
        out_seen[l] = true;
    }
    return MOPT_OK;
}

/* ---- labels and sizes ------------------------------------------------------------ */

/* A label's size: v when sym == 0, a symbol (> 0) or unknown (< 0). */
typedef struct ein_dim {
    int64_t v;
    int32_t sym;
    bool seen;
} ein_dim;

/* The equation resolved against the inputs' shapes: each dim's label
 * (ellipsis dims get labels EIN_LETTERS + position in the broadcast
 * ellipsis), each label's size, the output's labels. */
typedef struct ein_res {
    int ell; /* dims of the broadcast ellipsis (over the inputs of known rank) */
    bool ell_unknown;
    uint8_t lab[EIN_MAX_OPS][IR_MAX_RANK];
    ein_dim size[REF_EIN_LABELS];
    int out_rank; /* -1: unknown */
    uint8_t out[IR_MAX_RANK];
} ein_res;

static int n_letters(const einsum_params *p, int k) {
    int n = 0;
    for (int j = 0; j < p->len[k]; j++)
        n += p->terms[k][j] != EIN_ELL;
    return n;
}

static bool has_ell(const einsum_params *p, int k) { return n_letters(p, k) != p->len[k]; }

/* Merges size (v, sym) of label l, seen in input k, into r. */
static mopt_status merge(const op_ctx *ctx, const einsum_params *p, ein_res *r, uint8_t l, int k,
                         int64_t v, int32_t sym) {
    ein_dim *d = &r->size[l];
    if (!d->seen) {
        *d = (ein_dim){v, sym, true};
        return MOPT_OK;
    }
    if (d->sym == 0 && sym == 0) {
        if (d->v == v || v == 1) return MOPT_OK;
        if (d->v == 1) {
            d->v = v;
            return MOPT_OK;
        }
        char name[16];
        if (l < EIN_LETTERS)
            snprintf(name, sizeof name, "'%c'", label_char(l));
        else
            snprintf(name, sizeof name, "of '...' #%d", l - EIN_LETTERS);
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "equation '%s': label %s is %" PRId64 " in input %d but %" PRId64
                       " elsewhere (sizes must be equal, or 1)",
                       p->equation, name, v, k, d->v);
    }
    if (sym == 0) { /* a fixed size other than 1 decides */
        if (v != 1) *d = (ein_dim){v, 0, true};
        return MOPT_OK;
    }
    if (d->sym == 0) {
        if (d->v == 1) *d = (ein_dim){v, sym, true};
        return MOPT_OK;
    }
    if (d->sym != sym) {
        if (d->sym < 0 && sym > 0)
            d->sym = sym;
        else if (!(d->sym > 0 && sym < 0))
            d->sym = -1;
    }
    return MOPT_OK;
}

static mopt_status resolve(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom) {
    ein_res *r = geom;
    const einsum_params *p = ctx->params;
    memset(r, 0, sizeof *r);
    if (n_in != p->n_terms)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "equation '%s' has %d input terms, not %d",
                       p->equation, p->n_terms, n_in);
    for (int k = 0; k < n_in; k++) {
        int32_t rank = in[k].shape.rank, L = n_letters(p, k);
        if (rank < 0) {
            if (has_ell(p, k)) r->ell_unknown = true;
            continue;
        }
        if (!has_ell(p, k) ? rank != L : rank < L)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "equation '%s': input %d has rank %d but its term has %d labels%s",
                           p->equation, k, (int)rank, (int)L,
                           has_ell(p, k) ? " and an ellipsis" : "");
        if (rank - L > r->ell) r->ell = rank - L;
    }
    for (int k = 0; k < n_in; k++) {
        const ir_shape *s = &in[k].shape;
        if (s->rank < 0) continue;
        int e = s->rank - n_letters(p, k), d = 0;
        for (int j = 0; j < p->len[k]; j++) {
            uint8_t l = p->terms[k][j];
            if (l != EIN_ELL) {
                r->lab[k][d++] = l;
                continue;
            }
            for (int i = 0; i < e; i++)
                r->lab[k][d++] = (uint8_t)(EIN_LETTERS + r->ell - e + i);
        }
        /* a label repeated in one input takes its diagonal: equal sizes */
        for (int a = 0; a < s->rank; a++)
            for (int b = a + 1; b < s->rank; b++)
                if (r->lab[k][a] == r->lab[k][b] && s->syms[a] == 0 && s->syms[b] == 0 &&
                    s->dims[a] != s->dims[b])
                    return op_fail(ctx, MOPT_ERR_SHAPE,
                                   "equation '%s': label '%c' of input %d is on dims of sizes "
                                   "%" PRId64 " and %" PRId64 " (a diagonal needs equal sizes)",
                                   p->equation, label_char(r->lab[k][a]), k, s->dims[a],
                                   s->dims[b]);
        mopt_status st;
        for (int a = 0; a < s->rank; a++)
            if ((st = merge(ctx, p, r, r->lab[k][a], k, s->dims[a], s->syms[a]))) return st;
    }
    /* the output's labels */
    int n = 0;
    uint8_t out[EIN_LETTERS + IR_MAX_RANK];
    if (p->explicit_out) {
        bool out_ell = false;
        for (int j = 0; j < p->out_len; j++) {
            if (p->out[j] != EIN_ELL) {
                out[n++] = p->out[j];
                continue;
            }
            out_ell = true;
            for (int i = 0; i < r->ell; i++)
                out[n++] = (uint8_t)(EIN_LETTERS + i);
        }
        if (!out_ell && r->ell > 0)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "equation '%s': the inputs' ellipsis covers %d dims but the output "
                           "has no '...' to put them in",
                           p->equation, r->ell);
        if (out_ell && r->ell_unknown) {
            r->out_rank = -1;
            return MOPT_OK;
        }
    } else {
        /* implicit: the ellipsis dims, then the letters seen exactly once, in ASCII order */
        if (r->ell_unknown) {
            r->out_rank = -1;
            return MOPT_OK;
        }
        int count[EIN_LETTERS] = {0};
        for (int k = 0; k < p->n_terms; k++)
            for (int j = 0; j < p->len[k]; j++)
                if (p->terms[k][j] != EIN_ELL) count[p->terms[k][j]]++;
        for (int i = 0; i < r->ell; i++)
            out[n++] = (uint8_t)(EIN_LETTERS + i);
        for (int l = 0; l < EIN_LETTERS; l++)
            if (count[l] == 1) out[n++] = (uint8_t)l;
    }
    if (n > IR_MAX_RANK)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "equation '%s': output rank %d exceeds %d",
                       p->equation, n, IR_MAX_RANK);
    r->out_rank = n;
    memcpy(r->out, out, (size_t)n);
    return MOPT_OK;
}

/* ---- Einsum ---------------------------------------------------------------------- */

static const mopt_dtype k_native[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I32,
                                      MOPT_DTYPE_I64};

static mopt_status einsum_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    (void)n_out;
    mopt_status st;
    for (int k = 0; k < n_in; k++)
        if ((st = op_expect_dtype(ctx, &in[k], k, k_native, OP_COUNT(k_native))) ||
            (k && (st = op_same_dtype(ctx, in, 0, k))))
            return st;
    if ((st = op_require_inputs(ctx, in, n_in))) return st;
    ein_res r;
    if ((st = resolve(ctx, in, n_in, &r))) return st;
    out[0].dtype = in[0].dtype;
    if (r.out_rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    ir_shape *s = &out[0].shape;
    memset(s, 0, sizeof *s);
    s->rank = r.out_rank;
    for (int d = 0; d < r.out_rank; d++) {
        const ein_dim *z = &r.size[r.out[d]];
        s->dims[d] = z->seen && z->sym == 0 ? z->v : -1;
        s->syms[d] = z->seen ? z->sym : -1;
    }
    return MOPT_OK;
}

static mopt_status einsum_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    (void)n_out;
    const ein_res *r = ctx->geom; /* resolve's */
    ref_ein_operand ops[EIN_MAX_OPS];
    for (int k = 0; k < n_in; k++)
        ops[k] = (ref_ein_operand){in[k].shape.rank, r->lab[k], in[k].shape.dims, in[k].data};
    ref_ein_type t = in[0].dtype == MOPT_DTYPE_F32   ? REF_EIN_F32
                     : in[0].dtype == MOPT_DTYPE_F64 ? REF_EIN_F64
                     : in[0].dtype == MOPT_DTYPE_I32 ? REF_EIN_I32
                                                     : REF_EIN_I64;
    int rc = ref_einsum(t, n_in, ops, r->out_rank, r->out, out[0].shape.dims, out[0].data);
    if (rc == -1) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the intermediates");
    if (rc)
        return op_fail(ctx, MOPT_ERR_LIMIT, "equation '%s': an intermediate is too large",
                       ctx->params ? ((const einsum_params *)ctx->params)->equation : "");
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"Einsum", "", 1, EIN_MAX_OPS, 1, 1, einsum_infer, einsum_run, NULL,
     .params_size = sizeof(einsum_params), .parse = einsum_parse, OP_GEOM(ein_res, resolve),
     .bridge = &ops_bridge_wrap_arith},
};

const op_def *ops_family_einsum(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
