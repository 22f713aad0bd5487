/*
 * mopt_spelling.h — how the .mopt header spells things, shared by the writer
 * (mopt_write*.c) and the reader (mopt_read*.c) so the two cannot drift:
 * the magic and terminator lines, attribute type and dtype names, hex.
 * Private to lib/io; the format itself is described in mopt_format.h.
 */
#ifndef MOPT_IO_MOPT_SPELLING_H
#define MOPT_IO_MOPT_SPELLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

#define MFMT_INLINE_MAX 64      /* attribute tensors up to this size are inline hex */
#define MFMT_MAX_GRAPH_DEPTH 32 /* subgraph nesting */

#define MFMT_MAGIC "%MOPT-"     /* the first line: MFMT_MAGIC, the version, "\n" */
#define MFMT_END "\n%MOPT-END " /* the terminator line, with the newline before it */
#define MFMT_MAGIC_LEN (sizeof MFMT_MAGIC - 1)
#define MFMT_END_LEN (sizeof MFMT_END - 1)

/* The name of an attribute type in the header, or NULL when it has none. */
const char *mfmt_attr_type_name(ir_attr_type t);
/* The attribute type a name stands for; IR_ATTR_UNDEFINED when none. */
ir_attr_type mfmt_attr_type_from_name(const char *name);

/* dtype from its mopt_dtype_name; false when unknown. */
bool mfmt_dtype_from_name(const char *s, mopt_dtype *out);
/* True for the dtypes whose tensors the format can store (numeric ones). */
bool mfmt_dtype_storable(mopt_dtype d);

/* d[0..n) as 2n lowercase hex digits and a NUL into out. */
void mfmt_hex_encode(const uint8_t *d, size_t n, char *out);
/* Decodes hex text s[0..len) into dst; false unless it is exactly n bytes of hex. */
bool mfmt_hex_decode(const char *s, size_t len, uint8_t *dst, size_t n);

#endif
