/*
 * test_paths.h — what kind of file a path names, for the test runners that
 * walk case folders (tests/case_runner.c, tests/conformance/run_conformance.c,
 * tests/passes/test_fusions.c). No cmocka needed.
 */
#ifndef MOPT_TESTS_TEST_PATHS_H
#define MOPT_TESTS_TEST_PATHS_H

#include <sys/stat.h>

/* 1 when p names a folder (links followed), else 0. */
static inline int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* 1 when p names a regular file (links followed), else 0. */
static inline int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

#endif
