/*
 * detect.c — a YOLOv8-family object detector on libmopt, the whole pipeline
 * in one C program (issue 15), printing the time of each stage:
 *
 *   read         decode the PNG or JPEG (examples/common/image.c)
 *   preprocess   letterbox to SIZE x SIZE (bilinear, aspect kept, centred,
 *                grey 114 padding), RGB planes scaled to 0..1 (NCHW f32)
 *   infer        the model through the public C API
 *   postprocess  decode the head [1, 4 + classes, anchors] (cx, cy, w, h in
 *                input pixels, then one score per class), keep the best
 *                class per anchor when its score >= --conf, greedy NMS per
 *                class (IoU > --iou suppressed), map the boxes back to the
 *                image and clip them
 *   write        draw the boxes, write the PNG
 *
 *   detect IMAGE --model M.onnx [-o OUT.png] [--conf 0.25] [--iou 0.45]
 *          [--threads N] [--config OPTIONS.yaml] [--size 320] [--max-det 300]
 *          [--save-input IN.npy] [--save-output OUT.npy] [--repeat N]
 *
 * --repeat N runs the whole pipeline (read to write) N times on the one
 * image and also prints each stage's median (the first run is always
 * printed: it pays the session's first-run costs).
 *
 * The class names are nudenet's (its 320n model has 18 classes); another
 * class count prints "class_<i>". One line per detection on stdout:
 *   <rank> <class> <score> box <x0> <y0> <x1> <y1> drawn <x0> <y0> <x1> <y1>
 * box in image pixels (float, x1/y1 exclusive edges), drawn the integer
 * rectangle outlined in the PNG (inclusive).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mopt/mopt.h>

#define EX_PROG "detect"
#include "ex_cli.h"

#include "image.h"

static const char *const NUDENET_LABELS[] = {
    "FEMALE_GENITALIA_COVERED",
    "FACE_FEMALE",
    "BUTTOCKS_EXPOSED",
    "FEMALE_BREAST_EXPOSED",
    "FEMALE_GENITALIA_EXPOSED",
    "MALE_BREAST_EXPOSED",
    "ANUS_EXPOSED",
    "FEET_EXPOSED",
    "BELLY_COVERED",
    "FEET_COVERED",
    "ARMPITS_COVERED",
    "ARMPITS_EXPOSED",
    "FACE_MALE",
    "BELLY_EXPOSED",
    "MALE_GENITALIA_EXPOSED",
    "ANUS_COVERED",
    "FEMALE_BREAST_COVERED",
    "BUTTOCKS_COVERED",
};
#define N_LABELS (sizeof NUDENET_LABELS / sizeof NUDENET_LABELS[0])

typedef struct args {
    const char *image, *model, *out, *config, *save_input, *save_output;
    double conf, iou;
    int threads, size, max_det, repeat;
} args;

typedef struct det {
    float x0, y0, x1, y1; /* model input pixels, then image pixels */
    float score;
    int cls, anchor;
} det;

static int usage(const char *why) {
    if (why) fprintf(stderr, "detect: %s\n", why);
    fprintf(stderr,
            "usage: detect IMAGE --model M.onnx [-o OUT.png] [--conf 0.25] [--iou 0.45]\n"
            "              [--threads N] [--config OPTIONS.yaml] [--size 320] [--max-det 300]\n"
            "              [--save-input IN.npy] [--save-output OUT.npy] [--repeat N]\n");
    return 2;
}

