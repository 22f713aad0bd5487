/*
 * test_hostile_mopt.c — feeds every file of the hostile .mopt corpus
 * (tests/hostile/mopt/, written by gen_hostile_mopt.py) to libmopt through
 * the public API, from the file (mapped) and from memory, with and without
 * verify_weights (meson suite "hostile"; meant to run under ASan+UBSan).
 * valid_* files must load; weights_* files must be rejected only when the
 * weights are verified; every other file must be rejected with a non-OK
 * status and a message, and nothing may crash or leak.
 *
 * usage: test_hostile_mopt CORPUS_DIR
 */
#include <mopt/mopt.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_paths.h"

static int g_failures;

static void check(int ok, const char *file, const char *what) {
    if (ok) return;
    g_failures++;
    fprintf(stderr, "FAIL %s: %s\n", file, what);
}

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            unsigned char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Loads the file both ways; returns the status of the file load and checks
 * that the memory load agrees and that failures leave a message. */
static mopt_status load_both(const char *path, const char *name, const mopt_options *o, char *msg,
                             size_t cap) {
    mopt_model *m = NULL;
    mopt_status st = mopt_model_load(path, o, &m);
    snprintf(msg, cap, "%s", mopt_last_error());
    check(st == MOPT_OK ? m != NULL : m == NULL, name, "output handle and status disagree");
    if (st != MOPT_OK) check(msg[0] != '\0', name, "failure without a message");
    mopt_model_destroy(m);
    size_t len = 0;
    unsigned char *buf = slurp(path, &len);
    check(buf != NULL, name, "cannot read the file");
    if (buf) {
        mopt_model *mm = NULL;
        mopt_status st2 = mopt_model_load_from_memory(buf, len, o, &mm);
        check(st2 == st, name, "loading from memory gives another status than from the file");
        if (st2 != MOPT_OK) check(mopt_last_error()[0] != '\0', name, "memory load: no message");
        mopt_model_destroy(mm);
        free(buf);
    }
    return st;
}

typedef struct name_list {
    char **names;
    size_t n;
    bool oom;
} name_list;

/* list_dir callback: keeps a copy of the name */
static int add_name(void *self, const char *dir, const char *name) {
    (void)dir;
    name_list *l = self;
    char **nn = realloc(l->names, (l->n + 1) * sizeof *l->names);
    if (!nn) return !(l->oom = true);
    l->names = nn;
    l->names[l->n++] = strdup(name);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_hostile_mopt CORPUS_DIR\n");
        return 2;
    }
    name_list list = {0};
    if (list_dir("test_hostile_mopt", argv[1], ".mopt", add_name, &list) || list.oom) return 1;
    char **names = list.names;
    size_t n = list.n;
    qsort(names, n, sizeof *names, cmp_name);
    mopt_options *verify = NULL, *plain = NULL;
    if (mopt_options_create(&verify) || mopt_options_create(&plain) ||
        mopt_options_set_int(verify, "verify_weights", 1) ||
        mopt_options_set_int(plain, "verify_weights", 0)) {
        fprintf(stderr, "options: %s\n", mopt_last_error());
        return 1;
    }
    size_t rejected = 0, valid = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096], msg[2048], msg2[2048];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
        mopt_status sv = load_both(path, names[i], verify, msg, sizeof msg);
        mopt_status sp = load_both(path, names[i], plain, msg2, sizeof msg2);
        if (strncmp(names[i], "valid_", 6) == 0) {
            check(sv == MOPT_OK && sp == MOPT_OK, names[i], msg[0] ? msg : msg2);
            valid++;
            printf("%-36s loads\n", names[i]);
        } else if (strncmp(names[i], "weights_", 8) == 0) {
            check(sv != MOPT_OK, names[i], "accepted with verify_weights=1");
            check(sp == MOPT_OK, names[i], "rejected without verify_weights");
            rejected++;
            printf("%-36s %s (verify_weights=1): %s\n", names[i], mopt_status_string(sv), msg);
        } else {
            check(sv != MOPT_OK, names[i], "accepted with verify_weights=1");
            check(sp != MOPT_OK, names[i], "accepted with verify_weights=0");
            check(sv == sp, names[i], "the status depends on verify_weights");
            rejected++;
            printf("%-36s %s: %s\n", names[i], mopt_status_string(sv), msg);
        }
        free(names[i]);
    }
    free(names);
    mopt_options_destroy(verify);
    mopt_options_destroy(plain);
    check(valid >= 1, argv[1], "no valid_* control file");
    check(rejected >= 15, argv[1], "fewer than 15 hostile files");
    printf("%zu hostile files rejected, %zu valid files loaded, %d failure(s)\n", rejected, valid,
           g_failures);
    return g_failures ? 1 : 0;
}
