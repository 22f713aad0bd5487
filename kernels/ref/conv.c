/*
 * conv.c — portable reference kernels for the "conv" op family
 * (declared in ref_conv.h). Obvious and correct; the oracle for faster
 * backends.
 */
#include "kernels/ref/ref_conv.h"
