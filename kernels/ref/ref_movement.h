/*
 * ref_movement.h — reference kernels for the "movement" op family. Kernels see
 * only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_MOVEMENT_H
#define MOPT_KERNELS_REF_MOVEMENT_H

#include "kernels/ref/ref.h"

#endif
