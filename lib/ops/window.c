/*
 * window.c — parsing and checking the sliding-window attributes of Conv,
 * the pools and ConvTranspose (window.h).
 */
#include "ops/window.h"

#include <inttypes.h>
#include <string.h>

static mopt_status list_parse(const op_ctx *ctx, const char *name, int64_t lo, int64_t def,
                              bool required, op_window_list *l) {
    const int64_t *v = NULL;
    l->n = ir_node_attr_ints(ctx->node, name, &v);
    if (l->n < 0) /* absent: fails when required, else the default */
        return op_window_ints(ctx, name, 2 * REF_WIN_MAX, lo, def, required, l->v, NULL);
    if (l->n > 2 * REF_WIN_MAX) return MOPT_OK; /* the count check fails it */
    return op_window_ints(ctx, name, (int32_t)l->n, lo, def, required, l->v, NULL);
}

mopt_status op_window_parse(const op_ctx *ctx, bool kernel_required, op_window_attrs *w) {
    int ap = 0;
    mopt_status st = list_parse(ctx, "kernel_shape", 1, 0, kernel_required, &w->kernel_shape);
    if (!st) st = list_parse(ctx, "strides", 1, 1, false, &w->strides);
    if (!st) st = list_parse(ctx, "dilations", 1, 1, false, &w->dilations);
    if (!st) st = list_parse(ctx, "pads", 0, 0, false, &w->pads);
    if (!st) st = op_window_auto_pad(ctx, &ap);
    w->auto_pad = (ref_auto_pad)ap;
    return st;
}

mopt_status op_window_get(const op_ctx *ctx, const op_window_list *l, const char *name,
                          int32_t want, int64_t *out, bool *present) {
    if (present) *present = l->n >= 0;
    if (l->n >= 0 && l->n != want)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "attribute %s has %" PRId64 " values; expected %d", name, l->n, (int)want);
    for (int32_t i = 0; i < want; i++)
        out[i] = l->v[i];
    return MOPT_OK;
}

void op_ints_attr_parse(const op_ctx *ctx, const char *name, op_ints_attr *a) {
    a->v = NULL;
    a->n = ir_node_attr_ints(ctx->node, name, &a->v);
    a->present = ir_node_attr(ctx->node, name) != NULL;
}

mopt_status op_ints_attr_get(const op_ctx *ctx, const op_ints_attr *a, const char *name, int nd,
                             int64_t def, int64_t *out) {
    for (int i = 0; i < nd; i++)
        out[i] = def;
    if (!a->present) return MOPT_OK;
    if (a->n != nd)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "attribute %s must have %d values, not %" PRId64, name, nd, a->n);
    for (int i = 0; i < nd; i++)
        out[i] = a->v[i];
    return MOPT_OK;
}

ref_auto_pad op_window_auto_pad_lenient(const op_ctx *ctx) {
    const char *s = ir_node_attr_string(ctx->node, "auto_pad", "NOTSET");
    if (strcmp(s, "SAME_UPPER") == 0) return REF_PAD_SAME_UPPER;
    if (strcmp(s, "SAME_LOWER") == 0) return REF_PAD_SAME_LOWER;
    if (strcmp(s, "VALID") == 0) return REF_PAD_VALID;
    return REF_PAD_NOTSET;
}
