/*
 * npy.h — NumPy .npy reading and writing (versions 1.0-3.0, little-endian,
 * C order) for every dtype libmopt has. Bounds-checked: a bad header,
 * truncated data or an absurd shape gives PARSE with the offset.
 */
#ifndef MOPT_IO_NPY_H
#define MOPT_IO_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Parses a whole .npy image into a new tensor (*out owned by the caller). */
mopt_status npy_read_memory(const uint8_t *buf, size_t len, ir_tensor **out);
/* Reads a .npy file. */
mopt_status npy_read_file(const char *path, ir_tensor **out);
/* Writes a .npy (version 1.0) file. */
mopt_status npy_write_file(const char *path, mopt_dtype dtype, int32_t rank, const int64_t *dims,
                           const void *data);

#endif
