/*
 * dbpost.h — DB (Differentiable Binarization) post-processing for the
 * PP-OCR text detector: from the probability map to ordered text boxes in
 * image coordinates, as rapidocr's DBPostProcess + filter + sort do it.
 */
#ifndef OCR_DBPOST_H
#define OCR_DBPOST_H

typedef struct ocr_box {
    float pt[4][2]; /* top-left, top-right, bottom-right, bottom-left (x, y) */
    float score;    /* mean probability inside the unexpanded box */
} ocr_box;

typedef struct ocr_db_params {
    float thresh;       /* binarization threshold on the probability map (0.3) */
    float box_thresh;   /* minimum box score (0.5) */
    float unclip_ratio; /* expansion: distance = area * ratio / perimeter (1.6) */
    int max_candidates; /* at most this many connected regions (1000) */
    int use_dilation;   /* dilate the binary map with a 2x2 kernel (1) */
} ocr_db_params;

void ocr_db_defaults(ocr_db_params *p);

/* Boxes from the map prob (h x w, row-major), scaled to an image of
 * dst_w x dst_h, filtered (sides > 3 px after clipping) and sorted
 * top-to-bottom, left-to-right. *out is malloc'd (free it), *n its count.
 * Returns 0, or -1 when out of memory. */
int ocr_db_boxes(const float *prob, int h, int w, int dst_w, int dst_h, const ocr_db_params *p,
                 ocr_box **out, int *n);

#endif
