/*
 * file.c — whole-file reading and path helpers for the importers.
 */
#include "io/file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/error.h"

mopt_status file_read_all(const char *path, size_t max_size, uint8_t **out, size_t *len) {
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return mopt_fail(MOPT_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return mopt_fail(MOPT_ERR_IO, "'%s' is not a regular file", path);
    }
    if ((uint64_t)st.st_size > (uint64_t)max_size) {
        fclose(f);
        return mopt_fail(MOPT_ERR_LIMIT, "'%s' is %lld bytes; the limit is %zu", path,
                         (long long)st.st_size, max_size);
    }
    size_t size = (size_t)st.st_size;
    uint8_t *buf = mopt_malloc(size ? size : 1);
    if (!buf) {
        fclose(f);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading '%s' (%zu bytes)", path,
                         size);
    }
    size_t got = size ? fread(buf, 1, size, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (got != size || err) {
        mopt_free(buf);
        return mopt_fail(MOPT_ERR_IO, "short read on '%s' (%zu of %zu bytes)", path, got, size);
    }
    *out = buf;
    *len = size;
    return MOPT_OK;
}

char *file_dirname(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return mopt_strdup(".");
    if (slash == path) return mopt_strdup("/");
    return mopt_strndup(path, (size_t)(slash - path));
}
