/*
 * reduce.c — portable reference kernels for the "reduce" op family
 * (declared in ref_reduce.h). Obvious and correct; the oracle for faster
 * backends.
 */
#include "kernels/ref/ref_reduce.h"
