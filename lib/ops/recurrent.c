/*
 * recurrent.c — the "recurrent" op family: ONNX LSTM, GRU and RNN (opset 7
 * to 22; layout from 14) with every attribute (direction, activations with
 * alpha/beta, clip, hidden_size, input_forget, linear_before_reset, layout),
 * every optional input (B, sequence_lens, initial_h, initial_c, P) and
 * output (Y, Y_h, Y_c). f32; f16/bf16/f64 through the dtype bridge. Math in
 * kernels/ref/recurrent.c; the fast path is lib/ops/cpu/recurrent_cpu.c.
 * Also ONNX Runtime's com.microsoft DynamicQuantizeLSTM (8-bit weights,
 * inputs dynamically quantized), reference kernel only.
 */
#include "ops/recurrent.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ops/bridge.h"
#include "ops/op_common.h"

/* ---- parse ------------------------------------------------------------------ */

typedef struct act_name {
    const char *name;
    ref_rnn_act_kind kind;
    bool uses_alpha, uses_beta;
    float alpha, beta; /* defaults (those of the ONNX op of the same name) */
} act_name;

static const act_name k_acts[] = {
    {"Sigmoid", REF_RNN_ACT_SIGMOID, false, false, 0, 0},
    {"Tanh", REF_RNN_ACT_TANH, false, false, 0, 0},
    {"Relu", REF_RNN_ACT_RELU, false, false, 0, 0},
    {"Affine", REF_RNN_ACT_AFFINE, true, true, 1.0f, 0.0f},
    {"LeakyRelu", REF_RNN_ACT_LEAKY_RELU, true, false, 0.01f, 0},
    {"ThresholdedRelu", REF_RNN_ACT_THRESHOLDED_RELU, true, false, 1.0f, 0},
    {"ScaledTanh", REF_RNN_ACT_SCALED_TANH, true, true, 1.0f, 1.0f},
    {"HardSigmoid", REF_RNN_ACT_HARD_SIGMOID, true, true, 0.2f, 0.5f},
    {"Elu", REF_RNN_ACT_ELU, true, false, 1.0f, 0},
    {"Softsign", REF_RNN_ACT_SOFTSIGN, false, false, 0, 0},
    {"Softplus", REF_RNN_ACT_SOFTPLUS, false, false, 0, 0},
};

/* Default activations per cell: LSTM f g h, GRU f g, RNN f. */
static int n_acts(ref_rnn_cell cell) {
    return cell == REF_RNN_CELL_LSTM ? 3 : cell == REF_RNN_CELL_GRU ? 2 : 1;
}

static mopt_status parse_acts(const op_ctx *ctx, ops_rnn_params *p) {
    ref_rnn_params *k = &p->k;
    const int per = n_acts(k->cell), dirs = ref_rnn_dirs(k->direction);
    static const ref_rnn_act_kind defaults[3][3] = {
        {REF_RNN_ACT_TANH}, /* RNN */
        {REF_RNN_ACT_SIGMOID, REF_RNN_ACT_TANH, REF_RNN_ACT_TANH},
        {REF_RNN_ACT_SIGMOID, REF_RNN_ACT_TANH},
    };
    for (int d = 0; d < 2; d++)
        for (int j = 0; j < per; j++)
            k->act[d][j] = (ref_rnn_act){defaults[k->cell][j], 0, 0};
    const ir_attr *a = ir_node_attr(ctx->node, "activations");
    if (!a) return MOPT_OK;
    if (a->type != IR_ATTR_STRINGS)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "activations must be a list of strings");
    size_t n = a->n;
    if (n != (size_t)per && n != (size_t)(per * dirs))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "activations has %zu names; expected %d (one per function%s)", n, per,
                       dirs == 2 ? ", or twice that: one list per direction" : "");
    const float *alphas = NULL, *betas = NULL;
    int64_t n_al = ir_node_attr_floats(ctx->node, "activation_alpha", &alphas);
    int64_t n_be = ir_node_attr_floats(ctx->node, "activation_beta", &betas);
    int64_t ia = 0, ib = 0;
    /* alpha and beta values are consumed in the order of the functions that
     * take them; a function past the end of a list gets its default */
    for (size_t i = 0; i < (size_t)(per * dirs); i++) {
        const char *name = a->strings[i % n];
        const act_name *e = NULL;
        for (int j = 0; j < OP_COUNT(k_acts); j++)
            if (op_str_eq_ci(name, k_acts[j].name)) e = &k_acts[j];
        if (!e) return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "activation '%s' is not supported", name);
        ref_rnn_act *r = &k->act[i / (size_t)per][i % (size_t)per];
        r->kind = e->kind;
        r->alpha = e->alpha;
        r->beta = e->beta;
        if (e->uses_alpha && ia < n_al) r->alpha = alphas[ia++];
        if (e->uses_beta && ib < n_be) r->beta = betas[ib++];
    }
    return MOPT_OK;
}

