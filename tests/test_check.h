/*
 * test_check.h — what mopt_model_check reports, for the tests of it: pass
 * test_check_record as its callback, with a test_check_seen (zeroed) as
 * user. Every problem must come with a non-empty message; the first
 * TEST_CHECK_KEEP are kept (node path, op, status, message), all are counted
 * (n; n_not_ok: those whose status is not MOPT_OK, the others are warnings).
 * Include after <cmocka.h> and <mopt/mopt.h>.
 */
#ifndef MOPT_TESTS_TEST_CHECK_H
#define MOPT_TESTS_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

#define TEST_CHECK_KEEP 8

typedef struct test_check_seen {
    int n, n_not_ok;
    char nodes[TEST_CHECK_KEEP][128];
    char ops[TEST_CHECK_KEEP][64];
    char msg[TEST_CHECK_KEEP][512];
    mopt_status status[TEST_CHECK_KEEP];
} test_check_seen;

static inline void test_check_record(void *user, const char *node, const char *op, mopt_status st,
                                     const char *msg) {
    test_check_seen *s = user;
    assert_non_null(msg);
    assert_true(strlen(msg) > 0);
    if (st != MOPT_OK) s->n_not_ok++;
    if (s->n < TEST_CHECK_KEEP) {
        snprintf(s->nodes[s->n], sizeof s->nodes[0], "%s", node ? node : "");
        snprintf(s->ops[s->n], sizeof s->ops[0], "%s", op ? op : "");
        snprintf(s->msg[s->n], sizeof s->msg[0], "%s", msg);
        s->status[s->n] = st;
    }
    s->n++;
}

/* The index of the first kept problem of that node path and op (either may
 * be NULL: any), or -1. */
static inline int test_check_find(const test_check_seen *s, const char *node, const char *op) {
    for (int i = 0; i < s->n && i < TEST_CHECK_KEEP; i++)
        if ((!node || strcmp(s->nodes[i], node) == 0) && (!op || strcmp(s->ops[i], op) == 0))
            return i;
    return -1;
}

/* 1 when a kept message contains needle. */
static inline int test_check_said(const test_check_seen *s, const char *needle) {
    for (int i = 0; i < s->n && i < TEST_CHECK_KEEP; i++)
        if (strstr(s->msg[i], needle)) return 1;
    return 0;
}

#endif
