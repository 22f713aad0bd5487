/*
 * mopt_read.h — the parts of the .mopt reader, private to lib/io: typed
 * header fields with messages that name the line and key path
 * (mopt_read_fields.c), the tensor table checked against the file
 * (mopt_read_table.c) and the graph (mopt_read_graph.c); mopt_read.c checks
 * the framing and drives them. The header arrives as a yaml_tree.
 */
#ifndef MOPT_IO_MOPT_READ_H
#define MOPT_IO_MOPT_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "io/mopt_format.h"
#include "io/yaml_tree.h"

/* One entry of the tensor table, checked against the file. */
typedef struct mfmt_ld_tensor {
    char *name;
    mopt_dtype dtype;
    int32_t rank;
    int64_t dims[IR_MAX_RANK];
    uint64_t offset, size;
    uint64_t checksum;
    size_t line;
    void *data; /* into the image; NULL when size is 0 */
} mfmt_ld_tensor;

/* What the reader knows about the image while it builds the graph. */
typedef struct mfmt_loader {
    uint8_t *base;
    size_t size;
    size_t header_end;
    bool verify;
    mfmt_ld_tensor *tab;
    size_t n_tab;
} mfmt_loader;

#define MFMT_WHERE_CAP 400

/* ---- mopt_read_fields.c -------------------------------------------------- */

/* Fails with "header line <n's line>: <where>: <message>" (no line when n
 * is NULL). Returns st. */
mopt_status mfmt_fail_at(mopt_status st, const ytree_node *n, const char *where, const char *fmt,
                         ...) MOPT_PRINTF(4, 5);

/* A scalar tagged !hex holds its bytes as hex digits. */
static inline bool mfmt_is_hex(const ytree_node *n) {
    return n->tag && strcmp(n->tag, "!hex") == 0;
}

/* The child `key` of map, required and of the given kind (ytree_kind). */
mopt_status mfmt_need(const ytree_node *map, const char *key, int kind, const char *where,
                      const ytree_node **out);
/* Item i of the sequence seq, required to be a mapping (where: the item's
 * place, for the message). */
mopt_status mfmt_item_map(const ytree_node *seq, size_t i, const char *where,
                          const ytree_node **out);
/* A plain integer scalar in [lo, hi] (outside: INVALID_MODEL). */
mopt_status mfmt_as_int(const ytree_node *n, const char *where, const char *what, int64_t lo,
                        int64_t hi, int64_t *out);
mopt_status mfmt_key_int(const ytree_node *map, const char *key, const char *where, int64_t lo,
                         int64_t hi, int64_t *out);
/* 16 hex digits, most significant first. */
mopt_status mfmt_as_hex64(const ytree_node *n, const char *where, const char *what, uint64_t *out);
/* A string scalar (double-quoted, or !hex) as a new buffer; *len its length.
 * With cstr, a NUL inside is refused. */
mopt_status mfmt_as_str(const ytree_node *n, const char *where, const char *what, bool cstr,
                        char **out, size_t *len);
mopt_status mfmt_key_str(const ytree_node *map, const char *key, const char *where, char **out);
/* Copies a short string key into a fixed buffer. */
mopt_status mfmt_key_buf(const ytree_node *map, const char *key, const char *where, char *buf,
                         size_t cap);
/* A float as mfmt_emit_float writes it (.inf, -.inf, nan:<bits>, decimal). */
mopt_status mfmt_as_float(const ytree_node *n, const char *where, const char *what, float *out);
/* The key "ms": a finite time >= 0. */
mopt_status mfmt_key_ms(const ytree_node *map, const char *where, double *out);
/* The key "dtype", by its mopt_dtype_name. */
mopt_status mfmt_key_dtype(const ytree_node *map, const char *where, mopt_dtype *out);
/* The key "dims" of a tensor: a sequence of at most IR_MAX_RANK sizes >= 0. */
mopt_status mfmt_key_dims(const ytree_node *map, const char *where, int32_t *rank, int64_t *dims);
/* Bytes of dtype x dims, or false on overflow. */
bool mfmt_tensor_bytes(mopt_dtype dt, int32_t rank, const int64_t *dims, uint64_t *out);
/* dims as "[2,3]" for messages. */
void mfmt_dims_text(int32_t rank, const int64_t *dims, char *buf, size_t cap);

/* ---- mopt_read_table.c --------------------------------------------------- */

/* Reads the tensor table (the top-level key "tensors") into L: every entry
 * checked against the file (dtype, size, alignment, bounds, no overlap)
 * before any is used, and the weights' checksums when L->verify. */
mopt_status mfmt_load_table(mfmt_loader *L, const ytree_node *root);
/* The table entry the key "tensor" of map names. */
mopt_status mfmt_table_ref(mfmt_loader *L, const ytree_node *map, const char *where,
                           const mfmt_ld_tensor **out);

/* ---- mopt_read_graph.c --------------------------------------------------- */

/* A new graph from mapping m (subgraphs at depth + 1); where names it in
 * messages. Weights point into the image through the tensor table. */
mopt_status mfmt_load_graph(mfmt_loader *L, const ytree_node *m, const char *where, int depth,
                            ir_graph **out);

#endif
