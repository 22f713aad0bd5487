/*
 * onnx_import.c — ONNX ModelProto / TensorProto files into the IR, on top of
 * the project's wire-format decoder (pb.h). Every length, count and offset is
 * checked; nothing is allocated from a declared count, only from bytes that
 * are actually present; subgraph nesting is bounded. External-data files are
 * read only from inside the model's folder.
 *
 * It does not check the graph (ir_graph_check) nor resolve operators; those
 * belong to the runtime.
 */
#include "io/onnx_import.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/pb.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "onnx_import.c copies raw_data as is: little-endian hosts only"
#endif

#define ONNX_MAX_DEPTH 32 /* subgraph nesting levels */
/* Subgraphs in a whole model (every If/Loop/Scan branch, at every level, and
 * any graph an unknown attribute holds): each costs a few KB once parsed, so
 * a file of tiny graphs cannot make the import take 100x its size. */
#define ONNX_MAX_SUBGRAPHS 4096
/* Tensors or strings in one attribute list (each is a separate object). */
#define ONNX_MAX_ATTR_OBJECTS ((size_t)1 << 20)

#define NAMES(a) a, sizeof a / sizeof a[0]

static const char *const k_model_fields[] = {
    [1] = "ir_version",     [2] = "producer_name", [3] = "producer_version",
    [4] = "domain",         [5] = "model_version", [6] = "doc_string",
    [7] = "graph",          [8] = "opset_import",  [14] = "metadata_props",
    [20] = "training_info", [25] = "functions",    [26] = "configuration"};
static const char *const k_opset_fields[] = {[1] = "domain", [2] = "version"};
static const char *const k_graph_fields[] = {[1] = "node",
                                             [2] = "name",
                                             [5] = "initializer",
                                             [10] = "doc_string",
                                             [11] = "input",
                                             [12] = "output",
                                             [13] = "value_info",
                                             [14] = "quantization_annotation",
                                             [15] = "sparse_initializer",
                                             [16] = "metadata_props"};
static const char *const k_node_fields[] = {[1] = "input",          [2] = "output",
                                            [3] = "name",           [4] = "op_type",
                                            [5] = "attribute",      [6] = "doc_string",
                                            [7] = "domain",         [8] = "overload",
                                            [9] = "metadata_props", [10] = "device_configurations"};
static const char *const k_attr_fields[] = {[1] = "name",
                                            [2] = "f",
                                            [3] = "i",
                                            [4] = "s",
                                            [5] = "t",
                                            [6] = "g",
                                            [7] = "floats",
                                            [8] = "ints",
                                            [9] = "strings",
                                            [10] = "tensors",
                                            [11] = "graphs",
                                            [13] = "doc_string",
                                            [14] = "tp",
                                            [15] = "type_protos",
                                            [20] = "type",
                                            [21] = "ref_attr_name",
                                            [22] = "sparse_tensor",
                                            [23] = "sparse_tensors"};
static const char *const k_tensor_fields[] = {
    [1] = "dims",           [2] = "data_type",      [3] = "segment",        [4] = "float_data",
    [5] = "int32_data",     [6] = "string_data",    [7] = "int64_data",     [8] = "name",
    [9] = "raw_data",       [10] = "double_data",   [11] = "uint64_data",   [12] = "doc_string",
    [13] = "external_data", [14] = "data_location", [16] = "metadata_props"};
static const char *const k_entry_fields[] = {[1] = "key", [2] = "value"};
static const char *const k_vi_fields[] = {
    [1] = "name", [2] = "type", [3] = "doc_string", [4] = "metadata_props"};
static const char *const k_type_fields[] = {
    [1] = "tensor_type", [4] = "sequence_type",      [5] = "map_type",     [6] = "denotation",
    [7] = "opaque_type", [8] = "sparse_tensor_type", [9] = "optional_type"};
static const char *const k_ttype_fields[] = {[1] = "elem_type", [2] = "shape"};
static const char *const k_shape_fields[] = {[1] = "dim"};
static const char *const k_dim_fields[] = {
    [1] = "dim_value", [2] = "dim_param", [3] = "denotation"};

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        mopt_status try_st_ = (expr);                                                              \
        if (try_st_) return try_st_;                                                               \
    } while (0)

typedef struct onnx_ctx {
    const char *base_dir; /* NULL: external data refused */
    char base_real[PATH_MAX];
    bool have_real;
    size_t n_subgraphs; /* parsed so far (ONNX_MAX_SUBGRAPHS) */
} onnx_ctx;

static mopt_status oom(const char *what) {
    return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading %s", what);
}

/* ---- element types ------------------------------------------------------- */

static const char *onnx_type_name(int64_t t) {
    static const char *const names[] = {
        "UNDEFINED",      "FLOAT",    "UINT8",        "INT8",           "UINT16",
        "INT16",          "INT32",    "INT64",        "STRING",         "BOOL",
        "FLOAT16",        "DOUBLE",   "UINT32",       "UINT64",         "COMPLEX64",
        "COMPLEX128",     "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
        "FLOAT8E5M2FNUZ", "UINT4",    "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0",
        "UINT2",          "INT2"};
    if (t >= 0 && t < (int64_t)(sizeof names / sizeof names[0])) return names[t];
    return "unknown";
}

/* Maps an ONNX TensorProto.DataType to a mopt dtype (same numbers); false for
 * types libmopt does not represent (complex, float6, unknown). */
static bool onnx_dtype(int64_t t, mopt_dtype *out) {
    switch (t) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
    case 8:
    case 9:
    case 10:
    case 11:
    case 12:
    case 13:
    case 16:
    case 17: /* the float8 types */
    case 18:
    case 19:
    case 20:
    case 21: /* UINT4, INT4, FLOAT4E2M1, UINT2, INT2: unpacked to one byte */
    case 22: /* per element by parse_tensor */
    case 23:
    case 24: /* FLOAT8E8M0 */
    case 25:
    case 26: *out = (mopt_dtype)t; return true;
    default: return false;
    }
}

static mopt_status read_int(const pb_reader *r, const pb_field *f, int64_t *out) {
    TRY(pb_expect(r, f, PB_VARINT));
    *out = (int64_t)f->u;
    return MOPT_OK;
}

/* An int32/enum field: the varint holds a sign-extended 64-bit value. */
static mopt_status read_int32(const pb_reader *r, const pb_field *f, int32_t *out) {
    int64_t v;
    TRY(read_int(r, f, &v));
    if (v < INT32_MIN || v > INT32_MAX) return pb_error(r, f, "int32 value out of range");
    *out = (int32_t)v;
    return MOPT_OK;
}

static mopt_status replace_string(const pb_reader *r, const pb_field *f, char **slot) {
    char *s;
    TRY(pb_string(r, f, false, &s, NULL));
    mopt_free(*slot);
    *slot = s;
    return MOPT_OK;
}

static void dims_str(int32_t rank, const int64_t *dims, char *buf, size_t cap) {
    size_t len = 0;
    len += (size_t)snprintf(buf, cap, "[");
    for (int32_t i = 0; i < rank && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, i ? "," : "", dims[i]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
}

/* ---- external data ------------------------------------------------------- */

static mopt_status parse_decimal(const char *what, const char *key, const char *s, uint64_t *out) {
    uint64_t v = 0;
    if (!*s) return mopt_fail(MOPT_ERR_INVALID_MODEL, "%s: external data %s is empty", what, key);
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10)
            return mopt_fail(MOPT_ERR_INVALID_MODEL,
                             "%s: external data %s '%s' is not a valid byte count", what, key, s);
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = v;
    return MOPT_OK;
}

