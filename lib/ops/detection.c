/*
 * detection.c — the "detection" op family: NonMaxSuppression (opset 10,
 * 11: center_point_box 0/1, optional max_output_boxes_per_class,
 * iou_threshold and score_threshold inputs; its output size depends on the
 * data, so run-time inference runs the selection) and RoiAlign (opset 10,
 * 16, 22: coordinate_transformation_mode half_pixel / output_half_pixel,
 * mode avg / max, output_height/width, sampling_ratio (0: adaptive),
 * spatial_scale). f32; f16/bf16/f64 through the float bridge. Math in
 * kernels/ref/detection.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_detection.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* Fails unless input k (when its rank is known) has rank r. */
static mopt_status expect_rank(const op_ctx *ctx, const op_tensor *in, int k, const char *name,
                               int32_t r) {
    if (in[k].shape.rank >= 0 && in[k].shape.rank != r) {
        char buf[IR_SHAPE_STR_CAP];
        return op_fail(ctx, MOPT_ERR_SHAPE, "%s must have rank %d, not %s", name, (int)r,
                       op_shape_str(ctx, &in[k].shape, buf));
    }
    return MOPT_OK;
}

/* Dim d of input k when fixed, else -1. */
static int64_t fixed_dim(const op_tensor *in, int k, int32_t d) {
    const ir_shape *s = &in[k].shape;
    return s->rank > d && s->syms[d] == 0 ? s->dims[d] : -1;
}

/* ---- NonMaxSuppression ------------------------------------------------------------ */

typedef struct nms_params {
    bool center_point_box;
} nms_params;

enum { NMS_BOXES, NMS_SCORES, NMS_MAX, NMS_IOU, NMS_SCORE_THR };

static const op_attr_spec k_nms_attrs[] = {
    OP_ATTR_BOOL(nms_params, center_point_box, "center_point_box", 0)};

/* Is optional input k given with at least one element? */
static bool given(const op_tensor *in, int n_in, int k) {
    return op_has_input(in, n_in, k) && !(ir_shape_is_concrete(&in[k].shape) && !op_numel(&in[k]));
}

static mopt_status read_f32(const op_ctx *ctx, const op_tensor *t, const char *what, float *v) {
    if (op_numel(t) != 1)
        return op_fail(ctx, MOPT_ERR_SHAPE, "%s must hold one value, not %" PRId64, what,
                       op_numel(t));
    *v = *(const float *)t->data;
    return MOPT_OK;
}

/* The selection's parameters from the optional inputs (their data is set). */
static mopt_status nms_setup(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom) {
    ref_nms *k = geom;
    const nms_params *p = ctx->params;
    memset(k, 0, sizeof *k);
    k->center_point_box = p->center_point_box;
    mopt_status st;
    if (given(in, n_in, NMS_MAX)) {
        int64_t v[1];
        int64_t n = op_read_ints(ctx, &in[NMS_MAX], "max_output_boxes_per_class", v, 1);
        if (n < 0) return MOPT_ERR_INVALID_ARGUMENT;
        if (n != 1)
            return op_fail(ctx, MOPT_ERR_SHAPE, "max_output_boxes_per_class must hold one value");
        k->max_per_class = v[0] > 0 ? v[0] : 0;
    }
    if (given(in, n_in, NMS_IOU)) {
        if ((st = read_f32(ctx, &in[NMS_IOU], "iou_threshold", &k->iou_threshold))) return st;
        if (!(k->iou_threshold >= 0.0f && k->iou_threshold <= 1.0f))
            return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT, "iou_threshold %g is outside [0, 1]",
                           (double)k->iou_threshold);
    }
    if (given(in, n_in, NMS_SCORE_THR)) {
        if ((st = read_f32(ctx, &in[NMS_SCORE_THR], "score_threshold", &k->score_threshold)))
            return st;
        k->has_score_threshold = true;
    }
    return MOPT_OK;
}

