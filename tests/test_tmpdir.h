/*
 * test_tmpdir.h — a scratch folder for a cmocka test group. Pass
 * test_tmpdir_setup as the group setup: it makes /tmp/mopt_test_XXXXXX
 * (its path in test_tmpdir). test_tmpdir_teardown, as the group teardown,
 * removes it with what is in it, unless MOPT_KEEP_TMP is set. test_tmp(name)
 * is the path of name inside it, in one of four static buffers used in turn
 * (four such paths may be alive at once). Include after <cmocka.h>, with
 * _POSIX_C_SOURCE 200809L (mkdtemp).
 */
#ifndef MOPT_TESTS_TEST_TMPDIR_H
#define MOPT_TESTS_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

static char test_tmpdir[64];

static inline int test_tmpdir_setup(void **state) {
    (void)state;
    snprintf(test_tmpdir, sizeof test_tmpdir, "/tmp/mopt_test_XXXXXX");
    return mkdtemp(test_tmpdir) ? 0 : -1;
}

static inline int test_tmpdir_teardown(void **state) {
    (void)state;
    if (getenv("MOPT_KEEP_TMP")) return 0;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static inline const char *test_tmp(const char *name) {
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", test_tmpdir, name);
    return buf[k];
}

#endif