/* Checks the location string: relative, no ".." component. */
static mopt_status check_location(const char *what, const char *loc) {
    if (!*loc)
        return mopt_fail(MOPT_ERR_INVALID_MODEL, "%s: external data location is empty", what);
    if (loc[0] == '/' || loc[0] == '\\')
        return mopt_fail(MOPT_ERR_INVALID_MODEL,
                         "%s: external data location '%s' is an absolute path; it must be "
                         "relative to the model's folder",
                         what, loc);
    const char *p = loc;
    while (*p) {
        const char *e = p;
        while (*e && *e != '/' && *e != '\\')
            e++;
        if (e - p == 2 && p[0] == '.' && p[1] == '.')
            return mopt_fail(MOPT_ERR_INVALID_MODEL,
                             "%s: external data location '%s' contains '..'; it must stay "
                             "inside the model's folder",
                             what, loc);
        p = *e ? e + 1 : e;
    }
    return MOPT_OK;
}

/* Reads nbytes of external data into a new aligned buffer (*dst), which is
 * allocated only once the file proved to hold that many bytes. */
static mopt_status read_external(onnx_ctx *ctx, const char *what, const char *loc,
                                 const char *off_s, const char *len_s, size_t nbytes, void **dst) {
    if (!ctx->base_dir)
        return mopt_fail(MOPT_ERR_IO,
                         "%s: its data is in the external file '%s', but the model was not "
                         "loaded from a file and no external_data_dir was given",
                         what, loc);
    TRY(check_location(what, loc));
    uint64_t off = 0, len = nbytes;
    if (off_s) TRY(parse_decimal(what, "offset", off_s, &off));
    if (len_s) {
        TRY(parse_decimal(what, "length", len_s, &len));
        if (len != nbytes)
            return mopt_fail(MOPT_ERR_INVALID_MODEL,
                             "%s: external data length %" PRIu64 " does not match the %zu bytes "
                             "its dims and type need",
                             what, len, nbytes);
    }
    if (!ctx->have_real) {
        if (!realpath(ctx->base_dir, ctx->base_real))
            return mopt_fail(MOPT_ERR_IO, "%s: cannot resolve the model folder '%s': %s", what,
                             ctx->base_dir, strerror(errno));
        ctx->have_real = true;
    }
    char path[PATH_MAX], real[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s", ctx->base_dir, loc);
    if (n < 0 || (size_t)n >= sizeof path)
        return mopt_fail(MOPT_ERR_LIMIT, "%s: external data path '%s' is too long", what, loc);
    if (!realpath(path, real))
        return mopt_fail(MOPT_ERR_IO, "%s: cannot open external data file '%s': %s", what, path,
                         strerror(errno));
    size_t bl = strlen(ctx->base_real);
    bool inside = strncmp(real, ctx->base_real, bl) == 0 &&
                  (real[bl] == '/' || (bl == 1 && ctx->base_real[0] == '/'));
    if (!inside)
        return mopt_fail(MOPT_ERR_INVALID_MODEL,
                         "%s: external data file '%s' resolves to '%s', outside the model's "
                         "folder '%s'",
                         what, loc, real, ctx->base_real);
    /* stat before opening: opening a FIFO planted in the folder would block */
    struct stat pre;
    if (stat(real, &pre) != 0 || !S_ISREG(pre.st_mode))
        return mopt_fail(MOPT_ERR_IO, "%s: external data '%s' is not a regular file", what, real);
    FILE *fp = fopen(real, "rb");
    if (!fp)
        return mopt_fail(MOPT_ERR_IO, "%s: cannot open external data file '%s': %s", what, real,
                         strerror(errno));
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(fp);
        return mopt_fail(MOPT_ERR_IO, "%s: external data '%s' is not a regular file", what, real);
    }
    uint64_t size = (uint64_t)sb.st_size;
    if (off > size || len > size - off) {
        fclose(fp);
        return mopt_fail(MOPT_ERR_INVALID_MODEL,
                         "%s: external data range [%" PRIu64 ", +%" PRIu64 ") lies outside the "
                         "file '%s' (%" PRIu64 " bytes)",
                         what, off, len, loc, size);
    }
    void *buf = mopt_aligned_alloc(nbytes ? nbytes : 1);
    if (!buf) {
        fclose(fp);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", what, nbytes);
    }
    if (nbytes && (off > (uint64_t)INT64_MAX || fseeko(fp, (off_t)off, SEEK_SET) != 0 ||
                   fread(buf, 1, nbytes, fp) != nbytes)) {
        fclose(fp);
        mopt_aligned_free(buf);
        return mopt_fail(MOPT_ERR_IO, "%s: short read from external data file '%s'", what, real);
    }
    fclose(fp);
    *dst = buf;
    return MOPT_OK;
}

/* ---- TensorProto ---------------------------------------------------------- */

typedef struct tensor_parts {
    int64_t data_type;
    pb_vec dims;
    pb_vec f32, i32, i64, f64, u64; /* typed data fields 4, 5, 7, 10, 11 */
    uint32_t seen;                  /* bit k: field k appeared */
    const uint8_t *raw;
    size_t raw_len;
    int32_t location;
    char *ext_loc, *ext_off, *ext_len;
} tensor_parts;

static void parts_free(tensor_parts *p) {
    pb_vec_free(&p->dims);
    pb_vec_free(&p->f32);
    pb_vec_free(&p->i32);
    pb_vec_free(&p->i64);
    pb_vec_free(&p->f64);
    pb_vec_free(&p->u64);
    mopt_free(p->ext_loc);
    mopt_free(p->ext_off);
    mopt_free(p->ext_len);
}

static mopt_status parse_entry(const pb_reader *r, const pb_field *f, char **key, char **value) {
    pb_reader s;
    pb_sub(r, f, "StringStringEntryProto", NAMES(k_entry_fields), &s);
    while (pb_more(&s)) {
        pb_field e;
        TRY(pb_next(&s, &e));
        if (e.num == 1) TRY(replace_string(&s, &e, key));
        if (e.num == 2) TRY(replace_string(&s, &e, value));
    }
    return MOPT_OK;
}

static mopt_status tensor_fields(pb_reader *r, tensor_parts *p, ir_tensor *t) {
    while (pb_more(r)) {
        pb_field f;
        TRY(pb_next(r, &f));
        if (f.num < 32) p->seen |= 1u << f.num;
        switch (f.num) {
        case 1: TRY(pb_repeated(r, &f, PB_VARINT, &p->dims)); break;
        case 2: TRY(read_int(r, &f, &p->data_type)); break;
        case 3:
            return mopt_fail(MOPT_ERR_UNSUPPORTED,
                             "tensor at offset %zu is split in segments (TensorProto.segment), "
                             "which is not supported",
                             f.offset);
        case 4: TRY(pb_repeated(r, &f, PB_I32, &p->f32)); break;
        case 5: TRY(pb_repeated(r, &f, PB_VARINT, &p->i32)); break;
        case 6: TRY(pb_expect(r, &f, PB_LEN)); break;
        case 7: TRY(pb_repeated(r, &f, PB_VARINT, &p->i64)); break;
        case 8: TRY(replace_string(r, &f, &t->name)); break;
        case 9:
            TRY(pb_expect(r, &f, PB_LEN));
            p->raw = f.data;
            p->raw_len = f.len;
            break;
        case 10: TRY(pb_repeated(r, &f, PB_I64, &p->f64)); break;
        case 11: TRY(pb_repeated(r, &f, PB_VARINT, &p->u64)); break;
        case 13: {
            char *key = NULL, *value = NULL;
            mopt_status st = parse_entry(r, &f, &key, &value);
            if (!st && key && value) {
                char **slot = strcmp(key, "location") == 0 ? &p->ext_loc
                              : strcmp(key, "offset") == 0 ? &p->ext_off
                              : strcmp(key, "length") == 0 ? &p->ext_len
                                                           : NULL;
                if (slot) {
                    mopt_free(*slot);
                    *slot = value;
                    value = NULL;
                }
            }
            mopt_free(key);
            mopt_free(value);
            if (st) return st;
            break;
        }
        case 14: TRY(read_int32(r, &f, &p->location)); break;
        default: break;
        }
    }
    return MOPT_OK;
}

