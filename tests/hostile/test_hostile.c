/*
 * test_hostile.c — the hostile-model suite: every file of tests/hostile/corpus
 * (written by gen_hostile.py) must be refused by mopt_model_load and by
 * mopt_model_load_from_memory with a non-OK status and a message, and with the
 * status listed in corpus/EXPECTED where one is given. Also: every proper
 * prefix of a valid model is refused, and single-byte corruptions of valid
 * models never crash (ASan/UBSan builds make that check sharp).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../test_file.h"
#include "../test_main.h"

#define CORPUS "tests/hostile/corpus"
#define VALID_SMALL "tests/unit/data/relu_add.onnx"
#define VALID_ATTRS "tests/unit/data/import_attrs.onnx"

static const struct {
    const char *name;
    mopt_status st;
} k_status_names[] = {
    {"PARSE", MOPT_ERR_PARSE},
    {"INVALID_MODEL", MOPT_ERR_INVALID_MODEL},
    {"UNSUPPORTED", MOPT_ERR_UNSUPPORTED},
    {"LIMIT", MOPT_ERR_LIMIT},
    {"IO", MOPT_ERR_IO},
    {"TYPE", MOPT_ERR_TYPE},
    {"SHAPE", MOPT_ERR_SHAPE},
};

/* Expected status for a corpus file from EXPECTED: -1 for "any". */
static int expected_status(const char *file) {
    size_t len = 0;
    char *text = (char *)test_read_file(CORPUS "/EXPECTED", &len);
    char *copy = realloc(text, len + 1);
    assert_non_null(copy);
    copy[len] = '\0';
    int result = -2;
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256], status[64];
        if (line[0] == '#' || sscanf(line, "%255s %63s", name, status) != 2) continue;
        if (strcmp(name, file) != 0) continue;
        if (strcmp(status, "any") == 0) result = -1;
        for (size_t i = 0; i < sizeof k_status_names / sizeof k_status_names[0]; i++)
            if (strcmp(status, k_status_names[i].name) == 0) result = (int)k_status_names[i].st;
        break;
    }
    free(copy);
    if (result == -2) fail_msg("%s is not listed in %s/EXPECTED", file, CORPUS);
    return result;
}

MOPT_TEST(hostile_corpus_is_refused) {
    size_t n = 0;
    char **names = test_list_dir(CORPUS, ".onnx", &n);
    assert_true(n >= 30);
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", CORPUS, names[i]);
        int want = expected_status(names[i]);
        mopt_model *m = NULL;
        mopt_status st = mopt_model_load(path, NULL, &m);
        const char *msg = mopt_last_error();
        print_message("%-34s %-14s %s\n", names[i], mopt_status_string(st), msg);
        if (st == MOPT_OK || m != NULL || msg[0] == '\0' || (want >= 0 && (int)st != want)) {
            print_error("FAIL %s: status %d (%s), want %d, message '%s'\n", names[i], st,
                        mopt_status_string(st), want, msg);
            failures++;
        }
        mopt_model_destroy(m);
        /* the same bytes from memory (no folder: external data refused) */
        size_t len = 0;
        uint8_t *buf = test_read_file(path, &len);
        m = NULL;
        st = mopt_model_load_from_memory(buf, len, NULL, &m);
        if (st == MOPT_OK || m != NULL || mopt_last_error()[0] == '\0') {
            print_error("FAIL %s from memory: status %d\n", names[i], st);
            failures++;
        }
        mopt_model_destroy(m);
        free(buf);
        free(names[i]);
    }
    free(names);
    assert_int_equal(failures, 0);
}

MOPT_TEST(hostile_every_prefix_is_refused) {
    size_t len = 0;
    uint8_t *buf = test_read_file(VALID_SMALL, &len);
    assert_true(len > 50);
    for (size_t cut = 0; cut < len; cut++) {
        /* a copy of exactly `cut` bytes, so ASan sees any read past the end */
        uint8_t *p = malloc(cut ? cut : 1);
        assert_non_null(p);
        memcpy(p, buf, cut);
        mopt_model *m = NULL;
        mopt_status st = mopt_model_load_from_memory(p, cut, NULL, &m);
        if (st == MOPT_OK || mopt_last_error()[0] == '\0')
            fail_msg("prefix of %zu/%zu bytes: status %d, message '%s'", cut, len, st,
                     mopt_last_error());
        assert_null(m);
        free(p);
    }
    /* the whole model reaches operator resolution: loads, or names its ops */
    mopt_model *m = NULL;
    mopt_status st = mopt_model_load_from_memory(buf, len, NULL, &m);
    assert_true(st == MOPT_OK ||
                (st == MOPT_ERR_UNSUPPORTED &&
                 (strstr(mopt_last_error(), "Relu") || strstr(mopt_last_error(), "Add"))));
    mopt_model_destroy(m);
    free(buf);
}

/* Every byte set to a few hostile values: never a crash, and any failure has
 * a message. */
static void corrupt_each_byte(const char *path) {
    size_t len = 0;
    uint8_t *buf = test_read_file(path, &len);
    static const uint8_t values[] = {0x00, 0xff, 0x80, 0x7f, 0x01};
    uint8_t *p = malloc(len);
    assert_non_null(p);
    for (size_t i = 0; i < len; i++) {
        for (size_t k = 0; k < sizeof values; k++) {
            memcpy(p, buf, len);
            if (p[i] == values[k]) continue;
            p[i] = values[k];
            mopt_model *m = NULL;
            mopt_status st = mopt_model_load_from_memory(p, len, NULL, &m);
            if (st != MOPT_OK && mopt_last_error()[0] == '\0')
                fail_msg("%s with byte %zu set to 0x%02x: status %d without a message", path, i,
                         values[k], st);
            if (st != MOPT_OK) assert_null(m);
            mopt_model_destroy(m);
        }
    }
    free(p);
    free(buf);
}

MOPT_TEST(hostile_byte_corruptions_do_not_crash) {
    corrupt_each_byte(VALID_SMALL);
    corrupt_each_byte(VALID_ATTRS);
}

MOPT_TEST_MAIN(cmocka_unit_test(hostile_corpus_is_refused),
               cmocka_unit_test(hostile_every_prefix_is_refused),
               cmocka_unit_test(hostile_byte_corruptions_do_not_crash))