static mopt_status rnn_parse_cell(const op_ctx *ctx, void *params, ref_rnn_cell cell) {
    ops_rnn_params *p = params;
    ref_rnn_params *k = &p->k;
    const ir_node *n = ctx->node;
    k->cell = cell;
    static const op_name_value k_dirs[] = {{"forward", REF_RNN_FORWARD},
                                           {"reverse", REF_RNN_REVERSE},
                                           {"bidirectional", REF_RNN_BIDIRECTIONAL}};
    const char *dir = ir_node_attr_string(n, "direction", "forward");
    int v;
    if (!op_name_lookup(k_dirs, OP_COUNT(k_dirs), dir, &v))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "direction '%s' is not forward, reverse or bidirectional", dir);
    k->direction = (ref_rnn_direction)v;
    p->hidden_size = ir_node_attr_int(n, "hidden_size", 0);
    if (ir_node_attr(n, "hidden_size") && p->hidden_size <= 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "hidden_size must be > 0");
    if (p->hidden_size > ((int64_t)1 << 30))
        return op_fail(ctx, MOPT_ERR_LIMIT, "hidden_size %" PRId64 " is too large", p->hidden_size);
    if (ir_node_attr(n, "clip")) {
        k->has_clip = true;
        k->clip = ir_node_attr_float(n, "clip", 0.0f);
        if (!(k->clip >= 0.0f)) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "clip must be >= 0");
    }
    int64_t layout = ir_node_attr_int(n, "layout", 0);
    if (layout != 0 && layout != 1)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "layout must be 0 or 1");
    k->layout_batch_first = layout == 1;
    if (cell == REF_RNN_CELL_LSTM) {
        int64_t f = ir_node_attr_int(n, "input_forget", 0);
        if (f != 0 && f != 1)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "input_forget must be 0 or 1");
        k->input_forget = f == 1;
    }
    if (cell == REF_RNN_CELL_GRU) {
        int64_t l = ir_node_attr_int(n, "linear_before_reset", 0);
        if (l != 0 && l != 1)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "linear_before_reset must be 0 or 1");
        k->linear_before_reset = l == 1;
    }
    return parse_acts(ctx, p);
}

static mopt_status lstm_parse(const op_ctx *ctx, void *params) {
    return rnn_parse_cell(ctx, params, REF_RNN_CELL_LSTM);
}
static mopt_status gru_parse(const op_ctx *ctx, void *params) {
    return rnn_parse_cell(ctx, params, REF_RNN_CELL_GRU);
}
static mopt_status rnn_parse(const op_ctx *ctx, void *params) {
    return rnn_parse_cell(ctx, params, REF_RNN_CELL_RNN);
}

/* ---- infer ------------------------------------------------------------------ */

/* A dimension that may be symbolic (sym > 0) or unknown (sym < 0). */
typedef struct rnn_dim {
    int64_t v;
    int32_t sym;
} rnn_dim;

