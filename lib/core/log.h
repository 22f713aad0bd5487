/*
 * log.h — the library's one logger. Every message the library emits (the
 * verbose kernel listing, the pass report, warnings) goes through mopt_log,
 * which hands it to the callback of mopt_set_log_callback or, by default,
 * writes it as a line on stderr. Nothing in lib/ or kernels/ prints
 * directly. Internal only.
 */
#ifndef MOPT_CORE_LOG_H
#define MOPT_CORE_LOG_H

#include <mopt/mopt.h>

#include "core/error.h" /* MOPT_PRINTF */

/* Formats one message (one line, no trailing newline; longer than 2 KiB is
 * cut) and delivers it. Never fails, never allocates; thread-safe. */
void mopt_log(mopt_log_level level, const char *fmt, ...) MOPT_PRINTF(2, 3);

#endif