static bool parse_int(const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

static int parse_args(int argc, char **argv, args *a) {
    *a = (args){.out = "detections.png",
                .conf = 0.25,
                .iou = 0.45,
                .threads = 1,
                .size = 320,
                .max_det = 300,
                .repeat = 1};
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        bool has = i + 1 < argc;
        const char *v = has ? argv[i + 1] : NULL;
        if (!strcmp(k, "-h") || !strcmp(k, "--help")) return usage(NULL);
        if (k[0] != '-' || !k[1]) {
            if (a->image) return usage("more than one image given");
            a->image = k;
            continue;
        }
        if (!has) {
            char msg[128];
            snprintf(msg, sizeof msg, "%s needs a value", k);
            return usage(msg);
        }
        i++;
        bool ok = true;
        if (!strcmp(k, "--model"))
            a->model = v;
        else if (!strcmp(k, "-o") || !strcmp(k, "--output"))
            a->out = v;
        else if (!strcmp(k, "--config"))
            a->config = v;
        else if (!strcmp(k, "--save-input"))
            a->save_input = v;
        else if (!strcmp(k, "--save-output"))
            a->save_output = v;
        else if (!strcmp(k, "--conf"))
            ok = parse_double(v, 0.0, 1.0, &a->conf);
        else if (!strcmp(k, "--iou"))
            ok = parse_double(v, 0.0, 1.0, &a->iou);
        else if (!strcmp(k, "--threads"))
            ok = parse_int(v, 0, 1024, &a->threads);
        else if (!strcmp(k, "--size"))
            ok = parse_int(v, 32, 4096, &a->size) && a->size % 32 == 0;
        else if (!strcmp(k, "--max-det"))
            ok = parse_int(v, 1, 100000, &a->max_det);
        else if (!strcmp(k, "--repeat"))
            ok = parse_int(v, 1, 100000, &a->repeat);
        else {
            char msg[160];
            snprintf(msg, sizeof msg, "unknown option %s", k);
            return usage(msg);
        }
        if (!ok) {
            char msg[200];
            snprintf(msg, sizeof msg, "bad value for %s: '%s' (%s)", k, v,
                     !strcmp(k, "--size")      ? "a multiple of 32, 32..4096"
                     : !strcmp(k, "--threads") ? "0..1024, 0 = one per core"
                     : !strcmp(k, "--max-det") || !strcmp(k, "--repeat") ? "1..100000"
                                                                         : "a number in 0..1");
            return usage(msg);
        }
    }
    if (!a->image) return usage("no image given");
    if (!a->model) return usage("no model given (--model M.onnx)");
    return 0;
}

/* ---- model -------------------------------------------------------------- */

typedef struct engine {
    mopt_model *model;
    mopt_session *session;
} engine;

/* Loads the model with --config's options, then --threads, and each free
 * dimension of the input fixed (batch 1, SIZE x SIZE) so that the
 * optimizer plans for that shape. A model that is not one image input
 * [N, 3, H, W] f32 and one output [N, C, A] f32 is refused. */
static int engine_open(engine *e, const args *a) {
    memset(e, 0, sizeof *e);
    mopt_options *o = NULL;
    mopt_model *probe = NULL;
    mopt_status st = mopt_options_create(&o);
    if (!st && a->config) st = mopt_options_load_yaml(o, a->config);
    if (st) {
        mopt_options_destroy(o);
        return fail_mopt(a->config ? "--config" : "options", st);
    }
    if (!st) st = mopt_options_set_int(o, "threads", a->threads);
    /* a cheap first look (no passes) at the input's dimension names */
    mopt_options *po = NULL;
    if (!st) st = mopt_options_create(&po);
    if (!st) st = mopt_options_set_int(po, "inspect_only", 1);
    if (!st) st = mopt_model_load(a->model, po, &probe);
    mopt_options_destroy(po);
    if (st) {
        mopt_options_destroy(o);
        return fail_mopt("cannot load the model", st);
    }
    char why[256] = "";
    if (mopt_model_io_count(probe, MOPT_INPUT) != 1 || mopt_model_io_count(probe, MOPT_OUTPUT) < 1)
        snprintf(why, sizeof why, "%zu inputs and %zu outputs, expected one image input",
                 mopt_model_io_count(probe, MOPT_INPUT), mopt_model_io_count(probe, MOPT_OUTPUT));
    else if (mopt_model_io_dtype(probe, MOPT_INPUT, 0) != MOPT_DTYPE_F32 ||
             mopt_model_io_rank(probe, MOPT_INPUT, 0) != 4 ||
             mopt_model_io_dim(probe, MOPT_INPUT, 0, 1) != 3)
        snprintf(why, sizeof why, "input '%s' is not an f32 image [N, 3, H, W]",
                 mopt_model_io_name(probe, MOPT_INPUT, 0));
    else if (mopt_model_io_dtype(probe, MOPT_OUTPUT, 0) != MOPT_DTYPE_F32 ||
             mopt_model_io_rank(probe, MOPT_OUTPUT, 0) != 3)
        snprintf(why, sizeof why,
                 "output '%s' is not an f32 detection head [N, 4 + classes, anchors]",
                 mopt_model_io_name(probe, MOPT_OUTPUT, 0));
    for (int ax = 0; !why[0] && !st && ax < 4; ax++) {
        int64_t d = mopt_model_io_dim(probe, MOPT_INPUT, 0, ax);
        const char *name = mopt_model_io_dim_name(probe, MOPT_INPUT, 0, ax);
        int64_t want = ax == 0 ? 1 : ax == 1 ? 3 : a->size;
        if (d >= 0 && d != want)
            snprintf(why, sizeof why, "input '%s' has dimension %d = %lld, not %lld",
                     mopt_model_io_name(probe, MOPT_INPUT, 0), ax, (long long)d, (long long)want);
        else if (d < 0 && name)
            st = mopt_options_set_dim(o, name, want);
    }
    mopt_model_destroy(probe);
    if (why[0] || st) {
        mopt_options_destroy(o);
        return why[0] ? fail("not a YOLOv8-style detector", why) : fail_mopt("options", st);
    }
    st = mopt_model_load(a->model, o, &e->model);
    if (!st) st = mopt_session_create(e->model, o, &e->session);
    mopt_options_destroy(o);
    if (st) return fail_mopt("cannot load the model", st);
    return 0;
}

