/*
 * test_paths.h — what kind of file a path names, for the test runners that
 * walk case folders (tests/case_runner.c, tests/conformance/run_conformance.c,
 * tests/passes/test_fusions.c), the walk over a case folder's entries
 * (test_fusions, test_layout, test_hostile_mopt), and the list of cases
 * such a walk collects (test_fusions, test_layout). No cmocka needed.
 */
#ifndef MOPT_TESTS_TEST_PATHS_H
#define MOPT_TESTS_TEST_PATHS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Calls add(self, dir, name) for each entry of folder dir whose name ends
 * with suffix and is longer than it, or, with suffix NULL, does not start
 * with '.'; stops early when add returns 0. Returns 0, or 1 after printing
 * "PROG: cannot open DIR" when dir cannot be opened. */
static inline int list_dir(const char *prog, const char *dir, const char *suffix,
                           int (*add)(void *self, const char *dir, const char *name), void *self) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: cannot open %s\n", prog, dir);
        return 1;
    }
    size_t ls = suffix ? strlen(suffix) : 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (suffix ? l <= ls || strcmp(e->d_name + l - ls, suffix) != 0 : e->d_name[0] == '.')
            continue;
        if (!add(self, dir, e->d_name)) break;
    }
    closedir(d);
    return 0;
}

/* A case a walk found: its path and its name (the entry's). */
typedef struct test_case_dir {
    char path[1024];
    char name[256];
} test_case_dir;

/* The cases found so far (n of at most cap), and which entries are cases:
 * those whose path keep() accepts (NULL: all). */
typedef struct test_case_list {
    test_case_dir *cases;
    int n, cap;
    int (*keep)(const char *path);
} test_case_list;

/* list_dir's add for a test_case_list (self): records entry name of dir
 * when it is a case; stops when the list is full. */
static inline int test_case_add(void *self, const char *dir, const char *name) {
    test_case_list *l = self;
    test_case_dir *c = &l->cases[l->n];
    snprintf(c->path, sizeof c->path, "%s/%s", dir, name);
    snprintf(c->name, sizeof c->name, "%s", name);
    if (!l->keep || l->keep(c->path)) l->n++;
    return l->n < l->cap;
}

/* qsort order of test_case_dir: by name. */
static inline int test_case_cmp(const void *a, const void *b) {
    return strcmp(((const test_case_dir *)a)->name, ((const test_case_dir *)b)->name);
}

#endif
