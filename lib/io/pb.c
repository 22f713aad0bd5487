/*
 * pb.c — protobuf wire-format decoding: varints, fixed32/64, length-delimited
 * fields and packed repeated scalars, each bounds-checked against the bytes
 * that remain. Never trusts a length or a count; never reads past `end`.
 */
#include "io/pb.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

void pb_init(pb_reader *r, const uint8_t *base, size_t len, const char *msg,
             const char *const *names, size_t n_names) {
    r->base = base;
    r->pos = 0;
    r->end = len;
    r->msg = msg;
    r->names = names;
    r->n_names = n_names;
}

void pb_sub(const pb_reader *r, const pb_field *f, const char *msg, const char *const *names,
            size_t n_names, pb_reader *sub) {
    sub->base = r->base;
    sub->pos = f->data_offset;
    sub->end = f->data_offset + f->len;
    sub->msg = msg;
    sub->names = names;
    sub->n_names = n_names;
}

bool pb_more(const pb_reader *r) { return r->pos < r->end; }

int pb_decode_varint(const uint8_t *p, size_t avail, uint64_t *v) {
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        if ((size_t)i >= avail) return 0;
        uint8_t b = p[i];
        if (i == 9 && b > 1) return -1; /* bit 64 and beyond, or an 11th byte */
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    return -1;
}

const char *pb_field_name(const pb_reader *r, uint32_t num, char *buf, size_t cap) {
    if (r->names && num < r->n_names && r->names[num])
        snprintf(buf, cap, "%s.%s", r->msg, r->names[num]);
    else
        snprintf(buf, cap, "%s.#%u", r->msg, (unsigned)num);
    return buf;
}

static const char *wire_name(unsigned w) {
    switch (w) {
    case PB_VARINT: return "varint";
    case PB_I64: return "fixed64";
    case PB_LEN: return "length-delimited";
    case 3: return "group start";
    case 4: return "group end";
    case PB_I32: return "fixed32";
    default: return "invalid";
    }
}

mopt_status pb_error(const pb_reader *r, const pb_field *f, const char *reason) {
    char nb[96];
    return mopt_fail(MOPT_ERR_PARSE, "%s in field %u (%s) at offset %zu", reason, (unsigned)f->num,
                     pb_field_name(r, f->num, nb, sizeof nb), f->offset);
}

