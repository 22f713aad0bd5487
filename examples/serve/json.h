/* json.h — a small strict JSON (RFC 8259) parser for examples/serve: parses a
 * whole body into a tree of nodes with limits on depth and node count, checks
 * UTF-8, decodes string escapes. No dependency beyond libc. */
#ifndef SERVE_JSON_H
#define SERVE_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum json_type {
    JSON_NULL,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_type;

typedef struct json_node {
    json_type type;
    int is_int; /* JSON_NUMBER written as an integer (no fraction or exponent) that fits int64 */
    int64_t i;  /* its value when is_int */
    double d;   /* the number's value */
    const char *str; /* JSON_STRING: decoded UTF-8, NUL-terminated (may hold NUL: see len) */
    size_t len;      /* string length in bytes, or number of children */
    const char *key; /* member name when the parent is an object, else NULL */
    size_t key_len;
    struct json_node *child; /* first child (array/object) */
    struct json_node *next;  /* next sibling */
} json_node;

typedef struct json_doc json_doc;

typedef struct json_limits {
    int max_depth;    /* nesting of arrays/objects */
    size_t max_nodes; /* values in the document */
} json_limits;

/* Parses text[0..len). Returns NULL on error and writes a message naming the
 * byte offset to err (errsz bytes). On success *root is the top value; free
 * the document with json_free. */
json_doc *json_parse(const char *text, size_t len, const json_limits *limits, json_node **root,
                     char *err, size_t errsz);
void json_free(json_doc *doc);

/* The member `key` of an object, or NULL. */
const json_node *json_get(const json_node *obj, const char *key);
const char *json_type_name(json_type t);

#endif
