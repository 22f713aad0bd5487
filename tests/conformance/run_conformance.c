/*
 * run_conformance.c — runs the ONNX backend node tests (DATA/<case>/model.onnx
 * and test_data_set_N/{input,output}_K.pb) through libmopt's public API and
 * classifies every case:
 *   pass         every output has the expected dtype, shape and values;
 *   fail         a wrong dtype, shape or value;
 *   unsupported  the library says MOPT_ERR_UNSUPPORTED (an op, attribute or
 *                dtype it does not implement, a sequence/map/optional type,
 *                an op of another domain), at load, input read or run time;
 *   error        any other failure; a crash (signal) or a timeout of the
 *                forked child that runs the case is an error too, and always
 *                fails the gate.
 * Each case runs in its own forked child (several at once), so a crash is
 * caught and reported. Values are compared as ONNX's backend runner does:
 * |got - want| <= atol + rtol * |want| with rtol 1e-3, atol 1e-7 (NaN equals
 * NaN; bfloat16 outputs use rtol >= 2^-6), unless tolerances.txt names the
 * case. A case belongs to the op of its single node; an "_expanded" case (the
 * op's function body) belongs to the op of the case it expands.
 *
 * The gate (--gate): exit 1 when a case of an op the library lists as
 * supported (mopt_supported_op_name) fails or errors and is not in the
 * known-failures file, when a listed case no longer fails (the list must stay
 * true), or when any case crashes or times out.
 *
 * usage: run_conformance [--data DIR] [--report FILE.md] [--results FILE.tsv]
 *                        [--known-failures FILE] [--tolerances FILE]
 *                        [--jobs N] [--timeout SEC] [--opt-level N]
 *                        [--filter SUBSTRING] [--gate] [--no-fork] [-v]
 * --no-fork runs the cases in-process (debuggers, leak checkers).
 * The environment variable MOPT_CONFORMANCE_DATA overrides --data.
 */
#define _POSIX_C_SOURCE 200809L
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mopt/mopt.h>

#include "../test_elem.h"
#include "../test_paths.h"

#define MAX_IO 64
#define MSG_CAP 1024
#define OP_CAP 96

enum { R_PASS, R_FAIL, R_UNSUPPORTED, R_ERROR, R_CRASH, R_TIMEOUT, R_COUNT };
static const char *const g_result_names[R_COUNT] = {"pass",  "fail",  "unsupported",
                                                    "error", "crash", "timeout"};

typedef struct conf_case {
    char *name;
    char op[OP_CAP];   /* the op the case belongs to ("Conv", "ai.onnx.ml.Binarizer") */
    int non_tensor_io; /* a graph input/output is a sequence, map or optional */
    double rtol, atol;
    int result;
    char msg[MSG_CAP];
    int known; /* listed in known_failures */
    pid_t pid;
    int fd;
    double t0;
} conf_case;

static conf_case *g_cases;
static size_t g_n_cases, g_cap_cases;
static const char *g_data;
static int g_opt_level = -1;
static int g_verbose;

/* ---- small helpers ------------------------------------------------------ */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            unsigned char *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0) break;
        n += r;
    }
    fclose(f);
    *size = n;
    return buf;
}

/* ---- a minimal protobuf walk over model.onnx (to name the case's op) ----- */

typedef struct pb_span {
    const unsigned char *p, *end;
} pb_span;

