/*
 * mopt_read.c — mfmt_load: a .mopt image into a graph and its metadata.
 * Trusts nothing: the magic line and the version first, then the header's
 * checksum before any YAML is parsed, then the metadata, the tensor table
 * (mopt_read_table.c) and the graph (mopt_read_graph.c); weights are
 * pointed into, not copied. Also maps .mopt files (mfmt_map_file).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "io/mopt_read.h"
#include "io/mopt_spelling.h"

#define MFMT_MAX_YAML_DEPTH 256 /* YAML collection nesting */
#define MFMT_MAX_HEADER ((size_t)1 << 30)

bool mfmt_detect(const void *data, size_t len) {
    return data && len >= MFMT_MAGIC_LEN && memcmp(data, MFMT_MAGIC, MFMT_MAGIC_LEN) == 0;
}

/* The YAML between the magic line and the terminator, as a tree with one
 * document; the lines in messages count from the top of the file. */
static mopt_status read_tree(ytree *tree, const uint8_t *text, size_t len) {
    const ytree_limits lim = {
        .first_line = 2, .max_depth = MFMT_MAX_YAML_DEPTH, .max_documents = 1, .scalar_keys = true};
    ytree_error e;
    mopt_status st = ytree_read_string(tree, &lim, text, len, &e);
    switch (st ? e.problem : YTREE_OK) {
    case YTREE_OK:
        if (tree->n_docs == 0) return mopt_fail(MOPT_ERR_PARSE, "the YAML header is empty");
        return MOPT_OK;
    case YTREE_PARSER_MEMORY: return mopt_fail(st, "out of memory starting the YAML parser");
    case YTREE_SYNTAX:
        return mopt_fail(st, "malformed YAML header at line %zu, column %zu: %s%s%s", e.line,
                         e.column, e.what ? e.what : "syntax error", e.context ? " " : "",
                         e.context ? e.context : "");
    case YTREE_ALIAS:
        return mopt_fail(st, "YAML aliases are not allowed in a .mopt header (line %zu)", e.line);
    case YTREE_DOCUMENTS:
        return mopt_fail(st, "the YAML header has a second document at line %zu", e.line);
    case YTREE_DEPTH:
        return mopt_fail(st, "the YAML header nests more than %d levels (line %zu)",
                         MFMT_MAX_YAML_DEPTH, e.line);
    case YTREE_KEY:
        return mopt_fail(st, "malformed YAML header at line %zu: mapping keys must be scalars",
                         e.line);
    case YTREE_EXTRA: return mopt_fail(st, "unexpected content at line %zu", e.line);
    case YTREE_MEMORY:
    case YTREE_SIZE: break;
    }
    return mopt_fail(st, "out of memory reading the header");
}

/* The optional "metadata" mapping (format_minor 1) into the graph g. */
static mopt_status load_model_metadata(const ytree_node *root, ir_graph *g) {
    const ytree_node *m = ytree_get(root, "metadata");
    if (!m) return MOPT_OK; /* minor 0 */
    const char *w = "metadata";
    if (m->kind != YTREE_MAP) return mfmt_fail_at(MOPT_ERR_PARSE, m, w, "expected a mapping");
    static const char *const keys[] = {"producer_version", "domain", "doc_string",
                                       "graph_doc_string"};
    char **slots[] = {&g->producer_version, &g->domain, &g->doc_string, &g->graph_doc_string};
    mopt_status st;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const ytree_node *n = ytree_get(m, keys[i]);
        if (!n) continue;
        char *s = NULL;
        if ((st = mfmt_as_str(n, w, keys[i], true, &s, NULL))) return st;
        mopt_free(*slots[i]);
        *slots[i] = s;
    }
    if (ytree_get(m, "model_version") &&
        (st = mfmt_key_int(m, "model_version", w, INT64_MIN, INT64_MAX, &g->model_version)))
        return st;
    const ytree_node *props = ytree_get(m, "props");
    if (!props) return MOPT_OK;
    if (props->kind != YTREE_SEQ)
        return mfmt_fail_at(MOPT_ERR_PARSE, props, w, "props: expected a list");
    for (size_t i = 0; i < props->n; i++) {
        char where[64];
        snprintf(where, sizeof where, "metadata.props[%zu]", i);
        const ytree_node *p;
        if ((st = mfmt_item_map(props, i, where, &p))) return st;
        char *k = NULL, *v = NULL;
        st = mfmt_key_str(p, "key", where, &k);
        if (!st) st = mfmt_key_str(p, "value", where, &v);
        if (!st && ir_graph_add_prop(g, k, v)) st = MOPT_ERR_OUT_OF_MEMORY;
        mopt_free(k);
        mopt_free(v);
        if (st) return st;
    }
    return MOPT_OK;
}

