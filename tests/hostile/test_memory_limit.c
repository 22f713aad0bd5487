/*
 * test_memory_limit.c — memory_limit bounds what libmopt really takes
 * (issue 17, "bounded memory"), measured as the process's peak RSS, not as
 * the library's own count:
 *   - a ~200-byte ConstantOfShape model whose output is 6 GB, under a 50 MB
 *     limit: LIMIT, and the RSS barely moves;
 *   - a 64 MB output under a 100 MB limit: handed over without a copy (peak
 *     RSS under 64 MB + slack) and no longer charged to the session;
 *   - an Expand to a 256 MB intermediate reduced to a scalar, under 50 MB;
 *   - TopK over 4M floats, whose kernel needs 32 MB of scratch while every
 *     tensor it makes is a few bytes: LIMIT under 24 MB (naming the scratch),
 *     OK under 64 MB with the session's memory_peak_bytes counting the scratch;
 *   - loading a model whose 32 MB weight does not fit in 16 MB;
 *   - an unknown attribute holding 100k graphs (a 4 MB file; 422 MB of RSS
 *     before the subgraph cap), and two attributes of 3000 graphs each (the
 *     cap counts the whole model);
 *   - `mopt run` refusing to generate a [1,1,50000,50000] random input
 *     under --memory-limit 1G, and a [1024,1024,1024,1024] one under its
 *     default limit (half of the physical memory).
 * Every case runs in a forked child (the CLI cases in the mopt process), so
 * its peak RSS is its own: the child resets its high-water mark
 * (/proc/self/clear_refs) once the model bytes are built, and reports VmHWM
 * minus VmRSS at that moment; the CLI cases report the child's ru_maxrss.
 * Each must stay within its limit plus the stated slack (32 MB; --slack-mb
 * for sanitizer builds). A table of the figures is printed.
 * The models are written here as ONNX bytes by a small protobuf writer.
 * usage: test_memory_limit [--slack-mb N] [MOPT_CLI]; without MOPT_CLI the
 * CLI cases are not registered.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <fcntl.h>

#define MOPT_EXPERIMENTAL_API
#include <mopt/mopt.h>

#include "../test_child.h"
#include "../test_main.h"
#include "../test_pb_writer.h"

#define MB ((int64_t)1 << 20)

static const char *g_cli;
static int64_t g_slack = 32 * MB;

/* An int64 initializer of n values. */
static void init_i64(buf *g, const char *name, const int64_t *v, int64_t n) {
    buf t = {0};
    f_int(&t, 1, (uint64_t)n); /* dims: [n] */
    f_int(&t, 2, 7);           /* INT64 */
    f_str(&t, 8, name);
    f_bytes(&t, 9, v, (size_t)n * sizeof *v);
    f_msg(g, 5, &t);
}

/* A node; attrs (may be empty) are appended AttributeProto fields. */
static void node(buf *g, const char *op, const char *const *ins, int n_in, const char *const *outs,
                 int n_out, buf *attrs) {
    buf nd = {0};
    for (int i = 0; i < n_in; i++)
        f_str(&nd, 1, ins[i]);
    for (int i = 0; i < n_out; i++)
        f_str(&nd, 2, outs[i]);
    f_str(&nd, 3, op);
    f_str(&nd, 4, op);
    if (attrs && attrs->n) put(&nd, attrs->p, attrs->n);
    if (attrs) {
        free(attrs->p);
        *attrs = (buf){0};
    }
    f_msg(g, 1, &nd);
}

/* An attribute of type GRAPHS holding n graphs, each named by a 38-character
 * string (42 bytes in the file). */
static void graphs_attr(buf *attrs, const char *name, int n) {
    buf a = {0};
    f_str(&a, 1, name);
    f_int(&a, 20, 10); /* GRAPHS */
    buf gr = {0};
    f_str(&gr, 2, "an-unknown-attribute-graph-of-38-chars");
    for (int i = 0; i < n; i++)
        f_bytes(&a, 11, gr.p, gr.n);
    free(gr.p);
    f_msg(attrs, 5, &a);
}

/* ---- the models ---- */

