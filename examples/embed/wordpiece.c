/*
 * wordpiece.c — the C WordPiece tokenizer (wordpiece.h). Character data
 * (categories, accent stripping, lower case) comes from unicode_tables.h,
 * generated from Python's unicodedata by gen_unicode.py; Hangul syllables
 * are decomposed by formula. The vocabulary is an open-addressing hash
 * table of byte strings.
 */
#include "wordpiece.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unicode_tables.h"

#define MAX_WORD_CHARS 100
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

typedef struct wp_entry {
    const char *s;
    uint32_t len;
    int32_t id; /* -1: empty slot */
} wp_entry;

struct wp_vocab {
    char *text; /* the file, tokens NUL-terminated in place */
    wp_entry *slots;
    size_t mask;
    int32_t unk, cls, sep;
};

static uint64_t hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int32_t lookup(const wp_vocab *v, const char *s, size_t n) {
    for (size_t i = hash(s, n) & v->mask;; i = (i + 1) & v->mask) {
        const wp_entry *e = &v->slots[i];
        if (e->id < 0) return -1;
        if (e->len == n && memcmp(e->s, s, n) == 0) return e->id;
    }
}

void wp_free(wp_vocab *v) {
    if (!v) return;
    free(v->text);
    free(v->slots);
    free(v);
}

wp_vocab *wp_load(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    wp_vocab *v = calloc(1, sizeof *v);
    long size = -1;
    if (v && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) v->text = malloc((size_t)size + 1);
    bool ok = v && v->text && fread(v->text, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok) {
        wp_free(v);
        return NULL;
    }
    v->text[size] = '\n';
    size_t lines = 0;
    for (long i = 0; i < size; i++)
        lines += v->text[i] == '\n';
    size_t cap = 64;
    while (cap < 2 * (lines + 1))
        cap *= 2;
    v->slots = malloc(cap * sizeof *v->slots);
    if (!v->slots) {
        wp_free(v);
        return NULL;
    }
    v->mask = cap - 1;
    for (size_t i = 0; i < cap; i++)
        v->slots[i].id = -1;
    int32_t id = 0;
    for (char *p = v->text, *end = v->text + size; p < end; id++) {
        char *nl = memchr(p, '\n', (size_t)(end - p) + 1);
        size_t n = (size_t)(nl - p);
        if (n && p[n - 1] == '\r') n--;
        if (lookup(v, p, n) < 0) { /* the first of duplicate lines keeps its id */
            size_t i = hash(p, n) & v->mask;
            while (v->slots[i].id >= 0)
                i = (i + 1) & v->mask;
            v->slots[i] = (wp_entry){p, (uint32_t)n, id};
        }
        p = nl + 1;
    }
    v->unk = lookup(v, "[UNK]", 5);
    v->cls = lookup(v, "[CLS]", 5);
    v->sep = lookup(v, "[SEP]", 5);
    if (v->unk < 0 || v->cls < 0 || v->sep < 0) {
        fprintf(stderr, "embed: %s lacks [UNK], [CLS] or [SEP]\n", path);
        wp_free(v);
        return NULL;
    }
    return v;
}

/* ---- characters ---------------------------------------------------------- */

static bool in_ranges(const uint32_t (*r)[2], size_t n, uint32_t cp) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < r[mid][0])
            hi = mid;
        else if (cp > r[mid][1])
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

/* index of key cp in a table of `n` rows of `w` columns sorted by the
 * first, or -1 */
