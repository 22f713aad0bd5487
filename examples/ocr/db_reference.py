"""db_reference.py — a numpy reference of the DB post-processing that
examples/ocr/dbpost.c does (rapidocr-onnxruntime 1.4.4's DBPostProcess with
its config: thresh 0.3, box_thresh 0.5, unclip_ratio 1.6, 2x2 dilation,
score_mode fast; then its filter_tag_det_res and sorted_boxes), written
independently of the C code for test_ocr.py:

- regions: 8-connected, a union-find over row runs;
- minimum-area rectangle: hull by gift wrapping, then every hull edge's
  orientation tried at once with numpy;
- score: mean probability over the pixels whose centres are inside the
  rectangle (a vectorized half-plane test);
- unclip: the rectangle's rounded offset built explicitly (each corner plus
  a 64-point circle of radius area * ratio / perimeter, as pyclipper's round
  join), then its minimum-area rectangle;
- IoU of two convex quadrilaterals by Sutherland-Hodgman clipping.
"""
import math

import numpy as np

THRESH, BOX_THRESH, UNCLIP, MAX_CANDIDATES, MIN_SIZE = 0.3, 0.5, 1.6, 1000, 3


def regions(mask):
    """Lists of (y, x0, x1) runs, one list per 8-connected region."""
    parent = []

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    runs, prev = [], []
    for y in range(mask.shape[0]):
        row = np.concatenate(([0], mask[y].astype(np.int8), [0]))
        d = np.diff(row)
        starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0] - 1
        cur = []
        for x0, x1 in zip(starts.tolist(), ends.tolist()):
            k = len(runs)
            runs.append((y, x0, x1))
            parent.append(k)
            for j in prev:
                _, p0, p1 = runs[j]
                if p0 <= x1 + 1 and x0 <= p1 + 1:
                    a, b = find(j), find(k)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
            cur.append(k)
        prev = cur
    groups = {}
    for k in range(len(runs)):
        groups.setdefault(find(k), []).append(runs[k])
    return [groups[r] for r in sorted(groups)]


def hull(points):
    """Convex hull by gift wrapping (Jarvis march), counter-clockwise."""
    pts = sorted(set(points))
    if len(pts) < 3:
        return pts
    start = pts[0]
    out, cur = [], start
    while True:
        out.append(cur)
        cand = pts[0] if pts[0] != cur else pts[1]
        for p in pts:
            if p == cur:
                continue
            c = (cand[0] - cur[0]) * (p[1] - cur[1]) - (cand[1] - cur[1]) * (p[0] - cur[0])
            far = ((p[0] - cur[0]) ** 2 + (p[1] - cur[1]) ** 2 >
                   (cand[0] - cur[0]) ** 2 + (cand[1] - cur[1]) ** 2)
            if c < 0 or (c == 0 and far):
                cand = p
        cur = cand
        if cur == start or len(out) > len(pts):
            break
    return out


def min_rect(points):
    """(corners tl, tr, br, bl as rapidocr orders them, shorter side)."""
    h = np.array(hull([tuple(p) for p in points]), dtype=np.float64)
    if len(h) < 3:
        return None, 0.0
    e = np.roll(h, -1, axis=0) - h
    ang = np.arctan2(e[:, 1], e[:, 0])
    u = np.stack([np.cos(ang), np.sin(ang)], 1)             # k x 2
    n = np.stack([-np.sin(ang), np.cos(ang)], 1)
    pu, pn = h @ u.T, h @ n.T                                # points x k
    area = (pu.max(0) - pu.min(0)) * (pn.max(0) - pn.min(0))
    k = int(np.argmin(area))
    a0, a1, b0, b1 = pu[:, k].min(), pu[:, k].max(), pn[:, k].min(), pn[:, k].max()
    corners = [a * u[k] + b * n[k] for a, b in ((a0, b0), (a1, b0), (a1, b1), (a0, b1))]
    c = sorted(corners, key=lambda p: (p[0], p[1]))
    tl, bl = (c[0], c[1]) if c[1][1] > c[0][1] else (c[1], c[0])
    tr, br = (c[2], c[3]) if c[3][1] > c[2][1] else (c[3], c[2])
    return np.array([tl, tr, br, bl]), min(a1 - a0, b1 - b0)


def inside(quad, xs, ys):
    """Pixel centres (xs, ys) inside the convex quad, edges included."""
    s = None
    signs = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        signs.append((b[0] - a[0]) * (ys - a[1]) - (b[1] - a[1]) * (xs - a[0]))
    pos = np.all([c >= -1e-9 for c in signs], axis=0)
    neg = np.all([c <= 1e-9 for c in signs], axis=0)
    s = pos | neg
    return s


