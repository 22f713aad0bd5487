/*
 * test_api_v2.c — the 0.2 additions of the public API, through <mopt/mopt.h>
 * only (linked against libmopt): run options (tag, per-run profiling,
 * cancellation before and during a run, from another thread), load flags,
 * the log callback, model metadata (from ONNX and through a .mopt file),
 * free-dimension overrides, const input wrapping, errors that name the input
 * or output at fault, and the structured pass report. Models: see
 * gen_api_v2_models.py.
 */
#define MOPT_EXPERIMENTAL_API /* the pass report and profiles */
#include <mopt/mopt.h>

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../test_expect.h"
#include "../test_main.h"
#include "../test_run.h"

#define META_MODEL "tests/unit/data/metadata.onnx"
#define CHAIN_MODEL "tests/unit/data/chain.onnx"
#define CHAIN_NODES 400

/* A model loaded with one int option (key NULL: defaults). */
static mopt_model *load_with(const char *path, const char *key, int64_t value) {
    mopt_options *o = NULL;
    mopt_model *m = NULL;
    EXPECT_OK(mopt_options_create(&o));
    if (key) EXPECT_OK(mopt_options_set_int(o, key, value));
    EXPECT_OK(mopt_model_load(path, o, &m));
    mopt_options_destroy(o);
    return m;
}

/* ---- run options ----------------------------------------------------------- */

