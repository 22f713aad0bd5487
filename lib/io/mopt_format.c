/*
 * mopt_format.c — writing and reading .mopt files (layout in mopt_format.h
 * and docs/mopt_format.md): the YAML header is emitted with libyaml's event
 * API and read back through a small tree built from libyaml parser events
 * (no aliases, bounded nesting); the weights are laid out 64-byte aligned
 * after the header and, when loading, pointed into rather than copied.
 *
 * Loading trusts nothing: the header checksum is checked before the YAML is
 * parsed; every offset, size, index, count and dimension is range-checked;
 * tensors must be aligned, inside the file, after the header and must not
 * overlap; weight checksums are checked when asked (verify_weights).
 */
#include "io/mopt_format.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "core/alloc.h"
#include "core/error.h"

#define MFMT_INLINE_MAX 64      /* attribute tensors up to this size are inline hex */
#define MFMT_MAX_GRAPH_DEPTH 32 /* subgraph nesting */
#define MFMT_MAX_YAML_DEPTH 256 /* YAML collection nesting */
#define MFMT_MAX_HEADER ((size_t)1 << 30)

static const char k_magic[] = "%MOPT-";
static const char k_end[] = "\n%MOPT-END ";
#define MAGIC_LEN (sizeof k_magic - 1)
#define END_LEN (sizeof k_end - 1)

/* ---- checksum ------------------------------------------------------------ */

#define H_P1 0x9E3779B185EBCA87ull
#define H_P2 0xC2B2AE3D27D4EB4Full
#define H_P3 0x165667B19E3779F9ull

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t rd64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

uint64_t mfmt_hash64(const void *data, size_t len) {
    const uint8_t *p = data;
    size_t n = len;
    uint64_t a = H_P1, b = H_P2, c = H_P3, d = H_P1 ^ H_P3;
    while (n >= 32) {
        a = rotl64(a ^ (rd64(p) * H_P2), 31) * H_P1;
        b = rotl64(b ^ (rd64(p + 8) * H_P2), 31) * H_P1;
        c = rotl64(c ^ (rd64(p + 16) * H_P2), 31) * H_P1;
        d = rotl64(d ^ (rd64(p + 24) * H_P2), 31) * H_P1;
        p += 32;
        n -= 32;
    }
    uint64_t h = rotl64(a, 1) + rotl64(b, 7) + rotl64(c, 12) + rotl64(d, 18) + (uint64_t)len;
    while (n >= 8) {
        h = rotl64(h ^ (rd64(p) * H_P2), 27) * H_P1 + H_P3;
        p += 8;
        n -= 8;
    }
    while (n) {
        h = rotl64(h ^ ((uint64_t)*p * H_P3), 11) * H_P1;
        p++;
        n--;
    }
    h ^= h >> 33;
    h *= H_P2;
    h ^= h >> 29;
    h *= H_P3;
    h ^= h >> 32;
    return h;
}

bool mfmt_detect(const void *data, size_t len) {
    return data && len >= MAGIC_LEN && memcmp(data, k_magic, MAGIC_LEN) == 0;
}

static uint64_t align_up(uint64_t x) {
    return (x + (MFMT_ALIGN - 1)) & ~(uint64_t)(MFMT_ALIGN - 1);
}

/* ---- names of enums ------------------------------------------------------- */

static const struct {
    ir_attr_type type;
    const char *name;
} k_attr_types[] = {
    {IR_ATTR_FLOAT, "float"},
    {IR_ATTR_INT, "int"},
    {IR_ATTR_STRING, "string"},
    {IR_ATTR_TENSOR, "tensor"},
    {IR_ATTR_GRAPH, "graph"},
    {IR_ATTR_FLOATS, "floats"},
    {IR_ATTR_INTS, "ints"},
    {IR_ATTR_STRINGS, "strings"},
    {IR_ATTR_TENSORS, "tensors"},
    {IR_ATTR_GRAPHS, "graphs"},
    {IR_ATTR_TYPE_PROTO, "type_proto"},
    {IR_ATTR_TYPE_PROTOS, "type_protos"},
};
#define N_ATTR_TYPES (sizeof k_attr_types / sizeof k_attr_types[0])

static const char *attr_type_name(ir_attr_type t) {
    for (size_t i = 0; i < N_ATTR_TYPES; i++)
        if (k_attr_types[i].type == t) return k_attr_types[i].name;
    return NULL;
}

/* dtype from its mopt_dtype_name; false when unknown. */
static bool dtype_from_name(const char *s, mopt_dtype *out) {
    for (int d = 0; d <= 16; d++) {
        const char *n = mopt_dtype_name((mopt_dtype)d);
        if (strcmp(n, s) == 0 && (d == 0 || strcmp(n, "undefined") != 0)) {
            *out = (mopt_dtype)d;
            return true;
        }
    }
    return false;
}

/* ==== writing ============================================================== */

typedef struct tab_entry {
    const char *name;
    mopt_dtype dtype;
    int32_t rank;
    const int64_t *dims;
    const void *data;
    size_t size;
    uint64_t offset;
    uint64_t checksum;
} tab_entry;

typedef struct mbuf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} mbuf;

static bool mbuf_add(mbuf *b, const void *d, size_t n) {
    if (b->oom) return false;
    if (n > SIZE_MAX - b->len) {
        b->oom = true;
        return false;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) {
            if (cap > SIZE_MAX / 2) {
                cap = b->len + n;
                break;
            }
            cap *= 2;
        }
        uint8_t *np = mopt_realloc(b->p, cap);
        if (!np) {
            b->oom = true;
            return false;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
    return true;
}

typedef struct emitter {
    yaml_emitter_t y;
    mbuf *out;
    bool failed;    /* libyaml refused an event */
    mopt_status st; /* first other failure (message set) */
    tab_entry *tab;
    size_t n_tab, cap_tab;
    size_t next; /* table index handed out next in this emission */
} emitter;

static int write_handler(void *data, unsigned char *buffer, size_t size) {
    return mbuf_add(data, buffer, size) ? 1 : 0;
}

static void emit(emitter *e, yaml_event_t *ev, int ok) {
    if (!ok) {
        e->failed = true;
        return;
    }
    if (e->failed || e->st) {
        yaml_event_delete(ev);
        return;
    }
    if (!yaml_emitter_emit(&e->y, ev)) e->failed = true;
}

static void e_map(emitter *e, bool flow) {
    yaml_event_t ev;
    emit(e, &ev,
         yaml_mapping_start_event_initialize(
             &ev, NULL, NULL, 1, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE));
}
static void e_map_end(emitter *e) {
    yaml_event_t ev;
    emit(e, &ev, yaml_mapping_end_event_initialize(&ev));
}
static void e_seq(emitter *e, bool flow) {
    yaml_event_t ev;
    emit(e, &ev,
         yaml_sequence_start_event_initialize(
             &ev, NULL, NULL, 1, flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE));
}
static void e_seq_end(emitter *e) {
    yaml_event_t ev;
    emit(e, &ev, yaml_sequence_end_event_initialize(&ev));
}
static void e_plain(emitter *e, const char *s) {
    yaml_event_t ev;
    emit(e, &ev,
         yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
                                      YAML_PLAIN_SCALAR_STYLE));
}
static void e_int(emitter *e, int64_t v) {
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, v);
    e_plain(e, b);
}
static void e_hex64(emitter *e, uint64_t v) {
    char b[32];
    snprintf(b, sizeof b, "%016" PRIx64, v);
    yaml_event_t ev;
    emit(e, &ev,
         yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)b, 16, 0, 1,
                                      YAML_DOUBLE_QUOTED_SCALAR_STYLE));
}
/* A float, exactly: 9 significant digits round-trip a float32; infinities as
 * .inf/-.inf; NaNs by their bit pattern ("nan:7fc00000"). */
static void e_float(emitter *e, float f) {
    char b[40];
    if (isnan(f)) {
        uint32_t u;
        memcpy(&u, &f, 4);
        snprintf(b, sizeof b, "nan:%08" PRIx32, u);
    } else if (isinf(f)) {
        snprintf(b, sizeof b, "%s", f < 0 ? "-.inf" : ".inf");
    } else {
        snprintf(b, sizeof b, "%.9g", (double)f);
    }
    e_plain(e, b);
}
static void e_ms(emitter *e, double ms) {
    char b[48];
    snprintf(b, sizeof b, "%.3f", isfinite(ms) && ms >= 0 && ms < 1e12 ? ms : 0.0);
    e_plain(e, b);
}
static void hex_encode(const uint8_t *d, size_t n, char *out) {
    static const char k_hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = k_hex[d[i] >> 4];
        out[2 * i + 1] = k_hex[d[i] & 15];
    }
    out[2 * n] = '\0';
}
/* A string: double-quoted (libyaml escapes what needs it, NUL included), or,
 * when it is not valid UTF-8, its bytes in hex tagged !hex. */
