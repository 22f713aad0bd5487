/*
 * test_file.h — files for cmocka tests (the hostile and fuzz regression
 * suites): reading a whole file into a buffer of exactly its size, so that
 * ASan sees any read past its end (a missing or short file fails the test),
 * and listing a folder's files in name order. Include after <cmocka.h>.
 */
#ifndef MOPT_TESTS_TEST_FILE_H
#define MOPT_TESTS_TEST_FILE_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static inline int test_cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in folder dir, sorted, leaving out those starting with '.' and,
 * when suffix is given, those not ending with it (after at least one
 * character); *n is their count. Release each name and the array with free. */
static inline char **test_list_dir(const char *dir, const char *suffix, size_t *n) {
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open %s", dir);
    char **names = NULL;
    size_t count = 0, cap = 0;
    size_t ls = suffix ? strlen(suffix) : 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || (suffix && (l <= ls || strcmp(e->d_name + l - ls, suffix))))
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
            assert_non_null(names);
        }
        names[count] = strdup(e->d_name);
        assert_non_null(names[count]);
        count++;
    }
    closedir(d);
    if (count) qsort(names, count, sizeof *names, test_cmp_names);
    *n = count;
    return names;
}

#endif
