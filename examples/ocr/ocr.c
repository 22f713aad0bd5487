/*
 * ocr.c — PP-OCRv4 text recognition on libmopt, the whole pipeline in one C
 * program (issue 15): read a PNG/JPEG, detect text (DB detector, dbpost.c),
 * cut out and straighten each box (warp.c), fix upside-down lines with the
 * direction classifier, recognize each line (CRNN + CTC greedy decoding)
 * and print box, text and confidence, with the time of every stage.
 * Models and character dictionary (the recognizer's "character"
 * metadata_props entry) come from the rapidocr-onnxruntime wheel.
 *
 *   ocr IMAGE --models DIR [--threads N] [--config OPTIONS.yaml] [--json]
 *       [--no-cls] [--repeat N] [--box-thresh F] [--unclip F] [--text-score F]
 *       [--dump DIR]  (the det input and the first cls and rec batches as
 *       .npy files, for bench/compare.py --input)
 *   ocr dbpost PROB.f32 H W IMG_W IMG_H   (DB post-processing only: boxes of
 *       a raw H x W float32 probability map, for the tests)
 *
 * DIR holds ch_PP-OCRv4_det_infer.onnx, ch_ppocr_mobile_v2.0_cls_infer.onnx
 * and ch_PP-OCRv4_rec_infer.onnx (or --det/--cls/--rec give each path).
 * Output: one line per box, "x0,y0 x1,y1 x2,y2 x3,y3<TAB>confidence<TAB>text"
 * (corners tl, tr, br, bl in image pixels) on stdout, stage times on stderr;
 * --json prints one JSON object with both instead.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mopt/mopt.h>

#define EX_PROG "ocr"
#include "ex_cli.h"

#include "dbpost.h"
#include "image.h"
#include "warp.h"

/* rapidocr-onnxruntime 1.4.4's config.yaml */
#define MAX_SIDE_LEN 2000
#define MIN_SIDE_LEN 30
#define MIN_HEIGHT 30
#define WIDTH_HEIGHT_RATIO 8
#define DET_LIMIT_SIDE 736 /* limit_type min: the shorter side grows to this */
#define CLS_H 48
#define CLS_W 192
#define CLS_THRESH 0.9
#define REC_H 48
#define REC_W 320
#define BATCH 6

enum {
    ST_READ,
    ST_DET_PRE,
    ST_DET_INFER,
    ST_DB_POST,
    ST_CROP,
    ST_CLS,
    ST_REC_PRE,
    ST_REC_INFER,
    ST_CTC,
    ST_COUNT
};
static const char *const stage_name[ST_COUNT] = {"read",           "det preprocess", "det infer",
                                                 "DB postprocess", "crop/rotate",    "cls",
                                                 "rec preprocess", "rec infer",      "CTC decode"};

/* ---- models --------------------------------------------------------------- */

typedef struct net {
    mopt_model *model;
    mopt_session *session;
} net;

static void net_free(net *n) {
    mopt_session_destroy(n->session);
    mopt_model_destroy(n->model);
    n->session = NULL;
    n->model = NULL;
}

static int net_load(net *n, const char *path, const mopt_options *o) {
    mopt_status st = mopt_model_load(path, o, &n->model);
    if (!st) st = mopt_session_create(n->model, o, &n->session);
    if (st) {
        fprintf(stderr, "ocr: cannot load %s: %s (%s)\n", path, mopt_status_string(st),
                mopt_last_error());
        net_free(n);
        return 1;
    }
    return 0;
}

/* Runs a one-input, one-output model on x (N x 3 x H x W); *out is owned. */
static int net_run(net *n, const float *x, int64_t N, int64_t H, int64_t W, mopt_tensor **out) {
    int64_t dims[4] = {N, 3, H, W};
    mopt_tensor *in = NULL;
    *out = NULL;
    mopt_status st = mopt_tensor_wrap_const(MOPT_DTYPE_F32, 4, dims, x,
                                            (size_t)(N * 3 * H * W) * sizeof(float), &in);
    if (!st)
        st = mopt_session_run(n->session, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, out);
    mopt_tensor_destroy(in);
    if (st) return fail_mopt("inference", st);
    return 0;
}

