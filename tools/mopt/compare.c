/*
 * compare.c — `mopt compare REF TEST --golden DIR [--budget FILE]`: runs two
 * models (or one model with two option sets) on every input set of a golden
 * set, measures each output of TEST against REF's (or against the reference
 * outputs stored in the golden set) with the metrics of quality.c, prints the
 * worst value of every metric and where it occurred, and checks a quality
 * budget. Exit status: 0 the budget holds, 1 it is violated, 2 anything else.
 *
 * The budget is YAML read with lib/io/yaml_tree.c, compiled into the tool
 * (it depends on libyaml and nothing else of libmopt's internals).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/yaml_tree.h"
#include "mopt_cli.h"
#include "quality.h"

#define EMBED_MAX_ROWS 1024         /* rows kept for the pairwise Spearman */
#define EMBED_MAX_ELEMS (4u << 20)  /* and at most this many elements per side */
#define BUDGET_MAX_BYTES (1u << 20) /* a budget file's tree */
#define MAX_SETS 100000

/* ---- metrics -------------------------------------------------------------- */

enum { M_MAX_ABS, M_MAX_REL, M_COSINE, M_TOP1, M_TOPK, M_ARGMAX, M_SPEARMAN, M_COUNT };
static const char *const k_metric_names[M_COUNT] = {"max_abs", "max_rel", "cosine",  "top1",
                                                    "topk",    "argmax",  "spearman"};

/* lower is better for the errors, higher for the rest */
static int lower_is_better(int m) { return m == M_MAX_ABS || m == M_MAX_REL; }

static void metric_label(int m, size_t k, char *buf, size_t cap) {
    if (m == M_TOPK)
        snprintf(buf, cap, "top%zu", k);
    else
        snprintf(buf, cap, "%s", k_metric_names[m]);
}

typedef struct metric_stat {
    int applies;
    double worst, sum, sumsq; /* sumsq: of the per-set values (the mean's standard error) */
    size_t worst_set, count;
} metric_stat;

/* One compared output: REF output `ref_index`, TEST output `test_index`. */
typedef struct out_state {
    const char *name;
    size_t ref_index, test_index;
    int skip;  /* not numeric: not compared */
    int64_t c; /* last axis */
    metric_stat m[M_COUNT];
    double *emb_ref, *emb_test; /* rows for the pairwise Spearman */
    size_t emb_rows, emb_cap;
    int emb_capped;
} out_state;

/* Reports running out of memory; returns the exit code 2. */
static int oom(void) {
    fprintf(stderr, "mopt: %s\n", mopt_status_string(MOPT_ERR_OUT_OF_MEMORY));
    return EXIT_USAGE;
}

/* Records v for metric m of set `set`; NaN is the worst of all. */
static void record(out_state *o, int m, double v, size_t set) {
    metric_stat *s = &o->m[m];
    int first = s->count == 0;
    s->applies = 1;
    s->count++;
    s->sum += v;
    s->sumsq += v * v;
    if (first || isnan(s->worst)) {
        if (first || !isnan(s->worst)) {
            s->worst = v;
            s->worst_set = set;
        }
        return;
    }
    if (isnan(v) || (lower_is_better(m) ? v > s->worst : v < s->worst)) {
        s->worst = v;
        s->worst_set = set;
    }
}

/* ---- budget --------------------------------------------------------------- */

typedef struct rule {
    char *output; /* "*" for every output */
    int metric;
    size_t k; /* M_TOPK */
    double limit;
    int is_min;   /* the value must be >= limit (else <= limit) */
    int use_mean; /* stat: mean */
    size_t line;
} rule;

static int parse_metric(const char *s, int *metric, size_t *k) {
    for (int m = 0; m < M_COUNT; m++)
        if (m != M_TOPK && strcmp(s, k_metric_names[m]) == 0) {
            *metric = m;
            return 1;
        }
    if (strncmp(s, "top", 3) == 0 && s[3] >= '1' && s[3] <= '9') {
        int64_t v;
        if (!parse_i64(s + 3, &v) || v < 1) return 0;
        *metric = v == 1 ? M_TOP1 : M_TOPK;
        *k = (size_t)v;
        return 1;
    }
    return 0;
}

static int parse_number(const ytree_node *n, double *out) {
    if (!n || n->kind != YTREE_SCALAR || !n->len) return 0;
    char *end = NULL;
    errno = 0;
    double v = strtod(n->s, &end);
    if (errno || *end != '\0' || isnan(v)) return 0;
    *out = v;
    return 1;
}

