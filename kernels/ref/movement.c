/*
 * movement.c — portable reference kernels for the "movement" op family
 * (declared in ref_movement.h). Obvious and correct; the oracle for faster
 * backends.
 */
#include "kernels/ref/ref_movement.h"