static mopt_status load_meta(const ytree_node *root, mfmt_meta *meta) {
    const char *w = "top level";
    int64_t v;
    mopt_status st = mfmt_key_int(root, "format_version", w, INT64_MIN, INT64_MAX, &v);
    if (st) return st;
    if (v != MFMT_VERSION)
        return mfmt_fail_at(MOPT_ERR_PARSE, ytree_get(root, "format_version"), w,
                            "format_version %" PRId64 " is not the %d this libmopt reads", v,
                            MFMT_VERSION);
    if ((st = mfmt_key_buf(root, "producer", w, meta->producer, sizeof meta->producer))) return st;
    char alg[16];
    if ((st = mfmt_key_buf(root, "checksum_algorithm", w, alg, sizeof alg))) return st;
    if (strcmp(alg, "mh64") != 0)
        return mfmt_fail_at(MOPT_ERR_PARSE, ytree_get(root, "checksum_algorithm"), w,
                            "unknown checksum algorithm '%s'", alg);
    const ytree_node *src, *cn;
    if ((st = mfmt_need(root, "source", YTREE_MAP, w, &src))) return st;
    if ((st = mfmt_need(src, "checksum", YTREE_SCALAR, "source", &cn))) return st;
    if ((st = mfmt_as_hex64(cn, "source", "checksum", &meta->source_checksum))) return st;
    if ((st = mfmt_key_int(src, "bytes", "source", 0, INT64_MAX, &v))) return st;
    meta->source_bytes = (uint64_t)v;
    if ((st = mfmt_key_int(root, "opt_level", w, 0, 3, &v))) return st;
    meta->opt_level = (int)v;
    if ((st = mfmt_key_buf(root, "precision", w, meta->precision, sizeof meta->precision)))
        return st;
    if (strcmp(meta->precision, "fp32") != 0 && strcmp(meta->precision, "bf16") != 0 &&
        strcmp(meta->precision, "int8") != 0)
        return mfmt_fail_at(MOPT_ERR_PARSE, ytree_get(root, "precision"), w,
                            "unknown precision '%s'", meta->precision);
    meta->int8_exclude[0] = '\0';
    if (ytree_get(root, "int8_exclude")) {
        if ((st = mfmt_key_buf(root, "int8_exclude", w, meta->int8_exclude,
                               sizeof meta->int8_exclude)))
            return st;
        if (strcmp(meta->precision, "int8") != 0)
            return mfmt_fail_at(MOPT_ERR_PARSE, ytree_get(root, "int8_exclude"), w,
                                "int8_exclude with precision '%s'", meta->precision);
    }
    meta->int8_fallback[0] = '\0';
    if (ytree_get(root, "int8_fallback")) {
        const ytree_node *fb = ytree_get(root, "int8_fallback");
        if ((st = mfmt_key_buf(root, "int8_fallback", w, meta->int8_fallback,
                               sizeof meta->int8_fallback)))
            return st;
        if (strcmp(meta->int8_fallback, "fp32") != 0 && strcmp(meta->int8_fallback, "bf16") != 0)
            return mfmt_fail_at(MOPT_ERR_PARSE, fb, w, "unknown int8_fallback '%s'",
                                meta->int8_fallback);
        if (!meta->int8_exclude[0])
            return mfmt_fail_at(MOPT_ERR_PARSE, fb, w, "int8_fallback without int8_exclude");
    }
    const ytree_node *ps, *tot;
    if ((st = mfmt_need(root, "passes", YTREE_SEQ, w, &ps))) return st;
    if (ps->n > PASS_REPORT_CAP)
        return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, ps, w, "%zu passes; at most %d are recorded",
                            ps->n, PASS_REPORT_CAP);
    pass_report *r = &meta->report;
    for (size_t i = 0; i < ps->n; i++) {
        char where[64];
        snprintf(where, sizeof where, "passes[%zu]", i);
        const ytree_node *p;
        if ((st = mfmt_item_map(ps, i, where, &p))) return st;
        pass_report_entry *e = &r->entries[i];
        if ((st = mfmt_key_buf(p, "name", where, meta->report_names[i], MFMT_NAME_CAP))) return st;
        e->name = meta->report_names[i];
        if ((st = mfmt_key_ms(p, where, &e->ms))) return st;
        if ((st = mfmt_key_int(p, "nodes_before", where, 0, INT32_MAX, &v))) return st;
        e->nodes_before = (int32_t)v;
        if ((st = mfmt_key_int(p, "nodes_after", where, 0, INT32_MAX, &v))) return st;
        e->nodes_after = (int32_t)v;
        if ((st = mfmt_key_int(p, "rewrites", where, 0, INT32_MAX, &v))) return st;
        e->rewrites = (int32_t)v;
        if ((st = mfmt_key_buf(p, "note", where, e->note, sizeof e->note))) return st;
        r->n = (int)i + 1;
    }
    if ((st = mfmt_need(root, "pass_totals", YTREE_MAP, w, &tot))) return st;
    if ((st = mfmt_key_int(tot, "nodes_before", "pass_totals", 0, INT32_MAX, &v))) return st;
    r->nodes_before = (int32_t)v;
    if ((st = mfmt_key_int(tot, "nodes_after", "pass_totals", 0, INT32_MAX, &v))) return st;
    r->nodes_after = (int32_t)v;
    return mfmt_key_ms(tot, "pass_totals", &r->total_ms);
}

