/*
 * recurrent_cpu.c — the "cpu" fast path of LSTM, GRU and RNN (none yet: the
 * op tables point at this empty list, so the reference runs every node).
 */
#include "ops/recurrent.h"

const op_impl *const ops_cpu_recurrent_impls[] = {NULL};
