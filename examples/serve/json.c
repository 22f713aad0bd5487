/* json.c — strict recursive-descent JSON parser with limits (see json.h).
 * Rejects: trailing garbage, leading zeros, bare control characters in
 * strings, bad escapes, lone surrogates, invalid or overlong UTF-8, nesting
 * beyond the limit, more values than the limit. */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NODES_PER_BLOCK = 256 };

typedef struct node_block {
    struct node_block *next;
    json_node nodes[NODES_PER_BLOCK];
} node_block;

struct json_doc {
    node_block *blocks;
    size_t used_in_block;
    size_t n_nodes;
    char *strbuf; /* decoded strings, len + 1 bytes */
    size_t strpos;
};

typedef struct parser {
    const unsigned char *s;
    size_t len, pos;
    json_doc *doc;
    json_limits lim;
    char *err;
    size_t errsz;
    int failed;
} parser;

static void fail(parser *p, const char *fmt, ...) {
    if (p->failed) return;
    p->failed = 1;
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errsz, "%s at byte %zu", msg, p->pos);
}

static json_node *new_node(parser *p, json_type t) {
    json_doc *d = p->doc;
    if (d->n_nodes >= p->lim.max_nodes) {
        fail(p, "more than %zu JSON values", p->lim.max_nodes);
        return NULL;
    }
    if (!d->blocks || d->used_in_block == NODES_PER_BLOCK) {
        node_block *b = calloc(1, sizeof *b);
        if (!b) {
            fail(p, "out of memory");
            return NULL;
        }
        b->next = d->blocks;
        d->blocks = b;
        d->used_in_block = 0;
    }
    json_node *n = &d->blocks->nodes[d->used_in_block++];
    d->n_nodes++;
    n->type = t;
    return n;
}

static void skip_ws(parser *p) {
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int hex4(parser *p, unsigned *out) {
    if (p->len - p->pos < 4) {
        fail(p, "truncated \\u escape");
        return -1;
    }
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char c = p->s[p->pos + (size_t)k];
        unsigned h;
        if (c >= '0' && c <= '9')
            h = c - '0';
        else if (c >= 'a' && c <= 'f')
            h = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            h = c - 'A' + 10;
        else {
            fail(p, "bad hex digit in \\u escape");
            return -1;
        }
        v = v * 16 + h;
    }
    p->pos += 4;
    *out = v;
    return 0;
}