static rnn_dim dim_of(const ir_shape *s, int32_t axis) {
    if (s->rank <= axis) return (rnn_dim){0, -1};
    return (rnn_dim){s->dims[axis], s->syms[axis]};
}
static rnn_dim fixed(int64_t v) { return (rnn_dim){v, 0}; }
static rnn_dim unknown(void) { return (rnn_dim){0, -1}; }

/* Fails when both dims are known (equal symbols, or fixed values) to differ. */
static mopt_status expect_dim(const op_ctx *ctx, const op_tensor *t, int index, int32_t axis,
                              rnn_dim want, const char *what) {
    rnn_dim got = dim_of(&t->shape, axis);
    if (got.sym == 0 && want.sym == 0 && got.v != want.v) {
        char b[IR_SHAPE_STR_CAP];
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "input %d %s: dimension %d is %" PRId64 ", expected %" PRId64 " (%s)", index,
                       op_shape_str(ctx, &t->shape, b), (int)axis, got.v, want.v, what);
    }
    return MOPT_OK;
}

static mopt_status expect_rank(const op_ctx *ctx, const op_tensor *t, int index, int32_t rank) {
    if (t->shape.rank >= 0 && t->shape.rank != rank) {
        char b[IR_SHAPE_STR_CAP];
        return op_fail(ctx, MOPT_ERR_SHAPE, "input %d %s must have rank %d", index,
                       op_shape_str(ctx, &t->shape, b), (int)rank);
    }
    return MOPT_OK;
}

/* Checks dims 0 .. n-1 of input index against want[], what[] naming each. */
static mopt_status expect_dims(const op_ctx *ctx, const op_tensor *in, int index, int32_t n,
                               const rnn_dim *want, const char *const *what) {
    mopt_status st;
    for (int32_t a = 0; a < n; a++)
        if ((st = expect_dim(ctx, &in[index], index, a, want[a], what[a]))) return st;
    return MOPT_OK;
}

/* Input index has rank n and the dims want[] (what[] names each). */
static mopt_status expect_shape(const op_ctx *ctx, const op_tensor *in, int index, int32_t n,
                                const rnn_dim *want, const char *const *what) {
    mopt_status st = expect_rank(ctx, &in[index], index, n);
    return st ? st : expect_dims(ctx, in, index, n, want, what);
}

/* W and R: [num_directions, g, input size] and [num_directions, g,
 * hidden_size] (ONNX), or with transposed (DynamicQuantizeLSTM)
 * [num_directions, input size, g] and [num_directions, hidden_size, g];
 * g is gates * hidden_size, named g_what. */
static mopt_status expect_wr(const op_ctx *ctx, const op_tensor *in, int dirs, rnn_dim g,
                             const char *g_what, rnn_dim isz, rnn_dim hid, bool transposed) {
    const int32_t ga = transposed ? 2 : 1, oa = 3 - ga; /* the axes of g and of the other */
    rnn_dim w[3] = {fixed(dirs)}, r[3] = {fixed(dirs)};
    const char *w_what[3] = {"num_directions"}, *r_what[3] = {"num_directions"};
    w[ga] = r[ga] = g;
    w_what[ga] = r_what[ga] = g_what;
    w[oa] = isz, w_what[oa] = "X's input size";
    r[oa] = hid, r_what[oa] = "hidden_size";
    mopt_status st = expect_dims(ctx, in, RNN_IN_W, 3, w, w_what);
    return st ? st : expect_dims(ctx, in, RNN_IN_R, 3, r, r_what);
}

/* The optional peephole weights P: [num_directions, 3 * hidden_size]. */
static mopt_status expect_peepholes(const op_ctx *ctx, const op_tensor *in, int n_in, int dirs,
                                    rnn_dim hid) {
    if (!op_has_input(in, n_in, RNN_IN_P)) return MOPT_OK;
    static const char *const what[] = {"num_directions", "3 * hidden_size"};
    const rnn_dim want[2] = {fixed(dirs), hid.sym == 0 ? fixed(3 * hid.v) : unknown()};
    return expect_shape(ctx, in, RNN_IN_P, 2, want, what);
}