/* Reads the budget file into *rules. Returns 0 or the exit code 2. */
static int load_budget(const char *path, rule **rules, size_t *n_rules) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "mopt: cannot open budget '%s': %s\n", path, strerror(errno));
        return EXIT_USAGE;
    }
    ytree t = {0};
    ytree_error e = {0};
    const ytree_limits lim = {.first_line = 1,
                              .max_depth = 8,
                              .max_documents = 1,
                              .max_bytes = BUDGET_MAX_BYTES,
                              .scalar_keys = true};
    mopt_status st = ytree_read_file(&t, &lim, f, &e);
    fclose(f);
    int rc = 0;
    if (st) {
        fprintf(stderr, "mopt: budget '%s' line %zu: not valid YAML%s%s\n", path, e.line,
                e.what ? ": " : "", e.what ? e.what : "");
        rc = EXIT_USAGE;
        goto done;
    }
    const ytree_node *root = t.n_docs ? t.docs[0] : NULL;
    const ytree_node *list = root;
    if (root && root->kind == YTREE_MAP) {
        for (size_t i = 0; i < root->n; i += 2)
            if (strcmp(root->kids[i]->s, "rules") != 0) {
                fprintf(stderr, "mopt: budget '%s' line %zu: unknown key '%s' (expected 'rules')\n",
                        path, root->kids[i]->line, root->kids[i]->s);
                rc = EXIT_USAGE;
                goto done;
            }
        list = ytree_get(root, "rules");
    }
    if (!list || list->kind != YTREE_SEQ || list->n == 0) {
        fprintf(stderr,
                "mopt: budget '%s': expected a list of rules (or 'rules:' and a list), each "
                "{output, metric, min | max | threshold}\n",
                path);
        rc = EXIT_USAGE;
        goto done;
    }
    *rules = calloc(list->n, sizeof **rules);
    if (!*rules) {
        rc = oom();
        goto done;
    }
    for (size_t i = 0; i < list->n; i++) {
        const ytree_node *r = list->kids[i];
        rule *u = &(*rules)[i];
        u->line = r->line;
        if (r->kind != YTREE_MAP) {
            fprintf(stderr, "mopt: budget '%s' line %zu: a rule is a mapping, not %s\n", path,
                    r->line, ytree_kind_name(r->kind));
            rc = EXIT_USAGE;
            goto done;
        }
        int have_limit = 0;
        const char *metric = NULL, *output = "*";
        for (size_t j = 0; j < r->n && !rc; j += 2) {
            const char *key = r->kids[j]->s;
            const ytree_node *v = r->kids[j + 1];
            if (v->kind != YTREE_SCALAR) {
                fprintf(stderr, "mopt: budget '%s' line %zu: '%s' needs a scalar value\n", path,
                        v->line, key);
                rc = EXIT_USAGE;
            } else if (strcmp(key, "output") == 0) {
                output = v->s;
            } else if (strcmp(key, "metric") == 0) {
                metric = v->s;
            } else if (strcmp(key, "min") == 0 || strcmp(key, "max") == 0 ||
                       strcmp(key, "threshold") == 0) {
                if (have_limit++ || !parse_number(v, &u->limit)) {
                    fprintf(stderr,
                            "mopt: budget '%s' line %zu: give one of min, max, threshold, as a "
                            "number\n",
                            path, v->line);
                    rc = EXIT_USAGE;
                }
                u->is_min = key[1] == 'i' ? 1 : key[1] == 'a' ? 0 : -1; /* -1: by metric */
            } else if (strcmp(key, "stat") == 0) {
                if (strcmp(v->s, "mean") == 0) {
                    u->use_mean = 1;
                } else if (strcmp(v->s, "worst") != 0) {
                    fprintf(stderr, "mopt: budget '%s' line %zu: stat is 'worst' or 'mean'\n", path,
                            v->line);
                    rc = EXIT_USAGE;
                }
            } else {
                fprintf(stderr,
                        "mopt: budget '%s' line %zu: unknown key '%s' (output, metric, min, max, "
                        "threshold, stat)\n",
                        path, r->kids[j]->line, key);
                rc = EXIT_USAGE;
            }
        }
        if (rc) goto done;
        if (!metric || !parse_metric(metric, &u->metric, &u->k)) {
            fprintf(stderr,
                    "mopt: budget '%s' line %zu: %s%s%s (one of max_abs, max_rel, cosine, top1, "
                    "topK such as top5, argmax, spearman)\n",
                    path, r->line, metric ? "unknown metric '" : "the rule has no metric",
                    metric ? metric : "", metric ? "'" : "");
            rc = EXIT_USAGE;
            goto done;
        }
        if (!have_limit) {
            fprintf(stderr, "mopt: budget '%s' line %zu: the rule needs min, max or threshold\n",
                    path, r->line);
            rc = EXIT_USAGE;
            goto done;
        }
        if (u->is_min < 0) u->is_min = !lower_is_better(u->metric);
        u->output = strdup(output);
        if (!u->output) {
            rc = EXIT_USAGE;
            goto done;
        }
        *n_rules = i + 1;
    }
done:
    ytree_free(&t);
    return rc;
}

/* ---- golden set ----------------------------------------------------------- */

/* Natural order: digit runs compare by value (test_data_set_2 < _10). */
static int natural_cmp(const char *a, const char *b) {
    while (*a && *b) {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            while (*a == '0')
                a++;
            while (*b == '0')
                b++;
            size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");
            if (la != lb) return la < lb ? -1 : 1;
            int c = strncmp(a, b, la);
            if (c) return c;
            a += la;
            b += lb;
        } else {
            if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
            a++;
            b++;
        }
    }
    return *a ? 1 : *b ? -1 : 0;
}

static int cmp_sets(const void *pa, const void *pb) {
    return natural_cmp(((const golden_set *)pa)->name, ((const golden_set *)pb)->name);
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static char *join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p) snprintf(p, a + b + 2, "%s%s%s", dir, a && dir[a - 1] == '/' ? "" : "/", name);
    return p;
}

static int is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void free_sets(golden_set *s, size_t n) {
    for (size_t i = 0; s && i < n; i++) {
        free(s[i].name);
        free(s[i].path);
    }
    free(s);
}

/* Lists DIR's input sets: its subfolders, and its .npy/.pb files (one set
 * each). Returns 0 or the exit code 2. */
int list_sets(const char *dir, golden_set **out, size_t *n_out) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "mopt: cannot open golden set folder '%s': %s\n", dir, strerror(errno));
        return EXIT_USAGE;
    }
    golden_set *s = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL && !rc) {
        if (e->d_name[0] == '.') continue;
        char *path = join(dir, e->d_name);
        struct stat st;
        if (!path || stat(path, &st) != 0) {
            free(path);
            continue;
        }
        int file =
            S_ISREG(st.st_mode) && (ends_with(e->d_name, ".npy") || ends_with(e->d_name, ".pb"));
        if (!file && !S_ISDIR(st.st_mode)) {
            free(path);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            golden_set *g = cap <= MAX_SETS ? realloc(s, cap * sizeof *s) : NULL;
            if (!g) {
                free(path);
                fprintf(stderr, "mopt: golden set '%s': too many entries\n", dir);
                rc = EXIT_USAGE;
                break;
            }
            s = g;
        }
        s[n] = (golden_set){strdup(e->d_name), path, file};
        if (!s[n++].name) rc = EXIT_USAGE;
    }
    closedir(d);
    if (!rc && n == 0) {
        fprintf(stderr,
                "mopt: golden set '%s' is empty: expected input set folders (test_data_set_0/ "
                "with input_0.npy, ...) or .npy files\n",
                dir);
        rc = EXIT_USAGE;
    }
    if (rc) {
        free_sets(s, n);
        return rc;
    }
    qsort(s, n, sizeof *s, cmp_sets);
    *out = s;
    *n_out = n;
    return 0;
}

