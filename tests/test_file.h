/*
 * test_file.h — reading a whole file in cmocka tests (the hostile and fuzz
 * regression suites): the buffer is exactly the file's size, so that ASan
 * sees any read past its end; a missing or short file fails the test.
 * Include after <cmocka.h>.
 */
#ifndef MOPT_TESTS_TEST_FILE_H
#define MOPT_TESTS_TEST_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The file's bytes (release with free) and their count in *len. */
static inline uint8_t *test_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    if (n < 0) fail_msg("cannot size %s", path);
    fseek(f, 0, SEEK_SET);
    size_t size = n > 0 ? (size_t)n : 0;
    uint8_t *buf = malloc(size ? size : 1);
    assert_non_null(buf);
    if (size && fread(buf, 1, size, f) != size) fail_msg("short read on %s", path);
    fclose(f);
    *len = size;
    return buf;
}

#endif
