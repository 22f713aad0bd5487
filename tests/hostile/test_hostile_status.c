/*
 * test_hostile_status.c — statuses that are true (issue 17): every hostile
 * file of every folder of tests/hostile and of tests/fuzz/regressions, and thousands of
 * deterministic structural mutants of small valid models, go through the
 * public API (load from memory, mopt_model_check on a file, session create,
 * two runs on generated inputs at small shapes: fuzz_model_path.c) and
 *   - no call returns MOPT_ERR_INTERNAL ("a bug in libmopt"),
 *   - every failing call leaves a non-empty mopt_last_error(), and every
 *     problem mopt_model_check reports has a message.
 * tests/hostile/status/EXPECTED also pins the status of the first failing
 * call for the files once found returning INTERNAL or an empty message.
 *
 * The mutants are made at the protobuf wire level: the file is parsed into a
 * tree of fields (a length-delimited field is a sub-message when its bytes
 * parse as one), and each mutant changes one field: a varint set to a hostile
 * value (0, -1, 2^31, 2^62, INT64_MIN, ...), a float set to NaN/inf/-1, a
 * field deleted or repeated, a string emptied or replaced by another name of
 * the model (rewiring), a small bytes field (raw_data) with one 8- or 4-byte
 * word set to a hostile value. Lengths are re-encoded, so every mutant is
 * well-formed protobuf and reaches the importer, the checks and inference.
 */
#define MOPT_EXPERIMENTAL_API
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../fuzz/fuzz_model_path.h"
#include "../test_child.h"
#include "../test_expect.h"
#include "../test_file.h"
#include "../test_main.h"

#define STATUS_DIR "tests/hostile/status"
#define SEED_DIR "tests/hostile/status/seeds"

/* ---- a protobuf field tree ------------------------------------------------ */

typedef struct pb_msg pb_msg;
typedef struct pb_field {
    uint32_t num;
    uint8_t wt;       /* 0 varint, 1 fixed64, 2 bytes, 5 fixed32 */
    uint64_t v;       /* varint / fixed value */
    const uint8_t *p; /* bytes (wt 2) */
    size_t len;
    pb_msg *sub; /* the bytes parsed as a message, or NULL */
} pb_field;
struct pb_msg {
    pb_field *f;
    size_t n;
};

static bool rd_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    uint64_t r = 0;
    for (int s = 0; s < 64 && *p < end; s += 7) {
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

static void pb_free(pb_msg *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n; i++)
        pb_free(m->f[i].sub);
    free(m->f);
    free(m);
}

/* Parses p[0..len) as a message; NULL when it is not one. */
static pb_msg *pb_parse(const uint8_t *p, size_t len, int depth) {
    if (depth > 16) return NULL;
    const uint8_t *end = p + len;
    pb_msg *m = calloc(1, sizeof *m);
    assert_non_null(m);
    size_t cap = 0;
    while (p < end) {
        uint64_t key, v = 0;
        if (!rd_varint(&p, end, &key) || (key >> 3) == 0 || (key >> 3) > (1u << 29)) goto bad;
        pb_field f = {.num = (uint32_t)(key >> 3), .wt = (uint8_t)(key & 7)};
        switch (f.wt) {
        case 0:
            if (!rd_varint(&p, end, &f.v)) goto bad;
            break;
        case 1:
            if (end - p < 8) goto bad;
            memcpy(&f.v, p, 8);
            p += 8;
            break;
        case 5:
            if (end - p < 4) goto bad;
            memcpy(&v, p, 4);
            f.v = v;
            p += 4;
            break;
        case 2:
            if (!rd_varint(&p, end, &v) || v > (uint64_t)(end - p)) goto bad;
            f.p = p;
            f.len = (size_t)v;
            p += v;
            if (f.len) f.sub = pb_parse(f.p, f.len, depth + 1);
            break;
        default: goto bad;
        }
        if (m->n == cap) {
            cap = cap ? 2 * cap : 8;
            m->f = realloc(m->f, cap * sizeof *m->f);
            assert_non_null(m->f);
        }
        m->f[m->n++] = f;
    }
    return m;
bad:
    pb_free(m);
    return NULL;
}