/* The file of input or output `idx` named `name` in set folder dir:
 * PREFIX_<idx>.npy, PREFIX_<idx>.pb, or (inputs) <name>.npy with '/' and '\'
 * as '_'. NULL when there is none. */
char *find_tensor_file(const char *dir, const char *prefix, size_t idx, const char *name) {
    char buf[600];
    const char *ext[2] = {".npy", ".pb"};
    for (int k = 0; k < 2; k++) {
        snprintf(buf, sizeof buf, "%s_%zu%s", prefix, idx, ext[k]);
        char *p = join(dir, buf);
        if (p && is_file(p)) return p;
        free(p);
    }
    if (name && *name && strlen(name) < 500) {
        size_t j = 0;
        for (; name[j]; j++)
            buf[j] = name[j] == '/' || name[j] == '\\' ? '_' : name[j];
        memcpy(buf + j, ".npy", 5);
        char *p = join(dir, buf);
        if (p && is_file(p)) return p;
        free(p);
    }
    return NULL;
}

/* ---- one side (REF or TEST) ----------------------------------------------- */

typedef struct side {
    const char *label; /* "REF" or "TEST" */
    common_opts c;
    const char *options_file; /* --ref-options / --test-options */
    const char **sets;        /* KEY=VALUE from --set, then --ref-set / --test-set */
    int n_sets;
    mopt_options *opts;
    mopt_model *model;
    mopt_session *session;
    size_t n_in, n_out;
} side;

/* Loads the side's model and makes its session. Returns 0 or 2. */
static int open_side(side *s) {
    if (make_options(&s->c, &s->opts)) return EXIT_USAGE;
    mopt_status st = MOPT_OK;
    if (s->options_file && (st = mopt_options_load_yaml(s->opts, s->options_file))) {
        fail(st);
        return EXIT_USAGE;
    }
    for (int k = 0; k < s->n_sets; k++) {
        const char *kv = s->sets[k], *eq = strchr(kv, '=');
        char key[128];
        if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof key)
            return usage_error("%s option '%s': expected KEY=VALUE", s->label, kv);
        snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
        if ((st = mopt_options_set_string(s->opts, key, eq + 1)) != MOPT_OK)
            return usage_error("%s option %s: %s", s->label, kv, mopt_last_error());
    }
    if ((st = mopt_model_load(s->c.model, s->opts, &s->model)) != MOPT_OK ||
        (st = mopt_session_create(s->model, s->opts, &s->session)) != MOPT_OK) {
        fprintf(stderr, "mopt: %s model '%s': ", s->label, s->c.model);
        fail(st);
        return EXIT_USAGE;
    }
    s->n_in = mopt_model_io_count(s->model, MOPT_INPUT);
    s->n_out = mopt_model_io_count(s->model, MOPT_OUTPUT);
    return 0;
}

static void close_side(side *s) {
    mopt_session_destroy(s->session);
    mopt_model_destroy(s->model);
    mopt_options_destroy(s->opts);
}

static void destroy_all(mopt_tensor **t, size_t n) {
    for (size_t i = 0; t && i < n; i++) {
        mopt_tensor_destroy(t[i]);
        t[i] = NULL;
    }
}

/* The tensors of one golden set in a comparison: REF's inputs (in), TEST's
 * view of them (tin, pointers into in), and both sides' outputs. */
typedef struct pair_io {
    mopt_tensor **in, **tin, **rout, **tout;
} pair_io;

/* Allocates the four arrays for ref and test (0, or the OOM exit code). */
static int pair_io_alloc(pair_io *io, const side *ref, const side *test) {
    io->in = calloc(ref->n_in + 1, sizeof *io->in);
    io->tin = calloc(test->n_in + 1, sizeof *io->tin);
    io->rout = calloc(ref->n_out + 1, sizeof *io->rout);
    io->tout = calloc(test->n_out + 1, sizeof *io->tout);
    return io->in && io->tin && io->rout && io->tout ? 0 : oom();
}

/* Destroys the set's tensors (the arrays stay, for the next set). */
static void pair_io_clear(pair_io *io, const side *ref, const side *test) {
    destroy_all(io->in, ref->n_in);
    destroy_all(io->rout, ref->n_out);
    destroy_all(io->tout, test->n_out);
}

static void pair_io_free(pair_io *io, const side *ref, const side *test) {
    pair_io_clear(io, ref, test);
    free(io->in);
    free(io->tin);
    free(io->rout);
    free(io->tout);
}

static int runs(side *s, mopt_tensor **in, mopt_tensor **out, const char *set) {
    mopt_status st = mopt_session_run(s->session, s->n_in, NULL, (const mopt_tensor *const *)in,
                                      s->n_out, NULL, out);
    if (st) {
        fprintf(stderr, "mopt: %s model on set '%s': ", s->label, set);
        fail(st);
        return EXIT_USAGE;
    }
    return 0;
}

/* Loads set g's inputs in REF's order into in[] and points TEST's tin[] at
 * them (by name, else by position). Returns 0 or 2. */
static int load_inputs(const side *ref, const side *test, const golden_set *g, mopt_tensor **in,
                       mopt_tensor **tin) {
    if (g->is_file && ref->n_in != 1)
        return usage_error("golden set file '%s': a lone file is an input set only for a "
                           "model with one input (REF has %zu)",
                           g->path, ref->n_in);
    for (size_t i = 0; i < ref->n_in; i++) {
        const char *name = mopt_model_io_name(ref->model, MOPT_INPUT, i);
        char *p = g->is_file ? strdup(g->path) : find_tensor_file(g->path, "input", i, name);
        if (!p) {
            fprintf(stderr,
                    "mopt: golden set '%s': no file for input %zu '%s' (input_%zu.npy, "
                    "input_%zu.pb or %s.npy)\n",
                    g->name, i, name, i, i, name);
            return EXIT_USAGE;
        }
        mopt_status st = mopt_tensor_load(p, &in[i]);
        if (st) {
            fprintf(stderr, "mopt: golden set '%s': '%s': ", g->name, p);
            fail(st);
            free(p);
            return EXIT_USAGE;
        }
        free(p);
    }
    for (size_t i = 0; i < test->n_in; i++) {
        size_t idx = i;
        const char *name = mopt_model_io_name(test->model, MOPT_INPUT, i);
        if (mopt_model_io_find(ref->model, MOPT_INPUT, name, &idx) != MOPT_OK) {
            if (i >= ref->n_in)
                return usage_error("TEST input '%s' has no counterpart in REF", name);
            idx = i;
        }
        tin[i] = in[idx];
    }
    return 0;
}