static void set_dims(ir_shape *s, int32_t rank, const rnn_dim *d) {
    s->rank = rank;
    for (int32_t a = 0; a < rank; a++) {
        s->dims[a] = d[a].sym == 0 ? d[a].v : 0;
        s->syms[a] = d[a].sym;
    }
}

/* Output 0 (Y) gets the 4 dims ydims, the others (Y_h, Y_c) the 3 sdims;
 * all of dtype dt. */
static void set_outputs(op_tensor *out, int n_out, mopt_dtype dt, const rnn_dim *ydims,
                        const rnn_dim *sdims) {
    for (int o = 0; o < n_out; o++) {
        out[o].dtype = dt;
        if (o == 0)
            set_dims(&out[o].shape, 4, ydims);
        else
            set_dims(&out[o].shape, 3, sdims);
    }
}

static mopt_status rnn_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const ops_rnn_params *p = ctx->params;
    const ref_rnn_params *k = &p->k;
    const int G = ref_rnn_gates(k->cell), dirs = ref_rnn_dirs(k->direction);
    const bool bf = k->layout_batch_first;
    mopt_status st;
    static const int float_inputs[] = {RNN_IN_X,  RNN_IN_W,  RNN_IN_R, RNN_IN_B,
                                       RNN_IN_H0, RNN_IN_C0, RNN_IN_P};
    for (int i = 0; i < OP_COUNT(float_inputs); i++) {
        int j = float_inputs[i];
        if (j >= n_in || in[j].dtype == MOPT_DTYPE_UNDEFINED) continue;
        if ((st = op_expect_f32(ctx, &in[j], j)) || (j && (st = op_same_dtype(ctx, in, 0, j))))
            return st;
    }
    if (op_has_input(in, n_in, RNN_IN_SEQ_LENS)) {
        static const mopt_dtype i32[] = {MOPT_DTYPE_I32};
        if ((st = op_expect_dtype(ctx, &in[RNN_IN_SEQ_LENS], RNN_IN_SEQ_LENS, i32, 1))) return st;
    }
    if ((st = op_require_inputs(ctx, in, 3))) return st;
    if ((st = expect_rank(ctx, &in[RNN_IN_X], RNN_IN_X, 3)) ||
        (st = expect_rank(ctx, &in[RNN_IN_W], RNN_IN_W, 3)) ||
        (st = expect_rank(ctx, &in[RNN_IN_R], RNN_IN_R, 3)))
        return st;
    const ir_shape *xs = &in[RNN_IN_X].shape;
    rnn_dim seq = dim_of(xs, bf ? 1 : 0), batch = dim_of(xs, bf ? 0 : 1), isz = dim_of(xs, 2);
    rnn_dim hid = p->hidden_size ? fixed(p->hidden_size) : dim_of(&in[RNN_IN_R].shape, 2);
    if (!p->hidden_size && hid.sym == 0 && hid.v <= 0)
        return op_fail(ctx, MOPT_ERR_SHAPE, "hidden size (R's last dimension) must be > 0");
    rnn_dim gh = hid.sym == 0 ? fixed(G * hid.v) : unknown();
    if ((st = expect_wr(ctx, in, dirs, gh, "gates * hidden_size", isz, hid, false))) return st;
    if (op_has_input(in, n_in, RNN_IN_B)) {
        static const char *const b_what[] = {"num_directions", "2 * gates * hidden_size"};
        const rnn_dim b_dims[2] = {fixed(dirs), hid.sym == 0 ? fixed(2 * G * hid.v) : unknown()};
        if ((st = expect_shape(ctx, in, RNN_IN_B, 2, b_dims, b_what))) return st;
    }
    if (op_has_input(in, n_in, RNN_IN_SEQ_LENS) &&
        ((st = expect_rank(ctx, &in[RNN_IN_SEQ_LENS], RNN_IN_SEQ_LENS, 1)) ||
         (st = expect_dim(ctx, &in[RNN_IN_SEQ_LENS], RNN_IN_SEQ_LENS, 0, batch, "batch size"))))
        return st;
    /* states: [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]) */
    rnn_dim sdims[3] = {bf ? batch : fixed(dirs), bf ? fixed(dirs) : batch, hid};
    int n_states = k->cell == REF_RNN_CELL_LSTM ? 2 : 1;
    static const char *const s_what[2][3] = {{"num_directions", "batch size", "hidden_size"},
                                             {"batch size", "num_directions", "hidden_size"}};
    for (int j = RNN_IN_H0; j < RNN_IN_H0 + n_states; j++)
        if (op_has_input(in, n_in, j) && (st = expect_shape(ctx, in, j, 3, sdims, s_what[bf])))
            return st;
    if (k->cell == REF_RNN_CELL_LSTM && (st = expect_peepholes(ctx, in, n_in, dirs, hid)))
        return st;
    if (k->cell != REF_RNN_CELL_LSTM && (op_wired(ctx, RNN_IN_C0) || op_wired(ctx, RNN_IN_P)))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "only LSTM takes initial_c and P");
    if (k->cell != REF_RNN_CELL_LSTM && n_out > 2)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "only LSTM has a Y_c output");
    mopt_dtype dt = in[RNN_IN_X].dtype;
    if (xs->rank < 0) seq = batch = unknown();
    rnn_dim ydims[4] = {bf ? batch : seq, bf ? seq : fixed(dirs), bf ? fixed(dirs) : batch, hid};
    set_outputs(out, n_out, dt, ydims, sdims);
    return MOPT_OK;
}