/* ---- --dump: model inputs as .npy (for bench/compare.py --input) ---------- */

static const char *dump_dir;

/* Writes x (N x 3 x H x W float32) to DIR/NAME.npy (NPY format 1.0) once. */
static void dump_npy(const char *name, const float *x, int64_t N, int64_t H, int64_t W) {
    char path[4096], head[128];
    if (!dump_dir) return;
    snprintf(path, sizeof path, "%s/%s.npy", dump_dir, name);
    FILE *f = fopen(path, "rb");
    if (f) { /* the first batch only */
        fclose(f);
        return;
    }
    int n = snprintf(head, sizeof head,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld, 3, %lld, %lld), }",
                     (long long)N, (long long)H, (long long)W);
    int total = (10 + n + 1 + 63) / 64 * 64; /* magic, version, length, header, '\n' */
    while (10 + n + 1 < total)
        head[n++] = ' ';
    head[n++] = '\n';
    f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "ocr: --dump %s: %s\n", path, strerror(errno));
        return;
    }
    unsigned char pre[10] = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff), (unsigned char)(n >> 8)};
    size_t cnt = (size_t)(N * 3 * H * W);
    if (fwrite(pre, 1, 10, f) != 10 || fwrite(head, 1, (size_t)n, f) != (size_t)n ||
        fwrite(x, sizeof *x, cnt, f) != cnt)
        fprintf(stderr, "ocr: --dump %s: write failed\n", path);
    fclose(f);
}

/* ---- dictionary ------------------------------------------------------------ */

typedef struct dict {
    char *buf;
    const char **sym; /* sym[0] = blank (""), then the metadata lines, then " " */
    int n;
} dict;

static int dict_load(dict *d, const mopt_model *rec) {
    const char *v = NULL;
    if (mopt_model_metadata(rec, "character", &v) != MOPT_OK)
        return fail("the recognizer has no \"character\" metadata (its dictionary)", NULL);
    size_t len = strlen(v), lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += v[i] == '\n';
    d->buf = malloc(len + 1);
    d->sym = malloc((lines + 2) * sizeof *d->sym);
    if (!d->buf || !d->sym) return fail("out of memory", NULL);
    memcpy(d->buf, v, len + 1);
    d->n = 0;
    d->sym[d->n++] = "";
    for (char *s = d->buf;;) {
        char *e = strchr(s, '\n');
        if (e) *e = 0;
        if (e || *s) d->sym[d->n++] = s; /* a trailing newline adds no entry */
        if (!e) break;
        s = e + 1;
    }
    d->sym[d->n++] = " ";
    return 0;
}

/* ---- pipeline --------------------------------------------------------------- */

typedef struct line {
    ocr_box box;
    ex_image crop;
    double ratio; /* crop width / height */
    int flipped;
    char *text;
    float conf;
} line;

typedef struct pipeline {
    net det, cls, rec;
    dict dict;
    ocr_db_params db;
    int use_cls;
    float text_score;
} pipeline;

typedef struct result {
    int w, h;
    line *lines;
    int n;
    double t[ST_COUNT];
} result;

static void result_free(result *r) {
    for (int i = 0; i < r->n; i++) {
        ex_image_free(&r->lines[i].crop);
        free(r->lines[i].text);
    }
    free(r->lines);
    memset(r, 0, sizeof *r);
}

static int round32(double v) { return (int)(rint(v / 32) * 32); }

/* Writes img (RGB) resized into x as BGR planes normalized (v/255 - 0.5)/0.5,
 * rows of `stride` floats (the rest of each row left as it is). */