/* The typed field that holds dtype's values; fails unless it holds exactly
 * numel elements and no other typed field is present. Allocates nothing, so
 * a tensor's buffer is sized only after its data proved to be there. */
static mopt_status typed_source(const char *what, const tensor_parts *p, mopt_dtype dtype,
                                size_t numel, const pb_vec **out) {
    const pb_vec *src;
    const char *field;
    int fnum;
    switch (dtype) {
    case MOPT_DTYPE_F32: src = &p->f32, field = "float_data", fnum = 4; break;
    case MOPT_DTYPE_I64: src = &p->i64, field = "int64_data", fnum = 7; break;
    case MOPT_DTYPE_F64: src = &p->f64, field = "double_data", fnum = 10; break;
    case MOPT_DTYPE_U32:
    case MOPT_DTYPE_U64: src = &p->u64, field = "uint64_data", fnum = 11; break;
    default: src = &p->i32, field = "int32_data", fnum = 5; break;
    }
    static const struct {
        int num;
        const char *name;
    } all[] = {{4, "float_data"},
               {5, "int32_data"},
               {7, "int64_data"},
               {10, "double_data"},
               {11, "uint64_data"}};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (all[k].num != fnum && (p->seen & (1u << all[k].num)))
            return mopt_fail(MOPT_ERR_INVALID_MODEL,
                             "%s: has %s, but its data type %s keeps its values in %s", what,
                             all[k].name, mopt_dtype_name(dtype), field);
    if (src->n != numel)
        return mopt_fail(MOPT_ERR_INVALID_MODEL, "%s: its dims imply %zu elements but %s holds %zu",
                         what, numel, field, src->n);
    *out = src;
    return MOPT_OK;
}

/* Converts the typed-field values src (checked by typed_source) into dst. */
static mopt_status typed_to_buffer(const char *what, const pb_vec *src, mopt_dtype dtype,
                                   size_t numel, void *dst) {
    const char *field = "int32_data";
    switch (dtype) {
    case MOPT_DTYPE_I64: field = "int64_data"; break;
    case MOPT_DTYPE_U32: field = "uint64_data"; break;
    default: break;
    }
    const uint32_t *s32 = src->data;
    const uint64_t *s64 = src->data;
    for (size_t i = 0; i < numel; i++) {
        int64_t v = src->esize == 8 ? (int64_t)s64[i] : 0;
        int64_t lo = 0, hi = 0;
        switch (dtype) {
        case MOPT_DTYPE_F32: memcpy((float *)dst + i, &s32[i], 4); continue;
        case MOPT_DTYPE_F64: memcpy((double *)dst + i, &s64[i], 8); continue;
        case MOPT_DTYPE_I64: ((int64_t *)dst)[i] = v; continue;
        case MOPT_DTYPE_U64: ((uint64_t *)dst)[i] = s64[i]; continue;
        case MOPT_DTYPE_U32:
            if (s64[i] > UINT32_MAX) break;
            ((uint32_t *)dst)[i] = (uint32_t)s64[i];
            continue;
        case MOPT_DTYPE_I32: lo = INT32_MIN, hi = INT32_MAX; break;
        case MOPT_DTYPE_I16: lo = INT16_MIN, hi = INT16_MAX; break;
        case MOPT_DTYPE_I8: lo = INT8_MIN, hi = INT8_MAX; break;
        case MOPT_DTYPE_U16:
        case MOPT_DTYPE_F16:
        case MOPT_DTYPE_BF16: lo = 0, hi = UINT16_MAX; break;
        case MOPT_DTYPE_U8:
        case MOPT_DTYPE_F8E4M3FN:
        case MOPT_DTYPE_F8E4M3FNUZ:
        case MOPT_DTYPE_F8E5M2:
        case MOPT_DTYPE_F8E5M2FNUZ:
        case MOPT_DTYPE_F8E8M0: lo = 0, hi = UINT8_MAX; break;
        case MOPT_DTYPE_BOOL: lo = 0, hi = 1; break;
        default:
            return mopt_fail(MOPT_ERR_UNSUPPORTED, "%s: data type %s is not supported", what,
                             mopt_dtype_name(dtype));
        }
        if (dtype != MOPT_DTYPE_U32 && v >= lo && v <= hi) {
            switch (mopt_dtype_size(dtype)) {
            case 1: ((uint8_t *)dst)[i] = (uint8_t)v; break;
            case 2: ((uint16_t *)dst)[i] = (uint16_t)v; break;
            default: ((int32_t *)dst)[i] = (int32_t)v; break;
            }
            continue;
        }
        return mopt_fail(MOPT_ERR_INVALID_MODEL,
                         "%s: element %zu of %s (%" PRId64 ") is out of range for %s", what, i,
                         field, v, mopt_dtype_name(dtype));
    }
    return MOPT_OK;
}

/* 4-bit types arrive two per byte, 2-bit ones four per byte, the first in
 * the lowest bits; libmopt keeps one per byte (I4, I2 sign-extended). */
static unsigned packed_bits(mopt_dtype t) {
    switch (t) {
    case MOPT_DTYPE_U4:
    case MOPT_DTYPE_I4:
    case MOPT_DTYPE_F4E2M1: return 4;
    case MOPT_DTYPE_U2:
    case MOPT_DTYPE_I2: return 2;
    default: return 0;
    }
}
static bool is_packed(mopt_dtype t) { return packed_bits(t) != 0; }

static void unpack_bits(mopt_dtype t, const uint8_t *src, size_t numel, uint8_t *dst) {
    unsigned bits = packed_bits(t), per = 8 / bits, mask = (1u << bits) - 1;
    bool sign = t == MOPT_DTYPE_I4 || t == MOPT_DTYPE_I2;
    for (size_t i = 0; i < numel; i++) {
        unsigned v = (src[i / per] >> (bits * (i % per))) & mask;
        dst[i] = (uint8_t)(sign && v > mask / 2 ? v | ~mask : v);
    }
}

/* Parses the TensorProto in r into a new tensor. kind describes the tensor
 * for messages ("initializer", "attribute 'value' of node 'c'"). */
