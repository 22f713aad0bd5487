/*
 * logic.c — portable reference kernels for the "logic" op family
 * (declared in ref_logic.h). Obvious and correct; the oracle for faster
 * backends.
 */
#include "kernels/ref/ref_logic.h"
