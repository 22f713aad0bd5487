/*
 * ytree_alloc.c — the two allocation entry points lib/io/yaml_tree.c calls,
 * for the copy of that reader compiled into the `mopt` tool (budget files of
 * `mopt compare`). The tool allocates with the C library; libmopt's own
 * mopt_malloc stays hidden inside libmopt.
 */
#include <stdlib.h>

#include "core/alloc.h"

void *mopt_malloc(size_t size) { return malloc(size ? size : 1); }

void mopt_free(void *ptr) { free(ptr); }
