/*
 * test_yaml_tree.c — the YAML tree reader shared by the .mopt reader and the
 * options loader (lib/io/yaml_tree.c): node kinds, text, tags and line
 * numbers; each limit (aliases, documents, depth, collection keys, memory)
 * refused with the right problem and line, keeping what was read before;
 * syntax errors, file input, allocation failure; and the options loader's
 * memory bound seen through the public call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"
#include "core/alloc.h"
#include "core/error.h"
#include "io/yaml_tree.h"

static const ytree_limits k_lim = {.first_line = 1, .max_depth = 16};

static mopt_status read_text(ytree *t, const ytree_limits *lim, const char *text, ytree_error *e) {
    memset(t, 0, sizeof *t);
    return ytree_read_string(t, lim, text, strlen(text), e);
}

/* Reads text expecting a parse error of kind problem at line (0: any line)
 * and returns the error; t is left to the caller to inspect and free. */
static ytree_error refused(ytree *t, const ytree_limits *lim, const char *text,
                           ytree_problem problem, int line) {
    ytree_error e;
    assert_int_equal(read_text(t, lim, text, &e), MOPT_ERR_PARSE);
    assert_int_equal(e.problem, problem);
    if (line) assert_int_equal(e.line, line);
    return e;
}

/* Reads text expecting success; t is left to the caller to inspect and free. */
static void accepted(ytree *t, const ytree_limits *lim, const char *text) {
    ytree_error e;
    assert_int_equal(read_text(t, lim, text, &e), MOPT_OK);
    assert_int_equal(e.problem, YTREE_OK);
}

/* n lines of fmt, each formatted with its number modulo mod (a new buffer). */
static char *many_lines(const char *fmt, size_t n, size_t mod, size_t *len) {
    size_t cap = n * 16 + 1;
    char *text = malloc(cap);
    assert_non_null(text);
    *len = 0;
    for (size_t i = 0; i < n; i++)
        *len += (size_t)snprintf(text + *len, cap - *len, fmt, i % mod);
    return text;
}

MOPT_TEST(yaml_tree_builds_nodes_with_lines) {
    const char *text = "a: 1\nb: [x, \"y\"]\n\nc: {d: !hex \"00\", e: ~}\nf: \"n\\0l\"\n";
    ytree t;
    accepted(&t, &k_lim, text);
    assert_int_equal(t.n_docs, 1);
    const ytree_node *root = t.docs[0];
    assert_int_equal(root->kind, YTREE_MAP);
    assert_int_equal(root->n, 8);
    const ytree_node *a = ytree_get(root, "a");
    assert_non_null(a);
    assert_int_equal(a->kind, YTREE_SCALAR);
    assert_string_equal(a->s, "1");
    assert_true(a->plain);
    assert_int_equal(a->line, 1);
    const ytree_node *b = ytree_get(root, "b");
    assert_int_equal(b->kind, YTREE_SEQ);
    assert_int_equal(b->n, 2);
    assert_true(b->kids[0]->plain);
    assert_false(b->kids[1]->plain);
    assert_string_equal(b->kids[1]->s, "y");
    assert_int_equal(b->line, 2);
    const ytree_node *c = ytree_get(root, "c");
    assert_int_equal(c->kind, YTREE_MAP);
    assert_int_equal(c->line, 4);
    const ytree_node *d = ytree_get(c, "d");
    assert_non_null(d->tag);
    assert_string_equal(d->tag, "!hex");
    assert_null(b->tag);
    assert_true(ytree_is_null(ytree_get(c, "e")));
    assert_false(ytree_is_null(d));
    assert_true(ytree_is_null(ytree_get(c, "missing")));
    assert_null(ytree_get(b, "x")); /* not a mapping */
    const ytree_node *f = ytree_get(root, "f");
    assert_int_equal(f->len, 3); /* the NUL is kept, with the length */
    assert_memory_equal(f->s, "n\0l", 3);
    assert_int_equal(f->line, 5);
    assert_string_equal(ytree_kind_name(YTREE_MAP), "a mapping");
    assert_string_equal(ytree_kind_name(YTREE_SEQ), "a sequence");
    assert_string_equal(ytree_kind_name(YTREE_SCALAR), "a scalar");
    ytree_free(&t);

    /* lines count from first_line (a .mopt header starts on line 2) */
    ytree_limits lim = k_lim;
    lim.first_line = 2;
    accepted(&t, &lim, "a: 1\nb: 2\n");
    assert_int_equal(ytree_get(t.docs[0], "b")->line, 3);
    ytree_free(&t);
}

MOPT_TEST(yaml_tree_refuses_aliases_and_keeps_what_came_before) {
    ytree t;
    refused(&t, &k_lim, "a: &x 1\nb: *x\nc: 3\n", YTREE_ALIAS, 2);
    assert_int_equal(t.n_docs, 1);
    assert_int_equal(t.docs[0]->n, 3); /* a, 1, b: the key without its value */
    assert_string_equal(t.docs[0]->kids[2]->s, "b");
    ytree_free(&t);
}

MOPT_TEST(yaml_tree_counts_documents) {
    const char *two = "a: 1\n---\nb: 2\n";
    ytree t;
    accepted(&t, &k_lim, two);
    assert_int_equal(t.n_docs, 2);
    assert_non_null(ytree_get(t.docs[1], "b"));
    ytree_free(&t);
    ytree_limits lim = k_lim;
    lim.max_documents = 1;
    refused(&t, &lim, two, YTREE_DOCUMENTS, 2);
    assert_int_equal(t.n_docs, 1);
    ytree_free(&t);
    /* an empty stream has no document; an empty document is a null scalar */
    accepted(&t, &lim, "# nothing\n");
    assert_int_equal(t.n_docs, 0);
    ytree_free(&t);
    accepted(&t, &lim, "---\n");
    assert_int_equal(t.n_docs, 1);
    assert_true(ytree_is_null(t.docs[0]));
    ytree_free(&t);
}

