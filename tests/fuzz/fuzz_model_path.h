/*
 * fuzz_model_path.h — the path every fuzzed model takes (shared by the
 * fuzz_onnx_model target and the test_fuzz_regressions cmocka test): load
 * from memory, and when that succeeds, run a session twice on zero inputs of
 * the declared shapes under a memory limit.
 */
#ifndef MOPT_FUZZ_MODEL_PATH_H
#define MOPT_FUZZ_MODEL_PATH_H

#include <stddef.h>
#include <stdint.h>

#include <mopt/mopt.h>

/* Largest total input size fed to a fuzzed model (small enough that an
 * O(n^2) operator on it stays well under the fuzzer's 10 s per input), and
 * the session's memory_limit. */
#define FUZZ_MAX_INPUT_BYTES ((size_t)256 << 10)
#define FUZZ_MEMORY_LIMIT ((int64_t)64 << 20)

/* What happened to one input. */
typedef struct fuzz_model_result {
    mopt_status load;       /* status of mopt_model_load_from_memory */
    int ran;                /* 1 when the session was created and run */
    mopt_status run[2];     /* status of the two runs (when ran) */
    int defect;             /* 1 when an API promise was broken (message printed) */
    int internal;           /* calls that returned MOPT_ERR_INTERNAL ("a bug in libmopt") */
    char internal_msg[256]; /* the first such call and its message */
} fuzz_model_result;

/* How fuzz_model_exercise_ex fills the inputs. */
typedef enum fuzz_fill {
    FUZZ_FILL_ZERO,   /* all zero */
    FUZZ_FILL_PATTERN /* small varied values: ints cycle 1,0,2,1,3, floats 0.5,-1,2,0,1.5,-0.25 */
} fuzz_fill;

/* Loads data[0..size) as a model and runs it as described above. Never
 * aborts itself: broken promises (a failure without a message, an output
 * handed over on failure, an inconsistent output tensor) set r->defect. */
void fuzz_model_exercise(const uint8_t *data, size_t size, fuzz_model_result *r);

/* As fuzz_model_exercise, with the inputs filled as `fill` says. */
void fuzz_model_exercise_ex(const uint8_t *data, size_t size, fuzz_fill fill, fuzz_model_result *r);

#endif