static void to_planes(const ex_image *img, float *x, int stride, int plane_h) {
    size_t plane = (size_t)plane_h * (size_t)stride;
    for (int y = 0; y < img->h; y++) {
        const unsigned char *p = img->px + (size_t)y * (size_t)img->w * 3;
        for (int xx = 0; xx < img->w; xx++, p += 3)
            for (int c = 0; c < 3; c++)
                x[(size_t)c * plane + (size_t)y * stride + xx] = p[2 - c] / 127.5f - 1.0f;
    }
}

static const line *sort_lines_ctx;
static int cmp_by_ratio(const void *pa, const void *pb) {
    int a = *(const int *)pa, b = *(const int *)pb;
    double ra = sort_lines_ctx[a].ratio, rb = sort_lines_ctx[b].ratio;
    if (ra != rb) return ra < rb ? -1 : 1;
    return a - b;
}

/* Indices of lines by crop aspect ratio (as rapidocr batches them). */
static int *order_by_ratio(const line *l, int n) {
    int *idx = malloc(((size_t)n + 1) * sizeof *idx);
    if (!idx) return NULL;
    for (int i = 0; i < n; i++)
        idx[i] = i;
    sort_lines_ctx = l;
    qsort(idx, (size_t)n, sizeof *idx, cmp_by_ratio);
    return idx;
}

/* The width a crop takes at height hh: ceil(hh * ratio), at most max_w. */
static int scaled_width(const ex_image *im, int hh, int max_w) {
    double r = (double)im->w / im->h;
    double w = ceil(hh * r);
    if (w > max_w) return max_w;
    return w < 1 ? 1 : (int)w;
}

static int run_cls(pipeline *p, result *r) {
    int *idx = order_by_ratio(r->lines, r->n);
    float *x = malloc((size_t)BATCH * 3 * CLS_H * CLS_W * sizeof *x);
    int rc = 1;
    if (!idx || !x) goto done;
    for (int b0 = 0; b0 < r->n; b0 += BATCH) {
        int nb = r->n - b0 < BATCH ? r->n - b0 : BATCH;
        memset(x, 0, (size_t)nb * 3 * CLS_H * CLS_W * sizeof *x);
        for (int k = 0; k < nb; k++) {
            const ex_image *c = &r->lines[idx[b0 + k]].crop;
            ex_image rs;
            if (ex_image_resize_bilinear(c, scaled_width(c, CLS_H, CLS_W), CLS_H, &rs) != 0)
                goto done;
            to_planes(&rs, x + (size_t)k * 3 * CLS_H * CLS_W, CLS_W, CLS_H);
            ex_image_free(&rs);
        }
        mopt_tensor *out = NULL;
        dump_npy("cls_x", x, nb, CLS_H, CLS_W);
        if (net_run(&p->cls, x, nb, CLS_H, CLS_W, &out)) goto done;
        const float *pr = mopt_tensor_data_const(out);
        int64_t ncls = mopt_tensor_dim(out, 1);
        for (int k = 0; k < nb && ncls >= 2; k++) {
            const float *q = pr + k * ncls;
            line *l = &r->lines[idx[b0 + k]];
            if (q[1] > q[0] && q[1] > CLS_THRESH) {
                ocr_rot180(&l->crop);
                l->flipped = 1;
            }
        }
        mopt_tensor_destroy(out);
    }
    rc = 0;
done:
    if (rc && (!idx || !x)) fail("out of memory", NULL);
    free(idx);
    free(x);
    return rc;
}

/* Appends the UTF-8 symbols of one CTC path: argmax per step, repeats
 * merged, blanks (0) dropped; conf = mean of the kept steps' maxima. */
