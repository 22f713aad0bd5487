/*
 * matmul.c — portable reference kernels for the "matmul" op family
 * (declared in ref_matmul.h). Obvious and correct; the oracle for faster
 * backends.
 */
#include "kernels/ref/ref_matmul.h"