static mopt_status parse_tensor(pb_reader *r, onnx_ctx *ctx, const char *kind, ir_tensor **out) {
    *out = NULL;
    size_t start = r->pos;
    tensor_parts p;
    memset(&p, 0, sizeof p);
    ir_tensor *t = mopt_calloc(1, sizeof *t);
    if (!t) return oom("a tensor");
    mopt_status st = tensor_fields(r, &p, t);
    char what[320];
    const char *tname = t->name ? t->name : "";
    bool plain = strcmp(kind, "initializer") == 0 || strcmp(kind, "tensor") == 0;
    if (plain)
        snprintf(what, sizeof what, "%s '%s' (TensorProto at offset %zu)", kind, tname, start);
    else if (tname[0])
        snprintf(what, sizeof what, "%s, tensor '%s' (TensorProto at offset %zu)", kind, tname,
                 start);
    else
        snprintf(what, sizeof what, "%s (TensorProto at offset %zu)", kind, start);
    if (st) {
        mopt_fail_context(st, "%s", what);
        goto fail;
    }
    if (!t->name && !(t->name = mopt_strdup(""))) {
        st = oom(what);
        goto fail;
    }
    if (!onnx_dtype(p.data_type, &t->dtype)) {
        st = mopt_fail(p.data_type == 0 ? MOPT_ERR_INVALID_MODEL : MOPT_ERR_UNSUPPORTED,
                       "%s: data type %" PRId64 " (%s) is %s", what, p.data_type,
                       onnx_type_name(p.data_type), p.data_type == 0 ? "missing" : "not supported");
        goto fail;
    }
    if (t->dtype == MOPT_DTYPE_STRING) {
        st = mopt_fail(MOPT_ERR_UNSUPPORTED, "%s: string tensors are not supported", what);
        goto fail;
    }
    if (p.dims.n > IR_MAX_RANK) {
        st = mopt_fail(MOPT_ERR_LIMIT, "%s: rank %zu exceeds the maximum of %d", what, p.dims.n,
                       IR_MAX_RANK);
        goto fail;
    }
    t->rank = (int32_t)p.dims.n;
    for (int32_t i = 0; i < t->rank; i++) {
        t->dims[i] = (int64_t)((uint64_t *)p.dims.data)[i];
        if (t->dims[i] < 0) {
            st = mopt_fail(MOPT_ERR_INVALID_MODEL, "%s: dimension %d is negative (%" PRId64 ")",
                           what, (int)i, t->dims[i]);
            goto fail;
        }
    }
    char ds[160];
    dims_str(t->rank, t->dims, ds, sizeof ds);
    int64_t numel = ir_numel(t->rank, t->dims);
    size_t esize = mopt_dtype_size(t->dtype), nbytes;
    if (numel < 0 || (uint64_t)numel > SIZE_MAX ||
        !mopt_mul_overflow((size_t)numel, esize, &nbytes) || nbytes > ((size_t)1 << 46)) {
        st = mopt_fail(MOPT_ERR_LIMIT, "%s: dims %s of %s are too large", what, ds,
                       mopt_dtype_name(t->dtype));
        goto fail;
    }
    /* bytes in the file: 4-bit types are packed two per byte */
    unsigned per = is_packed(t->dtype) ? 8 / packed_bits(t->dtype) : 1;
    size_t stored = per > 1 ? ((size_t)numel + per - 1) / per : nbytes;
    const uint32_t typed_mask = (1u << 4) | (1u << 5) | (1u << 7) | (1u << 10) | (1u << 11);
    bool has_raw = p.seen & (1u << 9), has_typed = p.seen & typed_mask;
    bool external = p.location == 1;
    if (p.location != 0 && p.location != 1) {
        st = mopt_fail(MOPT_ERR_INVALID_MODEL, "%s: unknown data_location %d", what,
                       (int)p.location);
        goto fail;
    }
    if ((int)has_raw + (int)has_typed + (int)external > 1) {
        st = mopt_fail(MOPT_ERR_INVALID_MODEL,
                       "%s: has its data in more than one place (raw_data, typed fields, "
                       "external data)",
                       what);
        goto fail;
    }
    if (p.seen & (1u << 6)) {
        st = mopt_fail(MOPT_ERR_UNSUPPORTED, "%s: string_data is not supported", what);
        goto fail;
    }
    if (!has_raw && !has_typed && !external && numel > 0) {
        st = mopt_fail(MOPT_ERR_INVALID_MODEL,
                       "%s: dims %s need %zu bytes of %s data but the "
                       "tensor has no data",
                       what, ds, nbytes, mopt_dtype_name(t->dtype));
        goto fail;
    }
    if (has_raw && p.raw_len != stored) {
        st = mopt_fail(MOPT_ERR_INVALID_MODEL,
                       "%s: dims %s of %s need %zu bytes but raw_data has %zu", what, ds,
                       mopt_dtype_name(t->dtype), stored, p.raw_len);
        goto fail;
    }
    if (external && !p.ext_loc) {
        st = mopt_fail(MOPT_ERR_INVALID_MODEL,
                       "%s: data_location is EXTERNAL but external_data has no location", what);
        goto fail;
    }
    /* Nothing is allocated before the data proved to be there: a tiny file
     * cannot make the importer reserve what its dims claim. */
    const pb_vec *typed = NULL;
    if (!has_raw && !external &&
        (st = typed_source(what, &p, t->dtype, is_packed(t->dtype) ? stored : (size_t)numel,
                           &typed)))
        goto fail;
    void *packed = NULL; /* 4-bit data read from a file or typed field, before unpacking */
    if (external) {
        st = read_external(ctx, what, p.ext_loc, p.ext_off, p.ext_len, stored,
                           is_packed(t->dtype) ? &packed : &t->data);
        if (st) goto fail;
    }
    if (!external || is_packed(t->dtype)) {
        /* Empty tensors still get a (small) buffer, so "data present" is visible. */
        t->data = mopt_aligned_alloc(nbytes ? nbytes : 1);
        if (!t->data) {
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", what, nbytes);
            goto fail;
        }
    }
    t->nbytes = nbytes;
    if (is_packed(t->dtype) && !has_raw && !external && typed) {
        packed = mopt_aligned_alloc(stored ? stored : 1);
        if (!packed) {
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", what, stored);
            goto fail;
        }
        char pwhat[400];
        snprintf(pwhat, sizeof pwhat, "%s (%u %s values per int32_data entry)", what, per,
                 mopt_dtype_name(t->dtype));
        st = typed_to_buffer(pwhat, typed, MOPT_DTYPE_U8, stored, packed);
        typed = NULL;
    }
    if (is_packed(t->dtype) && (has_raw || packed)) {
        if (!st) unpack_bits(t->dtype, has_raw ? p.raw : packed, (size_t)numel, t->data);
        mopt_aligned_free(packed);
    } else if (has_raw) {
        /* raw_data is little-endian, like every host libmopt supports */
        if (nbytes) memcpy(t->data, p.raw, nbytes);
        if (t->dtype == MOPT_DTYPE_BOOL)
            for (size_t i = 0; i < nbytes; i++)
                ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
    } else if (typed) {
        st = typed_to_buffer(what, typed, t->dtype, (size_t)numel, t->data);
    }
    if (st) goto fail;
    parts_free(&p);
    *out = t;
    return MOPT_OK;
fail:
    parts_free(&p);
    ir_tensor_destroy(t);
    return st;
}

/* ---- TypeProto / ValueInfoProto ------------------------------------------ */

typedef struct vinfo {
    int32_t value;
    bool is_tensor; /* TypeProto.tensor_type (else another kind, or no type) */
    bool has_type;
    mopt_dtype dtype;
    int32_t elem_type;
    ir_shape shape;
    size_t offset;
} vinfo;

static mopt_status parse_shape(const pb_reader *r, const pb_field *f, ir_graph *g, ir_shape *s) {
    pb_reader sr;
    pb_sub(r, f, "TensorShapeProto", NAMES(k_shape_fields), &sr);
    s->rank = 0;
    while (pb_more(&sr)) {
        pb_field df;
        TRY(pb_next(&sr, &df));
        if (df.num != 1) continue;
        TRY(pb_expect(&sr, &df, PB_LEN));
        if (s->rank >= IR_MAX_RANK)
            return mopt_fail(MOPT_ERR_LIMIT, "shape at offset %zu has more than %d dimensions",
                             f->offset, IR_MAX_RANK);
        int32_t k = s->rank++;
        s->dims[k] = 0;
        s->syms[k] = -1;
        pb_reader dr;
        pb_sub(&sr, &df, "TensorShapeProto.Dimension", NAMES(k_dim_fields), &dr);
        while (pb_more(&dr)) {
            pb_field x;
            TRY(pb_next(&dr, &x));
            if (x.num == 1) {
                int64_t v;
                TRY(read_int(&dr, &x, &v));
                /* negative sizes appear in some old exporters' files: unknown */
                s->dims[k] = v >= 0 ? v : 0;
                s->syms[k] = v >= 0 ? 0 : -1;
            } else if (x.num == 2) {
                char *name;
                TRY(pb_string(&dr, &x, false, &name, NULL));
                /* An empty dim_param, or paddle2onnx's "?", is an unknown dim
                 * of its own at each occurrence: binding every "?" to one
                 * symbol would force x: [-1, 3, "?", "?"] to be square. */
                int32_t id = -1;
                if (name[0] && strcmp(name, "?") != 0) {
                    id = ir_graph_symbol(g, name);
                    if (id < 0) {
                        mopt_free(name);
                        return MOPT_ERR_OUT_OF_MEMORY;
                    }
                }
                mopt_free(name);
                s->dims[k] = 0;
                s->syms[k] = id;
            }
        }
    }
    return MOPT_OK;
}

