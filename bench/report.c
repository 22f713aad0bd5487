/*
 * report.c — the text tables, the JSON array (--json) and the JSON-lines
 * journal (--journal) of mopt-bench. Writes only; measures nothing.
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mopt/mopt.h>

#include "sysinfo.h"

void bench_env_collect(bench_env *env) {
    memset(env, 0, sizeof *env);
    bench_timestamp_utc(env->timestamp, sizeof env->timestamp);
    bench_git_revision(env->git_revision, sizeof env->git_revision);
    bench_cpu_model(env->cpu_model, sizeof env->cpu_model);
    env->cpu_count = bench_cpu_count();
    snprintf(env->mopt_version, sizeof env->mopt_version, "%s", mopt_version());
}

/* ---- JSON writer ---- */

void bench_json_init(bench_json *j, FILE *f, int pretty) {
    memset(j, 0, sizeof *j);
    j->f = f;
    j->pretty = pretty;
    j->first[0] = 1;
}

static void newline(bench_json *j) {
    if (!j->pretty) return;
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* Before a value or key: a comma unless it is the first at this level. A
 * value right after a key (first == -1) gets nothing. */
static void before_item(bench_json *j) {
    int *first = &j->first[j->depth < 31 ? j->depth : 31];
    if (*first == -1) {
        *first = 0;
        return;
    }
    if (!*first) fputc(',', j->f);
    *first = 0;
    if (j->depth > 0) newline(j);
}

static void open_(bench_json *j, char c) {
    before_item(j);
    fputc(c, j->f);
    j->depth++;
    if (j->depth < 32) j->first[j->depth] = 1;
}

static void close_(bench_json *j, char c) {
    int empty = j->depth < 32 && j->first[j->depth] == 1;
    j->depth--;
    if (!empty) newline(j);
    fputc(c, j->f);
    if (j->depth == 0 && j->pretty) fputc('\n', j->f);
}

void bench_json_begin_object(bench_json *j) { open_(j, '{'); }
void bench_json_end_object(bench_json *j) { close_(j, '}'); }
void bench_json_begin_array(bench_json *j) { open_(j, '['); }
void bench_json_end_array(bench_json *j) { close_(j, ']'); }

static void write_escaped(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void bench_json_key(bench_json *j, const char *key) {
    before_item(j);
    write_escaped(j->f, key);
    fputs(j->pretty ? ": " : ":", j->f);
    j->first[j->depth < 31 ? j->depth : 31] = -1;
}

void bench_json_string(bench_json *j, const char *s) {
    before_item(j);
    if (s)
        write_escaped(j->f, s);
    else
        fputs("null", j->f);
}

void bench_json_int(bench_json *j, int64_t v) {
    before_item(j);
    fprintf(j->f, "%" PRId64, v);
}

void bench_json_double(bench_json *j, double v) {
    before_item(j);
    if (isfinite(v))
        fprintf(j->f, "%.9g", v);
    else
        fputs("null", j->f);
}

void bench_json_bool(bench_json *j, int v) {
    before_item(j);
    fputs(v ? "true" : "false", j->f);
}

void bench_json_null(bench_json *j) {
    before_item(j);
    fputs("null", j->f);
}

/* ---- one result ---- */

static void kv_str(bench_json *j, const char *k, const char *v) {
    bench_json_key(j, k);
    bench_json_string(j, v);
}
static void kv_int(bench_json *j, const char *k, int64_t v) {
    bench_json_key(j, k);
    bench_json_int(j, v);
}
static void kv_dbl(bench_json *j, const char *k, double v) {
    bench_json_key(j, k);
    bench_json_double(j, v);
}
/* An int that may be "unset" (< 0): null then. */
static void kv_opt_int(bench_json *j, const char *k, int64_t v) {
    bench_json_key(j, k);
    if (v >= 0)
        bench_json_int(j, v);
    else
        bench_json_null(j);
}

static void json_config(bench_json *j, const bench_result *r) {
    const bench_config *c = r->config;
    bench_json_key(j, "config");
    bench_json_begin_object(j);
    kv_str(j, "name", c ? c->name : NULL);
    kv_str(j, "model", c ? c->model : NULL);
    kv_str(j, "precision", r->precision[0] ? r->precision : (c ? c->precision : NULL));
    kv_str(j, "backend", r->backend[0] ? r->backend : (c ? c->backend : NULL));
    kv_opt_int(j, "threads", r->threads >= 0 ? r->threads : (c ? c->threads : -1));
    kv_opt_int(j, "opt_level", r->opt_level >= 0 ? r->opt_level : (c ? c->opt_level : -1));
    kv_opt_int(j, "batch", c ? c->batch : -1);
    kv_opt_int(j, "seq", c ? c->seq : -1);
    bench_json_key(j, "dims");
    bench_json_begin_object(j);
    for (size_t i = 0; c && i < c->n_dims; i++)
        kv_int(j, c->dims[i].name, c->dims[i].value);
    bench_json_end_object(j);
    bench_json_key(j, "shapes");
    bench_json_begin_object(j);
    for (int i = 0; i < r->n_io; i++) {
        bench_json_key(j, r->io[i].name);
        bench_json_begin_array(j);
        for (int a = 0; a < r->io[i].rank && a < BENCH_MAX_RANK; a++)
            bench_json_int(j, r->io[i].dims[a]);
        bench_json_end_array(j);
    }
    bench_json_end_object(j);
    bench_json_key(j, "input_types");
    bench_json_begin_object(j);
    for (int i = 0; i < r->n_io; i++)
        kv_str(j, r->io[i].name, r->io[i].dtype);
    bench_json_end_object(j);
    bench_json_key(j, "input_sources");
    bench_json_begin_object(j);
    for (int i = 0; i < r->n_io; i++) {
        const char *src = r->io[i].source;
        for (size_t k = 0; c && strcmp(src, "file") == 0 && k < c->n_inputs; k++)
            if (strcmp(c->inputs[k].key, r->io[i].name) == 0) src = c->inputs[k].value;
        kv_str(j, r->io[i].name, src);
    }
    bench_json_end_object(j);
    kv_int(j, "warmup", c ? c->warmup : 0);
    if (c && c->duration_s > 0) {
        bench_json_key(j, "iterations");
        bench_json_null(j);
        kv_dbl(j, "duration_s", c->duration_s);
    } else {
        kv_int(j, "iterations", c ? c->iterations : 0);
        bench_json_key(j, "duration_s");
        bench_json_null(j);
    }
    kv_int(j, "seed", c ? (int64_t)c->seed : 0);
    bench_json_key(j, "int_range");
    bench_json_begin_array(j);
    bench_json_int(j, c ? c->int_lo : 0);
    bench_json_int(j, c ? c->int_hi : 0);
    bench_json_end_array(j);
    kv_str(j, "profile", c && c->profile && *c->profile ? c->profile : NULL);
    bench_json_end_object(j);
}

static void json_prof_rows(bench_json *j, const bench_prof_row *rows, size_t n, int64_t total,
                           int64_t runs, int by_node, int top) {
    bench_json_begin_array(j);
    for (size_t i = 0; i < n && (top <= 0 || i < (size_t)top); i++) {
        const bench_prof_row *w = &rows[i];
        bench_json_begin_object(j);
        if (by_node) kv_str(j, "node", w->node);
        kv_str(j, "op", w->op);
        if (by_node)
            kv_str(j, "kernel", w->kernel);
        else
            kv_int(j, "nodes", w->nodes);
        kv_dbl(j, "total_ms", (double)w->ns / 1e6);
        kv_dbl(j, "ms_per_run", runs > 0 ? (double)w->ns / 1e6 / (double)runs : 0.0);
        kv_dbl(j, "share", total > 0 ? (double)w->ns / (double)total : 0.0);
        kv_int(j, "calls", w->calls);
        kv_int(j, "flops", w->flops);
        bench_json_key(j, "gflops_per_s");
        if (w->flops > 0)
            bench_json_double(j, bench_prof_gflops(w));
        else
            bench_json_null(j);
        bench_json_end_object(j);
    }
    bench_json_end_array(j);
}

static void json_profile(bench_json *j, const bench_result *r, int top) {
    bench_json_key(j, "profile");
    if (!r->profiled) {
        bench_json_null(j);
        return;
    }
    int64_t total = bench_prof_total_ns(&r->prof);
    bench_json_begin_object(j);
    kv_int(j, "runs", r->prof.runs);
    kv_dbl(j, "node_ms_per_run", r->prof.runs ? (double)total / 1e6 / (double)r->prof.runs : 0);
    kv_str(j, "trace", r->trace_path[0] ? r->trace_path : NULL);
    bench_prof_row *rows = NULL;
    size_t n = 0;
    bench_json_key(j, "by_op");
    if (bench_prof_by_op(&r->prof, &rows, &n) == 0)
        json_prof_rows(j, rows, n, total, r->prof.runs, 0, top);
    else
        bench_json_null(j);
    free(rows);
    rows = NULL;
    bench_json_key(j, "by_node");
    if (bench_prof_sorted_nodes(&r->prof, &rows, &n) == 0)
        json_prof_rows(j, rows, n, total, r->prof.runs, 1, top);
    else
        bench_json_null(j);
    free(rows);
    bench_json_end_object(j);
}

void bench_report_json_result(bench_json *j, const bench_result *r, const bench_env *env, int top) {
    bench_json_begin_object(j);
    if (env) {
        kv_str(j, "timestamp", env->timestamp);
        kv_str(j, "git_revision", env->git_revision);
        kv_str(j, "cpu_model", env->cpu_model);
        kv_int(j, "cpu_count", env->cpu_count);
        kv_str(j, "mopt_version", env->mopt_version);
    }
    kv_str(j, "label", r->label);
    bench_json_key(j, "ok");
    bench_json_bool(j, r->ok);
    kv_str(j, "error", r->ok ? NULL : r->error);
    json_config(j, r);
    if (r->ok) {
        kv_dbl(j, "load_ms", r->load_ms);
        kv_dbl(j, "session_ms", r->session_ms);
        kv_dbl(j, "first_run_ms", r->first_run_ms);
        bench_json_key(j, "latency_ms");
        bench_json_begin_object(j);
        kv_dbl(j, "p50", r->latency_ms.p50);
        kv_dbl(j, "p90", r->latency_ms.p90);
        kv_dbl(j, "p95", r->latency_ms.p95);
        kv_dbl(j, "p99", r->latency_ms.p99);
        kv_dbl(j, "max", r->latency_ms.max);
        kv_dbl(j, "mean", r->latency_ms.mean);
        kv_dbl(j, "min", r->latency_ms.min);
        kv_dbl(j, "stddev", r->latency_ms.stddev);
        bench_json_end_object(j);
        kv_int(j, "samples", (int64_t)r->latency_ms.n);
        kv_dbl(j, "measure_s", r->measure_s);
        kv_dbl(j, "throughput_per_s", r->throughput_per_s);
        kv_dbl(j, "items_per_s", r->items_per_s);
        kv_int(j, "items_per_inference", r->items);
        kv_int(j, "peak_rss_bytes", r->peak_rss_bytes);
        bench_json_key(j, "peak_rss_per_config");
        bench_json_bool(j, r->peak_rss_is_per_config);
        kv_int(j, "arena_bytes", r->arena_bytes);
        kv_int(j, "peak_bytes", r->peak_bytes);
        kv_int(j, "model_nodes", r->model_nodes);
        kv_int(j, "model_parameters", r->model_params);
        json_profile(j, r, top);
    }
    bench_json_end_object(j);
}

int bench_report_write_json(const char *path, const bench_result *rs, size_t n,
                            const bench_env *env, char *err, size_t errlen) {
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    bench_json j;
    bench_json_init(&j, f, 1);
    bench_json_begin_array(&j);
    for (size_t i = 0; i < n; i++) {
        int top = rs[i].config ? (int)rs[i].config->top : BENCH_DEFAULT_TOP;
        bench_report_json_result(&j, &rs[i], env, top);
    }
    bench_json_end_array(&j);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "error writing '%s'", path);
        return -1;
    }
    return 0;
}