static char *ctc_decode(const dict *d, const float *pr, int64_t T, int64_t C, float *conf) {
    size_t cap = 64, len = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
    double sum = 0;
    int kept = 0;
    int64_t prev = -1;
    for (int64_t t = 0; t < T; t++) {
        const float *q = pr + t * C;
        int64_t best = 0;
        for (int64_t c = 1; c < C; c++)
            if (q[c] > q[best]) best = c;
        if (best != 0 && best != prev && best < d->n) {
            size_t n = strlen(d->sym[best]);
            if (len + n + 1 > cap) {
                while (len + n + 1 > cap)
                    cap *= 2;
                char *ns = realloc(s, cap);
                if (!ns) {
                    free(s);
                    return NULL;
                }
                s = ns;
            }
            memcpy(s + len, d->sym[best], n);
            len += n;
            sum += q[best];
            kept++;
        }
        prev = best;
    }
    s[len] = 0;
    *conf = kept ? (float)(sum / kept) : 0.0f;
    return s;
}

static int run_rec(pipeline *p, result *r) {
    int *idx = order_by_ratio(r->lines, r->n);
    float *x = NULL;
    int rc = 1;
    if (!idx) return fail("out of memory", NULL);
    for (int b0 = 0; b0 < r->n; b0 += BATCH) {
        double t0 = now_ms();
        int nb = r->n - b0 < BATCH ? r->n - b0 : BATCH;
        double max_ratio = (double)REC_W / REC_H;
        for (int k = 0; k < nb; k++) {
            const ex_image *c = &r->lines[idx[b0 + k]].crop;
            max_ratio = fmax(max_ratio, (double)c->w / c->h);
        }
        int W = (int)(REC_H * max_ratio);
        free(x);
        x = calloc((size_t)nb * 3 * REC_H * (size_t)W, sizeof *x);
        if (!x) {
            fail("out of memory", NULL);
            goto done;
        }
        for (int k = 0; k < nb; k++) {
            const ex_image *c = &r->lines[idx[b0 + k]].crop;
            ex_image rs;
            if (ex_image_resize_bilinear(c, scaled_width(c, REC_H, W), REC_H, &rs) != 0) {
                fail("out of memory", NULL);
                goto done;
            }
            to_planes(&rs, x + (size_t)k * 3 * REC_H * W, W, REC_H);
            ex_image_free(&rs);
        }
        double t1 = now_ms();
        mopt_tensor *out = NULL;
        dump_npy("rec_x", x, nb, REC_H, W);
        if (net_run(&p->rec, x, nb, REC_H, W, &out)) goto done;
        double t2 = now_ms();
        const float *pr = mopt_tensor_data_const(out);
        int64_t T = mopt_tensor_dim(out, 1), C = mopt_tensor_dim(out, 2);
        for (int k = 0; k < nb; k++) {
            line *l = &r->lines[idx[b0 + k]];
            l->text = ctc_decode(&p->dict, pr + (size_t)k * T * C, T, C, &l->conf);
            if (!l->text) {
                mopt_tensor_destroy(out);
                fail("out of memory", NULL);
                goto done;
            }
        }
        mopt_tensor_destroy(out);
        r->t[ST_REC_PRE] += t1 - t0;
        r->t[ST_REC_INFER] += t2 - t1;
        r->t[ST_CTC] += now_ms() - t2;
    }
    rc = 0;
done:
    free(idx);
    free(x);
    return rc;
}

