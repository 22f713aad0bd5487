/*
 * fuzz_model_path.c — load a model from memory and, when it loads, run it
 * twice (the second run goes through the memory plan) on zero-filled inputs
 * of its declared shapes: symbolic dimensions become 2; inputs of unknown
 * rank or type, or larger than FUZZ_MAX_INPUT_BYTES in total, skip the run.
 * The session has memory_limit = FUZZ_MEMORY_LIMIT and one thread, so a
 * hostile model cannot allocate the world through the runtime.
 */
#include "fuzz_model_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int defect(fuzz_model_result *r, const char *what, mopt_status st) {
    fprintf(stderr, "fuzz: %s (status %d %s, message '%s')\n", what, (int)st,
            mopt_status_string(st), mopt_last_error());
    r->defect = 1;
    return 1;
}

/* Checks an output tensor handed over by a successful run through the
 * public accessors, and reads every byte of it. */
static void check_output(fuzz_model_result *r, const mopt_tensor *t) {
    if (!t) {
        defect(r, "a successful run left an output NULL", MOPT_OK);
        return;
    }
    int rank = mopt_tensor_rank(t);
    size_t esz = mopt_dtype_size(mopt_tensor_dtype(t));
    if (rank < 0 || rank > MOPT_MAX_RANK || esz == 0) {
        defect(r, "an output has a bad rank or dtype", MOPT_OK);
        return;
    }
    int64_t n = mopt_tensor_element_count(t);
    if (n < 0 || (size_t)n * esz != mopt_tensor_size_bytes(t)) {
        defect(r, "an output's size does not match its shape", MOPT_OK);
        return;
    }
    const volatile uint8_t *p = mopt_tensor_data_const(t);
    size_t nb = mopt_tensor_size_bytes(t);
    if (nb && !p) {
        defect(r, "a non-empty output has no data", MOPT_OK);
        return;
    }
    uint8_t acc = 0;
    for (size_t i = 0; i < nb; i++)
        acc ^= p[i];
    (void)acc;
}

/* Records a call that returned MOPT_ERR_INTERNAL. */
static void note_internal(fuzz_model_result *r, const char *call, mopt_status st) {
    if (st != MOPT_ERR_INTERNAL) return;
    if (r->internal++ == 0)
        snprintf(r->internal_msg, sizeof r->internal_msg, "%s: %s", call, mopt_last_error());
}

/* Fills a fresh input with small varied values (FUZZ_FILL_PATTERN). */
static void fill_pattern(mopt_tensor *t) {
    static const int ints[] = {1, 0, 2, 1, 3};
    static const float floats[] = {0.5f, -1.0f, 2.0f, 0.0f, 1.5f, -0.25f};
    int64_t n = mopt_tensor_element_count(t);
    void *p = mopt_tensor_data(t);
    for (int64_t i = 0; p && i < n; i++) {
        int v = ints[i % 5];
        switch (mopt_tensor_dtype(t)) {
        case MOPT_DTYPE_F32: ((float *)p)[i] = floats[i % 6]; break;
        case MOPT_DTYPE_F64: ((double *)p)[i] = floats[i % 6]; break;
        case MOPT_DTYPE_I64: ((int64_t *)p)[i] = v; break;
        case MOPT_DTYPE_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
        case MOPT_DTYPE_I32: ((int32_t *)p)[i] = v; break;
        case MOPT_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
        case MOPT_DTYPE_I16:
        case MOPT_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
        case MOPT_DTYPE_I8:
        case MOPT_DTYPE_U8:
        case MOPT_DTYPE_BOOL: ((uint8_t *)p)[i] = (uint8_t)(v & 1); break;
        default: break; /* f16/bf16: left zero */
        }
    }
}

