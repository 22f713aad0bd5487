/*
 * fusion.c — helpers shared by the fusion passes: use counts and producers
 * over live nodes, constant lookups, new weights, attribute setters and the
 * in-place replacement of a pattern's last node by a fused node.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ops/ops.h"
#include "passes/fusion.h"

mopt_status fu_refresh(fu_graph *f) {
    ir_graph *g = f->g;
    int32_t need = g->n_values > 0 ? g->n_values : 1;
    if (need > f->cap) {
        int32_t *u = mopt_realloc(f->uses, (size_t)need * sizeof *u);
        if (u) f->uses = u;
        int32_t *p = mopt_realloc(f->prod, (size_t)need * sizeof *p);
        if (p) f->prod = p;
        if (!u || !p) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory in a fusion pass");
        f->cap = need;
    }
    /* use counts as ir_graph_use_counts gives them, and producers, in one
     * sweep of the nodes */
    for (int32_t v = 0; v < g->n_values; v++) {
        f->uses[v] = 0;
        f->prod[v] = -1;
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (n->dead) continue;
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) f->uses[n->inputs[k]]++;
        for (int32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0) f->prod[n->outputs[k]] = i;
    }
    for (int32_t i = 0; i < g->n_outputs; i++)
        f->uses[g->outputs[i]]++;
    return MOPT_OK;
}

mopt_status fu_init(fu_graph *f, ir_graph *g) {
    memset(f, 0, sizeof *f);
    f->g = g;
    mopt_status st = fu_refresh(f);
    if (st) fu_free(f); /* one of the two arrays may have been allocated */
    return st;
}

void fu_free(fu_graph *f) {
    mopt_free(f->uses);
    mopt_free(f->prod);
    memset(f, 0, sizeof *f);
}

mopt_status fu_run_pass(ir_graph *g, pass_result *r, const fu_pass *p) {
    int32_t c[PASS_COUNTS_CAP] = {0};
    fu_graph f;
    mopt_status st = fu_init(&f, g);
    for (int32_t i = 0; !st && i < g->n_nodes; i++)
        st = p->visit(&f, g->nodes[i], c);
    for (int32_t i = 0; !st && p->then_visit && i < g->n_nodes; i++)
        st = p->then_visit(&f, g->nodes[i], c);
    fu_free(&f);
    if (!st && p->finish) st = p->finish(g, c);
    pass_note_counts(r, c, p->notes, p->rewrites);
    return st;
}

bool fu_is(const ir_node *n, const char *op_type) {
    return n && !n->dead && n->domain[0] == '\0' && n->op_type[0] == op_type[0] &&
           strcmp(n->op_type, op_type) == 0;
}

ir_node *fu_producer(const fu_graph *f, int32_t v) {
    if (v < 0 || v >= f->g->n_values || f->prod[v] < 0) return NULL;
    ir_node *n = f->g->nodes[f->prod[v]];
    return n->dead ? NULL : n;
}

ir_node *fu_producer_is(const fu_graph *f, int32_t v, const char *op_type) {
    ir_node *n = fu_producer(f, v);
    return fu_is(n, op_type) ? n : NULL;
}

ir_node *fu_sole_consumer(const fu_graph *f, int32_t v, int32_t *index) {
    const ir_graph *g = f->g;
    if (v < 0 || v >= g->n_values || f->uses[v] != 1) return NULL;
    if (g->values[v]->flags & IR_VALUE_OUTPUT) return NULL;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (n->dead) continue;
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] == v) {
                if (index) *index = i;
                return n;
            }
    }
    return NULL;
}

int32_t fu_node_index(const fu_graph *f, const ir_node *n) {
    for (int32_t i = 0; i < f->g->n_nodes; i++)
        if (f->g->nodes[i] == n) return i;
    return -1;
}

bool fu_is_const(const ir_graph *g, int32_t v) {
    return v >= 0 && v < g->n_values && (g->values[v]->flags & IR_VALUE_INITIALIZER) &&
           (g->values[v]->data != NULL || g->values[v]->nbytes == 0);
}

bool fu_const_scalar(const ir_graph *g, int32_t v, double *out) {
    if (!fu_is_const(g, v)) return false;
    const ir_value *val = g->values[v];
    size_t esz = mopt_dtype_size(val->dtype);
    if (esz == 0 || val->nbytes != esz || !val->data) return false;
    switch (val->dtype) {
    case MOPT_DTYPE_F32: *out = *(const float *)val->data; return true;
    case MOPT_DTYPE_F64: *out = *(const double *)val->data; return true;
    case MOPT_DTYPE_I64: *out = (double)*(const int64_t *)val->data; return true;
    case MOPT_DTYPE_I32: *out = *(const int32_t *)val->data; return true;
    default: return false;
    }
}