/* The whole pipeline on one file. */
static int run_pipeline(pipeline *p, const char *path, result *r) {
    memset(r, 0, sizeof *r);
    char err[256] = "";
    ex_image img = {0}, work = {0}, det_in = {0};
    float *x = NULL;
    mopt_tensor *prob = NULL;
    int rc = 1;

    double t0 = now_ms();
    if (ex_image_load(path, &img, err, sizeof err) != 0) {
        fprintf(stderr, "ocr: %s\n", err); /* err names the file */
        return 1;
    }
    r->w = img.w;
    r->h = img.h;
    double t1 = now_ms();
    r->t[ST_READ] = t1 - t0;

    /* rapidocr's global preprocess: longer side <= 2000, shorter >= 30 (both
     * to multiples of 32), then a black band above and below a very flat or
     * very low page */
    double ratio_w = 1, ratio_h = 1;
    int pad_top = 0;
    {
        int ww = img.w, hh = img.h;
        int mx = ww > hh ? ww : hh, mn = ww < hh ? ww : hh;
        double s = 1;
        if (mx > MAX_SIDE_LEN) s = (double)MAX_SIDE_LEN / mx;
        if (mn * s < MIN_SIDE_LEN) s = (double)MIN_SIDE_LEN / (mn * s) * s;
        if (s != 1) {
            int nw = round32((int)(ww * s)), nh = round32((int)(hh * s));
            if (nw <= 0 || nh <= 0 || ex_image_resize_bilinear(&img, nw, nh, &work) != 0) {
                fail("cannot resize the page", NULL);
                goto done;
            }
            ratio_w = (double)ww / nw;
            ratio_h = (double)hh / nh;
        } else {
            work = img;
            img = (ex_image){0};
        }
        if (work.h <= MIN_HEIGHT || (double)work.w / work.h > WIDTH_HEIGHT_RATIO) {
            int nh = (int)(work.w / WIDTH_HEIGHT_RATIO);
            if (nh < MIN_HEIGHT) nh = MIN_HEIGHT;
            pad_top = abs(nh * 2 - work.h) / 2;
            ex_image pad = {work.w, work.h + 2 * pad_top, 3, NULL};
            pad.px = calloc((size_t)pad.w * (size_t)pad.h * 3, 1);
            if (!pad.px) {
                fail("out of memory", NULL);
                goto done;
            }
            memcpy(pad.px + (size_t)pad_top * work.w * 3, work.px, (size_t)work.w * work.h * 3);
            ex_image_free(&work);
            work = pad;
        }
    }
    /* det preprocess: shorter side to 736 (never shrinks), multiples of 32 */
    int dw, dh;
    {
        int mn = work.w < work.h ? work.w : work.h;
        double s = mn < DET_LIMIT_SIDE ? (double)DET_LIMIT_SIDE / mn : 1.0;
        dw = round32((int)(work.w * s));
        dh = round32((int)(work.h * s));
        if (dw <= 0 || dh <= 0) {
            fail("the page is too small to detect text in", NULL);
            goto done;
        }
        x = malloc((size_t)3 * dw * dh * sizeof *x);
        if (!x || ex_image_resize_bilinear(&work, dw, dh, &det_in) != 0) {
            fail("out of memory", NULL);
            goto done;
        }
        to_planes(&det_in, x, dw, dh);
        ex_image_free(&det_in);
    }
    double t2 = now_ms();
    r->t[ST_DET_PRE] = t2 - t1;
    dump_npy("det_x", x, 1, dh, dw);
    if (net_run(&p->det, x, 1, dh, dw, &prob)) goto done;
    double t3 = now_ms();
    r->t[ST_DET_INFER] = t3 - t2;

    ocr_box *boxes = NULL;
    int nbox = 0;
    if (mopt_tensor_rank(prob) != 4 || mopt_tensor_dim(prob, 2) != dh ||
        mopt_tensor_dim(prob, 3) != dw) {
        fail("the detector's output is not a 1 x 1 x H x W map", NULL);
        goto done;
    }
    if (ocr_db_boxes(mopt_tensor_data_const(prob), dh, dw, work.w, work.h, &p->db, &boxes, &nbox)) {
        fail("out of memory", NULL);
        goto done;
    }
    double t4 = now_ms();
    r->t[ST_DB_POST] = t4 - t3;

    r->lines = calloc((size_t)nbox + 1, sizeof *r->lines);
    if (!r->lines) {
        free(boxes);
        fail("out of memory", NULL);
        goto done;
    }
    for (int i = 0; i < nbox; i++) {
        float(*q)[2] = boxes[i].pt;
        int cw = (int)fmax(hypot(q[0][0] - q[1][0], q[0][1] - q[1][1]),
                           hypot(q[2][0] - q[3][0], q[2][1] - q[3][1]));
        int ch = (int)fmax(hypot(q[0][0] - q[3][0], q[0][1] - q[3][1]),
                           hypot(q[1][0] - q[2][0], q[1][1] - q[2][1]));
        line *l = &r->lines[r->n];
        if (ocr_warp_quad(&work, &boxes[i].pt[0][0], cw, ch, &l->crop) != 0) continue;
        if ((double)l->crop.h / l->crop.w >= 1.5) {
            ex_image turned;
            if (ocr_rot90(&l->crop, &turned) != 0) {
                free(boxes);
                fail("out of memory", NULL);
                goto done;
            }
            ex_image_free(&l->crop);
            l->crop = turned;
        }
        l->ratio = (double)l->crop.w / l->crop.h;
        l->box = boxes[i];
        r->n++;
    }
    free(boxes);
    double t5 = now_ms();
    r->t[ST_CROP] = t5 - t4;

    if (p->use_cls && r->n && run_cls(p, r)) goto done;
    r->t[ST_CLS] = now_ms() - t5;
    if (r->n && run_rec(p, r)) goto done;

    /* drop low-confidence lines; boxes back to the file's pixels */
    int keep = 0;
    for (int i = 0; i < r->n; i++) {
        line *l = &r->lines[i];
        if (l->conf < p->text_score) {
            ex_image_free(&l->crop);
            free(l->text);
            continue;
        }
        for (int k = 0; k < 4; k++) {
            double bx = l->box.pt[k][0] * ratio_w, by = (l->box.pt[k][1] - pad_top) * ratio_h;
            l->box.pt[k][0] = (float)fmin(fmax(bx, 0), r->w);
            l->box.pt[k][1] = (float)fmin(fmax(by, 0), r->h);
        }
        r->lines[keep++] = *l;
    }
    r->n = keep;
    rc = 0;
done:
    mopt_tensor_destroy(prob);
    free(x);
    ex_image_free(&img);
    ex_image_free(&work);
    ex_image_free(&det_in);
    return rc;
}