/* ---- run -------------------------------------------------------------------- */

const void *ops_rnn_input(const op_tensor *in, int n_in, int k) {
    return op_has_input(in, n_in, k) ? in[k].data : NULL;
}

mopt_status ops_rnn_setup(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom) {
    ref_rnn_params *k = geom;
    const ops_rnn_params *p = ctx->params;
    *k = p->k;
    const ir_shape *xs = &in[RNN_IN_X].shape;
    k->seq = xs->dims[k->layout_batch_first ? 1 : 0];
    k->batch = xs->dims[k->layout_batch_first ? 0 : 1];
    k->input = xs->dims[2];
    k->hidden = p->hidden_size ? p->hidden_size : in[RNN_IN_R].shape.dims[2];
    const int32_t *lens = ops_rnn_input(in, n_in, RNN_IN_SEQ_LENS);
    for (int64_t b = 0; lens && b < k->batch; b++)
        if (lens[b] < 0 || lens[b] > k->seq)
            return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                           "sequence_lens[%" PRId64 "] = %d is outside [0, %" PRId64 "]", b,
                           (int)lens[b], k->seq);
    return MOPT_OK;
}

static mopt_status rnn_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const ref_rnn_params *k = ctx->geom; /* ops_rnn_setup's */
    float *work = op_work_get(ctx, 0, ref_rnn_work_floats(k) * sizeof(float));
    if (!work) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the recurrent state");
    ref_rnn_f32(k, in[RNN_IN_X].data, in[RNN_IN_W].data, in[RNN_IN_R].data,
                ops_rnn_input(in, n_in, RNN_IN_B), ops_rnn_input(in, n_in, RNN_IN_SEQ_LENS),
                ops_rnn_input(in, n_in, RNN_IN_H0),
                k->cell == REF_RNN_CELL_LSTM ? ops_rnn_input(in, n_in, RNN_IN_C0) : NULL,
                k->cell == REF_RNN_CELL_LSTM ? ops_rnn_input(in, n_in, RNN_IN_P) : NULL,
                n_out > 0 ? out[0].data : NULL, n_out > 1 ? out[1].data : NULL,
                n_out > 2 ? out[2].data : NULL, work);
    op_work_put(ctx, work);
    return MOPT_OK;
}

/* 2 flops per multiply-add of the input and recurrent projections of every
 * step, plus a few per gate element, for hidden size H. */
