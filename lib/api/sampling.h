/*
 * sampling.h — choosing the next token from a row of logits (greedy,
 * temperature, top-k, top-p, repetition penalty) with a seeded random
 * generator. Pure functions over caller-owned scratch: no allocation, no
 * model, so the generator and its tests share one implementation.
 */
#ifndef MOPT_API_SAMPLING_H
#define MOPT_API_SAMPLING_H

#include <stddef.h>
#include <stdint.h>

typedef struct gen_sampling {
    double temperature;        /* 0 = greedy */
    int64_t top_k;             /* 0 = all */
    double top_p;              /* 1 = all */
    double repetition_penalty; /* 1 = off */
    uint64_t seed;
} gen_sampling;

/* One scratch entry per vocabulary entry. */
typedef struct gen_cand {
    float logit;
    int32_t id;
} gen_cand;

/* splitmix64: the state advances by a constant, the output is mixed. */
uint64_t gen_rng_next(uint64_t *state);
/* Uniform in [0, 1), 53 bits. */
double gen_rng_uniform(uint64_t *state);

/* Picks a token from logits[0..vocab). counts[t] > 0 marks tokens already
 * in the context (repetition penalty); counts may be NULL. scratch holds
 * vocab entries. rng is used only when temperature > 0. */
int64_t gen_sample(const float *logits, int64_t vocab, const int32_t *counts,
                   const gen_sampling *cfg, gen_cand *scratch, uint64_t *rng);

#endif /* MOPT_API_SAMPLING_H */
