/*
 * batcher.c (api) — mopt_batcher: dynamic batching of single requests.
 *
 * Callers check their request alone (names, dtypes, ranks, batch dim, fixed
 * dims), queue it and sleep on their own condition variable. Worker threads,
 * one session each, take the oldest request and the later ones compatible
 * with it (same dims except axis 0 and a ragged axis 1), once max_batch are
 * queued or the oldest has waited max_delay_us, concatenate them along axis
 * 0 (zero-padding ragged axis-1 inputs to a seq bucket), run the session
 * once and cut each request's rows back out of the outputs (cropping axis 1
 * to the request's own length). A batch whose run fails is rerun one
 * request at a time, so only the bad request fails. One mutex guards the
 * queue, the states and the counters; sessions run outside it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "runtime/runtime.h"

#define BATCHER_MAX_BATCH 65536
#define BATCHER_MAX_WORKERS 256
#define BATCHER_MAX_QUEUE ((size_t)1 << 24)
#define BATCHER_MAX_BUCKETS 4096
#define BATCHER_MAX_DELAY_US ((int64_t)3600 * 1000000)
#define BATCHER_MSG 1024

/* What the model says about one input or output. */
typedef struct {
    const char *name;
    mopt_dtype dtype; /* UNDEFINED: unknown */
    int rank;         /* -1: unknown */
    int64_t dims[MOPT_MAX_RANK];
    const char *dim_names[MOPT_MAX_RANK];
    bool ragged; /* an input whose axis 1 may be padded */
} io_info;

typedef enum { REQ_QUEUED, REQ_RUNNING, REQ_DONE } req_state;

typedef struct request {
    struct request *prev, *next;
    const mopt_tensor **in; /* model input order */
    size_t n_out;
    size_t *out_index;      /* model output index of each requested output */
    const char **out_names; /* their names (the model's strings) */
    mopt_tensor **outputs;  /* the caller's array */
    int64_t enqueued_ns;
    int64_t deadline_ns; /* start-by time for the timeout, 0 = none */
    int64_t start_by;    /* when its wait for company is over */
    uint64_t key;        /* hash of the dims that must match within a batch */
    req_state state;
    mopt_status status;
    char msg[BATCHER_MSG];
    pthread_cond_t cv; /* signalled when state becomes REQ_DONE */
} request;

typedef struct {
    mopt_batcher *b;
    mopt_session *session;
    pthread_t thread;
    bool started;
    request **batch; /* max_batch slots */
} worker;

struct mopt_batcher {
    const mopt_model *model;
    int max_batch; /* effective */
    int64_t max_delay_ns;
    size_t capacity;
    int n_workers;
    int64_t *buckets;
    size_t n_buckets;
    bool no_padding;

    size_t n_in, n_out;
    io_info *in_info, *out_info;

    worker *workers;

    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* workers: a request arrived, or stopping */
    pthread_cond_t idle_cv; /* destroy: the last caller left */
    request *head, *tail;
    size_t queue_len;
    size_t inside; /* callers inside mopt_batcher_run past the stop check */
    bool stopping;
    mopt_batcher_stats stats;
};

/* ---- time ------------------------------------------------------------- */

static struct timespec abs_time(int64_t mono_ns) {
    /* mopt_now_ns is CLOCK_MONOTONIC, as are the condition variables */
    struct timespec ts;
    ts.tv_sec = (time_t)(mono_ns / 1000000000);
    ts.tv_nsec = (long)(mono_ns % 1000000000);
    return ts;
}

static int cond_init_monotonic(pthread_cond_t *cv) {
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0) return -1;
    int rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (rc == 0) rc = pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
    return rc;
}

/* ---- model description -------------------------------------------------- */

static void describe_io(const mopt_model *m, mopt_io_kind kind, size_t i, io_info *info) {
    info->name = mopt_model_io_name(m, kind, i);
    info->dtype = mopt_model_io_dtype(m, kind, i);
    info->rank = mopt_model_io_rank(m, kind, i);
    if (info->rank > MOPT_MAX_RANK) info->rank = -1;
    for (int a = 0; a < info->rank; a++) {
        info->dims[a] = mopt_model_io_dim(m, kind, i, a);
        info->dim_names[a] = mopt_model_io_dim_name(m, kind, i, a);
    }
}

/* Why the model's batch axis cannot grow, or NULL. */
static const char *unbatchable(const io_info *info, const char *side, char *buf, size_t cap) {
    if (info->dtype == MOPT_DTYPE_STRING)
        snprintf(buf, cap, "%s '%s' holds strings", side, info->name);
    else if (info->rank < 0 && strcmp(side, "input") == 0)
        snprintf(buf, cap, "%s '%s' has an unknown rank", side, info->name);
    else if (info->rank == 0)
        snprintf(buf, cap, "%s '%s' is a scalar (no batch axis)", side, info->name);
    else if (info->rank > 0 && info->dims[0] >= 0)
        snprintf(buf, cap, "%s '%s' has axis 0 fixed at %" PRId64, side, info->name, info->dims[0]);
    else
        return NULL;
    return buf;
}

