/*
 * yaml_tree.h — a YAML stream read with libyaml into a small tree of
 * mappings, sequences and scalars, each node with its line number for error
 * messages. Shared by the .mopt header reader and the options loader, so
 * libyaml's event API is driven in one place.
 *
 * The reader is meant for hostile input: aliases are refused (no billion
 * laughs), nesting depth, document count and the tree's memory are bounded
 * by the caller's limits. It only builds the tree: what the keys mean, and
 * the words of every error message, are the caller's (ytree_error says what
 * went wrong and where).
 */
#ifndef MOPT_IO_YAML_TREE_H
#define MOPT_IO_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mopt/mopt.h>

#define YTREE_MAX_DEPTH 256 /* the most any caller may ask for */

typedef enum ytree_kind { YTREE_SCALAR = 1, YTREE_SEQ = 2, YTREE_MAP = 3 } ytree_kind;

typedef struct ytree_node {
    uint8_t kind;    /* ytree_kind */
    bool plain;      /* a scalar written without quotes (plain style) */
    const char *tag; /* the explicit tag ("!hex"), or NULL */
    size_t line;     /* where the node starts, counted as ytree_limits.first_line says */
    char *s;         /* scalar text, NUL-terminated; may hold NULs itself (see len) */
    size_t len;
    struct ytree_node **kids; /* sequence: items; mapping: key, value, key, value, ... */
    size_t n, cap;
} ytree_node;

typedef struct ytree_limits {
    size_t first_line; /* the line number of the text's first line (1, or 2 after a magic line) */
    int max_depth;     /* collections nested deeper are refused (at most YTREE_MAX_DEPTH) */
    int max_documents; /* a further document is refused; 0: no limit */
    size_t max_bytes;  /* memory the tree may take (nodes and text); 0: no limit */
    bool scalar_keys;  /* refuse a mapping key that is a mapping or a sequence */
} ytree_limits;

typedef enum ytree_problem {
    YTREE_OK = 0,
    YTREE_PARSER_MEMORY, /* libyaml's parser could not be created */
    YTREE_MEMORY,        /* out of memory building the tree */
    YTREE_SYNTAX,        /* libyaml refused the text: problem, context, line, column */
    YTREE_ALIAS,         /* an alias (*name) */
    YTREE_DOCUMENTS,     /* a document beyond max_documents */
    YTREE_DEPTH,         /* nesting beyond max_depth */
    YTREE_KEY,           /* a collection as a mapping key (with scalar_keys) */
    YTREE_SIZE,          /* the tree would take more than max_bytes */
    YTREE_EXTRA,         /* a second root node in one document */
} ytree_problem;

/* What went wrong, for the caller to put into its own words. */
typedef struct ytree_error {
    ytree_problem problem;
    size_t line;         /* counted as ytree_limits.first_line says */
    size_t column;       /* from 1; YTREE_SYNTAX only */
    const char *what;    /* YTREE_SYNTAX: libyaml's description, or NULL */
    const char *context; /* YTREE_SYNTAX: libyaml's context, or NULL */
} ytree_error;

/* A stream's documents; the nodes live in chunks freed by ytree_free. */
typedef struct ytree {
    ytree_node **docs; /* one root node per document, in order */
    size_t n_docs, cap_docs;
    struct ytree_chunk *chunks;
    size_t bytes; /* taken so far, for max_bytes */
} ytree;

/* Read text[0..len) (or the rest of the open file f) into *t, which must be
 * zeroed. Returns MOPT_OK, MOPT_ERR_PARSE (syntax, alias, documents, depth,
 * key, extra), MOPT_ERR_LIMIT (size) or MOPT_ERR_OUT_OF_MEMORY, and fills
 * *err; sets no error message. On failure *t holds every node read before
 * the failing event (the collections it was inside may be incomplete), so a
 * caller that acts on the document in order can act on that part first;
 * free it with ytree_free either way. */
mopt_status ytree_read_string(ytree *t, const ytree_limits *lim, const void *text, size_t len,
                              ytree_error *err);
mopt_status ytree_read_file(ytree *t, const ytree_limits *lim, FILE *f, ytree_error *err);
void ytree_free(ytree *t);

/* The value of key in a mapping (the first, when the key repeats), or NULL
 * when map is not a mapping or has no such key. */
const ytree_node *ytree_get(const ytree_node *map, const char *key);

/* True for NULL and for the plain scalars null, ~ and the empty one. */
bool ytree_is_null(const ytree_node *n);

/* "a mapping", "a sequence" or "a scalar". */
const char *ytree_kind_name(int kind);

#endif
