/*
 * fuzz_options_yaml.c — libFuzzer target for mopt_options_load_yaml_string:
 * any text (not NUL-terminated: the length is exact) must give OK or a
 * failure with a message; afterwards every known key must still read back
 * with its kind, values in range, and the option set must convert to a
 * session configuration. Never a crash, leak or sanitizer report.
 */
#include <string.h>

#include "fuzz_common.h"
#include "runtime/runtime.h"

static const char *const k_int_keys[] = {"threads", "opt_level", "memory_limit", "verbose"};
static const char *const k_str_keys[] = {"backend", "precision", "profile", "external_data_dir"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mopt_options *opts = NULL;
    if (mopt_options_create(&opts) != MOPT_OK) abort();
    /* an exact-length copy, so that ASan catches any read past `size` */
    char *text = malloc(size ? size : 1);
    if (!text) abort();
    if (size) memcpy(text, data, size);
    mopt_status st = mopt_options_load_yaml_string(opts, text, size);
    fuzz_check_failure(st, "mopt_options_load_yaml_string");
    free(text);
    for (size_t i = 0; i < sizeof k_int_keys / sizeof k_int_keys[0]; i++) {
        int64_t v = -1;
        if (mopt_options_get_int(opts, k_int_keys[i], &v) != MOPT_OK || v < 0) abort();
    }
    for (size_t i = 0; i < sizeof k_str_keys / sizeof k_str_keys[0]; i++) {
        const char *s = NULL;
        if (mopt_options_get_string(opts, k_str_keys[i], &s) != MOPT_OK || !s) abort();
        fuzz_touch(s, strlen(s));
    }
    rt_config cfg;
    /* Valid options always read, except a backend this program lacks. */
    st = rt_config_read(opts, &cfg);
    if (st != MOPT_OK && !(st == MOPT_ERR_UNSUPPORTED && strstr(mopt_last_error(), "backend=")))
        abort();
    mopt_options_destroy(opts);
    return 0;
}
