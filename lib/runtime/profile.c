/*
 * profile.c — per-node profiling support: the default thread count and
 * writing Chrome trace files (flop counts come from each op's table).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "runtime/runtime.h"

int rt_default_threads(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int64_t rt_parallel_min_flops(void) {
    const char *env = getenv("MOPT_PARALLEL_MIN_FLOPS");
    if (env && *env) {
        char *end = NULL;
        errno = 0;
        double v = strtod(env, &end);
        if (errno == 0 && end != env && *end == '\0' && v >= 0 && v < 9e18) return (int64_t)v;
    }
    return 1000000;
}

bool rt_adaptive_threads(void) {
    const char *env = getenv("MOPT_ADAPTIVE_THREADS");
    return !(env && strcmp(env, "0") == 0);
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

mopt_status rt_trace_write(const mopt_session *s, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return mopt_fail(MOPT_ERR_IO, "cannot write trace '%s': %s", path, strerror(errno));
    const ir_graph *g = s->model->graph;
    fprintf(f, "{\"traceEvents\":[\n");
    for (size_t i = 0; i < s->n_trace; i++) {
        const rt_trace_event *e = &s->trace[i];
        const ir_node *n = g->nodes[e->node];
        fprintf(f, "%s{\"name\":", i ? ",\n" : "");
        json_string(f, n->name[0] ? n->name : n->op_type);
        fprintf(f, ",\"cat\":");
        json_string(f, n->op_type);
        fprintf(f,
                ",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":%.3f,"
                "\"args\":{\"op\":",
                (double)e->start_ns / 1000.0, (double)e->ns / 1000.0);
        json_string(f, n->op_type);
        fprintf(f, ",\"run\":%d", (int)e->run);
        if (e->tag >= 0 && e->tag < s->n_tags) {
            fprintf(f, ",\"tag\":");
            json_string(f, s->tags[e->tag]);
        }
        fprintf(f, "}}");
    }
    fprintf(f, "\n],\"displayTimeUnit\":\"ms\"}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return mopt_fail(MOPT_ERR_IO, "error writing trace '%s'", path);
    return MOPT_OK;
}