/* ---- output ----------------------------------------------------------------- */

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void print_result(const result *r, const double *median, int repeat, int json,
                         double load_ms) {
    double total = 0;
    for (int s = 0; s < ST_COUNT; s++)
        total += median[s];
    if (json) {
        printf("{\"width\": %d, \"height\": %d, \"lines\": [", r->w, r->h);
        for (int i = 0; i < r->n; i++) {
            const line *l = &r->lines[i];
            printf("%s\n  {\"box\": [[%g, %g], [%g, %g], [%g, %g], [%g, %g]], \"text\": ",
                   i ? "," : "", l->box.pt[0][0], l->box.pt[0][1], l->box.pt[1][0], l->box.pt[1][1],
                   l->box.pt[2][0], l->box.pt[2][1], l->box.pt[3][0], l->box.pt[3][1]);
            json_string(l->text);
            printf(", \"confidence\": %.4f, \"det_score\": %.4f, \"flipped\": %s}", l->conf,
                   l->box.score, l->flipped ? "true" : "false");
        }
        printf("],\n \"load_ms\": %.3f, \"repeat\": %d, \"stages_ms\": {", load_ms, repeat);
        for (int s = 0; s < ST_COUNT; s++)
            printf("%s\"%s\": %.3f", s ? ", " : "", stage_name[s], median[s]);
        printf("}, \"total_ms\": %.3f}\n", total);
        return;
    }
    for (int i = 0; i < r->n; i++) {
        const line *l = &r->lines[i];
        printf("%g,%g %g,%g %g,%g %g,%g\t%.4f\t%s\n", l->box.pt[0][0], l->box.pt[0][1],
               l->box.pt[1][0], l->box.pt[1][1], l->box.pt[2][0], l->box.pt[2][1], l->box.pt[3][0],
               l->box.pt[3][1], l->conf, l->text);
    }
    fprintf(stderr, "ocr: %dx%d, %d lines; models loaded in %.1f ms; stage times%s:\n", r->w, r->h,
            r->n, load_ms, repeat > 1 ? " (median of the runs)" : "");
    for (int s = 0; s < ST_COUNT; s++)
        fprintf(stderr, "  %-15s %9.2f ms\n", stage_name[s], median[s]);
    fprintf(stderr, "  %-15s %9.2f ms\n", "total", total);
}

