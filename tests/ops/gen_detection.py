"""gen_detection.py — op cases for NonMaxSuppression (corner and center
boxes, flipped corners, thresholds given or omitted, ties, empty inputs,
symbolic dims, many boxes and classes) and RoiAlign (half_pixel and
output_half_pixel, avg and max, adaptive and fixed sampling, rois reaching
outside the image, empty and degenerate rois, opset 10/16/22 defaults),
and the inputs they must refuse. Expected outputs from the numpy code
below, checked against onnx.reference where it applies.

Run from the repo root: python3 tests/ops/gen_detection.py
"""
import numpy as np
from onnx.reference import ReferenceEvaluator

from opcase import Case, rng

R = rng(4242)


# ---- NonMaxSuppression ----------------------------------------------------------

def extents(b, center):
    """(x_min, x_max, y_min, y_max) in float32, as the ONNX reference computes them."""
    b = b.astype(np.float32)
    if center:
        hw, hh = b[..., 2] / np.float32(2), b[..., 3] / np.float32(2)
        return b[..., 0] - hw, b[..., 0] + hw, b[..., 1] - hh, b[..., 1] + hh
    return (np.minimum(b[..., 1], b[..., 3]), np.maximum(b[..., 1], b[..., 3]),
            np.minimum(b[..., 0], b[..., 2]), np.maximum(b[..., 0], b[..., 2]))


def suppresses(a, b, center, thr):
    ax0, ax1, ay0, ay1 = extents(a, center)
    bx0, bx1, by0, by1 = extents(b, center)
    ix0, ix1 = max(ax0, bx0), min(ax1, bx1)
    if ix1 <= ix0:
        return False
    iy0, iy1 = max(ay0, by0), min(ay1, by1)
    if iy1 <= iy0:
        return False
    inter = (ix1 - ix0) * (iy1 - iy0)
    area_a, area_b = (ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0)
    union = area_a + area_b - inter
    if inter <= 0 or area_a <= 0 or area_b <= 0 or union <= 0:
        return False
    return inter / union > thr


def nms(boxes, scores, max_out=None, iou=None, score_thr=None, center=0):
    max_out = 0 if max_out is None or max_out.size == 0 else max(int(max_out.reshape(-1)[0]), 0)
    iou = np.float32(0) if iou is None or iou.size == 0 else iou.reshape(-1)[0]
    use_thr = score_thr is not None and score_thr.size > 0
    out = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c]
            cand = [i for i in range(s.shape[0]) if not use_thr or s[i] > score_thr.reshape(-1)[0]]
            cand.sort(key=lambda i: (-s[i], i))
            kept = []
            for i in cand:
                if len(kept) >= max_out:
                    break
                if all(not suppresses(boxes[b, i], boxes[b, j], center, iou) for j in kept):
                    kept.append(i)
                    out.append((b, c, i))
    return np.array(out, np.int64).reshape(-1, 3)


def nms_case(name, boxes, scores, max_out=None, iou=None, score_thr=None, center=None,
             opset=11, input_shapes=None, check_onnx=True):
    names = ["boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"]
    vals = [boxes, scores, max_out, iou, score_thr]
    # trailing omitted inputs are left out, middle ones are named ""
    last = max(k for k, v in enumerate(vals) if v is not None)
    node_in = [n if v is not None else "" for n, v in zip(names[:last + 1], vals[:last + 1])]
    feeds = {n: v for n, v in zip(names, vals) if v is not None}
    want = nms(boxes, scores, max_out, iou, score_thr, center or 0)
    c = Case(f"nms_{name}", opset=opset)
    c.node("NonMaxSuppression", node_in, ["y"], center_point_box=center)
    # onnx.reference needs max_output_boxes_per_class and iou_threshold given
    if check_onnx and max_out is not None and iou is not None:
        ref = ReferenceEvaluator(c_model(c, feeds, want)).run(None, feeds)[0]
        assert np.array_equal(ref.reshape(-1, 3), want), (name, ref, want)
    c.save(feeds, {"y": want}, input_shapes=input_shapes)