MOPT_TEST(run_options_arguments) {
    mopt_run_options *ro = NULL;
    EXPECT_FAIL(mopt_run_options_create(NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_OK(mopt_run_options_create(&ro));
    assert_string_equal(mopt_run_options_tag(ro), "");
    assert_string_equal(mopt_run_options_tag(NULL), "");
    EXPECT_OK(mopt_run_options_set_tag(ro, "request-17"));
    assert_string_equal(mopt_run_options_tag(ro), "request-17");
    char long_tag[200];
    memset(long_tag, 'a', sizeof long_tag - 1);
    long_tag[sizeof long_tag - 1] = '\0';
    EXPECT_FAIL(mopt_run_options_set_tag(ro, long_tag), MOPT_ERR_INVALID_ARGUMENT, "127");
    assert_string_equal(mopt_run_options_tag(ro), "request-17"); /* unchanged */
    EXPECT_FAIL(mopt_run_options_set_tag(ro, NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_run_options_set_tag(NULL, "x"), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_run_options_set_profiling(ro, 2), MOPT_ERR_INVALID_ARGUMENT, "2");
    EXPECT_FAIL(mopt_run_options_set_profiling(NULL, 1), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_run_options_set_terminate(NULL, 1), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_OK(mopt_run_options_set_tag(ro, ""));
    assert_string_equal(mopt_run_options_tag(ro), "");
    mopt_run_options_destroy(ro);
    mopt_run_options_destroy(NULL);
}

/* Runs the chain model once: y should be x + CHAIN_NODES / 2. */
static mopt_status run_chain(mopt_session *s, const mopt_run_options *ro, float *x, float *y) {
    const int64_t dims[2] = {256, 256};
    mopt_tensor *in = NULL, *out = NULL;
    mopt_status st = mopt_tensor_wrap_const(MOPT_DTYPE_F32, 2, dims, x, sizeof(float) * 65536, &in);
    if (!st) st = mopt_tensor_wrap(MOPT_DTYPE_F32, 2, dims, y, sizeof(float) * 65536, &out);
    if (!st)
        st = mopt_session_run_v2(s, ro, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, &out);
    mopt_tensor_destroy(in);
    mopt_tensor_destroy(out);
    return st;
}

static float g_x[65536], g_y[65536];

MOPT_TEST(run_options_terminate_before_run) {
    mopt_model *m = load_with(CHAIN_MODEL, "opt_level", 0);
    mopt_session *s = NULL;
    mopt_run_options *ro = NULL;
    EXPECT_OK(mopt_session_create(m, NULL, &s));
    EXPECT_OK(mopt_run_options_create(&ro));
    EXPECT_OK(mopt_run_options_set_tag(ro, "req-9"));
    for (int i = 0; i < 65536; i++)
        g_x[i] = (float)(i % 7);
    EXPECT_OK(mopt_run_options_set_terminate(ro, 1));
    g_y[0] = -1.0f;
    /* no output handed over: a NULL output slot stays NULL */
    const int64_t dims[2] = {256, 256};
    mopt_tensor *in = NULL, *out = NULL;
    EXPECT_OK(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 2, dims, g_x, sizeof g_x, &in));
    EXPECT_FAIL(mopt_session_run_v2(s, ro, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, &out),
                MOPT_ERR_CANCELLED, "req-9");
    assert_null(out);
    assert_non_null(strstr(mopt_last_error(), "before node 0"));
    /* the flag stays set until cleared */
    EXPECT_FAIL(run_chain(s, ro, g_x, g_y), MOPT_ERR_CANCELLED, "cancelled");
    assert_true(g_y[0] == -1.0f); /* no node ran */
    EXPECT_OK(mopt_run_options_set_terminate(ro, 0));
    EXPECT_OK(run_chain(s, ro, g_x, g_y));
    for (int i = 0; i < 65536; i += 97)
        assert_float_equal(g_y[i], g_x[i] + CHAIN_NODES / 2, 1e-4);
    /* NULL run options: as mopt_session_run */
    EXPECT_OK(run_chain(s, NULL, g_x, g_y));
    int64_t runs = 0;
    EXPECT_OK(mopt_session_get_stat(s, "runs", &runs));
    assert_int_equal(runs, 2); /* cancelled runs do not count */
    mopt_tensor_destroy(in);
    mopt_run_options_destroy(ro);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
}

typedef struct canceller {
    mopt_run_options *ro;
    atomic_int started;
} canceller;

static void *cancel_soon(void *arg) {
    canceller *c = arg;
    while (!atomic_load(&c->started))
        ;
    struct timespec ts = {0, 2 * 1000 * 1000}; /* 2 ms into a ~20-100 ms run */
    nanosleep(&ts, NULL);
    if (mopt_run_options_set_terminate(c->ro, 1) != MOPT_OK) abort();
    return NULL;
}

/* Another thread sets the flag while the run is in its middle: the run stops
 * at the next node boundary, with CANCELLED and a node index > 0 and < the
 * node count, and the session runs normally afterwards. */
MOPT_TEST(run_options_terminate_from_another_thread) {
    mopt_options *o = NULL;
    EXPECT_OK(mopt_options_create(&o));
    EXPECT_OK(mopt_options_set_int(o, "opt_level", 0));
    EXPECT_OK(mopt_options_set_int(o, "threads", 1));
    mopt_model *m = NULL;
    EXPECT_OK(mopt_model_load(CHAIN_MODEL, o, &m));
    mopt_session *s = NULL;
    EXPECT_OK(mopt_session_create(m, o, &s));
    mopt_options_destroy(o);
    mopt_run_options *ro = NULL;
    EXPECT_OK(mopt_run_options_create(&ro));
    EXPECT_OK(run_chain(s, ro, g_x, g_y)); /* warm: plans and arena in place */
    canceller c = {.ro = ro};
    atomic_init(&c.started, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_soon, &c), 0);
    atomic_store(&c.started, 1);
    mopt_status st = MOPT_OK;
    int runs = 0;
    /* a run takes far longer than 2 ms, but a loaded machine may deschedule
     * the canceller: run until the flag is seen (bounded) */
    while (st == MOPT_OK && runs < 1000) {
        st = run_chain(s, ro, g_x, g_y);
        runs++;
    }
    pthread_join(th, NULL);
    EXPECT_FAIL(st, MOPT_ERR_CANCELLED, "cancelled");
    int node = -1;
    const char *at = strstr(mopt_last_error(), "before node ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "before node %d", &node), 1);
    assert_true(node >= 0 && node < CHAIN_NODES);
    EXPECT_OK(mopt_run_options_set_terminate(ro, 0));
    EXPECT_OK(run_chain(s, ro, g_x, g_y));
    assert_float_equal(g_y[5], g_x[5] + CHAIN_NODES / 2, 1e-4);
    mopt_run_options_destroy(ro);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
}

MOPT_TEST(run_options_profiling_per_run) {
    mopt_model *m = load_with(CHAIN_MODEL, "opt_level", 0);
    mopt_session *s = NULL;
    EXPECT_OK(mopt_session_create(m, NULL, &s)); /* session profiling off */
    mopt_run_options *ro = NULL;
    EXPECT_OK(mopt_run_options_create(&ro));
    EXPECT_OK(run_chain(s, ro, g_x, g_y));
    assert_int_equal(mopt_session_profile_count(s), 0);
    EXPECT_OK(mopt_run_options_set_profiling(ro, 1));
    EXPECT_OK(run_chain(s, ro, g_x, g_y));
    assert_int_equal(mopt_session_profile_count(s), CHAIN_NODES);
    assert_string_equal(mopt_session_profile_node(s, 0), "n0");
    int64_t total = 0;
    for (size_t i = 0; i < CHAIN_NODES; i++)
        total += mopt_session_profile_ns(s, i);
    assert_true(total > 0);
    EXPECT_OK(mopt_run_options_set_profiling(ro, 0));
    EXPECT_OK(run_chain(s, ro, g_x, g_y));
    assert_int_equal(mopt_session_profile_count(s), 0);
    mopt_session_destroy(s);

    /* a session that profiles: per-run 0 turns it off, -1 follows it */
    mopt_options *o = NULL;
    EXPECT_OK(mopt_options_create(&o));
    EXPECT_OK(mopt_options_set_string(o, "profile", "1"));
    EXPECT_OK(mopt_session_create(m, o, &s));
    mopt_options_destroy(o);
    EXPECT_OK(run_chain(s, ro, g_x, g_y));
    assert_int_equal(mopt_session_profile_count(s), 0);
    EXPECT_OK(mopt_run_options_set_profiling(ro, -1));
    EXPECT_OK(run_chain(s, ro, g_x, g_y));
    assert_int_equal(mopt_session_profile_count(s), CHAIN_NODES);
    mopt_run_options_destroy(ro);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
}

static char *read_text_n(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = '\0';
    fclose(f);
    if (len) *len = (size_t)n;
    return b;
}

static char *read_text(const char *path) { return read_text_n(path, NULL); }

/* The run tag is in the Chrome trace: each event of a tagged run names it. */
MOPT_TEST(run_options_tag_in_trace) {
    char path[] = "/tmp/mopt_trace_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    mopt_model *m = load_with(META_MODEL, NULL, 0);
    mopt_options *o = NULL;
    EXPECT_OK(mopt_options_create(&o));
    EXPECT_OK(mopt_options_set_string(o, "profile", path));
    mopt_session *s = NULL;
    EXPECT_OK(mopt_session_create(m, o, &s));
    mopt_options_destroy(o);
    mopt_run_options *ro = NULL;
    EXPECT_OK(mopt_run_options_create(&ro));
    EXPECT_OK(mopt_run_options_set_tag(ro, "tag-\"alpha\""));
    float x[8] = {0}, y[8];
    const int64_t xd[2] = {2, 4}, yd[3] = {2, 2, 2};
    mopt_tensor *in = NULL, *out = NULL;
    EXPECT_OK(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 2, xd, x, sizeof x, &in));
    EXPECT_OK(mopt_tensor_wrap(MOPT_DTYPE_F32, 3, yd, y, sizeof y, &out));
    EXPECT_OK(mopt_session_run_v2(s, ro, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, &out));
    EXPECT_OK(
        mopt_session_run_v2(s, NULL, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, &out));
    mopt_session_destroy(s); /* writes the trace */
    char *text = read_text(path);
    unlink(path);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"tag\":\"tag-\\\"alpha\\\"\""));
    /* the second, untagged run's events carry no tag: fewer tags than events */
    size_t tags = 0, events = 0;
    for (const char *p = text; (p = strstr(p, "\"tag\":")); p++)
        tags++;
    for (const char *p = text; (p = strstr(p, "\"ph\":")); p++)
        events++;
    assert_true(tags > 0 && tags < events);
    free(text);
    mopt_tensor_destroy(in);
    mopt_tensor_destroy(out);
    mopt_run_options_destroy(ro);
    mopt_model_destroy(m);
}