/* ConstantOfShape of n floats (1.5e9: 6 GB). */
static buf model_constant_of_shape(int64_t n) {
    buf g = {0};
    init_i64(&g, "shape", &n, 1);
    node(&g, "ConstantOfShape", (const char *[]){"shape"}, 1, (const char *[]){"y"}, 1, NULL);
    value_info(&g, 12, "y", 1, 1, &n);
    return model_proto(&g);
}

static buf model_expand_reduce(void) {
    buf g = {0};
    static const int64_t shape[2] = {8192, 8192}, one[2] = {1, 1};
    init_i64(&g, "shape", shape, 2);
    node(&g, "Expand", (const char *[]){"x", "shape"}, 2, (const char *[]){"big"}, 1, NULL);
    buf a = {0}, attrs = {0};
    f_str(&a, 1, "keepdims");
    f_int(&a, 3, 0);
    f_int(&a, 20, 2); /* INT */
    f_msg(&attrs, 5, &a);
    node(&g, "ReduceSum", (const char *[]){"big"}, 1, (const char *[]){"y"}, 1, &attrs);
    value_info(&g, 11, "x", 1, 2, one);
    value_info(&g, 12, "y", 1, 0, NULL);
    return model_proto(&g);
}

#define TOPK_N ((int64_t)4 << 20)

static buf model_topk(void) {
    buf g = {0};
    static const int64_t k = 1, xs[2] = {1, TOPK_N}, ys[2] = {1, 1};
    init_i64(&g, "k", &k, 1);
    node(&g, "TopK", (const char *[]){"x", "k"}, 2, (const char *[]){"v", "i"}, 2, NULL);
    value_info(&g, 11, "x", 1, 2, xs);
    value_info(&g, 12, "v", 1, 2, ys);
    value_info(&g, 12, "i", 7, 2, ys);
    return model_proto(&g);
}

/* Relu over a weight of n zero floats (raw_data, n * 4 bytes in the file). */
static buf model_relu_weight(int64_t n) {
    buf g = {0}, t = {0};
    f_int(&t, 1, (uint64_t)n);
    f_int(&t, 2, 1); /* FLOAT */
    f_str(&t, 8, "w");
    float *zeros = calloc((size_t)n, sizeof *zeros);
    if (!zeros) abort();
    f_bytes(&t, 9, zeros, (size_t)n * sizeof *zeros);
    free(zeros);
    f_msg(&g, 5, &t);
    node(&g, "Relu", (const char *[]){"w"}, 1, (const char *[]){"y"}, 1, NULL);
    value_info(&g, 12, "y", 1, 1, &n);
    return model_proto(&g);
}

/* Relu with unknown GRAPHS attributes of the given sizes. */
static buf model_relu_graphs(int n_attrs, int graphs_each) {
    buf g = {0}, attrs = {0};
    static const int64_t one = 1;
    for (int i = 0; i < n_attrs; i++) {
        char name[16];
        snprintf(name, sizeof name, "junk%d", i);
        graphs_attr(&attrs, name, graphs_each);
    }
    node(&g, "Relu", (const char *[]){"x"}, 1, (const char *[]){"y"}, 1, &attrs);
    value_info(&g, 11, "x", 1, 1, &one);
    value_info(&g, 12, "y", 1, 1, &one);
    return model_proto(&g);
}

static buf model_relu_input(int rank, const int64_t *dims) {
    buf g = {0};
    node(&g, "Relu", (const char *[]){"x"}, 1, (const char *[]){"y"}, 1, NULL);
    value_info(&g, 11, "x", 1, rank, dims);
    value_info(&g, 12, "y", 1, rank, dims);
    return model_proto(&g);
}

/* ---- measuring in a child ---- */

typedef struct result {
    int status;   /* mopt_status, or the CLI's exit code */
    int64_t peak; /* peak RSS growth (or the CLI's peak RSS), bytes */
    int64_t stat; /* the session's memory_peak_bytes after a run */
    int64_t held; /* the session's memory_bytes after the run */
    char msg[600];
} result;

/* kB value of a "Key:" line of /proc/self/status, or -1. */
static int64_t status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    int64_t v = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0) v = strtoll(line + n, NULL, 10);
    fclose(f);
    return v;
}

/* Resets the peak RSS (VmHWM) to the current RSS; returns that RSS in
 * bytes, or -1 when the kernel does not allow it. */