static void e_str_n(emitter *e, const char *s, size_t len) {
    if (e->failed || e->st) return;
    if (len > INT32_MAX / 2) {
        e->st =
            mopt_fail(MOPT_ERR_LIMIT, "a string of %zu bytes is too long for a .mopt header", len);
        return;
    }
    yaml_event_t ev;
    if (yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)(s ? s : ""), (int)len, 0, 1,
                                     YAML_DOUBLE_QUOTED_SCALAR_STYLE)) {
        emit(e, &ev, 1);
        return;
    }
    char *hex = mopt_malloc(len * 2 + 1);
    if (!hex) {
        e->st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory writing a .mopt header");
        return;
    }
    hex_encode((const uint8_t *)s, len, hex);
    emit(e, &ev,
         yaml_scalar_event_initialize(&ev, NULL, (yaml_char_t *)"!hex", (yaml_char_t *)hex,
                                      (int)(len * 2), 0, 0, YAML_DOUBLE_QUOTED_SCALAR_STYLE));
    mopt_free(hex);
}
static void e_str(emitter *e, const char *s) { e_str_n(e, s, s ? strlen(s) : 0); }
static void e_kint(emitter *e, const char *k, int64_t v) {
    e_plain(e, k);
    e_int(e, v);
}
static void e_kstr(emitter *e, const char *k, const char *v) {
    e_plain(e, k);
    e_str(e, v);
}

/* Hands out the next tensor-table index. The header is emitted more than
 * once (offsets depend on its length); the table and the weight checksums
 * are built during the first emission and reused, in the same order, after. */
static int64_t tab_take(emitter *e, const char *name, mopt_dtype dtype, int32_t rank,
                        const int64_t *dims, const void *data, size_t size) {
    if (e->next < e->n_tab) {
        if (e->tab[e->next].data != data) {
            e->st = mopt_fail(MOPT_ERR_INTERNAL, "the tensor table changed between emissions");
            return -1;
        }
        return (int64_t)e->next++;
    }
    if (size && !data) {
        e->st = mopt_fail(MOPT_ERR_INTERNAL, "tensor '%s' has %zu bytes but no data", name, size);
        return -1;
    }
    if (e->n_tab == e->cap_tab) {
        size_t cap = e->cap_tab ? e->cap_tab * 2 : 64;
        tab_entry *nt = mopt_realloc(e->tab, cap * sizeof *nt);
        if (!nt) {
            e->st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory building the tensor table");
            return -1;
        }
        e->tab = nt;
        e->cap_tab = cap;
    }
    tab_entry *t = &e->tab[e->n_tab++];
    t->name = name;
    t->dtype = dtype;
    t->rank = rank;
    t->dims = dims;
    t->data = data;
    t->size = size;
    t->offset = 0;
    t->checksum = mfmt_hash64(data ? data : "", size);
    e->next = e->n_tab;
    return (int64_t)e->next - 1;
}

static bool dtype_storable(mopt_dtype d) {
    return d != MOPT_DTYPE_UNDEFINED && d != MOPT_DTYPE_STRING && mopt_dtype_size(d) > 0;
}

static void emit_dims(emitter *e, int32_t rank, const int64_t *dims) {
    e_seq(e, true);
    for (int32_t i = 0; i < rank; i++)
        e_int(e, dims[i]);
    e_seq_end(e);
}

static void emit_tensor(emitter *e, const ir_tensor *t, const char *what) {
    if (!dtype_storable(t->dtype) || t->rank < 0 || t->rank > IR_MAX_RANK) {
        if (!e->st)
            e->st = mopt_fail(MOPT_ERR_UNSUPPORTED, "%s: a %s tensor cannot be saved", what,
                              mopt_dtype_name(t->dtype));
        return;
    }
    e_map(e, true);
    e_kstr(e, "name", t->name ? t->name : "");
    e_kstr(e, "dtype", mopt_dtype_name(t->dtype));
    e_plain(e, "dims");
    emit_dims(e, t->rank, t->dims);
    if (t->nbytes <= MFMT_INLINE_MAX) {
        char hex[2 * MFMT_INLINE_MAX + 1];
        hex_encode(t->data ? t->data : (const uint8_t *)"", t->data ? t->nbytes : 0, hex);
        e_kstr(e, "data", hex);
    } else {
        int64_t k =
            tab_take(e, t->name ? t->name : "", t->dtype, t->rank, t->dims, t->data, t->nbytes);
        e_kint(e, "tensor", k);
    }
    e_map_end(e);
}

static void emit_graph(emitter *e, const ir_graph *g, int depth);

static void emit_attr(emitter *e, const ir_node *n, const ir_attr *a, int depth) {
    const char *tn = attr_type_name(a->type);
    char what[320];
    snprintf(what, sizeof what, "attribute '%s' of node '%s' (%s)", a->name, n->name, n->op_type);
    if (!tn) {
        if (!e->st)
            e->st = mopt_fail(MOPT_ERR_UNSUPPORTED, "%s: attributes of type %d cannot be saved",
                              what, (int)a->type);
        return;
    }
    bool graphs = a->type == IR_ATTR_GRAPH || a->type == IR_ATTR_GRAPHS;
    e_map(e, !graphs);
    e_kstr(e, "name", a->name);
    e_kstr(e, "type", tn);
    e_plain(e, "value");
    switch (a->type) {
    case IR_ATTR_FLOAT: e_float(e, a->f); break;
    case IR_ATTR_INT: e_int(e, a->i); break;
    case IR_ATTR_STRING: e_str_n(e, a->s, a->s ? a->s_len : 0); break;
    case IR_ATTR_TENSOR:
        if (a->t)
            emit_tensor(e, a->t, what);
        else
            e_plain(e, "null");
        break;
    case IR_ATTR_GRAPH:
        if (a->g)
            emit_graph(e, a->g, depth + 1);
        else
            e_plain(e, "null");
        break;
    case IR_ATTR_FLOATS:
        e_seq(e, true);
        for (size_t i = 0; i < a->n; i++)
            e_float(e, a->floats[i]);
        e_seq_end(e);
        break;
    case IR_ATTR_INTS:
        e_seq(e, true);
        for (size_t i = 0; i < a->n; i++)
            e_int(e, a->ints[i]);
        e_seq_end(e);
        break;
    case IR_ATTR_STRINGS:
        e_seq(e, true);
        for (size_t i = 0; i < a->n; i++)
            e_str(e, a->strings[i] ? a->strings[i] : "");
        e_seq_end(e);
        break;
    case IR_ATTR_TENSORS:
        e_seq(e, true);
        for (size_t i = 0; i < a->n; i++) {
            if (a->tensors[i])
                emit_tensor(e, a->tensors[i], what);
            else
                e_plain(e, "null");
        }
        e_seq_end(e);
        break;
    case IR_ATTR_GRAPHS:
        e_seq(e, false);
        for (size_t i = 0; i < a->n; i++) {
            if (a->graphs[i])
                emit_graph(e, a->graphs[i], depth + 1);
            else
                e_plain(e, "null");
        }
        e_seq_end(e);
        break;
    case IR_ATTR_TYPE_PROTO: e_plain(e, "null"); break; /* not kept by the importer */
    case IR_ATTR_TYPE_PROTOS: e_int(e, (int64_t)a->n); break;
    default: break;
    }
    e_map_end(e);
}

static void emit_shape(emitter *e, const ir_graph *g, const ir_shape *s) {
    if (s->rank < 0) {
        e_plain(e, "null");
        return;
    }
    e_seq(e, true);
    for (int32_t i = 0; i < s->rank && i < IR_MAX_RANK; i++) {
        if (s->syms[i] == 0)
            e_int(e, s->dims[i]);
        else if (s->syms[i] > 0 && s->syms[i] <= g->n_symbols)
            e_str(e, g->symbols[s->syms[i] - 1]);
        else
            e_int(e, -1);
    }
    e_seq_end(e);
}

static void emit_graph(emitter *e, const ir_graph *g, int depth) {
    if (depth > MFMT_MAX_GRAPH_DEPTH) {
        if (!e->st)
            e->st = mopt_fail(MOPT_ERR_LIMIT, "subgraphs nest more than %d levels",
                              MFMT_MAX_GRAPH_DEPTH);
        return;
    }
    e_map(e, false);
    e_kstr(e, "name", g->name ? g->name : "");
    e_kint(e, "ir_version", g->ir_version);
    e_plain(e, "producer_name");
    if (g->producer_name)
        e_str(e, g->producer_name);
    else
        e_plain(e, "null");
    e_plain(e, "opsets");
    e_seq(e, true);
    for (int32_t i = 0; i < g->n_opsets; i++) {
        e_map(e, true);
        e_kstr(e, "domain", g->opsets[i].domain);
        e_kint(e, "version", g->opsets[i].version);
        e_map_end(e);
    }
    e_seq_end(e);
    e_plain(e, "symbols");
    e_seq(e, true);
    for (int32_t i = 0; i < g->n_symbols; i++)
        e_str(e, g->symbols[i]);
    e_seq_end(e);
    e_plain(e, "values");
    e_seq(e, false);
    for (int32_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        e_map(e, true);
        e_kstr(e, "name", v->name);
        e_kstr(e, "dtype", mopt_dtype_name(v->dtype));
        e_plain(e, "shape");
        emit_shape(e, g, &v->shape);
        e_plain(e, "flags");
        e_seq(e, true);
        if (v->flags & IR_VALUE_INPUT) e_plain(e, "input");
        if (v->flags & IR_VALUE_OUTPUT) e_plain(e, "output");
        if (v->flags & IR_VALUE_INITIALIZER) e_plain(e, "initializer");
        e_seq_end(e);
        if (v->flags & IR_VALUE_INITIALIZER) {
            if (!dtype_storable(v->dtype) || v->shape.rank < 0 ||
                !ir_shape_is_concrete(&v->shape)) {
                char sb[IR_SHAPE_STR_CAP];
                if (!e->st)
                    e->st = mopt_fail(MOPT_ERR_UNSUPPORTED,
                                      "initializer '%s' (%s %s) cannot be saved: only "
                                      "numeric tensors of known shape can",
                                      v->name, mopt_dtype_name(v->dtype),
                                      ir_shape_str(&v->shape, g, sb, sizeof sb));
            } else {
                e_kint(e, "tensor",
                       tab_take(e, v->name, v->dtype, v->shape.rank, v->shape.dims, v->data,
                                v->data ? v->nbytes : 0));
            }
        }
        e_map_end(e);
    }
    e_seq_end(e);
    e_plain(e, "inputs");
    e_seq(e, true);
    for (int32_t i = 0; i < g->n_inputs; i++)
        e_int(e, g->inputs[i]);
    e_seq_end(e);
    e_plain(e, "outputs");
    e_seq(e, true);
    for (int32_t i = 0; i < g->n_outputs; i++)
        e_int(e, g->outputs[i]);
    e_seq_end(e);
    e_plain(e, "nodes");
    e_seq(e, false);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        e_map(e, false);
        e_kstr(e, "name", n->name);
        e_kstr(e, "op_type", n->op_type);
        e_kstr(e, "domain", n->domain);
        e_plain(e, "inputs");
        e_seq(e, true);
        for (int32_t k = 0; k < n->n_inputs; k++)
            e_int(e, n->inputs[k]);
        e_seq_end(e);
        e_plain(e, "outputs");
        e_seq(e, true);
        for (int32_t k = 0; k < n->n_outputs; k++)
            e_int(e, n->outputs[k]);
        e_seq_end(e);
        e_plain(e, "attributes");
        e_seq(e, false);
        for (int32_t k = 0; k < n->n_attrs; k++)
            emit_attr(e, n, &n->attrs[k], depth);
        e_seq_end(e);
        e_map_end(e);
    }
    e_seq_end(e);
    e_map_end(e);
}

