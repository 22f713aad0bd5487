/*
 * ref_elementwise.h — reference kernels for the "elementwise" op family. Kernels see
 * only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_ELEMENTWISE_H
#define MOPT_KERNELS_REF_ELEMENTWISE_H

#include "kernels/ref/ref.h"

#endif