def score(prob, box):
    h, w = prob.shape
    x0 = int(np.clip(np.floor(box[:, 0].min()), 0, w - 1))
    x1 = int(np.clip(np.ceil(box[:, 0].max()), 0, w - 1))
    y0 = int(np.clip(np.floor(box[:, 1].min()), 0, h - 1))
    y1 = int(np.clip(np.ceil(box[:, 1].max()), 0, h - 1))
    q = np.trunc(box - [x0, y0])
    ys, xs = np.mgrid[0:y1 - y0 + 1, 0:x1 - x0 + 1]
    m = inside(q, xs, ys)
    return float(prob[y0:y1 + 1, x0:x1 + 1][m].mean()) if m.any() else 0.0


def unclip(box):
    area = 0.5 * abs(sum(box[i, 0] * box[(i + 1) % 4, 1] - box[(i + 1) % 4, 0] * box[i, 1]
                         for i in range(4)))
    perim = sum(math.dist(box[i], box[(i + 1) % 4]) for i in range(4))
    d = area * UNCLIP / perim
    t = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    circle = np.stack([np.cos(t), np.sin(t)], 1) * d
    return (box[:, None, :] + circle[None]).reshape(-1, 2)


def boxes(prob, dst_w, dst_h):
    """[(4x2 corners, score)] in image pixels, filtered and sorted."""
    h, w = prob.shape
    m = prob > THRESH
    d = m.copy()
    d[1:, :] |= m[:-1, :]
    d[:, 1:] |= m[:, :-1]
    d[1:, 1:] |= m[:-1, :-1]
    out = []
    for runs in regions(d)[:MAX_CANDIDATES]:
        pts = [(x, y) for y, x0, x1 in runs for x in (x0, x1)]
        box, side = min_rect(pts)
        if box is None or side < MIN_SIZE:
            continue
        s = score(prob, box)
        if s < BOX_THRESH:
            continue
        big, side = min_rect([tuple(p) for p in unclip(box)])
        if big is None or side < MIN_SIZE + 2:
            continue
        big[:, 0] = np.clip(np.round(big[:, 0] / w * dst_w), 0, dst_w)
        big[:, 1] = np.clip(np.round(big[:, 1] / h * dst_h), 0, dst_h)
        # order (two leftmost by y: tl, bl; two rightmost: tr, br), clip, size filter
        c = big[np.argsort(big[:, 0], kind="stable")]
        l, r = c[:2][np.argsort(c[:2, 1], kind="stable")], c[2:][np.argsort(c[2:, 1], kind="stable")]
        q = np.array([l[0], r[0], r[1], l[1]])
        q[:, 0] = np.trunc(np.clip(q[:, 0], 0, dst_w - 1))
        q[:, 1] = np.trunc(np.clip(q[:, 1], 0, dst_h - 1))
        if int(np.linalg.norm(q[0] - q[1])) <= 3 or int(np.linalg.norm(q[0] - q[3])) <= 3:
            continue
        out.append((q, s))
    out.sort(key=lambda b: (b[0][0][1], b[0][0][0]))
    for i in range(len(out) - 1):
        for j in range(i, -1, -1):
            if abs(out[j + 1][0][0][1] - out[j][0][0][1]) < 10 and out[j + 1][0][0][0] < out[j][0][0][0]:
                out[j], out[j + 1] = out[j + 1], out[j]
            else:
                break
    return out


def _clip(poly, a, b):
    def side(p):
        return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
    out = []
    for i in range(len(poly)):
        p, q = poly[i], poly[(i + 1) % len(poly)]
        sp, sq = side(p), side(q)
        if sp >= 0:
            out.append(p)
        if (sp >= 0) != (sq >= 0):
            t = sp / (sp - sq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return out


def _area(poly):
    return 0.5 * abs(sum(poly[i][0] * poly[(i + 1) % len(poly)][1] -
                         poly[(i + 1) % len(poly)][0] * poly[i][1] for i in range(len(poly))))


def _ccw(q):
    q = [tuple(map(float, p)) for p in q]
    s = sum(q[i][0] * q[(i + 1) % 4][1] - q[(i + 1) % 4][0] * q[i][1] for i in range(4))
    return q if s > 0 else q[::-1]


def iou(qa, qb):
    a, b = _ccw(qa), _ccw(qb)
    inter = a
    for i in range(4):
        if not inter:
            break
        inter = _clip(inter, b[i], b[(i + 1) % 4])
    ia = _area(inter) if len(inter) >= 3 else 0.0
    u = _area(a) + _area(b) - ia
    return ia / u if u > 0 else 0.0