static int64_t rnn_flops_h(const ops_rnn_params *p, const op_tensor *in, int64_t H) {
    const ir_shape *xs = &in[RNN_IN_X].shape;
    int64_t T = xs->dims[0], N = xs->dims[1], I = xs->dims[2];
    int64_t G = ref_rnn_gates(p->k.cell), D = ref_rnn_dirs(p->k.direction);
    return D * T * N * (2 * G * H * (I + H) + 8 * G * H);
}

static int64_t rnn_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    (void)n_in, (void)out, (void)n_out;
    const ops_rnn_params *p = ctx->params;
    return rnn_flops_h(p, in, p->hidden_size ? p->hidden_size : in[RNN_IN_R].shape.dims[2]);
}

/* ---- com.microsoft DynamicQuantizeLSTM ---------------------------------------------------
 * ONNX Runtime's dynamically quantized LSTM: the LSTM of the ONNX op with
 * 8-bit weights W [dirs, input, 4H] and R [dirs, hidden, 4H] (transposed),
 * and scale/zero point inputs 8-11 per direction or per column; the float
 * input and hidden state are quantized to uint8 at run time (see
 * ref_dq_lstm_f32). Layout 0 only; sequence_lens must be the full length. */

static mopt_status dq_lstm_parse(const op_ctx *ctx, void *params) {
    if (ir_node_attr(ctx->node, "layout"))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "DynamicQuantizeLSTM has no layout attribute");
    return rnn_parse_cell(ctx, params, REF_RNN_CELL_LSTM);
}

/* Checks a scale (f32) and zero point (the weights' dtype) pair: [dirs] or
 * [dirs, 4*hidden]. */
static mopt_status dq_check_qparams(const op_ctx *ctx, const op_tensor *in, int si, int zi,
                                    mopt_dtype wt, int dirs, rnn_dim g4) {
    mopt_status st;
    for (int k = si; k <= zi; k++)
        if (!op_wired(ctx, k))
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "input %d (%s) is required", k,
                           k == si ? "scale" : "zero point");
    if ((st = op_expect_f32(ctx, &in[si], si))) return st;
    if (in[zi].dtype != MOPT_DTYPE_UNDEFINED && wt != MOPT_DTYPE_UNDEFINED && in[zi].dtype != wt)
        return op_fail(ctx, MOPT_ERR_TYPE, "input %d (zero point) must have the weights' dtype",
                       zi);
    for (int k = si; k <= zi; k++) {
        const ir_shape *s = &in[k].shape;
        if (s->rank < 0) continue;
        if (s->rank != 1 && s->rank != 2)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "input %d must be [num_directions] or [num_directions, 4*hidden_size]",
                           k);
        if ((st = expect_dim(ctx, &in[k], k, 0, fixed(dirs), "num_directions"))) return st;
        if (s->rank == 2 && (st = expect_dim(ctx, &in[k], k, 1, g4, "4 * hidden_size"))) return st;
    }
    return MOPT_OK;
}

