/*
 * cli.c — parsing mopt-bench's options (see bench_cli_usage for the list).
 * "--opt VALUE" and "--opt=VALUE" are both accepted.
 */
#include "cli.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

void bench_cli_usage(FILE *f) {
    fputs("usage: mopt-bench MODEL.onnx [options]\n"
          "       mopt-bench SCENARIO.yaml [options]   (options act as the scenario's defaults)\n"
          "\n"
          "inputs (random, from a fixed seed, unless given):\n"
          "  --input NAME=FILE.npy   feed input NAME from a .npy (or TensorProto .pb) file\n"
          "  --shape NAME=DIMS       shape of random input NAME: 1x3x32x32, 1,128 or batch,seq\n"
          "  --dim SYMBOL=N          value of a symbolic dimension (e.g. --dim seq=128)\n"
          "  --batch N, --seq N      shorthands for --dim batch=N, --dim seq=N (batch defaults to "
          "1)\n"
          "  --int-range LO,HI       integer inputs uniform in [LO, HI) (default 0,100);\n"
          "                          inputs whose name contains \"mask\" are all ones\n"
          "  --seed N                seed of the random inputs\n"
          "library options:\n"
          "  --precision P           fp32 | bf16 | int8\n"
          "  --backend B             auto | ref | cpu | onednn | openblas\n"
          "  --opt-level N           0..3 (0 = run the graph as imported)\n"
          "  --threads N             0 = one per core\n"
          "measurement:\n"
          "  --warmup N              runs after the first run, before measuring (default 5)\n"
          "  --iterations N          measured runs (default 100)\n"
          "  --duration S            measure for S seconds instead\n"
          "output:\n"
          "  --json FILE             write a JSON array, one object per configuration\n"
          "  --journal FILE          append one JSON line per configuration (timestamp, git\n"
          "                          revision, CPU model, config, figures)\n"
          "  --profile FILE          profile per node and write a Chrome trace to FILE\n"
          "  --top N                 profile and print the top N op types and nodes (default 10)\n"
          "  --no-progress           never draw the progress bar (drawn only on a terminal)\n"
          "  --help, --version\n",
          f);
}

static int set_err(char *err, size_t errlen, const char *fmt, const char *a, const char *b) {
    snprintf(err, errlen, fmt, a, b);
    return -1;
}

/* Splits "NAME=VALUE" into a copy of NAME (in name) and a pointer to VALUE. */
static int split_eq(const char *opt, const char *arg, char *name, size_t len, const char **value,
                    char *err, size_t errlen) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return set_err(err, errlen, "%s wants NAME=VALUE, got '%s'", opt, arg);
    size_t n = (size_t)(eq - arg);
    if (n >= len) return set_err(err, errlen, "%s: name too long in '%s'", opt, arg);
    memcpy(name, arg, n);
    name[n] = '\0';
    *value = eq + 1;
    return 0;
}

static int want_int(const char *opt, const char *v, int64_t lo, int64_t *out, char *err,
                    size_t errlen) {
    if (bench_parse_int(v, out) != 0 || *out < lo) {
        char what[32];
        snprintf(what, sizeof what, "an integer >= %lld", (long long)lo);
        snprintf(err, errlen, "%s wants %s, got '%s'", opt, what, v);
        return -1;
    }
    return 0;
}

/* The options that set one field of the config: an integer of at least
 * min, or (min < 0) a string; set: the BENCH_CLI_ flag they raise. */
typedef struct {
    const char *name;
    size_t offset;
    int64_t min;
    unsigned set;
} field_option;

static const field_option field_options[] = {
    {"--batch", offsetof(bench_config, batch), 1, BENCH_CLI_BATCH},
    {"--seq", offsetof(bench_config, seq), 1, BENCH_CLI_SEQ},
    {"--precision", offsetof(bench_config, precision), -1, BENCH_CLI_PRECISION},
    {"--backend", offsetof(bench_config, backend), -1, BENCH_CLI_BACKEND},
    {"--opt-level", offsetof(bench_config, opt_level), 0, BENCH_CLI_OPT_LEVEL},
    {"--threads", offsetof(bench_config, threads), 0, BENCH_CLI_THREADS},
    {"--warmup", offsetof(bench_config, warmup), 0, BENCH_CLI_WARMUP},
    {"--iterations", offsetof(bench_config, iterations), 1, BENCH_CLI_ITERATIONS},
    {"--top", offsetof(bench_config, top), 1, BENCH_CLI_TOP},
};

