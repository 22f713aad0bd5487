/*
 * yaml_tree.c — libyaml parser events folded into a tree (see yaml_tree.h).
 * The nodes and their text live in an arena of large chunks: one allocation
 * per 64 KiB instead of two or three per scalar, which halves the time a
 * .mopt header takes to load. Never calls mopt_fail: the callers word the
 * errors.
 */
#include "io/yaml_tree.h"

#include <string.h>
#include <yaml.h>

#include "core/alloc.h"

#define CHUNK_BYTES ((size_t)64 << 10)

struct ytree_chunk {
    struct ytree_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

/* n bytes from the arena, 16-byte aligned; NULL when out of memory (*size
 * is set when max_bytes is what ran out). */
static void *arena_alloc(ytree *t, const ytree_limits *lim, size_t n, bool *size) {
    if (n > SIZE_MAX - 15) return NULL;
    n = (n + 15) & ~(size_t)15;
    if (lim->max_bytes && (n > lim->max_bytes || t->bytes > lim->max_bytes - n)) {
        *size = true;
        return NULL;
    }
    struct ytree_chunk *c = t->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;
        if (cap > SIZE_MAX - sizeof(struct ytree_chunk)) return NULL;
        c = mopt_malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = t->chunks;
        c->used = 0;
        c->cap = cap;
        t->chunks = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    t->bytes += n;
    return p;
}

void ytree_free(ytree *t) {
    for (struct ytree_chunk *c = t->chunks, *next; c; c = next) {
        next = c->next;
        mopt_free(c);
    }
    memset(t, 0, sizeof *t);
}

/* Appends kid to the array (*kids, *n, *cap), growing it in the arena. */
static bool push(ytree *t, const ytree_limits *lim, ytree_node ***kids, size_t *n, size_t *cap,
                 ytree_node *kid, bool *size) {
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        if (ncap > SIZE_MAX / sizeof(ytree_node *)) return false;
        ytree_node **nk = arena_alloc(t, lim, ncap * sizeof *nk, size);
        if (!nk) return false;
        if (*n) memcpy(nk, *kids, *n * sizeof *nk);
        *kids = nk;
        *cap = ncap;
    }
    (*kids)[(*n)++] = kid;
    return true;
}

