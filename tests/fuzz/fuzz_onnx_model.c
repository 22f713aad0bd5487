/*
 * fuzz_onnx_model.c — libFuzzer target for whole models through the public
 * API: mopt_model_load_from_memory (protobuf decoding, import, graph checks,
 * operator resolution, load-time inference, the optimization passes) and,
 * when the model loads, two session runs on zero inputs under a 64 MB
 * memory_limit (fuzz_model_path.c). A broken API promise or an INTERNAL
 * status aborts, so the fuzzer records it like a crash.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "fuzz_model_path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_model_result r;
    fuzz_model_exercise(data, size, &r);
    if (r.internal) { /* issue 17: INTERNAL on any input is a defect */
        fprintf(stderr, "fuzz: INTERNAL from %s\n", r.internal_msg);
        abort();
    }
    if (r.defect) abort();
    return 0;
}
