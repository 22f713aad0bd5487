/*
 * ref_reduce.h — reference kernels for the "reduce" op family. Kernels see
 * only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_REDUCE_H
#define MOPT_KERNELS_REF_REDUCE_H

#include "kernels/ref/ref.h"

#endif