/* Parses a TypeProto. For tensor types fills vi (elem type, shape). */
static mopt_status parse_type(const pb_reader *r, const pb_field *f, ir_graph *g, vinfo *vi) {
    TRY(pb_expect(r, f, PB_LEN));
    pb_reader tr;
    pb_sub(r, f, "TypeProto", NAMES(k_type_fields), &tr);
    vi->has_type = true;
    while (pb_more(&tr)) {
        pb_field tf;
        TRY(pb_next(&tr, &tf));
        if (tf.num == 4 || tf.num == 5 || tf.num == 7 || tf.num == 8 || tf.num == 9) {
            vi->is_tensor = false;
            continue;
        }
        if (tf.num != 1) continue;
        TRY(pb_expect(&tr, &tf, PB_LEN));
        vi->is_tensor = true;
        ir_shape_set_unknown(&vi->shape);
        vi->elem_type = 0;
        pb_reader ttr;
        pb_sub(&tr, &tf, "TypeProto.Tensor", NAMES(k_ttype_fields), &ttr);
        while (pb_more(&ttr)) {
            pb_field x;
            TRY(pb_next(&ttr, &x));
            if (x.num == 1) TRY(read_int32(&ttr, &x, &vi->elem_type));
            if (x.num == 2) {
                TRY(pb_expect(&ttr, &x, PB_LEN));
                TRY(parse_shape(&ttr, &x, g, &vi->shape));
            }
        }
    }
    return MOPT_OK;
}

static mopt_status parse_value_info(const pb_reader *r, const pb_field *f, ir_graph *g,
                                    const char *kind, vinfo *vi) {
    TRY(pb_expect(r, f, PB_LEN));
    memset(vi, 0, sizeof *vi);
    ir_shape_set_unknown(&vi->shape);
    vi->value = -1;
    vi->offset = f->offset;
    pb_reader vr;
    pb_sub(r, f, "ValueInfoProto", NAMES(k_vi_fields), &vr);
    char *name = NULL;
    mopt_status st = MOPT_OK;
    while (pb_more(&vr) && !st) {
        pb_field x;
        st = pb_next(&vr, &x);
        if (st) break;
        if (x.num == 1) st = replace_string(&vr, &x, &name);
        if (x.num == 2) st = parse_type(&vr, &x, g, vi);
    }
    if (!st && (!name || !name[0]))
        st = mopt_fail(MOPT_ERR_INVALID_MODEL, "%s at offset %zu has no name", kind, f->offset);
    if (!st && vi->is_tensor && vi->elem_type != 0) {
        /* intermediate values of a type libmopt lacks stay untyped */
        if (!onnx_dtype(vi->elem_type, &vi->dtype) && strcmp(kind, "value_info") != 0)
            st = mopt_fail(MOPT_ERR_UNSUPPORTED,
                           "%s '%s' has element type %d (%s), which libmopt does not support", kind,
                           name, (int)vi->elem_type, onnx_type_name(vi->elem_type));
    }
    if (!st) {
        vi->value = ir_graph_value(g, name);
        if (vi->value < 0) st = MOPT_ERR_OUT_OF_MEMORY;
    }
    mopt_free(name);
    return st;
}

/* ---- attributes, nodes, graphs -------------------------------------------- */

static mopt_status parse_graph(const pb_reader *r, const pb_field *f, onnx_ctx *ctx, int depth,
                               ir_graph **out);

static mopt_status attr_type_check(const pb_reader *r, const pb_field *f, pb_wire w) {
    return pb_expect(r, f, w);
}

/* Field number that carries each attribute type's value. */
static uint32_t attr_field(ir_attr_type t) {
    static const uint32_t k[] = {0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 22, 23, 14, 15};
    return (unsigned)t < sizeof k / sizeof k[0] ? k[t] : 0;
}

/* Keeps a parsed tensor (t) or graph (g) as the attribute's value: the single
 * one (a later field replaces an earlier one, as protobuf's last one wins) or
 * the next element of its list. */
static void attr_keep(ir_attr *a, ir_tensor *t, ir_graph *g, size_t *idx) {
    switch (a->type) {
    case IR_ATTR_TENSOR:
        ir_tensor_destroy(a->t);
        a->t = t;
        break;
    case IR_ATTR_TENSORS: a->tensors[(*idx)++] = t; break;
    case IR_ATTR_GRAPH:
        ir_graph_destroy(a->g);
        a->g = g;
        break;
    default: a->graphs[(*idx)++] = g; break;
    }
}

