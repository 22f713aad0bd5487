/*
 * pb.c — placeholder for the protobuf wire-format decoder.
 */
#include <stddef.h>
int pb_placeholder(void);
int pb_placeholder(void) { return 0; }