static mopt_status nms_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    (void)n_out;
    mopt_status st;
    if ((st = op_expect_f32(ctx, &in[NMS_BOXES], NMS_BOXES)) ||
        (st = op_expect_f32(ctx, &in[NMS_SCORES], NMS_SCORES)))
        return st;
    if (op_has_input(in, n_in, NMS_MAX) && (st = op_expect_i64(ctx, &in[NMS_MAX], NMS_MAX)))
        return st;
    for (int k = NMS_IOU; k <= NMS_SCORE_THR; k++)
        if (op_has_input(in, n_in, k) && (st = op_expect_f32(ctx, &in[k], k))) return st;
    if ((st = expect_rank(ctx, in, NMS_BOXES, "boxes", 3)) ||
        (st = expect_rank(ctx, in, NMS_SCORES, "scores", 3)))
        return st;
    int64_t b0 = fixed_dim(in, NMS_BOXES, 0), b1 = fixed_dim(in, NMS_BOXES, 1),
            b2 = fixed_dim(in, NMS_BOXES, 2), s0 = fixed_dim(in, NMS_SCORES, 0),
            s2 = fixed_dim(in, NMS_SCORES, 2);
    if (b2 >= 0 && b2 != 4)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "boxes must be [batches, boxes, 4], not [..., %" PRId64 "]", b2);
    if (b0 >= 0 && s0 >= 0 && b0 != s0)
        return op_fail(ctx, MOPT_ERR_SHAPE, "boxes has %" PRId64 " batches but scores has %" PRId64,
                       b0, s0);
    if (b1 >= 0 && s2 >= 0 && b1 != s2)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "boxes has %" PRId64 " boxes per batch but scores has %" PRId64, b1, s2);
    out[0].dtype = MOPT_DTYPE_I64;
    int64_t d[2] = {-1, 3};
    ir_shape_set(&out[0].shape, 2, d);
    out[0].shape.syms[0] = -1;
    /* the count of selected boxes needs every input's values */
    for (int k = 0; k < n_in && k <= NMS_SCORE_THR; k++)
        if ((op_has_input(in, n_in, k) || op_wired(ctx, k)) && /* wired: maybe of unknown type */
            (!in[k].data || in[k].shape.rank < 0 || !ir_shape_is_concrete(&in[k].shape)))
            return MOPT_OK;
    ref_nms k;
    if ((st = nms_setup(ctx, in, n_in, &k))) return st;
    const ir_shape *bs = &in[NMS_BOXES].shape;
    int64_t n = ref_nms_f32(&k, bs->dims[0], in[NMS_SCORES].shape.dims[1], bs->dims[1],
                            in[NMS_BOXES].data, in[NMS_SCORES].data, NULL);
    if (n < 0) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the candidates");
    out[0].shape.dims[0] = n;
    out[0].shape.syms[0] = 0;
    return MOPT_OK;
}

static mopt_status nms_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    (void)n_out;
    const ref_nms *k = ctx->geom; /* nms_setup's */
    const ir_shape *bs = &in[NMS_BOXES].shape;
    int64_t n = ref_nms_f32(k, bs->dims[0], in[NMS_SCORES].shape.dims[1], bs->dims[1],
                            in[NMS_BOXES].data, in[NMS_SCORES].data, out[0].data);
    if (n < 0) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the candidates");
    if (n != out[0].shape.dims[0])
        return op_fail(ctx, MOPT_ERR_INTERNAL, "selected %" PRId64 " boxes, inferred %" PRId64, n,
                       out[0].shape.dims[0]);
    return MOPT_OK;
}

/* ---- RoiAlign ------------------------------------------------------------------ */

typedef struct roi_params {
    ref_roi_align k;
} roi_params;

