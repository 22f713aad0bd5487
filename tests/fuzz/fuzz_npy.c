/*
 * fuzz_npy.c — libFuzzer target for the .npy reader (npy_read_memory, what
 * mopt_tensor_load uses for NumPy files): any input must give OK with a
 * self-consistent tensor whose every byte is readable, or a failure with a
 * message. Never a crash, leak or sanitizer report.
 */
#include "fuzz_common.h"
#include "io/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ir_tensor *t = NULL;
    mopt_status st = npy_read_memory(data, size, &t);
    fuzz_check_decoded(st, t, "npy_read_memory");
    return 0;
}
