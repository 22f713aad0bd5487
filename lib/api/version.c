/*
 * version.c — run-time version queries.
 */
#include <mopt/mopt.h>

#define MOPT_STR2(x) #x
#define MOPT_STR(x) MOPT_STR2(x)

int mopt_version_number(void) { return MOPT_VERSION_NUMBER; }

const char *mopt_version(void) {
    return MOPT_STR(MOPT_VERSION_MAJOR) "." MOPT_STR(MOPT_VERSION_MINOR) "." MOPT_STR(
        MOPT_VERSION_PATCH);
}