/* ---- logging ----------------------------------------------------------------- */

typedef struct log_capture {
    int n[4];
    char text[16384];
    size_t len;
} log_capture;

static void capture_log(void *user, mopt_log_level level, const char *message) {
    log_capture *c = user;
    if (level >= 0 && level <= 3) c->n[level]++;
    int w = snprintf(c->text + c->len, sizeof c->text - c->len, "%d|%s\n", (int)level, message);
    if (w > 0 && c->len + (size_t)w < sizeof c->text) c->len += (size_t)w;
}

MOPT_TEST(log_callback_receives_verbose_output) {
    log_capture cap;
    memset(&cap, 0, sizeof cap);
    mopt_set_log_callback(capture_log, &cap);
    mopt_model *m = load_with(META_MODEL, "verbose", 1);
    assert_non_null(m);
    /* the kernel listing and the pass table, each line a message at INFO */
    assert_true(cap.n[MOPT_LOG_INFO] >= 5 + 2);
    assert_non_null(strstr(cap.text, "2|mopt: node 0 'shape' Shape kernel="));
    assert_non_null(strstr(cap.text, "\n2|total "));
    assert_null(strchr(strstr(cap.text, "node 0"), '\r'));
    mopt_model_destroy(m);

    /* verbose 2: every run is logged at DEBUG with its tag */
    memset(&cap, 0, sizeof cap);
    m = load_with(META_MODEL, "verbose", 2);
    mopt_session *s = NULL;
    mopt_options *o = NULL;
    EXPECT_OK(mopt_options_create(&o));
    EXPECT_OK(mopt_options_set_int(o, "verbose", 2));
    EXPECT_OK(mopt_session_create(m, o, &s));
    mopt_options_destroy(o);
    mopt_run_options *ro = NULL;
    EXPECT_OK(mopt_run_options_create(&ro));
    EXPECT_OK(mopt_run_options_set_tag(ro, "job-5"));
    float x[4] = {1, 2, 3, 4};
    const int64_t xd[2] = {1, 4};
    mopt_tensor *in = NULL, *out = NULL;
    EXPECT_OK(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 2, xd, x, sizeof x, &in));
    EXPECT_OK(mopt_session_run_v2(s, ro, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, &out));
    assert_int_equal(cap.n[MOPT_LOG_DEBUG], 1);
    assert_non_null(strstr(cap.text, "3|mopt: run 'job-5' #1: ok"));
    mopt_tensor_destroy(out);
    mopt_tensor_destroy(in);
    mopt_run_options_destroy(ro);
    mopt_session_destroy(s);
    mopt_model_destroy(m);

    /* back to the default: the callback hears nothing more */
    mopt_set_log_callback(NULL, NULL);
    int before = cap.n[MOPT_LOG_INFO];
    fflush(stderr);
    int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
    assert_true(saved >= 0 && devnull >= 0);
    dup2(devnull, 2); /* the default writes to stderr: keep the test log clean */
    m = load_with(META_MODEL, "verbose", 1);
    dup2(saved, 2);
    close(saved);
    close(devnull);
    assert_int_equal(cap.n[MOPT_LOG_INFO], before);
    mopt_model_destroy(m);
}

