/*
 * normalization.c — portable reference kernels for the "normalization" op family
 * (declared in ref_normalization.h). Obvious and correct; the oracle for faster
 * backends.
 */
#include "kernels/ref/ref_normalization.h"
