/*
 * pb.h — a small protobuf wire-format decoder (no protobuf library): a reader
 * over a byte range that yields one field at a time, with every length
 * bounds-checked. Errors are MOPT_ERR_PARSE and name the byte offset and the
 * message/field being read. It knows nothing of ONNX; onnx_import.c gives it
 * field names for its messages. It never allocates except in pb_repeated,
 * pb_string and pb_str_read (a long string).
 */
#ifndef MOPT_IO_PB_H
#define MOPT_IO_PB_H

#include <mopt/mopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Wire types that protobuf 3 uses. Groups (3, 4) and 6, 7 are rejected. */
typedef enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 } pb_wire;

/* A reader over base[pos..end). Offsets in messages are relative to base, so
 * sub-readers of nested messages report offsets in the whole file. */
typedef struct pb_reader {
    const uint8_t *base;
    size_t pos, end;
    const char *msg;          /* message name for errors, e.g. "NodeProto" */
    const char *const *names; /* field names indexed by field number; may be NULL */
    size_t n_names;
} pb_reader;

/* One decoded field. For PB_VARINT, PB_I64 and PB_I32, u holds the value
 * (fixed32 in the low 32 bits); for PB_LEN, data/len hold the payload. */
typedef struct pb_field {
    uint32_t num;
    pb_wire wire;
    size_t offset; /* offset of the tag */
    uint64_t u;
    const uint8_t *data;
    size_t len;
    size_t data_offset; /* offset of the payload (PB_LEN) */
} pb_field;

/* A growable array of decoded repeated scalars: elements are uint64_t for
 * PB_VARINT and PB_I64, uint32_t for PB_I32 (esize is set on first use).
 * Release with pb_vec_free. */
typedef struct pb_vec {
    void *data;
    size_t n, cap, esize;
} pb_vec;

/* Starts reading base[0..len) as message `msg` (a static string). */
void pb_init(pb_reader *r, const uint8_t *base, size_t len, const char *msg,
             const char *const *names, size_t n_names);
/* A reader over the payload of a PB_LEN field of r, as message `msg`. */
void pb_sub(const pb_reader *r, const pb_field *f, const char *msg, const char *const *names,
            size_t n_names, pb_reader *sub);
/* True while fields remain. */
bool pb_more(const pb_reader *r);
/* Reads the next field (tag and value, consuming it); unknown fields are
 * skipped simply by ignoring them. Returns OK or PARSE. */
mopt_status pb_next(pb_reader *r, pb_field *f);

/* Decodes a varint at p[0..avail): returns the bytes used (1..10), 0 when
 * truncated, -1 when longer than 10 bytes or overflowing 64 bits. */
int pb_decode_varint(const uint8_t *p, size_t avail, uint64_t *v);

/* "NodeProto.input" (or "NodeProto.#17" for an unnamed field) into buf. */
const char *pb_field_name(const pb_reader *r, uint32_t num, char *buf, size_t cap);
/* Fails with PARSE unless f has wire type `wire`. */
mopt_status pb_expect(const pb_reader *r, const pb_field *f, pb_wire wire);
/* Fails with PARSE (naming the field and offset) with a custom reason. */
mopt_status pb_error(const pb_reader *r, const pb_field *f, const char *reason);

/* Appends the element(s) of a repeated scalar field of element wire type
 * `elem` (PB_VARINT, PB_I64 or PB_I32), packed (PB_LEN) or not. Returns OK,
 * PARSE or OUT_OF_MEMORY. */
mopt_status pb_repeated(const pb_reader *r, const pb_field *f, pb_wire elem, pb_vec *v);
void pb_vec_free(pb_vec *v);

/* A NUL-terminated copy of a PB_LEN string field (mopt_free it); embedded NUL
 * bytes are rejected (PARSE) unless allow_nul. *len_out (may be NULL) gets the
 * true length. Returns OK, PARSE or OUT_OF_MEMORY. */
mopt_status pb_string(const pb_reader *r, const pb_field *f, bool allow_nul, char **out,
                      size_t *len_out);

/* A string field held briefly (e.g. a name looked up, then dropped): short
 * ones in `buf`, longer ones in a heap copy that pb_str_free releases. */
typedef struct pb_str {
    char buf[120];
    char *heap;
    const char *s; /* NUL-terminated: buf or heap */
} pb_str;

/* As pb_string without allow_nul, into *o (whose previous heap copy, if any,
 * is freed first; start from pb_str o = {0}). */
mopt_status pb_str_read(const pb_reader *r, const pb_field *f, pb_str *o);
void pb_str_free(pb_str *o);

#endif