/* ---- the mutations ---------------------------------------------------------- */

static const int64_t k_ints[] = {0,
                                 1,
                                 -1,
                                 2,
                                 -2,
                                 3,
                                 65536,
                                 300000000,
                                 (int64_t)1 << 31,
                                 ((int64_t)1 << 32) + 1,
                                 (int64_t)1 << 62,
                                 INT64_MAX,
                                 INT64_MIN};
#define N_INTS (sizeof k_ints / sizeof k_ints[0])
static const uint32_t k_f32[] = {0x00000000u, 0xbf800000u /* -1 */, 0x7fc00000u /* NaN */,
                                 0x7f800000u /* inf */, 0x7149f2cau /* 1e30 */};
#define N_F32 (sizeof k_f32 / sizeof k_f32[0])
static const int64_t k_words64[] = {-1, 0, (int64_t)1 << 62, INT64_MIN, INT64_MAX, 300000000};
#define N_W64 (sizeof k_words64 / sizeof k_words64[0])
static const uint32_t k_words32[] = {0xffffffffu, 0x7fc00000u, 0x7fffffffu, 0x80000000u};
#define N_W32 (sizeof k_words32 / sizeof k_words32[0])
#define N_REWIRE 3        /* names of the model a string may be replaced by */
#define MAX_WORD_BYTES 64 /* bytes fields up to this size get word mutations */

typedef enum {
    MUT_DELETE,
    MUT_REPEAT,
    MUT_INT,    /* varint / fixed64 := k_ints[arg] */
    MUT_F32,    /* fixed32 := k_f32[arg] */
    MUT_EMPTY,  /* bytes := "" */
    MUT_REWIRE, /* bytes := pool name (arg) */
    MUT_W64,    /* bytes word (arg / N_W64) := k_words64[arg % N_W64] */
    MUT_W32,    /* bytes word (arg / N_W32) := k_words32[arg % N_W32] */
} mut_kind;

typedef struct mutation {
    size_t site; /* the field, in depth-first order */
    mut_kind kind;
    size_t arg;
} mutation;

/* Short identifier-like strings of the model: the names a string field may
 * be rewired to. */
typedef struct pool {
    const uint8_t *s[64];
    size_t len[64];
    size_t n;
} pool;

static bool name_like(const uint8_t *p, size_t len) {
    if (len == 0 || len > 24) return false;
    for (size_t i = 0; i < len; i++)
        if (p[i] < 0x20 || p[i] > 0x7e) return false;
    return true;
}

static void pool_collect(const pb_msg *m, pool *pl) {
    for (size_t i = 0; i < m->n; i++) {
        const pb_field *f = &m->f[i];
        if (f->wt != 2) continue;
        if (f->sub) pool_collect(f->sub, pl);
        if (!name_like(f->p, f->len) || pl->n == 64) continue;
        bool seen = false;
        for (size_t k = 0; k < pl->n && !seen; k++)
            seen = pl->len[k] == f->len && memcmp(pl->s[k], f->p, f->len) == 0;
        if (!seen) {
            pl->s[pl->n] = f->p;
            pl->len[pl->n++] = f->len;
        }
    }
}