MOPT_TEST(yaml_tree_bounds_depth) {
    ytree_limits lim = k_lim;
    lim.max_depth = 3;
    ytree t;
    accepted(&t, &lim, "[[[1]]]");
    ytree_free(&t);
    refused(&t, &lim, "[[\n[\n[1]]]]", YTREE_DEPTH, 3);
    ytree_free(&t);
    /* no caller gets more than YTREE_MAX_DEPTH, whatever it asks */
    lim.max_depth = 1 << 20;
    char deep[2 * YTREE_MAX_DEPTH + 8];
    memset(deep, '[', YTREE_MAX_DEPTH + 1);
    memset(deep + YTREE_MAX_DEPTH + 1, ']', YTREE_MAX_DEPTH + 1);
    deep[2 * YTREE_MAX_DEPTH + 2] = '\0';
    refused(&t, &lim, deep, YTREE_DEPTH, 0);
    ytree_free(&t);
}

MOPT_TEST(yaml_tree_collection_keys) {
    const char *text = "a: 1\n? [k]\n: 2\n";
    ytree t;
    accepted(&t, &k_lim, text);
    assert_int_equal(t.docs[0]->kids[2]->kind, YTREE_SEQ);
    ytree_free(&t);
    ytree_limits lim = k_lim;
    lim.scalar_keys = true;
    refused(&t, &lim, text, YTREE_KEY, 2);
    ytree_free(&t);
}

MOPT_TEST(yaml_tree_bounds_memory) {
    size_t n = 2000, len;
    char *text = many_lines("k%zu: v\n", n, 100000, &len);
    ytree_limits lim = k_lim;
    lim.max_bytes = 16 << 10;
    ytree t = {0};
    ytree_error e;
    assert_int_equal(ytree_read_string(&t, &lim, text, len, &e), MOPT_ERR_LIMIT);
    assert_int_equal(e.problem, YTREE_SIZE);
    assert_true(e.line > 1 && e.line < n);
    assert_true(t.bytes <= lim.max_bytes);
    assert_int_equal(t.n_docs, 1);
    assert_true(t.docs[0]->n > 10); /* what fitted is kept */
    ytree_free(&t);
    lim.max_bytes = 0; /* no limit */
    assert_int_equal(ytree_read_string(&t, &lim, text, len, &e), MOPT_OK);
    assert_int_equal(t.docs[0]->n, 2 * n);
    ytree_free(&t);
    free(text);
}

MOPT_TEST(yaml_tree_reports_syntax_errors) {
    ytree t;
    ytree_error e = refused(&t, &k_lim, "a: 1\nb: [1,\nc: 2\n", YTREE_SYNTAX, 0);
    assert_non_null(e.what);
    assert_true(e.line >= 3);
    assert_true(e.column >= 1);
    assert_non_null(ytree_get(t.docs[0], "a"));
    ytree_free(&t);
    refused(&t, &k_lim, "a: \xff\n", YTREE_SYNTAX, 0);
    ytree_free(&t);
}

MOPT_TEST(yaml_tree_reads_files) {
    FILE *f = tmpfile();
    assert_non_null(f);
    fputs("# options\nthreads: 3\nlist: [a, b]\n", f);
    rewind(f);
    ytree t = {0};
    ytree_error e;
    assert_int_equal(ytree_read_file(&t, &k_lim, f, &e), MOPT_OK);
    fclose(f);
    assert_string_equal(ytree_get(t.docs[0], "threads")->s, "3");
    assert_int_equal(ytree_get(t.docs[0], "list")->line, 3);
    ytree_free(&t);
}

MOPT_TEST(yaml_tree_out_of_memory) {
    ytree t;
    ytree_error e;
    mopt_alloc_fail_after(0);
    mopt_status st = read_text(&t, &k_lim, "a: 1\n", &e);
    mopt_alloc_fail_after(-1);
    assert_int_equal(st, MOPT_ERR_OUT_OF_MEMORY);
    assert_int_equal(e.problem, YTREE_MEMORY);
    assert_int_equal(t.n_docs, 0);
    ytree_free(&t);
}

/* The options loader holds at most 1 MiB of tree: far more than any options
 * file, far less than a hostile stream could make it hold. */
MOPT_TEST(yaml_tree_options_are_bounded) {
    size_t n = 20000, len;
    char *text = many_lines("threads: %zu\n", n, 8, &len);
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_load_yaml_string(o, text, len), MOPT_ERR_LIMIT);
    assert_non_null(strstr(mopt_last_error(), "more YAML than an options file holds"));
    assert_int_equal(mopt_options_load_yaml_string(o, text, 1000 * 11), MOPT_OK);
    int64_t v = -1;
    assert_int_equal(mopt_options_get_int(o, "threads", &v), MOPT_OK);
    assert_int_equal(v, 999 % 8); /* the last of the 1000 lines wins */
    mopt_options_destroy(o);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(yaml_tree_builds_nodes_with_lines),
        cmocka_unit_test(yaml_tree_refuses_aliases_and_keeps_what_came_before),
        cmocka_unit_test(yaml_tree_counts_documents),
        cmocka_unit_test(yaml_tree_bounds_depth),
        cmocka_unit_test(yaml_tree_collection_keys),
        cmocka_unit_test(yaml_tree_bounds_memory),
        cmocka_unit_test(yaml_tree_reports_syntax_errors),
        cmocka_unit_test(yaml_tree_reads_files),
        cmocka_unit_test(yaml_tree_out_of_memory),
        cmocka_unit_test(yaml_tree_options_are_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