mopt_status mfmt_load(void *base, size_t size, void (*release)(void *base, size_t size),
                      bool verify_weights, ir_graph **out, mfmt_meta *meta) {
    *out = NULL;
    memset(meta, 0, sizeof *meta);
    const uint8_t *b = base;
    mopt_status st = MOPT_OK;
    mfmt_loader L = {.base = base, .size = size, .verify = verify_weights};
    const ytree_node *root = NULL;
    ytree tree = {0};
    ir_graph *g = NULL;
    size_t line_end = 0, term = 0;
    if (!mfmt_detect(base, size)) {
        st = mopt_fail(MOPT_ERR_PARSE, "not a .mopt file: it does not start with '%s'", MFMT_MAGIC);
        goto done;
    }
    /* magic line: "%MOPT-<version>\n" */
    {
        int64_t ver = 0;
        size_t i = MFMT_MAGIC_LEN;
        while (i < size && i < MFMT_MAGIC_LEN + 9 && b[i] >= '0' && b[i] <= '9')
            ver = ver * 10 + (b[i++] - '0');
        if (i == MFMT_MAGIC_LEN || i >= size || b[i] != '\n') {
            st = mopt_fail(MOPT_ERR_PARSE,
                           "malformed .mopt magic line: expected '%s<version>' and a newline",
                           MFMT_MAGIC);
            goto done;
        }
        if (ver != MFMT_VERSION) {
            st = mopt_fail(MOPT_ERR_PARSE,
                           "unsupported .mopt format version %" PRId64
                           " (this libmopt reads version %d)",
                           ver, MFMT_VERSION);
            goto done;
        }
        line_end = i + 1;
    }
    /* terminator line: "%MOPT-END <16 hex>\n" right after the YAML */
    {
        size_t limit = size < MFMT_MAX_HEADER ? size : MFMT_MAX_HEADER;
        const uint8_t *t = memmem(b + line_end - 1, limit - (line_end - 1), MFMT_END, MFMT_END_LEN);
        if (!t) {
            st = mopt_fail(MOPT_ERR_PARSE,
                           "truncated .mopt file: no '%%MOPT-END' line ends the header "
                           "(%zu bytes read)",
                           size);
            goto done;
        }
        term = (size_t)(t - b) + 1;
        size_t need_len = term + MFMT_END_LEN - 1 + 16 + 1;
        if (size < need_len) {
            st = mopt_fail(MOPT_ERR_PARSE, "truncated .mopt file: it ends inside the '%%MOPT-END' "
                                           "line");
            goto done;
        }
        uint8_t hb[8];
        const char *hx = (const char *)b + term + MFMT_END_LEN - 1;
        if (!mfmt_hex_decode(hx, 16, hb, 8) || hx[16] != '\n') {
            st = mopt_fail(MOPT_ERR_PARSE, "malformed '%%MOPT-END' line: expected 16 hex digits "
                                           "and a newline");
            goto done;
        }
        uint64_t want = 0;
        for (int i = 0; i < 8; i++)
            want = want << 8 | hb[i];
        uint64_t got = mfmt_hash64(b, term);
        if (got != want) {
            st = mopt_fail(MOPT_ERR_PARSE,
                           "header checksum mismatch: the file says %016" PRIx64
                           " but its first %zu bytes hash to %016" PRIx64 " (corrupted header)",
                           want, term, got);
            goto done;
        }
        L.header_end = need_len;
    }
    st = read_tree(&tree, b + line_end, term - line_end);
    if (st) goto done;
    root = tree.docs[0];
    if (root->kind != YTREE_MAP) {
        st = mfmt_fail_at(MOPT_ERR_PARSE, root, "top level", "expected a mapping");
        goto done;
    }
    st = load_meta(root, meta);
    if (!st) st = mfmt_load_table(&L, root);
    const ytree_node *gn = NULL;
    if (!st) st = mfmt_need(root, "graph", YTREE_MAP, "top level", &gn);
    if (!st) st = mfmt_load_graph(&L, gn, "graph", 0, &g);
    if (!st) st = load_model_metadata(root, g);
done:
    ytree_free(&tree);
    for (size_t i = 0; i < L.n_tab; i++)
        mopt_free(L.tab[i].name);
    mopt_free(L.tab);
    if (st) {
        ir_graph_destroy(g);
        if (release) release(base, size);
        return mopt_fail_context(st, "reading .mopt");
    }
    g->backing = base;
    g->backing_size = size;
    g->backing_release = release;
    *out = g;
    return MOPT_OK;
}

mopt_status mfmt_map_file(const char *path, void **base, size_t *size) {
    *base = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return MOPT_OK; /* the ordinary reader reports it */
    char head[MFMT_MAGIC_LEN];
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < (off_t)MFMT_MAGIC_LEN ||
        pread(fd, head, MFMT_MAGIC_LEN, 0) != (ssize_t)MFMT_MAGIC_LEN ||
        !mfmt_detect(head, MFMT_MAGIC_LEN)) {
        close(fd);
        return MOPT_OK;
    }
    if ((uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return mopt_fail(MOPT_ERR_LIMIT, "'%s' is too large to map", path);
    }
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int err = errno;
    close(fd);
    if (p == MAP_FAILED) return mopt_fail(MOPT_ERR_IO, "cannot map '%s': %s", path, strerror(err));
    *base = p;
    *size = (size_t)sb.st_size;
    return MOPT_OK;
}

void mfmt_unmap(void *base, size_t size) {
    if (base) munmap(base, size);
}
