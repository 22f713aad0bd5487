/*
 * fuzz_mopt.c — libFuzzer target for the .mopt reader (lib/io/mopt_read*.c)
 * through mopt_model_load_from_memory, then the same two session runs as
 * fuzz_onnx_model (fuzz_model_path.c). The header checksum would refuse
 * nearly every mutation before the YAML is read, so the target first
 * rewrites the "%MOPT-END <16 hex>" line with the checksum of the mutated
 * header (the checksum check itself is covered by the hostile .mopt suite).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "fuzz_model_path.h"
#include "io/mopt_format.h"

static const char k_end[] = "\n%MOPT-END ";

/* Writes the true header checksum into the terminator line, if there is
 * one with room for its 16 hex digits. */
static void fix_checksum(uint8_t *b, size_t size) {
    size_t end_len = sizeof k_end - 1;
    const uint8_t *t = size > 8 ? memmem(b + 7, size - 7, k_end, end_len) : NULL;
    if (!t) return;
    size_t term = (size_t)(t - b) + 1; /* the checksum covers b[0..term) */
    if (size < term + end_len - 1 + 16) return;
    uint64_t h = mfmt_hash64(b, term);
    char *hx = (char *)b + term + end_len - 1;
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++)
        hx[i] = digits[(h >> (60 - 4 * i)) & 15];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    fix_checksum(copy, size);
    fuzz_model_result r;
    fuzz_model_exercise(copy, size, &r);
    free(copy);
    if (r.internal) { /* issue 17: INTERNAL on any input is a defect */
        fprintf(stderr, "fuzz: INTERNAL from %s\n", r.internal_msg);
        abort();
    }
    if (r.defect) abort();
    return 0;
}
