/*
 * clock.h — the monotonic clock every stage times itself with (passes,
 * executor, profiler). Core: includes nothing of the library.
 */
#ifndef MOPT_CORE_CLOCK_H
#define MOPT_CORE_CLOCK_H

#include <stdint.h>

/* Monotonic clock in nanoseconds. */
int64_t mopt_now_ns(void);

#endif