/* ---- dbpost command ------------------------------------------------------------ */

static int cmd_dbpost(int argc, char **argv) {
    if (argc != 7) return fail("usage", "ocr dbpost PROB.f32 H W IMG_W IMG_H");
    int h = atoi(argv[3]), w = atoi(argv[4]), iw = atoi(argv[5]), ih = atoi(argv[6]);
    if (h <= 0 || w <= 0 || iw <= 0 || ih <= 0) return fail("bad size", NULL);
    FILE *f = fopen(argv[2], "rb");
    if (!f) return fail(argv[2], strerror(errno));
    float *prob = malloc((size_t)h * w * sizeof *prob);
    size_t got = prob ? fread(prob, sizeof *prob, (size_t)h * w, f) : 0;
    fclose(f);
    if (got != (size_t)h * w) {
        free(prob);
        return fail(argv[2], "shorter than H x W float32 values");
    }
    ocr_db_params p;
    ocr_db_defaults(&p);
    ocr_box *b = NULL;
    int n = 0;
    int rc = ocr_db_boxes(prob, h, w, iw, ih, &p, &b, &n);
    free(prob);
    if (rc) return fail("out of memory", NULL);
    for (int i = 0; i < n; i++)
        printf("%g %g %g %g %g %g %g %g %.6f\n", b[i].pt[0][0], b[i].pt[0][1], b[i].pt[1][0],
               b[i].pt[1][1], b[i].pt[2][0], b[i].pt[2][1], b[i].pt[3][0], b[i].pt[3][1],
               b[i].score);
    free(b);
    return 0;
}

/* ---- main ---------------------------------------------------------------------- */

