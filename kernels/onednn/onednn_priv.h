/*
 * onednn_priv.h — what onednn.c shares with the backend's other files
 * (onednn_qconv.c): the process-wide engine, the checked primitive
 * creation, the acceptance of oneDNN's choice (no reference kernels,
 * MOPT_VERBOSE, MOPT_FAIL_ON_REF), the activation post-ops and the one-shot
 * reorder. Only kernels/onednn includes it.
 */
#ifndef MOPT_KERNELS_ONEDNN_ONEDNN_PRIV_H
#define MOPT_KERNELS_ONEDNN_ONEDNN_PRIV_H

#include <dnnl.h>

#include "kernels/onednn/onednn.h"

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
/* Appends act's post-op(s) to po; false when oneDNN has none for it. */
bool onednn_priv_append_act(dnnl_post_ops_t po, kn_act act, float alpha, float beta);
/* Reorders from (from_md) into to (to_md) now, on a stream of its own. */
bool onednn_priv_reorder_now(const dnnl_memory_desc_t *from_md, const void *from,
                             const dnnl_memory_desc_t *to_md, void *to);

#endif
