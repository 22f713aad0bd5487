/*
 * dbpost.c — DB post-processing for the PP-OCR detector (see dbpost.h).
 *
 * binarize (prob > thresh) -> dilate 2x2 -> 8-connected regions (row runs,
 * union-find) -> convex hull of each region's pixel centres -> minimum-area
 * rectangle (rotating over the hull edges) -> score = mean probability
 * inside the rectangle -> unclip (each side pushed out by
 * area * ratio / perimeter, which is the minimum-area rectangle of the
 * rounded offset polygon) -> scale to the image -> order the corners,
 * clip, drop boxes with a side <= 3 px -> sort top-to-bottom then
 * left-to-right (boxes whose tops are within 10 px count as one row).
 */
#include "dbpost.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SIZE 3

void ocr_db_defaults(ocr_db_params *p) {
    p->thresh = 0.3f;
    p->box_thresh = 0.5f;
    p->unclip_ratio = 1.6f;
    p->max_candidates = 1000;
    p->use_dilation = 1;
}

typedef struct run {
    int y, x0, x1, label;
} run;

typedef struct pt {
    double x, y;
} pt;

static int uf_find(int *par, int x) {
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

static void uf_union(int *par, int a, int b) {
    a = uf_find(par, a);
    b = uf_find(par, b);
    if (a < b)
        par[b] = a;
    else if (b < a)
        par[a] = b;
}

static int cmp_pt(const void *pa, const void *pb) {
    const pt *a = pa, *b = pb;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    return 0;
}

static double cross(pt o, pt a, pt b) {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

/* Andrew's monotone chain; p is sorted in place; hull gets up to n + 1
 * points (counter-clockwise, no repeats). Returns the hull size. */
static int convex_hull(pt *p, int n, pt *hull) {
    qsort(p, (size_t)n, sizeof *p, cmp_pt);
    if (n < 3) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (m == 0 || cmp_pt(&hull[m - 1], &p[i]) != 0) hull[m++] = p[i];
        return m;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        while (k >= 2 && cross(hull[k - 2], hull[k - 1], p[i]) <= 0)
            k--;
        hull[k++] = p[i];
    }
    for (int i = n - 2, t = k + 1; i >= 0; i--) {
        while (k >= t && cross(hull[k - 2], hull[k - 1], p[i]) <= 0)
            k--;
        hull[k++] = p[i];
    }
    return k - 1;
}

/* The minimum-area rectangle around the convex polygon h[0..n) as four
 * corners ordered like rapidocr's get_mini_boxes (tl, tr, br, bl by the
 * x-then-y rule); returns its shorter side (0 for fewer than 3 points). */
static double min_area_rect(const pt *h, int n, pt box[4]) {
    if (n < 3) {
        for (int i = 0; i < 4; i++)
            box[i] = n ? h[0] : (pt){0, 0};
        return 0;
    }
    double best = INFINITY, side = 0;
    pt c[4] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
    for (int i = 0; i < n; i++) {
        pt a = h[i], b = h[(i + 1) % n];
        double dx = b.x - a.x, dy = b.y - a.y, len = sqrt(dx * dx + dy * dy);
        if (len == 0) continue;
        double ux = dx / len, uy = dy / len; /* along the edge; normal (-uy, ux) */
        double u0 = INFINITY, u1 = -INFINITY, v0 = INFINITY, v1 = -INFINITY;
        for (int j = 0; j < n; j++) {
            double u = h[j].x * ux + h[j].y * uy, v = -h[j].x * uy + h[j].y * ux;
            u0 = fmin(u0, u);
            u1 = fmax(u1, u);
            v0 = fmin(v0, v);
            v1 = fmax(v1, v);
        }
        double area = (u1 - u0) * (v1 - v0);
        if (area < best - 1e-9) {
            best = area;
            side = fmin(u1 - u0, v1 - v0);
            double us[4] = {u0, u1, u1, u0}, vs[4] = {v0, v0, v1, v1};
            for (int k = 0; k < 4; k++)
                c[k] = (pt){us[k] * ux - vs[k] * uy, us[k] * uy + vs[k] * ux};
        }
    }
    /* order: sort by x; of the two left points the upper is tl, of the two
     * right points the upper is tr */
    qsort(c, 4, sizeof *c, cmp_pt);
    int i1 = 1, i4 = 0, i2 = 3, i3 = 2;
    if (c[1].y > c[0].y) i1 = 0, i4 = 1;
    if (c[3].y > c[2].y) i2 = 2, i3 = 3;
    box[0] = c[i1];
    box[1] = c[i2];
    box[2] = c[i3];
    box[3] = c[i4];
    return side;
}

/* Mean of prob over the polygon box (corners truncated to integers, edges
 * included), within its clipped bounding box: rapidocr's box_score_fast. */
static double box_score(const float *prob, int h, int w, const pt box[4]) {
    double mnx = box[0].x, mxx = box[0].x, mny = box[0].y, mxy = box[0].y;
    for (int i = 1; i < 4; i++) {
        mnx = fmin(mnx, box[i].x);
        mxx = fmax(mxx, box[i].x);
        mny = fmin(mny, box[i].y);
        mxy = fmax(mxy, box[i].y);
    }
    int x0 = (int)fmin(fmax(floor(mnx), 0), w - 1), x1 = (int)fmin(fmax(ceil(mxx), 0), w - 1);
    int y0 = (int)fmin(fmax(floor(mny), 0), h - 1), y1 = (int)fmin(fmax(ceil(mxy), 0), h - 1);
    pt q[4];
    for (int i = 0; i < 4; i++)
        q[i] = (pt){(double)(int)(box[i].x - x0), (double)(int)(box[i].y - y0)};
    double sum = 0;
    long cnt = 0;
    for (int y = 0; y <= y1 - y0; y++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < 4; i++) {
            pt a = q[i], b = q[(i + 1) % 4];
            if ((y < a.y && y < b.y) || (y > a.y && y > b.y)) continue;
            if (a.y == b.y) {
                lo = fmin(lo, fmin(a.x, b.x));
                hi = fmax(hi, fmax(a.x, b.x));
            } else {
                double x = a.x + (y - a.y) * (b.x - a.x) / (b.y - a.y);
                lo = fmin(lo, x);
                hi = fmax(hi, x);
            }
        }
        if (lo > hi) continue;
        int xa = (int)fmax(ceil(lo - 1e-9), 0), xb = (int)fmin(floor(hi + 1e-9), x1 - x0);
        const float *row = prob + (size_t)(y + y0) * (size_t)w + x0;
        for (int x = xa; x <= xb; x++)
            sum += row[x];
        if (xb >= xa) cnt += xb - xa + 1;
    }
    return cnt ? sum / (double)cnt : 0;
}