static void shape_str(const mopt_tensor *t, char *buf, size_t cap) {
    int len = snprintf(buf, cap, "[");
    for (int a = 0; a < mopt_tensor_rank(t) && len < (int)cap; a++)
        len += snprintf(buf + len, cap - (size_t)len, "%s%" PRId64, a ? "," : "",
                        mopt_tensor_dim(t, a));
    if (len < (int)cap) snprintf(buf + len, cap - (size_t)len, "]");
}

static int is_float(mopt_dtype d) {
    return d == MOPT_DTYPE_F32 || d == MOPT_DTYPE_F64 || d == MOPT_DTYPE_F16 ||
           d == MOPT_DTYPE_BF16;
}

static double *to_doubles(const mopt_tensor *t) {
    int64_t n = mopt_tensor_element_count(t);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; v && i < n; i++)
        v[i] = element(t, i);
    return v;
}

/* Measures one output of one set. Returns 0 or 2. */
static int measure(out_state *o, const mopt_tensor *r, const mopt_tensor *t, size_t set,
                   const char *set_name, size_t k) {
    char rs[160], ts[160];
    shape_str(r, rs, sizeof rs);
    shape_str(t, ts, sizeof ts);
    if (strcmp(rs, ts) != 0) {
        fprintf(stderr, "mopt: output '%s' on set '%s': REF has shape %s, TEST %s\n", o->name,
                set_name, rs, ts);
        return EXIT_USAGE;
    }
    mopt_dtype dt = mopt_tensor_dtype(r);
    if (dt == MOPT_DTYPE_STRING || dt == MOPT_DTYPE_UNDEFINED ||
        mopt_tensor_dtype(t) == MOPT_DTYPE_STRING) {
        o->skip = 1;
        return 0;
    }
    size_t n = (size_t)mopt_tensor_element_count(r);
    int rank = mopt_tensor_rank(r);
    int64_t c = rank ? mopt_tensor_dim(r, rank - 1) : 1;
    double *a = to_doubles(r), *b = to_doubles(t);
    if (!a || !b) {
        free(a);
        free(b);
        return oom();
    }
    o->c = c;
    record(o, M_MAX_ABS, qm_max_abs(a, b, n), set);
    record(o, M_MAX_REL, qm_max_rel(a, b, n), set);
    record(o, M_COSINE, qm_cosine(a, b, n), set);
    int rows_ok = is_float(dt) && c >= 2 && n >= (size_t)c;
    if (rows_ok && rank <= 2) {
        record(o, M_TOP1, qm_topk_agreement(a, b, n, (size_t)c, 1), set);
        if ((size_t)c > k) record(o, M_TOPK, qm_topk_agreement(a, b, n, (size_t)c, k), set);
    } else if (rows_ok) {
        record(o, M_ARGMAX, qm_topk_agreement(a, b, n, (size_t)c, 1), set);
    }
    /* rows for the embedding metric, while they fit */
    size_t rows = rows_ok ? n / (size_t)c : 0;
    for (size_t q = 0; q < rows; q++) {
        if (o->emb_rows >= EMBED_MAX_ROWS || (o->emb_rows + 1) * (size_t)c > EMBED_MAX_ELEMS) {
            o->emb_capped = 1;
            break;
        }
        if (o->emb_rows == o->emb_cap) {
            size_t cap = o->emb_cap ? 2 * o->emb_cap : 64;
            double *x = realloc(o->emb_ref, cap * (size_t)c * sizeof *x);
            if (x) o->emb_ref = x;
            double *y = x ? realloc(o->emb_test, cap * (size_t)c * sizeof *y) : NULL;
            if (y) o->emb_test = y;
            if (!x || !y) {
                free(a);
                free(b);
                return oom();
            }
            o->emb_cap = cap;
        }
        memcpy(o->emb_ref + o->emb_rows * (size_t)c, a + q * (size_t)c, (size_t)c * sizeof *a);
        memcpy(o->emb_test + o->emb_rows * (size_t)c, b + q * (size_t)c, (size_t)c * sizeof *b);
        o->emb_rows++;
    }
    free(a);
    free(b);
    return 0;
}

/* ---- the command ---------------------------------------------------------- */

static void print_value(char *buf, size_t cap, double v) { snprintf(buf, cap, "%.6g", v); }

