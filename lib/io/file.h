/*
 * file.h — reading whole files with clear errors, and path helpers.
 */
#ifndef MOPT_IO_FILE_H
#define MOPT_IO_FILE_H

#include <mopt/mopt.h>
#include <stddef.h>
#include <stdint.h>

/* Reads a whole file into a new buffer (*out, release with mopt_free).
 * max_size bounds the size accepted (LIMIT beyond it). */
mopt_status file_read_all(const char *path, size_t max_size, uint8_t **out, size_t *len);

/* The folder part of a path ("a/b/m.onnx" -> "a/b", "m.onnx" -> "."), newly
 * allocated; NULL when out of memory. */
char *file_dirname(const char *path);

#endif
