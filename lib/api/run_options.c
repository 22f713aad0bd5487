/*
 * run_options.c — the public mopt_run_options: a run's tag, its profiling
 * choice and the cancellation flag that any thread may set (atomic; the
 * executor reads it before each node).
 */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "runtime/runtime.h"

mopt_status mopt_run_options_create(mopt_run_options **out) {
    mopt_clear_error();
    if (!out) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_run_options_create: out is NULL");
    *out = NULL;
    mopt_run_options *ro = mopt_calloc(1, sizeof *ro);
    if (!ro) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating run options");
    atomic_init(&ro->terminate, 0);
    ro->profiling = -1;
    *out = ro;
    return MOPT_OK;
}

void mopt_run_options_destroy(mopt_run_options *ro) { mopt_free(ro); }

mopt_status mopt_run_options_set_tag(mopt_run_options *ro, const char *tag) {
    mopt_clear_error();
    if (!ro || !tag)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_run_options_set_tag: NULL argument");
    size_t len = strlen(tag);
    if (len >= RT_TAG_CAP)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "run tag '%.40s...' is %zu bytes long; at most %d are kept", tag, len,
                         RT_TAG_CAP - 1);
    memcpy(ro->tag, tag, len + 1);
    return MOPT_OK;
}

const char *mopt_run_options_tag(const mopt_run_options *ro) { return ro ? ro->tag : ""; }

mopt_status mopt_run_options_set_profiling(mopt_run_options *ro, int profiling) {
    mopt_clear_error();
    if (!ro)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_run_options_set_profiling: run_options is NULL");
    if (profiling < -1 || profiling > 1)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_run_options_set_profiling: %d is not -1 (the session's "
                         "choice), 0 or 1",
                         profiling);
    ro->profiling = profiling;
    return MOPT_OK;
}

mopt_status mopt_run_options_set_terminate(mopt_run_options *ro, int terminate) {
    mopt_clear_error();
    if (!ro)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_run_options_set_terminate: run_options is NULL");
    atomic_store(&ro->terminate, terminate != 0);
    return MOPT_OK;
}
