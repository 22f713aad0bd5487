/*
 * test_attrs.h — setting a node's attributes in cmocka tests that build IR
 * graphs by hand (tests/unit/test_kernels.c, test_ops_compute.c,
 * test_ops_shape.c, tests/kernels/test_cpu_kernels.c). Include after
 * <cmocka.h> and "ir/ir.h".
 */
#ifndef MOPT_TESTS_TEST_ATTRS_H
#define MOPT_TESTS_TEST_ATTRS_H

#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/ir.h"

static inline void attr_int(ir_node *n, const char *name, int64_t v) {
    ir_attr *a = ir_node_add_attr(n, name, IR_ATTR_INT);
    assert_non_null(a);
    a->i = v;
}

static inline void attr_float(ir_node *n, const char *name, float v) {
    ir_attr *a = ir_node_add_attr(n, name, IR_ATTR_FLOAT);
    assert_non_null(a);
    a->f = v;
}

/* count values from v (count may be 0) */
static inline void attr_ints(ir_node *n, const char *name, int count, const int64_t *v) {
    ir_attr *a = ir_node_add_attr(n, name, IR_ATTR_INTS);
    assert_non_null(a);
    a->ints = mopt_malloc((size_t)(count > 0 ? count : 1) * sizeof(int64_t));
    assert_non_null(a->ints);
    if (count > 0) memcpy(a->ints, v, (size_t)count * sizeof(int64_t));
    a->n = (size_t)count;
}

static inline void attr_str(ir_node *n, const char *name, const char *v) {
    ir_attr *a = ir_node_add_attr(n, name, IR_ATTR_STRING);
    assert_non_null(a);
    a->s = mopt_strdup(v);
    assert_non_null(a->s);
    a->s_len = strlen(v);
}

#endif
