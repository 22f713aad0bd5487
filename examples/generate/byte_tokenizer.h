/*
 * byte_tokenizer.h — the tokenizer of the byte-level models of
 * examples/generate: token t is the byte t (vocabulary 256), so encoding is
 * a widening copy and decoding writes the byte back. Multi-byte UTF-8
 * characters are several tokens; a stream of them is valid UTF-8 again as
 * soon as the last byte of a character arrives, so printing token by token
 * is correct. Header-only: the example and its tests share it.
 */
#ifndef MOPT_EXAMPLES_BYTE_TOKENIZER_H
#define MOPT_EXAMPLES_BYTE_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BYTE_TOKENIZER_VOCAB 256

/* Writes the tokens of text[0..len) to ids (room for len); returns len. */
static inline size_t byte_encode(const char *text, size_t len, int64_t *ids) {
    for (size_t i = 0; i < len; i++)
        ids[i] = (unsigned char)text[i];
    return len;
}

/* Writes token id as its byte to f; returns 0, or -1 for an id that is no
 * byte (a model with a larger vocabulary). */
static inline int byte_decode_put(int64_t id, FILE *f) {
    if (id < 0 || id >= BYTE_TOKENIZER_VOCAB) return -1;
    return fputc((int)id, f) == EOF ? -1 : 0;
}

#endif /* MOPT_EXAMPLES_BYTE_TOKENIZER_H */
