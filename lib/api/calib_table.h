/*
 * calib_table.h (api) — the calibration table of option calibration=FILE,
 * read into the static INT8 pass's pass_qtable (passes.h) before the model
 * is built (api/model.c hands it to the build through rt_config.qtable).
 */
#ifndef MOPT_API_CALIB_TABLE_H
#define MOPT_API_CALIB_TABLE_H

#include "passes/passes.h"

/* Reads path; a table whose model_hash is not model_hash (mfmt_hash64 of
 * the ONNX bytes) is refused (INVALID_ARGUMENT), as is a malformed one
 * (PARSE, naming the line). */
mopt_status rt_calib_load(const char *path, uint64_t model_hash, pass_qtable *t);
void rt_calib_free(pass_qtable *t);
/* The table's names against the imported (not yet optimized) graph: none
 * of them a tensor of g fails (INVALID_ARGUMENT), some logs a warning. */
mopt_status rt_calib_check_names(const pass_qtable *t, const ir_graph *g);

#endif
