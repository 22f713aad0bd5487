/*
 * pass_fix_dims.c — free-dimension overrides ("dim.batch" = 1): before
 * inference and the passes, a named symbolic dimension becomes a number in
 * every value's shape of the top graph, so that shape arithmetic folds and
 * kernels are chosen for that size. It only replaces what the graph states;
 * inference, run next, carries the number through the nodes.
 */
#include <string.h>

#include "core/error.h"
#include "passes/passes.h"

mopt_status passes_fix_dim(ir_graph *g, const char *name, int64_t value, int32_t *n_input_axes) {
    *n_input_axes = 0;
    int32_t sym = 0;
    for (int32_t i = 0; i < g->n_symbols && !sym; i++)
        if (strcmp(g->symbols[i], name) == 0) sym = i + 1;
    if (!sym) return MOPT_OK;
    for (int32_t v = 0; v < g->n_values; v++) {
        ir_value *val = g->values[v];
        for (int32_t d = 0; d < val->shape.rank; d++) {
            if (val->shape.syms[d] != sym) continue;
            val->shape.syms[d] = 0;
            val->shape.dims[d] = value;
            if (val->flags & IR_VALUE_INPUT) ++*n_input_axes;
        }
    }
    return MOPT_OK;
}