static void engine_close(engine *e) {
    mopt_session_destroy(e->session);
    mopt_model_destroy(e->model);
}

/* ---- preprocess --------------------------------------------------------- */

typedef struct letterbox {
    float scale;    /* input pixels per image pixel */
    int padx, pady; /* offset of the image in the input */
    int neww, newh; /* resized image size */
} letterbox;

/* Fills chw (3 x size x size, 0..1) with img letterboxed. */
static int preprocess(const ex_image *img, int size, float *chw, letterbox *lb) {
    float s = fminf((float)size / (float)img->w, (float)size / (float)img->h);
    int nw = (int)lroundf((float)img->w * s), nh = (int)lroundf((float)img->h * s);
    nw = nw < 1 ? 1 : nw > size ? size : nw;
    nh = nh < 1 ? 1 : nh > size ? size : nh;
    ex_image r;
    if (ex_image_resize_bilinear(img, nw, nh, &r) != 0) return -1;
    *lb = (letterbox){
        .scale = s, .padx = (size - nw) / 2, .pady = (size - nh) / 2, .neww = nw, .newh = nh};
    size_t plane = (size_t)size * (size_t)size;
    const float pad = 114.0f / 255.0f;
    for (size_t i = 0; i < 3 * plane; i++)
        chw[i] = pad;
    for (int y = 0; y < nh; y++) {
        const unsigned char *p = r.px + (size_t)y * (size_t)nw * 3;
        size_t o = (size_t)(y + lb->pady) * (size_t)size + (size_t)lb->padx;
        for (int x = 0; x < nw; x++, p += 3) {
            chw[o + (size_t)x] = p[0] * (1.0f / 255.0f);
            chw[plane + o + (size_t)x] = p[1] * (1.0f / 255.0f);
            chw[2 * plane + o + (size_t)x] = p[2] * (1.0f / 255.0f);
        }
    }
    ex_image_free(&r);
    return 0;
}

/* ---- postprocess -------------------------------------------------------- */

static float iou(const det *a, const det *b) {
    float ix = fminf(a->x1, b->x1) - fmaxf(a->x0, b->x0);
    float iy = fminf(a->y1, b->y1) - fmaxf(a->y0, b->y0);
    if (ix <= 0 || iy <= 0) return 0;
    float inter = ix * iy;
    float ua = (a->x1 - a->x0) * (a->y1 - a->y0) + (b->x1 - b->x0) * (b->y1 - b->y0) - inter;
    return ua > 0 ? inter / ua : 0;
}

/* score descending, then anchor ascending: a total order, so that the
 * result does not depend on qsort's stability */
static int by_score(const void *pa, const void *pb) {
    const det *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return (a->anchor > b->anchor) - (a->anchor < b->anchor);
}

/* Decodes head [C, A] (C = 4 + classes) into *out (sorted, NMS'd, mapped
 * to image pixels); returns the count or -1 (out of memory). */
static int postprocess(const float *head, int64_t C, int64_t A, const args *a, const letterbox *lb,
                       int img_w, int img_h, det **out) {
    int64_t nc = C - 4;
    det *cand = malloc(sizeof *cand * (size_t)(A ? A : 1));
    if (!cand) return -1;
    int n = 0;
    for (int64_t i = 0; i < A; i++) {
        int best = 0;
        float bs = head[4 * A + i];
        for (int64_t c = 1; c < nc; c++) {
            float s = head[(4 + c) * A + i];
            if (s > bs) bs = s, best = (int)c;
        }
        if (!(bs >= (float)a->conf)) continue; /* NaN too */
        float cx = head[i], cy = head[A + i], w = head[2 * A + i], h = head[3 * A + i];
        cand[n++] = (det){cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, bs, best, (int)i};
    }
    qsort(cand, (size_t)n, sizeof *cand, by_score);
    int kept = 0;
    for (int i = 0; i < n && kept < a->max_det; i++) {
        bool keep = true;
        for (int j = 0; j < kept && keep; j++)
            if (cand[j].cls == cand[i].cls && iou(&cand[j], &cand[i]) > (float)a->iou) keep = false;
        if (keep) cand[kept++] = cand[i];
    }
    for (int i = 0; i < kept; i++) {
        det *d = &cand[i];
        float xs[2] = {d->x0, d->x1}, ys[2] = {d->y0, d->y1};
        for (int k = 0; k < 2; k++) {
            xs[k] = fminf(fmaxf((xs[k] - (float)lb->padx) / lb->scale, 0.0f), (float)img_w);
            ys[k] = fminf(fmaxf((ys[k] - (float)lb->pady) / lb->scale, 0.0f), (float)img_h);
        }
        d->x0 = xs[0], d->x1 = xs[1], d->y0 = ys[0], d->y1 = ys[1];
    }
    *out = cand;
    return kept;
}

