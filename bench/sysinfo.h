/*
 * sysinfo.h — facts about the machine and the build for benchmark reports:
 * CPU model, git revision of the source tree, peak RSS, clocks, timestamps.
 * Linux first; every call degrades to "unknown"/0 instead of failing.
 */
#ifndef MOPT_BENCH_SYSINFO_H
#define MOPT_BENCH_SYSINFO_H

#include <stddef.h>
#include <stdint.h>

/* "model name" of the first CPU in /proc/cpuinfo, or "unknown". */
void bench_cpu_model(char *buf, size_t len);
/* Number of online CPUs (>= 1). */
int bench_cpu_count(void);
/* `git rev-parse --short HEAD` of the source tree mopt-bench was built from
 * (MOPT_BENCH_SOURCE_DIR), with "-dirty" appended when tracked files are
 * modified; "unknown" without git or outside a repository. */
void bench_git_revision(char *buf, size_t len);
/* Peak resident set size of this process in bytes: VmHWM from
 * /proc/self/status, else getrusage's ru_maxrss; 0 if neither works. */
int64_t bench_peak_rss_bytes(void);
/* Resets the kernel's peak-RSS mark (Linux >= 4.0, /proc/self/clear_refs),
 * so that the next bench_peak_rss_bytes covers only what follows. Returns 0
 * on success, -1 if not possible (then peaks accumulate over the process). */
int bench_peak_rss_reset(void);
/* Monotonic clock in seconds. */
double bench_now_s(void);
/* Current time as ISO 8601 UTC, "2024-06-01T12:34:56Z". */
void bench_timestamp_utc(char *buf, size_t len);

#endif
