/*
 * tensor.c — the public mopt_tensor: owned or borrowed buffers, accessors,
 * and loading/saving tensor files (.npy, TensorProto .pb).
 */
#include <inttypes.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/file.h"
#include "io/npy.h"
#include "io/onnx_import.h"
#include "runtime/runtime.h"

static mopt_status check_shape(mopt_dtype dtype, int rank, const int64_t *dims, size_t *nbytes) {
    if (mopt_dtype_size(dtype) == 0)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "unsupported tensor dtype %d", (int)dtype);
    if (rank < 0 || rank > MOPT_MAX_RANK)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "tensor rank %d is outside 0..%d", rank,
                         MOPT_MAX_RANK);
    if (rank > 0 && !dims) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "dims is NULL");
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "dim %d is negative (%" PRId64 ")", i,
                             dims[i]);
    int64_t n = ir_numel(rank, dims);
    if (n < 0 || !mopt_mul_overflow((size_t)n, mopt_dtype_size(dtype), nbytes) ||
        *nbytes > ((size_t)1 << 46))
        return mopt_fail(MOPT_ERR_LIMIT, "tensor size overflows");
    return MOPT_OK;
}

mopt_status rt_tensor_new(mopt_dtype dtype, int32_t rank, const int64_t *dims, void *data,
                          size_t nbytes, bool owned, mopt_tensor **out) {
    mopt_tensor *t = mopt_calloc(1, sizeof *t);
    if (!t) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating tensor");
    t->dtype = dtype;
    t->rank = rank;
    for (int i = 0; i < rank; i++)
        t->dims[i] = dims[i];
    t->data = data;
    t->nbytes = nbytes;
    t->owned = owned;
    *out = t;
    return MOPT_OK;
}

mopt_status mopt_tensor_create(mopt_dtype dtype, int rank, const int64_t *dims, mopt_tensor **out) {
    mopt_clear_error();
    if (!out) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_tensor_create: out is NULL");
    *out = NULL;
    size_t nbytes;
    mopt_status st = check_shape(dtype, rank, dims, &nbytes);
    if (st) return st;
    void *data = mopt_aligned_alloc(nbytes ? nbytes : 1);
    if (!data)
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes", nbytes);
    memset(data, 0, nbytes);
    st = rt_tensor_new(dtype, rank, dims, data, nbytes, true, out);
    if (st) mopt_aligned_free(data);
    return st;
}

static mopt_status wrap(mopt_dtype dtype, int rank, const int64_t *dims, const void *data,
                        size_t size, bool read_only, mopt_tensor **out) {
    mopt_clear_error();
    if (!out)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "%s: out is NULL",
                         read_only ? "mopt_tensor_wrap_const" : "mopt_tensor_wrap");
    *out = NULL;
    size_t nbytes;
    mopt_status st = check_shape(dtype, rank, dims, &nbytes);
    if (st) return st;
    if (size != nbytes)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "buffer size %zu does not match the shape (%zu bytes needed)", size,
                         nbytes);
    if (!data && nbytes)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "data is NULL for a non-empty tensor");
    /* the const is honoured by read_only: the library never writes into it */
    st = rt_tensor_new(dtype, rank, dims, (void *)(uintptr_t)data, nbytes, false, out);
    if (!st) (*out)->read_only = read_only;
    return st;
}

mopt_status mopt_tensor_wrap(mopt_dtype dtype, int rank, const int64_t *dims, void *data,
                             size_t size, mopt_tensor **out) {
    return wrap(dtype, rank, dims, data, size, false, out);
}

mopt_status mopt_tensor_wrap_const(mopt_dtype dtype, int rank, const int64_t *dims,
                                   const void *data, size_t size, mopt_tensor **out) {
    return wrap(dtype, rank, dims, data, size, true, out);
}

void mopt_tensor_destroy(mopt_tensor *t) {
    if (!t) return;
    if (t->owned) mopt_aligned_free(t->data);
    mopt_free(t);
}

mopt_dtype mopt_tensor_dtype(const mopt_tensor *t) { return t ? t->dtype : MOPT_DTYPE_UNDEFINED; }
int mopt_tensor_rank(const mopt_tensor *t) { return t ? t->rank : -1; }
int64_t mopt_tensor_dim(const mopt_tensor *t, int axis) {
    return (t && axis >= 0 && axis < t->rank) ? t->dims[axis] : -1;
}
const int64_t *mopt_tensor_dims(const mopt_tensor *t) { return t ? t->dims : NULL; }
int64_t mopt_tensor_element_count(const mopt_tensor *t) {
    return t ? ir_numel(t->rank, t->dims) : 0;
}
size_t mopt_tensor_size_bytes(const mopt_tensor *t) { return t ? t->nbytes : 0; }
void *mopt_tensor_data(mopt_tensor *t) { return t && !t->read_only ? t->data : NULL; }
const void *mopt_tensor_data_const(const mopt_tensor *t) { return t ? t->data : NULL; }

mopt_status mopt_tensor_load(const char *path, mopt_tensor **out) {
    mopt_clear_error();
    if (out) *out = NULL; /* left NULL on every failure, as the header promises */
    if (!path || !out)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_tensor_load: NULL argument");
    uint8_t *buf = NULL;
    size_t len = 0;
    mopt_status st = file_read_all(path, (size_t)1 << 40, &buf, &len);
    if (st) return st;
    ir_tensor *it = NULL;
    if (len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0)
        st = npy_read_memory(buf, len, &it);
    else
        st = onnx_import_tensor(buf, len, &it);
    mopt_free(buf);
    if (st) return mopt_fail_context(st, "reading '%s'", path);
    void *data = it->data;
    if (!data) {
        data = mopt_aligned_alloc(1);
        if (!data) {
            ir_tensor_destroy(it);
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    st = rt_tensor_new(it->dtype, it->rank, it->dims, data, it->nbytes, true, out);
    if (st) {
        if (data != it->data) mopt_aligned_free(data);
        ir_tensor_destroy(it);
        return st;
    }
    it->data = NULL;
    ir_tensor_destroy(it);
    return MOPT_OK;
}

mopt_status mopt_tensor_save_npy(const mopt_tensor *t, const char *path) {
    mopt_clear_error();
    if (!t || !path)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_tensor_save_npy: NULL argument");
    return npy_write_file(path, t->dtype, t->rank, t->dims, t->data);
}
