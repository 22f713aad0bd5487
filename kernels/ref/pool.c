/*
 * pool.c — portable reference kernels for the "pool" op family
 * (declared in ref_pool.h). Obvious and correct; the oracle for faster
 * backends.
 */
#include "kernels/ref/ref_pool.h"
