/*
 * error.c — thread-local last-error storage. Messages are truncated to a
 * fixed buffer; never allocates, so it works when memory has run out.
 */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MOPT_ERROR_CAP 2048

static _Thread_local char g_error[MOPT_ERROR_CAP];

mopt_status mopt_fail(mopt_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_error, sizeof g_error, fmt, ap);
    va_end(ap);
    return status;
}

mopt_status mopt_fail_context(mopt_status status, const char *fmt, ...) {
    char prefix[512];
    char old[MOPT_ERROR_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, g_error, sizeof old);
    if (old[0])
        snprintf(g_error, sizeof g_error, "%s: %s", prefix, old);
    else
        snprintf(g_error, sizeof g_error, "%s", prefix);
    return status;
}

void mopt_clear_error(void) { g_error[0] = '\0'; }

const char *mopt_error_message(void) { return g_error; }

const char *mopt_status_string(mopt_status status) {
    switch (status) {
    case MOPT_OK: return "ok";
    case MOPT_ERR_INVALID_ARGUMENT: return "invalid argument";
    case MOPT_ERR_OUT_OF_MEMORY: return "out of memory";
    case MOPT_ERR_IO: return "I/O error";
    case MOPT_ERR_PARSE: return "malformed file";
    case MOPT_ERR_INVALID_MODEL: return "invalid model";
    case MOPT_ERR_UNSUPPORTED: return "unsupported";
    case MOPT_ERR_SHAPE: return "shape error";
    case MOPT_ERR_TYPE: return "type error";
    case MOPT_ERR_NOT_FOUND: return "not found";
    case MOPT_ERR_LIMIT: return "limit exceeded";
    case MOPT_ERR_INTERNAL: return "internal error";
    case MOPT_ERR_CANCELLED: return "cancelled";
    case MOPT_ERR_BUSY: return "session busy";
    }
    return "unknown status";
}

const char *mopt_last_error(void) { return g_error; }