/* ---- load flags -------------------------------------------------------------- */

MOPT_TEST(load_v2_flags) {
    mopt_model *m = NULL;
    EXPECT_FAIL(mopt_model_load_v2(META_MODEL, NULL, 4, &m), MOPT_ERR_INVALID_ARGUMENT, "0x4");
    assert_null(m);
    EXPECT_FAIL(mopt_model_load_v2(META_MODEL, NULL, 0x80000000u, &m), MOPT_ERR_INVALID_ARGUMENT,
                "unknown flags");
    EXPECT_FAIL(mopt_model_load_v2(NULL, NULL, 0, &m), MOPT_ERR_INVALID_ARGUMENT, "path");
    EXPECT_FAIL(mopt_model_load_v2(META_MODEL, NULL, 0, NULL), MOPT_ERR_INVALID_ARGUMENT, "out");
    /* ONNX files: the flags (about .mopt files) have no effect */
    EXPECT_OK(
        mopt_model_load_v2(META_MODEL, NULL, MOPT_LOAD_NO_MMAP | MOPT_LOAD_VERIFY_WEIGHTS, &m));
    mopt_model_destroy(m);

    /* a .mopt file with one weight byte changed: only VERIFY_WEIGHTS sees it */
    char path[] = "/tmp/mopt_flags_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    m = load_with(META_MODEL, "opt_level", 0);
    EXPECT_OK(mopt_model_save(m, path));
    mopt_model_destroy(m);
    /* flip a bit of the weight c1 (1.0f: 00 00 80 3f), in the data after
     * the header's %MOPT-END line */
    size_t len = 0;
    unsigned char *bytes = (unsigned char *)read_text_n(path, &len);
    assert_non_null(bytes);
    const unsigned char *end = memmem(bytes, len, "%MOPT-END", 9);
    assert_non_null(end);
    const unsigned char one[4] = {0x00, 0x00, 0x80, 0x3f};
    const unsigned char *w = memmem(end, len - (size_t)(end - bytes), one, 4);
    assert_non_null(w);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, (long)(w - bytes) + 3, SEEK_SET);
    fputc(0x3e, f); /* 1.0f -> 0.125f */
    fclose(f);
    free(bytes);
    EXPECT_OK(mopt_model_load_v2(path, NULL, 0, &m));
    mopt_model_destroy(m);
    EXPECT_FAIL(mopt_model_load_v2(path, NULL, MOPT_LOAD_VERIFY_WEIGHTS, &m), MOPT_ERR_PARSE,
                "checksum");
    assert_null(m);

    /* NO_MMAP: the model no longer needs the file */
    m = load_with(META_MODEL, "opt_level", 0);
    EXPECT_OK(mopt_model_save(m, path));
    mopt_model_destroy(m);
    EXPECT_OK(mopt_model_load_v2(path, NULL, MOPT_LOAD_NO_MMAP, &m));
    f = fopen(path, "wb"); /* truncate the file under the model */
    assert_non_null(f);
    fclose(f);
    unlink(path);
    mopt_session *s = NULL;
    EXPECT_OK(mopt_session_create(m, NULL, &s));
    float x[4] = {1, 2, 3, 4}, y[4] = {0};
    const int64_t xd[2] = {1, 4}, yd[3] = {1, 2, 2};
    mopt_tensor *in = NULL, *out = NULL;
    EXPECT_OK(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 2, xd, x, sizeof x, &in));
    EXPECT_OK(mopt_tensor_wrap(MOPT_DTYPE_F32, 3, yd, y, sizeof y, &out));
    EXPECT_OK(mopt_session_run(s, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, &out));
    for (int i = 0; i < 4; i++)
        assert_float_equal(y[i], x[i] + 1.0f, 0); /* c1 read from the copy */
    mopt_tensor_destroy(in);
    mopt_tensor_destroy(out);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
}

