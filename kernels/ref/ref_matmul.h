/*
 * ref_matmul.h — reference kernels for the "matmul" op family. Kernels see
 * only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_MATMUL_H
#define MOPT_KERNELS_REF_MATMUL_H

#include "kernels/ref/ref.h"

#endif