const float *fu_const_f32(const ir_graph *g, int32_t v, int64_t *numel) {
    if (!fu_is_const(g, v)) return NULL;
    const ir_value *val = g->values[v];
    if (val->dtype != MOPT_DTYPE_F32 || !val->data) return NULL;
    *numel = (int64_t)(val->nbytes / sizeof(float));
    return val->data;
}

bool fu_near(double v, double ref, double rel) { return fabs(v - ref) <= rel * fabs(ref); }

int fu_other_input(const ir_node *n, int32_t v) {
    if (n->n_inputs != 2) return -1;
    if (n->inputs[0] == v && n->inputs[1] != v) return 1;
    if (n->inputs[1] == v && n->inputs[0] != v) return 0;
    return -1;
}

int fu_scalar_input(const ir_graph *g, const ir_node *n, double ref, double rel) {
    if (n->n_inputs != 2) return -1;
    for (int k = 0; k < 2; k++) {
        double s;
        if (fu_const_scalar(g, n->inputs[k], &s) && fu_near(s, ref, rel)) return k;
    }
    return -1;
}

bool fu_same_shape(const ir_shape *a, const ir_shape *b) {
    if (a->rank < 0 || a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++) {
        if (a->syms[i] != b->syms[i] || a->syms[i] < 0) return false;
        if (a->syms[i] == 0 && a->dims[i] != b->dims[i]) return false;
    }
    return true;
}

int32_t fu_add_weight(ir_graph *g, const char *base, mopt_dtype dtype, int32_t rank,
                      const int64_t *dims, const void *data) {
    int64_t n = ir_numel(rank, dims);
    size_t esz = mopt_dtype_size(dtype);
    if (n < 0 || rank > IR_MAX_RANK || esz == 0 || (uint64_t)n > SIZE_MAX / esz) {
        mopt_fail(MOPT_ERR_LIMIT, "weight '%s' is too large", base);
        return -1;
    }
    size_t nbytes = (size_t)n * esz;
    void *buf = mopt_aligned_alloc(nbytes ? nbytes : 1);
    if (!buf) {
        mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating weight '%s'", base);
        return -1;
    }
    int32_t v = ir_graph_new_value(g, base);
    if (v < 0) {
        mopt_aligned_free(buf);
        return -1;
    }
    if (nbytes) memcpy(buf, data, nbytes);
    ir_value *val = g->values[v];
    val->data = buf;
    val->nbytes = nbytes;
    val->dtype = dtype;
    ir_shape_set(&val->shape, rank, dims);
    val->flags |= IR_VALUE_INITIALIZER;
    val->producer = -1;
    return v;
}

int32_t fu_add_f32_weight(ir_graph *g, const char *base, int32_t rank, const int64_t *dims,
                          const float *data) {
    return fu_add_weight(g, base, MOPT_DTYPE_F32, rank, dims, data);
}

ir_node *fu_replace_node(fu_graph *f, ir_node *replaced, const char *op_type, const char *domain,
                         const char *name, int32_t n_inputs, int32_t out_value) {
    ir_graph *g = f->g;
    int32_t at = fu_node_index(f, replaced);
    if (at < 0) {
        mopt_fail(MOPT_ERR_INTERNAL, "fusion: node '%s' is not in the graph", replaced->name);
        return NULL;
    }
    ir_node *n = ir_graph_add_node(g, op_type, domain, name, n_inputs, 1);
    if (!n) return NULL;
    n->op = ops_find(op_type, domain);
    if (!n->op) {
        n->dead = true;
        mopt_fail(MOPT_ERR_INTERNAL, "fusion: operator %s%s%s is not registered", domain,
                  domain[0] ? "." : "", op_type);
        return NULL;
    }
    n->outputs[0] = out_value;
    replaced->dead = true;
    int32_t last = g->n_nodes - 1;
    g->nodes[at] = n;
    g->nodes[last] = replaced;
    for (int32_t k = 0; k < replaced->n_outputs; k++)
        if (replaced->outputs[k] >= 0) f->prod[replaced->outputs[k]] = -1;
    f->prod[out_value] = at;
    g->values[out_value]->producer = at;
    return n;
}

bool fu_set_int(ir_node *n, const char *name, int64_t v) {
    ir_attr *a = ir_node_add_attr(n, name, IR_ATTR_INT);
    if (!a) return false;
    a->i = v;
    return true;
}

bool fu_set_float(ir_node *n, const char *name, float v) {
    ir_attr *a = ir_node_add_attr(n, name, IR_ATTR_FLOAT);
    if (!a) return false;
    a->f = v;
    return true;
}