static int pb_varint(pb_span *s, uint64_t *v) {
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (s->p >= s->end) return -1;
        unsigned char b = *s->p++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

/* Next field: its number, wire type and (for length-delimited) its bytes. */
static int pb_next(pb_span *s, uint32_t *field, int *wire, pb_span *sub, uint64_t *val) {
    uint64_t key;
    if (pb_varint(s, &key)) return -1;
    *field = (uint32_t)(key >> 3);
    *wire = (int)(key & 7);
    switch (*wire) {
    case 0: return pb_varint(s, val);
    case 1:
        if (s->end - s->p < 8) return -1;
        s->p += 8;
        return 0;
    case 5:
        if (s->end - s->p < 4) return -1;
        s->p += 4;
        return 0;
    case 2: {
        uint64_t len;
        if (pb_varint(s, &len) || len > (uint64_t)(s->end - s->p)) return -1;
        sub->p = s->p;
        sub->end = s->p + len;
        s->p += len;
        return 0;
    }
    default: return -1;
    }
}

static void span_str(pb_span sp, char *out, size_t cap) {
    size_t n = (size_t)(sp.end - sp.p);
    if (n >= cap) n = cap - 1;
    memcpy(out, sp.p, n);
    out[n] = 0;
}

/* Does a ValueInfoProto have a non-tensor type (TypeProto field 1 = tensor)? */
static int value_info_non_tensor(pb_span vi) {
    uint32_t f;
    int w;
    pb_span sub;
    uint64_t v;
    while (vi.p < vi.end) {
        if (pb_next(&vi, &f, &w, &sub, &v)) return 0;
        if (f == 2 && w == 2) { /* type */
            pb_span t = sub;
            while (t.p < t.end) {
                pb_span tsub;
                if (pb_next(&t, &f, &w, &tsub, &v)) return 0;
                if (w == 2 && f != 1 && f != 6) return 1; /* 6: denotation */
            }
        }
    }
    return 0;
}

/* The op of the model's first node ("Op" or "domain.Op"), and whether any
 * graph input/output is not a tensor. Returns 0 on success. */
static int model_first_op(const char *path, char *op, size_t cap, int *non_tensor) {
    size_t size = 0;
    unsigned char *buf = read_file(path, &size);
    if (!buf) return -1;
    pb_span m = {buf, buf + size}, sub;
    uint32_t f;
    int w, found = 0;
    uint64_t v;
    *non_tensor = 0;
    while (m.p < m.end) {
        if (pb_next(&m, &f, &w, &sub, &v)) break;
        if (f != 7 || w != 2) continue; /* ModelProto.graph */
        pb_span g = sub, gs;
        while (g.p < g.end) {
            if (pb_next(&g, &f, &w, &gs, &v)) break;
            if (w != 2) continue;
            if (f == 1 && !found) { /* GraphProto.node */
                char type[64] = "", domain[64] = "";
                pb_span n = gs, ns;
                while (n.p < n.end) {
                    if (pb_next(&n, &f, &w, &ns, &v)) break;
                    if (w == 2 && f == 4) span_str(ns, type, sizeof type);
                    if (w == 2 && f == 7) span_str(ns, domain, sizeof domain);
                }
                if (domain[0] && strcmp(domain, "ai.onnx") != 0)
                    snprintf(op, cap, "%s.%s", domain, type);
                else
                    snprintf(op, cap, "%s", type);
                found = 1;
            } else if (f == 11 || f == 12) { /* input, output */
                if (value_info_non_tensor(gs)) *non_tensor = 1;
            }
        }
    }
    free(buf);
    return found ? 0 : -1;
}

/* ---- case discovery ----------------------------------------------------- */

static int cmp_case(const void *a, const void *b) {
    return strcmp(((const conf_case *)a)->name, ((const conf_case *)b)->name);
}

static int find_cases(const char *filter) {
    DIR *d = opendir(g_data);
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (filter && !strstr(e->d_name, filter)) continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s/model.onnx", g_data, e->d_name);
        if (!file_exists(p)) continue;
        if (g_n_cases == g_cap_cases) {
            g_cap_cases = g_cap_cases ? g_cap_cases * 2 : 1024;
            conf_case *c = realloc(g_cases, g_cap_cases * sizeof *c);
            if (!c) return -1;
            g_cases = c;
        }
        conf_case *c = &g_cases[g_n_cases++];
        memset(c, 0, sizeof *c);
        c->name = strdup(e->d_name);
        c->rtol = 1e-3;
        c->atol = 1e-7;
        c->fd = -1;
        if (!c->name) return -1;
    }
    closedir(d);
    qsort(g_cases, g_n_cases, sizeof *g_cases, cmp_case);
    for (size_t i = 0; i < g_n_cases; i++) {
        conf_case *c = &g_cases[i];
        char p[4096], own[OP_CAP];
        snprintf(p, sizeof p, "%s/%s/model.onnx", g_data, c->name);
        if (model_first_op(p, own, sizeof own, &c->non_tensor_io)) snprintf(own, sizeof own, "?");
        snprintf(c->op, sizeof c->op, "%s", own);
        /* test_x_expanded, test_x_expanded_ver18: the op of test_x */
        const char *x = strstr(c->name, "_expanded");
        if (x) {
            char base[512];
            int n = (int)(x - c->name);
            snprintf(base, sizeof base, "%.*s", n, c->name);
            snprintf(p, sizeof p, "%s/%s/model.onnx", g_data, base);
            int nt;
            if (model_first_op(p, own, sizeof own, &nt) == 0)
                snprintf(c->op, sizeof c->op, "%s", own);
        }
    }
    return 0;
}