/* The mutations of one field (appended to *out). */
static void field_mutations(const pb_field *f, size_t site, const pool *pl, mutation **out,
                            size_t *n, size_t *cap) {
#define ADD(k, a)                                                                                  \
    do {                                                                                           \
        if (*n == *cap) {                                                                          \
            *cap = *cap ? 2 * *cap : 1024;                                                         \
            *out = realloc(*out, *cap * sizeof **out);                                             \
            assert_non_null(*out);                                                                 \
        }                                                                                          \
        (*out)[(*n)++] = (mutation){site, (k), (a)};                                               \
    } while (0)
    ADD(MUT_DELETE, 0);
    ADD(MUT_REPEAT, 0);
    if (f->wt == 0 || f->wt == 1) {
        for (size_t k = 0; k < N_INTS; k++)
            if ((uint64_t)k_ints[k] != f->v) ADD(MUT_INT, k);
    } else if (f->wt == 5) {
        for (size_t k = 0; k < N_F32; k++)
            if (k_f32[k] != f->v) ADD(MUT_F32, k);
    } else if (!f->sub) {
        if (f->len) ADD(MUT_EMPTY, 0);
        if (name_like(f->p, f->len)) {
            /* N_REWIRE other names, picked deterministically from the site */
            size_t added = 0;
            for (size_t t = 0; t < pl->n && added < N_REWIRE; t++) {
                size_t k = (site + t * 7) % pl->n;
                if (pl->len[k] == f->len && memcmp(pl->s[k], f->p, f->len) == 0) continue;
                ADD(MUT_REWIRE, k);
                added++;
            }
        } else if (f->len <= MAX_WORD_BYTES) {
            if (f->len % 8 == 0)
                for (size_t w = 0; w < f->len / 8 * N_W64; w++)
                    ADD(MUT_W64, w);
            if (f->len % 4 == 0)
                for (size_t w = 0; w < f->len / 4 * N_W32; w++)
                    ADD(MUT_W32, w);
        }
    }
#undef ADD
}

static void list_mutations(const pb_msg *m, size_t *site, const pool *pl, mutation **out, size_t *n,
                           size_t *cap) {
    for (size_t i = 0; i < m->n; i++) {
        const pb_field *f = &m->f[i];
        field_mutations(f, (*site)++, pl, out, n, cap);
        if (f->sub) list_mutations(f->sub, site, pl, out, n, cap);
    }
}

/* ---- serializing with one mutation applied --------------------------------- */

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put_varint(buf *b, uint64_t v) {
    uint8_t t[10];
    size_t k = 0;
    do {
        t[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) t[k] |= 0x80;
        k++;
    } while (v);
    put(b, t, k);
}

static void put_bytes_field(buf *b, uint32_t num, const uint8_t *p, size_t len) {
    put_varint(b, ((uint64_t)num << 3) | 2);
    put_varint(b, len);
    put(b, p, len);
}

static void put_field(buf *b, const pb_field *f, size_t *site, const mutation *mu);

static void put_msg(buf *b, const pb_msg *m, size_t *site, const mutation *mu) {
    for (size_t i = 0; i < m->n; i++)
        put_field(b, &m->f[i], site, mu);
}

/* Writes one field as is (its sub-message serialized with the mutation, which
 * may sit inside it). */
static void put_plain(buf *b, const pb_field *f, size_t *site, const mutation *mu) {
    put_varint(b, ((uint64_t)f->num << 3) | f->wt);
    if (f->wt == 0) {
        put_varint(b, f->v);
    } else if (f->wt == 1) {
        put(b, &f->v, 8);
    } else if (f->wt == 5) {
        uint32_t v = (uint32_t)f->v;
        put(b, &v, 4);
    } else if (f->sub) {
        buf inner = {0};
        put_msg(&inner, f->sub, site, mu);
        put_varint(b, inner.n);
        put(b, inner.p, inner.n);
        free(inner.p);
    } else {
        put_varint(b, f->len);
        put(b, f->p, f->len);
    }
}

static size_t count_sites(const pb_msg *m) {
    size_t n = m->n;
    for (size_t i = 0; i < m->n; i++)
        if (m->f[i].sub) n += count_sites(m->f[i].sub);
    return n;
}

static const pool *g_pool;