static int64_t rss_mark(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    int ok = fputs("5", f) >= 0;
    ok = fclose(f) == 0 && ok;
    return ok ? status_kb("VmRSS:") * 1024 : -1;
}

typedef void (*case_fn)(const void *arg, result *r);

typedef struct child_case {
    case_fn fn;
    const void *arg;
} child_case;

static void child_body(const void *arg, void *res) {
    const child_case *c = arg;
    c->fn(c->arg, res);
}

/* Runs fn in a child and returns its result. */
static result in_child(case_fn fn, const void *arg) {
    result r;
    memset(&r, 0, sizeof r);
    r.status = -1;
    int ws;
    size_t got = test_in_child(child_body, &(child_case){fn, arg}, &r, sizeof r, &ws);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    assert_int_equal(got, sizeof r);
    return r;
}

/* ---- API cases ---- */

typedef struct api_case {
    buf bytes;
    int64_t limit; /* memory_limit, 0 = none */
    int64_t input_elems;
    int input_rank;
    int64_t input_dims[2];
} api_case;

static void run_api_case(const void *arg, result *r) {
    const api_case *c = arg;
    mopt_options *o = NULL;
    mopt_model *m = NULL;
    mopt_session *s = NULL;
    mopt_tensor *in = NULL, *out[2] = {NULL, NULL};
    if (mopt_options_create(&o) || mopt_options_set_int(o, "memory_limit", c->limit) ||
        mopt_options_set_int(o, "threads", 1))
        return;
    if (c->input_rank) {
        if (mopt_tensor_create(MOPT_DTYPE_F32, c->input_rank, c->input_dims, &in)) return;
        float *x = mopt_tensor_data(in);
        for (int64_t i = 0; i < c->input_elems; i++)
            x[i] = (float)(i % 1000) * 0.001f;
    }
    int64_t base = rss_mark();
    if (base < 0) {
        snprintf(r->msg, sizeof r->msg, "cannot reset the peak RSS (/proc/self/clear_refs)");
        return;
    }
    mopt_status st = mopt_model_load_from_memory(c->bytes.p, c->bytes.n, o, &m);
    if (!st) st = mopt_session_create(m, o, &s);
    if (!st) {
        size_t n_out = mopt_model_io_count(m, MOPT_OUTPUT);
        st = mopt_session_run(s, in ? 1 : 0, NULL, (const mopt_tensor *const *)&in, n_out, NULL,
                              out);
        if (!st) st = mopt_session_get_stat(s, "memory_peak_bytes", &r->stat);
        if (!st) st = mopt_session_get_stat(s, "memory_bytes", &r->held);
    }
    r->status = st;
    snprintf(r->msg, sizeof r->msg, "%s", st ? mopt_last_error() : "");
    r->peak = status_kb("VmHWM:") * 1024 - base;
    mopt_tensor_destroy(out[0]);
    mopt_tensor_destroy(out[1]);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
    mopt_tensor_destroy(in);
    mopt_options_destroy(o);
}

static void row(const char *name, int64_t limit, const result *r, const char *status) {
    char lim[32];
    if (limit)
        snprintf(lim, sizeof lim, "%lld MB", (long long)(limit / MB));
    else
        snprintf(lim, sizeof lim, "none");
    print_message("| %-44s | %-9s | %9.1f MB | %-12s |\n", name, lim, (double)r->peak / (double)MB,
                  status);
    if (r->msg[0]) print_message("|   %s\n", r->msg);
}

static result api(const char *name, buf bytes, int64_t limit, int rank, int64_t d0, int64_t d1) {
    api_case c = {bytes, limit, d0 * d1, rank, {d0, d1}};
    result r = in_child(run_api_case, &c);
    free(bytes.p);
    row(name, limit, &r, r.status >= 0 ? mopt_status_string((mopt_status)r.status) : "no result");
    return r;
}

MOPT_TEST(constant_of_shape_6gb_under_50mb) {
    buf b = model_constant_of_shape(1500000000);
    print_message("ConstantOfShape model: %zu bytes\n", b.n);
    assert_true(b.n < 256);
    result r = api("ConstantOfShape -> 6 GB output", b, 50 * MB, 0, 0, 0);
    assert_int_equal(r.status, MOPT_ERR_LIMIT);
    assert_non_null(strstr(r.msg, "memory_limit"));
    assert_true(r.peak < 50 * MB + g_slack);
}

