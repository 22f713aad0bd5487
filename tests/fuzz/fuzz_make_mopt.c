/*
 * fuzz_make_mopt.c — seed maker for fuzz_mopt (run by run_fuzz.sh, not a
 * test): loads each ONNX file given at opt_level 0 and 2 and saves it as a
 * .mopt file into OUT_DIR, so that the .mopt fuzzer starts from many valid
 * images of real graphs (every operator of the op cases), not only the two
 * valid files of the hostile .mopt corpus. Files that do not load are
 * skipped. Usage: fuzz_make_mopt OUT_DIR MODEL.onnx...
 */
#include <stdio.h>
#include <string.h>

#include <mopt/mopt.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUT_DIR MODEL.onnx...\n", argv[0]);
        return 2;
    }
    int made = 0;
    for (int i = 2; i < argc; i++) {
        for (int level = 0; level <= 2; level += 2) {
            mopt_options *o = NULL;
            mopt_model *m = NULL;
            if (mopt_options_create(&o) == MOPT_OK &&
                mopt_options_set_int(o, "opt_level", level) == MOPT_OK &&
                mopt_model_load(argv[i], o, &m) == MOPT_OK) {
                char path[4096];
                snprintf(path, sizeof path, "%s/seed_%d_O%d.mopt", argv[1], i, level);
                if (mopt_model_save(m, path) == MOPT_OK) made++;
            }
            mopt_model_destroy(m);
            mopt_options_destroy(o);
        }
    }
    printf("fuzz_make_mopt: %d .mopt seeds in %s\n", made, argv[1]);
    return 0;
}