/* Inputs of the declared shapes; 0 when the model cannot be fed. */
static int make_inputs(const mopt_model *m, size_t n_in, mopt_tensor **in, fuzz_fill fill) {
    size_t total = 0;
    for (size_t i = 0; i < n_in; i++) {
        mopt_dtype dt = mopt_model_io_dtype(m, MOPT_INPUT, i);
        int rank = mopt_model_io_rank(m, MOPT_INPUT, i);
        size_t esz = mopt_dtype_size(dt);
        if (esz == 0 || rank < 0 || rank > MOPT_MAX_RANK) return 0;
        int64_t dims[MOPT_MAX_RANK];
        size_t bytes = esz;
        for (int d = 0; d < rank; d++) {
            int64_t v = mopt_model_io_dim(m, MOPT_INPUT, i, d);
            dims[d] = v < 0 ? 2 : v;
            if (dims[d] > (int64_t)FUZZ_MAX_INPUT_BYTES) return 0;
            bytes *= (size_t)(dims[d] ? dims[d] : 0);
            if (bytes > FUZZ_MAX_INPUT_BYTES) return 0;
        }
        total += bytes;
        if (total > FUZZ_MAX_INPUT_BYTES) return 0;
        if (mopt_tensor_create(dt, rank, dims, &in[i]) != MOPT_OK) return 0;
        if (fill == FUZZ_FILL_PATTERN) fill_pattern(in[i]);
    }
    return 1;
}

void fuzz_model_exercise(const uint8_t *data, size_t size, fuzz_model_result *r) {
    fuzz_model_exercise_ex(data, size, FUZZ_FILL_ZERO, r);
}

void fuzz_model_exercise_ex(const uint8_t *data, size_t size, fuzz_fill fill,
                            fuzz_model_result *r) {
    memset(r, 0, sizeof *r);
    mopt_options *opts = NULL;
    if (mopt_options_create(&opts) != MOPT_OK ||
        mopt_options_set_int(opts, "threads", 1) != MOPT_OK ||
        mopt_options_set_int(opts, "memory_limit", FUZZ_MEMORY_LIMIT) != MOPT_OK) {
        defect(r, "cannot set up options", MOPT_ERR_INTERNAL);
        mopt_options_destroy(opts);
        return;
    }
    mopt_model *m = NULL;
    r->load = mopt_model_load_from_memory(data, size, opts, &m);
    note_internal(r, "load", r->load);
    if (r->load != MOPT_OK) {
        if (mopt_last_error()[0] == '\0') defect(r, "load failed without a message", r->load);
        if (m) defect(r, "load failed but handed a model over", r->load);
        mopt_options_destroy(opts);
        return;
    }
    if (!m) {
        defect(r, "load succeeded without a model", r->load);
        mopt_options_destroy(opts);
        return;
    }
    size_t n_in = mopt_model_io_count(m, MOPT_INPUT);
    size_t n_out = mopt_model_io_count(m, MOPT_OUTPUT);
    mopt_tensor **in = calloc(n_in ? n_in : 1, sizeof *in);
    mopt_tensor **out = calloc(n_out ? n_out : 1, sizeof *out);
    mopt_session *s = NULL;
    if (in && out && n_in <= 4096 && make_inputs(m, n_in, in, fill)) {
        mopt_status st = mopt_session_create(m, opts, &s);
        note_internal(r, "session create", st);
        if (st != MOPT_OK) {
            defect(r, "a session could not be created for a loaded model", st);
        } else {
            r->ran = 1;
            for (int k = 0; k < 2; k++) {
                st = mopt_session_run(s, n_in, NULL, (const mopt_tensor *const *)in, n_out, NULL,
                                      out);
                r->run[k] = st;
                note_internal(r, k ? "second run" : "first run", st);
                if (st != MOPT_OK) {
                    if (mopt_last_error()[0] == '\0') defect(r, "run failed without a message", st);
                    for (size_t i = 0; i < n_out; i++)
                        if (out[i]) defect(r, "a failed run handed an output over", st);
                    break;
                }
                for (size_t i = 0; i < n_out; i++) {
                    check_output(r, out[i]);
                    mopt_tensor_destroy(out[i]);
                    out[i] = NULL;
                }
            }
        }
    }
    mopt_session_destroy(s);
    for (size_t i = 0; in && i < n_in; i++)
        mopt_tensor_destroy(in[i]);
    for (size_t i = 0; out && i < n_out; i++)
        mopt_tensor_destroy(out[i]);
    free(in);
    free(out);
    mopt_model_destroy(m);
    mopt_options_destroy(opts);
}