/* ---- checks of one request ---------------------------------------------- */

/* *idx = the index in info[0..n) of names[k] (side: "input" or "output");
 * without names, k itself. */
static mopt_status named_index(const char *const *names, size_t k, const io_info *info, size_t n,
                               const char *side, size_t *idx) {
    *idx = k;
    if (!names) return MOPT_OK;
    if (!names[k])
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_batcher_run: %s name %zu is NULL", side,
                         k);
    for (*idx = 0; *idx < n; (*idx)++)
        if (strcmp(info[*idx].name, names[k]) == 0) return MOPT_OK;
    return mopt_fail(MOPT_ERR_NOT_FOUND, "mopt_batcher_run: the model has no %s '%s'", side,
                     names[k]);
}

static mopt_status check_request(const mopt_batcher *b, size_t n_inputs,
                                 const char *const *input_names, const mopt_tensor *const *inputs,
                                 size_t n_outputs, const char *const *output_names,
                                 mopt_tensor **outputs, request *r) {
    if (n_inputs != b->n_in)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_batcher_run: the model has %zu inputs, %zu were given", b->n_in,
                         n_inputs);
    if (n_inputs && !inputs)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_batcher_run: inputs is NULL");
    if (n_outputs && !outputs)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_batcher_run: outputs is NULL");
    for (size_t k = 0; k < n_inputs; k++) {
        size_t idx;
        mopt_status st = named_index(input_names, k, b->in_info, b->n_in, "input", &idx);
        if (st) return st;
        if (r->in[idx])
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_batcher_run: input '%s' is fed twice",
                             b->in_info[idx].name);
        if (!inputs[k])
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_batcher_run: input '%s' is NULL",
                             b->in_info[idx].name);
        r->in[idx] = inputs[k];
    }
    r->n_out = n_outputs;
    for (size_t k = 0; k < n_outputs; k++) {
        size_t idx;
        mopt_status st = named_index(output_names, k, b->out_info, b->n_out, "output", &idx);
        if (st) return st;
        if (!output_names && idx >= b->n_out) {
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "mopt_batcher_run: %zu outputs asked for, the model has %zu",
                             n_outputs, b->n_out);
        }
        for (size_t j = 0; j < k; j++)
            if (r->out_index[j] == idx)
                return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                                 "mopt_batcher_run: output '%s' is asked for twice",
                                 b->out_info[idx].name);
        r->out_index[k] = idx;
        r->out_names[k] = b->out_info[idx].name;
        const mopt_tensor *o = outputs[k];
        if (o && o->read_only)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "mopt_batcher_run: output '%s' is a read-only tensor "
                             "(mopt_tensor_wrap_const)",
                             b->out_info[idx].name);
        if (o && b->out_info[idx].dtype != MOPT_DTYPE_UNDEFINED &&
            o->dtype != b->out_info[idx].dtype)
            return mopt_fail(MOPT_ERR_TYPE,
                             "mopt_batcher_run: output '%s' is %s, the model gives %s",
                             b->out_info[idx].name, mopt_dtype_name(o->dtype),
                             mopt_dtype_name(b->out_info[idx].dtype));
    }
    if (b->max_batch == 1) return MOPT_OK; /* passed to the session as it is */

    for (size_t i = 0; i < b->n_in; i++) {
        const io_info *info = &b->in_info[i];
        const mopt_tensor *t = r->in[i];
        if (info->dtype != MOPT_DTYPE_UNDEFINED && t->dtype != info->dtype)
            return mopt_fail(MOPT_ERR_TYPE,
                             "mopt_batcher_run: input '%s' is %s, the model takes %s", info->name,
                             mopt_dtype_name(t->dtype), mopt_dtype_name(info->dtype));
        if (t->rank != info->rank)
            return mopt_fail(MOPT_ERR_SHAPE,
                             "mopt_batcher_run: input '%s' has rank %d, the model takes rank %d",
                             info->name, (int)t->rank, info->rank);
        if (t->dims[0] != 1)
            return mopt_fail(MOPT_ERR_SHAPE,
                             "mopt_batcher_run: input '%s' has %" PRId64
                             " on axis 0; a batcher request is one sample (batch dim 1)",
                             info->name, t->dims[0]);
        for (int a = 1; a < info->rank; a++)
            if (info->dims[a] >= 0 && t->dims[a] != info->dims[a])
                return mopt_fail(MOPT_ERR_SHAPE,
                                 "mopt_batcher_run: input '%s' has %" PRId64
                                 " on axis %d, the model fixes it at %" PRId64,
                                 info->name, t->dims[a], a, info->dims[a]);
    }
    /* inputs sharing a symbolic dimension must agree on it */
    for (size_t i = 0; i < b->n_in; i++)
        for (int a = 1; a < b->in_info[i].rank; a++) {
            const char *name = b->in_info[i].dim_names[a];
            if (!name) continue;
            for (size_t j = i + 1; j < b->n_in; j++)
                for (int c = 1; c < b->in_info[j].rank; c++) {
                    const char *other = b->in_info[j].dim_names[c];
                    if (other && strcmp(name, other) == 0 && r->in[i]->dims[a] != r->in[j]->dims[c])
                        return mopt_fail(MOPT_ERR_SHAPE,
                                         "mopt_batcher_run: input '%s' axis %d (%" PRId64
                                         ") and input '%s' axis %d (%" PRId64
                                         ") are both '%s' and must be equal",
                                         b->in_info[i].name, a, r->in[i]->dims[a],
                                         b->in_info[j].name, c, r->in[j]->dims[c], name);
                }
        }
    return MOPT_OK;
}