static const field_option *field_opt(const char *opt) {
    for (size_t i = 0; i < sizeof field_options / sizeof field_options[0]; i++)
        if (strcmp(opt, field_options[i].name) == 0) return &field_options[i];
    return NULL;
}

int bench_cli_parse(int argc, char **argv, bench_cli *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    bench_config_init(&out->base);
    out->progress = -1;
    bench_config *c = &out->base;
    int has_iter = 0, has_dur = 0, has_top = 0;
    const char *profile_path = NULL;
    char name[256];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            out->help = 1;
            continue;
        }
        if (strcmp(a, "--version") == 0) {
            out->version = 1;
            continue;
        }
        if (strcmp(a, "--no-progress") == 0) {
            out->progress = 0;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (out->target) {
                set_err(err, errlen, "more than one model or scenario given ('%s' and '%s')",
                        out->target, a);
                goto fail;
            }
            out->target = a;
            continue;
        }
        /* --opt=VALUE or --opt VALUE */
        char opt[64];
        const char *val = NULL;
        const char *eq = strchr(a, '=');
        if (eq) {
            size_t n = (size_t)(eq - a);
            if (n >= sizeof opt) n = sizeof opt - 1;
            memcpy(opt, a, n);
            opt[n] = '\0';
            val = eq + 1;
        } else {
            snprintf(opt, sizeof opt, "%s", a);
            if (i + 1 >= argc) {
                set_err(err, errlen, "%s needs a value%s", opt, "");
                goto fail;
            }
            val = argv[++i];
        }
        int64_t v;
        const char *value;
        const field_option *fo;
        if (strcmp(opt, "--input") == 0) {
            if (split_eq(opt, val, name, sizeof name, &value, err, errlen)) goto fail;
            if (bench_config_add_input(c, name, value)) goto oom;
        } else if (strcmp(opt, "--shape") == 0) {
            if (split_eq(opt, val, name, sizeof name, &value, err, errlen)) goto fail;
            bench_shape s;
            memset(&s, 0, sizeof s);
            char msg[256];
            if (bench_shape_parse_dims(value, &s, msg, sizeof msg) != 0) {
                bench_shape_free(&s);
                set_err(err, errlen, "--shape %s: %s", name, msg);
                goto fail;
            }
            if (!(s.name = strdup(name))) {
                bench_shape_free(&s);
                goto oom;
            }
            if (bench_config_add_shape(c, &s)) goto oom;
        } else if (strcmp(opt, "--dim") == 0) {
            if (split_eq(opt, val, name, sizeof name, &value, err, errlen)) goto fail;
            if (want_int(opt, value, 0, &v, err, errlen)) goto fail;
            if (bench_config_add_dim(c, name, v)) goto oom;
        } else if ((fo = field_opt(opt))) {
            void *field = (char *)c + fo->offset;
            if (fo->min < 0) {
                if (bench_config_set_str(field, val)) goto oom;
            } else if (want_int(opt, val, fo->min, field, err, errlen)) {
                goto fail;
            }
            out->set |= fo->set;
            if (fo->set == BENCH_CLI_ITERATIONS) has_iter = 1;
            if (fo->set == BENCH_CLI_TOP) has_top = 1;
        } else if (strcmp(opt, "--duration") == 0) {
            if (bench_parse_double(val, &c->duration_s) != 0 || !(c->duration_s > 0)) {
                set_err(err, errlen, "%s wants a number of seconds > 0, got '%s'", opt, val);
                goto fail;
            }
            has_dur = 1;
            out->set |= BENCH_CLI_ITERATIONS;
        } else if (strcmp(opt, "--int-range") == 0) {
            const char *comma = strchr(val, ',');
            int64_t lo, hi;
            char lo_s[32];
            size_t n = comma ? (size_t)(comma - val) : 0;
            if (!comma || n >= sizeof lo_s) {
                set_err(err, errlen, "%s wants LO,HI, got '%s'", opt, val);
                goto fail;
            }
            memcpy(lo_s, val, n);
            lo_s[n] = '\0';
            if (bench_parse_int(lo_s, &lo) || bench_parse_int(comma + 1, &hi) || lo >= hi) {
                set_err(err, errlen, "%s wants LO,HI with LO < HI, got '%s'", opt, val);
                goto fail;
            }
            c->int_lo = lo;
            c->int_hi = hi;
            out->set |= BENCH_CLI_INT_RANGE;
        } else if (strcmp(opt, "--seed") == 0) {
            if (want_int(opt, val, 0, &v, err, errlen)) goto fail;
            c->seed = (uint64_t)v;
            out->set |= BENCH_CLI_SEED;
        } else if (strcmp(opt, "--json") == 0) {
            out->json_path = val;
        } else if (strcmp(opt, "--journal") == 0) {
            out->journal_path = val;
        } else if (strcmp(opt, "--profile") == 0) {
            if (!*val) {
                set_err(err, errlen, "%s wants a file name%s", opt, "");
                goto fail;
            }
            profile_path = val;
        } else {
            set_err(err, errlen, "unknown option '%s' (see --help)%s", opt, "");
            goto fail;
        }
    }
    if (has_iter && has_dur) {
        set_err(err, errlen, "give --iterations or --duration, not both%s%s", "", "");
        goto fail;
    }
    if (profile_path || has_top) out->set |= BENCH_CLI_PROFILE;
    if (profile_path) {
        if (bench_config_set_str(&c->profile, profile_path)) goto oom;
    } else if (has_top) {
        if (bench_config_set_str(&c->profile, "1")) goto oom;
    }
    if (!out->target && !out->help && !out->version) {
        set_err(err, errlen, "no model or scenario given (see --help)%s%s", "", "");
        goto fail;
    }
    if (out->target) {
        out->is_scenario = bench_is_scenario_path(out->target);
        if (!out->is_scenario && bench_config_set_str(&c->model, out->target)) goto oom;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    bench_cli_free(out);
    return -1;
}

