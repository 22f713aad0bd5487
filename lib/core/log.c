/*
 * log.c — mopt_log and mopt_set_log_callback: one sink for every message of
 * the library, stderr by default. The callback and its user pointer are
 * read together under a mutex, so a message never reaches a new callback
 * with the old user pointer.
 */
#include "core/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#define MOPT_LOG_CAP 2048

static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
static mopt_log_callback g_log_fn = NULL;
static void *g_log_user = NULL;

void mopt_set_log_callback(mopt_log_callback callback, void *user) {
    pthread_mutex_lock(&g_log_lock);
    g_log_fn = callback;
    g_log_user = callback ? user : NULL;
    pthread_mutex_unlock(&g_log_lock);
}

void mopt_log(mopt_log_level level, const char *fmt, ...) {
    char msg[MOPT_LOG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_log_lock);
    mopt_log_callback fn = g_log_fn;
    void *user = g_log_user;
    pthread_mutex_unlock(&g_log_lock);
    if (fn)
        fn(user, level, msg);
    else
        fprintf(stderr, "%s\n", msg);
}
