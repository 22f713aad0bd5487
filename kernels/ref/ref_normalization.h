/*
 * ref_normalization.h — reference kernels for the "normalization" op family. Kernels see
 * only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_NORMALIZATION_H
#define MOPT_KERNELS_REF_NORMALIZATION_H

#include "kernels/ref/ref.h"

#endif
