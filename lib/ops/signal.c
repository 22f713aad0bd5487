/*
 * signal.c — the "signal" operator family: the window functions of signal
 * processing (HannWindow, HammingWindow, BlackmanWindow; periodic or
 * symmetric, any numeric output_datatype). Math in kernels/ref/signal.c.
 */
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_logic.h"
#include "kernels/ref/ref_signal.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* ---- window functions -------------------------------------------------------------- */

typedef struct window_params {
    ref_window w;
    mopt_dtype out_type; /* output_datatype */
    bool periodic;
} window_params;

static mopt_status window_parse(const op_ctx *ctx, void *params) {
    window_params *p = params;
    const char *t = ctx->node->op_type;
    p->w = strcmp(t, "HannWindow") == 0      ? REF_WIN_HANN
           : strcmp(t, "HammingWindow") == 0 ? REF_WIN_HAMMING
                                             : REF_WIN_BLACKMAN;
    p->out_type = (mopt_dtype)ir_node_attr_int(ctx->node, "output_datatype", MOPT_DTYPE_F32);
    p->periodic = ir_node_attr_int(ctx->node, "periodic", 1) != 0;
    return MOPT_OK;
}

static mopt_status window_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    mopt_dtype t = ((const window_params *)ctx->params)->out_type;
    if (mopt_dtype_size(t) == 0 || t == MOPT_DTYPE_BOOL)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "output_datatype %d is not supported", t);
    out[0].dtype = t;
    out[0].shape.rank = 1;
    out[0].shape.dims[0] = -1;
    out[0].shape.syms[0] = -1;
    if (in[0].data) {
        int64_t n;
        if (op_read_ints(ctx, &in[0], "size", &n, 1) != 1) return MOPT_ERR_INVALID_ARGUMENT;
        if (n < 0) return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT, "size must be >= 0");
        out[0].shape.dims[0] = n;
        out[0].shape.syms[0] = 0;
    }
    return MOPT_OK;
}

static mopt_status window_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const window_params *p = ctx->params;
    int64_t n = out[0].shape.dims[0];
    double *y = mopt_malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!y) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    ref_window_fn(p->w, n, p->periodic, y);
    ref_cast(MOPT_DTYPE_F64, y, out[0].dtype, out[0].data, n);
    mopt_free(y);
    return MOPT_OK;
}

#define WINDOW(name)                                                                               \
    {                                                                                              \
        name, "", 1, 1, 1, 1, window_infer, window_run, NULL,                                      \
            OP_PARAMS(window_params, window_parse), .bridge = &ops_bridge_float                    \
    }

static const op_def k_ops[] = {
    WINDOW("HannWindow"),
    WINDOW("HammingWindow"),
    WINDOW("BlackmanWindow"),
};

OP_FAMILY(signal, k_ops)