/* Pushes each side of the rectangle box out by area * ratio / perimeter. */
static void unclip(pt box[4], double ratio) {
    double area = 0, perim = 0;
    for (int i = 0; i < 4; i++) {
        pt a = box[i], b = box[(i + 1) % 4];
        area += a.x * b.y - b.x * a.y;
        perim += hypot(b.x - a.x, b.y - a.y);
    }
    area = fabs(area) / 2;
    if (perim <= 0) return;
    double d = area * ratio / perim;
    double l1 = hypot(box[1].x - box[0].x, box[1].y - box[0].y);
    double l2 = hypot(box[3].x - box[0].x, box[3].y - box[0].y);
    if (l1 <= 0 || l2 <= 0) return;
    pt e1 = {(box[1].x - box[0].x) / l1, (box[1].y - box[0].y) / l1};
    pt e2 = {(box[3].x - box[0].x) / l2, (box[3].y - box[0].y) / l2};
    static const int s1[4] = {-1, 1, 1, -1}, s2[4] = {-1, -1, 1, 1};
    for (int i = 0; i < 4; i++) {
        box[i].x += d * (s1[i] * e1.x + s2[i] * e2.x);
        box[i].y += d * (s1[i] * e1.y + s2[i] * e2.y);
    }
}

static int cmp_top_left(const void *pa, const void *pb) {
    const ocr_box *a = pa, *b = pb;
    if (a->pt[0][1] != b->pt[0][1]) return a->pt[0][1] < b->pt[0][1] ? -1 : 1;
    if (a->pt[0][0] != b->pt[0][0]) return a->pt[0][0] < b->pt[0][0] ? -1 : 1;
    return 0;
}