static mopt_status parse_attribute(const pb_reader *r, const pb_field *f, ir_graph *g,
                                   ir_node *node, onnx_ctx *ctx, int depth) {
    TRY(pb_expect(r, f, PB_LEN));
    pb_reader ar;
    pb_sub(r, f, "AttributeProto", NAMES(k_attr_fields), &ar);
    /* pass 1: name, type, which fields are present and how often */
    char *name = NULL;
    int64_t type = 0;
    size_t counts[24] = {0};
    mopt_status st = MOPT_OK;
    while (pb_more(&ar) && !st) {
        pb_field x;
        if ((st = pb_next(&ar, &x))) break;
        if (x.num < 24) counts[x.num]++;
        if (x.num == 1) st = replace_string(&ar, &x, &name);
        if (x.num == 20) st = read_int(&ar, &x, &type);
    }
    if (st) {
        mopt_free(name);
        return st;
    }
    char what[320];
    snprintf(what, sizeof what, "attribute '%s' of node '%s' (%s) at offset %zu", name ? name : "",
             node->name, node->op_type, f->offset);
    if (!name || !name[0]) {
        mopt_free(name);
        return mopt_fail(MOPT_ERR_INVALID_MODEL, "%s: the attribute has no name", what);
    }
    if (ir_node_attr(node, name)) {
        mopt_free(name);
        return mopt_fail(MOPT_ERR_INVALID_MODEL, "%s: the node has two attributes of that name",
                         what);
    }
    if (counts[21]) {
        mopt_free(name);
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "%s: refers to a function attribute (ref_attr_name), which is not "
                         "supported",
                         what);
    }
    if (type == 0) { /* old files: infer the type from the field that is present */
        static const ir_attr_type order[] = {
            IR_ATTR_FLOAT,      IR_ATTR_INT,        IR_ATTR_STRING,        IR_ATTR_TENSOR,
            IR_ATTR_GRAPH,      IR_ATTR_FLOATS,     IR_ATTR_INTS,          IR_ATTR_STRINGS,
            IR_ATTR_TENSORS,    IR_ATTR_GRAPHS,     IR_ATTR_SPARSE_TENSOR, IR_ATTR_SPARSE_TENSORS,
            IR_ATTR_TYPE_PROTO, IR_ATTR_TYPE_PROTOS};
        int found = 0;
        for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
            if (counts[attr_field(order[k])]) {
                if (!found) type = order[k];
                found++;
            }
        if (found != 1) {
            mopt_free(name);
            return mopt_fail(MOPT_ERR_INVALID_MODEL, "%s: the attribute has no type and %s", what,
                             found ? "several value fields" : "no value");
        }
    }
    if (type < 1 || type > IR_ATTR_TYPE_PROTOS) {
        mopt_free(name);
        return mopt_fail(MOPT_ERR_INVALID_MODEL, "%s: unknown attribute type %" PRId64, what, type);
    }
    if (type == IR_ATTR_SPARSE_TENSOR || type == IR_ATTR_SPARSE_TENSORS) {
        mopt_free(name);
        return mopt_fail(MOPT_ERR_UNSUPPORTED, "%s: sparse tensor attributes are not supported",
                         what);
    }
    ir_attr *a = ir_node_add_attr(node, name, (ir_attr_type)type);
    mopt_free(name);
    if (!a) return MOPT_ERR_OUT_OF_MEMORY;
    uint32_t want = attr_field(a->type);
    /* lists of objects: size the arrays from the counted fields */
    size_t n_list = counts[want];
    if (a->type == IR_ATTR_GRAPHS && n_list > ONNX_MAX_SUBGRAPHS)
        return mopt_fail(MOPT_ERR_LIMIT,
                         "%s: holds %zu graphs; a model may have at most %d subgraphs", what,
                         n_list, ONNX_MAX_SUBGRAPHS);
    if ((a->type == IR_ATTR_STRINGS || a->type == IR_ATTR_TENSORS) &&
        n_list > ONNX_MAX_ATTR_OBJECTS)
        return mopt_fail(MOPT_ERR_LIMIT, "%s: holds %zu %s; at most %zu are accepted", what, n_list,
                         a->type == IR_ATTR_STRINGS ? "strings" : "tensors", ONNX_MAX_ATTR_OBJECTS);
    if (a->type == IR_ATTR_STRINGS || a->type == IR_ATTR_TENSORS || a->type == IR_ATTR_GRAPHS) {
        void **arr = mopt_calloc(n_list ? n_list : 1, sizeof(void *));
        if (!arr) return oom(what);
        if (a->type == IR_ATTR_STRINGS) a->strings = (char **)arr;
        if (a->type == IR_ATTR_TENSORS) a->tensors = (ir_tensor **)arr;
        if (a->type == IR_ATTR_GRAPHS) a->graphs = (ir_graph **)arr;
        a->n = n_list;
    }
    /* pass 2: the value */
    pb_vec vec = {0};
    size_t idx = 0;
    char kind[360];
    snprintf(kind, sizeof kind, "attribute '%s' of node '%s' (%s)", a->name, node->name,
             node->op_type);
    pb_sub(r, f, "AttributeProto", NAMES(k_attr_fields), &ar);
    while (pb_more(&ar) && !st) {
        pb_field x;
        if ((st = pb_next(&ar, &x))) break;
        if (x.num != want) continue;
        switch (a->type) {
        case IR_ATTR_FLOAT: {
            if ((st = attr_type_check(&ar, &x, PB_I32))) break;
            uint32_t bits = (uint32_t)x.u;
            memcpy(&a->f, &bits, 4);
            break;
        }
        case IR_ATTR_INT: st = read_int(&ar, &x, &a->i); break;
        case IR_ATTR_STRING:
            mopt_free(a->s);
            a->s = NULL;
            st = pb_string(&ar, &x, true, &a->s, &a->s_len);
            break;
        case IR_ATTR_TENSOR:
        case IR_ATTR_TENSORS: {
            if ((st = pb_expect(&ar, &x, PB_LEN))) break;
            pb_reader tr;
            pb_sub(&ar, &x, "TensorProto", NAMES(k_tensor_fields), &tr);
            ir_tensor *t = NULL;
            if ((st = parse_tensor(&tr, ctx, kind, &t))) break;
            attr_keep(a, t, NULL, &idx);
            break;
        }
        case IR_ATTR_GRAPH:
        case IR_ATTR_GRAPHS: {
            ir_graph *sg = NULL;
            if ((st = parse_graph(&ar, &x, ctx, depth + 1, &sg))) {
                /* only the outermost level adds context: a chain of 32
                 * would push the reason out of the message buffer */
                if (depth == 0) mopt_fail_context(st, "in subgraph %s", what);
                break;
            }
            attr_keep(a, NULL, sg, &idx);
            break;
        }
        case IR_ATTR_FLOATS: st = pb_repeated(&ar, &x, PB_I32, &vec); break;
        case IR_ATTR_INTS: st = pb_repeated(&ar, &x, PB_VARINT, &vec); break;
        case IR_ATTR_STRINGS: st = pb_string(&ar, &x, true, &a->strings[idx++], NULL); break;
        case IR_ATTR_TYPE_PROTO:
        case IR_ATTR_TYPE_PROTOS: {
            /* checked for well-formedness, not kept */
            vinfo tmp;
            memset(&tmp, 0, sizeof tmp);
            st = parse_type(&ar, &x, g, &tmp);
            if (a->type == IR_ATTR_TYPE_PROTOS) a->n++;
            break;
        }
        default: break;
        }
    }
    if (!st && a->type == IR_ATTR_STRING && !a->s) {
        /* type STRING without an 's' field: protobuf's default, "" (the IR
         * and the operators rely on a->s being a string) */
        a->s = mopt_strdup("");
        a->s_len = 0;
        if (!a->s) st = oom(what);
    }
    if (!st && (a->type == IR_ATTR_FLOATS || a->type == IR_ATTR_INTS)) {
        size_t bytes;
        if (!mopt_mul_overflow(vec.n ? vec.n : 1, a->type == IR_ATTR_INTS ? 8 : 4, &bytes)) {
            st = mopt_fail(MOPT_ERR_LIMIT, "%s: too many elements", what);
        } else if (a->type == IR_ATTR_INTS) {
            a->ints = mopt_malloc(bytes);
            if (!a->ints) st = oom(what);
            for (size_t i = 0; !st && i < vec.n; i++)
                a->ints[i] = (int64_t)((uint64_t *)vec.data)[i];
        } else {
            a->floats = mopt_malloc(bytes);
            if (!a->floats) st = oom(what);
            if (!st && vec.n) memcpy(a->floats, vec.data, vec.n * 4);
        }
        if (!st) a->n = vec.n;
    }
    pb_vec_free(&vec);
    return st;
}

static mopt_status parse_node(const pb_reader *r, const pb_field *f, ir_graph *g, onnx_ctx *ctx,
                              int depth) {
    TRY(pb_expect(r, f, PB_LEN));
    pb_reader nr;
    pb_sub(r, f, "NodeProto", NAMES(k_node_fields), &nr);
    /* pass 1: counts and identity (copied into ir_graph_add_node's own
     * strings: held meanwhile in pb_str buffers, no allocation when short) */
    pb_str op = {0}, name = {0}, domain = {0};
    size_t n_in = 0, n_out = 0;
    mopt_status st = MOPT_OK;
    while (pb_more(&nr) && !st) {
        pb_field x;
        if ((st = pb_next(&nr, &x))) break;
        switch (x.num) {
        case 1: st = pb_expect(&nr, &x, PB_LEN), n_in++; break;
        case 2: st = pb_expect(&nr, &x, PB_LEN), n_out++; break;
        case 3: st = pb_str_read(&nr, &x, &name); break;
        case 4: st = pb_str_read(&nr, &x, &op); break;
        case 5: st = pb_expect(&nr, &x, PB_LEN); break;
        case 7: st = pb_str_read(&nr, &x, &domain); break;
        default: break;
        }
    }
    ir_node *node = NULL;
    if (!st && (!op.s || !op.s[0]))
        st = mopt_fail(MOPT_ERR_INVALID_MODEL, "node '%s' at offset %zu has no op_type",
                       name.s ? name.s : "", f->offset);
    if (!st && (n_in > INT32_MAX / 8 || n_out > INT32_MAX / 8))
        st = mopt_fail(MOPT_ERR_LIMIT, "node '%s' at offset %zu has too many inputs or outputs",
                       name.s ? name.s : "", f->offset);
    if (!st) {
        node = ir_graph_add_node(g, op.s, domain.s, name.s, (int32_t)n_in, (int32_t)n_out);
        if (!node) st = MOPT_ERR_OUT_OF_MEMORY;
    }
    pb_str_free(&op);
    pb_str_free(&name);
    pb_str_free(&domain);
    if (st) return st;
    /* pass 2: inputs, outputs, attributes */
    pb_sub(r, f, "NodeProto", NAMES(k_node_fields), &nr);
    int32_t ki = 0, ko = 0;
    while (pb_more(&nr) && !st) {
        pb_field x;
        if ((st = pb_next(&nr, &x))) break;
        if (x.num == 1 || x.num == 2) {
            pb_str s = {0};
            if ((st = pb_str_read(&nr, &x, &s))) break;
            int32_t v = -1;
            if (s.s[0]) {
                v = ir_graph_value(g, s.s);
                if (v < 0) st = MOPT_ERR_OUT_OF_MEMORY;
            }
            pb_str_free(&s);
            if (x.num == 1)
                node->inputs[ki++] = v;
            else
                node->outputs[ko++] = v;
        } else if (x.num == 5) {
            st = parse_attribute(&nr, &x, g, node, ctx, depth);
        }
    }
    return st;
}