static void put_field(buf *b, const pb_field *f, size_t *site, const mutation *mu) {
    size_t me = (*site)++;
    if (me != mu->site) {
        put_plain(b, f, site, mu);
        return;
    }
    size_t after = *site + (f->sub ? count_sites(f->sub) : 0);
    size_t skip = SIZE_MAX; /* sub-sites are not mutated again */
    switch (mu->kind) {
    case MUT_DELETE: break;
    case MUT_REPEAT:
        put_plain(b, f, &skip, mu);
        put_plain(b, f, &skip, mu);
        break;
    case MUT_INT:
        put_varint(b, ((uint64_t)f->num << 3) | f->wt);
        if (f->wt == 0)
            put_varint(b, (uint64_t)k_ints[mu->arg]);
        else
            put(b, &k_ints[mu->arg], 8);
        break;
    case MUT_F32:
        put_varint(b, ((uint64_t)f->num << 3) | 5);
        put(b, &k_f32[mu->arg], 4);
        break;
    case MUT_EMPTY: put_bytes_field(b, f->num, f->p, 0); break;
    case MUT_REWIRE: put_bytes_field(b, f->num, g_pool->s[mu->arg], g_pool->len[mu->arg]); break;
    case MUT_W64:
    case MUT_W32: {
        uint8_t tmp[MAX_WORD_BYTES];
        memcpy(tmp, f->p, f->len);
        if (mu->kind == MUT_W64)
            memcpy(tmp + mu->arg / N_W64 * 8, &k_words64[mu->arg % N_W64], 8);
        else
            memcpy(tmp + mu->arg / N_W32 * 4, &k_words32[mu->arg % N_W32], 4);
        put_bytes_field(b, f->num, tmp, f->len);
        break;
    }
    }
    *site = after;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- running a model through the API ------------------------------------- */

typedef struct tally {
    size_t models, loaded, ran, internal, no_message, check_internal, timed_out, crashed;
    size_t status[16]; /* first failing call's status */
} tally;

static void on_problem(void *user, const char *node, const char *op, mopt_status st,
                       const char *msg) {
    int *bad = user;
    if (st == MOPT_ERR_INTERNAL || !msg || !msg[0]) {
        print_error("  check: node '%s' (%s): %s '%s'\n", node, op, mopt_status_string(st),
                    msg ? msg : "(null)");
        (*bad)++;
    }
}

/* Runs one model (data[0..len)) through load, check, session and runs, in
 * this process; adds to t and returns the status of the first failing call
 * (OK when all succeed). */
static mopt_status exercise_here(const uint8_t *data, size_t len, const char *what, const char *tmp,
                                 tally *t) {
    t->models++;
    fuzz_model_result r;
    fuzz_model_exercise_ex(data, len, FUZZ_FILL_PATTERN, &r);
    mopt_status first = r.load;
    if (r.load == MOPT_OK) t->loaded++;
    if (r.ran) {
        t->ran++;
        first = r.run[0] ? r.run[0] : r.run[1];
    }
    if (r.defect) {
        print_error("FAIL %s: an API promise was broken (above)\n", what);
        t->no_message++;
    }
    if (r.internal) {
        print_error("FAIL %s: INTERNAL from %s\n", what, r.internal_msg);
        t->internal++;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        print_error("cannot write %s\n", tmp);
        exit(2);
    }
    fclose(f);
    int bad = 0;
    size_t problems = 0;
    mopt_status cst = mopt_model_check(tmp, NULL, on_problem, &bad, &problems);
    if (cst == MOPT_ERR_INTERNAL || (cst != MOPT_OK && mopt_last_error()[0] == '\0') || bad) {
        print_error("FAIL %s: mopt_model_check %s '%s'\n", what, mopt_status_string(cst),
                    mopt_last_error());
        t->check_internal++;
    }
    t->status[(unsigned)first < 16 ? (unsigned)first : 15]++;
    return first;
}

/* exercise_here in a child process given TIME_LIMIT_MS: a model that loops
 * for ever or computes for minutes (a Loop of 2^62 trips, a RoiAlign with
 * 2^16 x 2^16 samples per bin: bounded by nothing but time, valid models)
 * is counted as timed out; a crash is a failure naming the model. The file
 * at tmp keeps the bytes of the model at fault. */
#define TIME_LIMIT_MS 1000

typedef struct exercise_args {
    const uint8_t *data;
    size_t len;
    const char *what, *tmp;
} exercise_args;

typedef struct exercise_msg {
    tally t;
    mopt_status st;
} exercise_msg;

static void exercise_child(const void *arg, void *res) {
    const exercise_args *a = arg;
    struct itimerval it = {{0, 0}, {TIME_LIMIT_MS / 1000, (TIME_LIMIT_MS % 1000) * 1000}};
    setitimer(ITIMER_REAL, &it, NULL); /* SIGALRM ends the child */
    exercise_msg *msg = res;
    memset(&msg->t, 0, sizeof msg->t);
    msg->st = exercise_here(a->data, a->len, a->what, a->tmp, &msg->t);
}

static mopt_status exercise(const uint8_t *data, size_t len, const char *what, const char *tmp,
                            tally *t) {
    exercise_msg msg;
    memset(&msg, 0, sizeof msg);
    int ws;
    size_t got = test_in_child(exercise_child, &(exercise_args){data, len, what, tmp}, &msg,
                               sizeof msg, &ws);
    if (got == sizeof msg && WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
        size_t *dst = (size_t *)t;
        const size_t *src = (const size_t *)&msg.t;
        for (size_t i = 0; i < sizeof *t / sizeof(size_t); i++)
            dst[i] += src[i];
        return msg.st;
    }
    t->models++;
    if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGALRM) {
        print_message("%s: timed out after %d ms\n", what, TIME_LIMIT_MS);
        t->timed_out++;
        return MOPT_ERR_CANCELLED;
    }
    print_error("FAIL %s: the process died (%s %d)\n", what,
                WIFSIGNALED(ws) ? "signal" : "exit status",
                WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
    t->crashed++;
    return MOPT_ERR_INTERNAL;
}

static void print_tally(const char *title, const tally *t) {
    print_message("%s: %zu models, %zu loaded, %zu ran, %zu timed out; INTERNAL %zu, broken "
                  "promises %zu, check failures %zu, crashes %zu\n",
                  title, t->models, t->loaded, t->ran, t->timed_out, t->internal, t->no_message,
                  t->check_internal, t->crashed);
    for (int s = 0; s < 16; s++)
        if (t->status[s]) print_message("  %-18s %zu\n", mopt_status_string(s), t->status[s]);
}

static char g_tmp[64];

/* The file mopt_model_check reads: in memory when /dev/shm is there (a
 * disk-backed /tmp made the test 7x slower). */
static void make_tmp(void) {
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(g_tmp, sizeof g_tmp, "%s/mopt_status_%ld.onnx", dir, (long)getpid());
}

/* ---- the tests ---------------------------------------------------------- */

/* The regression files of tests/hostile/status: each fails with the status
 * listed in EXPECTED, with a message, never INTERNAL. */
MOPT_TEST(status_regressions) {
    FILE *f = fopen(STATUS_DIR "/EXPECTED", "r");
    assert_non_null(f);
    char line[512];
    tally t = {0};
    int failures = 0;
    while (fgets(line, sizeof line, f)) {
        char name[256], want[64], path[512];
        if (line[0] == '#' || sscanf(line, "%255s %63s", name, want) != 2) continue;
        snprintf(path, sizeof path, "%s/%s", STATUS_DIR, name);
        size_t len = 0;
        uint8_t *data = test_read_file(path, &len);
        mopt_status st = exercise(data, len, name, g_tmp, &t);
        print_message("%-36s %s\n", name, mopt_status_string(st));
        mopt_status want_st = MOPT_ERR_INTERNAL;
        if (!test_status_named(want, &want_st)) fail_msg("unknown status %s", want);
        if (st != want_st) {
            print_error("FAIL %s: %s, want %s\n", name, mopt_status_string(st), want);
            failures++;
        }
        free(data);
    }
    fclose(f);
    print_tally("status regressions", &t);
    assert_true(t.models >= 6);
    assert_int_equal(t.internal + t.no_message + t.check_internal + t.crashed, 0);
    assert_int_equal(failures, 0);
}

/* Every file under the hostile folders and the fuzz regressions. */
MOPT_TEST(every_hostile_file) {
    static const struct {
        const char *dir, *suffix;
    } dirs[] = {{"tests/hostile/corpus", ".onnx"},
                {"tests/hostile/limits", ".onnx"},
                {"tests/hostile/mopt", ".mopt"},
                {STATUS_DIR, ".onnx"},
                {SEED_DIR, ".onnx"},
                {"tests/fuzz/regressions", ".onnx"},
                {"tests/fuzz/regressions", ".mopt"}};
    tally t = {0};
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        size_t n = 0;
        char **names = test_list_dir(dirs[d].dir, dirs[d].suffix, &n);
        assert_true(n > 0);
        for (size_t i = 0; i < n; i++) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dirs[d].dir, names[i]);
            size_t len = 0;
            uint8_t *data = test_read_file(path, &len);
            exercise(data, len, path, g_tmp, &t);
            free(data);
            free(names[i]);
        }
        free(names);
    }
    print_tally("hostile files", &t);
    assert_true(t.models >= 150);
    assert_int_equal(t.internal + t.no_message + t.check_internal + t.crashed, 0);
}

