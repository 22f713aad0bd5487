/*
 * ref_util.c — shared helpers for the portable reference kernels.
 */
#include "kernels/ref/ref.h"

float ref_f32_identity(float x) { return x; }