static mopt_status push_vinfo(vinfo **arr, size_t *n, size_t *cap, const vinfo *vi) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8, bytes;
        if (!mopt_mul_overflow(nc, sizeof **arr, &bytes))
            return mopt_fail(MOPT_ERR_LIMIT, "too many graph inputs/outputs");
        vinfo *na = mopt_realloc(*arr, bytes);
        if (!na) return oom("value infos");
        *arr = na;
        *cap = nc;
    }
    (*arr)[(*n)++] = *vi;
    return MOPT_OK;
}

static void apply_type(ir_value *v, const vinfo *vi) {
    if (!vi->is_tensor) return;
    if (vi->dtype != MOPT_DTYPE_UNDEFINED) v->dtype = vi->dtype;
    if (vi->shape.rank >= 0) v->shape = vi->shape;
}

/* The main graph's inputs and outputs must be tensors, not sequences, maps or
 * optionals (what is "input" or "output"). */
static mopt_status tensor_only(const vinfo *vi, const ir_value *v, const char *what, int depth) {
    if (depth == 0 && vi->has_type && !vi->is_tensor)
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "graph %s '%s' is not a tensor (a sequence, map or optional); "
                         "only tensors are supported",
                         what, v->name);
    return MOPT_OK;
}

/* After all of a graph's fields are read: inputs, outputs, declared types. */
static mopt_status finish_graph(ir_graph *g, const vinfo *ins, size_t n_ins, const vinfo *outs,
                                size_t n_outs, const vinfo *vis, size_t n_vis, int depth) {
    g->inputs = mopt_malloc((n_ins ? n_ins : 1) * sizeof *g->inputs);
    g->outputs = mopt_malloc((n_outs ? n_outs : 1) * sizeof *g->outputs);
    if (!g->inputs || !g->outputs) return oom("graph inputs and outputs");
    for (size_t i = 0; i < n_ins; i++) {
        ir_value *v = g->values[ins[i].value];
        mopt_status st = tensor_only(&ins[i], v, "input", depth);
        if (st) return st;
        if (v->flags & IR_VALUE_INITIALIZER) {
            if (ins[i].dtype != MOPT_DTYPE_UNDEFINED && ins[i].dtype != v->dtype)
                return mopt_fail(MOPT_ERR_TYPE,
                                 "graph input '%s' is declared %s but its initializer is %s",
                                 v->name, mopt_dtype_name(ins[i].dtype), mopt_dtype_name(v->dtype));
            continue; /* a weight with a default value, not an input */
        }
        if (v->flags & IR_VALUE_INPUT)
            return mopt_fail(MOPT_ERR_INVALID_MODEL, "graph input '%s' is listed twice", v->name);
        v->flags |= IR_VALUE_INPUT;
        apply_type(v, &ins[i]);
        g->inputs[g->n_inputs++] = ins[i].value;
    }
    for (size_t i = 0; i < n_outs; i++) {
        ir_value *v = g->values[outs[i].value];
        mopt_status st = tensor_only(&outs[i], v, "output", depth);
        if (st) return st;
        v->flags |= IR_VALUE_OUTPUT;
        if (!(v->flags & (IR_VALUE_INPUT | IR_VALUE_INITIALIZER))) apply_type(v, &outs[i]);
        g->outputs[g->n_outputs++] = outs[i].value;
    }
    for (size_t i = 0; i < n_vis; i++) {
        ir_value *v = g->values[vis[i].value];
        if (v->flags & (IR_VALUE_INPUT | IR_VALUE_OUTPUT | IR_VALUE_INITIALIZER)) continue;
        apply_type(v, &vis[i]);
    }
    return MOPT_OK;
}

static mopt_status add_initializer(pb_reader *r, const pb_field *f, ir_graph *g, onnx_ctx *ctx) {
    TRY(pb_expect(r, f, PB_LEN));
    pb_reader tr;
    pb_sub(r, f, "TensorProto", NAMES(k_tensor_fields), &tr);
    ir_tensor *t = NULL;
    TRY(parse_tensor(&tr, ctx, "initializer", &t));
    mopt_status st = MOPT_OK;
    if (!t->name[0]) {
        st = mopt_fail(MOPT_ERR_INVALID_MODEL, "initializer at offset %zu has no name", f->offset);
    } else {
        int32_t vi = ir_graph_value(g, t->name);
        if (vi < 0) {
            st = MOPT_ERR_OUT_OF_MEMORY;
        } else if (g->values[vi]->flags & IR_VALUE_INITIALIZER) {
            st = mopt_fail(MOPT_ERR_INVALID_MODEL, "initializer '%s' (offset %zu) is defined twice",
                           t->name, f->offset);
        } else {
            ir_value *v = g->values[vi];
            v->flags |= IR_VALUE_INITIALIZER;
            v->dtype = t->dtype;
            ir_shape_set(&v->shape, t->rank, t->dims);
            v->data = t->data;
            v->nbytes = t->nbytes;
            t->data = NULL;
        }
    }
    ir_tensor_destroy(t);
    return st;
}

