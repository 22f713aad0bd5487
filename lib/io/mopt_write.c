/*
 * mopt_write.c — mfmt_save: the header around the graph (format version,
 * producer, source checksum, pass report, tensor table), its length settled
 * to a fixed point (the table's offsets depend on it), then the file: header,
 * weights 64-byte aligned, written under a temporary name and renamed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/mopt_spelling.h"
#include "io/mopt_write.h"

static uint64_t align_up(uint64_t x) {
    return (x + (MFMT_ALIGN - 1)) & ~(uint64_t)(MFMT_ALIGN - 1);
}

int64_t mfmt_table_take(mfmt_emitter *e, const char *name, mopt_dtype dtype, int32_t rank,
                        const int64_t *dims, const void *data, size_t size) {
    if (e->next < e->n_tab) {
        if (e->tab[e->next].data != data) {
            e->st = mopt_fail(MOPT_ERR_INTERNAL, "the tensor table changed between emissions");
            return -1;
        }
        return (int64_t)e->next++;
    }
    if (size && !data) {
        e->st = mopt_fail(MOPT_ERR_INTERNAL, "tensor '%s' has %zu bytes but no data", name, size);
        return -1;
    }
    if (e->n_tab == e->cap_tab) {
        size_t cap = e->cap_tab ? e->cap_tab * 2 : 64;
        mfmt_table_entry *nt = mopt_realloc(e->tab, cap * sizeof *nt);
        if (!nt) {
            e->st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory building the tensor table");
            return -1;
        }
        e->tab = nt;
        e->cap_tab = cap;
    }
    mfmt_table_entry *t = &e->tab[e->n_tab++];
    t->name = name;
    t->dtype = dtype;
    t->rank = rank;
    t->dims = dims;
    t->data = data;
    t->size = size;
    t->offset = 0;
    t->checksum = mfmt_hash64(data ? data : "", size);
    e->next = e->n_tab;
    return (int64_t)e->next - 1;
}

/* Emits the whole header (magic line, YAML, terminator) into out, with the
 * data starting at data_start. */
/* The model's description (format_minor 1): absent strings are "". */
static void emit_metadata(mfmt_emitter *e, const ir_graph *g) {
    mfmt_emit_plain(e, "metadata");
    mfmt_emit_map(e, false);
    mfmt_emit_key_str(e, "producer_version", g->producer_version ? g->producer_version : "");
    mfmt_emit_key_str(e, "domain", g->domain ? g->domain : "");
    mfmt_emit_key_int(e, "model_version", g->model_version);
    mfmt_emit_key_str(e, "doc_string", g->doc_string ? g->doc_string : "");
    mfmt_emit_key_str(e, "graph_doc_string", g->graph_doc_string ? g->graph_doc_string : "");
    mfmt_emit_plain(e, "props");
    mfmt_emit_seq(e, false);
    for (int32_t i = 0; i < g->n_props; i++) {
        mfmt_emit_map(e, true);
        mfmt_emit_key_str(e, "key", g->props[i].key);
        mfmt_emit_key_str(e, "value", g->props[i].value);
        mfmt_emit_map_end(e);
    }
    mfmt_emit_seq_end(e);
    mfmt_emit_map_end(e);
}

