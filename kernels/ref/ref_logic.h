/*
 * ref_logic.h — reference kernels for the "logic" op family. Kernels see
 * only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_LOGIC_H
#define MOPT_KERNELS_REF_LOGIC_H

#include "kernels/ref/ref.h"

#endif
