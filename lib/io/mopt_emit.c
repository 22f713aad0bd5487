/*
 * mopt_emit.c — the writer's YAML vocabulary: libyaml events (maps,
 * sequences, integers, exact floats, strings that survive any bytes) emitted
 * into a memory buffer. Knows nothing of graphs or of the header's keys.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/mopt_spelling.h"
#include "io/mopt_write.h"

bool mfmt_buf_add(mfmt_buf *b, const void *d, size_t n) {
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

int mfmt_emit_write_handler(void *data, unsigned char *buffer, size_t size) {
    return mfmt_buf_add(data, buffer, size) ? 1 : 0;
}

void mfmt_emit_event(mfmt_emitter *e, yaml_event_t *ev, int ok) {
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

/* The start (or, with end, the end) of a mapping or a sequence. */
static void emit_collection(mfmt_emitter *e, bool seq, bool end, bool flow) {
    yaml_event_t ev;
    int ok;
    if (end)
        ok = seq ? yaml_sequence_end_event_initialize(&ev) : yaml_mapping_end_event_initialize(&ev);
    else if (seq)
        ok = yaml_sequence_start_event_initialize(
            &ev, NULL, NULL, 1, flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
    else
        ok = yaml_mapping_start_event_initialize(
            &ev, NULL, NULL, 1, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
    mfmt_emit_event(e, &ev, ok);
}
void mfmt_emit_map(mfmt_emitter *e, bool flow) { emit_collection(e, false, false, flow); }
void mfmt_emit_map_end(mfmt_emitter *e) { emit_collection(e, false, true, false); }
void mfmt_emit_seq(mfmt_emitter *e, bool flow) { emit_collection(e, true, false, flow); }
void mfmt_emit_seq_end(mfmt_emitter *e) { emit_collection(e, true, true, false); }
void mfmt_emit_plain(mfmt_emitter *e, const char *s) {
    yaml_event_t ev;
    mfmt_emit_event(e, &ev,
                    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s),
                                                 1, 1, YAML_PLAIN_SCALAR_STYLE));
}
void mfmt_emit_int(mfmt_emitter *e, int64_t v) {
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, v);
    mfmt_emit_plain(e, b);
}
void mfmt_emit_hex64(mfmt_emitter *e, uint64_t v) {
    char b[32];
    snprintf(b, sizeof b, "%016" PRIx64, v);
    yaml_event_t ev;
    mfmt_emit_event(e, &ev,
                    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)b, 16, 0, 1,
                                                 YAML_DOUBLE_QUOTED_SCALAR_STYLE));
}
void mfmt_emit_float(mfmt_emitter *e, float f) {
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
    mfmt_emit_plain(e, b);
}
void mfmt_emit_ms(mfmt_emitter *e, double ms) {
    char b[48];
    snprintf(b, sizeof b, "%.3f", isfinite(ms) && ms >= 0 && ms < 1e12 ? ms : 0.0);
    mfmt_emit_plain(e, b);
}
void mfmt_emit_str_n(mfmt_emitter *e, const char *s, size_t len) {
    if (e->failed || e->st) return;
    if (len > INT32_MAX / 2) {
        e->st =
            mopt_fail(MOPT_ERR_LIMIT, "a string of %zu bytes is too long for a .mopt header", len);
        return;
    }
    yaml_event_t ev;
    if (yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)(s ? s : ""), (int)len, 0, 1,
                                     YAML_DOUBLE_QUOTED_SCALAR_STYLE)) {
        mfmt_emit_event(e, &ev, 1);
        return;
    }
    char *hex = mopt_malloc(len * 2 + 1);
    if (!hex) {
        e->st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory writing a .mopt header");
        return;
    }
    mfmt_hex_encode((const uint8_t *)s, len, hex);
    mfmt_emit_event(e, &ev,
                    yaml_scalar_event_initialize(&ev, NULL, (yaml_char_t *)"!hex",
                                                 (yaml_char_t *)hex, (int)(len * 2), 0, 0,
                                                 YAML_DOUBLE_QUOTED_SCALAR_STYLE));
    mopt_free(hex);
}
void mfmt_emit_str(mfmt_emitter *e, const char *s) { mfmt_emit_str_n(e, s, s ? strlen(s) : 0); }
void mfmt_emit_key_int(mfmt_emitter *e, const char *k, int64_t v) {
    mfmt_emit_plain(e, k);
    mfmt_emit_int(e, v);
}
void mfmt_emit_key_str(mfmt_emitter *e, const char *k, const char *v) {
    mfmt_emit_plain(e, k);
    mfmt_emit_str(e, v);
}

void mfmt_emit_dims(mfmt_emitter *e, int32_t rank, const int64_t *dims) {
    mfmt_emit_seq(e, true);
    for (int32_t i = 0; i < rank; i++)
        mfmt_emit_int(e, dims[i]);
    mfmt_emit_seq_end(e);
}
