/*
 * onednn_priv.h — what onednn.c shares with the backend's other files
 * (onednn_qconv.c): the weak references to oneDNN, the process-wide engine,
 * the checked primitive creation, the acceptance of oneDNN's choice (no
 * reference kernels, MOPT_VERBOSE, MOPT_FAIL_ON_REF), the activation
 * post-ops, the one-shot reorder, the convolution dims of both descriptor
 * types, and the pieces of a per-session primitive cache (memory objects,
 * reordering ports, the cache entry and its teardown, the convolution run).
 * Only kernels/onednn includes it.
 */
#ifndef MOPT_KERNELS_ONEDNN_ONEDNN_PRIV_H
#define MOPT_KERNELS_ONEDNN_ONEDNN_PRIV_H

#include <dnnl.h>

#include "kernels/onednn/onednn.h"

/* Weak references (see onednn.h): every dnnl_* function the backend uses. */
#pragma weak dnnl_engine_create
#pragma weak dnnl_stream_create
#pragma weak dnnl_stream_destroy
#pragma weak dnnl_stream_wait
#pragma weak dnnl_memory_desc_init_by_strides
#pragma weak dnnl_memory_desc_init_by_tag
#pragma weak dnnl_memory_desc_equal
#pragma weak dnnl_memory_desc_get_size
#pragma weak dnnl_memory_create
#pragma weak dnnl_memory_destroy
#pragma weak dnnl_memory_set_data_handle
#pragma weak dnnl_matmul_desc_init
#pragma weak dnnl_dilated_convolution_forward_desc_init
#pragma weak dnnl_dilated_deconvolution_forward_desc_init
#pragma weak dnnl_pooling_v2_forward_desc_init
#pragma weak dnnl_primitive_attr_create
#pragma weak dnnl_primitive_attr_destroy
#pragma weak dnnl_primitive_attr_set_output_scales
#pragma weak dnnl_primitive_attr_set_post_ops
#pragma weak dnnl_primitive_attr_set_scratchpad_mode
#pragma weak dnnl_post_ops_create
#pragma weak dnnl_post_ops_destroy
#pragma weak dnnl_post_ops_append_eltwise
#pragma weak dnnl_post_ops_append_binary
#pragma weak dnnl_post_ops_append_sum
#pragma weak dnnl_primitive_desc_create
#pragma weak dnnl_primitive_desc_destroy
#pragma weak dnnl_primitive_desc_iterator_create
#pragma weak dnnl_primitive_desc_iterator_next
#pragma weak dnnl_primitive_desc_iterator_fetch
#pragma weak dnnl_primitive_desc_iterator_destroy
#pragma weak dnnl_primitive_desc_query_md
#pragma weak dnnl_primitive_desc_query
#pragma weak dnnl_reorder_primitive_desc_create
#pragma weak dnnl_primitive_create
#pragma weak dnnl_primitive_destroy
#pragma weak dnnl_primitive_execute
#pragma weak dnnl_version
#pragma weak dnnl_get_effective_cpu_isa
#pragma weak dnnl_memory_get_memory_desc
#pragma weak dnnl_primitive_attr_set_zero_points

/* The CPU engine (onednn_available() first). */
dnnl_engine_t onednn_priv_engine(void);
/* MOPT_VERBOSE is set. */
bool onednn_priv_verbose(void);
/* dnnl_primitive_desc_create after onednn_desc_fits; NULL when refused. */
dnnl_primitive_desc_t onednn_priv_pd_create(const void *op_desc, const_dnnl_primitive_attr_t attr);
/* oneDNN's implementation name for pd ("brg:avx512_core_vnni", ...). */
const char *onednn_priv_impl(dnnl_primitive_desc_t pd);
/* OK unless pd is a reference implementation (then UNSUPPORTED, counted,
 * or INTERNAL with MOPT_FAIL_ON_REF=1); prints the choice with
 * MOPT_VERBOSE. */
mopt_status onednn_priv_accept(dnnl_primitive_desc_t pd, const char *what);
/* The end of building a primitive attr: po set as its post-ops (when ok so
 * far) and destroyed; attr, or NULL (attr destroyed) when a step failed. */
dnnl_primitive_attr_t onednn_priv_attr_done(dnnl_primitive_attr_t attr, dnnl_post_ops_t po,
                                            bool ok);