/* Emits the whole header (magic line, YAML, terminator) into out, with the
 * data starting at data_start. */
static mopt_status emit_header(emitter *e, const ir_graph *g, const mfmt_meta *meta,
                               uint64_t data_start, mbuf *out) {
    out->len = 0;
    char line[64];
    int ll = snprintf(line, sizeof line, "%s%d\n", k_magic, MFMT_VERSION);
    mbuf_add(out, line, (size_t)ll);
    e->out = out;
    e->failed = false;
    e->next = 0;
    if (!yaml_emitter_initialize(&e->y))
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory starting the YAML emitter");
    yaml_emitter_set_output(&e->y, write_handler, out);
    yaml_emitter_set_unicode(&e->y, 1);
    yaml_emitter_set_width(&e->y, -1);
    yaml_emitter_set_indent(&e->y, 2);
    yaml_emitter_set_break(&e->y, YAML_LN_BREAK);
    yaml_event_t ev;
    emit(e, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
    emit(e, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
    e_map(e, false);
    e_kint(e, "format_version", MFMT_VERSION);
    char producer[64];
    snprintf(producer, sizeof producer, "libmopt %s", mopt_version());
    e_kstr(e, "producer", producer);
    e_kstr(e, "checksum_algorithm", "mh64");
    e_plain(e, "source");
    e_map(e, true);
    e_plain(e, "checksum");
    e_hex64(e, meta->source_checksum);
    e_kint(e, "bytes", (int64_t)meta->source_bytes);
    e_map_end(e);
    e_kint(e, "opt_level", meta->opt_level);
    e_kstr(e, "precision", meta->precision);
    e_plain(e, "passes");
    e_seq(e, false);
    for (int i = 0; i < meta->report.n && i < PASS_REPORT_CAP; i++) {
        const pass_report_entry *pe = &meta->report.entries[i];
        e_map(e, true);
        e_kstr(e, "name", pe->name ? pe->name : "");
        e_plain(e, "ms");
        e_ms(e, pe->ms);
        e_kint(e, "nodes_before", pe->nodes_before);
        e_kint(e, "nodes_after", pe->nodes_after);
        e_kint(e, "rewrites", pe->rewrites);
        e_kstr(e, "note", pe->note);
        e_map_end(e);
    }
    e_seq_end(e);
    e_plain(e, "pass_totals");
    e_map(e, true);
    e_kint(e, "nodes_before", meta->report.nodes_before);
    e_kint(e, "nodes_after", meta->report.nodes_after);
    e_plain(e, "ms");
    e_ms(e, meta->report.total_ms);
    e_map_end(e);
    e_plain(e, "graph");
    emit_graph(e, g, 0);
    /* the table, with offsets from data_start in table order */
    uint64_t off = data_start;
    e_plain(e, "tensors");
    e_seq(e, false);
    for (size_t i = 0; i < e->n_tab; i++) {
        tab_entry *t = &e->tab[i];
        t->offset = off;
        off = align_up(off + t->size);
        e_map(e, true);
        e_kstr(e, "name", t->name);
        e_kstr(e, "dtype", mopt_dtype_name(t->dtype));
        e_plain(e, "dims");
        emit_dims(e, t->rank, t->dims);
        e_kint(e, "offset", (int64_t)t->offset);
        e_kint(e, "size", (int64_t)t->size);
        e_plain(e, "checksum");
        e_hex64(e, t->checksum);
        e_map_end(e);
    }
    e_seq_end(e);
    e_map_end(e);
    emit(e, &ev, yaml_document_end_event_initialize(&ev, 1));
    emit(e, &ev, yaml_stream_end_event_initialize(&ev));
    if (!e->failed && !e->st && !yaml_emitter_flush(&e->y)) e->failed = true;
    mopt_status st = e->st;
    if (!st && (e->failed || out->oom))
        st = out->oom ? mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory writing a .mopt header")
                      : mopt_fail(MOPT_ERR_INTERNAL, "YAML emitter: %s",
                                  e->y.problem ? e->y.problem : "error");
    yaml_emitter_delete(&e->y);
    if (st) return st;
    /* the YAML ends with a newline; the terminator carries the checksum */
    if (out->len == 0 || out->p[out->len - 1] != '\n') mbuf_add(out, "\n", 1);
    uint64_t h = mfmt_hash64(out->p, out->len);
    ll = snprintf(line, sizeof line, "%s%016" PRIx64 "\n", k_end + 1, h);
    mbuf_add(out, line, (size_t)ll);
    if (out->oom) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory writing a .mopt header");
    return MOPT_OK;
}

static bool write_zeros(FILE *f, uint64_t n) {
    static const uint8_t zeros[MFMT_ALIGN];
    while (n) {
        size_t k = n > sizeof zeros ? sizeof zeros : (size_t)n;
        if (fwrite(zeros, 1, k, f) != k) return false;
        n -= k;
    }
    return true;
}

mopt_status mfmt_save(const ir_graph *g, const mfmt_meta *meta, const char *path) {
    emitter e;
    memset(&e, 0, sizeof e);
    mbuf hdr = {0};
    /* The offsets are part of the header, so the header's length depends on
     * where the data starts: iterate to the smallest fixed point (lengths
     * only grow with the offsets, so this converges in a few rounds). */
    uint64_t data_start = 0;
    mopt_status st = MOPT_OK;
    for (int round = 0;; round++) {
        st = emit_header(&e, g, meta, data_start, &hdr);
        if (st) break;
        uint64_t need = align_up(hdr.len);
        if (need == data_start) break;
        if (round > 16) {
            st = mopt_fail(MOPT_ERR_INTERNAL, "the .mopt header length does not settle");
            break;
        }
        data_start = need;
    }
    uint64_t end = data_start;
    if (!st && e.n_tab) end = align_up(e.tab[e.n_tab - 1].offset + e.tab[e.n_tab - 1].size);
    char *tmp = NULL;
    FILE *f = NULL;
    if (!st) {
        size_t pl = strlen(path);
        tmp = mopt_malloc(pl + 32);
        if (!tmp) st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        if (!st) {
            snprintf(tmp, pl + 32, "%s.tmp-%ld", path, (long)getpid());
            f = fopen(tmp, "wb");
            if (!f) st = mopt_fail(MOPT_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
        }
    }
    if (!st) {
        bool ok = fwrite(hdr.p, 1, hdr.len, f) == hdr.len;
        uint64_t pos = hdr.len;
        for (size_t i = 0; ok && i < e.n_tab; i++) {
            const tab_entry *t = &e.tab[i];
            ok = write_zeros(f, t->offset - pos);
            if (ok && t->size) ok = fwrite(t->data, 1, t->size, f) == t->size;
            pos = t->offset + t->size;
        }
        if (ok) ok = write_zeros(f, end - pos);
        if (ok) ok = fflush(f) == 0;
        int err = errno;
        if (fclose(f) != 0 && ok) {
            ok = false;
            err = errno;
        }
        f = NULL;
        if (ok && rename(tmp, path) != 0) {
            ok = false;
            err = errno;
        }
        if (!ok) {
            remove(tmp);
            st = mopt_fail(MOPT_ERR_IO, "cannot write '%s': %s", path, strerror(err));
        }
    }
    mopt_free(tmp);
    mopt_free(hdr.p);
    mopt_free(e.tab);
    return st;
}

/* ==== reading: YAML into a small tree ====================================== */

enum { YN_SCALAR = 1, YN_SEQ = 2, YN_MAP = 3 };

typedef struct ynode {
    uint8_t kind;
    bool plain; /* plain scalar style */
    bool hex;   /* tagged !hex */
    size_t line;
    char *s; /* scalar text (NUL-terminated, may hold NULs: see len) */
    size_t len;
    struct ynode **kids; /* sequence items; mapping: key, value, key, value, ... */
    size_t n, cap;
} ynode;

/* The tree lives in an arena of large chunks: one allocation per 64 KiB
 * instead of two or three per scalar (this halves the header's load time). */
typedef struct ychunk {
    struct ychunk *next;
    size_t used, cap;
    max_align_t data[];
} ychunk;

typedef struct yarena {
    ychunk *head;
} yarena;

static void *yalloc(yarena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > ((size_t)64 << 10) ? n : ((size_t)64 << 10);
        if (cap > SIZE_MAX - sizeof(ychunk)) return NULL;
        ychunk *c = mopt_malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = (char *)a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

static void yarena_free(yarena *a) {
    for (ychunk *c = a->head, *next; c; c = next) {
        next = c->next;
        mopt_free(c);
    }
    a->head = NULL;
}

static bool ynode_push(yarena *a, ynode *parent, ynode *kid) {
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 8;
        if (cap > SIZE_MAX / sizeof(ynode *)) return false;
        ynode **nk = yalloc(a, cap * sizeof *nk);
        if (!nk) return false;
        if (parent->n) memcpy(nk, parent->kids, parent->n * sizeof *nk);
        parent->kids = nk;
        parent->cap = cap;
    }
    parent->kids[parent->n++] = kid;
    return true;
}

/* Lines in messages count from the top of the file: the YAML starts on line 2. */
#define FILE_LINE(mark_line) ((size_t)(mark_line) + 2)

static mopt_status yaml_tree(yarena *arena, const uint8_t *text, size_t len, ynode **out) {
    *out = NULL;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory starting the YAML parser");
    yaml_parser_set_input_string(&p, text, len);
    ynode *stack[MFMT_MAX_YAML_DEPTH];
    int depth = 0;
    ynode *root = NULL;
    mopt_status st = MOPT_OK;
    int docs = 0;
    bool done = false;
    while (!st && !done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            st = mopt_fail(MOPT_ERR_PARSE, "malformed YAML header at line %zu, column %zu: %s%s%s",
                           FILE_LINE(p.problem_mark.line), p.problem_mark.column + 1,
                           p.problem ? p.problem : "syntax error", p.context ? " " : "",
                           p.context ? p.context : "");
            break;
        }
        size_t line = FILE_LINE(ev.start_mark.line);
        ynode *nn = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = true; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                st = mopt_fail(MOPT_ERR_PARSE, "the YAML header has a second document at line %zu",
                               line);
            break;
        case YAML_ALIAS_EVENT:
            st = mopt_fail(MOPT_ERR_PARSE,
                           "YAML aliases are not allowed in a .mopt header "
                           "(line %zu)",
                           line);
            break;
        case YAML_SCALAR_EVENT:
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            nn = yalloc(arena, sizeof *nn);
            if (nn) memset(nn, 0, sizeof *nn);
            if (!nn) {
                st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
                break;
            }
            nn->line = line;
            if (ev.type == YAML_SCALAR_EVENT) {
                nn->kind = YN_SCALAR;
                nn->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                nn->hex = ev.data.scalar.tag && strcmp((char *)ev.data.scalar.tag, "!hex") == 0;
                nn->len = ev.data.scalar.length;
                nn->s = nn->len < SIZE_MAX ? yalloc(arena, nn->len + 1) : NULL;
                if (!nn->s) {
                    st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
                    break;
                }
                memcpy(nn->s, ev.data.scalar.value, nn->len);
                nn->s[nn->len] = '\0';
            } else {
                nn->kind = ev.type == YAML_SEQUENCE_START_EVENT ? YN_SEQ : YN_MAP;
            }
            if (depth == 0) {
                if (root) {
                    st = mopt_fail(MOPT_ERR_PARSE, "unexpected content at line %zu", line);
                    break;
                }
                root = nn;
            } else if (stack[depth - 1]->kind == YN_MAP && nn->kind != YN_SCALAR &&
                       stack[depth - 1]->n % 2 == 0) {
                st = mopt_fail(MOPT_ERR_PARSE,
                               "malformed YAML header at line %zu: mapping keys must be scalars",
                               line);
                break;
            } else if (!ynode_push(arena, stack[depth - 1], nn)) {
                st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
                break;
            }
            if (nn->kind != YN_SCALAR) {
                if (depth == MFMT_MAX_YAML_DEPTH) {
                    st = mopt_fail(MOPT_ERR_PARSE,
                                   "the YAML header nests more than %d levels (line %zu)",
                                   MFMT_MAX_YAML_DEPTH, line);
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
    yaml_parser_delete(&p);
    if (!st && !root) st = mopt_fail(MOPT_ERR_PARSE, "the YAML header is empty");
    if (st) return st;
    *out = root;
    return MOPT_OK;
}

/* ==== reading: the header's meaning ======================================== */

typedef struct ld_tensor {
    char *name;
    mopt_dtype dtype;
    int32_t rank;
    int64_t dims[IR_MAX_RANK];
    uint64_t offset, size;
    uint64_t checksum;
    size_t line;
    void *data; /* into the image; NULL when size is 0 */
} ld_tensor;

typedef struct loader {
    uint8_t *base;
    size_t size;
    size_t header_end;
    bool verify;
    ld_tensor *tab;
    size_t n_tab;
} loader;

#define WHERE_CAP 400

static mopt_status bad(mopt_status st, const ynode *n, const char *where, const char *fmt, ...)
    MOPT_PRINTF(4, 5);
static mopt_status bad(mopt_status st, const ynode *n, const char *where, const char *fmt, ...) {
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n) return mopt_fail(st, "header line %zu: %s: %s", n->line, where, msg);
    return mopt_fail(st, "header: %s: %s", where, msg);
}

static const ynode *yget(const ynode *map, const char *key) {
    if (!map || map->kind != YN_MAP) return NULL;
    for (size_t i = 0; i + 1 < map->n; i += 2)
        if (map->kids[i]->kind == YN_SCALAR && strcmp(map->kids[i]->s, key) == 0)
            return map->kids[i + 1];
    return NULL;
}

static bool is_null(const ynode *n) {
    return !n || (n->kind == YN_SCALAR && n->plain &&
                  (strcmp(n->s, "null") == 0 || strcmp(n->s, "~") == 0 || n->len == 0));
}

static const char *kind_name(const ynode *n) {
    return n->kind == YN_MAP ? "a mapping" : n->kind == YN_SEQ ? "a sequence" : "a scalar";
}

/* The child `key` of map, required and of the given kind. */
static mopt_status need(const ynode *map, const char *key, int kind, const char *where,
                        const ynode **out) {
    const ynode *n = yget(map, key);
    if (!n) return bad(MOPT_ERR_PARSE, map, where, "missing key '%s'", key);
    if (n->kind != kind)
        return bad(MOPT_ERR_PARSE, n, where, "'%s' is %s, expected %s", key, kind_name(n),
                   kind == YN_MAP   ? "a mapping"
                   : kind == YN_SEQ ? "a sequence"
                                    : "a scalar");
    *out = n;
    return MOPT_OK;
}

static mopt_status as_int(const ynode *n, const char *where, const char *what, int64_t lo,
                          int64_t hi, int64_t *out) {
    if (n->kind != YN_SCALAR || !n->plain || n->len == 0)
        return bad(MOPT_ERR_PARSE, n, where, "%s: expected an integer", what);
    errno = 0;
    char *end = NULL;
    long long v = strtoll(n->s, &end, 10);
    if (errno || end != n->s + n->len)
        return bad(MOPT_ERR_PARSE, n, where, "%s: '%.40s' is not an integer", what, n->s);
    if (v < lo || v > hi)
        return bad(MOPT_ERR_INVALID_MODEL, n, where,
                   "%s: %lld is out of range [%" PRId64 ", %" PRId64 "]", what, v, lo, hi);
    *out = (int64_t)v;
    return MOPT_OK;
}

static mopt_status key_int(const ynode *map, const char *key, const char *where, int64_t lo,
                           int64_t hi, int64_t *out) {
    const ynode *n;
    mopt_status st = need(map, key, YN_SCALAR, where, &n);
    return st ? st : as_int(n, where, key, lo, hi, out);
}

static int hex_val(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes hex text into dst (n bytes expected). */
static bool hex_decode(const char *s, size_t len, uint8_t *dst, size_t n) {
    if (len != 2 * n) return false;
    for (size_t i = 0; i < n; i++) {
        int h = hex_val(s[2 * i]), l = hex_val(s[2 * i + 1]);
        if (h < 0 || l < 0) return false;
        dst[i] = (uint8_t)(h << 4 | l);
    }
    return true;
}

static mopt_status as_hex64(const ynode *n, const char *where, const char *what, uint64_t *out) {
    uint8_t b[8];
    if (n->kind != YN_SCALAR || !hex_decode(n->s, n->len, b, 8))
        return bad(MOPT_ERR_PARSE, n, where, "%s: expected 16 hex digits", what);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    *out = v;
    return MOPT_OK;
}

/* A string scalar (double-quoted, or !hex) as a new buffer; *len its length.
 * With cstr, a NUL inside is refused. */
static mopt_status as_str(const ynode *n, const char *where, const char *what, bool cstr,
                          char **out, size_t *len) {
    *out = NULL;
    if (n->kind != YN_SCALAR) return bad(MOPT_ERR_PARSE, n, where, "%s: expected a string", what);
    size_t l = n->hex ? n->len / 2 : n->len;
    char *s = mopt_malloc(l + 1);
    if (!s) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    if (n->hex) {
        if (!hex_decode(n->s, n->len, (uint8_t *)s, l)) {
            mopt_free(s);
            return bad(MOPT_ERR_PARSE, n, where, "%s: bad !hex string", what);
        }
    } else {
        memcpy(s, n->s, l);
    }
    s[l] = '\0';
    if (cstr && memchr(s, '\0', l)) {
        mopt_free(s);
        return bad(MOPT_ERR_PARSE, n, where, "%s: contains a NUL byte", what);
    }
    *out = s;
    if (len) *len = l;
    return MOPT_OK;
}

static mopt_status key_str(const ynode *map, const char *key, const char *where, char **out) {
    const ynode *n;
    *out = NULL;
    mopt_status st = need(map, key, YN_SCALAR, where, &n);
    return st ? st : as_str(n, where, key, true, out, NULL);
}

/* Copies a short string key into a fixed buffer. */
static mopt_status key_buf(const ynode *map, const char *key, const char *where, char *buf,
                           size_t cap) {
    char *s;
    mopt_status st = key_str(map, key, where, &s);
    if (st) return st;
    if (strlen(s) >= cap) {
        mopt_free(s);
        return bad(MOPT_ERR_PARSE, yget(map, key), where, "'%s' is longer than %zu bytes", key,
                   cap - 1);
    }
    snprintf(buf, cap, "%s", s);
    mopt_free(s);
    return MOPT_OK;
}

static mopt_status as_float(const ynode *n, const char *where, const char *what, float *out) {
    if (n->kind != YN_SCALAR || n->len == 0)
        return bad(MOPT_ERR_PARSE, n, where, "%s: expected a number", what);
    if (strcmp(n->s, ".inf") == 0 || strcmp(n->s, "-.inf") == 0) {
        *out = n->s[0] == '-' ? -INFINITY : INFINITY;
        return MOPT_OK;
    }
    if (n->len == 12 && strncmp(n->s, "nan:", 4) == 0) {
        uint8_t b[4];
        if (!hex_decode(n->s + 4, 8, b, 4))
            return bad(MOPT_ERR_PARSE, n, where, "%s: bad NaN '%s'", what, n->s);
        uint32_t u = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
        memcpy(out, &u, 4);
        return MOPT_OK;
    }
    char *end = NULL;
    errno = 0;
    float f = strtof(n->s, &end);
    if (end != n->s + n->len || isnan(f) || (errno == ERANGE && isinf(f)))
        return bad(MOPT_ERR_PARSE, n, where, "%s: '%.40s' is not a number", what, n->s);
    *out = f;
    return MOPT_OK;
}

static mopt_status key_ms(const ynode *map, const char *where, double *out) {
    const ynode *n;
    mopt_status st = need(map, "ms", YN_SCALAR, where, &n);
    if (st) return st;
    char *end = NULL;
    double v = strtod(n->s, &end);
    if (n->len == 0 || end != n->s + n->len || !isfinite(v) || v < 0)
        return bad(MOPT_ERR_PARSE, n, where, "ms: '%.40s' is not a time", n->s);
    *out = v;
    return MOPT_OK;
}

static mopt_status key_dtype(const ynode *map, const char *where, mopt_dtype *out) {
    char buf[32];
    mopt_status st = key_buf(map, "dtype", where, buf, sizeof buf);
    if (st) return st;
    if (!dtype_from_name(buf, out))
        return bad(MOPT_ERR_PARSE, yget(map, "dtype"), where, "unknown dtype '%s'", buf);
    return MOPT_OK;
}

/* dims of a tensor: a sequence of at most IR_MAX_RANK sizes >= 0. */
static mopt_status key_dims(const ynode *map, const char *where, int32_t *rank, int64_t *dims) {
    const ynode *d;
    mopt_status st = need(map, "dims", YN_SEQ, where, &d);
    if (st) return st;
    if (d->n > IR_MAX_RANK)
        return bad(MOPT_ERR_INVALID_MODEL, d, where, "%zu dims; at most %d are supported", d->n,
                   IR_MAX_RANK);
    for (size_t i = 0; i < d->n; i++) {
        st = as_int(d->kids[i], where, "dims", 0, INT64_MAX, &dims[i]);
        if (st) return st;
    }
    *rank = (int32_t)d->n;
    return MOPT_OK;
}

/* Bytes of dtype x dims, or false on overflow. */
static bool tensor_bytes(mopt_dtype dt, int32_t rank, const int64_t *dims, uint64_t *out) {
    uint64_t n = mopt_dtype_size(dt);
    for (int32_t i = 0; i < rank; i++) {
        uint64_t d = (uint64_t)dims[i];
        if (d && n > UINT64_MAX / d) return false;
        n *= d;
    }
    *out = n;
    return true;
}

static void dims_text(int32_t rank, const int64_t *dims, char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int32_t i = 0; i < rank && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, i ? "," : "", dims[i]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
}

static int cmp_offset(const void *a, const void *b, void *tab) {
    const ld_tensor *t = tab;
    uint64_t x = t[*(const size_t *)a].offset, y = t[*(const size_t *)b].offset;
    return x < y ? -1 : x > y;
}

/* The tensor table: every entry checked against the file before any is used. */
static mopt_status load_table(loader *L, const ynode *root) {
    const ynode *seq;
    mopt_status st = need(root, "tensors", YN_SEQ, "top level", &seq);
    if (st) return st;
    L->tab = mopt_calloc(seq->n ? seq->n : 1, sizeof *L->tab);
    if (!L->tab) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    L->n_tab = seq->n;
    for (size_t i = 0; i < seq->n; i++) {
        const ynode *m = seq->kids[i];
        ld_tensor *t = &L->tab[i];
        char where[WHERE_CAP];
        snprintf(where, sizeof where, "tensors[%zu]", i);
        if (m->kind != YN_MAP) return bad(MOPT_ERR_PARSE, m, where, "expected a mapping");
        if ((st = key_str(m, "name", where, &t->name))) return st;
        snprintf(where, sizeof where, "tensors[%zu] ('%.200s')", i, t->name);
        if ((st = key_dtype(m, where, &t->dtype))) return st;
        if (!dtype_storable(t->dtype))
            return bad(MOPT_ERR_INVALID_MODEL, yget(m, "dtype"), where, "dtype %s cannot be stored",
                       mopt_dtype_name(t->dtype));
        if ((st = key_dims(m, where, &t->rank, t->dims))) return st;
        int64_t off, size;
        if ((st = key_int(m, "offset", where, 0, INT64_MAX, &off))) return st;
        if ((st = key_int(m, "size", where, 0, INT64_MAX, &size))) return st;
        uint64_t sum = 0;
        const ynode *cn;
        if ((st = need(m, "checksum", YN_SCALAR, where, &cn))) return st;
        if ((st = as_hex64(cn, where, "checksum", &sum))) return st;
        t->offset = (uint64_t)off;
        t->size = (uint64_t)size;
        uint64_t want;
        char db[IR_MAX_RANK * 24 + 4];
        dims_text(t->rank, t->dims, db, sizeof db);
        if (!tensor_bytes(t->dtype, t->rank, t->dims, &want))
            return bad(MOPT_ERR_INVALID_MODEL, m, where,
                       "dims %s of %s overflow a 64-bit byte count", db, mopt_dtype_name(t->dtype));
        if (want != t->size)
            return bad(MOPT_ERR_INVALID_MODEL, m, where,
                       "size %" PRIu64 " does not match dims %s of %s (%" PRIu64 " bytes)", t->size,
                       db, mopt_dtype_name(t->dtype), want);
        if (t->offset % MFMT_ALIGN)
            return bad(MOPT_ERR_INVALID_MODEL, m, where,
                       "offset %" PRIu64 " is not %d-byte aligned", t->offset, MFMT_ALIGN);
        if (t->offset < L->header_end)
            return bad(MOPT_ERR_INVALID_MODEL, m, where,
                       "offset %" PRIu64 " points into the header (which ends at %zu)", t->offset,
                       L->header_end);
        if (t->offset > L->size || t->size > L->size - t->offset)
            return bad(MOPT_ERR_INVALID_MODEL, m, where,
                       "bytes [%" PRIu64 ", %" PRIu64 ") lie outside the file (%zu bytes): "
                       "truncated or corrupt",
                       t->offset, t->offset + t->size, L->size);
        t->data = t->size ? L->base + t->offset : NULL;
        t->checksum = sum;
        t->line = cn->line;
    }
    /* no two tensors may share bytes */
    size_t *order = mopt_malloc((L->n_tab ? L->n_tab : 1) * sizeof *order);
    if (!order) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    size_t k = 0;
    for (size_t i = 0; i < L->n_tab; i++)
        if (L->tab[i].size) order[k++] = i;
    qsort_r(order, k, sizeof *order, cmp_offset, L->tab);
    for (size_t i = 1; i < k; i++) {
        const ld_tensor *a = &L->tab[order[i - 1]], *b = &L->tab[order[i]];
        if (a->offset + a->size > b->offset) {
            st = mopt_fail(MOPT_ERR_INVALID_MODEL,
                           "header: tensors[%zu] ('%.200s', bytes [%" PRIu64 ", %" PRIu64
                           ")) overlaps tensors[%zu] ('%.200s', bytes [%" PRIu64 ", %" PRIu64 "))",
                           order[i - 1], a->name, a->offset, a->offset + a->size, order[i], b->name,
                           b->offset, b->offset + b->size);
            break;
        }
    }
    mopt_free(order);
    /* the layout is sound: now, if asked, the bytes */
    for (size_t i = 0; !st && L->verify && i < L->n_tab; i++) {
        const ld_tensor *t = &L->tab[i];
        uint64_t h = mfmt_hash64(t->data ? t->data : "", (size_t)t->size);
        if (h != t->checksum)
            st = mopt_fail(MOPT_ERR_PARSE,
                           "header line %zu: tensors[%zu] ('%.200s'): checksum mismatch: the "
                           "table says %016" PRIx64 " but the data hashes to %016" PRIx64
                           " (corrupted weights)",
                           t->line, i, t->name, t->checksum, h);
    }
    return st;
}

static mopt_status table_ref(loader *L, const ynode *map, const char *where,
                             const ld_tensor **out) {
    int64_t k;
    mopt_status st = key_int(map, "tensor", where, 0, L->n_tab ? (int64_t)L->n_tab - 1 : -1, &k);
    if (st) return st;
    *out = &L->tab[k];
    return MOPT_OK;
}

/* An attribute tensor (always copied: attribute tensors own their data). */
static mopt_status load_tensor(loader *L, const ynode *m, const char *where, ir_tensor **out) {
    *out = NULL;
    if (m->kind != YN_MAP) return bad(MOPT_ERR_PARSE, m, where, "expected a tensor mapping");
    ir_tensor *t = mopt_calloc(1, sizeof *t);
    if (!t) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    mopt_status st = key_str(m, "name", where, &t->name);
    if (!st) st = key_dtype(m, where, &t->dtype);
    if (!st && !dtype_storable(t->dtype))
        st = bad(MOPT_ERR_INVALID_MODEL, m, where, "a %s tensor cannot be stored",
                 mopt_dtype_name(t->dtype));
    if (!st) st = key_dims(m, where, &t->rank, t->dims);
    uint64_t bytes = 0;
    if (!st && (!tensor_bytes(t->dtype, t->rank, t->dims, &bytes) || bytes > SIZE_MAX))
        st = bad(MOPT_ERR_INVALID_MODEL, m, where, "its dims overflow a byte count");
    const ynode *data = yget(m, "data");
    const ld_tensor *ref = NULL;
    if (!st && !data) {
        st = table_ref(L, m, where, &ref);
        if (!st && (ref->dtype != t->dtype || ref->size != bytes || ref->rank != t->rank ||
                    memcmp(ref->dims, t->dims, (size_t)t->rank * sizeof t->dims[0]) != 0))
            st = bad(MOPT_ERR_INVALID_MODEL, m, where,
                     "its dtype and dims differ from those of table entry '%.200s'", ref->name);
    }
    if (!st && data && (data->kind != YN_SCALAR || data->len != 2 * bytes))
        st = bad(MOPT_ERR_INVALID_MODEL, data, where,
                 "inline data has %zu hex digits; its dims and dtype need %" PRIu64,
                 data->kind == YN_SCALAR ? data->len : 0, 2 * bytes);
    if (!st && bytes) {
        t->data = mopt_aligned_alloc((size_t)bytes);
        if (!t->data) st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading %s", where);
    }
    if (!st && bytes) {
        if (data) {
            if (!hex_decode(data->s, data->len, t->data, (size_t)bytes))
                st = bad(MOPT_ERR_PARSE, data, where, "inline data is not hex");
        } else {
            memcpy(t->data, ref->data, (size_t)bytes);
        }
    }
    t->nbytes = (size_t)bytes;
    if (st) {
        ir_tensor_destroy(t);
        return st;
    }
    *out = t;
    return MOPT_OK;
}

static mopt_status load_graph(loader *L, const ynode *m, const char *where, int depth,
                              ir_graph **out);

static mopt_status load_attr(loader *L, ir_node *node, const ynode *m, const char *where,
                             int depth) {
    if (m->kind != YN_MAP) return bad(MOPT_ERR_PARSE, m, where, "expected a mapping");
    char *name = NULL;
    char tn[24];
    mopt_status st = key_str(m, "name", where, &name);
    if (!st && !name[0]) st = bad(MOPT_ERR_INVALID_MODEL, m, where, "the attribute has no name");
    if (!st && ir_node_attr(node, name))
        st = bad(MOPT_ERR_INVALID_MODEL, m, where, "a second attribute named '%.100s'", name);
    if (!st) st = key_buf(m, "type", where, tn, sizeof tn);
    ir_attr_type type = IR_ATTR_UNDEFINED;
    for (size_t i = 0; !st && i < N_ATTR_TYPES; i++)
        if (strcmp(k_attr_types[i].name, tn) == 0) type = k_attr_types[i].type;
    if (!st && type == IR_ATTR_UNDEFINED)
        st = bad(MOPT_ERR_PARSE, yget(m, "type"), where, "unknown attribute type '%s'", tn);
    const ynode *v = NULL;
    if (!st) {
        v = yget(m, "value");
        if (!v) st = bad(MOPT_ERR_PARSE, m, where, "missing key 'value'");
    }
    ir_attr *a = NULL;
    if (!st) {
        a = ir_node_add_attr(node, name, type);
        if (!a) st = MOPT_ERR_OUT_OF_MEMORY;
    }
    mopt_free(name);
    if (st) return st;
    char sub[WHERE_CAP];
    bool list = type == IR_ATTR_FLOATS || type == IR_ATTR_INTS || type == IR_ATTR_STRINGS ||
                type == IR_ATTR_TENSORS || type == IR_ATTR_GRAPHS;
    if (list && v->kind != YN_SEQ)
        return bad(MOPT_ERR_PARSE, v, where, "a %s attribute needs a sequence", tn);
    size_t n = list ? v->n : 0;
    switch (type) {
    case IR_ATTR_FLOAT: return as_float(v, where, "value", &a->f);
    case IR_ATTR_INT: return as_int(v, where, "value", INT64_MIN, INT64_MAX, &a->i);
    case IR_ATTR_STRING: return as_str(v, where, "value", false, &a->s, &a->s_len);
    case IR_ATTR_TENSOR:
        if (is_null(v)) return MOPT_OK;
        return load_tensor(L, v, where, &a->t);
    case IR_ATTR_GRAPH:
        if (is_null(v)) return MOPT_OK;
        snprintf(sub, sizeof sub, "%.300s.value", where);
        return load_graph(L, v, sub, depth + 1, &a->g);
    case IR_ATTR_FLOATS:
        a->floats = mopt_malloc((n ? n : 1) * sizeof *a->floats);
        if (!a->floats) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        a->n = n;
        for (size_t i = 0; i < n; i++)
            if ((st = as_float(v->kids[i], where, "value", &a->floats[i]))) return st;
        return MOPT_OK;
    case IR_ATTR_INTS:
        a->ints = mopt_malloc((n ? n : 1) * sizeof *a->ints);
        if (!a->ints) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        a->n = n;
        for (size_t i = 0; i < n; i++)
            if ((st = as_int(v->kids[i], where, "value", INT64_MIN, INT64_MAX, &a->ints[i])))
                return st;
        return MOPT_OK;
    case IR_ATTR_STRINGS:
    case IR_ATTR_TENSORS:
    case IR_ATTR_GRAPHS: {
        void **arr = mopt_calloc(n ? n : 1, sizeof(void *));
        if (!arr) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        if (type == IR_ATTR_STRINGS) a->strings = (char **)arr;
        if (type == IR_ATTR_TENSORS) a->tensors = (ir_tensor **)arr;
        if (type == IR_ATTR_GRAPHS) a->graphs = (ir_graph **)arr;
        a->n = n;
        for (size_t i = 0; i < n && !st; i++) {
            snprintf(sub, sizeof sub, "%.300s.value[%zu]", where, i);
            if (type == IR_ATTR_STRINGS)
                st = as_str(v->kids[i], sub, "value", true, &a->strings[i], NULL);
            else if (is_null(v->kids[i]))
                continue;
            else if (type == IR_ATTR_TENSORS)
                st = load_tensor(L, v->kids[i], sub, &a->tensors[i]);
            else
                st = load_graph(L, v->kids[i], sub, depth + 1, &a->graphs[i]);
        }
        return st;
    }
    case IR_ATTR_TYPE_PROTO: return MOPT_OK;
    case IR_ATTR_TYPE_PROTOS: {
        int64_t c;
        st = as_int(v, where, "value", 0, INT32_MAX, &c);
        if (!st) a->n = (size_t)c;
        return st;
    }
    default: return MOPT_OK;
    }
}

/* A value index list (node inputs/outputs, graph inputs/outputs). */
static mopt_status index_list(const ynode *map, const char *key, const char *where, int64_t lo,
                              int32_t n_values, int32_t **out, int32_t *count) {
    const ynode *s;
    mopt_status st = need(map, key, YN_SEQ, where, &s);
    if (st) return st;
    if (s->n > INT32_MAX / 8) return bad(MOPT_ERR_INVALID_MODEL, s, where, "'%s' is too long", key);
    int32_t *arr = mopt_malloc((s->n ? s->n : 1) * sizeof *arr);
    if (!arr) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    for (size_t i = 0; i < s->n; i++) {
        int64_t v;
        st = as_int(s->kids[i], where, key, lo, (int64_t)n_values - 1, &v);
        if (st) {
            mopt_free(arr);
            return st;
        }
        arr[i] = (int32_t)v;
    }
    *out = arr;
    *count = (int32_t)s->n;
    return MOPT_OK;
}

static mopt_status load_value(loader *L, ir_graph *g, const ynode *m, int32_t i,
                              const char *where) {
    if (m->kind != YN_MAP) return bad(MOPT_ERR_PARSE, m, where, "expected a mapping");
    char *name = NULL;
    mopt_status st = key_str(m, "name", where, &name);
    if (st) return st;
    int32_t idx = ir_graph_value(g, name);
    if (idx < 0) {
        mopt_free(name);
        return MOPT_ERR_OUT_OF_MEMORY;
    }
    if (idx != i) {
        st = bad(MOPT_ERR_INVALID_MODEL, m, where, "value '%.200s' is listed twice", name);
        mopt_free(name);
        return st;
    }
    mopt_free(name);
    ir_value *v = g->values[i];
    char sub[WHERE_CAP];
    snprintf(sub, sizeof sub, "%.200s ('%.150s')", where, v->name);
    if ((st = key_dtype(m, sub, &v->dtype))) return st;
    const ynode *sh = yget(m, "shape");
    if (!sh) return bad(MOPT_ERR_PARSE, m, sub, "missing key 'shape'");
    if (is_null(sh)) {
        ir_shape_set_unknown(&v->shape);
    } else {
        if (sh->kind != YN_SEQ)
            return bad(MOPT_ERR_PARSE, sh, sub, "shape must be a sequence or null");
        if (sh->n > IR_MAX_RANK)
            return bad(MOPT_ERR_INVALID_MODEL, sh, sub, "rank %zu; at most %d is supported", sh->n,
                       IR_MAX_RANK);
        v->shape.rank = (int32_t)sh->n;
        for (size_t k = 0; k < sh->n; k++) {
            const ynode *d = sh->kids[k];
            v->shape.dims[k] = 0;
            v->shape.syms[k] = 0;
            if (d->kind == YN_SCALAR && !d->plain) { /* a symbol */
                int32_t id = 0;
                for (int32_t s = 0; s < g->n_symbols && !id; s++)
                    if (strlen(g->symbols[s]) == d->len && memcmp(g->symbols[s], d->s, d->len) == 0)
                        id = s + 1;
                if (!id)
                    return bad(MOPT_ERR_INVALID_MODEL, d, sub,
                               "shape names '%.100s', which is not in the graph's symbols", d->s);
                v->shape.syms[k] = id;
            } else {
                int64_t x;
                if ((st = as_int(d, sub, "shape", -1, INT64_MAX, &x))) return st;
                if (x < 0)
                    v->shape.syms[k] = -1;
                else
                    v->shape.dims[k] = x;
            }
        }
    }
    const ynode *fl;
    if ((st = need(m, "flags", YN_SEQ, sub, &fl))) return st;
    for (size_t k = 0; k < fl->n; k++) {
        const ynode *f = fl->kids[k];
        const char *s = f->kind == YN_SCALAR ? f->s : "";
        if (strcmp(s, "input") == 0)
            v->flags |= IR_VALUE_INPUT;
        else if (strcmp(s, "output") == 0)
            v->flags |= IR_VALUE_OUTPUT;
        else if (strcmp(s, "initializer") == 0)
            v->flags |= IR_VALUE_INITIALIZER;
        else
            return bad(MOPT_ERR_PARSE, f, sub, "unknown flag '%.40s'", s);
    }
    if ((v->flags & IR_VALUE_INPUT) && (v->flags & IR_VALUE_INITIALIZER))
        return bad(MOPT_ERR_INVALID_MODEL, fl, sub, "a value cannot be an input and a weight");
    if (!(v->flags & IR_VALUE_INITIALIZER)) {
        if (yget(m, "tensor"))
            return bad(MOPT_ERR_INVALID_MODEL, m, sub, "only weights refer to a tensor");
        return MOPT_OK;
    }
    const ld_tensor *t;
    if ((st = table_ref(L, m, sub, &t))) return st;
    if (t->dtype != v->dtype || v->shape.rank != t->rank || !ir_shape_is_concrete(&v->shape) ||
        memcmp(v->shape.dims, t->dims, (size_t)t->rank * sizeof t->dims[0]) != 0) {
        char a[IR_SHAPE_STR_CAP], b[IR_MAX_RANK * 24 + 4];
        dims_text(t->rank, t->dims, b, sizeof b);
        return bad(MOPT_ERR_INVALID_MODEL, m, sub,
                   "declared %s %s but its table entry '%.200s' is %s %s",
                   mopt_dtype_name(v->dtype), ir_shape_str(&v->shape, g, a, sizeof a), t->name,
                   mopt_dtype_name(t->dtype), b);
    }
    v->data = t->data;
    v->nbytes = (size_t)t->size;
    if (v->data) v->flags |= IR_VALUE_BORROWED;
    return MOPT_OK;
}

static mopt_status load_graph_into(loader *L, ir_graph *g, const ynode *m, const char *where,
                                   int depth) {
    char sub[WHERE_CAP];
    const ynode *n;
    mopt_status st;
    char *s = NULL;
    if ((st = key_str(m, "name", where, &s))) return st;
    mopt_free(g->name);
    g->name = s;
    if ((st = key_int(m, "ir_version", where, INT64_MIN, INT64_MAX, &g->ir_version))) return st;
    n = yget(m, "producer_name");
    if (n && !is_null(n) && (st = as_str(n, where, "producer_name", true, &g->producer_name, NULL)))
        return st;
    const ynode *ops;
    if ((st = need(m, "opsets", YN_SEQ, where, &ops))) return st;
    for (size_t i = 0; i < ops->n; i++) {
        snprintf(sub, sizeof sub, "%.300s.opsets[%zu]", where, i);
        const ynode *o = ops->kids[i];
        if (o->kind != YN_MAP) return bad(MOPT_ERR_PARSE, o, sub, "expected a mapping");
        int64_t ver;
        if ((st = key_str(o, "domain", sub, &s))) return st;
        st = key_int(o, "version", sub, 1, INT64_MAX, &ver);
        for (int32_t k = 0; !st && k < g->n_opsets; k++)
            if (strcmp(g->opsets[k].domain, s) == 0)
                st = bad(MOPT_ERR_INVALID_MODEL, o, sub, "domain '%.100s' is listed twice", s);
        if (!st && ir_graph_set_opset(g, s, ver))
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
        mopt_free(s);
        if (st) return st;
    }
    const ynode *syms;
    if ((st = need(m, "symbols", YN_SEQ, where, &syms))) return st;
    for (size_t i = 0; i < syms->n; i++) {
        snprintf(sub, sizeof sub, "%.300s.symbols[%zu]", where, i);
        if ((st = as_str(syms->kids[i], sub, "symbol", true, &s, NULL))) return st;
        int32_t id = s[0] ? ir_graph_symbol(g, s) : 0;
        if (id < 0)
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
        else if (id != (int32_t)i + 1)
            st = bad(MOPT_ERR_INVALID_MODEL, syms->kids[i], sub,
                     "symbol '%.100s' is empty or listed twice", s);
        mopt_free(s);
        if (st) return st;
    }
    const ynode *vals;
    if ((st = need(m, "values", YN_SEQ, where, &vals))) return st;
    if (vals->n > INT32_MAX / 8) return bad(MOPT_ERR_INVALID_MODEL, vals, where, "too many values");
    for (size_t i = 0; i < vals->n; i++) {
        snprintf(sub, sizeof sub, "%.300s.values[%zu]", where, i);
        if ((st = load_value(L, g, vals->kids[i], (int32_t)i, sub))) return st;
    }
    /* graph inputs and outputs agree with the flags */
    if ((st = index_list(m, "inputs", where, 0, g->n_values, &g->inputs, &g->n_inputs))) return st;
    if ((st = index_list(m, "outputs", where, 0, g->n_values, &g->outputs, &g->n_outputs)))
        return st;
    int32_t flagged_in = 0;
    for (int32_t i = 0; i < g->n_values; i++)
        flagged_in += !!(g->values[i]->flags & IR_VALUE_INPUT);
    for (int32_t i = 0; i < g->n_inputs; i++) {
        const ir_value *v = g->values[g->inputs[i]];
        bool dup = false;
        for (int32_t k = 0; k < i; k++)
            dup |= g->inputs[k] == g->inputs[i];
        if (dup || !(v->flags & IR_VALUE_INPUT))
            return bad(MOPT_ERR_INVALID_MODEL, yget(m, "inputs"), where, "input '%.200s' is %s",
                       v->name, dup ? "listed twice" : "not flagged as an input");
    }
    if (flagged_in != g->n_inputs)
        return bad(MOPT_ERR_INVALID_MODEL, yget(m, "inputs"), where,
                   "%d values are flagged as inputs but %d are listed", (int)flagged_in,
                   (int)g->n_inputs);
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (!(g->values[g->outputs[i]]->flags & IR_VALUE_OUTPUT))
            return bad(MOPT_ERR_INVALID_MODEL, yget(m, "outputs"), where,
                       "output '%.200s' is not flagged as an output",
                       g->values[g->outputs[i]]->name);
    for (int32_t i = 0; i < g->n_values; i++) {
        if (!(g->values[i]->flags & IR_VALUE_OUTPUT)) continue;
        bool listed = false;
        for (int32_t k = 0; k < g->n_outputs && !listed; k++)
            listed = g->outputs[k] == i;
        if (!listed)
            return bad(MOPT_ERR_INVALID_MODEL, yget(m, "outputs"), where,
                       "value '%.200s' is flagged as an output but not listed", g->values[i]->name);
    }
    const ynode *nodes;
    if ((st = need(m, "nodes", YN_SEQ, where, &nodes))) return st;
    if (nodes->n > INT32_MAX / 8)
        return bad(MOPT_ERR_INVALID_MODEL, nodes, where, "too many nodes");
    for (size_t i = 0; i < nodes->n; i++) {
        const ynode *nm = nodes->kids[i];
        snprintf(sub, sizeof sub, "%.300s.nodes[%zu]", where, i);
        if (nm->kind != YN_MAP) return bad(MOPT_ERR_PARSE, nm, sub, "expected a mapping");
        char *name = NULL, *op = NULL, *domain = NULL;
        int32_t *ins = NULL, *outs = NULL, n_in = 0, n_out = 0;
        st = key_str(nm, "name", sub, &name);
        if (!st) st = key_str(nm, "op_type", sub, &op);
        if (!st && !op[0]) st = bad(MOPT_ERR_INVALID_MODEL, nm, sub, "empty op_type");
        if (!st) st = key_str(nm, "domain", sub, &domain);
        if (!st) st = index_list(nm, "inputs", sub, -1, g->n_values, &ins, &n_in);
        if (!st) st = index_list(nm, "outputs", sub, -1, g->n_values, &outs, &n_out);
        ir_node *node = NULL;
        if (!st) {
            node = ir_graph_add_node(g, op, domain, name, n_in, n_out);
            if (!node) st = MOPT_ERR_OUT_OF_MEMORY;
        }
        if (!st) {
            memcpy(node->inputs, ins, (size_t)n_in * sizeof *ins);
            memcpy(node->outputs, outs, (size_t)n_out * sizeof *outs);
        }
        mopt_free(name);
        mopt_free(op);
        mopt_free(domain);
        mopt_free(ins);
        mopt_free(outs);
        if (st) return st;
        snprintf(sub, sizeof sub, "%.250s.nodes[%zu] ('%.60s', %.40s)", where, i, node->name,
                 node->op_type);
        const ynode *attrs;
        if ((st = need(nm, "attributes", YN_SEQ, sub, &attrs))) return st;
        for (size_t k = 0; k < attrs->n; k++) {
            char asub[WHERE_CAP + 32];
            snprintf(asub, sizeof asub, "%s.attributes[%zu]", sub, k);
            if ((st = load_attr(L, node, attrs->kids[k], asub, depth))) return st;
        }
    }
    return MOPT_OK;
}

static mopt_status load_graph(loader *L, const ynode *m, const char *where, int depth,
                              ir_graph **out) {
    *out = NULL;
    if (depth > MFMT_MAX_GRAPH_DEPTH)
        return bad(MOPT_ERR_INVALID_MODEL, m, where, "subgraphs nest more than %d levels",
                   MFMT_MAX_GRAPH_DEPTH);
    if (m->kind != YN_MAP) return bad(MOPT_ERR_PARSE, m, where, "expected a graph mapping");
    ir_graph *g = ir_graph_create();
    if (!g) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    mopt_status st = load_graph_into(L, g, m, where, depth);
    if (st) {
        ir_graph_destroy(g);
        return st;
    }
    *out = g;
    return MOPT_OK;
}

static mopt_status load_meta(const ynode *root, mfmt_meta *meta) {
    const char *w = "top level";
    int64_t v;
    mopt_status st = key_int(root, "format_version", w, INT64_MIN, INT64_MAX, &v);
    if (st) return st;
    if (v != MFMT_VERSION)
        return bad(MOPT_ERR_PARSE, yget(root, "format_version"), w,
                   "format_version %" PRId64 " is not the %d this libmopt reads", v, MFMT_VERSION);
    if ((st = key_buf(root, "producer", w, meta->producer, sizeof meta->producer))) return st;
    char alg[16];
    if ((st = key_buf(root, "checksum_algorithm", w, alg, sizeof alg))) return st;
    if (strcmp(alg, "mh64") != 0)
        return bad(MOPT_ERR_PARSE, yget(root, "checksum_algorithm"), w,
                   "unknown checksum algorithm '%s'", alg);
    const ynode *src, *cn;
    if ((st = need(root, "source", YN_MAP, w, &src))) return st;
    if ((st = need(src, "checksum", YN_SCALAR, "source", &cn))) return st;
    if ((st = as_hex64(cn, "source", "checksum", &meta->source_checksum))) return st;
    if ((st = key_int(src, "bytes", "source", 0, INT64_MAX, &v))) return st;
    meta->source_bytes = (uint64_t)v;
    if ((st = key_int(root, "opt_level", w, 0, 3, &v))) return st;
    meta->opt_level = (int)v;
    if ((st = key_buf(root, "precision", w, meta->precision, sizeof meta->precision))) return st;
    if (strcmp(meta->precision, "fp32") != 0 && strcmp(meta->precision, "bf16") != 0 &&
        strcmp(meta->precision, "int8") != 0)
        return bad(MOPT_ERR_PARSE, yget(root, "precision"), w, "unknown precision '%s'",
                   meta->precision);
    const ynode *ps, *tot;
    if ((st = need(root, "passes", YN_SEQ, w, &ps))) return st;
    if (ps->n > PASS_REPORT_CAP)
        return bad(MOPT_ERR_INVALID_MODEL, ps, w, "%zu passes; at most %d are recorded", ps->n,
                   PASS_REPORT_CAP);
    pass_report *r = &meta->report;
    for (size_t i = 0; i < ps->n; i++) {
        char where[64];
        snprintf(where, sizeof where, "passes[%zu]", i);
        const ynode *p = ps->kids[i];
        if (p->kind != YN_MAP) return bad(MOPT_ERR_PARSE, p, where, "expected a mapping");
        pass_report_entry *e = &r->entries[i];
        if ((st = key_buf(p, "name", where, meta->report_names[i], MFMT_NAME_CAP))) return st;
        e->name = meta->report_names[i];
        if ((st = key_ms(p, where, &e->ms))) return st;
        if ((st = key_int(p, "nodes_before", where, 0, INT32_MAX, &v))) return st;
        e->nodes_before = (int32_t)v;
        if ((st = key_int(p, "nodes_after", where, 0, INT32_MAX, &v))) return st;
        e->nodes_after = (int32_t)v;
        if ((st = key_int(p, "rewrites", where, 0, INT32_MAX, &v))) return st;
        e->rewrites = (int32_t)v;
        if ((st = key_buf(p, "note", where, e->note, sizeof e->note))) return st;
        r->n = (int)i + 1;
    }
    if ((st = need(root, "pass_totals", YN_MAP, w, &tot))) return st;
    if ((st = key_int(tot, "nodes_before", "pass_totals", 0, INT32_MAX, &v))) return st;
    r->nodes_before = (int32_t)v;
    if ((st = key_int(tot, "nodes_after", "pass_totals", 0, INT32_MAX, &v))) return st;
    r->nodes_after = (int32_t)v;
    return key_ms(tot, "pass_totals", &r->total_ms);
}

mopt_status mfmt_load(void *base, size_t size, void (*release)(void *base, size_t size),
                      bool verify_weights, ir_graph **out, mfmt_meta *meta) {
    *out = NULL;
    memset(meta, 0, sizeof *meta);
    const uint8_t *b = base;
    mopt_status st = MOPT_OK;
    loader L = {.base = base, .size = size, .verify = verify_weights};
    ynode *root = NULL;
    yarena arena = {0};
    ir_graph *g = NULL;
    size_t line_end = 0, term = 0;
    if (!mfmt_detect(base, size)) {
        st = mopt_fail(MOPT_ERR_PARSE, "not a .mopt file: it does not start with '%s'", k_magic);
        goto done;
    }
    /* magic line: "%MOPT-<version>\n" */
    {
        int64_t ver = 0;
        size_t i = MAGIC_LEN;
        while (i < size && i < MAGIC_LEN + 9 && b[i] >= '0' && b[i] <= '9')
            ver = ver * 10 + (b[i++] - '0');
        if (i == MAGIC_LEN || i >= size || b[i] != '\n') {
            st = mopt_fail(MOPT_ERR_PARSE,
                           "malformed .mopt magic line: expected '%s<version>' and a newline",
                           k_magic);
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
        const uint8_t *t = memmem(b + line_end - 1, limit - (line_end - 1), k_end, END_LEN);
        if (!t) {
            st = mopt_fail(MOPT_ERR_PARSE,
                           "truncated .mopt file: no '%%MOPT-END' line ends the header "
                           "(%zu bytes read)",
                           size);
            goto done;
        }
        term = (size_t)(t - b) + 1;
        size_t need_len = term + END_LEN - 1 + 16 + 1;
        if (size < need_len) {
            st = mopt_fail(MOPT_ERR_PARSE, "truncated .mopt file: it ends inside the '%%MOPT-END' "
                                           "line");
            goto done;
        }
        uint8_t hb[8];
        const char *hx = (const char *)b + term + END_LEN - 1;
        if (!hex_decode(hx, 16, hb, 8) || hx[16] != '\n') {
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
    st = yaml_tree(&arena, b + line_end, term - line_end, &root);
    if (st) goto done;
    if (root->kind != YN_MAP) {
        st = bad(MOPT_ERR_PARSE, root, "top level", "expected a mapping");
        goto done;
    }
    st = load_meta(root, meta);
    if (!st) st = load_table(&L, root);
    const ynode *gn = NULL;
    if (!st) st = need(root, "graph", YN_MAP, "top level", &gn);
    if (!st) st = load_graph(&L, gn, "graph", 0, &g);
done:
    yarena_free(&arena);
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

/* ==== files ================================================================ */

mopt_status mfmt_map_file(const char *path, void **base, size_t *size) {
    *base = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return MOPT_OK; /* the ordinary reader reports it */
    char head[MAGIC_LEN];
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < (off_t)MAGIC_LEN ||
        pread(fd, head, MAGIC_LEN, 0) != (ssize_t)MAGIC_LEN || !mfmt_detect(head, MAGIC_LEN)) {
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