/* ---- running one case (in the child) ------------------------------------ */

static void dims_str(const mopt_tensor *t, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < mopt_tensor_rank(t) && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "",
                              (long long)mopt_tensor_dim(t, i));
}

/* 0 when equal within tolerance; else 1 with msg set. */
static int compare(const conf_case *c, int k, const mopt_tensor *got, const mopt_tensor *want,
                   char *msg) {
    mopt_dtype gt = mopt_tensor_dtype(got), wt = mopt_tensor_dtype(want);
    if (gt != wt) {
        snprintf(msg, MSG_CAP, "output %d: dtype %s, expected %s", k, mopt_dtype_name(gt),
                 mopt_dtype_name(wt));
        return 1;
    }
    int same = mopt_tensor_rank(got) == mopt_tensor_rank(want);
    for (int i = 0; same && i < mopt_tensor_rank(got); i++)
        same = mopt_tensor_dim(got, i) == mopt_tensor_dim(want, i);
    if (!same) {
        char a[256], b[256];
        dims_str(got, a, sizeof a);
        dims_str(want, b, sizeof b);
        snprintf(msg, MSG_CAP, "output %d: shape [%s], expected [%s]", k, a, b);
        return 1;
    }
    int64_t n = mopt_tensor_element_count(want);
    const void *g = mopt_tensor_data_const(got), *w = mopt_tensor_data_const(want);
    if (test_is_float(wt)) {
        double rtol = c->rtol, atol = c->atol;
        if (wt == MOPT_DTYPE_BF16 && rtol < 1.0 / 64) rtol = 1.0 / 64;
        for (int64_t i = 0; i < n; i++) {
            double a = test_elem(g, gt, i), b = test_elem(w, wt, i);
            if (isnan(a) && isnan(b)) continue;
            if (isinf(b) || isinf(a)) {
                if (a == b) continue;
            } else if (fabs(a - b) <= atol + rtol * fabs(b)) {
                continue;
            }
            snprintf(msg, MSG_CAP,
                     "output %d: element %lld is %.9g, expected %.9g (atol %g, rtol %g)", k,
                     (long long)i, a, b, atol, rtol);
            return 1;
        }
        return 0;
    }
    size_t es = mopt_dtype_size(wt);
    if (es == 0) {
        snprintf(msg, MSG_CAP, "output %d: cannot compare dtype %s", k, mopt_dtype_name(wt));
        return 1;
    }
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *pa = (const unsigned char *)g + (size_t)i * es;
        const unsigned char *pb = (const unsigned char *)w + (size_t)i * es;
        if (memcmp(pa, pb, es) != 0) {
            int64_t va = 0, vb = 0;
            memcpy(&va, pa, es < 8 ? es : 8);
            memcpy(&vb, pb, es < 8 ? es : 8);
            snprintf(msg, MSG_CAP, "output %d: element %lld differs (bits %llx, expected %llx)", k,
                     (long long)i, (unsigned long long)va, (unsigned long long)vb);
            return 1;
        }
    }
    return 0;
}

static int classify(mopt_status st) { return st == MOPT_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_ERROR; }

/* Keeps the message after "loading '<path>': " so reasons group well. */
static void set_lib_msg(char *msg, const char *what, mopt_status st) {
    const char *e = mopt_last_error();
    const char *q = strstr(e, "model.onnx': ");
    if (q) e = q + strlen("model.onnx': ");
    snprintf(msg, MSG_CAP, "%s: %s: %s", what, mopt_status_string(st), e);
}