int cmd_compare(int argc, char **argv) {
    compare_args a;
    memset(&a, 0, sizeof a);
    const char *top_k_s = NULL;
    const char **common = calloc((size_t)argc, sizeof *common);
    const char **only_ref = calloc((size_t)argc, sizeof *only_ref);
    const char **only_test = calloc((size_t)argc, sizeof *only_test);
    int rc = 0;
    if (!common || !only_ref || !only_test) {
        rc = oom();
        goto done;
    }
    const string_flag strings[] = {{"--golden", &a.golden},
                                   {"--budget", &a.budget},
                                   {"--options", &a.options},
                                   {"--ref-options", &a.ref_options},
                                   {"--test-options", &a.test_options},
                                   {"--threads", &a.threads},
                                   {"--memory-limit", &a.memory_limit},
                                   {"--top-k", &top_k_s},
                                   {NULL, NULL}};
    for (int i = 2; i < argc && !rc; i++) {
        const char *v = NULL;
        int r;
        if ((r = string_flags(argc, argv, &i, strings)) != 0) {
            /* stored; a missing value is caught below */
        } else if ((r = flag_value(argc, argv, &i, "--set", &v)) != 0) {
            common[a.n_common++] = v;
        } else if ((r = flag_value(argc, argv, &i, "--ref-set", &v)) != 0) {
            only_ref[a.n_ref++] = v;
        } else if ((r = flag_value(argc, argv, &i, "--test-set", &v)) != 0) {
            only_test[a.n_test++] = v;
        } else if (strcmp(argv[i], "--recompute") == 0) {
            a.recompute = 1;
        } else if (strcmp(argv[i], "--per-layer") == 0) {
            a.per_layer = 1;
        } else if ((r = flag_value(argc, argv, &i, "--layer-cosine", &v)) != 0) {
            char *end = NULL;
            a.layer_cosine = r > 0 ? strtod(v, &end) : 0;
            if (r > 0 && (!end || *end || !(a.layer_cosine > 0 && a.layer_cosine <= 1)))
                rc = usage_error("--layer-cosine %s: expected a number in (0, 1]", v);
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            rc = usage_error("unknown flag '%s' for 'mopt compare'", argv[i]);
        } else if (!a.ref_model) {
            a.ref_model = argv[i];
        } else if (!a.test_model) {
            a.test_model = argv[i];
        } else {
            rc = usage_error("'mopt compare' takes two models (REF TEST), got a third: '%s'",
                             argv[i]);
        }
        if (r < 0) rc = EXIT_USAGE;
    }
    if (rc) goto done;
    if (top_k_s) {
        int64_t x;
        if (!parse_i64(top_k_s, &x) || x < 2 || x > 1000000) {
            rc = usage_error("--top-k %s: expected a number >= 2", top_k_s);
            goto done;
        }
        a.top_k = (size_t)x;
    }
    a.common_sets = common;
    a.ref_sets = only_ref;
    a.test_sets = only_test;
    rc = compare_run(&a, stdout, NULL);
done:
    free(common);
    free(only_ref);
    free(only_test);
    return rc;
}

/* ---- per-layer report (--per-layer) ---------------------------------------- */

/* One intermediate tensor of REF (an output of the exposed REF model). */
typedef struct layer_state {
    const char *name;
    size_t test_index; /* SIZE_MAX: TEST has no tensor of that name */
    int shape_differs, compared;
    double worst_cos, sum_cos, worst_abs, worst_rel, ref_absmax;
    size_t worst_set, count;
} layer_state;

/* Opens a copy of side s with expose_values=1 added to its options (its
 * sets array has room for one more entry). */
static int open_exposed(const side *s, side *e) {
    *e = *s;
    e->opts = NULL;
    e->model = NULL;
    e->session = NULL;
    ((const char **)e->sets)[e->n_sets++] = "expose_values=1";
    return open_side(e);
}

static int layer_crosses(const layer_state *l, double min_cos) {
    return l->compared && (isnan(l->worst_cos) || l->worst_cos < min_cos);
}

/* Runs REF and TEST again with every intermediate tensor exposed
 * (expose_values=1), pairs the tensors by name and prints, in REF's
 * topological order, each tensor's cosine and max abs error against REF;
 * the first one whose worst cosine is below min_cos is marked. n_own:
 * REF's own output count (its exposed tensors follow them). Returns 0 or 2. */