static mopt_status dq_lstm_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const ops_rnn_params *p = ctx->params;
    const int dirs = ref_rnn_dirs(p->k.direction);
    static const mopt_dtype k_w[] = {MOPT_DTYPE_I8, MOPT_DTYPE_U8};
    static const int float_inputs[] = {RNN_IN_X, RNN_IN_B, RNN_IN_H0, RNN_IN_C0, RNN_IN_P};
    mopt_status st;
    for (int i = 0; i < OP_COUNT(float_inputs); i++)
        if (op_has_input(in, n_in, float_inputs[i]) &&
            (st = op_expect_f32(ctx, &in[float_inputs[i]], float_inputs[i])))
            return st;
    if ((st = op_require_inputs(ctx, in, 3)) ||
        (st = op_expect_dtype(ctx, &in[RNN_IN_W], RNN_IN_W, k_w, 2)) ||
        (st = op_expect_dtype(ctx, &in[RNN_IN_R], RNN_IN_R, k_w, 2)))
        return st;
    if (op_has_input(in, n_in, RNN_IN_SEQ_LENS)) {
        static const mopt_dtype i32[] = {MOPT_DTYPE_I32};
        if ((st = op_expect_dtype(ctx, &in[RNN_IN_SEQ_LENS], RNN_IN_SEQ_LENS, i32, 1))) return st;
    }
    if ((st = expect_rank(ctx, &in[RNN_IN_X], RNN_IN_X, 3)) ||
        (st = expect_rank(ctx, &in[RNN_IN_W], RNN_IN_W, 3)) ||
        (st = expect_rank(ctx, &in[RNN_IN_R], RNN_IN_R, 3)))
        return st;
    const ir_shape *xs = &in[RNN_IN_X].shape;
    rnn_dim seq = dim_of(xs, 0), batch = dim_of(xs, 1), isz = dim_of(xs, 2);
    rnn_dim hid = p->hidden_size ? fixed(p->hidden_size) : dim_of(&in[RNN_IN_R].shape, 1);
    if (!p->hidden_size && hid.sym == 0 && hid.v <= 0)
        return op_fail(ctx, MOPT_ERR_SHAPE, "hidden size (R's dimension 1) must be > 0");
    rnn_dim g4 = hid.sym == 0 ? fixed(4 * hid.v) : unknown();
    if ((st = expect_wr(ctx, in, dirs, g4, "4 * hidden_size", isz, hid, true))) return st;
    if ((st = dq_check_qparams(ctx, in, DQ_IN_W_SCALE, DQ_IN_W_ZP, in[RNN_IN_W].dtype, dirs, g4)) ||
        (st = dq_check_qparams(ctx, in, DQ_IN_R_SCALE, DQ_IN_R_ZP, in[RNN_IN_R].dtype, dirs, g4)))
        return st;
    if (op_has_input(in, n_in, RNN_IN_B)) {
        static const char *const b_what[] = {"num_directions", "8 * hidden_size"};
        const rnn_dim b_dims[2] = {fixed(dirs), hid.sym == 0 ? fixed(8 * hid.v) : unknown()};
        if ((st = expect_shape(ctx, in, RNN_IN_B, 2, b_dims, b_what))) return st;
    }
    rnn_dim sdims[3] = {fixed(dirs), batch, hid};
    static const char *const s_what[] = {"num_directions", "batch size", "hidden"};
    for (int j = RNN_IN_H0; j <= RNN_IN_C0; j++)
        if (op_has_input(in, n_in, j) && (st = expect_shape(ctx, in, j, 3, sdims, s_what)))
            return st;
    if ((st = expect_peepholes(ctx, in, n_in, dirs, hid))) return st;
    if (xs->rank < 0) seq = batch = unknown();
    rnn_dim ydims[4] = {seq, fixed(dirs), batch, hid};
    set_outputs(out, n_out, MOPT_DTYPE_F32, ydims, sdims);
    return MOPT_OK;
}

static ref_dq_weights dq_weights(const op_tensor *in, int w, int s, int z) {
    return (ref_dq_weights){.w = in[w].data,
                            .is_signed = in[w].dtype == MOPT_DTYPE_I8,
                            .scale = in[s].data,
                            .n_scale = in[s].shape.rank == 2 ? in[s].shape.dims[1] : 1,
                            .zp = in[z].data,
                            .n_zp = in[z].shape.rank == 2 ? in[z].shape.dims[1] : 1};
}

static mopt_status dq_lstm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    return ops_dq_lstm_run_with(ctx, in, n_in, out, n_out, NULL, NULL, NULL);
}