static int load_set(const char *dir, const char *prefix, mopt_tensor **out, int *n_out, char *msg,
                    mopt_status *st_out) {
    *n_out = 0;
    for (int n = 0; n < MAX_IO; n++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s_%d.pb", dir, prefix, n);
        if (!file_exists(p)) break;
        mopt_status st = mopt_tensor_load(p, &out[n]);
        if (st != MOPT_OK) {
            char what[128];
            snprintf(what, sizeof what, "reading %s_%d.pb", prefix, n);
            set_lib_msg(msg, what, st);
            *st_out = st;
            return -1;
        }
        *n_out = n + 1;
    }
    return 0;
}

static int run_case(const conf_case *c, char *msg) {
    char p[4096];
    msg[0] = 0;
    mopt_options *opts = NULL;
    if (mopt_options_create(&opts) != MOPT_OK) return R_ERROR;
    mopt_status ost = mopt_options_set_int(opts, "threads", 1);
    if (!ost && g_opt_level >= 0) ost = mopt_options_set_int(opts, "opt_level", g_opt_level);
    if (ost) {
        set_lib_msg(msg, "options", ost);
        mopt_options_destroy(opts);
        return R_ERROR;
    }
    snprintf(p, sizeof p, "%s/%s/model.onnx", g_data, c->name);
    /* The up-front check lists every problem node; a model whose problems
     * are all unsupported functionality is "unsupported" before it runs. */
    mopt_status st = mopt_model_check(p, opts, NULL, NULL, NULL);
    if (st == MOPT_ERR_UNSUPPORTED) {
        set_lib_msg(msg, "check", st);
        mopt_options_destroy(opts);
        return R_UNSUPPORTED;
    }
    mopt_model *model = NULL;
    st = mopt_model_load(p, opts, &model);
    if (st != MOPT_OK) {
        set_lib_msg(msg, "load", st);
        mopt_options_destroy(opts);
        /* Sequence/map/optional types are unsupported whatever the status. */
        return c->non_tensor_io ? R_UNSUPPORTED : classify(st);
    }
    mopt_session *sess = NULL;
    st = mopt_session_create(model, opts, &sess);
    int result = R_PASS;
    if (st != MOPT_OK) {
        set_lib_msg(msg, "session", st);
        result = R_ERROR;
    }
    size_t n_in = mopt_model_io_count(model, MOPT_INPUT);
    int n_sets = 0;
    for (int set = 0; result == R_PASS && set < 1000; set++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%s/test_data_set_%d", g_data, c->name, set);
        if (!is_dir(dir)) break;
        n_sets++;
        mopt_tensor *inputs[MAX_IO] = {0}, *expected[MAX_IO] = {0}, *outputs[MAX_IO] = {0};
        int ni = 0, no = 0;
        if (load_set(dir, "input", inputs, &ni, msg, &st) ||
            load_set(dir, "output", expected, &no, msg, &st)) {
            result = c->non_tensor_io ? R_UNSUPPORTED : classify(st);
        } else if ((size_t)ni != n_in) {
            snprintf(msg, MSG_CAP, "data set %d has %d inputs, the model %zu", set, ni, n_in);
            result = R_ERROR;
        } else if (no == 0 || (size_t)no > mopt_model_io_count(model, MOPT_OUTPUT)) {
            snprintf(msg, MSG_CAP, "data set %d has %d outputs, the model %zu", set, no,
                     mopt_model_io_count(model, MOPT_OUTPUT));
            result = R_ERROR;
        }
        /* Twice: the first run of a shape signature plans memory, the
         * second runs from the plan. */
        for (int rep = 0; result == R_PASS && rep < 2; rep++) {
            st = mopt_session_run(sess, n_in, NULL, (const mopt_tensor *const *)inputs, (size_t)no,
                                  NULL, outputs);
            if (st != MOPT_OK) {
                set_lib_msg(msg, "run", st);
                result = classify(st);
                break;
            }
            for (int k = 0; k < no && result == R_PASS; k++) {
                if (compare(c, k, outputs[k], expected[k], msg)) result = R_FAIL;
                if (rep == 0 && mopt_tensor_size_bytes(outputs[k]))
                    memset(mopt_tensor_data(outputs[k]), 0xa5, mopt_tensor_size_bytes(outputs[k]));
            }
        }
        for (int k = 0; k < MAX_IO; k++) {
            mopt_tensor_destroy(inputs[k]);
            mopt_tensor_destroy(expected[k]);
            mopt_tensor_destroy(outputs[k]);
        }
    }
    if (result == R_PASS && n_sets == 0) {
        snprintf(msg, MSG_CAP, "no test_data_set_* folder");
        result = R_ERROR;
    }
    mopt_session_destroy(sess);
    mopt_model_destroy(model);
    mopt_options_destroy(opts);
    return result;
}

