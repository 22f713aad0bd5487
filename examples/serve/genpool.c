/* genpool.c — the generator pool and the UTF-8 assembler of examples/serve
 * (see genpool.h). */
#include "genpool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gen_pool {
    mopt_model *model;
    mopt_generator **all, **free_list;
    size_t n, n_free, waiting;
    int64_t vocab;
    char name[128];
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

gen_pool *gen_pool_create(const char *model_path, int n, int threads, int64_t max_seq, char *err,
                          size_t errsz) {
    gen_pool *p = calloc(1, sizeof *p);
    mopt_options *opts = NULL;
    if (!p) {
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    p->all = calloc((size_t)n, sizeof *p->all);
    p->free_list = calloc((size_t)n, sizeof *p->free_list);
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    mopt_status st = p->all && p->free_list ? MOPT_OK : MOPT_ERR_OUT_OF_MEMORY;
    if (st == MOPT_OK) st = mopt_options_create(&opts);
    if (st == MOPT_OK) st = mopt_options_set_int(opts, "threads", threads);
    if (st == MOPT_OK) st = mopt_model_load(model_path, opts, &p->model);
    for (int k = 0; k < n && st == MOPT_OK; k++) {
        st = mopt_generator_create(p->model, opts, max_seq, &p->all[k]);
        if (st == MOPT_OK) p->n++;
    }
    if (st == MOPT_OK) st = mopt_generator_get_stat(p->all[0], "vocab", &p->vocab);
    mopt_options_destroy(opts);
    if (st != MOPT_OK) {
        snprintf(err, errsz, "generation model %s: %s: %s", model_path, mopt_status_string(st),
                 mopt_last_error());
        gen_pool_destroy(p);
        return NULL;
    }
    memcpy(p->free_list, p->all, p->n * sizeof *p->all);
    p->n_free = p->n;
    const char *base = strrchr(model_path, '/');
    base = base ? base + 1 : model_path;
    snprintf(p->name, sizeof p->name, "%s", base);
    char *dot = strrchr(p->name, '.');
    if (dot && dot != p->name) *dot = '\0';
    return p;
}

void gen_pool_destroy(gen_pool *p) {
    if (!p) return;
    for (size_t k = 0; k < p->n; k++)
        mopt_generator_destroy(p->all[k]);
    mopt_model_destroy(p->model);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->all);
    free(p->free_list);
    free(p);
}

int64_t gen_pool_vocab(const gen_pool *p) { return p->vocab; }
const char *gen_pool_model_name(const gen_pool *p) { return p->name; }

mopt_generator *gen_pool_acquire(gen_pool *p, size_t max_waiters, int64_t deadline_ns, int *why) {
    mopt_generator *g = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->n_free == 0 && p->waiting >= max_waiters) {
        *why = 429;
        pthread_mutex_unlock(&p->mu);
        return NULL;
    }
    p->waiting++;
    int timed_out = 0;
    while (p->n_free == 0 && !timed_out) {
        if (deadline_ns > 0) {
            struct timespec ts = {.tv_sec = deadline_ns / 1000000000,
                                  .tv_nsec = deadline_ns % 1000000000};
            timed_out = pthread_cond_timedwait(&p->cv, &p->mu, &ts) != 0 && p->n_free == 0;
        } else {
            pthread_cond_wait(&p->cv, &p->mu);
        }
    }
    p->waiting--;
    if (p->n_free > 0)
        g = p->free_list[--p->n_free];
    else
        *why = 504;
    pthread_mutex_unlock(&p->mu);
    return g;
}

void gen_pool_release(gen_pool *p, mopt_generator *g) {
    pthread_mutex_lock(&p->mu);
    p->free_list[p->n_free++] = g;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void gen_pool_get_stats(gen_pool *p, gen_pool_stats *s) {
    memset(s, 0, sizeof *s);
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    s->size = p->n;
    s->busy = p->n - p->n_free;
    s->waiting = p->waiting;
    pthread_mutex_unlock(&p->mu);
}

/* ---- UTF-8 ---------------------------------------------------------------- */

static size_t put_fffd(char *out) {
    out[0] = (char)0xEF;
    out[1] = (char)0xBF;
    out[2] = (char)0xBD;
    return 3;
}

size_t utf8_push(utf8_asm *u, unsigned char b, char *out) {
    size_t o = 0;
    if (u->n > 0) {
        /* the second byte's range depends on the lead (no overlongs, no
         * surrogates, nothing above U+10FFFF) */
        unsigned char lo = 0x80, hi = 0xBF;
        if (u->n == 1) {
            if (u->pend[0] == 0xE0) lo = 0xA0;
            if (u->pend[0] == 0xED) hi = 0x9F;
            if (u->pend[0] == 0xF0) lo = 0x90;
            if (u->pend[0] == 0xF4) hi = 0x8F;
        }
        if (b >= lo && b <= hi) {
            u->pend[u->n++] = b;
            if (u->n == u->need) {
                memcpy(out, u->pend, (size_t)u->n);
                o = (size_t)u->n;
                u->n = 0;
            }
            return o;
        }
        o = put_fffd(out); /* an interrupted sequence; b starts afresh */
        u->n = 0;
    }
    if (b < 0x80) {
        out[o++] = (char)b;
    } else if (b >= 0xC2 && b <= 0xF4) {
        u->pend[0] = b;
        u->n = 1;
        u->need = b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    } else {
        o += put_fffd(out + o);
    }
    return o;
}

size_t utf8_flush(utf8_asm *u, char *out) {
    if (u->n == 0) return 0;
    u->n = 0;
    return put_fffd(out);
}
