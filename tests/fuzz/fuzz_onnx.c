/*
 * fuzz_onnx.c — libFuzzer target for the ONNX importer: each input is loaded
 * as a model through the public API (import, graph checks, operator
 * resolution, load-time inference) and decoded as a standalone TensorProto.
 * Any outcome but a crash, a sanitizer report or a leak is fine; a failure
 * must leave a message. Built only with clang and -Dfuzz=true.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <mopt/mopt.h>

#include "io/onnx_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mopt_model *m = NULL;
    mopt_status st = mopt_model_load_from_memory(data, size, NULL, &m);
    if (st != MOPT_OK && mopt_last_error()[0] == '\0') abort();
    mopt_model_destroy(m);
    ir_tensor *t = NULL;
    if (onnx_import_tensor(data, size, &t) == MOPT_OK) ir_tensor_destroy(t);
    return 0;
}