/* A copy of s[0..len) in the arena, NUL-terminated. */
static char *arena_text(ytree *t, const ytree_limits *lim, const void *s, size_t len, bool *size) {
    char *p = len < SIZE_MAX ? arena_alloc(t, lim, len + 1, size) : NULL;
    if (!p) return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

/* A new node for a scalar or collection start event. */
static ytree_node *new_node(ytree *t, const ytree_limits *lim, const yaml_event_t *ev, size_t line,
                            bool *size) {
    ytree_node *nn = arena_alloc(t, lim, sizeof *nn, size);
    if (!nn) return NULL;
    memset(nn, 0, sizeof *nn);
    nn->line = line;
    const yaml_char_t *tag = NULL;
    if (ev->type == YAML_SCALAR_EVENT) {
        nn->kind = YTREE_SCALAR;
        nn->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        nn->len = ev->data.scalar.length;
        nn->s = arena_text(t, lim, ev->data.scalar.value, nn->len, size);
        if (!nn->s) return NULL;
        tag = ev->data.scalar.tag;
    } else if (ev->type == YAML_SEQUENCE_START_EVENT) {
        nn->kind = YTREE_SEQ;
        tag = ev->data.sequence_start.tag;
    } else {
        nn->kind = YTREE_MAP;
        tag = ev->data.mapping_start.tag;
    }
    if (tag) {
        nn->tag = arena_text(t, lim, tag, strlen((const char *)tag), size);
        if (!nn->tag) return NULL;
    }
    return nn;
}

static mopt_status fail(ytree_error *err, ytree_problem problem, size_t line) {
    err->problem = problem;
    err->line = line;
    switch (problem) {
    case YTREE_PARSER_MEMORY:
    case YTREE_MEMORY: return MOPT_ERR_OUT_OF_MEMORY;
    case YTREE_SIZE: return MOPT_ERR_LIMIT;
    default: return MOPT_ERR_PARSE;
    }
}

/* Folds the parser's events into t until the stream ends or one fails. */
static mopt_status build(ytree *t, const ytree_limits *lim, yaml_parser_t *p, ytree_error *err) {
    ytree_node *stack[YTREE_MAX_DEPTH];
    int max_depth = lim->max_depth < YTREE_MAX_DEPTH ? lim->max_depth : YTREE_MAX_DEPTH;
    int depth = 0;
    ytree_node *root = NULL;
    mopt_status st = MOPT_OK;
    bool done = false;
    while (!st && !done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(p, &ev)) {
            st = fail(err, YTREE_SYNTAX, p->problem_mark.line + lim->first_line);
            err->column = p->problem_mark.column + 1;
            err->what = p->problem;
            err->context = p->context;
            break;
        }
        size_t line = ev.start_mark.line + lim->first_line;
        bool size = false;
        ytree_node *nn = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = true; break;
        case YAML_DOCUMENT_START_EVENT:
            root = NULL;
            depth = 0;
            if (lim->max_documents && t->n_docs >= (size_t)lim->max_documents)
                st = fail(err, YTREE_DOCUMENTS, line);
            break;
        case YAML_ALIAS_EVENT: st = fail(err, YTREE_ALIAS, line); break;
        case YAML_SCALAR_EVENT:
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            nn = new_node(t, lim, &ev, line, &size);
            if (!nn) {
                st = fail(err, size ? YTREE_SIZE : YTREE_MEMORY, line);
                break;
            }
            if (depth == 0) {
                if (root) {
                    st = fail(err, YTREE_EXTRA, line);
                    break;
                }
                root = nn;
                if (!push(t, lim, &t->docs, &t->n_docs, &t->cap_docs, nn, &size)) {
                    st = fail(err, size ? YTREE_SIZE : YTREE_MEMORY, line);
                    break;
                }
            } else if (lim->scalar_keys && stack[depth - 1]->kind == YTREE_MAP &&
                       nn->kind != YTREE_SCALAR && stack[depth - 1]->n % 2 == 0) {
                st = fail(err, YTREE_KEY, line);
                break;
            } else {
                ytree_node *parent = stack[depth - 1];
                if (!push(t, lim, &parent->kids, &parent->n, &parent->cap, nn, &size)) {
                    st = fail(err, size ? YTREE_SIZE : YTREE_MEMORY, line);
                    break;
                }
            }
            if (nn->kind != YTREE_SCALAR) {
                if (depth >= max_depth) {
                    st = fail(err, YTREE_DEPTH, line);
                    break;
                }
                stack[depth++] = nn;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (depth > 0) depth--;
            break;
        default: break;
        }
        yaml_event_delete(&ev);
    }
    return st;
}

static mopt_status read_stream(ytree *t, const ytree_limits *lim, const void *text, size_t len,
                               FILE *f, ytree_error *err) {
    memset(err, 0, sizeof *err);
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) return fail(err, YTREE_PARSER_MEMORY, 0);
    if (f)
        yaml_parser_set_input_file(&p, f);
    else
        yaml_parser_set_input_string(&p, text, len);
    mopt_status st = build(t, lim, &p, err);
    yaml_parser_delete(&p);
    return st;
}

mopt_status ytree_read_string(ytree *t, const ytree_limits *lim, const void *text, size_t len,
                              ytree_error *err) {
    return read_stream(t, lim, text, len, NULL, err);
}

mopt_status ytree_read_file(ytree *t, const ytree_limits *lim, FILE *f, ytree_error *err) {
    return read_stream(t, lim, NULL, 0, f, err);
}

const ytree_node *ytree_get(const ytree_node *map, const char *key) {
    if (!map || map->kind != YTREE_MAP) return NULL;
    for (size_t i = 0; i + 1 < map->n; i += 2)
        if (map->kids[i]->kind == YTREE_SCALAR && strcmp(map->kids[i]->s, key) == 0)
            return map->kids[i + 1];
    return NULL;
}

bool ytree_is_null(const ytree_node *n) {
    return !n || (n->kind == YTREE_SCALAR && n->plain &&
                  (strcmp(n->s, "null") == 0 || strcmp(n->s, "~") == 0 || n->len == 0));
}

const char *ytree_kind_name(int kind) {
    return kind == YTREE_MAP ? "a mapping" : kind == YTREE_SEQ ? "a sequence" : "a scalar";
}
