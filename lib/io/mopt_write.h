/*
 * mopt_write.h — the parts of the .mopt writer, private to lib/io: the YAML
 * emitter into memory (mopt_emit.c), the tensor table and the header around
 * the graph (mopt_write.c), and the graph itself (mopt_write_graph.c).
 * Errors are collected in the emitter and reported once, after the header.
 */
#ifndef MOPT_IO_MOPT_WRITE_H
#define MOPT_IO_MOPT_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "io/mopt_format.h"

/* One weight in the tensor table: where its bytes are and where they go. */
typedef struct mfmt_table_entry {
    const char *name;
    mopt_dtype dtype;
    int32_t rank;
    const int64_t *dims;
    const void *data;
    size_t size;
    uint64_t offset;
    uint64_t checksum;
} mfmt_table_entry;

/* A growing byte buffer; oom sticks once an allocation failed. */
typedef struct mfmt_buf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} mfmt_buf;

/* The header being emitted, with the tensor table it refers to. */
typedef struct mfmt_emitter {
    yaml_emitter_t y;
    mfmt_buf *out;
    bool failed;    /* libyaml refused an event */
    mopt_status st; /* first other failure (message set) */
    mfmt_table_entry *tab;
    size_t n_tab, cap_tab;
    size_t next; /* table index handed out next in this emission */
} mfmt_emitter;

/* ---- mopt_emit.c: YAML events into a mfmt_buf ---------------------------- */

bool mfmt_buf_add(mfmt_buf *b, const void *d, size_t n);
/* libyaml's output handler; data is the mfmt_buf. */
int mfmt_emit_write_handler(void *data, unsigned char *buffer, size_t size);
/* Emits ev when ok (ev was initialized) and nothing has failed yet. */
void mfmt_emit_event(mfmt_emitter *e, yaml_event_t *ev, int ok);
void mfmt_emit_map(mfmt_emitter *e, bool flow);
void mfmt_emit_map_end(mfmt_emitter *e);
void mfmt_emit_seq(mfmt_emitter *e, bool flow);
void mfmt_emit_seq_end(mfmt_emitter *e);
void mfmt_emit_plain(mfmt_emitter *e, const char *s);
void mfmt_emit_int(mfmt_emitter *e, int64_t v);
/* 16 hex digits, double-quoted. */
void mfmt_emit_hex64(mfmt_emitter *e, uint64_t v);
/* A float, exactly: 9 significant digits round-trip a float32; infinities as
 * .inf/-.inf; NaNs by their bit pattern ("nan:7fc00000"). */
void mfmt_emit_float(mfmt_emitter *e, float f);
/* A time in milliseconds, 3 decimals (0 when not a finite time). */
void mfmt_emit_ms(mfmt_emitter *e, double ms);
/* A string: double-quoted (libyaml escapes what needs it, NUL included), or,
 * when it is not valid UTF-8, its bytes in hex tagged !hex. */
void mfmt_emit_str_n(mfmt_emitter *e, const char *s, size_t len);
void mfmt_emit_str(mfmt_emitter *e, const char *s);
void mfmt_emit_key_int(mfmt_emitter *e, const char *k, int64_t v);
void mfmt_emit_key_str(mfmt_emitter *e, const char *k, const char *v);
/* dims as a flow sequence. */
void mfmt_emit_dims(mfmt_emitter *e, int32_t rank, const int64_t *dims);

/* ---- mopt_write.c -------------------------------------------------------- */

/* Hands out the next tensor-table index (-1 and e->st on failure). The
 * header is emitted more than once (offsets depend on its length); the
 * table and the weight checksums are built during the first emission and
 * reused, in the same order, after. */
int64_t mfmt_table_take(mfmt_emitter *e, const char *name, mopt_dtype dtype, int32_t rank,
                        const int64_t *dims, const void *data, size_t size);

/* ---- mopt_write_graph.c -------------------------------------------------- */

/* Emits graph g (values, nodes, attributes, subgraphs at depth + 1) as a
 * mapping; weights and large attribute tensors go to the tensor table. */
void mfmt_emit_graph(mfmt_emitter *e, const ir_graph *g, int depth);

#endif