static void put_utf8(char *o, size_t *w, unsigned cp) {
    if (cp < 0x80) {
        o[(*w)++] = (char)cp;
    } else if (cp < 0x800) {
        o[(*w)++] = (char)(0xC0 | (cp >> 6));
        o[(*w)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        o[(*w)++] = (char)(0xE0 | (cp >> 12));
        o[(*w)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[(*w)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        o[(*w)++] = (char)(0xF0 | (cp >> 18));
        o[(*w)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        o[(*w)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[(*w)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* Length of the valid UTF-8 sequence at s[0..n) (>= 2 bytes, lead >= 0x80), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t need;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < need) return 0;
    for (size_t k = 1; k < need; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if ((need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return need;
}

/* Parses a string at p->pos (on the opening quote) into the doc's buffer. */
static const char *parse_string(parser *p, size_t *out_len) {
    p->pos++; /* opening quote */
    char *o = p->doc->strbuf + p->doc->strpos;
    size_t w = 0;
    for (;;) {
        if (p->pos >= p->len) {
            fail(p, "unterminated string");
            return NULL;
        }
        unsigned char c = p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20) {
            fail(p, "control character in string");
            return NULL;
        }
        if (c == '\\') {
            p->pos++;
            if (p->pos >= p->len) {
                fail(p, "unterminated escape");
                return NULL;
            }
            unsigned char e = p->s[p->pos++];
            switch (e) {
            case '"':
            case '\\':
            case '/': o[w++] = (char)e; break;
            case 'b': o[w++] = '\b'; break;
            case 'f': o[w++] = '\f'; break;
            case 'n': o[w++] = '\n'; break;
            case 'r': o[w++] = '\r'; break;
            case 't': o[w++] = '\t'; break;
            case 'u': {
                unsigned cp;
                if (hex4(p, &cp)) return NULL;
                if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    fail(p, "lone low surrogate in \\u escape");
                    return NULL;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
                        fail(p, "lone high surrogate in \\u escape");
                        return NULL;
                    }
                    p->pos += 2;
                    if (hex4(p, &lo)) return NULL;
                    if (lo < 0xDC00 || lo > 0xDFFF) {
                        fail(p, "bad surrogate pair in \\u escape");
                        return NULL;
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                /* A \uXXXX escape takes 6 input bytes and at most 4 output
                 * bytes (a pair: 12 in, 4 out), so the buffer never overflows. */
                put_utf8(o, &w, cp);
                break;
            }
            default:
                p->pos--;
                fail(p, "bad escape '\\%c'", e >= 0x20 && e < 0x7F ? e : '?');
                return NULL;
            }
            continue;
        }
        if (c < 0x80) {
            o[w++] = (char)c;
            p->pos++;
            continue;
        }
        size_t n = utf8_seq(p->s + p->pos, p->len - p->pos);
        if (!n) {
            fail(p, "invalid UTF-8 in string");
            return NULL;
        }
        memcpy(o + w, p->s + p->pos, n);
        w += n;
        p->pos += n;
    }
    o[w] = '\0';
    p->doc->strpos += w + 1;
    *out_len = w;
    return o;
}

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static json_node *parse_number(parser *p) {
    size_t start = p->pos;
    int integral = 1;
    if (p->s[p->pos] == '-') p->pos++;
    if (p->pos >= p->len || !is_digit(p->s[p->pos])) {
        fail(p, "bad number");
        return NULL;
    }
    if (p->s[p->pos] == '0') {
        p->pos++;
        if (p->pos < p->len && is_digit(p->s[p->pos])) {
            fail(p, "leading zero in number");
            return NULL;
        }
    } else {
        while (p->pos < p->len && is_digit(p->s[p->pos]))
            p->pos++;
    }
    if (p->pos < p->len && p->s[p->pos] == '.') {
        integral = 0;
        p->pos++;
        if (p->pos >= p->len || !is_digit(p->s[p->pos])) {
            fail(p, "bad fraction in number");
            return NULL;
        }
        while (p->pos < p->len && is_digit(p->s[p->pos]))
            p->pos++;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        integral = 0;
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
        if (p->pos >= p->len || !is_digit(p->s[p->pos])) {
            fail(p, "bad exponent in number");
            return NULL;
        }
        while (p->pos < p->len && is_digit(p->s[p->pos]))
            p->pos++;
    }
    size_t n = p->pos - start;
    if (n > 64) {
        fail(p, "number longer than 64 characters");
        return NULL;
    }
    char buf[72];
    memcpy(buf, p->s + start, n);
    buf[n] = '\0';
    json_node *node = new_node(p, JSON_NUMBER);
    if (!node) return NULL;
    node->d = strtod(buf, NULL);
    if (integral) {
        /* Exact int64 parse with overflow check. */
        const char *q = buf;
        int neg = *q == '-';
        q += neg;
        uint64_t v = 0;
        int ok = 1;
        for (; *q; q++) {
            unsigned dgt = (unsigned)(*q - '0');
            if (v > (UINT64_MAX - dgt) / 10) {
                ok = 0;
                break;
            }
            v = v * 10 + dgt;
        }
        if (ok && (neg ? v <= (uint64_t)INT64_MAX + 1 : v <= (uint64_t)INT64_MAX)) {
            node->is_int = 1;
            node->i = neg ? (int64_t)(0 - v) : (int64_t)v;
        }
    }
    if (!isfinite(node->d)) {
        fail(p, "number out of range");
        return NULL;
    }
    return node;
}

static json_node *parse_value(parser *p, int depth);

static int literal(parser *p, const char *word) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) {
        fail(p, "unexpected character");
        return -1;
    }
    p->pos += n;
    return 0;
}

static json_node *parse_container(parser *p, int depth, int is_object) {
    if (depth >= p->lim.max_depth) {
        fail(p, "nesting deeper than %d", p->lim.max_depth);
        return NULL;
    }
    json_node *node = new_node(p, is_object ? JSON_OBJECT : JSON_ARRAY);
    if (!node) return NULL;
    p->pos++; /* [ or { */
    json_node **tail = &node->child;
    skip_ws(p);
    char close = is_object ? '}' : ']';
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return node;
    }
    for (;;) {
        const char *key = NULL;
        size_t key_len = 0;
        skip_ws(p);
        if (is_object) {
            if (p->pos >= p->len || p->s[p->pos] != '"') {
                fail(p, p->pos >= p->len ? "truncated object" : "expected a member name");
                return NULL;
            }
            key = parse_string(p, &key_len);
            if (!key) return NULL;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                fail(p, "expected ':'");
                return NULL;
            }
            p->pos++;
        }
        json_node *v = parse_value(p, depth + 1);
        if (!v) return NULL;
        v->key = key;
        v->key_len = key_len;
        *tail = v;
        tail = &v->next;
        node->len++;
        skip_ws(p);
        if (p->pos >= p->len) {
            fail(p, is_object ? "truncated object" : "truncated array");
            return NULL;
        }
        if (p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->s[p->pos] == close) {
            p->pos++;
            return node;
        }
        fail(p, "expected ',' or '%c'", close);
        return NULL;
    }
}

static json_node *parse_value(parser *p, int depth) {
    skip_ws(p);
    if (p->pos >= p->len) {
        fail(p, "unexpected end of input");
        return NULL;
    }
    unsigned char c = p->s[p->pos];
    switch (c) {
    case '{': return parse_container(p, depth, 1);
    case '[': return parse_container(p, depth, 0);
    case '"': {
        size_t n;
        const char *s = parse_string(p, &n);
        if (!s) return NULL;
        json_node *node = new_node(p, JSON_STRING);
        if (node) {
            node->str = s;
            node->len = n;
        }
        return node;
    }
    case 't': return literal(p, "true") ? NULL : new_node(p, JSON_TRUE);
    case 'f': return literal(p, "false") ? NULL : new_node(p, JSON_FALSE);
    case 'n': return literal(p, "null") ? NULL : new_node(p, JSON_NULL);
    default:
        if (c == '-' || is_digit(c)) return parse_number(p);
        fail(p, "unexpected character");
        return NULL;
    }
}

void json_free(json_doc *doc) {
    if (!doc) return;
    node_block *b = doc->blocks;
    while (b) {
        node_block *n = b->next;
        free(b);
        b = n;
    }
    free(doc->strbuf);
    free(doc);
}

json_doc *json_parse(const char *text, size_t len, const json_limits *limits, json_node **root,
                     char *err, size_t errsz) {
    json_doc *doc = calloc(1, sizeof *doc);
    if (doc) doc->strbuf = malloc(len + 1);
    if (!doc || !doc->strbuf) {
        snprintf(err, errsz, "out of memory");
        json_free(doc);
        return NULL;
    }
    parser p = {.s = (const unsigned char *)text,
                .len = len,
                .doc = doc,
                .lim = *limits,
                .err = err,
                .errsz = errsz};
    json_node *v = parse_value(&p, 0);
    if (v) {
        skip_ws(&p);
        if (p.pos != p.len) fail(&p, "trailing characters after the JSON value");
    }
    if (p.failed || !v) {
        if (!p.failed) fail(&p, "bad JSON");
        json_free(doc);
        return NULL;
    }
    *root = v;
    return doc;
}

const json_node *json_get(const json_node *obj, const char *key) {
    if (!obj || obj->type != JSON_OBJECT) return NULL;
    size_t n = strlen(key);
    for (const json_node *c = obj->child; c; c = c->next)
        if (c->key_len == n && memcmp(c->key, key, n) == 0) return c;
    return NULL;
}

const char *json_type_name(json_type t) {
    static const char *const names[] = {"null",   "boolean", "boolean", "number",
                                        "string", "array",   "object"};
    return names[t];
}
