/*
 * sampling.c — the generator's token choice (see sampling.h). Order of the
 * rules, as in common practice: repetition penalty on the raw logits, then
 * greedy argmax or temperature, top-k, top-p and a draw from what is left.
 */
#include "api/sampling.h"

#include <math.h>
#include <stdlib.h>

uint64_t gen_rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double gen_rng_uniform(uint64_t *state) {
    return (double)(gen_rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* descending logit; ties by ascending id, so the order is total */
static int cand_cmp(const void *a, const void *b) {
    const gen_cand *x = a, *y = b;
    if (x->logit > y->logit) return -1;
    if (x->logit < y->logit) return 1;
    return (x->id > y->id) - (x->id < y->id);
}

static float penalized(const float *logits, const int32_t *counts, double penalty, int64_t t) {
    float v = logits[t];
    if (counts && counts[t] > 0 && penalty != 1.0)
        v = v > 0 ? (float)(v / penalty) : (float)(v * penalty);
    return v;
}

int64_t gen_sample(const float *logits, int64_t vocab, const int32_t *counts,
                   const gen_sampling *cfg, gen_cand *scratch, uint64_t *rng) {
    double pen = cfg->repetition_penalty;
    if (cfg->temperature <= 0) {
        int64_t best = 0;
        float bv = penalized(logits, counts, pen, 0);
        for (int64_t t = 1; t < vocab; t++) {
            float v = penalized(logits, counts, pen, t);
            if (v > bv || (isnan(bv) && !isnan(v))) bv = v, best = t;
        }
        return best;
    }
    for (int64_t t = 0; t < vocab; t++) {
        scratch[t].logit = penalized(logits, counts, pen, t);
        scratch[t].id = (int32_t)t;
    }
    int64_t n = vocab;
    int sorted = cfg->top_k > 0 || cfg->top_p < 1.0;
    if (sorted) qsort(scratch, (size_t)vocab, sizeof *scratch, cand_cmp);
    if (cfg->top_k > 0 && cfg->top_k < n) n = cfg->top_k;
    /* softmax over the n candidates, at the temperature; the maximum of the
     * candidates is the first one when sorted, else found here */
    float mx = scratch[0].logit;
    for (int64_t i = 1; i < n && !sorted; i++)
        if (scratch[i].logit > mx) mx = scratch[i].logit;
    double inv_t = 1.0 / cfg->temperature, sum = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = exp(((double)scratch[i].logit - mx) * inv_t);
        scratch[i].logit = (float)e; /* the slot now holds the weight */
        sum += e;
    }
    if (cfg->top_p < 1.0) {
        double cum = 0, want = cfg->top_p * sum;
        int64_t keep = 0;
        while (keep < n) {
            cum += scratch[keep].logit;
            keep++;
            if (cum >= want) break;
        }
        n = keep;
        sum = cum;
    }
    double u = gen_rng_uniform(rng) * sum, acc = 0;
    for (int64_t i = 0; i < n; i++) {
        acc += scratch[i].logit;
        if (u < acc) return scratch[i].id;
    }
    return scratch[n - 1].id; /* rounding: u fell just past the last weight */
}
