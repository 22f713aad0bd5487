/*
 * sysinfo.c — CPU model, git revision, peak RSS and clocks (see sysinfo.h).
 * Runs git without a shell (fork/exec) so that odd source paths are safe.
 */
#include "sysinfo.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_build.h"

static void copy_trimmed(char *buf, size_t len, const char *s) {
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n >= len) n = len - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
}

void bench_cpu_model(char *buf, size_t len) {
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) copy_trimmed(buf, len, colon + 1);
            break;
        }
    }
    fclose(f);
}

int bench_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Runs argv, captures up to len-1 bytes of stdout into buf. Returns the exit
 * status, or -1 when the program could not run. */
static int run_capture(char *const argv[], char *buf, size_t len) {
    int fd[2];
    buf[0] = '\0';
    if (pipe(fd) != 0) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fd[1], STDOUT_FILENO);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, STDERR_FILENO);
        close(fd[0]);
        close(fd[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    size_t got = 0;
    for (;;) {
        char tmp[256];
        ssize_t k = read(fd[0], tmp, sizeof tmp);
        if (k <= 0) break;
        for (ssize_t i = 0; i < k && got + 1 < len; i++)
            buf[got++] = tmp[i];
    }
    buf[got] = '\0';
    close(fd[0]);
    int status = 0;
    if (waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void bench_git_revision(char *buf, size_t len) {
    snprintf(buf, len, "unknown");
    char out[128];
    char *rev[] = {"git",  "-C", (char *)MOPT_BENCH_SOURCE_DIR, "rev-parse", "--short",
                   "HEAD", NULL};
    if (run_capture(rev, out, sizeof out) != 0) return;
    char hash[64];
    copy_trimmed(hash, sizeof hash, out);
    if (!hash[0]) return;
    char *st[] = {"git",    "-C",          (char *)MOPT_BENCH_SOURCE_DIR,
                  "status", "--porcelain", "--untracked-files=no",
                  NULL};
    int dirty = run_capture(st, out, sizeof out) == 0 && out[0] != '\0';
    snprintf(buf, len, "%s%s", hash, dirty ? "-dirty" : "");
}

int64_t bench_peak_rss_bytes(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        long long kb = -1;
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "VmHWM:", 6) == 0) {
                kb = strtoll(line + 6, NULL, 10);
                break;
            }
        fclose(f);
        if (kb >= 0) return (int64_t)kb * 1024;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) return (int64_t)ru.ru_maxrss * 1024;
    return 0;
}

int bench_peak_rss_reset(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    int ok = fputs("5", f) >= 0;
    if (fclose(f) != 0) ok = 0;
    return ok ? 0 : -1;
}

double bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_timestamp_utc(char *buf, size_t len) {
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, len, "unknown");
}
