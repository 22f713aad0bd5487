/*
 * mopt_bench.c — the mopt-bench program: parse the command line, build the
 * list of configurations (one, or a scenario's), run each, print the tables
 * and write --json / --journal. Uses only <mopt/mopt.h> (through run.c).
 * Exit status: 0 all configurations ran, 1 some failed, 2 usage error.
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mopt/mopt.h>

#include "cli.h"
#include "report.h"
#include "run.h"
#include "scenario.h"

/* "trace.json" -> "trace-3.json" for configuration 3 of several. */
static int number_trace(bench_config *c, size_t k) {
    const char *p = c->profile;
    if (!p || !*p || strcmp(p, "1") == 0) return 0;
    const char *dot = strrchr(p, '.');
    const char *slash = strrchr(p, '/');
    if (dot && slash && dot < slash) dot = NULL;
    size_t stem = dot ? (size_t)(dot - p) : strlen(p);
    size_t len = strlen(p) + 32;
    char *n = malloc(len);
    if (!n) return -1;
    snprintf(n, len, "%.*s-%zu%s", (int)stem, p, k + 1, dot ? dot : "");
    free(c->profile);
    c->profile = n;
    return 0;
}

int main(int argc, char **argv) {
    bench_cli cli;
    char err[1024];
    if (bench_cli_parse(argc, argv, &cli, err, sizeof err) != 0) {
        fprintf(stderr, "mopt-bench: %s\n", err);
        return 2;
    }
    if (cli.help) {
        bench_cli_usage(stdout);
        bench_cli_free(&cli);
        return 0;
    }
    if (cli.version) {
        printf("mopt-bench (libmopt %s)\n", mopt_version());
        bench_cli_free(&cli);
        return 0;
    }
    bench_config_list list = {NULL, 0};
    if (cli.is_scenario) {
        if (bench_scenario_load(cli.target, &cli.base, &list, err, sizeof err) != 0) {
            fprintf(stderr, "mopt-bench: %s\n", err);
            bench_cli_free(&cli);
            return 2;
        }
        for (size_t k = 0; k < list.count; k++)
            if (bench_cli_apply(&cli, &list.items[k]) != 0) {
                fprintf(stderr, "mopt-bench: out of memory\n");
                bench_config_list_free(&list);
                bench_cli_free(&cli);
                return 2;
            }
    } else {
        list.items = malloc(sizeof *list.items);
        if (!list.items) {
            fprintf(stderr, "mopt-bench: out of memory\n");
            bench_cli_free(&cli);
            return 2;
        }
        list.items[0] = cli.base;
        list.count = 1;
        bench_config_init(&cli.base); /* handed over */
    }
    if (list.count > 1)
        for (size_t k = 0; k < list.count; k++)
            if (number_trace(&list.items[k], k) != 0) {
                fprintf(stderr, "mopt-bench: out of memory\n");
                bench_config_list_free(&list);
                bench_cli_free(&cli);
                return 2;
            }

    bench_env env;
    bench_env_collect(&env);
    printf("mopt-bench: libmopt %s, git %s, %s (%d CPUs), %s\n", env.mopt_version, env.git_revision,
           env.cpu_model, env.cpu_count, env.timestamp);
    bench_result *results = calloc(list.count, sizeof *results);
    if (!results) {
        fprintf(stderr, "mopt-bench: out of memory\n");
        bench_config_list_free(&list);
        bench_cli_free(&cli);
        return 2;
    }
    bench_run_opts ro = {cli.progress != 0 && isatty(STDERR_FILENO)};
    int failed = 0;
    for (size_t k = 0; k < list.count; k++) {
        if (list.count > 1)
            printf("\n[%zu/%zu] ", k + 1, list.count);
        else
            printf("\n");
        fflush(stdout);
        if (bench_run(&list.items[k], &ro, &results[k]) != 0) failed++;
        bench_report_print_summary(stdout, &results[k]);
        bench_report_print_profile(stdout, &results[k], (int)list.items[k].top);
        fflush(stdout);
    }
    if (list.count > 1) {
        printf("\n");
        bench_report_print_table(stdout, results, list.count);
    }
    int out_err = 0;
    if (cli.json_path &&
        bench_report_write_json(cli.json_path, results, list.count, &env, err, sizeof err) != 0) {
        fprintf(stderr, "mopt-bench: %s\n", err);
        out_err = 1;
    }
    if (cli.journal_path && bench_report_append_journal(cli.journal_path, results, list.count, &env,
                                                        err, sizeof err) != 0) {
        fprintf(stderr, "mopt-bench: %s\n", err);
        out_err = 1;
    }
    for (size_t k = 0; k < list.count; k++)
        bench_result_free(&results[k]);
    free(results);
    bench_config_list_free(&list);
    bench_cli_free(&cli);
    if (failed) fprintf(stderr, "mopt-bench: %d of the configurations failed\n", failed);
    return failed || out_err ? 1 : 0;
}
