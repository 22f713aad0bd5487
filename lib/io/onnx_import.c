/*
 * onnx_import.c — placeholder until the ONNX importer lands.
 */
#include "io/onnx_import.h"

#include "core/error.h"

mopt_status onnx_import_model(const uint8_t *buf, size_t len, const char *base_dir,
                              ir_graph **out) {
    (void)buf, (void)len, (void)base_dir;
    *out = NULL;
    return mopt_fail(MOPT_ERR_UNSUPPORTED, "ONNX import not implemented yet");
}

mopt_status onnx_import_tensor(const uint8_t *buf, size_t len, ir_tensor **out) {
    (void)buf, (void)len;
    *out = NULL;
    return mopt_fail(MOPT_ERR_UNSUPPORTED, "TensorProto import not implemented yet");
}