/* ---- metadata ---------------------------------------------------------------- */

static void check_metadata(const mopt_model *m) {
    assert_string_equal(mopt_model_info(m, MOPT_INFO_PRODUCER_NAME), "gen_api_v2");
    assert_string_equal(mopt_model_info(m, MOPT_INFO_PRODUCER_VERSION), "1.2.3");
    assert_string_equal(mopt_model_info(m, MOPT_INFO_DOMAIN), "ai.mopt.test");
    assert_string_equal(mopt_model_info(m, MOPT_INFO_DOC_STRING), "a model that describes itself");
    assert_string_equal(mopt_model_info(m, MOPT_INFO_GRAPH_NAME), "meta_graph");
    assert_string_equal(mopt_model_info(m, MOPT_INFO_GRAPH_DOC_STRING), "graph doc");
    assert_null(mopt_model_info(m, (mopt_info)99));
    assert_int_equal(mopt_model_version(m), 42);
    assert_int_equal(mopt_model_metadata_count(m), 2);
    assert_string_equal(mopt_model_metadata_key(m, 0), "author");
    assert_string_equal(mopt_model_metadata_value(m, 0), "libmopt tests");
    assert_string_equal(mopt_model_metadata_key(m, 1), "license");
    assert_null(mopt_model_metadata_key(m, 2));
    assert_null(mopt_model_metadata_value(m, 2));
    const char *v = NULL;
    EXPECT_OK(mopt_model_metadata(m, "license", &v));
    assert_string_equal(v, "MIT");
    EXPECT_FAIL(mopt_model_metadata(m, "nope", &v), MOPT_ERR_NOT_FOUND, "nope");
    assert_null(v);
}

/* mopt_model_node_value: the chain's n1 is Mul(v0, one) -> v1 at opt_level 0 */
MOPT_TEST(node_values) {
    mopt_model *m = load_with(CHAIN_MODEL, "opt_level", 0);
    size_t n1 = SIZE_MAX;
    for (size_t i = 0; i < mopt_model_node_count(m); i++)
        if (strcmp(mopt_model_node_name(m, i), "n1") == 0) n1 = i;
    assert_true(n1 != SIZE_MAX);
    assert_string_equal(mopt_model_node_value(m, n1, MOPT_INPUT, 0), "v0");
    assert_string_equal(mopt_model_node_value(m, n1, MOPT_INPUT, 1), "one");
    assert_null(mopt_model_node_value(m, n1, MOPT_INPUT, 2));
    assert_string_equal(mopt_model_node_value(m, n1, MOPT_OUTPUT, 0), "v1");
    assert_null(mopt_model_node_value(m, n1, MOPT_OUTPUT, 1));
    assert_null(mopt_model_node_value(m, mopt_model_node_count(m), MOPT_OUTPUT, 0));
    assert_null(mopt_model_node_value(NULL, 0, MOPT_OUTPUT, 0));
    mopt_model_destroy(m);
}

