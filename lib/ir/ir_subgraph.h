/*
 * ir_subgraph.h — subgraphs (the GRAPH attributes of If, Loop, Scan) as the
 * rest of the library sees them: enumerated in attribute order, and made
 * self-contained by ir_graph_bind_captures.
 *
 * ONNX lets a subgraph read any value of an enclosing scope by name. After
 * binding, every such read is explicit: the outer value is a trailing input
 * of the node (IR_CAPTURES_ATTR says how many), and the subgraph reads it
 * through a trailing graph input of the same position. So every pass that
 * follows node inputs (topological order, dead code, liveness, memory plans)
 * sees the dependency, and a subgraph is a graph like any other. Outer-scope
 * initializers are not captured but copied into the subgraph as its own
 * initializers, so that its passes see them as constants.
 */
#ifndef MOPT_IR_IR_SUBGRAPH_H
#define MOPT_IR_IR_SUBGRAPH_H

#include "ir/ir.h"

/* The node attribute holding the number of captured inputs (an INT). */
#define IR_CAPTURES_ATTR "mopt.captures"

/* Number of subgraphs of a node (every GRAPH attribute counts one, every
 * GRAPHS attribute its length). */
int32_t ir_node_subgraph_count(const ir_node *n);
/* Subgraph k (0 <= k < count) and the name of its attribute (may be NULL). */
ir_graph *ir_node_subgraph(const ir_node *n, int32_t k, const char **attr_name);
/* The node's number of captured inputs (its last inputs), 0 when none. */
int32_t ir_node_captures(const ir_node *n);

/* Binds the outer-scope reads of every subgraph of g, at every depth (see
 * above), and checks each subgraph (ir_graph_check). Values a subgraph reads
 * that g itself does not define stay undefined in g, for g's own check (or
 * g's enclosing scope) to catch. Idempotent. Errors name the subgraph. */
mopt_status ir_graph_bind_captures(ir_graph *g);

/* Translates a shape of graph `from` into graph `to`: symbols are matched
 * by name (interned in `to` when missing). Returns 0, or -1 when out of
 * memory (message set). */
int ir_shape_translate(const ir_shape *s, const ir_graph *from, ir_graph *to, ir_shape *out);

#endif