def c_model(c, feeds, want, out="y"):
    """The case's model, for onnx.reference."""
    from onnx import helper
    from opcase import onnx_dtype
    g_in = [helper.make_tensor_value_info(k, onnx_dtype(v), list(v.shape)) for k, v in feeds.items()]
    g_out = [helper.make_tensor_value_info(out, onnx_dtype(want), None)]
    g = helper.make_graph(c.nodes, c.name, g_in, g_out)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", c.opset)])


def rand_boxes(b, n, center=False, flip=False):
    if center:
        xy = R.uniform(0, 10, (b, n, 2))
        wh = R.uniform(0.5, 4, (b, n, 2))
        return np.concatenate([xy, wh], -1).astype(np.float32)
    p0 = R.uniform(0, 10, (b, n, 2))
    p1 = p0 + R.uniform(0.5, 4, (b, n, 2))
    out = np.concatenate([p0, p1], -1)
    if flip:  # corners in either order
        sw = R.random((b, n)) < 0.5
        out[sw] = out[sw][:, [2, 3, 0, 1]]
    return out.astype(np.float32)


def i64(v):
    return np.array([v], np.int64)


def f32(v):
    return np.array([v], np.float32)


B, C, N = 2, 3, 200
nms_case("many", rand_boxes(B, N, flip=True), R.random((B, C, N)).astype(np.float32), i64(10),
         f32(0.5), f32(0.3))
nms_case("center_many", rand_boxes(B, 60, center=True), R.random((B, 2, 60)).astype(np.float32),
         i64(100), f32(0.4), center=1)
nms_case("no_iou_input", rand_boxes(1, 30), R.random((1, 2, 30)).astype(np.float32), i64(30))
nms_case("no_max_input", rand_boxes(1, 8), R.random((1, 1, 8)).astype(np.float32))
nms_case("max_negative", rand_boxes(1, 8), R.random((1, 1, 8)).astype(np.float32), i64(-3),
         f32(0.5), check_onnx=False)  # onnx.reference fails on a negative max
nms_case("max_scalar", rand_boxes(1, 8), R.random((1, 1, 8)).astype(np.float32),
         np.array(4, np.int64), np.array(0.2, np.float32), check_onnx=False)  # 0-d: ditto
nms_case("iou_omitted_score_given", rand_boxes(1, 20), R.random((1, 1, 20)).astype(np.float32),
         i64(20), None, f32(0.5))
nms_case("ties", np.tile(np.array([[[0, 0, 1, 1]]], np.float32), (1, 6, 1)) +
         np.arange(6, dtype=np.float32).reshape(1, 6, 1) * 3,
         np.full((1, 1, 6), 0.5, np.float32), i64(4), f32(0.5))
nms_case("all_below_score", rand_boxes(1, 10), R.random((1, 1, 10)).astype(np.float32) * 0.1,
         i64(5), f32(0.5), f32(0.9))
nms_case("empty_boxes", np.zeros((1, 0, 4), np.float32), np.zeros((1, 2, 0), np.float32), i64(5),
         f32(0.5))
nms_case("zero_batches", np.zeros((0, 5, 4), np.float32), np.zeros((0, 2, 5), np.float32), i64(5),
         f32(0.5))
nms_case("iou_one", rand_boxes(1, 15), R.random((1, 1, 15)).astype(np.float32), i64(15), f32(1.0))
nms_case("opset10", rand_boxes(1, 12), R.random((1, 1, 12)).astype(np.float32), i64(3), f32(0.3),
         opset=10)
nms_case("symbolic", rand_boxes(1, 25), R.random((1, 2, 25)).astype(np.float32), i64(6), f32(0.5),
         input_shapes={"boxes": ["b", "n", 4], "scores": ["b", 2, "n"]})


def nms_error(name, boxes, scores, extra, status, text, center=None):
    feeds = {"boxes": boxes, "scores": scores}
    names = ["max_output_boxes_per_class", "iou_threshold", "score_threshold"]
    feeds.update({n: v for n, v in zip(names, extra)})
    c = Case(f"nms_err_{name}", opset=11)
    c.node("NonMaxSuppression", list(feeds), ["y"], center_point_box=center)
    c.save_error(feeds, {"y": np.zeros((1, 3), np.int64)}, status, text)