static int per_layer_report(const side *ref0, const side *test0, const golden_set *sets,
                            size_t n_sets, size_t n_own, double min_cos, FILE *out,
                            compare_summary *sum) {
    side ref, test;
    memset(&ref, 0, sizeof ref);
    memset(&test, 0, sizeof test);
    layer_state *ls = NULL;
    pair_io io = {0};
    int rc = open_exposed(ref0, &ref);
    if (!rc) rc = open_exposed(test0, &test);
    if (rc) goto done;
    size_t n = ref.n_out;
    ls = calloc(n ? n : 1, sizeof *ls);
    if (!ls) {
        rc = oom();
        goto done;
    }
    if ((rc = pair_io_alloc(&io, &ref, &test)) != 0) goto done;
    /* REF's exposed tensors first (node order), then its own outputs */
    for (size_t k = 0; k < n; k++) {
        size_t j = k + n_own < n ? k + n_own : k + n_own - n;
        layer_state *l = &ls[k];
        l->name = mopt_model_io_name(ref.model, MOPT_OUTPUT, j);
        l->worst_cos = INFINITY;
        l->worst_set = j; /* the REF output index, until a set is measured */
        if (mopt_model_io_find(test.model, MOPT_OUTPUT, l->name, &l->test_index) != MOPT_OK)
            l->test_index = SIZE_MAX;
    }
    for (size_t s = 0; s < n_sets; s++) {
        const golden_set *g = &sets[s];
        if ((rc = load_inputs(&ref, &test, g, io.in, io.tin)) != 0) goto done;
        if ((rc = runs(&ref, io.in, io.rout, g->name)) != 0 ||
            (rc = runs(&test, io.tin, io.tout, g->name)))
            goto done;
        for (size_t k = 0; k < n; k++) {
            layer_state *l = &ls[k];
            size_t j = k + n_own < n ? k + n_own : k + n_own - n;
            if (l->test_index == SIZE_MAX || l->shape_differs) continue;
            const mopt_tensor *r = io.rout[j], *t = io.tout[l->test_index];
            char rs[160], ts[160];
            shape_str(r, rs, sizeof rs);
            shape_str(t, ts, sizeof ts);
            if (strcmp(rs, ts) != 0 || !is_float(mopt_tensor_dtype(r)) ||
                !is_float(mopt_tensor_dtype(t))) {
                l->shape_differs = 1;
                continue;
            }
            size_t ne = (size_t)mopt_tensor_element_count(r);
            double *a = to_doubles(r), *b = to_doubles(t);
            if (!a || !b) {
                free(a);
                free(b);
                rc = oom();
                goto done;
            }
            double cos = ne ? qm_cosine(a, b, ne) : 1.0, abs_err = qm_max_abs(a, b, ne), amax = 0;
            for (size_t q = 0; q < ne; q++)
                if (fabs(a[q]) > amax) amax = fabs(a[q]);
            free(a);
            free(b);
            double rel = abs_err / (amax > 0 ? amax : 1.0);
            if (!l->compared || isnan(cos) || cos < l->worst_cos) {
                if (!l->compared || !isnan(l->worst_cos)) {
                    l->worst_cos = cos;
                    l->worst_set = s;
                }
            }
            l->compared = 1;
            l->count++;
            l->sum_cos += cos;
            if (!(abs_err <= l->worst_abs)) l->worst_abs = abs_err;
            if (!(rel <= l->worst_rel)) l->worst_rel = rel;
            if (amax > l->ref_absmax) l->ref_absmax = amax;
        }
        pair_io_clear(&io, &ref, &test);
    }

    /* the report */
    size_t first = SIZE_MAX, n_cmp = 0, n_ref_only = 0, n_shape = 0;
    for (size_t k = 0; k < n; k++) {
        if (ls[k].compared) n_cmp++;
        if (ls[k].test_index == SIZE_MAX) n_ref_only++;
        if (ls[k].shape_differs) n_shape++;
        if (first == SIZE_MAX && layer_crosses(&ls[k], min_cos)) first = k;
    }
    fprintf(out,
            "\nper-layer (REF's tensors in topological order; worst over %zu set%s; marked: "
            "cosine < %g)\n",
            n_sets, n_sets == 1 ? "" : "s", min_cos);
    fprintf(out, "%5s  %-40s %-11s %-11s %-11s %-11s %-11s %s\n", "#", "tensor", "cosine",
            "mean cos", "max_abs", "max_rel", "max|ref|", "at");
    for (size_t k = 0; k < n; k++) {
        const layer_state *l = &ls[k];
        if (l->test_index == SIZE_MAX) continue;
        if (!l->compared) {
            fprintf(out, "%5zu  %-40s (not compared: shape or dtype differs)\n", k, l->name);
            continue;
        }
        fprintf(out, "%5zu  %-40s %-11.6f %-11.6f %-11.4g %-11.4g %-11.4g %s%s\n", k, l->name,
                l->worst_cos, l->sum_cos / (double)l->count, l->worst_abs, l->worst_rel,
                l->ref_absmax, sets[l->worst_set].name,
                k == first                  ? "   <== first divergence"
                : layer_crosses(l, min_cos) ? "   <"
                : k + n_own >= n            ? "   (output)"
                                            : "");
    }
    fprintf(out, "%zu of REF's %zu tensors compared", n_cmp, n);
    if (n_shape) fprintf(out, "; %zu differ in shape or dtype", n_shape);
    fprintf(out, "\n");
    if (n_ref_only) {
        fprintf(out,
                "not mapped: %zu REF tensor%s that TEST does not have (fused into another node "
                "there, or renamed):",
                n_ref_only, n_ref_only == 1 ? "" : "s");
        size_t shown = 0;
        for (size_t k = 0; k < n; k++)
            if (ls[k].test_index == SIZE_MAX && shown++ < 12) fprintf(out, " '%s'", ls[k].name);
        fprintf(out, "%s\n", n_ref_only > 12 ? " ..." : "");
    }
    size_t n_test_only = 0;
    for (size_t j = 0; j < test.n_out; j++) {
        size_t idx;
        if (mopt_model_io_find(ref.model, MOPT_OUTPUT,
                               mopt_model_io_name(test.model, MOPT_OUTPUT, j), &idx) != MOPT_OK)
            n_test_only++;
    }
    if (n_test_only) {
        fprintf(out, "not mapped: %zu TEST tensor%s that REF does not have:", n_test_only,
                n_test_only == 1 ? "" : "s");
        size_t shown = 0;
        for (size_t j = 0; j < test.n_out; j++) {
            size_t idx;
            const char *nm = mopt_model_io_name(test.model, MOPT_OUTPUT, j);
            if (mopt_model_io_find(ref.model, MOPT_OUTPUT, nm, &idx) != MOPT_OK && shown++ < 12)
                fprintf(out, " '%s'", nm);
        }
        fprintf(out, "%s\n", n_test_only > 12 ? " ..." : "");
    }
    if (first != SIZE_MAX)
        fprintf(out, "first divergence: '%s' (#%zu), cosine %.6f < %g (max_abs %.4g, on set %s)\n",
                ls[first].name, first, ls[first].worst_cos, min_cos, ls[first].worst_abs,
                sets[ls[first].worst_set].name);
    else
        fprintf(out, "no compared tensor has cosine < %g\n", min_cos);
    if (sum) { /* the compared tensors, for the caller (quantize-check's ranking) */
        sum->layers = calloc(n ? n : 1, sizeof *sum->layers);
        if (!sum->layers) {
            rc = oom();
            goto done;
        }
        for (size_t k = 0; k < n; k++) {
            if (!ls[k].compared) continue;
            compare_layer *cl = &sum->layers[sum->n_layers];
            if (!(cl->name = strdup(ls[k].name))) {
                rc = oom();
                goto done;
            }
            cl->worst_cos = ls[k].worst_cos;
            cl->mean_cos = ls[k].sum_cos / (double)ls[k].count;
            sum->n_layers++;
        }
    }
done:
    pair_io_free(&io, &ref, &test);
    free(ls);
    close_side(&test);
    close_side(&ref);
    return rc;
}

void compare_summary_free(compare_summary *sum) {
    if (!sum) return;
    for (size_t i = 0; i < sum->n_layers; i++)
        free(sum->layers[i].name);
    free(sum->layers);
    sum->layers = NULL;
    sum->n_layers = 0;
}