/* Can request r share a batch with request h? */
static bool compatible(const mopt_batcher *b, const request *h, const request *r) {
    for (size_t i = 0; i < b->n_in; i++) {
        const mopt_tensor *x = h->in[i], *y = r->in[i];
        if (x->dtype != y->dtype || x->rank != y->rank) return false;
        for (int a = 1; a < x->rank; a++) {
            if (a == 1 && b->in_info[i].ragged) continue;
            if (x->dims[a] != y->dims[a]) return false;
        }
    }
    return true;
}

/* A hash of what compatible() compares, so that grouping the queue costs
 * one comparison per group. */
static uint64_t batch_key(const mopt_batcher *b, const request *r) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < b->n_in; i++) {
        const mopt_tensor *x = r->in[i];
        h = (h ^ (uint64_t)x->dtype) * 1099511628211ull;
        h = (h ^ (uint64_t)x->rank) * 1099511628211ull;
        for (int a = 1; a < x->rank; a++)
            if (!(a == 1 && b->in_info[i].ragged))
                h = (h ^ (uint64_t)x->dims[a]) * 1099511628211ull;
    }
    return h;
}

/* ---- running a batch ------------------------------------------------------ */

static void set_result(request *r, mopt_status st, const char *msg) {
    r->status = st;
    r->msg[0] = '\0';
    if (st != MOPT_OK) snprintf(r->msg, sizeof r->msg, "%s", msg);
}

/* One request on its own tensors, exactly as mopt_session_run. */
static void run_alone(worker *w, request *r) {
    mopt_status st =
        mopt_session_run(w->session, w->b->n_in, NULL, r->in, r->n_out, r->out_names, r->outputs);
    set_result(r, st, mopt_last_error());
}

static int64_t bucket_of(const mopt_batcher *b, int64_t len) {
    for (size_t k = 0; k < b->n_buckets; k++)
        if (b->buckets[k] >= len) return b->buckets[k];
    return len;
}

static int64_t inner_elems(const mopt_tensor *t, int from) {
    int64_t n = 1;
    for (int a = from; a < t->rank; a++)
        n *= t->dims[a];
    return n;
}

/* The rows of request `row` in batched output o, into outputs[k] (a new
 * tensor, or the caller's, which must have exactly that shape). */
static mopt_status hand_out(const mopt_tensor *o, int64_t row, int64_t keep1, mopt_tensor **dst,
                            const char *name) {
    int64_t dims[MOPT_MAX_RANK];
    for (int a = 0; a < o->rank; a++)
        dims[a] = o->dims[a];
    dims[0] = 1;
    if (o->rank >= 2) dims[1] = keep1;
    size_t es = mopt_dtype_size(o->dtype);
    int64_t per1 = o->rank >= 2 ? inner_elems(o, 2) : 1;
    int64_t rows1 = o->rank >= 2 ? o->dims[1] : 1;
    const char *src = (const char *)o->data + (size_t)(row * rows1 * per1) * es;
    size_t bytes = (size_t)((o->rank >= 2 ? keep1 : 1) * per1) * es;
    mopt_tensor *t = *dst;
    if (t) {
        bool same = t->dtype == o->dtype && t->rank == o->rank;
        for (int a = 0; same && a < o->rank; a++)
            same = t->dims[a] == dims[a];
        if (!same) {
            char want[160] = "", have[160] = "";
            size_t n1 = 0, n2 = 0;
            for (int a = 0; a < o->rank && n1 < sizeof want; a++)
                n1 += (size_t)snprintf(want + n1, sizeof want - n1, a ? "x%" PRId64 : "%" PRId64,
                                       dims[a]);
            for (int a = 0; a < t->rank && n2 < sizeof have; a++)
                n2 += (size_t)snprintf(have + n2, sizeof have - n2, a ? "x%" PRId64 : "%" PRId64,
                                       t->dims[a]);
            return mopt_fail(t->dtype != o->dtype ? MOPT_ERR_TYPE : MOPT_ERR_SHAPE,
                             "output '%s': the caller's tensor is %s [%s], the request's output is "
                             "%s [%s]",
                             name, mopt_dtype_name(t->dtype), have, mopt_dtype_name(o->dtype),
                             want);
        }
        if (bytes) memcpy(t->data, src, bytes);
        return MOPT_OK;
    }
    mopt_status st = mopt_tensor_create(o->dtype, o->rank, dims, &t);
    if (st) return mopt_fail_context(st, "output '%s'", name);
    if (bytes) memcpy(t->data, src, bytes);
    *dst = t;
    return MOPT_OK;
}