int bench_report_append_journal(const char *path, const bench_result *rs, size_t n,
                                const bench_env *env, char *err, size_t errlen) {
    FILE *f = fopen(path, "a");
    if (!f) {
        snprintf(err, errlen, "cannot append to '%s': %s", path, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        bench_json j;
        bench_json_init(&j, f, 0);
        int top = rs[i].config ? (int)rs[i].config->top : BENCH_DEFAULT_TOP;
        bench_report_json_result(&j, &rs[i], env, top);
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "error writing '%s'", path);
        return -1;
    }
    return 0;
}

/* ---- text ---- */

void bench_format_bytes(char *buf, size_t len, int64_t bytes) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%" PRId64 " B", bytes);
    else
        snprintf(buf, len, "%.1f %s", v, units[u]);
}

void bench_report_print_summary(FILE *f, const bench_result *r) {
    fprintf(f, "== %s ==\n", r->label);
    if (!r->ok) {
        fprintf(f, "  FAILED: %s\n", r->error);
        return;
    }
    const bench_config *c = r->config;
    fprintf(f, "  model        %s (%" PRId64 " nodes after optimization, %" PRId64 " parameters)\n",
            c && c->model ? c->model : "?", r->model_nodes, r->model_params);
    fprintf(f,
            "  settings     precision %s, backend %s, threads %" PRId64 "%s, opt_level %" PRId64
            "\n",
            r->precision, r->backend, r->threads, r->threads == 0 ? " (one per core)" : "",
            r->opt_level);
    fprintf(f, "  inputs      ");
    for (int i = 0; i < r->n_io; i++) {
        fprintf(f, "%s %s %s[", i ? "," : "", r->io[i].name, r->io[i].dtype);
        for (int a = 0; a < r->io[i].rank; a++)
            fprintf(f, "%s%" PRId64, a ? "," : "", r->io[i].dims[a]);
        fprintf(f, "] %s", r->io[i].source);
    }
    fputc('\n', f);
    fprintf(f, "  load         %.2f ms (model load + optimization; session %.2f ms)\n", r->load_ms,
            r->session_ms);
    fprintf(f, "  first run    %.3f ms\n", r->first_run_ms);
    const bench_latency *l = &r->latency_ms;
    fprintf(f,
            "  latency ms   p50 %.3f  p90 %.3f  p95 %.3f  p99 %.3f  max %.3f  mean %.3f"
            "  (n=%zu, sd %.3f)\n",
            l->p50, l->p90, l->p95, l->p99, l->max, l->mean, l->n, l->stddev);
    fprintf(f, "  throughput   %.1f inferences/s, %.1f items/s (batch of %" PRId64 ")\n",
            r->throughput_per_s, r->items_per_s, r->items);
    char rss[32], arena[32], peak[32];
    bench_format_bytes(rss, sizeof rss, r->peak_rss_bytes);
    bench_format_bytes(arena, sizeof arena, r->arena_bytes);
    bench_format_bytes(peak, sizeof peak, r->peak_bytes);
    fprintf(f, "  memory       peak RSS %s%s, arena %s, peak tensors %s\n", rss,
            r->peak_rss_is_per_config ? "" : " (process-wide)", arena, peak);
    if (r->profiled)
        fprintf(f, "  note         latencies measured with profiling on%s%s\n",
                r->trace_path[0] ? "; trace: " : "", r->trace_path);
}