/* ---- write -------------------------------------------------------------- */

static void class_colour(int cls, unsigned char rgb[3]) {
    static const unsigned char pal[][3] = {
        {255, 56, 56},  {255, 157, 151}, {255, 112, 31}, {255, 178, 29},  {207, 210, 49},
        {72, 249, 10},  {146, 204, 23},  {61, 219, 134}, {26, 147, 52},   {0, 212, 187},
        {44, 153, 168}, {0, 194, 255},   {52, 69, 147},  {100, 115, 255}, {0, 24, 236},
        {132, 56, 255}, {82, 0, 133},    {203, 56, 255}, {255, 149, 200}, {255, 55, 199}};
    memcpy(rgb, pal[(unsigned)cls % (sizeof pal / sizeof pal[0])], 3);
}

/* The inclusive integer rectangle drawn for box d. */
static void drawn_rect(const det *d, int w, int h, int r[4]) {
    float v[4] = {d->x0, d->y0, d->x1 - 1.0f, d->y1 - 1.0f};
    int lim[4] = {w - 1, h - 1, w - 1, h - 1};
    for (int k = 0; k < 4; k++) {
        long q = lroundf(v[k]);
        r[k] = (int)(q < 0 ? 0 : q > lim[k] ? lim[k] : q);
    }
    if (r[2] < r[0]) r[2] = r[0];
    if (r[3] < r[1]) r[3] = r[1];
}

static const char *label(int cls, int64_t nc, char *buf, size_t n) {
    if (nc == (int64_t)N_LABELS) return NUDENET_LABELS[cls];
    snprintf(buf, n, "class_%d", cls);
    return buf;
}

/* ---- the pipeline ------------------------------------------------------- */

enum { T_READ, T_PRE, T_INFER, T_POST, T_WRITE, N_STAGES };
static const char *const STAGE_NAMES[N_STAGES] = {"read", "preprocess", "infer", "postprocess",
                                                  "write"};

/* One image through every stage; prints the detections when verbose.
 * 0 ok, 1 error (message printed). */