nms_error("box_width_5", np.zeros((1, 3, 5), np.float32), np.zeros((1, 1, 3), np.float32),
          [i64(1)], "shape error", "boxes must be [batches, boxes, 4]")
nms_error("batch_mismatch", np.zeros((2, 3, 4), np.float32), np.zeros((1, 1, 3), np.float32),
          [i64(1)], "shape error", "boxes has 2 batches but scores has 1")
nms_error("count_mismatch", np.zeros((1, 3, 4), np.float32), np.zeros((1, 1, 4), np.float32),
          [i64(1)], "shape error", "boxes has 3 boxes per batch but scores has 4")
nms_error("iou_above_one", rand_boxes(1, 3), np.zeros((1, 1, 3), np.float32),
          [i64(1), f32(1.5)], "invalid argument", "iou_threshold 1.5 is outside [0, 1]")
nms_error("center_point_box_2", rand_boxes(1, 3), np.zeros((1, 1, 3), np.float32), [i64(1)],
          "invalid model", "center_point_box must be 0 or 1, not 2", center=2)
nms_error("two_thresholds", rand_boxes(1, 3), np.zeros((1, 1, 3), np.float32),
          [i64(1), f32(0.5), np.array([0.1, 0.2], np.float32)], "shape error",
          "score_threshold must hold one value")


# ---- RoiAlign ------------------------------------------------------------------------

def bilinear(plane, y, x):
    H, W = plane.shape
    if y < -1.0 or y > H or x < -1.0 or x > W:
        return None
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= H - 1:
        y0 = y1 = H - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= W - 1:
        x0 = x1 = W - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    return [hy * hx * plane[y0, x0], hy * lx * plane[y0, x1], ly * hx * plane[y1, x0],
            ly * lx * plane[y1, x1]]


def roi_align(X, rois, bidx, oh=1, ow=1, sr=0, scale=1.0, half_pixel=True, mode="avg"):
    n, Cc = rois.shape[0], X.shape[1]
    Y = np.zeros((n, Cc, oh, ow), np.float64)
    off = 0.5 if half_pixel else 0.0
    scale = float(np.float32(scale))
    for r in range(n):
        x0, y0, x1, y1 = (float(v) * scale - off for v in rois[r])
        rw, rh = x1 - x0, y1 - y0
        if not half_pixel:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / oh, rw / ow
        gh = sr if sr > 0 else int(np.ceil(rh / oh))
        gw = sr if sr > 0 else int(np.ceil(rw / ow))
        gh, gw = max(gh, 0), max(gw, 0)
        count = max(gh * gw, 1)
        for c in range(Cc):
            plane = X[bidx[r], c].astype(np.float64)
            for ph in range(oh):
                for pw in range(ow):
                    vals = []
                    for iy in range(gh):
                        yy = y0 + ph * bh + (iy + 0.5) * bh / gh
                        for ix in range(gw):
                            xx = x0 + pw * bw + (ix + 0.5) * bw / gw
                            v = bilinear(plane, yy, xx)
                            vals.append(v if v is not None else [0.0] * 4)
                    if mode == "avg":
                        Y[r, c, ph, pw] = sum(sum(v) for v in vals) / count
                    else:
                        Y[r, c, ph, pw] = max((max(v) for v in vals), default=0.0)
    return Y.astype(np.float32)


def roi_case(name, X, rois, bidx, opset=22, ctm=None, mode=None, oh=None, ow=None, sr=None,
             scale=None, check_onnx=True):
    half = ctm == "half_pixel" if ctm else opset >= 16
    want = roi_align(X, rois, bidx, oh or 1, ow or 1, sr or 0, 1.0 if scale is None else scale,
                     half, mode or "avg")
    c = Case(f"roialign_{name}", opset=opset)
    c.node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"], coordinate_transformation_mode=ctm,
           mode=mode, output_height=oh, output_width=ow, sampling_ratio=sr, spatial_scale=scale)
    feeds = {"X": X, "rois": rois, "batch_indices": bidx}
    if check_onnx:
        ref = ReferenceEvaluator(c_model(c, feeds, want, "Y")).run(None, feeds)[0]
        assert np.allclose(ref, want, rtol=1e-5, atol=1e-6), name
    c.save(feeds, {"Y": want})