MOPT_TEST(metadata_from_onnx_and_mopt) {
    mopt_model *m = load_with(META_MODEL, NULL, 0);
    check_metadata(m);
    char path[] = "/tmp/mopt_meta_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    EXPECT_OK(mopt_model_save(m, path));
    mopt_model_destroy(m);
    char *text = read_text(path);
    assert_non_null(text);
    assert_non_null(strstr(text, "format_minor: 3"));
    free(text);
    m = load_with(path, NULL, 0);
    unlink(path);
    check_metadata(m); /* kept through the .mopt file */
    mopt_model_destroy(m);

    /* a model without metadata: "" and 0, and NULL-safe accessors */
    m = load_with(CHAIN_MODEL, NULL, 0);
    assert_string_equal(mopt_model_info(m, MOPT_INFO_DOC_STRING), "");
    assert_string_equal(mopt_model_info(m, MOPT_INFO_GRAPH_NAME), "chain");
    assert_int_equal(mopt_model_metadata_count(m), 0);
    assert_int_equal(mopt_model_version(m), 0);
    mopt_model_destroy(m);
    assert_null(mopt_model_info(NULL, MOPT_INFO_DOMAIN));
    assert_int_equal(mopt_model_metadata_count(NULL), 0);
    const char *v = NULL;
    EXPECT_FAIL(mopt_model_metadata(NULL, "a", &v), MOPT_ERR_INVALID_ARGUMENT, NULL);
}

/* ---- free dimensions --------------------------------------------------------- */

static mopt_status run_meta(const mopt_model *m, int64_t batch, float *y_out) {
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)i;
    const int64_t xd[2] = {batch, 4};
    mopt_tensor *in = NULL, *out = NULL;
    EXPECT_OK(
        mopt_tensor_wrap_const(MOPT_DTYPE_F32, 2, xd, x, sizeof(float) * 4 * (size_t)batch, &in));
    mopt_status st = test_run_once(m, NULL, in, &out);
    if (!st) {
        assert_int_equal(mopt_tensor_dim(out, 0), batch);
        memcpy(y_out, mopt_tensor_data_const(out), mopt_tensor_size_bytes(out));
    }
    mopt_tensor_destroy(out);
    mopt_tensor_destroy(in);
    return st;
}

MOPT_TEST(free_dim_override) {
    mopt_model *free_m = load_with(META_MODEL, NULL, 0);
    assert_int_equal(mopt_model_io_dim(free_m, MOPT_INPUT, 0, 0), -1);
    assert_string_equal(mopt_model_io_dim_name(free_m, MOPT_INPUT, 0, 0), "batch");

    mopt_options *o = NULL;
    EXPECT_OK(mopt_options_create(&o));
    EXPECT_OK(mopt_options_set_dim(o, "batch", 3));
    int64_t v = 0;
    EXPECT_OK(mopt_options_get_int(o, "dim.batch", &v));
    assert_int_equal(v, 3);
    EXPECT_FAIL(mopt_options_get_int(o, "dim.seq", &v), MOPT_ERR_NOT_FOUND, "dim.seq");
    mopt_model *m = NULL;
    EXPECT_OK(mopt_model_load(META_MODEL, o, &m));
    assert_int_equal(mopt_model_io_dim(m, MOPT_INPUT, 0, 0), 3);
    assert_int_equal(mopt_model_io_dim(m, MOPT_OUTPUT, 0, 0), 3);
    assert_null(mopt_model_io_dim_name(m, MOPT_INPUT, 0, 0));
    /* optimized for it: the Shape/Slice/Concat chain folded away */
    assert_true(mopt_model_node_count(m) < mopt_model_node_count(free_m));
    float y[16], y_free[16];
    EXPECT_OK(run_meta(m, 3, y));
    EXPECT_OK(run_meta(free_m, 3, y_free));
    assert_memory_equal(y, y_free, sizeof(float) * 12);
    assert_float_equal(y[5], 6.0f, 0);
    /* another size fails, naming the input and the dimension */
    EXPECT_FAIL(run_meta(m, 2, y), MOPT_ERR_SHAPE, "input 'x': dimension 'batch' (axis 0)");
    assert_non_null(strstr(mopt_last_error(), "fixed to 3"));
    EXPECT_OK(run_meta(free_m, 2, y_free)); /* the free model takes any batch */
    mopt_model_destroy(m);

    /* a name no input has: NOT_FOUND at load, listing the names there are */
    EXPECT_OK(mopt_options_set_dim(o, "seq", 8));
    EXPECT_FAIL(mopt_model_load(META_MODEL, o, &m), MOPT_ERR_NOT_FOUND, "'seq'");
    assert_non_null(strstr(mopt_last_error(), "'batch'"));
    assert_null(m);
    mopt_options_destroy(o);

    /* by key, from YAML, and the argument checks */
    EXPECT_OK(mopt_options_create(&o));
    EXPECT_OK(mopt_options_load_yaml_string(o, "dim.batch: 2\n", 13));
    EXPECT_OK(mopt_options_get_int(o, "dim.batch", &v));
    assert_int_equal(v, 2);
    EXPECT_OK(mopt_options_set_string(o, "dim.batch", "4"));
    EXPECT_OK(mopt_options_get_int(o, "dim.batch", &v));
    assert_int_equal(v, 4);
    EXPECT_FAIL(mopt_options_set_int(o, "dim.batch", -1), MOPT_ERR_INVALID_ARGUMENT, "dim.batch");
    EXPECT_FAIL(mopt_options_set_string(o, "dim.batch", "two"), MOPT_ERR_INVALID_ARGUMENT,
                "dim.batch");
    EXPECT_FAIL(mopt_options_set_int(o, "dim.", 1), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_set_dim(o, "", 1), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_set_dim(o, NULL, 1), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_set_dim(NULL, "b", 1), MOPT_ERR_INVALID_ARGUMENT, NULL);
    char name[16];
    for (int i = 0; i < 63; i++) { /* 1 set already: 64 in all */
        snprintf(name, sizeof name, "d%d", i);
        EXPECT_OK(mopt_options_set_dim(o, name, 1));
    }
    EXPECT_FAIL(mopt_options_set_dim(o, "one_too_many", 1), MOPT_ERR_INVALID_ARGUMENT, "64");
    EXPECT_OK(mopt_options_set_dim(o, "d5", 7)); /* replacing is not adding */
    mopt_options_destroy(o);
    mopt_model_destroy(free_m);
}