/* Runs reqs[0..n) (n >= 2) as one batch; false when the batch as a whole
 * could not run (then nothing was handed out and the caller reruns them one
 * at a time). */
static bool run_batched(worker *w, request **reqs, int n, uint64_t *padded, uint64_t *total) {
    mopt_batcher *b = w->b;
    size_t n_in = b->n_in, n_out = b->n_out;
    bool ok = false;
    mopt_tensor **bin = mopt_calloc(n_in + n_out, sizeof *bin);
    int64_t *pad_len = mopt_calloc(n_in + 1, sizeof *pad_len);
    size_t most_out = 1;
    for (int r = 0; r < n; r++)
        if (reqs[r]->n_out > most_out) most_out = reqs[r]->n_out;
    bool *created = mopt_calloc(most_out, sizeof *created);
    if (!bin || !pad_len || !created) goto done;
    mopt_tensor **bout = bin + n_in;
    bool any_padding = false;
    for (size_t i = 0; i < n_in; i++) {
        const mopt_tensor *h = reqs[0]->in[i];
        int64_t dims[MOPT_MAX_RANK];
        for (int a = 0; a < h->rank; a++)
            dims[a] = h->dims[a];
        dims[0] = n;
        if (b->in_info[i].ragged) {
            int64_t longest = 0;
            for (int r = 0; r < n; r++)
                if (reqs[r]->in[i]->dims[1] > longest) longest = reqs[r]->in[i]->dims[1];
            dims[1] = bucket_of(b, longest);
            for (int r = 0; r < n; r++)
                if (reqs[r]->in[i]->dims[1] != dims[1]) any_padding = true;
        }
        pad_len[i] = h->rank >= 2 ? dims[1] : 0;
        if (mopt_tensor_create(h->dtype, h->rank, dims, &bin[i]) != MOPT_OK) goto done;
        size_t es = mopt_dtype_size(h->dtype);
        int64_t per1 = h->rank >= 2 ? inner_elems(h, 2) : 1;
        int64_t stride = (h->rank >= 2 ? dims[1] : 1) * per1;
        for (int r = 0; r < n; r++) {
            const mopt_tensor *x = reqs[r]->in[i];
            int64_t elems = (x->rank >= 2 ? x->dims[1] : 1) * per1;
            if (elems)
                memcpy((char *)bin[i]->data + (size_t)(r * stride) * es, x->data,
                       (size_t)elems * es);
            *padded += (uint64_t)(stride - elems);
        }
        *total += (uint64_t)(stride * n);
    }
    if (mopt_session_run(w->session, n_in, NULL, (const mopt_tensor *const *)bin, n_out, NULL,
                         bout) != MOPT_OK)
        goto done;
    /* which outputs are cropped on axis 1, to the length of which input */
    int64_t single_pad = -1; /* the only padded length of the batch, or -2 */
    for (size_t i = 0; i < n_in; i++)
        if (b->in_info[i].ragged)
            single_pad = single_pad == -1 || single_pad == pad_len[i] ? pad_len[i] : -2;
    for (size_t m = 0; m < n_out; m++)
        if (!bout[m] || bout[m]->rank < 1 || bout[m]->dims[0] != n) goto done; /* not batched */
    for (int r = 0; r < n; r++) {
        request *q = reqs[r];
        mopt_status st = MOPT_OK;
        size_t k;
        memset(created, 0, most_out * sizeof *created);
        for (k = 0; k < q->n_out && st == MOPT_OK; k++) {
            size_t m = q->out_index[k];
            created[k] = q->outputs[k] == NULL;
            const mopt_tensor *o = bout[m];
            const io_info *oi = &b->out_info[m];
            int64_t keep1 = o->rank >= 2 ? o->dims[1] : 0;
            bool may_crop = any_padding && o->rank >= 2 && (oi->rank < 0 || oi->dims[1] < 0);
            if (may_crop) {
                const char *nm = oi->rank >= 2 ? oi->dim_names[1] : NULL;
                for (size_t i = 0; i < n_in; i++) {
                    if (!b->in_info[i].ragged || pad_len[i] != o->dims[1]) continue;
                    bool match = nm ? (b->in_info[i].dim_names[1] &&
                                       strcmp(nm, b->in_info[i].dim_names[1]) == 0)
                                    : single_pad == pad_len[i];
                    if (match) {
                        keep1 = q->in[i]->dims[1];
                        break;
                    }
                }
            }
            st = hand_out(o, r, keep1, &q->outputs[k], oi->name);
            if (st != MOPT_OK) created[k] = false;
        }
        if (st != MOPT_OK) {
            /* hand nothing over: drop the tensors made for this request */
            char msg[BATCHER_MSG];
            snprintf(msg, sizeof msg, "%s", mopt_last_error());
            for (size_t j = 0; j < q->n_out; j++)
                if (created[j]) {
                    mopt_tensor_destroy(q->outputs[j]);
                    q->outputs[j] = NULL;
                }
            set_result(q, st, msg);
        } else {
            set_result(q, MOPT_OK, "");
        }
    }
    ok = true;
done:
    if (bin) {
        for (size_t i = 0; i < n_in + n_out; i++)
            mopt_tensor_destroy(bin[i]);
    }
    mopt_free(bin);
    mopt_free(pad_len);
    mopt_free(created);
    return ok;
}

