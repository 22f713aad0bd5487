/*
 * fuzz_tensor_pb.c — libFuzzer target for the TensorProto reader
 * (onnx_import_tensor, what mopt_tensor_load uses for .pb files): any input
 * must give OK with a self-consistent tensor whose every byte is readable, or
 * a failure with a message. Never a crash, leak or sanitizer report.
 */
#include "fuzz_common.h"
#include "io/onnx_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ir_tensor *t = NULL;
    mopt_status st = onnx_import_tensor(data, size, &t);
    fuzz_check_decoded(st, t, "onnx_import_tensor");
    return 0;
}