/* A 64 MB output under a 100 MB limit: handed over without a copy (a copy
 * would take the peak to 128 MB), and no longer charged to the session. */
MOPT_TEST(output_handed_over_without_copy) {
    result r = api("ConstantOfShape -> 64 MB output, handed over",
                   model_constant_of_shape(16 << 20), 100 * MB, 0, 0, 0);
    assert_int_equal(r.status, MOPT_OK);
    print_message("  memory_peak_bytes %lld, memory_bytes after the run %lld\n", (long long)r.stat,
                  (long long)r.held);
    assert_true(r.stat >= 64 * MB && r.stat < 65 * MB);
    assert_true(r.held < MB);
    assert_true(r.peak < 64 * MB + g_slack);
}

MOPT_TEST(intermediate_past_limit) {
    result r = api("Expand [1,1] -> 256 MB -> ReduceSum", model_expand_reduce(), 50 * MB, 2, 1, 1);
    assert_int_equal(r.status, MOPT_ERR_LIMIT);
    assert_non_null(strstr(r.msg, "Expand"));
    assert_true(r.peak < 50 * MB + g_slack);
}

MOPT_TEST(kernel_scratch_past_limit) {
    /* the 16 MB input is the caller's (made before the mark), not libmopt's */
    result r = api("TopK over 4M floats (32 MB scratch)", model_topk(), 24 * MB, 2, 1, TOPK_N);
    assert_int_equal(r.status, MOPT_ERR_LIMIT);
    assert_non_null(strstr(r.msg, "scratch"));
    assert_true(r.peak < 24 * MB + g_slack);
    /* with room for it, the same run succeeds and the scratch is counted */
    r = api("TopK over 4M floats (32 MB scratch)", model_topk(), 64 * MB, 2, 1, TOPK_N);
    assert_int_equal(r.status, MOPT_OK);
    print_message("  memory_peak_bytes %lld\n", (long long)r.stat);
    assert_true(r.stat >= (TOPK_N + 1) * 8 && r.stat <= 64 * MB);
    assert_true(r.peak < 64 * MB + g_slack);
}

/* Loading is bounded too: a model whose 32 MB weight does not fit in 16 MB
 * (the caller's copy of the file is made before the mark). */
MOPT_TEST(load_past_limit) {
    result r =
        api("load a 32 MB weight (from memory)", model_relu_weight(8 << 20), 16 * MB, 0, 0, 0);
    assert_int_equal(r.status, MOPT_ERR_LIMIT);
    assert_non_null(strstr(r.msg, "memory_limit 16777216"));
    assert_true(r.peak < 16 * MB + g_slack);
}

MOPT_TEST(unknown_attribute_100k_graphs) {
    buf b = model_relu_graphs(1, 100000);
    size_t size = b.n;
    print_message("100k-graph model: %zu bytes\n", size);
    assert_true(size > 4000000);
    result r = api("unknown attribute holding 100k graphs", b, 0, 1, 1, 1);
    assert_int_equal(r.status, MOPT_ERR_LIMIT);
    assert_non_null(strstr(r.msg, "junk0"));
    assert_non_null(strstr(r.msg, "4096"));
    /* no limit set: the bound is the slack alone (it took 422 MB) */
    assert_true(r.peak < g_slack);
}

MOPT_TEST(subgraph_cap_counts_the_model) {
    result r = api("2 unknown attributes of 3000 graphs", model_relu_graphs(2, 3000), 0, 1, 1, 1);
    assert_int_equal(r.status, MOPT_ERR_LIMIT);
    assert_non_null(strstr(r.msg, "subgraphs"));
    assert_true(r.peak < g_slack);
    r = api("2 unknown attributes of 100 graphs", model_relu_graphs(2, 100), 0, 1, 1, 1);
    assert_int_not_equal(r.status, MOPT_ERR_LIMIT);
}

/* ---- CLI cases ---- */

typedef struct cli_case {
    const char *model_path;
    const char *limit; /* --memory-limit value, or NULL for the default */
    const char *out_dir;
} cli_case;