static long find(const uint32_t *t, size_t n, size_t w, uint32_t cp) {
    long lo = 0, hi = (long)n - 1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        uint32_t key = t[(size_t)mid * w];
        if (key == cp) return mid;
        if (key < cp)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static bool is_whitespace(uint32_t c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

static bool is_control(uint32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return false;
    return in_ranges(k_other, N_OF(k_other), c);
}

static bool is_punct(uint32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
        (c >= 123 && c <= 126))
        return true;
    return in_ranges(k_punct, N_OF(k_punct), c);
}

static bool is_cjk(uint32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* Next code point of s[*i..n): invalid or overlong sequences, surrogates
 * and values past U+10FFFF give U+FFFD and skip one byte. */
static uint32_t utf8_next(const unsigned char *s, size_t n, size_t *i) {
    unsigned char b = s[*i];
    int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    uint32_t c = len == 1 ? b : len == 2 ? b & 0x1Fu : len == 3 ? b & 0x0Fu : b & 0x07u;
    bool ok = len > 0 && *i + (size_t)len <= n;
    for (int k = 1; ok && k < len; k++) {
        ok = (s[*i + k] & 0xC0) == 0x80;
        c = (c << 6) | (s[*i + k] & 0x3Fu);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (ok) ok = c >= min[len] && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF);
    if (!ok) {
        (*i)++;
        return 0xFFFD;
    }
    *i += (size_t)len;
    return c;
}

static size_t utf8_put(uint32_t c, char *out) {
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* A growable array of code points. */
typedef struct cps {
    uint32_t *c;
    size_t n, cap;
    bool oom;
} cps;

static void push(cps *a, uint32_t c) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 256;
        uint32_t *p = realloc(a->c, cap * sizeof *p);
        if (!p) {
            a->oom = true;
            return;
        }
        a->c = p, a->cap = cap;
    }
    a->c[a->n++] = c;
}

static void push_lower(cps *a, uint32_t c) {
    long i = find(&k_lower[0][0], N_OF(k_lower), 2, c);
    if (i >= 0) {
        push(a, k_lower[i][1]);
        return;
    }
    i = find(&k_lower2[0][0], N_OF(k_lower2), 3, c);
    if (i >= 0) {
        push(a, k_lower2[i][1]);
        push(a, k_lower2[i][2]);
        return;
    }
    push(a, c);
}

/* accent stripping of c (NFD, marks removed), then lower case */
static void push_stripped(cps *a, uint32_t c) {
    if (c >= 0xAC00 && c < 0xAC00 + 11172) { /* Hangul syllable: L V (T) jamo */
        uint32_t s = c - 0xAC00;
        push(a, 0x1100 + s / 588);
        push(a, 0x1161 + (s % 588) / 28);
        if (s % 28) push(a, 0x11A7 + s % 28);
        return;
    }
    if (in_ranges(k_mn, N_OF(k_mn), c)) return;
    long i = find(&k_strip[0][0], N_OF(k_strip), 3, c);
    if (i >= 0) {
        for (uint32_t k = 0; k < k_strip[i][2]; k++)
            push_lower(a, k_strip_pool[k_strip[i][1] + k]);
        return;
    }
    push_lower(a, c);
}

/* ---- WordPiece ----------------------------------------------------------- */

/* ids of one word w[0..n) (code points) appended to out (count *k, room
 * cap); buf holds 4 * n bytes, piece 4 * n + 2, off n + 1 offsets. */
static void word_ids(const wp_vocab *v, const uint32_t *w, size_t n, char *buf, char *piece,
                     size_t *off, int64_t *out, int *k, int cap) {
    if (n > MAX_WORD_CHARS) {
        if (*k < cap) out[(*k)++] = v->unk;
        return;
    }
    off[0] = 0;
    for (size_t i = 0; i < n; i++)
        off[i + 1] = off[i] + utf8_put(w[i], buf + off[i]);
    int first = *k;
    for (size_t start = 0; start < n;) {
        int32_t hit = -1;
        size_t end = n;
        for (; end > start; end--) {
            size_t len = off[end] - off[start], p = 0;
            if (start > 0) piece[p++] = '#', piece[p++] = '#';
            memcpy(piece + p, buf + off[start], len);
            if ((hit = lookup(v, piece, p + len)) >= 0) break;
        }
        if (hit < 0) { /* no split: the whole word is [UNK] */
            *k = first;
            if (*k < cap) out[(*k)++] = v->unk;
            return;
        }
        if (*k < cap) out[(*k)++] = hit;
        start = end;
    }
}

int wp_encode(const wp_vocab *v, const char *text, size_t len, int64_t *ids, int max_len) {
    cps clean = {0}, norm = {0};
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        uint32_t c = utf8_next(s, len, &i);
        if (c == 0 || c == 0xFFFD || is_control(c)) continue;
        if (is_whitespace(c)) {
            push(&clean, ' ');
        } else if (is_cjk(c)) {
            push(&clean, ' ');
            push(&clean, c);
            push(&clean, ' ');
        } else {
            push(&clean, c);
        }
    }
    for (size_t i = 0; i < clean.n; i++)
        push_stripped(&norm, clean.c[i]);
    free(clean.c);
    int cap = max_len - 1, k = 0;
    ids[k++] = v->cls;
    char *buf = malloc(4 * norm.n + 8), *piece = malloc(4 * norm.n + 8);
    size_t *off = malloc((norm.n + 1) * sizeof *off);
    if (norm.oom || clean.oom || !buf || !piece || !off) {
        free(norm.c), free(buf), free(piece), free(off);
        return -1;
    }
    /* words: runs between whitespace, every punctuation character alone */
    for (size_t i = 0; i < norm.n && k < cap;) {
        uint32_t c = norm.c[i];
        if (is_whitespace(c)) {
            i++;
            continue;
        }
        size_t j = i + 1;
        if (!is_punct(c))
            while (j < norm.n && !is_whitespace(norm.c[j]) && !is_punct(norm.c[j]))
                j++;
        word_ids(v, norm.c + i, j - i, buf, piece, off, ids, &k, cap);
        i = j;
    }
    ids[k++] = v->sep;
    free(norm.c), free(buf), free(piece), free(off);
    return k;
}