/* ---- the process pool --------------------------------------------------- */

static int start_case(conf_case *c) {
    int fds[2];
    if (pipe(fds)) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        char msg[MSG_CAP];
        int r = run_case(c, msg);
        char out[MSG_CAP + 8];
        int n = snprintf(out, sizeof out, "%d %s", r, msg);
        if (n > (int)sizeof out - 1) n = (int)sizeof out - 1;
        ssize_t wr = write(fds[1], out, (size_t)n);
        (void)wr;
        close(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    c->pid = pid;
    c->fd = fds[0];
    c->t0 = now_s();
    return 0;
}

/* Reads what a finished child reported (fewer than PIPE_BUF bytes). */
static void finish_case(conf_case *c, int wstatus) {
    char buf[MSG_CAP + 16];
    ssize_t n = read(c->fd, buf, sizeof buf - 1);
    close(c->fd);
    c->fd = -1;
    c->pid = 0;
    if (WIFSIGNALED(wstatus)) {
        c->result = R_CRASH;
        snprintf(c->msg, sizeof c->msg, "crashed with signal %d (%s)", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)));
        return;
    }
    if (n <= 0 || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        c->result = R_CRASH;
        snprintf(c->msg, sizeof c->msg, "child exited with status %d without a result",
                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
        return;
    }
    buf[n] = 0;
    char *end = NULL;
    long r = strtol(buf, &end, 10);
    c->result = (r >= 0 && r < R_COUNT) ? (int)r : R_ERROR;
    if (end && *end == ' ') end++;
    snprintf(c->msg, sizeof c->msg, "%s", end ? end : "");
    for (char *q = c->msg; *q; q++)
        if (*q == '\n' || *q == '\t') *q = ' ';
}

/* --no-fork: every case in this process, one after another (for debuggers
 * and leak checkers; a crash then ends the run). */
static void run_all_inline(void) {
    for (size_t i = 0; i < g_n_cases; i++) {
        conf_case *c = &g_cases[i];
        c->result = run_case(c, c->msg);
        for (char *q = c->msg; *q; q++)
            if (*q == '\n' || *q == '\t') *q = ' ';
        if (g_verbose)
            fprintf(stderr, "%-60s %-11s %s\n", c->name, g_result_names[c->result], c->msg);
    }
}