bool fu_set_string(ir_node *n, const char *name, const char *v) {
    ir_attr *a = ir_node_add_attr(n, name, IR_ATTR_STRING);
    if (!a) return false;
    a->s = mopt_strdup(v);
    if (!a->s) {
        mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory setting attribute '%s'", name);
        return false;
    }
    a->s_len = strlen(v);
    return true;
}

bool fu_attrs_copyable(const ir_node *src) {
    for (int32_t k = 0; k < src->n_attrs; k++) {
        ir_attr_type t = src->attrs[k].type;
        if (t != IR_ATTR_INT && t != IR_ATTR_FLOAT && t != IR_ATTR_STRING && t != IR_ATTR_INTS &&
            t != IR_ATTR_FLOATS)
            return false;
    }
    return true;
}

bool fu_copy_attrs(ir_node *dst, const ir_node *src) {
    for (int32_t k = 0; k < src->n_attrs; k++) {
        const ir_attr *s = &src->attrs[k];
        ir_attr *a = ir_node_add_attr(dst, s->name, s->type);
        if (!a) return false;
        a->i = s->i;
        a->f = s->f;
        if (s->type == IR_ATTR_STRING) {
            a->s = mopt_malloc(s->s_len + 1);
            if (!a->s) goto oom;
            memcpy(a->s, s->s, s->s_len + 1);
            a->s_len = s->s_len;
        } else if (s->type == IR_ATTR_INTS && s->n) {
            a->ints = mopt_malloc(s->n * sizeof *a->ints);
            if (!a->ints) goto oom;
            memcpy(a->ints, s->ints, s->n * sizeof *a->ints);
            a->n = s->n;
        } else if (s->type == IR_ATTR_FLOATS && s->n) {
            a->floats = mopt_malloc(s->n * sizeof *a->floats);
            if (!a->floats) goto oom;
            memcpy(a->floats, s->floats, s->n * sizeof *a->floats);
            a->n = s->n;
        }
    }
    return true;
oom:
    mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory copying attributes of node '%s'", src->name);
    return false;
}

bool fu_use_mopt_domain(ir_graph *g) {
    if (ir_graph_opset(g, "mopt") >= 1) return true;
    if (ir_graph_set_opset(g, "mopt", 1) == 0) return true;
    mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory declaring the mopt domain");
    return false;
}

bool fu_activation(const ir_graph *g, const ir_node *n, fu_act *a) {
    memset(a, 0, sizeof *a);
    if (!n || n->dead || n->domain[0] || n->n_inputs < 1 || n->n_outputs != 1) return false;
    const char *op = n->op_type;
    if (strcmp(op, "Clip") != 0 && n->n_inputs != 1) return false;
    if (!strcmp(op, "Relu") || !strcmp(op, "HardSwish") || !strcmp(op, "Sigmoid") ||
        !strcmp(op, "Tanh")) {
        a->name = op;
        return true;
    }
    if (!strcmp(op, "LeakyRelu")) {
        a->name = op;
        a->alpha = ir_node_attr_float(n, "alpha", 0.01f);
        a->has_params = true;
        return true;
    }
    if (!strcmp(op, "HardSigmoid")) {
        a->name = op;
        a->alpha = ir_node_attr_float(n, "alpha", 0.2f);
        a->beta = ir_node_attr_float(n, "beta", 0.5f);
        a->has_params = true;
        return true;
    }
    if (!strcmp(op, "Gelu")) {
        const char *ap = ir_node_attr_string(n, "approximate", "none");
        if (!strcmp(ap, "none"))
            a->name = "Gelu";
        else if (!strcmp(ap, "tanh"))
            a->name = "GeluTanh";
        else
            return false;
        return true;
    }
    if (!strcmp(op, "Clip")) {
        a->name = op;
        a->alpha = -INFINITY;
        a->beta = INFINITY;
        a->has_params = true;
        if (ir_graph_opset(g, "") < 11) {
            if (n->n_inputs != 1) return false;
            a->alpha = ir_node_attr_float(n, "min", -INFINITY);
            a->beta = ir_node_attr_float(n, "max", INFINITY);
            return true;
        }
        if (n->n_inputs > 3) return false;
        for (int32_t k = 1; k < n->n_inputs; k++) {
            int32_t v = n->inputs[k];
            if (v < 0) continue;
            double s;
            if (g->values[v]->dtype != MOPT_DTYPE_F32 || !fu_const_scalar(g, v, &s)) return false;
            if (k == 1)
                a->alpha = (float)s;
            else
                a->beta = (float)s;
        }
        return true;
    }
    return false;
}

bool fu_set_activation(ir_node *n, const fu_act *a) {
    if (!fu_set_string(n, "activation", a->name)) return false;
    if (!a->has_params) return true;
    return fu_set_float(n, "activation_alpha", a->alpha) &&
           fu_set_float(n, "activation_beta", a->beta);
}