mopt_status pb_next(pb_reader *r, pb_field *f) {
    char nb[96];
    memset(f, 0, sizeof *f);
    f->offset = r->pos;
    uint64_t tag;
    int used = pb_decode_varint(r->base + r->pos, r->end - r->pos, &tag);
    if (used <= 0)
        return mopt_fail(MOPT_ERR_PARSE, "%s field tag in %s at offset %zu",
                         used == 0 ? "truncated" : "overlong or overflowing varint", r->msg,
                         r->pos);
    if ((tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
        return mopt_fail(MOPT_ERR_PARSE, "invalid field number %llu in %s at offset %zu",
                         (unsigned long long)(tag >> 3), r->msg, r->pos);
    f->num = (uint32_t)(tag >> 3);
    unsigned w = (unsigned)(tag & 7);
    size_t p = r->pos + (size_t)used;
    size_t avail = r->end - p;
    switch (w) {
    case PB_VARINT:
        used = pb_decode_varint(r->base + p, avail, &f->u);
        if (used <= 0)
            return mopt_fail(MOPT_ERR_PARSE, "%s varint field %u (%s) at offset %zu",
                             used == 0 ? "truncated" : "overlong or overflowing", f->num,
                             pb_field_name(r, f->num, nb, sizeof nb), f->offset);
        p += (size_t)used;
        break;
    case PB_I64:
    case PB_I32: {
        size_t n = w == PB_I64 ? 8 : 4;
        if (avail < n)
            return mopt_fail(MOPT_ERR_PARSE, "truncated %s field %u (%s) at offset %zu",
                             wire_name(w), f->num, pb_field_name(r, f->num, nb, sizeof nb),
                             f->offset);
        uint64_t x = 0;
        for (size_t i = 0; i < n; i++)
            x |= (uint64_t)r->base[p + i] << (8 * i);
        f->u = x;
        p += n;
        break;
    }
    case PB_LEN: {
        uint64_t len;
        used = pb_decode_varint(r->base + p, avail, &len);
        if (used <= 0)
            return mopt_fail(MOPT_ERR_PARSE,
                             "%s length of length-delimited field %u (%s) at offset %zu",
                             used == 0 ? "truncated" : "overlong or overflowing", f->num,
                             pb_field_name(r, f->num, nb, sizeof nb), f->offset);
        p += (size_t)used;
        if (len > (uint64_t)(r->end - p))
            return mopt_fail(MOPT_ERR_PARSE,
                             "truncated length-delimited field %u (%s) at offset %zu: length "
                             "%llu but only %zu bytes remain",
                             f->num, pb_field_name(r, f->num, nb, sizeof nb), f->offset,
                             (unsigned long long)len, r->end - p);
        f->data = r->base + p;
        f->data_offset = p;
        f->len = (size_t)len;
        p += (size_t)len;
        break;
    }
    default:
        return mopt_fail(MOPT_ERR_PARSE,
                         "field %u (%s) at offset %zu has wire type %u (%s), which is not "
                         "supported",
                         f->num, pb_field_name(r, f->num, nb, sizeof nb), f->offset, w,
                         wire_name(w));
    }
    f->wire = (pb_wire)w;
    r->pos = p;
    return MOPT_OK;
}

mopt_status pb_expect(const pb_reader *r, const pb_field *f, pb_wire wire) {
    if (f->wire == wire) return MOPT_OK;
    char nb[96];
    return mopt_fail(MOPT_ERR_PARSE, "field %u (%s) at offset %zu has wire type %s; expected %s",
                     f->num, pb_field_name(r, f->num, nb, sizeof nb), f->offset, wire_name(f->wire),
                     wire_name(wire));
}

static mopt_status vec_reserve(const pb_reader *r, const pb_field *f, pb_vec *v, size_t esize,
                               size_t more) {
    if (v->esize == 0) v->esize = esize;
    if (v->esize != esize) return pb_error(r, f, "mixed element encodings");
    if (more > SIZE_MAX - v->n) return pb_error(r, f, "too many elements");
    size_t need = v->n + more;
    if (need <= v->cap) return MOPT_OK;
    size_t cap = v->cap ? v->cap : 8;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    size_t bytes;
    if (!mopt_mul_overflow(cap, esize, &bytes)) {
        cap = need;
        if (!mopt_mul_overflow(cap, esize, &bytes)) return pb_error(r, f, "too many elements");
    }
    void *nd = mopt_realloc(v->data, bytes);
    if (!nd) {
        char nb[96];
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY,
                         "out of memory reading %zu elements of field %u (%s)", need, f->num,
                         pb_field_name(r, f->num, nb, sizeof nb));
    }
    v->data = nd;
    v->cap = cap;
    return MOPT_OK;
}

static uint64_t load_le(const uint8_t *p, size_t n) {
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        x |= (uint64_t)p[i] << (8 * i);
    return x;
}

mopt_status pb_repeated(const pb_reader *r, const pb_field *f, pb_wire elem, pb_vec *v) {
    size_t esize = elem == PB_I32 ? 4 : 8;
    mopt_status st;
    if (f->wire == elem) { /* one unpacked element */
        if ((st = vec_reserve(r, f, v, esize, 1))) return st;
        if (esize == 4)
            ((uint32_t *)v->data)[v->n++] = (uint32_t)f->u;
        else
            ((uint64_t *)v->data)[v->n++] = f->u;
        return MOPT_OK;
    }
    if (f->wire != PB_LEN) return pb_expect(r, f, elem);
    if (elem == PB_I32 || elem == PB_I64) {
        if (f->len % esize)
            return pb_error(r, f,
                            "packed fixed-size data length not a multiple of the element size");
        size_t count = f->len / esize;
        if ((st = vec_reserve(r, f, v, esize, count))) return st;
        for (size_t i = 0; i < count; i++) {
            uint64_t x = load_le(f->data + i * esize, esize);
            if (esize == 4)
                ((uint32_t *)v->data)[v->n++] = (uint32_t)x;
            else
                ((uint64_t *)v->data)[v->n++] = x;
        }
        return MOPT_OK;
    }
    /* packed varints: count the terminating bytes first, then decode */
    size_t count = 0;
    for (size_t i = 0; i < f->len; i++)
        count += !(f->data[i] & 0x80);
    if ((st = vec_reserve(r, f, v, 8, count))) return st;
    size_t p = 0;
    while (p < f->len) {
        uint64_t x;
        int used = pb_decode_varint(f->data + p, f->len - p, &x);
        if (used <= 0) {
            char nb[96];
            return mopt_fail(MOPT_ERR_PARSE, "%s varint in packed field %u (%s) at offset %zu",
                             used == 0 ? "truncated" : "overlong or overflowing", f->num,
                             pb_field_name(r, f->num, nb, sizeof nb), f->data_offset + p);
        }
        ((uint64_t *)v->data)[v->n++] = x;
        p += (size_t)used;
    }
    return MOPT_OK;
}

void pb_vec_free(pb_vec *v) {
    mopt_free(v->data);
    memset(v, 0, sizeof *v);
}

/* f is a length-delimited field, without a NUL byte unless allow_nul. */
static mopt_status string_field(const pb_reader *r, const pb_field *f, bool allow_nul) {
    mopt_status st = pb_expect(r, f, PB_LEN);
    if (st) return st;
    if (!allow_nul && f->len && memchr(f->data, 0, f->len))
        return pb_error(r, f, "string contains a NUL byte");
    return MOPT_OK;
}

mopt_status pb_string(const pb_reader *r, const pb_field *f, bool allow_nul, char **out,
                      size_t *len_out) {
    *out = NULL;
    mopt_status st = string_field(r, f, allow_nul);
    if (st) return st;
    char *s = mopt_strndup((const char *)(f->data ? f->data : (const uint8_t *)""), f->len);
    if (!s) {
        char nb[96];
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory copying field %u (%s)", f->num,
                         pb_field_name(r, f->num, nb, sizeof nb));
    }
    *out = s;
    if (len_out) *len_out = f->len;
    return MOPT_OK;
}

mopt_status pb_str_read(const pb_reader *r, const pb_field *f, pb_str *o) {
    pb_str_free(o);
    if (f->len >= sizeof o->buf) {
        mopt_status st = pb_string(r, f, false, &o->heap, NULL);
        if (!st) o->s = o->heap;
        return st;
    }
    mopt_status st = string_field(r, f, false);
    if (st) return st;
    if (f->len) memcpy(o->buf, f->data, f->len);
    o->buf[f->len] = 0;
    o->s = o->buf;
    return MOPT_OK;
}

void pb_str_free(pb_str *o) {
    mopt_free(o->heap);
    o->heap = NULL;
    o->s = NULL;
}