static void run_all(int jobs, double timeout) {
    size_t next = 0, running = 0, done = 0;
    while (done < g_n_cases) {
        while (running < (size_t)jobs && next < g_n_cases) {
            conf_case *c = &g_cases[next++];
            if (start_case(c)) {
                c->result = R_ERROR;
                snprintf(c->msg, sizeof c->msg, "fork failed: %s", strerror(errno));
                done++;
            } else {
                running++;
            }
        }
        int wstatus = 0;
        pid_t pid = waitpid(-1, &wstatus, WNOHANG);
        if (pid > 0) {
            for (size_t i = 0; i < next; i++) {
                if (g_cases[i].pid != pid) continue;
                finish_case(&g_cases[i], wstatus);
                if (g_verbose)
                    fprintf(stderr, "%-60s %-11s %s\n", g_cases[i].name,
                            g_result_names[g_cases[i].result], g_cases[i].msg);
                running--;
                done++;
                break;
            }
            continue;
        }
        double t = now_s();
        for (size_t i = 0; i < next; i++) {
            conf_case *c = &g_cases[i];
            if (c->pid > 0 && t - c->t0 > timeout) {
                kill(c->pid, SIGKILL);
                waitpid(c->pid, &wstatus, 0);
                close(c->fd);
                c->fd = -1;
                c->pid = 0;
                c->result = R_TIMEOUT;
                snprintf(c->msg, sizeof c->msg, "no result after %.0f s", timeout);
                running--;
                done++;
            }
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

/* ---- lists: tolerances, known failures, supported ops ------------------- */

static conf_case *case_named(const char *name) {
    conf_case key = {.name = (char *)name};
    return bsearch(&key, g_cases, g_n_cases, sizeof *g_cases, cmp_case);
}

/* Lines "case rest..." ('#' comments). Calls fn for each case line. */
static int read_list(const char *path, int (*fn)(const char *name, const char *rest, int line)) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "run_conformance: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[2048];
    int ln = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '#' || *s == '\n' || *s == 0) continue;
        char *e = s;
        while (*e && *e != ' ' && *e != '\t' && *e != '\n')
            e++;
        char *rest = e;
        if (*rest) *rest++ = 0;
        while (*rest == ' ' || *rest == '\t')
            rest++;
        rest[strcspn(rest, "\n")] = 0;
        if (fn(s, rest, ln)) bad = 1;
    }
    fclose(f);
    return bad ? -1 : 0;
}

static int on_tolerance(const char *name, const char *rest, int line) {
    double r, a;
    if (sscanf(rest, "%lf %lf", &r, &a) != 2) {
        fprintf(stderr, "tolerances: line %d: want 'case rtol atol reason'\n", line);
        return 1;
    }
    conf_case *c = case_named(name);
    if (c) {
        c->rtol = r;
        c->atol = a;
    }
    return 0;
}

static int g_known_stale;
static const char *g_filter; /* with a filter, listed cases may lie outside it */

static int on_known(const char *name, const char *rest, int line) {
    if (!rest[0]) {
        fprintf(stderr, "known failures: line %d: '%s' needs a reason\n", line, name);
        return 1;
    }
    conf_case *c = case_named(name);
    if (!c && g_filter) return 0;
    if (!c) {
        if (!g_known_stale) fprintf(stderr, "\n");
        fprintf(stderr, "GATE: known failure '%s' (line %d) is not a case of this data\n", name,
                line);
        g_known_stale++;
        return 0;
    }
    c->known = 1;
    return 0;
}

static char **g_supported;
static size_t g_n_supported;

static int is_supported(const char *op) {
    for (size_t i = 0; i < g_n_supported; i++)
        if (strcmp(g_supported[i], op) == 0) return 1;
    return 0;
}

/* ---- report --------------------------------------------------------------- */

typedef struct op_row {
    char op[OP_CAP];
    int n[R_COUNT];
    int total;
} op_row;

static int cmp_row(const void *a, const void *b) {
    return strcmp(((const op_row *)a)->op, ((const op_row *)b)->op);
}