static int usage(void) {
    fprintf(stderr,
            "usage: ocr IMAGE --models DIR [--threads N] [--config OPTIONS.yaml] [--json]\n"
            "           [--no-cls] [--repeat N] [--box-thresh F] [--unclip F] [--text-score F]\n"
            "           [--det M.onnx] [--cls M.onnx] [--rec M.onnx] [--dump DIR]\n"
            "       ocr dbpost PROB.f32 H W IMG_W IMG_H\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "dbpost") == 0) return cmd_dbpost(argc, argv);
    const char *image = NULL, *models = NULL, *config = NULL, *paths[3] = {NULL, NULL, NULL};
    int threads = 0, json = 0, repeat = 1;
    pipeline p;
    memset(&p, 0, sizeof p);
    ocr_db_defaults(&p.db);
    p.use_cls = 1;
    p.text_score = 0.5f;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d;
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--no-cls")) {
            p.use_cls = 0;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (a[0] == '-' && a[1] == '-') {
            if (!v) {
                fprintf(stderr, "ocr: %s needs a value\n", a);
                return usage();
            }
            i++;
            if (!strcmp(a, "--models")) {
                models = v;
            } else if (!strcmp(a, "--dump")) {
                dump_dir = v;
            } else if (!strcmp(a, "--config")) {
                config = v;
            } else if (!strcmp(a, "--det")) {
                paths[0] = v;
            } else if (!strcmp(a, "--cls")) {
                paths[1] = v;
            } else if (!strcmp(a, "--rec")) {
                paths[2] = v;
            } else if (!strcmp(a, "--threads")) {
                if (!parse_double(v, 1, 256, &d) || d != (int)d)
                    return fail("--threads wants an integer 1..256, not", v);
                threads = (int)d;
            } else if (!strcmp(a, "--repeat")) {
                if (!parse_double(v, 1, 10000, &d) || d != (int)d)
                    return fail("--repeat wants an integer 1..10000, not", v);
                repeat = (int)d;
            } else if (!strcmp(a, "--box-thresh")) {
                if (!parse_double(v, 0, 1, &d)) return fail("--box-thresh wants 0..1, not", v);
                p.db.box_thresh = (float)d;
            } else if (!strcmp(a, "--unclip")) {
                if (!parse_double(v, 0, 10, &d)) return fail("--unclip wants 0..10, not", v);
                p.db.unclip_ratio = (float)d;
            } else if (!strcmp(a, "--text-score")) {
                if (!parse_double(v, 0, 1, &d)) return fail("--text-score wants 0..1, not", v);
                p.text_score = (float)d;
            } else {
                fprintf(stderr, "ocr: unknown option %s\n", a);
                return usage();
            }
        } else if (!image) {
            image = a;
        } else {
            fprintf(stderr, "ocr: one image at a time (got %s and %s)\n", image, a);
            return usage();
        }
    }
    if (!image) return usage();
    static const char *const files[3] = {"ch_PP-OCRv4_det_infer.onnx",
                                         "ch_ppocr_mobile_v2.0_cls_infer.onnx",
                                         "ch_PP-OCRv4_rec_infer.onnx"};
    char buf[3][4096];
    for (int k = 0; k < 3; k++) {
        if (paths[k]) continue;
        if (!models)
            return fail("no models", "give --models DIR (the wheel's rapidocr_onnxruntime/models)");
        if (snprintf(buf[k], sizeof buf[k], "%s/%s", models, files[k]) >= (int)sizeof buf[k])
            return fail("path too long", models);
        paths[k] = buf[k];
    }
    int rc = 1;
    double tl = now_ms();
    /* the same options for the three models: --config's, then --threads */
    mopt_options *opts = NULL;
    mopt_status st = mopt_options_create(&opts);
    if (!st && config && (st = mopt_options_load_yaml(opts, config)) != MOPT_OK) {
        fprintf(stderr, "ocr: --config %s: %s (%s)\n", config, mopt_status_string(st),
                mopt_last_error());
        mopt_options_destroy(opts);
        return 1;
    }
    if (!st && threads > 0) st = mopt_options_set_int(opts, "threads", threads);
    if (st) {
        mopt_options_destroy(opts);
        return fail_mopt("options", st);
    }
    int bad = net_load(&p.det, paths[0], opts) || (p.use_cls && net_load(&p.cls, paths[1], opts)) ||
              net_load(&p.rec, paths[2], opts);
    mopt_options_destroy(opts);
    if (bad) goto out;
    if (dict_load(&p.dict, p.rec.model)) goto out;
    double load_ms = now_ms() - tl;

    double *times = malloc((size_t)repeat * ST_COUNT * sizeof *times);
    if (!times) {
        fail("out of memory", NULL);
        goto out;
    }
    result r;
    memset(&r, 0, sizeof r);
    for (int k = 0; k < repeat; k++) {
        result_free(&r);
        if (run_pipeline(&p, image, &r)) {
            result_free(&r);
            free(times);
            goto out;
        }
        for (int s = 0; s < ST_COUNT; s++)
            times[(size_t)s * repeat + k] = r.t[s];
    }
    double median[ST_COUNT];
    for (int s = 0; s < ST_COUNT; s++) {
        qsort(times + (size_t)s * repeat, (size_t)repeat, sizeof *times, cmp_double);
        median[s] = times[(size_t)s * repeat + repeat / 2];
    }
    print_result(&r, median, repeat, json, load_ms);
    result_free(&r);
    free(times);
    rc = 0;
out:
    net_free(&p.det);
    net_free(&p.cls);
    net_free(&p.rec);
    free(p.dict.buf);
    free(p.dict.sym);
    return rc;
}