static mopt_status parse_graph(const pb_reader *r, const pb_field *f, onnx_ctx *ctx, int depth,
                               ir_graph **out) {
    *out = NULL;
    TRY(pb_expect(r, f, PB_LEN));
    if (depth > ONNX_MAX_DEPTH)
        return mopt_fail(MOPT_ERR_LIMIT,
                         "subgraphs are nested more than %d levels deep (graph at offset %zu)",
                         ONNX_MAX_DEPTH, f->offset);
    if (depth > 0 && ++ctx->n_subgraphs > ONNX_MAX_SUBGRAPHS)
        return mopt_fail(MOPT_ERR_LIMIT,
                         "the model has more than %d subgraphs (graph at offset %zu); nested "
                         "graphs are limited to keep the import's memory bounded",
                         ONNX_MAX_SUBGRAPHS, f->offset);
    ir_graph *g = ir_graph_create();
    if (!g) return oom("a graph");
    pb_reader gr;
    pb_sub(r, f, "GraphProto", NAMES(k_graph_fields), &gr);
    vinfo *lists[3] = {NULL, NULL, NULL}; /* input, output, value_info */
    size_t n[3] = {0, 0, 0}, cap[3] = {0, 0, 0};
    static const char *const kinds[3] = {"graph input", "graph output", "value_info"};
    mopt_status st = MOPT_OK;
    {
        /* room for the nodes and values at once (a value per node output,
         * input, initializer: a hint), not grown ~20 times over a large graph */
        size_t n_nodes = 0, n_values = 0;
        pb_field x;
        while (pb_more(&gr) && pb_next(&gr, &x) == MOPT_OK)
            if (x.wire == PB_LEN && (x.num == 1 || x.num == 5 || x.num == 11)) {
                n_nodes += x.num == 1;
                n_values++;
            }
        if (n_values <= INT32_MAX / 4 && ir_graph_reserve(g, (int32_t)n_values, (int32_t)n_nodes))
            st = MOPT_ERR_OUT_OF_MEMORY;
        pb_sub(r, f, "GraphProto", NAMES(k_graph_fields), &gr);
    }
    while (pb_more(&gr) && !st) {
        pb_field x;
        if ((st = pb_next(&gr, &x))) break;
        switch (x.num) {
        case 1: st = parse_node(&gr, &x, g, ctx, depth); break;
        case 2: st = replace_string(&gr, &x, &g->name); break;
        case 5: st = add_initializer(&gr, &x, g, ctx); break;
        case 10: st = replace_string(&gr, &x, &g->graph_doc_string); break;
        case 11:
        case 12:
        case 13: {
            int k = (int)x.num - 11;
            vinfo vi;
            st = parse_value_info(&gr, &x, g, kinds[k], &vi);
            if (!st) st = push_vinfo(&lists[k], &n[k], &cap[k], &vi);
            break;
        }
        case 15:
            st = mopt_fail(MOPT_ERR_UNSUPPORTED,
                           "graph '%s' has a sparse initializer (offset %zu); sparse tensors are "
                           "not supported",
                           g->name, x.offset);
            break;
        default: break;
        }
    }
    if (!st) st = finish_graph(g, lists[0], n[0], lists[1], n[1], lists[2], n[2], depth);
    for (int k = 0; k < 3; k++)
        mopt_free(lists[k]);
    if (st) {
        ir_graph_destroy(g);
        return st;
    }
    *out = g;
    return MOPT_OK;
}

/* Subgraphs see the model's opsets and IR version. */
static mopt_status propagate_model_info(ir_graph *top, ir_graph *g) {
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_attrs; k++) {
            ir_attr *a = &n->attrs[k];
            ir_graph *one[1] = {a->g};
            ir_graph **subs = a->type == IR_ATTR_GRAPHS ? a->graphs : one;
            size_t ns = a->type == IR_ATTR_GRAPHS ? a->n : (a->type == IR_ATTR_GRAPH ? 1 : 0);
            for (size_t s = 0; s < ns; s++) {
                ir_graph *sg = subs[s];
                if (!sg) continue;
                sg->ir_version = top->ir_version;
                for (int32_t o = 0; o < top->n_opsets; o++)
                    if (ir_graph_set_opset(sg, top->opsets[o].domain, top->opsets[o].version))
                        return MOPT_ERR_OUT_OF_MEMORY;
                TRY(propagate_model_info(top, sg));
            }
        }
    }
    return MOPT_OK;
}

/* One StringStringEntryProto of ModelProto.metadata_props, appended to
 * meta's list (a scratch graph's, moved to the model's graph at the end). */
static mopt_status parse_metadata_prop(pb_reader *r, const pb_field *f, ir_graph *meta) {
    TRY(pb_expect(r, f, PB_LEN));
    char *key = NULL, *value = NULL;
    mopt_status st = parse_entry(r, f, &key, &value);
    if (!st && ir_graph_add_prop(meta, key ? key : "", value ? value : ""))
        st = MOPT_ERR_OUT_OF_MEMORY;
    mopt_free(key);
    mopt_free(value);
    return st;
}

static bool uses_default_domain(const ir_graph *g) {
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const char *d = g->nodes[i]->domain;
        if (!d[0] || strcmp(d, "ai.onnx") == 0) return true;
    }
    return false;
}

mopt_status onnx_import_model(const uint8_t *buf, size_t len, const char *base_dir,
                              ir_graph **out) {
    *out = NULL;
    onnx_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.base_dir = base_dir;
    pb_reader r;
    pb_init(&r, buf, len, "ModelProto", NAMES(k_model_fields));
    ir_graph *g = NULL;
    int64_t ir_version = 0;
    char *producer = NULL;
    /* opsets are gathered in a scratch graph, then moved */
    ir_graph *ops = ir_graph_create();
    if (!ops) return oom("the model");
    mopt_status st = MOPT_OK;
    bool saw_graph = false;
    while (pb_more(&r) && !st) {
        pb_field f;
        if ((st = pb_next(&r, &f))) break;
        switch (f.num) {
        case 1: st = read_int(&r, &f, &ir_version); break;
        case 2: st = replace_string(&r, &f, &producer); break;
        /* the model's description: gathered in the scratch graph, then moved */
        case 3: st = replace_string(&r, &f, &ops->producer_version); break;
        case 4: st = replace_string(&r, &f, &ops->domain); break;
        case 5: st = read_int(&r, &f, &ops->model_version); break;
        case 6: st = replace_string(&r, &f, &ops->doc_string); break;
        case 14: st = parse_metadata_prop(&r, &f, ops); break;
        case 7:
            if (saw_graph) {
                st = mopt_fail(MOPT_ERR_INVALID_MODEL, "the model has two graphs (offset %zu)",
                               f.offset);
                break;
            }
            saw_graph = true;
            st = parse_graph(&r, &f, &ctx, 0, &g);
            break;
        case 8: {
            if ((st = pb_expect(&r, &f, PB_LEN))) break;
            pb_reader orr;
            pb_sub(&r, &f, "OperatorSetIdProto", NAMES(k_opset_fields), &orr);
            char *domain = NULL;
            int64_t version = 0;
            while (pb_more(&orr) && !st) {
                pb_field x;
                if ((st = pb_next(&orr, &x))) break;
                if (x.num == 1) st = replace_string(&orr, &x, &domain);
                if (x.num == 2) st = read_int(&orr, &x, &version);
            }
            if (!st && version < 1)
                st = mopt_fail(MOPT_ERR_INVALID_MODEL,
                               "opset_import for domain '%s' at offset %zu has version %" PRId64,
                               domain ? domain : "", f.offset, version);
            if (!st && ir_graph_set_opset(ops, domain ? domain : "", version))
                st = MOPT_ERR_OUT_OF_MEMORY;
            mopt_free(domain);
            break;
        }
        default: break;
        }
    }
    if (!st && !g)
        st = mopt_fail(MOPT_ERR_INVALID_MODEL,
                       "the file has no graph (ModelProto.graph is missing; is it an ONNX "
                       "model?)");
    if (!st && ir_graph_opset(ops, "") < 0 && uses_default_domain(g))
        st = mopt_fail(MOPT_ERR_INVALID_MODEL,
                       "the model declares no opset_import for the default ONNX domain");
    if (!st) {
        g->ir_version = ir_version;
        g->producer_name = producer;
        producer = NULL;
        g->opsets = ops->opsets;
        g->n_opsets = ops->n_opsets;
        ops->opsets = NULL;
        ops->n_opsets = 0;
        g->producer_version = ops->producer_version;
        g->domain = ops->domain;
        g->doc_string = ops->doc_string;
        g->model_version = ops->model_version;
        g->props = ops->props;
        g->n_props = ops->n_props;
        ops->producer_version = ops->domain = ops->doc_string = NULL;
        ops->props = NULL;
        ops->n_props = 0;
        st = propagate_model_info(g, g);
    }
    mopt_free(producer);
    ir_graph_destroy(ops);
    if (st) {
        ir_graph_destroy(g);
        return st;
    }
    *out = g;
    return MOPT_OK;
}

mopt_status onnx_import_tensor(const uint8_t *buf, size_t len, ir_tensor **out) {
    *out = NULL;
    onnx_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    pb_reader r;
    pb_init(&r, buf, len, "TensorProto", NAMES(k_tensor_fields));
    return parse_tensor(&r, &ctx, "tensor", out);
}