static void sort_boxes(ocr_box *b, int n) {
    qsort(b, (size_t)n, sizeof *b, cmp_top_left);
    for (int i = 0; i < n - 1; i++)
        for (int j = i; j >= 0; j--) {
            if (fabsf(b[j + 1].pt[0][1] - b[j].pt[0][1]) < 10 &&
                b[j + 1].pt[0][0] < b[j].pt[0][0]) {
                ocr_box t = b[j];
                b[j] = b[j + 1];
                b[j + 1] = t;
            } else {
                break;
            }
        }
}

/* Orders the corners tl, tr, br, bl (two leftmost by y, two rightmost by
 * y), clips them to the image as integers; returns 0 when a side is <= 3. */
static int finish_box(ocr_box *o, const pt in[4], int dst_w, int dst_h) {
    pt p[4];
    memcpy(p, in, sizeof p);
    for (int i = 1; i < 4; i++) /* insertion sort by x (stable) */
        for (int j = i; j > 0 && p[j].x < p[j - 1].x; j--) {
            pt t = p[j];
            p[j] = p[j - 1];
            p[j - 1] = t;
        }
    pt tl = p[0], bl = p[1], tr = p[2], br = p[3], t;
    if (bl.y < tl.y) t = tl, tl = bl, bl = t;
    if (br.y < tr.y) t = tr, tr = br, br = t;
    pt q[4] = {tl, tr, br, bl};
    for (int i = 0; i < 4; i++) {
        o->pt[i][0] = (float)(int)fmin(fmax(q[i].x, 0), dst_w - 1);
        o->pt[i][1] = (float)(int)fmin(fmax(q[i].y, 0), dst_h - 1);
    }
    int rw = (int)hypotf(o->pt[0][0] - o->pt[1][0], o->pt[0][1] - o->pt[1][1]);
    int rh = (int)hypotf(o->pt[0][0] - o->pt[3][0], o->pt[0][1] - o->pt[3][1]);
    return rw > 3 && rh > 3;
}

