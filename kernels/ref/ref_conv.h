/*
 * ref_conv.h — reference kernels for the "conv" op family. Kernels see
 * only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_CONV_H
#define MOPT_KERNELS_REF_CONV_H

#include "kernels/ref/ref.h"

#endif
