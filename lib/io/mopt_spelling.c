/*
 * mopt_spelling.c — names and hex shared by the .mopt writer and reader
 * (see mopt_spelling.h).
 */
#include "io/mopt_spelling.h"

#include <string.h>

static const struct {
    ir_attr_type type;
    const char *name;
} k_attr_types[] = {
    {IR_ATTR_FLOAT, "float"},
    {IR_ATTR_INT, "int"},
    {IR_ATTR_STRING, "string"},
    {IR_ATTR_TENSOR, "tensor"},
    {IR_ATTR_GRAPH, "graph"},
    {IR_ATTR_FLOATS, "floats"},
    {IR_ATTR_INTS, "ints"},
    {IR_ATTR_STRINGS, "strings"},
    {IR_ATTR_TENSORS, "tensors"},
    {IR_ATTR_GRAPHS, "graphs"},
    {IR_ATTR_TYPE_PROTO, "type_proto"},
    {IR_ATTR_TYPE_PROTOS, "type_protos"},
};
#define N_ATTR_TYPES (sizeof k_attr_types / sizeof k_attr_types[0])

const char *mfmt_attr_type_name(ir_attr_type t) {
    for (size_t i = 0; i < N_ATTR_TYPES; i++)
        if (k_attr_types[i].type == t) return k_attr_types[i].name;
    return NULL;
}

ir_attr_type mfmt_attr_type_from_name(const char *name) {
    for (size_t i = 0; i < N_ATTR_TYPES; i++)
        if (strcmp(k_attr_types[i].name, name) == 0) return k_attr_types[i].type;
    return IR_ATTR_UNDEFINED;
}

bool mfmt_dtype_from_name(const char *s, mopt_dtype *out) {
    for (int d = 0; d <= MOPT_DTYPE_I2; d++) {
        const char *n = mopt_dtype_name((mopt_dtype)d);
        if (strcmp(n, s) == 0 && (d == 0 || strcmp(n, "undefined") != 0)) {
            *out = (mopt_dtype)d;
            return true;
        }
    }
    return false;
}

bool mfmt_dtype_storable(mopt_dtype d) {
    return d != MOPT_DTYPE_UNDEFINED && d != MOPT_DTYPE_STRING && mopt_dtype_size(d) > 0;
}

void mfmt_hex_encode(const uint8_t *d, size_t n, char *out) {
    static const char k_hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = k_hex[d[i] >> 4];
        out[2 * i + 1] = k_hex[d[i] & 15];
    }
    out[2 * n] = '\0';
}

static int hex_val(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool mfmt_hex_decode(const char *s, size_t len, uint8_t *dst, size_t n) {
    if (len != 2 * n) return false;
    for (size_t i = 0; i < n; i++) {
        int h = hex_val(s[2 * i]), l = hex_val(s[2 * i + 1]);
        if (h < 0 || l < 0) return false;
        dst[i] = (uint8_t)(h << 4 | l);
    }
    return true;
}
