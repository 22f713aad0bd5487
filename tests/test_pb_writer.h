/*
 * test_pb_writer.h — writing ONNX protobuf bytes by hand in C tests (the
 * load-time and memory-limit tests build models far too large, or too
 * hostile, to commit): a growable byte buffer, the wire format's varint and
 * length-delimited fields, a ValueInfoProto and the ModelProto around a
 * graph. Header-only (static
 * functions); abort() on out of memory.
 */
#ifndef MOPT_TESTS_TEST_PB_WRITER_H
#define MOPT_TESTS_TEST_PB_WRITER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static inline void put(buf *b, const void *data, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) abort();
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}

static inline void varint(buf *b, uint64_t v) {
    uint8_t t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (uint8_t)v;
    put(b, t, n);
}

/* A varint field. */
static inline void f_int(buf *b, uint32_t field, uint64_t v) {
    varint(b, (uint64_t)field << 3);
    varint(b, v);
}

/* A length-delimited field. */
static inline void f_bytes(buf *b, uint32_t field, const void *data, size_t n) {
    varint(b, ((uint64_t)field << 3) | 2);
    varint(b, n);
    put(b, data, n);
}

static inline void f_str(buf *b, uint32_t field, const char *s) { f_bytes(b, field, s, strlen(s)); }

/* Appends sub as a length-delimited field and frees it. */
static inline void f_msg(buf *b, uint32_t field, buf *sub) {
    f_bytes(b, field, sub->p, sub->n);
    free(sub->p);
    *sub = (buf){0};
}

/* ValueInfoProto (field `field` of g): a tensor of ONNX elem_type `elem`
 * with the given dims. */
static inline void value_info(buf *g, uint32_t field, const char *name, int elem, int rank,
                              const int64_t *dims) {
    buf shape = {0}, tt = {0}, tp = {0}, vi = {0};
    for (int i = 0; i < rank; i++) {
        buf d = {0};
        f_int(&d, 1, (uint64_t)dims[i]);
        f_msg(&shape, 1, &d);
    }
    f_int(&tt, 1, (uint64_t)elem);
    f_msg(&tt, 2, &shape);
    f_msg(&tp, 1, &tt);
    f_str(&vi, 1, name);
    f_msg(&vi, 2, &tp);
    f_msg(g, field, &vi);
}

/* The ModelProto (ir_version 8, default domain at opset 17) around graph g;
 * frees g. */
static inline buf model_proto(buf *g) {
    buf m = {0}, opset = {0};
    f_str(&opset, 1, "");
    f_int(&opset, 2, 17);
    f_int(&m, 1, 8); /* ir_version */
    f_msg(&m, 8, &opset);
    f_msg(&m, 7, g);
    return m;
}

#endif
