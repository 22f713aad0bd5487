/*
 * elementwise.c — portable reference kernels for the "elementwise" op family
 * (declared in ref_elementwise.h). Obvious and correct; the oracle for faster
 * backends.
 */
#include "kernels/ref/ref_elementwise.h"