mopt_status ops_dq_lstm_run_with(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out, const void *pack, cpu_qrows_fn rows,
                                 ref_dq_gates_fn gates) {
    ref_rnn_params k;
    mopt_status st = ops_rnn_setup(ctx, in, n_in, &k);
    if (st) return st;
    k.hidden = in[RNN_IN_R].shape.dims[1];
    const int32_t *lens = ops_rnn_input(in, n_in, RNN_IN_SEQ_LENS);
    for (int64_t b = 0; lens && b < k.batch; b++)
        if (lens[b] != k.seq)
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED,
                           "sequence_lens[%" PRId64 "] = %d: only full-length sequences (%" PRId64
                           ") are supported",
                           b, (int)lens[b], k.seq);
    if (k.input > REF_DQ_MAX_K || k.hidden > REF_DQ_MAX_K)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED,
                       "input size %" PRId64 " or hidden size %" PRId64 " above %d", k.input,
                       k.hidden, REF_DQ_MAX_K);
    const int dirs = ref_rnn_dirs(k.direction);
    void *own = NULL;
    if (rows && !pack) {
        own = op_work_get(ctx, 0, cpu_dq_lstm_pack_bytes(dirs, k.input, k.hidden));
        if (!own) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the packed weights");
    }
    void *work =
        op_work_get(ctx, 1, rows ? cpu_dq_lstm_work_bytes(&k) : ref_dq_lstm_work_bytes(&k));
    if (!work) {
        op_work_put(ctx, own);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the recurrent state");
    }
    ref_dq_weights w = dq_weights(in, RNN_IN_W, DQ_IN_W_SCALE, DQ_IN_W_ZP);
    ref_dq_weights r = dq_weights(in, RNN_IN_R, DQ_IN_R_SCALE, DQ_IN_R_ZP);
    const float *X = in[RNN_IN_X].data, *B = ops_rnn_input(in, n_in, RNN_IN_B);
    const float *h0 = ops_rnn_input(in, n_in, RNN_IN_H0), *c0 = ops_rnn_input(in, n_in, RNN_IN_C0);
    const float *P = ops_rnn_input(in, n_in, RNN_IN_P);
    float *Y = n_out > 0 ? out[0].data : NULL, *Yh = n_out > 1 ? out[1].data : NULL;
    float *Yc = n_out > 2 ? out[2].data : NULL;
    if (rows) {
        if (own) cpu_dq_lstm_pack(dirs, k.input, k.hidden, &w, &r, own);
        cpu_dq_lstm_f32(&k, X, &w, &r, own ? own : pack, rows, gates, B, h0, c0, P, Y, Yh, Yc,
                        work);
    } else {
        ref_dq_lstm_f32(&k, X, &w, &r, B, h0, c0, P, Y, Yh, Yc, work);
    }
    op_work_put(ctx, own);
    op_work_put(ctx, work);
    return MOPT_OK;
}

/* An LSTM's (4 gates), with H from R [dirs, hidden, 4H]. */
static int64_t dq_lstm_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                             int n_out) {
    (void)n_in, (void)out, (void)n_out;
    return rnn_flops_h(ctx->params, in, in[RNN_IN_R].shape.dims[1]);
}

static const op_def k_ops[] = {
    {"LSTM", "", 3, 8, 0, 3, rnn_infer, rnn_run, ops_cpu_recurrent_impls,
     OP_PARAMS(ops_rnn_params, lstm_parse), OP_GEOM(ref_rnn_params, ops_rnn_setup),
     .flops = rnn_flops, .bridge = &ops_bridge_float},
    {"GRU", "", 3, 6, 0, 2, rnn_infer, rnn_run, ops_cpu_recurrent_impls,
     OP_PARAMS(ops_rnn_params, gru_parse), OP_GEOM(ref_rnn_params, ops_rnn_setup),
     .flops = rnn_flops, .bridge = &ops_bridge_float},
    {"RNN", "", 3, 6, 0, 2, rnn_infer, rnn_run, ops_cpu_recurrent_impls,
     OP_PARAMS(ops_rnn_params, rnn_parse), OP_GEOM(ref_rnn_params, ops_rnn_setup),
     .flops = rnn_flops, .bridge = &ops_bridge_float},
    {"DynamicQuantizeLSTM", "com.microsoft", 3, 12, 0, 3, dq_lstm_infer, dq_lstm_run,
     ops_cpu_dq_lstm_impls, OP_PARAMS(ops_rnn_params, dq_lstm_parse), .flops = dq_lstm_flops},
};

OP_FAMILY(recurrent, k_ops)