static mopt_status emit_header(mfmt_emitter *e, const ir_graph *g, const mfmt_meta *meta,
                               uint64_t data_start, mfmt_buf *out) {
    out->len = 0;
    char line[64];
    int ll = snprintf(line, sizeof line, "%s%d\n", MFMT_MAGIC, MFMT_VERSION);
    mfmt_buf_add(out, line, (size_t)ll);
    e->out = out;
    e->failed = false;
    e->next = 0;
    if (!yaml_emitter_initialize(&e->y))
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory starting the YAML mfmt_emitter");
    yaml_emitter_set_output(&e->y, mfmt_emit_write_handler, out);
    yaml_emitter_set_unicode(&e->y, 1);
    yaml_emitter_set_width(&e->y, -1);
    yaml_emitter_set_indent(&e->y, 2);
    yaml_emitter_set_break(&e->y, YAML_LN_BREAK);
    yaml_event_t ev;
    mfmt_emit_event(e, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
    mfmt_emit_event(e, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
    mfmt_emit_map(e, false);
    mfmt_emit_key_int(e, "format_version", MFMT_VERSION);
    mfmt_emit_key_int(e, "format_minor", MFMT_MINOR);
    char producer[64];
    snprintf(producer, sizeof producer, "libmopt %s", mopt_version());
    mfmt_emit_key_str(e, "producer", producer);
    mfmt_emit_key_str(e, "checksum_algorithm", "mh64");
    mfmt_emit_plain(e, "source");
    mfmt_emit_map(e, true);
    mfmt_emit_plain(e, "checksum");
    mfmt_emit_hex64(e, meta->source_checksum);
    mfmt_emit_key_int(e, "bytes", (int64_t)meta->source_bytes);
    mfmt_emit_map_end(e);
    mfmt_emit_key_int(e, "opt_level", meta->opt_level);
    mfmt_emit_key_str(e, "precision", meta->precision);
    if (meta->int8_exclude[0]) mfmt_emit_key_str(e, "int8_exclude", meta->int8_exclude);
    if (meta->int8_exclude[0] && meta->int8_fallback[0])
        mfmt_emit_key_str(e, "int8_fallback", meta->int8_fallback);
    mfmt_emit_plain(e, "passes");
    mfmt_emit_seq(e, false);
    for (int i = 0; i < meta->report.n && i < PASS_REPORT_CAP; i++) {
        const pass_report_entry *pe = &meta->report.entries[i];
        mfmt_emit_map(e, true);
        mfmt_emit_key_str(e, "name", pe->name ? pe->name : "");
        mfmt_emit_plain(e, "ms");
        mfmt_emit_ms(e, pe->ms);
        mfmt_emit_key_int(e, "nodes_before", pe->nodes_before);
        mfmt_emit_key_int(e, "nodes_after", pe->nodes_after);
        mfmt_emit_key_int(e, "rewrites", pe->rewrites);
        mfmt_emit_key_str(e, "note", pe->note);
        mfmt_emit_map_end(e);
    }
    mfmt_emit_seq_end(e);
    mfmt_emit_plain(e, "pass_totals");
    mfmt_emit_map(e, true);
    mfmt_emit_key_int(e, "nodes_before", meta->report.nodes_before);
    mfmt_emit_key_int(e, "nodes_after", meta->report.nodes_after);
    mfmt_emit_plain(e, "ms");
    mfmt_emit_ms(e, meta->report.total_ms);
    mfmt_emit_map_end(e);
    emit_metadata(e, g);
    mfmt_emit_plain(e, "graph");
    mfmt_emit_graph(e, g, 0);
    /* the table, with offsets from data_start in table order */
    uint64_t off = data_start;
    mfmt_emit_plain(e, "tensors");
    mfmt_emit_seq(e, false);
    for (size_t i = 0; i < e->n_tab; i++) {
        mfmt_table_entry *t = &e->tab[i];
        t->offset = off;
        off = align_up(off + t->size);
        mfmt_emit_map(e, true);
        mfmt_emit_key_str(e, "name", t->name);
        mfmt_emit_key_str(e, "dtype", mopt_dtype_name(t->dtype));
        mfmt_emit_plain(e, "dims");
        mfmt_emit_dims(e, t->rank, t->dims);
        mfmt_emit_key_int(e, "offset", (int64_t)t->offset);
        mfmt_emit_key_int(e, "size", (int64_t)t->size);
        mfmt_emit_plain(e, "checksum");
        mfmt_emit_hex64(e, t->checksum);
        mfmt_emit_map_end(e);
    }
    mfmt_emit_seq_end(e);
    mfmt_emit_map_end(e);
    mfmt_emit_event(e, &ev, yaml_document_end_event_initialize(&ev, 1));
    mfmt_emit_event(e, &ev, yaml_stream_end_event_initialize(&ev));
    if (!e->failed && !e->st && !yaml_emitter_flush(&e->y)) e->failed = true;
    mopt_status st = e->st;
    if (!st && (e->failed || out->oom))
        st = out->oom ? mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory writing a .mopt header")
                      : mopt_fail(MOPT_ERR_INTERNAL, "YAML mfmt_emitter: %s",
                                  e->y.problem ? e->y.problem : "error");
    yaml_emitter_delete(&e->y);
    if (st) return st;
    /* the YAML ends with a newline; the terminator carries the checksum */
    if (out->len == 0 || out->p[out->len - 1] != '\n') mfmt_buf_add(out, "\n", 1);
    uint64_t h = mfmt_hash64(out->p, out->len);
    ll = snprintf(line, sizeof line, "%s%016" PRIx64 "\n", &MFMT_END[1], h); /* no leading \n */
    mfmt_buf_add(out, line, (size_t)ll);
    if (out->oom) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory writing a .mopt header");
    return MOPT_OK;
}

static bool write_zeros(FILE *f, uint64_t n) {
    static const uint8_t zeros[MFMT_ALIGN];
    while (n) {
        size_t k = n > sizeof zeros ? sizeof zeros : (size_t)n;
        if (fwrite(zeros, 1, k, f) != k) return false;
        n -= k;
    }
    return true;
}

mopt_status mfmt_save(const ir_graph *g, const mfmt_meta *meta, const char *path) {
    mfmt_emitter e;
    memset(&e, 0, sizeof e);
    mfmt_buf hdr = {0};
    /* The offsets are part of the header, so the header's length depends on
     * where the data starts: iterate to the smallest fixed point (lengths
     * only grow with the offsets, so this converges in a few rounds). */
    uint64_t data_start = 0;
    mopt_status st = MOPT_OK;
    for (int round = 0;; round++) {
        st = emit_header(&e, g, meta, data_start, &hdr);
        if (st) break;
        uint64_t need = align_up(hdr.len);
        if (need == data_start) break;
        if (round > 16) {
            st = mopt_fail(MOPT_ERR_INTERNAL, "the .mopt header length does not settle");
            break;
        }
        data_start = need;
    }
    uint64_t end = data_start;
    if (!st && e.n_tab) end = align_up(e.tab[e.n_tab - 1].offset + e.tab[e.n_tab - 1].size);
    char *tmp = NULL;
    FILE *f = NULL;
    if (!st) {
        size_t pl = strlen(path);
        tmp = mopt_malloc(pl + 32);
        if (!tmp) st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        if (!st) {
            snprintf(tmp, pl + 32, "%s.tmp-%ld", path, (long)getpid());
            f = fopen(tmp, "wb");
            if (!f) st = mopt_fail(MOPT_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
        }
    }
    if (!st) {
        bool ok = fwrite(hdr.p, 1, hdr.len, f) == hdr.len;
        uint64_t pos = hdr.len;
        for (size_t i = 0; ok && i < e.n_tab; i++) {
            const mfmt_table_entry *t = &e.tab[i];
            ok = write_zeros(f, t->offset - pos);
            if (ok && t->size) ok = fwrite(t->data, 1, t->size, f) == t->size;
            pos = t->offset + t->size;
        }
        if (ok) ok = write_zeros(f, end - pos);
        if (ok) ok = fflush(f) == 0;
        int err = errno;
        if (fclose(f) != 0 && ok) {
            ok = false;
            err = errno;
        }
        f = NULL;
        if (ok && rename(tmp, path) != 0) {
            ok = false;
            err = errno;
        }
        if (!ok) {
            remove(tmp);
            st = mopt_fail(MOPT_ERR_IO, "cannot write '%s': %s", path, strerror(err));
        }
    }
    mopt_free(tmp);
    mopt_free(hdr.p);
    mopt_free(e.tab);
    return st;
}