/* ---- const inputs, names in errors -------------------------------------------- */

MOPT_TEST(const_tensor_is_input_only) {
    const float x[4] = {1, 2, 3, 4};
    float y[4];
    const int64_t xd[2] = {1, 4}, yd[3] = {1, 2, 2};
    mopt_tensor *in = NULL, *out_const = NULL, *out = NULL;
    EXPECT_OK(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 2, xd, x, sizeof x, &in));
    assert_null(mopt_tensor_data(in)); /* read-only: no writable pointer */
    assert_ptr_equal(mopt_tensor_data_const(in), x);
    EXPECT_FAIL(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 2, xd, x, 12, &out),
                MOPT_ERR_INVALID_ARGUMENT, "size");
    assert_null(out);
    EXPECT_FAIL(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 2, xd, NULL, 16, &out),
                MOPT_ERR_INVALID_ARGUMENT, "NULL");
    EXPECT_FAIL(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 2, xd, x, 16, NULL),
                MOPT_ERR_INVALID_ARGUMENT, "mopt_tensor_wrap_const");
    EXPECT_OK(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 3, yd, y, sizeof y, &out_const));
    mopt_model *m = load_with(META_MODEL, NULL, 0);
    mopt_session *s = NULL;
    EXPECT_OK(mopt_session_create(m, NULL, &s));
    const char *oname[1] = {"y"};
    EXPECT_FAIL(mopt_session_run(s, 1, NULL, (const mopt_tensor *const *)&in, 1, oname, &out_const),
                MOPT_ERR_INVALID_ARGUMENT, "output 'y'");
    assert_non_null(strstr(mopt_last_error(), "read-only"));
    EXPECT_OK(mopt_tensor_wrap(MOPT_DTYPE_F32, 3, yd, y, sizeof y, &out));
    EXPECT_OK(mopt_session_run(s, 1, NULL, (const mopt_tensor *const *)&in, 1, oname, &out));
    assert_float_equal(y[3], 5.0f, 0);
    assert_float_equal(x[3], 4.0f, 0); /* the input was not written */
    mopt_tensor_destroy(in);
    mopt_tensor_destroy(out);
    mopt_tensor_destroy(out_const);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
}