static void print_gflops(FILE *f, const bench_prof_row *w) {
    if (w->flops > 0)
        fprintf(f, " %9.2f\n", bench_prof_gflops(w));
    else
        fprintf(f, " %9s\n", "-");
}

/* Shortens s to at most w characters, keeping its end ("...tail"). */
static const char *fit(char *buf, size_t len, const char *s, int w) {
    size_t n = strlen(s);
    if (n <= (size_t)w || w < 4) return s;
    snprintf(buf, len, "...%s", s + n - (size_t)(w - 3));
    return buf;
}

void bench_report_print_profile(FILE *f, const bench_result *r, int top) {
    if (!r->ok || !r->profiled) return;
    int64_t total = bench_prof_total_ns(&r->prof);
    int64_t runs = r->prof.runs;
    bench_prof_row *rows = NULL;
    size_t n = 0;
    char b1[64], b2[64];
    if (bench_prof_by_op(&r->prof, &rows, &n) == 0) {
        fprintf(f, "\n  Top %d op types (%" PRId64 " runs; node time %.3f ms/run)\n", top, runs,
                runs ? (double)total / 1e6 / (double)runs : 0.0);
        fprintf(f, "  %-24s %6s %11s %7s %8s %10s %9s\n", "op type", "nodes", "total ms", "share",
                "calls", "us/call", "GFLOP/s");
        for (size_t i = 0; i < n && i < (size_t)top; i++) {
            const bench_prof_row *w = &rows[i];
            fprintf(f, "  %-24s %6" PRId64 " %11.3f %6.1f%% %8" PRId64 " %10.2f",
                    fit(b1, sizeof b1, w->op, 24), w->nodes, (double)w->ns / 1e6,
                    total ? 100.0 * (double)w->ns / (double)total : 0.0, w->calls,
                    w->calls ? (double)w->ns / 1e3 / (double)w->calls : 0.0);
            print_gflops(f, w);
        }
        if (n > (size_t)top) fprintf(f, "  (%zu more op types)\n", n - (size_t)top);
    }
    free(rows);
    rows = NULL;
    if (bench_prof_sorted_nodes(&r->prof, &rows, &n) == 0) {
        fprintf(f, "\n  Top %d nodes\n", top);
        fprintf(f, "  %-32s %-18s %-8s %11s %7s %8s %10s %9s\n", "node", "op type", "kernel",
                "total ms", "share", "calls", "us/call", "GFLOP/s");
        for (size_t i = 0; i < n && i < (size_t)top; i++) {
            const bench_prof_row *w = &rows[i];
            fprintf(f, "  %-32s %-18s %-8s %11.3f %6.1f%% %8" PRId64 " %10.2f",
                    fit(b1, sizeof b1, w->node, 32), fit(b2, sizeof b2, w->op, 18),
                    w->kernel ? w->kernel : "-", (double)w->ns / 1e6,
                    total ? 100.0 * (double)w->ns / (double)total : 0.0, w->calls,
                    w->calls ? (double)w->ns / 1e3 / (double)w->calls : 0.0);
            print_gflops(f, w);
        }
        if (n > (size_t)top) fprintf(f, "  (%zu more nodes)\n", n - (size_t)top);
    }
    free(rows);
}

void bench_report_print_table(FILE *f, const bench_result *rs, size_t n) {
    fprintf(f, "%-44s %9s %9s %9s %9s %9s %9s %10s %10s %10s\n", "configuration", "load ms",
            "first ms", "p50 ms", "p95 ms", "p99 ms", "mean ms", "inf/s", "items/s", "peak RSS");
    char b[64];
    for (size_t i = 0; i < n; i++) {
        const bench_result *r = &rs[i];
        if (!r->ok) {
            fprintf(f, "%-44s FAILED (see above)\n", fit(b, sizeof b, r->label, 44));
            continue;
        }
        char rss[32];
        bench_format_bytes(rss, sizeof rss, r->peak_rss_bytes);
        fprintf(f, "%-44s %9.2f %9.3f %9.3f %9.3f %9.3f %9.3f %10.1f %10.1f %10s\n",
                fit(b, sizeof b, r->label, 44), r->load_ms, r->first_run_ms, r->latency_ms.p50,
                r->latency_ms.p95, r->latency_ms.p99, r->latency_ms.mean, r->throughput_per_s,
                r->items_per_s, rss);
    }
}