/* Structural mutants of the seeds (all of which load and run). */
MOPT_TEST(structural_mutants) {
    size_t n = 0;
    char **names = test_list_dir(SEED_DIR, ".onnx", &n);
    assert_true(n >= 20);
    tally t = {0};
    size_t total = 0;
    long long t0 = now_ms();
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", SEED_DIR, names[i]);
        size_t len = 0;
        uint8_t *data = test_read_file(path, &len);
        tally seed = {0};
        /* the seed itself must load and run */
        if (exercise(data, len, path, g_tmp, &seed) != MOPT_OK)
            fail_msg("seed %s does not run: %s", path, mopt_last_error());
        pb_msg *m = pb_parse(data, len, 0);
        assert_non_null(m);
        pool pl = {0};
        pool_collect(m, &pl);
        g_pool = &pl;
        mutation *mus = NULL;
        size_t nm = 0, cap = 0, site = 0;
        list_mutations(m, &site, &pl, &mus, &nm, &cap);
        for (size_t k = 0; k < nm; k++) {
            buf b = {0};
            size_t s = 0;
            put_msg(&b, m, &s, &mus[k]);
            char what[600];
            snprintf(what, sizeof what, "%s mutant %zu (site %zu kind %d arg %zu)", names[i], k,
                     mus[k].site, (int)mus[k].kind, mus[k].arg);
            exercise(b.p, b.n, what, g_tmp, &t);
            free(b.p);
        }
        total += nm;
        free(mus);
        pb_free(m);
        free(data);
        free(names[i]);
    }
    free(names);
    print_message("%zu mutants of %zu seeds in %.1f s\n", total, n, (double)(now_ms() - t0) / 1e3);
    print_tally("structural mutants", &t);
    assert_true(total >= 2000);
    assert_int_equal(t.internal + t.no_message + t.check_internal + t.crashed, 0);
}

static int setup(void **state) {
    (void)state;
    make_tmp();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    remove(g_tmp);
    return 0;
}

MOPT_TEST_MAIN_WITH(setup, teardown, cmocka_unit_test(status_regressions),
                    cmocka_unit_test(every_hostile_file), cmocka_unit_test(structural_mutants))
