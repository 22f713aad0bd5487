/*
 * ref.h — shared declarations of the portable reference kernels (kernels/ref).
 * Each family has its own header beside this one (ref_<family>.h). Kernels
 * see only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_REF_H
#define MOPT_KERNELS_REF_REF_H

#include <stddef.h>
#include <stdint.h>

float ref_f32_identity(float x);

#endif
