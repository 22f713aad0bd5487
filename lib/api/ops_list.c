/*
 * ops_list.c — the public list of supported operators.
 */
#include <stdio.h>

#include "ops/ops.h"

size_t mopt_supported_op_count(void) { return ops_count(); }

const char *mopt_supported_op_name(size_t index) {
    const op_def *d = ops_at(index);
    if (!d) return NULL;
    /* Ops outside the default domain are reported as "domain.Op", formatted
     * into a thread-local buffer. */
    if (!d->domain || !d->domain[0]) return d->op_type;
    static _Thread_local char buf[128];
    snprintf(buf, sizeof buf, "%s.%s", d->domain, d->op_type);
    return buf;
}