static void write_report(const char *path, double secs, int counts[R_COUNT]) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "run_conformance: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    op_row *rows = calloc(g_n_cases ? g_n_cases : 1, sizeof *rows);
    size_t n_rows = 0;
    if (!rows) {
        fclose(f);
        return;
    }
    for (size_t i = 0; i < g_n_cases; i++) {
        size_t r = 0;
        while (r < n_rows && strcmp(rows[r].op, g_cases[i].op) != 0)
            r++;
        if (r == n_rows) snprintf(rows[n_rows++].op, OP_CAP, "%s", g_cases[i].op);
        rows[r].n[g_cases[i].result]++;
        rows[r].total++;
    }
    qsort(rows, n_rows, sizeof *rows, cmp_row);
    fprintf(f, "# ONNX backend node tests\n\n");
    fprintf(f,
            "Data: `%s`. %zu cases in %.1f s: %d passed, %d failed, %d unsupported, "
            "%d errors, %d crashes, %d timeouts.\n\n",
            g_data, g_n_cases, secs, counts[R_PASS], counts[R_FAIL], counts[R_UNSUPPORTED],
            counts[R_ERROR], counts[R_CRASH], counts[R_TIMEOUT]);
    fprintf(f, "| op | supported | cases | passed | failed | unsupported | error |\n");
    fprintf(f, "|---|---|---:|---:|---:|---:|---:|\n");
    for (size_t r = 0; r < n_rows; r++)
        fprintf(f, "| %s | %s | %d | %d | %d | %d | %d |\n", rows[r].op,
                is_supported(rows[r].op) ? "yes" : "no", rows[r].total, rows[r].n[R_PASS],
                rows[r].n[R_FAIL], rows[r].n[R_UNSUPPORTED],
                rows[r].n[R_ERROR] + rows[r].n[R_CRASH] + rows[r].n[R_TIMEOUT]);
    static const int order[] = {R_CRASH, R_TIMEOUT, R_ERROR, R_FAIL, R_UNSUPPORTED};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        int r = order[k];
        if (!counts[r]) continue;
        fprintf(f, "\n## %s (%d)\n\n| case | op | message |\n|---|---|---|\n", g_result_names[r],
                counts[r]);
        for (size_t i = 0; i < g_n_cases; i++) {
            const conf_case *c = &g_cases[i];
            if (c->result != r) continue;
            fprintf(f, "| %s%s | %s | ", c->name, c->known ? " (known)" : "", c->op);
            for (const char *q = c->msg; *q; q++)
                fputs(*q == '|' ? "\\|" : (char[2]){*q, 0}, f);
            fprintf(f, " |\n");
        }
    }
    free(rows);
    fclose(f);
}

static void write_results(const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return;
    for (size_t i = 0; i < g_n_cases; i++)
        fprintf(f, "%s\t%s\t%s\t%s\n", g_cases[i].name, g_cases[i].op,
                g_result_names[g_cases[i].result], g_cases[i].msg);
    fclose(f);
}

static void usage(void) {
    fprintf(stderr,
            "usage: run_conformance [--data DIR] [--report FILE.md] [--results FILE.tsv]\n"
            "                       [--known-failures FILE] [--tolerances FILE] [--jobs N]\n"
            "                       [--timeout SEC] [--opt-level N] [--filter SUBSTRING]\n"
            "                       [--gate] [--no-fork] [-v]\n"
            "MOPT_CONFORMANCE_DATA overrides --data.\n");
}