static mopt_status roi_parse(const op_ctx *ctx, void *params) {
    ref_roi_align *k = &((roi_params *)params)->k;
    /* opset 10 has no coordinate_transformation_mode: it behaves as output_half_pixel */
    const char *ctm = ir_node_attr_string(ctx->node, "coordinate_transformation_mode",
                                          ctx->opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (op_str_eq_ci(ctm, "half_pixel"))
        k->half_pixel = true;
    else if (!op_str_eq_ci(ctm, "output_half_pixel"))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "coordinate_transformation_mode '%s' is not half_pixel or "
                       "output_half_pixel",
                       ctm);
    const char *mode = ir_node_attr_string(ctx->node, "mode", "avg");
    if (op_str_eq_ci(mode, "max"))
        k->max_mode = true;
    else if (!op_str_eq_ci(mode, "avg"))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "mode '%s' is not avg or max", mode);
    k->out_h = ir_node_attr_int(ctx->node, "output_height", 1);
    k->out_w = ir_node_attr_int(ctx->node, "output_width", 1);
    k->sampling_ratio = ir_node_attr_int(ctx->node, "sampling_ratio", 0);
    k->spatial_scale = ir_node_attr_float(ctx->node, "spatial_scale", 1.0f);
    const int64_t lim = (int64_t)1 << 31;
    if (k->out_h < 1 || k->out_w < 1 || k->out_h >= lim || k->out_w >= lim)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "output_height and output_width must be in [1, 2^31), not %" PRId64
                       " and %" PRId64,
                       k->out_h, k->out_w);
    if (k->sampling_ratio < 0 || k->sampling_ratio >= lim)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "sampling_ratio must be in [0, 2^31), not %" PRId64, k->sampling_ratio);
    return MOPT_OK;
}

static mopt_status roi_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    (void)n_in, (void)n_out;
    const ref_roi_align *k = &((const roi_params *)ctx->params)->k;
    mopt_status st;
    if ((st = op_expect_f32(ctx, &in[0], 0)) || (st = op_expect_f32(ctx, &in[1], 1)) ||
        (st = op_expect_i64(ctx, &in[2], 2)))
        return st;
    if ((st = expect_rank(ctx, in, 0, "X", 4)) || (st = expect_rank(ctx, in, 1, "rois", 2)) ||
        (st = expect_rank(ctx, in, 2, "batch_indices", 1)))
        return st;
    int64_t cols = fixed_dim(in, 1, 1), nr = fixed_dim(in, 1, 0), nb = fixed_dim(in, 2, 0);
    if (cols >= 0 && cols != 4)
        return op_fail(ctx, MOPT_ERR_SHAPE, "rois must be [num_rois, 4], not [..., %" PRId64 "]",
                       cols);
    if (nr >= 0 && nb >= 0 && nr != nb)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "rois has %" PRId64 " rows but batch_indices %" PRId64 " values", nr, nb);
    out[0].dtype = in[0].dtype;
    ir_shape *s = &out[0].shape;
    int64_t d[4] = {-1, -1, k->out_h, k->out_w};
    ir_shape_set(s, 4, d);
    s->syms[0] = s->syms[1] = -1;
    const ir_shape *rs = in[1].shape.rank == 2 ? &in[1].shape : &in[2].shape;
    if (rs->rank >= 1) s->dims[0] = rs->dims[0], s->syms[0] = rs->syms[0];
    if (in[0].shape.rank == 4) s->dims[1] = in[0].shape.dims[1], s->syms[1] = in[0].shape.syms[1];
    return MOPT_OK;
}

static mopt_status roi_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    (void)n_in, (void)n_out;
    const ref_roi_align *k = &((const roi_params *)ctx->params)->k;
    const ir_shape *xs = &in[0].shape;
    int64_t n_rois = in[1].shape.dims[0];
    const int64_t *b = in[2].data;
    for (int64_t r = 0; r < n_rois; r++)
        if (b[r] < 0 || b[r] >= xs->dims[0])
            return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                           "batch_indices[%" PRId64 "] = %" PRId64 " is outside [0, %" PRId64 ")",
                           r, b[r], xs->dims[0]);
    ref_roi_align_f32(k, xs->dims[1], xs->dims[2], xs->dims[3], in[0].data, n_rois, in[1].data, b,
                      out[0].data);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"NonMaxSuppression", "", 2, 5, 1, 1, nms_infer, nms_run, NULL,
     OP_ATTRS(nms_params, k_nms_attrs), OP_GEOM(ref_nms, nms_setup), .bridge = &ops_bridge_float},
    {"RoiAlign", "", 3, 3, 1, 1, roi_infer, roi_run, NULL, .params_size = sizeof(roi_params),
     .parse = roi_parse, .bridge = &ops_bridge_float},
};

const op_def *ops_family_detection(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