X = R.standard_normal((2, 3, 37, 53)).astype(np.float32)
rois = np.array([[0, 0, 52, 36], [10.5, 3.2, 30.7, 20.1], [-5, -4, 12, 9], [40, 30, 70, 50],
                 [7, 7, 7.2, 7.1]], np.float32)
bidx = np.array([0, 1, 1, 0, 1], np.int64)
roi_case("half_pixel_adaptive", X, rois, bidx, ctm="half_pixel", oh=3, ow=4)
roi_case("output_half_pixel_max", X, rois, bidx, ctm="output_half_pixel", mode="max", oh=4, ow=3,
         sr=3)
roi_case("scaled_adaptive", X, rois * 4, bidx, ctm="half_pixel", oh=7, ow=7, scale=0.25)
roi_case("max_adaptive", X, rois, bidx, ctm="half_pixel", mode="max", oh=2, ow=5)
# opset 10 has no coordinate_transformation_mode and behaves as output_half_pixel
# (onnxruntime does; onnx.reference applies the later default, half_pixel)
roi_case("opset10_default", X, rois, bidx, opset=10, oh=2, ow=2, sr=2, check_onnx=False)
roi_case("opset16_default", X, rois, bidx, opset=16, oh=2, ow=2)
roi_case("no_rois", X, np.zeros((0, 4), np.float32), np.zeros((0,), np.int64), oh=2, ow=2)
roi_case("degenerate_half_pixel", X[:1], np.array([[5, 5, 5, 5]], np.float32),
         np.array([0], np.int64), ctm="half_pixel", oh=2, ow=2, check_onnx=False)
roi_case("outside_image", X[:1, :1], np.array([[60, 45, 90, 80], [-20, -20, -2, -3]], np.float32),
         np.array([0, 0], np.int64), ctm="output_half_pixel", mode="max", oh=2, ow=2, sr=2)


def roi_error(name, X, rois, bidx, status, text, **attrs):
    c = Case(f"roialign_err_{name}", opset=22)
    c.node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"], **attrs)
    c.save_error({"X": X, "rois": rois, "batch_indices": bidx},
                 {"Y": np.zeros((1, 1, 1, 1), np.float32)}, status, text)


Xs = np.zeros((1, 2, 4, 4), np.float32)
roi_error("batch_index_range", Xs, np.zeros((2, 4), np.float32), np.array([0, 1], np.int64),
          "invalid argument", "batch_indices[1] = 1 is outside [0, 1)")
roi_error("rois_5_cols", Xs, np.zeros((2, 5), np.float32), np.array([0, 0], np.int64),
          "shape error", "rois must be [num_rois, 4]")
roi_error("rois_count", Xs, np.zeros((2, 4), np.float32), np.array([0], np.int64), "shape error",
          "rois has 2 rows but batch_indices 1 values")
roi_error("x_rank3", np.zeros((2, 4, 4), np.float32), np.zeros((1, 4), np.float32),
          np.array([0], np.int64), "shape error", "X must have rank 4")
roi_error("mode_min", Xs, np.zeros((1, 4), np.float32), np.array([0], np.int64), "invalid model",
          "mode 'min' is not avg or max", mode="min")
roi_error("output_height_0", Xs, np.zeros((1, 4), np.float32), np.array([0], np.int64),
          "invalid model", "output_height and output_width must be in [1, 2^31)",
          output_height=0)
roi_error("bad_ctm", Xs, np.zeros((1, 4), np.float32), np.array([0], np.int64), "invalid model",
          "coordinate_transformation_mode 'align_corners' is not half_pixel",
          coordinate_transformation_mode="align_corners")