/* Appends act's post-op(s) to po; false when oneDNN has none for it. */
bool onednn_priv_append_act(dnnl_post_ops_t po, kn_act act, float alpha, float beta);
/* Reorders from (from_md) into to (to_md) now, on a stream of its own. */
bool onednn_priv_reorder_now(const dnnl_memory_desc_t *from_md, const void *from,
                             const dnnl_memory_desc_t *to_md, void *to);

/* A convolution's geometry, as both its descriptors (onednn_conv_desc,
 * onednn_qconv_desc) hold it: ONEDNN_CONV_GEOM(d) takes it from either. */
typedef struct onednn_conv_geom {
    int32_t S;
    int64_t batch, c_in, c_out, group;
    const int64_t *in, *out, *k;
} onednn_conv_geom;
#define ONEDNN_CONV_GEOM(d)                                                                        \
    ((onednn_conv_geom){(d)->S, (d)->batch, (d)->c_in, (d)->c_out, (d)->group, (d)->in, (d)->out,  \
                        (d)->k})
/* g's logical dims: X [N, C_in, spatial...], W [(group,) C_out / group,
 * C_in / group, k...] (*wnd axes) and Y [N, C_out, spatial...]. */
void onednn_priv_conv_dims(onednn_conv_geom g, int64_t *x, int64_t *w, int32_t *wnd, int64_t *y);

/* ---- pieces of the per-session primitive caches ------------------------- */

/* A user-side tensor and, when the primitive wants another layout or type,
 * the reorder and the port-owned buffer in between. */
typedef struct io_port {
    dnnl_memory_t user; /* the user's layout, handle set per run */
    dnnl_memory_t prim; /* what the primitive sees: == user, or owns buf */
    dnnl_primitive_t reorder;
    void *buf;
} io_port;

/* A memory object for md without a buffer (its handle is set per run). */
bool onednn_priv_mem_new(dnnl_memory_t *m, const dnnl_memory_desc_t *md);
/* A memory object for md over a new aligned buffer *buf (the caller frees it). */
bool onednn_priv_mem_alloc(dnnl_memory_t *m, const dnnl_memory_desc_t *md, void **buf);
/* A reorder primitive from `from` to `to`. */
bool onednn_priv_reorder_prim(dnnl_primitive_t *r, const dnnl_memory_desc_t *from,
                              const dnnl_memory_desc_t *to);
/* Sets up a port: user layout user_md, primitive layout prim_md; an input
 * port reorders user -> prim, an output one prim -> user. */
bool onednn_priv_port_init(io_port *p, const dnnl_memory_desc_t *user_md,
                           const dnnl_memory_desc_t *prim_md, bool input);

/* What a cache entry of either cache (onednn.c's, onednn_qconv.c's) holds
 * for its primitive; each entry type adds its own. */
typedef struct onednn_entry {
    dnnl_primitive_t prim;
    io_port src, dst;             /* X and Y */
    dnnl_primitive_t res_reorder; /* the residual (user layout) -> dst.prim, or -> bin */
    dnnl_memory_t res_user;       /* the residual as the user gives it */
    dnnl_memory_t wei, bias;
    dnnl_memory_t bin; /* the binary post-op's operand (a residual) */
    dnnl_memory_t scratch;
    void *scratch_buf;
    void *own_w;         /* the weights reordered for this entry */
    bool wei_from_input; /* wei's handle is the op's plain input, set per run */
} onednn_entry;

/* Destroys what p holds and zeroes it. */
void onednn_priv_entry_free(onednn_entry *p);
/* A stream on the engine for a new cache (INTERNAL when oneDNN refuses). */
mopt_status onednn_priv_stream_new(dnnl_stream_t *s);
/* Runs the reorder r from -> to on s. */
bool onednn_priv_run_reorder(dnnl_stream_t s, dnnl_primitive_t r, dnnl_memory_t from,
                             dnnl_memory_t to);
/* Runs p's convolution primitive on s (src.prim in, dst.prim out, then dst's
 * reorder to the user's layout) and waits; with p's bias, scratchpad and bin
 * (the first post-op's binary operand) where they are not NULL. */
bool onednn_priv_conv_exec(dnnl_stream_t s, const onednn_entry *p);

#endif