int compare_run(const compare_args *args, FILE *out, compare_summary *sum) {
    const char *golden = args->golden, *budget = args->budget;
    int n_common = args->n_common, n_ref = args->n_ref, n_test = args->n_test;
    int recompute = args->recompute, rc = 0, argc = n_common + n_ref + n_test + 1;
    const char *const *common = args->common_sets, *const *only_ref = args->ref_sets,
                      *const *only_test = args->test_sets;
    const char **ref_sets = calloc((size_t)argc * 2, sizeof *ref_sets);
    const char **test_sets = calloc((size_t)argc * 2, sizeof *test_sets);
    side ref = {.label = "REF"}, test = {.label = "TEST"};
    golden_set *sets = NULL;
    size_t n_sets = 0, n_rules = 0, n_outs = 0;
    rule *rules = NULL;
    out_state *outs = NULL;
    pair_io io = {0};
    mopt_tensor **stored = NULL;
    if (sum) {
        memset(sum, 0, sizeof *sum);
        sum->worst_cosine = sum->mean_cosine = NAN;
        sum->margin = INFINITY;
        sum->margin_value = NAN;
    }
    ref.c.model = args->ref_model;
    test.c.model = args->test_model;
    ref.options_file = args->ref_options;
    test.options_file = args->test_options;
    if (!ref_sets || !test_sets) {
        rc = oom();
        goto done;
    }
    if (!ref.c.model || !test.c.model) {
        rc = usage_error("'mopt compare' needs REF and TEST models (they may be the same file "
                         "with --ref-set/--test-set options)");
        goto done;
    }
    if (!golden) {
        rc = usage_error("'mopt compare' needs --golden DIR");
        goto done;
    }
    size_t top_k = args->top_k ? args->top_k : 5;
    int k_given = args->top_k != 0;
    if (budget && (rc = load_budget(budget, &rules, &n_rules)) != 0) goto done;
    for (size_t q = 0; q < n_rules; q++) {
        if (rules[q].metric != M_TOPK || rules[q].k == top_k) continue;
        if (k_given) {
            rc = usage_error("budget line %zu asks for top%zu but --top-k is %zu", rules[q].line,
                             rules[q].k, top_k);
            goto done;
        }
        top_k = rules[q].k;
        k_given = 1;
    }
    /* options: --options and --set for both, then the side's own */
    for (int k = 0; k < n_common; k++)
        ref_sets[ref.n_sets++] = test_sets[test.n_sets++] = common[k];
    for (int k = 0; k < n_ref; k++)
        ref_sets[ref.n_sets++] = only_ref[k];
    for (int k = 0; k < n_test; k++)
        test_sets[test.n_sets++] = only_test[k];
    ref.sets = ref_sets;
    test.sets = test_sets;
    ref.c.options_file = test.c.options_file = args->options;
    ref.c.threads = test.c.threads = args->threads;
    ref.c.memory_limit = test.c.memory_limit = args->memory_limit;
    if ((rc = list_sets(golden, &sets, &n_sets)) != 0) goto done;
    for (; args->max_sets && n_sets > args->max_sets; n_sets--) {
        free(sets[n_sets - 1].name);
        free(sets[n_sets - 1].path);
    }
    if ((rc = open_side(&ref)) != 0 || (rc = open_side(&test)) != 0) goto done;

    /* outputs: TEST's by REF's name, else by position */
    n_outs = ref.n_out;
    outs = calloc(n_outs ? n_outs : 1, sizeof *outs);
    stored = calloc(ref.n_out + 1, sizeof *stored);
    if (!outs || !stored) {
        rc = oom();
        goto done;
    }
    if ((rc = pair_io_alloc(&io, &ref, &test)) != 0) goto done;
    for (size_t j = 0; j < n_outs; j++) {
        outs[j].name = mopt_model_io_name(ref.model, MOPT_OUTPUT, j);
        outs[j].ref_index = j;
        if (mopt_model_io_find(test.model, MOPT_OUTPUT, outs[j].name, &outs[j].test_index)) {
            if (ref.n_out != test.n_out) {
                rc = usage_error("TEST has no output named '%s' and a different number of "
                                 "outputs (%zu, REF %zu): cannot pair them",
                                 outs[j].name, test.n_out, ref.n_out);
                goto done;
            }
            outs[j].test_index = j;
        }
    }
    for (size_t q = 0; q < n_rules; q++) {
        size_t idx;
        if (strcmp(rules[q].output, "*") != 0 &&
            mopt_model_io_find(ref.model, MOPT_OUTPUT, rules[q].output, &idx)) {
            rc = usage_error("budget line %zu: REF has no output named '%s'", rules[q].line,
                             rules[q].output);
            goto done;
        }
    }

    size_t n_stored_sets = 0;
    for (size_t s = 0; s < n_sets; s++) {
        const golden_set *g = &sets[s];
        if ((rc = load_inputs(&ref, &test, g, io.in, io.tin)) != 0) goto done;
        /* reference outputs: stored ones unless --recompute, else REF's */
        size_t n_stored = 0;
        for (size_t j = 0; j < ref.n_out && !recompute && !g->is_file; j++) {
            char *p = find_tensor_file(g->path, "output", j, NULL);
            if (!p) continue;
            mopt_status st = mopt_tensor_load(p, &stored[j]);
            if (st) {
                fprintf(stderr, "mopt: golden set '%s': '%s': ", g->name, p);
                fail(st);
                free(p);
                rc = EXIT_USAGE;
                goto done;
            }
            free(p);
            n_stored++;
        }
        if (n_stored) n_stored_sets++;
        if (n_stored < ref.n_out && (rc = runs(&ref, io.in, io.rout, g->name)) != 0) goto done;
        if ((rc = runs(&test, io.tin, io.tout, g->name)) != 0) goto done;
        for (size_t j = 0; j < n_outs; j++) {
            const mopt_tensor *r = stored[j] ? stored[j] : io.rout[j];
            if ((rc = measure(&outs[j], r, io.tout[outs[j].test_index], s, g->name, top_k)) != 0)
                goto done;
        }
        pair_io_clear(&io, &ref, &test);
        destroy_all(stored, ref.n_out);
    }
    for (size_t j = 0; j < n_outs; j++) {
        out_state *o = &outs[j];
        if (o->emb_rows >= 3) {
            double rho = qm_pairwise_spearman(o->emb_ref, o->emb_test, o->emb_rows, (size_t)o->c);
            record(o, M_SPEARMAN, rho, SIZE_MAX);
        }
    }

    /* the table */
    fprintf(out, "golden set %s: %zu input set%s; references: %s\n", golden, n_sets,
            n_sets == 1 ? "" : "s",
            n_stored_sets == 0        ? "computed by REF"
            : n_stored_sets == n_sets ? "stored"
                                      : "stored in some sets, computed by REF in the others");
    fprintf(out, "REF  %s", ref.c.model);
    for (int k = 0; k < ref.n_sets; k++)
        fprintf(out, " %s", ref.sets[k]);
    fprintf(out, "\nTEST %s", test.c.model);
    for (int k = 0; k < test.n_sets; k++)
        fprintf(out, " %s", test.sets[k]);
    fprintf(out, "\n\n%-24s %-9s %-13s %-22s %s\n", "output", "metric", "worst", "at", "mean");
    for (size_t j = 0; j < n_outs; j++) {
        out_state *o = &outs[j];
        if (o->skip) {
            fprintf(out, "%-24s (not numeric: not compared)\n", o->name);
            continue;
        }
        for (int m = 0; m < M_COUNT; m++) {
            metric_stat *s = &o->m[m];
            if (!s->applies) continue;
            char label[32], w[32], mean[32];
            metric_label(m, top_k, label, sizeof label);
            print_value(w, sizeof w, s->worst);
            print_value(mean, sizeof mean, s->sum / (double)s->count);
            const char *at = s->worst_set == SIZE_MAX ? "(all sets)" : sets[s->worst_set].name;
            if (m == M_SPEARMAN) snprintf(mean, sizeof mean, "-");
            fprintf(out, "%-24s %-9s %-13s %-22s %s", o->name, label, w, at, mean);
            if (m == M_SPEARMAN)
                fprintf(out, "   (%zu rows%s)", o->emb_rows, o->emb_capped ? ", capped" : "");
            fprintf(out, "\n");
        }
    }

    /* the budget */
    size_t violated = 0;
    for (size_t q = 0; q < n_rules; q++) {
        const rule *u = &rules[q];
        int matched = 0;
        for (size_t j = 0; j < n_outs; j++) {
            out_state *o = &outs[j];
            int star = strcmp(u->output, "*") == 0;
            if (!star && strcmp(u->output, o->name) != 0) continue;
            const metric_stat *s = &o->m[u->metric];
            if (!s->applies || o->skip) {
                if (star) continue;
                char label[32];
                metric_label(u->metric, u->k, label, sizeof label);
                rc = usage_error("budget line %zu: metric %s does not apply to output '%s'",
                                 u->line, label, o->name);
                goto done;
            }
            matched = 1;
            double v =
                u->use_mean && u->metric != M_SPEARMAN ? s->sum / (double)s->count : s->worst;
            int ok = u->is_min ? v >= u->limit : v <= u->limit; /* NaN fails */
            double slack = (u->is_min ? v - u->limit : u->limit - v) /
                           (fabs(u->limit) > 1e-12 ? fabs(u->limit) : 1e-12);
            if (isnan(slack)) slack = -INFINITY;
            if (sum && slack < sum->margin) {
                char label[32];
                metric_label(u->metric, u->k, label, sizeof label);
                sum->margin = slack;
                sum->margin_value = v;
                sum->margin_limit = u->limit;
                sum->margin_is_min = u->is_min;
                sum->margin_se = 0;
                if (u->use_mean && u->metric != M_SPEARMAN && s->count > 1) {
                    /* the standard error of the mean over the sets */
                    double n = (double)s->count, m = s->sum / n;
                    sum->margin_se = sqrt(fmax(s->sumsq - n * m * m, 0.0) / (n - 1) / n);
                }
                snprintf(sum->margin_rule, sizeof sum->margin_rule, "'%s' %s %s %s %.6g", o->name,
                         label, u->use_mean ? "mean" : "worst", u->is_min ? ">=" : "<=", u->limit);
            }
            if (ok) continue;
            char label[32];
            metric_label(u->metric, u->k, label, sizeof label);
            char line[512];
            snprintf(line, sizeof line,
                     "budget violated: output '%s' %s %s %.6g%s%s%s %s %s %.6g (line %zu)", o->name,
                     label, u->use_mean ? "mean" : "worst", v, u->use_mean ? "" : " (at ",
                     u->use_mean                ? ""
                     : s->worst_set == SIZE_MAX ? "all sets"
                                                : sets[s->worst_set].name,
                     u->use_mean ? "" : ")", u->is_min ? "<" : ">", u->is_min ? "min" : "max",
                     u->limit, u->line);
            fprintf(out, "%s\n", line);
            if (sum && !violated) snprintf(sum->violation, sizeof sum->violation, "%s", line);
            violated++;
        }
        if (!matched) {
            char label[32];
            metric_label(u->metric, u->k, label, sizeof label);
            fprintf(stderr, "mopt: warning: budget line %zu: metric %s applies to no output\n",
                    u->line, label);
        }
    }
    if (n_rules) {
        if (violated)
            fprintf(out, "budget %s: %zu violation%s\n", budget, violated,
                    violated == 1 ? "" : "s");
        else
            fprintf(out, "budget %s: all %zu rule%s hold\n", budget, n_rules,
                    n_rules == 1 ? "" : "s");
    }
    if (args->per_layer &&
        (rc = per_layer_report(&ref, &test, sets, n_sets, ref.n_out,
                               args->layer_cosine > 0 ? args->layer_cosine : 0.99, out, sum)) != 0)
        goto done;
    if (sum) {
        sum->rules = n_rules;
        sum->violations = violated;
        for (size_t j = 0; j < n_outs; j++) {
            const metric_stat *c = &outs[j].m[M_COSINE];
            if (outs[j].skip || !c->applies) continue;
            if (isnan(sum->worst_cosine) || isnan(c->worst) || c->worst < sum->worst_cosine)
                sum->worst_cosine = c->worst;
            double mc = c->count ? c->sum / (double)c->count : NAN;
            if (isnan(sum->mean_cosine) || isnan(mc) || mc < sum->mean_cosine)
                sum->mean_cosine = mc;
            const metric_stat *e = &outs[j].m[M_MAX_ABS];
            if (e->applies && (isnan(e->worst) || e->worst > sum->worst_max_abs))
                sum->worst_max_abs = e->worst;
        }
    }
    if (fflush(out) != 0) rc = EXIT_USAGE;
    if (!rc && violated) rc = EXIT_FAILURE;

done:
    pair_io_free(&io, &ref, &test);
    destroy_all(stored, ref.n_out);
    free(stored);
    for (size_t j = 0; outs && j < n_outs; j++) {
        free(outs[j].emb_ref);
        free(outs[j].emb_test);
    }
    free(outs);
    for (size_t q = 0; q < n_rules; q++)
        free(rules[q].output);
    free(rules);
    free_sets(sets, n_sets);
    close_side(&test);
    close_side(&ref);
    free(ref_sets);
    free(test_sets);
    return rc;
}
