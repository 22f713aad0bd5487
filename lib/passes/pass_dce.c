/*
 * pass_dce.c — dead-code elimination: removes nodes no graph output depends
 * on (compaction then drops the values only they used).
 */
#include "passes/passes.h"

mopt_status pass_dce(ir_graph *g, pass_result *r) {
    int32_t n = ir_graph_mark_dead_code(g);
    r->rewrites = n;
    pass_note_add(r, n, "dead nodes");
    return MOPT_OK;
}