int main(int argc, char **argv) {
    const char *report = NULL, *results = NULL, *known = NULL, *tolerances = NULL;
    const char *filter = NULL;
    int jobs = (int)sysconf(_SC_NPROCESSORS_ONLN), gate = 0, no_fork = 0;
    double timeout = 120;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--gate") == 0) {
            gate = 1;
        } else if (strcmp(a, "--no-fork") == 0) {
            no_fork = 1;
        } else if (strcmp(a, "-v") == 0) {
            g_verbose = 1;
        } else if (!v) {
            usage();
            return 2;
        } else if (strcmp(a, "--data") == 0) {
            g_data = v, i++;
        } else if (strcmp(a, "--report") == 0) {
            report = v, i++;
        } else if (strcmp(a, "--results") == 0) {
            results = v, i++;
        } else if (strcmp(a, "--known-failures") == 0) {
            known = v, i++;
        } else if (strcmp(a, "--tolerances") == 0) {
            tolerances = v, i++;
        } else if (strcmp(a, "--jobs") == 0) {
            jobs = atoi(v), i++;
        } else if (strcmp(a, "--timeout") == 0) {
            timeout = atof(v), i++;
        } else if (strcmp(a, "--opt-level") == 0) {
            g_opt_level = atoi(v), i++;
        } else if (strcmp(a, "--filter") == 0) {
            filter = v, i++;
        } else {
            usage();
            return 2;
        }
    }
    if (jobs < 1) jobs = 1;
    const char *env = getenv("MOPT_CONFORMANCE_DATA");
    if (env && env[0]) g_data = env;
    if (!g_data || !g_data[0] || !is_dir(g_data)) {
        fprintf(stderr,
                "run_conformance: no ONNX node test data%s%s%s.\n"
                "  Generate it with: python3 tests/conformance/gen_node_data.py DIR\n"
                "  (from the onnx version pinned in scripts/install-deps.sh), then pass\n"
                "  --data DIR, set MOPT_CONFORMANCE_DATA=DIR or configure meson with\n"
                "  -Dconformance_data=DIR. The conformance test never passes without data.\n",
                g_data && g_data[0] ? " at '" : "", g_data && g_data[0] ? g_data : "",
                g_data && g_data[0] ? "'" : "");
        return 1;
    }
    g_filter = filter;
    if (find_cases(filter) || g_n_cases == 0) {
        fprintf(stderr, "run_conformance: no cases (folders with model.onnx) in '%s'\n", g_data);
        return 1;
    }
    if (tolerances && read_list(tolerances, on_tolerance)) return 1;
    if (known && read_list(known, on_known)) return 1;
    g_n_supported = mopt_supported_op_count();
    g_supported = calloc(g_n_supported ? g_n_supported : 1, sizeof *g_supported);
    if (!g_supported) return 1;
    for (size_t i = 0; i < g_n_supported; i++) {
        const char *s = mopt_supported_op_name(i);
        g_supported[i] = strdup(s ? s : "");
        if (!g_supported[i]) return 1;
    }

    signal(SIGPIPE, SIG_IGN);
    double t0 = now_s();
    if (no_fork)
        run_all_inline();
    else
        run_all(jobs, timeout);
    double secs = now_s() - t0;

    int counts[R_COUNT] = {0};
    for (size_t i = 0; i < g_n_cases; i++)
        counts[g_cases[i].result]++;
    if (report) write_report(report, secs, counts);
    if (results) write_results(results);

    /* The gate. */
    int gate_fail = g_known_stale;
    for (size_t i = 0; i < g_n_cases; i++) {
        const conf_case *c = &g_cases[i];
        int bad = c->result == R_FAIL || c->result == R_ERROR;
        int sup = is_supported(c->op);
        if (c->result == R_CRASH || c->result == R_TIMEOUT) {
            printf("GATE: %s (%s): %s: %s\n", c->name, c->op, g_result_names[c->result], c->msg);
            gate_fail++;
        } else if (c->known && !bad) {
            printf("GATE: %s (%s) is in the known failures but now is '%s': remove it from "
                   "the list\n",
                   c->name, c->op, g_result_names[c->result]);
            gate_fail++;
        } else if (bad && sup && !c->known) {
            printf("GATE: %s (%s): %s: %s\n", c->name, c->op, g_result_names[c->result], c->msg);
            gate_fail++;
        } else if (g_verbose && bad) {
            printf("note: %s (%s): %s: %s\n", c->name, c->op, g_result_names[c->result], c->msg);
        }
    }
    int n_ops_pass = 0;
    {
        /* ops with at least one passing case, for the summary */
        for (size_t i = 0; i < g_n_supported; i++) {
            for (size_t j = 0; j < g_n_cases; j++)
                if (g_cases[j].result == R_PASS && strcmp(g_cases[j].op, g_supported[i]) == 0) {
                    n_ops_pass++;
                    break;
                }
        }
    }
    printf("run_conformance: %zu cases of %s in %.1f s (%d jobs); %d errors, %d crashes, "
           "%d timeouts; %zu ops supported, %d of them pass a case; pass rate %.1f%%%s%s\n",
           g_n_cases, g_data, secs, jobs, counts[R_ERROR], counts[R_CRASH], counts[R_TIMEOUT],
           g_n_supported, n_ops_pass, 100.0 * counts[R_PASS] / (double)g_n_cases,
           report ? "; report " : "", report ? report : "");
    if (gate)
        printf("gate: %s (%d problem%s)\n", gate_fail ? "FAILED" : "ok", gate_fail,
               gate_fail == 1 ? "" : "s");
    printf("%d passed, %d failed, %d skipped\n", counts[R_PASS],
           counts[R_FAIL] + counts[R_ERROR] + counts[R_CRASH] + counts[R_TIMEOUT],
           counts[R_UNSUPPORTED]);
    for (size_t i = 0; i < g_n_supported; i++)
        free(g_supported[i]);
    free(g_supported);
    for (size_t i = 0; i < g_n_cases; i++)
        free(g_cases[i].name);
    free(g_cases);
    return gate && gate_fail ? 1 : 0;
}
