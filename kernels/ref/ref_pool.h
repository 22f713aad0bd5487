/*
 * ref_pool.h — reference kernels for the "pool" op family. Kernels see
 * only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_POOL_H
#define MOPT_KERNELS_REF_POOL_H

#include "kernels/ref/ref.h"

#endif
