/*
 * mopt_read_table.c — the .mopt tensor table, trusted only after checking:
 * each entry's dtype, dims and size agree; its bytes are 64-byte aligned,
 * after the header and inside the file; no two entries overlap; and, when
 * asked, each entry's bytes hash to its checksum. The graph's weights then
 * point into the image through this table.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "io/mopt_read.h"
#include "io/mopt_spelling.h"

static int cmp_offset(const void *a, const void *b, void *tab) {
    const mfmt_ld_tensor *t = tab;
    uint64_t x = t[*(const size_t *)a].offset, y = t[*(const size_t *)b].offset;
    return x < y ? -1 : x > y;
}

mopt_status mfmt_load_table(mfmt_loader *L, const ytree_node *root) {
    const ytree_node *seq;
    mopt_status st = mfmt_need(root, "tensors", YTREE_SEQ, "top level", &seq);
    if (st) return st;
    L->tab = mopt_calloc(seq->n ? seq->n : 1, sizeof *L->tab);
    if (!L->tab) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    L->n_tab = seq->n;
    for (size_t i = 0; i < seq->n; i++) {
        const ytree_node *m;
        mfmt_ld_tensor *t = &L->tab[i];
        char where[MFMT_WHERE_CAP];
        snprintf(where, sizeof where, "tensors[%zu]", i);
        if ((st = mfmt_item_map(seq, i, where, &m))) return st;
        if ((st = mfmt_key_str(m, "name", where, &t->name))) return st;
        snprintf(where, sizeof where, "tensors[%zu] ('%.200s')", i, t->name);
        if ((st = mfmt_key_dtype(m, where, &t->dtype))) return st;
        if (!mfmt_dtype_storable(t->dtype))
            return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, ytree_get(m, "dtype"), where,
                                "dtype %s cannot be stored", mopt_dtype_name(t->dtype));
        if ((st = mfmt_key_dims(m, where, &t->rank, t->dims))) return st;
        int64_t off, size;
        if ((st = mfmt_key_int(m, "offset", where, 0, INT64_MAX, &off))) return st;
        if ((st = mfmt_key_int(m, "size", where, 0, INT64_MAX, &size))) return st;
        uint64_t sum = 0;
        const ytree_node *cn;
        if ((st = mfmt_need(m, "checksum", YTREE_SCALAR, where, &cn))) return st;
        if ((st = mfmt_as_hex64(cn, where, "checksum", &sum))) return st;
        t->offset = (uint64_t)off;
        t->size = (uint64_t)size;
        uint64_t want;
        char db[IR_MAX_RANK * 24 + 4];
        mfmt_dims_text(t->rank, t->dims, db, sizeof db);
        if (!mfmt_tensor_bytes(t->dtype, t->rank, t->dims, &want))
            return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where,
                                "dims %s of %s overflow a 64-bit byte count", db,
                                mopt_dtype_name(t->dtype));
        if (want != t->size)
            return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where,
                                "size %" PRIu64 " does not match dims %s of %s (%" PRIu64 " bytes)",
                                t->size, db, mopt_dtype_name(t->dtype), want);
        if (t->offset % MFMT_ALIGN)
            return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where,
                                "offset %" PRIu64 " is not %d-byte aligned", t->offset, MFMT_ALIGN);
        if (t->offset < L->header_end)
            return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where,
                                "offset %" PRIu64 " points into the header (which ends at %zu)",
                                t->offset, L->header_end);
        if (t->offset > L->size || t->size > L->size - t->offset)
            return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where,
                                "bytes [%" PRIu64 ", %" PRIu64
                                ") lie outside the file (%zu bytes): "
                                "truncated or corrupt",
                                t->offset, t->offset + t->size, L->size);
        t->data = t->size ? L->base + t->offset : NULL;
        t->checksum = sum;
        t->line = cn->line;
    }
    /* no two tensors may share bytes */
    size_t *order = mopt_malloc((L->n_tab ? L->n_tab : 1) * sizeof *order);
    if (!order) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    size_t k = 0;
    for (size_t i = 0; i < L->n_tab; i++)
        if (L->tab[i].size) order[k++] = i;
    qsort_r(order, k, sizeof *order, cmp_offset, L->tab);
    for (size_t i = 1; i < k; i++) {
        const mfmt_ld_tensor *a = &L->tab[order[i - 1]], *b = &L->tab[order[i]];
        if (a->offset + a->size > b->offset) {
            st = mopt_fail(MOPT_ERR_INVALID_MODEL,
                           "header: tensors[%zu] ('%.200s', bytes [%" PRIu64 ", %" PRIu64
                           ")) overlaps tensors[%zu] ('%.200s', bytes [%" PRIu64 ", %" PRIu64 "))",
                           order[i - 1], a->name, a->offset, a->offset + a->size, order[i], b->name,
                           b->offset, b->offset + b->size);
            break;
        }
    }
    mopt_free(order);
    /* the layout is sound: now, if asked, the bytes */
    for (size_t i = 0; !st && L->verify && i < L->n_tab; i++) {
        const mfmt_ld_tensor *t = &L->tab[i];
        uint64_t h = mfmt_hash64(t->data ? t->data : "", (size_t)t->size);
        if (h != t->checksum)
            st = mopt_fail(MOPT_ERR_PARSE,
                           "header line %zu: tensors[%zu] ('%.200s'): checksum mismatch: the "
                           "table says %016" PRIx64 " but the data hashes to %016" PRIx64
                           " (corrupted weights)",
                           t->line, i, t->name, t->checksum, h);
    }
    return st;
}

mopt_status mfmt_table_ref(mfmt_loader *L, const ytree_node *map, const char *where,
                           const mfmt_ld_tensor **out) {
    int64_t k;
    mopt_status st =
        mfmt_key_int(map, "tensor", where, 0, L->n_tab ? (int64_t)L->n_tab - 1 : -1, &k);
    if (st) return st;
    *out = &L->tab[k];
    return MOPT_OK;
}
