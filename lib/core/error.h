/*
 * error.h — the thread-local "last error" behind mopt_last_error(), and the
 * helpers every internal module uses to fail with a message. Internal only.
 */
#ifndef MOPT_CORE_ERROR_H
#define MOPT_CORE_ERROR_H

#include <mopt/mopt.h>

#if defined(__GNUC__) || defined(__clang__)
#define MOPT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MOPT_PRINTF(f, a)
#endif

/* Records a formatted message as this thread's last error and returns status,
 * so that callers can write `return mopt_fail(MOPT_ERR_PARSE, "...", ...);`. */
mopt_status mopt_fail(mopt_status status, const char *fmt, ...) MOPT_PRINTF(2, 3);

/* Prefixes the current last error with a formatted context string followed by
 * ": " (e.g. "while loading 'model.onnx'"), and returns status unchanged. */
mopt_status mopt_fail_context(mopt_status status, const char *fmt, ...) MOPT_PRINTF(2, 3);

/* Clears the last error (the API does this at the start of each call). */
void mopt_clear_error(void);

/* The current message (never NULL). */
const char *mopt_error_message(void);

#endif
