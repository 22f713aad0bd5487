/*
 * mopt_format.h — the .mopt file: an optimized graph saved with its weights,
 * so that loading it skips the ONNX import and the passes, and maps the
 * weights from the file instead of copying them.
 *
 * Layout (offsets count from the first byte of the file):
 *   "%MOPT-1\n"                  magic line; the number is the format version
 *   a YAML document (libyaml)    format_version, format_minor, producer,
 *                                checksum_algorithm, source {checksum, bytes},
 *                                opt_level, precision, passes (the pass report),
 *                                pass_totals, metadata (minor 1), graph
 *                                (opsets, symbols, values, inputs, outputs,
 *                                nodes with every attribute), tensors (the
 *                                tensor table: name, dtype, dims, offset, size,
 *                                checksum of each weight)
 *   "%MOPT-END <16 hex>\n"       terminator: mfmt_hash64 of every byte before it
 *   zero padding
 *   weight data                  each tensor at the 64-byte aligned offset the
 *                                table gives, zero padding between them
 * The format is described in full in docs/mopt_format.md.
 */
#ifndef MOPT_IO_MOPT_FORMAT_H
#define MOPT_IO_MOPT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "passes/passes.h"

#define MFMT_VERSION 1
/* Additions within version 1, which older readers skip (unknown keys are
 * ignored): 1 = the "metadata" mapping (producer_version, domain,
 * model_version, doc_string, graph_doc_string, props). A file without
 * format_minor is minor 0. */
#define MFMT_MINOR 3
#define MFMT_ALIGN 64
#define MFMT_NAME_CAP 48 /* pass names */

/* What a .mopt file says about the model besides its graph. */
typedef struct mfmt_meta {
    uint64_t source_checksum; /* mfmt_hash64 of the ONNX bytes the model came from */
    uint64_t source_bytes;
    int opt_level;
    char precision[8];
    char int8_exclude[4096]; /* format_minor 2: nodes kept FP32 under int8 ("" = none) */
    char int8_fallback[8];   /* format_minor 3: what they run instead, "fp32" or "bf16"
                                ("" = fp32) */
    char producer[64];       /* filled by mfmt_load ("libmopt 0.1.0"); ignored by mfmt_save */
    pass_report report;      /* the passes applied; after mfmt_load the entry names
                                point into report_names of this struct */
    char report_names[PASS_REPORT_CAP][MFMT_NAME_CAP];
} mfmt_meta;

/* The 64-bit checksum used throughout the format ("mh64": four independent
 * multiply-rotate lanes over 32-byte blocks, then a tail and an avalanche;
 * tests/hostile/gen_hostile_mopt.py has the same function in Python). */
uint64_t mfmt_hash64(const void *data, size_t len);

/* True when the bytes start like a .mopt file ("%MOPT-"). */
bool mfmt_detect(const void *data, size_t len);

/* Writes graph g and meta as a .mopt file at path. The file is written under
 * a temporary name in the same folder and renamed over path, so a model
 * mapped from path stays valid. Returns OK, IO, UNSUPPORTED (string tensors,
 * sparse attributes), LIMIT or OUT_OF_MEMORY. */
mopt_status mfmt_save(const ir_graph *g, const mfmt_meta *meta, const char *path);

/* Reads the .mopt image base[0..size) into a new graph (*out) and *meta.
 * Initializers point into the image (IR_VALUE_BORROWED). The image is handed
 * over: on success the graph releases it when destroyed (release(base,
 * size)); on failure it is released before returning. release may be NULL
 * when the caller keeps the image alive longer than the graph. base must be
 * 64-byte aligned. verify_weights checks every tensor's checksum; the header
 * checksum and all structure are always checked. Returns OK, PARSE
 * (truncation, bad checksum, unknown version, malformed YAML or header),
 * INVALID_MODEL (bad offsets, overlapping or misaligned tensors, indices out
 * of range, inconsistent types), UNSUPPORTED, LIMIT or OUT_OF_MEMORY; the
 * message names what is wrong (key path, tensor, line). */
mopt_status mfmt_load(void *base, size_t size, void (*release)(void *base, size_t size),
                      bool verify_weights, ir_graph **out, mfmt_meta *meta);

/* Maps the file at path read-only (MAP_PRIVATE) when it is a .mopt file:
 * base and size receive the mapping (release it with mfmt_unmap). When the file is
 * not a .mopt file (or cannot be opened: the caller's ordinary read reports
 * that), returns OK with a NULL base. Returns OK or IO. */
mopt_status mfmt_map_file(const char *path, void **base, size_t *size);
void mfmt_unmap(void *base, size_t size);

#endif