void bench_cli_free(bench_cli *cli) { bench_config_free(&cli->base); }

int bench_cli_apply(const bench_cli *cli, bench_config *c) {
    const bench_config *b = &cli->base;
    unsigned s = cli->set;
    int bad = 0;
    if (s & BENCH_CLI_PRECISION) bad |= bench_config_set_str(&c->precision, b->precision);
    if (s & BENCH_CLI_BACKEND) bad |= bench_config_set_str(&c->backend, b->backend);
    if (s & BENCH_CLI_PROFILE) bad |= bench_config_set_str(&c->profile, b->profile);
    if (s & BENCH_CLI_THREADS) c->threads = b->threads;
    if (s & BENCH_CLI_OPT_LEVEL) c->opt_level = b->opt_level;
    if (s & BENCH_CLI_BATCH) c->batch = b->batch;
    if (s & BENCH_CLI_SEQ) c->seq = b->seq;
    if (s & BENCH_CLI_WARMUP) c->warmup = b->warmup;
    if (s & BENCH_CLI_ITERATIONS) {
        c->iterations = b->iterations;
        c->duration_s = b->duration_s;
    }
    if (s & BENCH_CLI_INT_RANGE) {
        c->int_lo = b->int_lo;
        c->int_hi = b->int_hi;
    }
    if (s & BENCH_CLI_SEED) c->seed = b->seed;
    if (s & BENCH_CLI_TOP) c->top = b->top;
    for (size_t i = 0; i < b->n_inputs && !bad; i++)
        bad |= bench_config_add_input(c, b->inputs[i].key, b->inputs[i].value);
    for (size_t i = 0; i < b->n_dims && !bad; i++)
        bad |= bench_config_add_dim(c, b->dims[i].name, b->dims[i].value);
    for (size_t i = 0; i < b->n_shapes && !bad; i++) {
        bench_shape sh;
        bad |= bench_shape_copy(&sh, &b->shapes[i]) || bench_config_add_shape(c, &sh);
    }
    return bad ? -1 : 0;
}