static int pipeline(const args *a, engine *e, float *chw, bool verbose, double t[N_STAGES]) {
    ex_image img;
    char err[512];
    double t0 = now_ms();
    if (ex_image_load(a->image, &img, err, sizeof err) != 0)
        return fail("cannot read the image", err);
    t[T_READ] = now_ms() - t0;

    /* preprocess */
    t0 = now_ms();
    size_t plane = (size_t)a->size * (size_t)a->size;
    letterbox lb;
    mopt_tensor *in = NULL, *outt = NULL;
    det *dets = NULL;
    int rc = 1;
    int64_t dims[4] = {1, 3, a->size, a->size};
    mopt_status st;
    if (preprocess(&img, a->size, chw, &lb) != 0) {
        fail("preprocess", "out of memory");
        goto done;
    }
    st = mopt_tensor_wrap_const(MOPT_DTYPE_F32, 4, dims, chw, 3 * plane * sizeof *chw, &in);
    if (st) {
        fail_mopt("input tensor", st);
        goto done;
    }
    t[T_PRE] = now_ms() - t0;
    if (a->save_input && (st = mopt_tensor_save_npy(in, a->save_input)) != MOPT_OK) {
        fail_mopt("--save-input", st);
        goto done;
    }

    /* infer */
    t0 = now_ms();
    st = mopt_session_run(e->session, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, &outt);
    t[T_INFER] = now_ms() - t0;
    if (st) {
        fail_mopt("inference", st);
        goto done;
    }
    if (a->save_output && (st = mopt_tensor_save_npy(outt, a->save_output)) != MOPT_OK) {
        fail_mopt("--save-output", st);
        goto done;
    }

    /* postprocess */
    t0 = now_ms();
    int64_t C = mopt_tensor_dim(outt, 1), A = mopt_tensor_dim(outt, 2);
    if (mopt_tensor_dtype(outt) != MOPT_DTYPE_F32 || mopt_tensor_rank(outt) != 3 ||
        mopt_tensor_dim(outt, 0) != 1 || C < 5 || A < 1 || A > 10000000) {
        fail("not a YOLOv8-style detector", "its output is not [1, 4 + classes, anchors] f32");
        goto done;
    }
    int ndet = postprocess(mopt_tensor_data_const(outt), C, A, a, &lb, img.w, img.h, &dets);
    if (ndet < 0) {
        fail("postprocess", "out of memory");
        goto done;
    }
    t[T_POST] = now_ms() - t0;

    /* write */
    t0 = now_ms();
    int thick = (img.w < img.h ? img.w : img.h) / 200;
    thick = thick < 2 ? 2 : thick;
    for (int i = ndet - 1; i >= 0; i--) { /* best boxes drawn last, on top */
        int r[4];
        unsigned char c[3];
        drawn_rect(&dets[i], img.w, img.h, r);
        class_colour(dets[i].cls, c);
        ex_image_draw_rect(&img, r[0], r[1], r[2], r[3], c[0], c[1], c[2], thick);
    }
    if (ex_image_save_png(a->out, &img, err, sizeof err) != 0) {
        fail("cannot write the output", err);
        goto done;
    }
    t[T_WRITE] = now_ms() - t0;

    if (verbose) {
        printf("%s: %dx%d, %d detection(s) (conf %g, iou %g, input %dx%d, %d thread(s))\n",
               a->image, img.w, img.h, ndet, a->conf, a->iou, a->size, a->size, a->threads);
        for (int i = 0; i < ndet; i++) {
            char buf[32];
            int r[4];
            drawn_rect(&dets[i], img.w, img.h, r);
            printf("%3d %-24s %.4f box %.2f %.2f %.2f %.2f drawn %d %d %d %d\n", i + 1,
                   label(dets[i].cls, C - 4, buf, sizeof buf), dets[i].score, dets[i].x0,
                   dets[i].y0, dets[i].x1, dets[i].y1, r[0], r[1], r[2], r[3]);
        }
        printf("wrote %s\n", a->out);
    }
    rc = 0;
done:
    free(dets);
    mopt_tensor_destroy(outt);
    mopt_tensor_destroy(in);
    ex_image_free(&img);
    return rc;
}

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static void print_times(const char *head, const double t[N_STAGES], const char *tail) {
    printf("%s", head);
    for (int k = 0; k < N_STAGES; k++)
        printf(k == T_POST ? "%s%s %.3f" : "%s%s %.2f", k ? "  " : "", STAGE_NAMES[k], t[k]);
    printf("%s\n", tail);
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv) {
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    /* the image is read (and checked) before the model is loaded */
    ex_image probe;
    char err[512];
    if (ex_image_load(a.image, &probe, err, sizeof err) != 0)
        return fail("cannot read the image", err);
    ex_image_free(&probe);

    double t0 = now_ms();
    engine e;
    if (engine_open(&e, &a) != 0) return 1;
    double t_load = now_ms() - t0;

    float *chw = malloc(3 * (size_t)a.size * (size_t)a.size * sizeof *chw);
    double(*t)[N_STAGES] = calloc((size_t)a.repeat, sizeof *t);
    rc = !chw || !t ? fail("out of memory", NULL) : 0;
    for (int r = 0; r < a.repeat && !rc; r++)
        rc = pipeline(&a, &e, chw, r == 0, t[r]);
    if (!rc) {
        char tail[64];
        snprintf(tail, sizeof tail, "  (load model %.1f)", t_load);
        print_times("stage times (ms): ", t[0], tail);
        double *col = a.repeat > 1 ? malloc(sizeof *col * (size_t)a.repeat) : NULL;
        if (col) {
            double med[N_STAGES];
            for (int k = 0; k < N_STAGES; k++) {
                for (int r = 0; r < a.repeat; r++)
                    col[r] = t[r][k];
                qsort(col, (size_t)a.repeat, sizeof *col, cmp_double);
                med[k] = a.repeat % 2 ? col[a.repeat / 2]
                                      : (col[a.repeat / 2 - 1] + col[a.repeat / 2]) / 2;
            }
            char head[64];
            snprintf(head, sizeof head, "median of %d runs (ms): ", a.repeat);
            print_times(head, med, "");
            free(col);
        }
    }
    free(t);
    free(chw);
    engine_close(&e);
    return rc;
}