/* ---- workers ---------------------------------------------------------------- */

/* A group of compatible queued requests, as a worker sees the queue. */
typedef struct {
    request *head; /* the oldest */
    int n;         /* members, up to max_batch */
    int64_t start_by;
} group;

#define BATCHER_GROUPS 16

/* Removes up to max_batch requests compatible with head (head first, in
 * queue order) into w->batch; returns their count. Under the lock. */
static int take_group(worker *w, request *head) {
    mopt_batcher *b = w->b;
    int n = 0;
    for (request *r = head, *next; r && n < b->max_batch; r = next) {
        next = r->next;
        if (r != head && (r->key != head->key || !compatible(b, head, r))) continue;
        if (r->prev)
            r->prev->next = r->next;
        else
            b->head = r->next;
        if (r->next)
            r->next->prev = r->prev;
        else
            b->tail = r->prev;
        r->prev = r->next = NULL;
        r->state = REQ_RUNNING;
        w->batch[n++] = r;
    }
    b->queue_len -= (size_t)n;
    return n;
}

static void *worker_main(void *arg) {
    worker *w = arg;
    mopt_batcher *b = w->b;
    group g[BATCHER_GROUPS];
    pthread_mutex_lock(&b->mu);
    for (;;) {
        if (!b->head) {
            if (b->stopping) break;
            pthread_cond_wait(&b->work_cv, &b->mu);
            continue;
        }
        /* the queue as groups of compatible requests, oldest group first; a
         * group is due when full, when its first member's wait for company
         * is over, or when draining. Requests beyond the tracked groups wait
         * for them to go. */
        int ng = 0;
        for (request *r = b->head; r; r = r->next) {
            int j = 0;
            while (j < ng && (g[j].head->key != r->key || !compatible(b, g[j].head, r)))
                j++;
            if (j == ng) {
                if (ng == BATCHER_GROUPS) continue;
                g[ng++] = (group){r, 0, INT64_MAX};
            }
            if (g[j].n == b->max_batch) continue;
            g[j].n++;
            if (r->start_by < g[j].start_by) g[j].start_by = r->start_by;
        }
        int64_t now = mopt_now_ns(), wake = INT64_MAX;
        int pick = -1;
        for (int j = 0; j < ng && pick < 0; j++) {
            if (g[j].n == b->max_batch || b->stopping || now >= g[j].start_by)
                pick = j;
            else if (g[j].start_by < wake)
                wake = g[j].start_by;
        }
        if (pick < 0) {
            struct timespec ts = abs_time(wake);
            pthread_cond_timedwait(&b->work_cv, &b->mu, &ts);
            continue;
        }
        int n = take_group(w, g[pick].head);
        b->stats.batches++;
        b->stats.batch_size_hist[n > 64 ? 63 : n - 1]++;
        if (b->head) pthread_cond_signal(&b->work_cv); /* another worker may take the rest */
        pthread_mutex_unlock(&b->mu);

        uint64_t padded = 0, total = 0;
        bool rerun = false;
        if (n == 1) {
            run_alone(w, w->batch[0]);
            for (size_t i = 0; i < b->n_in; i++)
                total += (uint64_t)mopt_tensor_element_count(w->batch[0]->in[i]);
        } else if (!run_batched(w, w->batch, n, &padded, &total)) {
            rerun = true;
            for (int r = 0; r < n; r++)
                run_alone(w, w->batch[r]);
        }

        pthread_mutex_lock(&b->mu);
        b->stats.padded_elements += padded;
        b->stats.input_elements += total;
        if (rerun) b->stats.reruns++;
        for (int r = 0; r < n; r++) {
            w->batch[r]->state = REQ_DONE;
            pthread_cond_signal(&w->batch[r]->cv);
        }
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* ---- public API ------------------------------------------------------------- */

static void batcher_free(mopt_batcher *b) {
    if (!b) return;
    if (b->workers) {
        for (int k = 0; k < b->n_workers; k++) {
            mopt_session_destroy(b->workers[k].session);
            mopt_free(b->workers[k].batch);
        }
    }
    mopt_free(b->workers);
    mopt_free(b->in_info);
    mopt_free(b->out_info);
    mopt_free(b->buckets);
    mopt_free(b);
}

static void stop_workers(mopt_batcher *b) {
    pthread_mutex_lock(&b->mu);
    b->stopping = true;
    pthread_cond_broadcast(&b->work_cv);
    while (b->inside > 0)
        pthread_cond_wait(&b->idle_cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
    for (int k = 0; k < b->n_workers; k++)
        if (b->workers[k].started) pthread_join(b->workers[k].thread, NULL);
}

mopt_status mopt_batcher_create(const mopt_model *model, const mopt_options *opts,
                                const mopt_batcher_config *config, mopt_batcher **out) {
    mopt_clear_error();
    if (!out) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_batcher_create: out is NULL");
    *out = NULL;
    if (!model) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_batcher_create: model is NULL");
    mopt_batcher_config cfg = {sizeof cfg, 8, 2000, 256, 1, NULL, 0, 0};
    if (config) {
        size_t least = offsetof(mopt_batcher_config, n_seq_buckets) + sizeof(size_t);
        if (config->struct_size < least)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "mopt_batcher_create: config->struct_size is %zu, at least %zu "
                             "(set it to sizeof(mopt_batcher_config))",
                             config->struct_size, least);
        memcpy(&cfg, config, config->struct_size < sizeof cfg ? config->struct_size : sizeof cfg);
        if (cfg.max_batch == 0) cfg.max_batch = 8;
        if (cfg.queue_capacity == 0) cfg.queue_capacity = 256;
        if (cfg.workers == 0) cfg.workers = 1;
    }
    if (cfg.max_batch < 1 || cfg.max_batch > BATCHER_MAX_BATCH)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_batcher_create: max_batch %d is outside 1..%d", cfg.max_batch,
                         BATCHER_MAX_BATCH);
    if (cfg.max_delay_us < 0 || cfg.max_delay_us > BATCHER_MAX_DELAY_US)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_batcher_create: max_delay_us %" PRId64 " is outside 0..%" PRId64,
                         cfg.max_delay_us, BATCHER_MAX_DELAY_US);
    if (cfg.queue_capacity > BATCHER_MAX_QUEUE)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_batcher_create: queue_capacity %zu is above %zu", cfg.queue_capacity,
                         BATCHER_MAX_QUEUE);
    if (cfg.workers < 1 || cfg.workers > BATCHER_MAX_WORKERS)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_batcher_create: workers %d is outside 1..%d", cfg.workers,
                         BATCHER_MAX_WORKERS);
    if (cfg.no_padding != 0 && cfg.no_padding != 1)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_batcher_create: no_padding is 0 or 1");
    if (cfg.n_seq_buckets > BATCHER_MAX_BUCKETS || (cfg.n_seq_buckets && !cfg.seq_buckets))
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_batcher_create: %zu seq_buckets (at most %d, and not NULL)",
                         cfg.n_seq_buckets, BATCHER_MAX_BUCKETS);
    for (size_t k = 0; k < cfg.n_seq_buckets; k++)
        if (cfg.seq_buckets[k] < 1 || (k && cfg.seq_buckets[k] <= cfg.seq_buckets[k - 1]))
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "mopt_batcher_create: seq_buckets[%zu] = %" PRId64
                             ": buckets are >= 1 and strictly ascending",
                             k, cfg.seq_buckets[k]);

    mopt_batcher *b = mopt_calloc(1, sizeof *b);
    if (!b) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating a batcher");
    b->model = model;
    b->max_batch = cfg.max_batch;
    b->max_delay_ns = cfg.max_delay_us * 1000;
    b->capacity = cfg.queue_capacity;
    b->no_padding = cfg.no_padding == 1;
    b->n_in = mopt_model_io_count(model, MOPT_INPUT);
    b->n_out = mopt_model_io_count(model, MOPT_OUTPUT);
    b->in_info = mopt_calloc(b->n_in + 1, sizeof *b->in_info);
    b->out_info = mopt_calloc(b->n_out + 1, sizeof *b->out_info);
    b->buckets = mopt_calloc(cfg.n_seq_buckets + 1, sizeof *b->buckets);
    b->workers = mopt_calloc((size_t)cfg.workers, sizeof *b->workers);
    if (!b->in_info || !b->out_info || !b->buckets || !b->workers) {
        batcher_free(b);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating a batcher");
    }
    b->n_buckets = cfg.n_seq_buckets;
    if (cfg.n_seq_buckets)
        memcpy(b->buckets, cfg.seq_buckets, cfg.n_seq_buckets * sizeof *b->buckets);

    char why[256];
    const char *reason = NULL;
    for (size_t i = 0; i < b->n_in; i++) {
        io_info *info = &b->in_info[i];
        describe_io(model, MOPT_INPUT, i, info);
        info->ragged = !b->no_padding && info->rank >= 2 && info->dims[1] < 0;
        if (!reason) reason = unbatchable(info, "input", why, sizeof why);
    }
    for (size_t i = 0; i < b->n_out; i++) {
        describe_io(model, MOPT_OUTPUT, i, &b->out_info[i]);
        if (!reason) reason = unbatchable(&b->out_info[i], "output", why, sizeof why);
    }
    if (reason && b->max_batch > 1) {
        mopt_log(MOPT_LOG_WARNING,
                 "mopt_batcher_create: %s: the batch axis cannot grow, max_batch is 1 "
                 "(requests run one by one on %d worker%s)",
                 reason, cfg.workers, cfg.workers > 1 ? "s" : "");
        b->max_batch = 1;
    }

    b->n_workers = cfg.workers;
    for (int k = 0; k < b->n_workers; k++) {
        worker *w = &b->workers[k];
        w->b = b;
        w->batch = mopt_calloc((size_t)b->max_batch, sizeof *w->batch);
        if (!w->batch) {
            batcher_free(b);
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating a batcher");
        }
        mopt_status st = mopt_session_create(model, opts, &w->session);
        if (st) {
            mopt_fail_context(st, "mopt_batcher_create: worker %d's session", k);
            batcher_free(b);
            return st;
        }
    }
    if (pthread_mutex_init(&b->mu, NULL) != 0) {
        batcher_free(b);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "mopt_batcher_create: cannot make a mutex");
    }
    if (cond_init_monotonic(&b->work_cv) != 0) {
        pthread_mutex_destroy(&b->mu);
        batcher_free(b);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "mopt_batcher_create: cannot make a condition");
    }
    if (pthread_cond_init(&b->idle_cv, NULL) != 0) {
        pthread_cond_destroy(&b->work_cv);
        pthread_mutex_destroy(&b->mu);
        batcher_free(b);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "mopt_batcher_create: cannot make a condition");
    }
    for (int k = 0; k < b->n_workers; k++) {
        int rc = pthread_create(&b->workers[k].thread, NULL, worker_main, &b->workers[k]);
        if (rc != 0) {
            stop_workers(b);
            pthread_cond_destroy(&b->idle_cv);
            pthread_cond_destroy(&b->work_cv);
            pthread_mutex_destroy(&b->mu);
            batcher_free(b);
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY,
                             "mopt_batcher_create: cannot start worker thread %d: %s", k,
                             strerror(rc));
        }
        b->workers[k].started = true;
    }
    b->stats.effective_max_batch = b->max_batch;
    *out = b;
    return MOPT_OK;
}

