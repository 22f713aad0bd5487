/*
 * onnx_import.h — reading ONNX protobuf files into the IR, with the
 * project's own wire-format decoder (pb.h). Every length, count and offset is
 * bounds-checked; nesting depth is limited; errors give the byte offset.
 */
#ifndef MOPT_IO_ONNX_IMPORT_H
#define MOPT_IO_ONNX_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Decodes a ModelProto from buf[0..len) into a new graph (*out, owned by the
 * caller). External-data initializers are read from files under base_dir
 * (paths must be relative and stay inside it); base_dir NULL refuses them.
 * Graph inputs that are also initializers are not reported as inputs.
 * Does not check the graph (ir_graph_check) nor resolve operators.
 * Returns OK, PARSE, INVALID_MODEL, UNSUPPORTED, IO, LIMIT, OUT_OF_MEMORY. */
mopt_status onnx_import_model(const uint8_t *buf, size_t len, const char *base_dir, ir_graph **out);

/* Decodes one TensorProto (a .pb tensor file) into *out (owned by caller).
 * Returns OK, PARSE, UNSUPPORTED, LIMIT, OUT_OF_MEMORY. */
mopt_status onnx_import_tensor(const uint8_t *buf, size_t len, ir_tensor **out);

#endif
