/*
 * scenario.h — reading a benchmark scenario (YAML) into a list of
 * configurations, with lists of values expanded into their cartesian product.
 * The format is described in bench/README.md. Errors name the file and line.
 */
#ifndef MOPT_BENCH_SCENARIO_H
#define MOPT_BENCH_SCENARIO_H

#include <stddef.h>

#include "config.h"

typedef struct bench_config_list {
    bench_config *items;
    size_t count;
} bench_config_list;

void bench_config_list_free(bench_config_list *l);

/* Parses a scenario from memory. defaults (may be NULL) is the starting point
 * of every configuration (e.g. from the command line); the scenario's
 * "defaults" mapping and then each configuration's keys override it. Relative
 * model and input paths are resolved against base_dir (NULL or "": as is).
 * origin names the source in messages ("bench.yaml"). Returns 0, or -1 with
 * "origin:LINE: message" in err and *out empty. */
int bench_scenario_parse(const char *text, size_t len, const char *origin, const char *base_dir,
                         const bench_config *defaults, bench_config_list *out, char *err,
                         size_t errlen);

/* Reads the file at path and parses it with base_dir = the file's folder. */
int bench_scenario_load(const char *path, const bench_config *defaults, bench_config_list *out,
                        char *err, size_t errlen);

/* True when path names a scenario rather than a model (ends in .yaml/.yml). */
int bench_is_scenario_path(const char *path);

#endif