MOPT_TEST(run_errors_name_inputs_and_outputs) {
    mopt_model *m = load_with(META_MODEL, NULL, 0);
    mopt_session *s = NULL;
    EXPECT_OK(mopt_session_create(m, NULL, &s));
    const float x[4] = {1, 2, 3, 4};
    const int64_t xd[2] = {1, 4}, bad[2] = {1, 5};
    mopt_tensor *in = NULL, *in_bad = NULL, *out = NULL;
    EXPECT_OK(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 2, xd, x, sizeof x, &in));
    EXPECT_OK(mopt_tensor_create(MOPT_DTYPE_F32, 2, bad, &in_bad));
    const mopt_tensor *two[2] = {in, in};
    /* by position: the count is wrong, the model's inputs are named */
    EXPECT_FAIL(mopt_session_run(s, 2, NULL, two, 1, NULL, &out), MOPT_ERR_INVALID_ARGUMENT,
                "1 input ('x') but 2 were given");
    /* by name: a missing input is named */
    const char *none[1] = {NULL};
    EXPECT_FAIL(mopt_session_run(s, 0, none, two, 1, NULL, &out), MOPT_ERR_INVALID_ARGUMENT,
                "missing input 'x'");
    const char *dup_names[2] = {"x", "x"};
    EXPECT_FAIL(mopt_session_run(s, 2, dup_names, two, 1, NULL, &out), MOPT_ERR_INVALID_ARGUMENT,
                "input 'x' is given twice");
    const char *unknown[1] = {"z"};
    EXPECT_FAIL(mopt_session_run(s, 1, unknown, two, 1, NULL, &out), MOPT_ERR_NOT_FOUND,
                "no input 'z' (its inputs: 'x')");
    EXPECT_FAIL(mopt_session_run(s, 1, NULL, (const mopt_tensor *const *)&in_bad, 1, NULL, &out),
                MOPT_ERR_SHAPE, "input 'x'");
    /* outputs: position out of range, wrong shape of a given tensor */
    mopt_tensor *outs[2] = {NULL, NULL};
    EXPECT_FAIL(mopt_session_run(s, 1, NULL, (const mopt_tensor *const *)&in, 2, NULL, outs),
                MOPT_ERR_INVALID_ARGUMENT, "output 1");
    const int64_t wrong[3] = {1, 4, 1};
    EXPECT_OK(mopt_tensor_create(MOPT_DTYPE_F32, 3, wrong, &out));
    mopt_tensor *given = out;
    EXPECT_FAIL(mopt_session_run(s, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, &out),
                MOPT_ERR_SHAPE, "output 'y'");
    assert_ptr_equal(out, given);
    mopt_tensor_destroy(out);
    mopt_tensor_destroy(in);
    mopt_tensor_destroy(in_bad);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
}

/* ---- structured pass report --------------------------------------------------- */

MOPT_TEST(pass_report_entries) {
    mopt_model *m = load_with(META_MODEL, NULL, 0);
    size_t n = mopt_model_pass_count(m);
    assert_true(n >= 5);
    const char *text = mopt_model_pass_report(m);
    for (size_t i = 0; i < n; i++) {
        const char *name = mopt_model_pass_name(m, i);
        assert_non_null(name);
        assert_non_null(strstr(text, name)); /* the text table shows the same passes */
        assert_true(mopt_model_pass_ms(m, i) >= 0.0);
        assert_true(mopt_model_pass_nodes_before(m, i) >= mopt_model_pass_nodes_after(m, i));
        assert_true(mopt_model_pass_rewrites(m, i) >= 0);
        assert_non_null(mopt_model_pass_note(m, i));
        if (i > 0)
            assert_int_equal(mopt_model_pass_nodes_before(m, i),
                             mopt_model_pass_nodes_after(m, i - 1));
    }
    assert_string_equal(mopt_model_pass_name(m, 0), "fold_constants");
    assert_int_equal(mopt_model_pass_nodes_before(m, 0), 5);
    assert_int_equal(mopt_model_pass_nodes_after(m, n - 1), (int64_t)mopt_model_node_count(m));
    assert_null(mopt_model_pass_name(m, n));
    assert_null(mopt_model_pass_note(m, n));
    assert_int_equal(mopt_model_pass_nodes_before(m, n), -1);
    assert_int_equal(mopt_model_pass_rewrites(m, n), -1);
    assert_true(mopt_model_pass_ms(m, n) < 0);
    assert_int_equal(mopt_model_pass_count(NULL), 0);
    mopt_model_destroy(m);
    /* opt_level 0 runs no pass */
    m = load_with(META_MODEL, "opt_level", 0);
    assert_int_equal(mopt_model_pass_count(m), 0);
    mopt_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(run_options_arguments),
        cmocka_unit_test(run_options_terminate_before_run),
        cmocka_unit_test(run_options_terminate_from_another_thread),
        cmocka_unit_test(run_options_profiling_per_run),
        cmocka_unit_test(run_options_tag_in_trace),
        cmocka_unit_test(log_callback_receives_verbose_output),
        cmocka_unit_test(load_v2_flags),
        cmocka_unit_test(metadata_from_onnx_and_mopt),
        cmocka_unit_test(node_values),
        cmocka_unit_test(free_dim_override),
        cmocka_unit_test(const_tensor_is_input_only),
        cmocka_unit_test(run_errors_name_inputs_and_outputs),
        cmocka_unit_test(pass_report_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