void mopt_batcher_destroy(mopt_batcher *b) {
    if (!b) return;
    stop_workers(b);
    pthread_cond_destroy(&b->idle_cv);
    pthread_cond_destroy(&b->work_cv);
    pthread_mutex_destroy(&b->mu);
    batcher_free(b);
}

mopt_status mopt_batcher_run(mopt_batcher *b, size_t n_inputs, const char *const *input_names,
                             const mopt_tensor *const *inputs, size_t n_outputs,
                             const char *const *output_names, mopt_tensor **outputs,
                             int64_t timeout_us) {
    mopt_clear_error();
    if (!b) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_batcher_run: batcher is NULL");
    request r;
    memset(&r, 0, sizeof r);
    /* one block: in[n_in], out_index[n_outputs], out_names[n_outputs] */
    size_t bytes = (b->n_in + 1) * sizeof *r.in + (n_outputs + 1) * sizeof *r.out_index +
                   (n_outputs + 1) * sizeof *r.out_names;
    void *block = n_outputs < ((size_t)1 << 20) ? mopt_calloc(1, bytes) : NULL;
    if (!block) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "mopt_batcher_run: out of memory");
    r.in = block;
    r.out_index = (size_t *)(r.in + b->n_in + 1);
    r.out_names = (const char **)(r.out_index + n_outputs + 1);
    r.outputs = outputs;
    mopt_status st =
        timeout_us < 0
            ? mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                        "mopt_batcher_run: timeout_us %" PRId64 " is negative (0 = no timeout)",
                        timeout_us)
            : check_request(b, n_inputs, input_names, inputs, n_outputs, output_names, outputs, &r);
    char early[BATCHER_MSG];
    if (st) snprintf(early, sizeof early, "%s", mopt_last_error());
    if (st == MOPT_OK && cond_init_monotonic(&r.cv) != 0) {
        mopt_free(block);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "mopt_batcher_run: cannot make a condition");
    }

    pthread_mutex_lock(&b->mu);
    if (b->stopping) {
        pthread_mutex_unlock(&b->mu);
        if (st == MOPT_OK) pthread_cond_destroy(&r.cv);
        mopt_free(block);
        return mopt_fail(MOPT_ERR_CANCELLED, "mopt_batcher_run: the batcher is being destroyed");
    }
    b->stats.requests++;
    if (st != MOPT_OK) {
        b->stats.failed++;
        b->stats.rejected_invalid++;
        pthread_mutex_unlock(&b->mu);
        mopt_free(block);
        return mopt_fail(st, "%s", early);
    }
    if (b->queue_len >= b->capacity) {
        b->stats.rejected_full++;
        size_t cap = b->capacity;
        pthread_mutex_unlock(&b->mu);
        pthread_cond_destroy(&r.cv);
        mopt_free(block);
        return mopt_fail(MOPT_ERR_BUSY,
                         "mopt_batcher_run: the queue is full (%zu requests, its capacity); "
                         "retry later or raise queue_capacity",
                         cap);
    }
    r.enqueued_ns = mopt_now_ns();
    r.start_by = r.enqueued_ns + b->max_delay_ns;
    if (timeout_us > 0 && timeout_us < INT64_MAX / 4000) { /* longer: no timeout */
        /* waiting for company takes at most half the timeout */
        r.deadline_ns = r.enqueued_ns + timeout_us * 1000;
        if (timeout_us * 500 < b->max_delay_ns) r.start_by = r.enqueued_ns + timeout_us * 500;
    }
    r.key = b->max_batch > 1 ? batch_key(b, &r) : 0;
    r.state = REQ_QUEUED;
    r.prev = b->tail;
    if (b->tail)
        b->tail->next = &r;
    else
        b->head = &r;
    b->tail = &r;
    b->queue_len++;
    b->inside++;
    pthread_cond_signal(&b->work_cv);
    bool timed_out = false;
    while (r.state != REQ_DONE) {
        if (r.state == REQ_QUEUED && r.deadline_ns) {
            if (mopt_now_ns() >= r.deadline_ns) {
                if (r.prev)
                    r.prev->next = r.next;
                else
                    b->head = r.next;
                if (r.next)
                    r.next->prev = r.prev;
                else
                    b->tail = r.prev;
                b->queue_len--;
                timed_out = true;
                pthread_cond_broadcast(&b->work_cv); /* the oldest request may have changed */
                break;
            }
            struct timespec ts = abs_time(r.deadline_ns);
            pthread_cond_timedwait(&r.cv, &b->mu, &ts);
        } else {
            pthread_cond_wait(&r.cv, &b->mu);
        }
    }
    if (timed_out) {
        b->stats.timed_out++;
        r.status = MOPT_ERR_CANCELLED;
        snprintf(r.msg, sizeof r.msg,
                 "mopt_batcher_run: the request was not started within its timeout of %" PRId64
                 " us (%zu requests queued)",
                 timeout_us, b->queue_len);
    } else if (r.status == MOPT_OK) {
        b->stats.completed++;
    } else {
        b->stats.failed++;
    }
    b->inside--;
    if (b->stopping && b->inside == 0) pthread_cond_broadcast(&b->idle_cv);
    pthread_mutex_unlock(&b->mu);
    pthread_cond_destroy(&r.cv);
    mopt_free(block);
    if (r.status != MOPT_OK) return mopt_fail(r.status, "%s", r.msg);
    return MOPT_OK;
}

mopt_status mopt_batcher_get_stats(const mopt_batcher *batcher, mopt_batcher_stats *stats) {
    mopt_clear_error();
    if (!batcher || !stats)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_batcher_get_stats: NULL argument");
    size_t least = offsetof(mopt_batcher_stats, queue_depth) + sizeof(size_t);
    size_t want = stats->struct_size;
    if (want < least)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_batcher_get_stats: stats->struct_size is %zu, at least %zu (set "
                         "it to sizeof(mopt_batcher_stats))",
                         want, least);
    mopt_batcher *b = (mopt_batcher *)batcher; /* the lock is not part of the value */
    mopt_batcher_stats now;
    pthread_mutex_lock(&b->mu);
    now = b->stats;
    now.queue_depth = b->queue_len;
    pthread_mutex_unlock(&b->mu);
    now.struct_size = want;
    memcpy(stats, &now, want < sizeof now ? want : sizeof now);
    return MOPT_OK;
}