int ocr_db_boxes(const float *prob, int h, int w, int dst_w, int dst_h, const ocr_db_params *p,
                 ocr_box **out, int *n_out) {
    *out = NULL;
    *n_out = 0;
    int rc = -1;
    unsigned char *mask = malloc((size_t)h * (size_t)w);
    run *runs = NULL;
    int *par = NULL, *comp_of = NULL, *start = NULL;
    pt *pts = NULL, *hull = NULL;
    ocr_box *boxes = NULL;
    size_t nruns = 0, cap = 0;
    if (!mask) goto done;
    /* binarize, then dilate with a 2x2 kernel anchored at its centre (1,1):
     * out(x, y) = max over x-1..x, y-1..y */
    for (size_t i = 0; i < (size_t)h * (size_t)w; i++)
        mask[i] = prob[i] > p->thresh;
    if (p->use_dilation) {
        for (int y = h - 1; y >= 0; y--)
            for (int x = w - 1; x >= 0; x--) {
                unsigned char *m = mask + (size_t)y * (size_t)w + x;
                unsigned char v = m[0];
                if (x > 0) v |= m[-1];
                if (y > 0) v |= m[-w];
                if (x > 0 && y > 0) v |= m[-w - 1];
                m[0] = v;
            }
    }
    /* runs per row, 8-connected to the previous row's runs */
    size_t prev0 = 0, prev1 = 0;
    for (int y = 0; y < h; y++) {
        const unsigned char *m = mask + (size_t)y * (size_t)w;
        size_t cur0 = nruns;
        for (int x = 0; x < w;) {
            if (!m[x]) {
                x++;
                continue;
            }
            int x0 = x;
            while (x < w && m[x])
                x++;
            if (nruns == cap) {
                size_t nc = cap ? cap * 2 : 1024;
                run *r = realloc(runs, nc * sizeof *r);
                int *pp = realloc(par, nc * sizeof *pp);
                if (r) runs = r;
                if (pp) par = pp;
                if (!r || !pp) goto done;
                cap = nc;
            }
            runs[nruns] = (run){y, x0, x - 1, (int)nruns};
            par[nruns] = (int)nruns;
            nruns++;
        }
        size_t cur1 = nruns;
        for (size_t i = cur0, j = prev0; i < cur1 && j < prev1;) {
            if (runs[j].x1 + 1 >= runs[i].x0 && runs[i].x1 + 1 >= runs[j].x0)
                uf_union(par, (int)i, (int)j);
            if (runs[j].x1 < runs[i].x1)
                j++;
            else
                i++;
        }
        prev0 = cur0;
        prev1 = cur1;
    }
    /* regions in order of first appearance, their runs grouped */
    comp_of = malloc((nruns + 1) * sizeof *comp_of);
    int *ncomp_runs = NULL;
    int ncomp = 0;
    if (!comp_of) goto done;
    for (size_t i = 0; i < nruns; i++) {
        int r = uf_find(par, (int)i);
        if (r == (int)i) comp_of[i] = ncomp++;
        runs[i].label = r;
    }
    start = calloc((size_t)ncomp + 1, sizeof *start);
    ncomp_runs = calloc((size_t)ncomp + 1, sizeof *ncomp_runs);
    pts = malloc((2 * nruns + 1) * sizeof *pts);
    hull = malloc((2 * nruns + 2) * sizeof *hull);
    int *order = malloc((nruns + 1) * sizeof *order);
    boxes = malloc(((size_t)ncomp + 1) * sizeof *boxes);
    if (!start || !ncomp_runs || !pts || !hull || !order || !boxes) {
        free(ncomp_runs);
        free(order);
        goto done;
    }
    for (size_t i = 0; i < nruns; i++)
        start[comp_of[runs[i].label] + 1]++;
    for (int c = 0; c < ncomp; c++)
        start[c + 1] += start[c];
    for (size_t i = 0; i < nruns; i++) {
        int c = comp_of[runs[i].label];
        order[start[c] + ncomp_runs[c]++] = (int)i;
    }
    int nb = 0, limit = ncomp < p->max_candidates ? ncomp : p->max_candidates;
    for (int c = 0; c < limit; c++) {
        int np = 0;
        for (int k = start[c]; k < start[c + 1]; k++) {
            const run *r = &runs[order[k]];
            pts[np++] = (pt){r->x0, r->y};
            if (r->x1 != r->x0) pts[np++] = (pt){r->x1, r->y};
        }
        int nh = convex_hull(pts, np, hull);
        pt box[4];
        double sside = min_area_rect(hull, nh, box);
        if (sside < MIN_SIZE) continue;
        double score = box_score(prob, h, w, box);
        if (p->box_thresh > score) continue;
        unclip(box, p->unclip_ratio);
        pt big[4];
        sside = min_area_rect(box, 4, big);
        if (sside < MIN_SIZE + 2) continue;
        pt scaled[4];
        for (int i = 0; i < 4; i++) {
            scaled[i].x = fmin(fmax(rint(big[i].x / w * dst_w), 0), dst_w);
            scaled[i].y = fmin(fmax(rint(big[i].y / h * dst_h), 0), dst_h);
        }
        if (!finish_box(&boxes[nb], scaled, dst_w, dst_h)) continue;
        boxes[nb++].score = (float)score;
    }
    free(ncomp_runs);
    free(order);
    sort_boxes(boxes, nb);
    *out = boxes;
    *n_out = nb;
    boxes = NULL;
    rc = 0;
done:
    free(mask);
    free(runs);
    free(par);
    free(comp_of);
    free(start);
    free(pts);
    free(hull);
    free(boxes);
    return rc;
}