/* Runs mopt in a grandchild; reports its exit code, peak RSS and stderr. */
static void run_cli_case(const void *arg, result *r) {
    const cli_case *c = arg;
    int fd[2];
    if (pipe(fd)) return;
    pid_t pid = fork();
    if (pid < 0) return;
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 1);
        if (c->limit)
            execl(g_cli, g_cli, "run", c->model_path, "--output-dir", c->out_dir, "--memory-limit",
                  c->limit, (char *)NULL);
        else
            execl(g_cli, g_cli, "run", c->model_path, "--output-dir", c->out_dir, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t got = 0;
    ssize_t k;
    while ((k = read(fd[0], r->msg + got, sizeof r->msg - 1 - got)) > 0)
        got += (size_t)k;
    r->msg[got] = '\0';
    char rest[256];
    while (read(fd[0], rest, sizeof rest) > 0) {
    }
    close(fd[0]);
    int ws = 0;
    struct rusage ru;
    if (wait4(pid, &ws, 0, &ru) != pid) return;
    r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    r->peak = (int64_t)ru.ru_maxrss * 1024;
    char *nl = strchr(r->msg, '\n');
    if (nl) *nl = '\0';
}

static result cli(const char *name, int rank, const int64_t *dims, const char *limit,
                  int64_t limit_bytes) {
    char dir[] = "/tmp/mopt_memlimit_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    buf b = model_relu_input(rank, dims);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b.p, 1, b.n, f), b.n);
    fclose(f);
    free(b.p);
    cli_case c = {path, limit, dir};
    result r = in_child(run_cli_case, &c);
    char y[160];
    snprintf(y, sizeof y, "%s/y.npy", dir);
    unlink(y);
    unlink(path);
    rmdir(dir);
    char st[32];
    snprintf(st, sizeof st, "exit %d", r.status);
    row(name, limit_bytes, &r, st);
    return r;
}

MOPT_TEST(cli_refuses_huge_random_input) {
    static const int64_t d[4] = {1, 1, 50000, 50000};
    result r = cli("mopt run [1,1,50000,50000] f32 (10 GB)", 4, d, "1G", 1024 * MB);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.msg, "refusing to generate random data for input 'x'"));
    assert_non_null(strstr(r.msg, "10000000000 bytes"));
    /* the whole mopt process, libraries included */
    assert_true(r.peak < 1024 * MB + g_slack);
}

MOPT_TEST(cli_default_limit_refuses) {
    static const int64_t d[4] = {1024, 1024, 1024, 1024}; /* 4 TB */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    int64_t half = (int64_t)pages / 2 * (int64_t)page;
    result r = cli("mopt run [1024,1024,1024,1024] f32, default", 4, d, NULL, half);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.msg, "refusing to generate random data"));
    assert_true(r.peak < g_slack + 256 * MB); /* nothing of the 4 TB is touched */
}

MOPT_TEST(cli_small_input_runs) {
    static const int64_t d[4] = {1, 1, 500, 500};
    result r = cli("mopt run [1,1,500,500] f32 (1 MB)", 4, d, "512M", 512 * MB);
    assert_int_equal(r.status, 0);
    assert_true(r.peak < 512 * MB + g_slack);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--slack-mb") == 0 && i + 1 < argc)
            g_slack = strtoll(argv[++i], NULL, 10) * MB;
        else
            g_cli = argv[i];
    }
    print_message("slack %lld MB over each limit\n", (long long)(g_slack / MB));
    print_message("| %-44s | %-9s | %12s | %-12s |\n", "case", "limit", "peak RSS", "status");
    const struct CMUnitTest api_tests[] = {
        cmocka_unit_test(constant_of_shape_6gb_under_50mb),
        cmocka_unit_test(output_handed_over_without_copy),
        cmocka_unit_test(intermediate_past_limit),
        cmocka_unit_test(kernel_scratch_past_limit),
        cmocka_unit_test(load_past_limit),
        cmocka_unit_test(unknown_attribute_100k_graphs),
        cmocka_unit_test(subgraph_cap_counts_the_model),
    };
    const struct CMUnitTest cli_tests[] = {
        cmocka_unit_test(cli_refuses_huge_random_input),
        cmocka_unit_test(cli_default_limit_refuses),
        cmocka_unit_test(cli_small_input_runs),
    };
    int rc = cmocka_run_group_tests(api_tests, NULL, NULL);
    if (g_cli) rc |= cmocka_run_group_tests(cli_tests, NULL, NULL);
    return rc;
}
