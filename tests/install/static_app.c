/*
 * static_app.c — a host program for tests/install/check_install.sh, built
 * against the installed libmopt.a with pkg-config: it loads a model with
 * the given "backend" option, runs it once on zeros and prints one line per
 * node, "node <op> <kernel>", from the per-node profile, so the script can
 * tell which backend really ran.
 *
 * Built with -DCOLLIDE it also defines pb_decode_varint, the name of one of
 * the library's internal functions (lib/io/pb.c), as a host program of its
 * own might: libmopt.a exports only mopt_*, so the link must succeed and
 * both functions work (the model is decoded by the library's own one).
 *
 * usage: static_app MODEL.onnx BACKEND
 * Exit status: 0 ran; 3 the load failed with MOPT_ERR_UNSUPPORTED (its
 * message is printed as "unsupported: ..."); 1 any other failure.
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <mopt/mopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef COLLIDE
/* Deliberately the same name as the library's internal decoder. */
int pb_decode_varint(int x);
int pb_decode_varint(int x) { return 2 * x + 1; }
#endif

static int fail(mopt_status st, const char *what) {
    if (st == MOPT_ERR_UNSUPPORTED) {
        printf("unsupported: %s\n", mopt_last_error());
        return 3;
    }
    fprintf(stderr, "static_app: %s: %s: %s\n", what, mopt_status_string(st), mopt_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: static_app MODEL.onnx BACKEND\n");
        return 1;
    }
#ifdef COLLIDE
    if (pb_decode_varint(20) != 41) {
        fprintf(stderr, "static_app: the host's pb_decode_varint was not called\n");
        return 1;
    }
    printf("host pb_decode_varint ok\n");
#endif
    mopt_options *opts = NULL;
    mopt_model *model = NULL;
    mopt_session *session = NULL;
    mopt_status st = mopt_options_create(&opts);
    if (st == MOPT_OK) st = mopt_options_set_string(opts, "backend", argv[2]);
    if (st == MOPT_OK) st = mopt_options_set_string(opts, "profile", "1");
    if (st == MOPT_OK) st = mopt_options_set_int(opts, "threads", 1);
    if (st != MOPT_OK) return fail(st, "options");
    st = mopt_model_load(argv[1], opts, &model);
    if (st != MOPT_OK) return fail(st, "load");
    st = mopt_session_create(model, opts, &session);
    if (st != MOPT_OK) return fail(st, "session");

    /* One f32 input of fixed shape, filled with zeros. */
    if (mopt_model_io_count(model, MOPT_INPUT) != 1 ||
        mopt_model_io_dtype(model, MOPT_INPUT, 0) != MOPT_DTYPE_F32) {
        fprintf(stderr, "static_app: the model must have one f32 input\n");
        return 1;
    }
    int rank = mopt_model_io_rank(model, MOPT_INPUT, 0);
    int64_t dims[MOPT_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        dims[i] = mopt_model_io_dim(model, MOPT_INPUT, 0, i);
        if (dims[i] < 0) dims[i] = 1;
    }
    mopt_tensor *in = NULL, *out = NULL;
    st = mopt_tensor_create(MOPT_DTYPE_F32, rank, dims, &in);
    if (st != MOPT_OK) return fail(st, "input");
    memset(mopt_tensor_data(in), 0, mopt_tensor_size_bytes(in));
    st = mopt_session_run(session, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, &out);
    if (st != MOPT_OK) return fail(st, "run");
    for (size_t i = 0; i < mopt_session_profile_count(session); i++)
        printf("node %s %s\n", mopt_session_profile_op(session, i),
               mopt_session_profile_kernel(session, i));
    mopt_tensor_destroy(out);
    mopt_tensor_destroy(in);
    mopt_session_destroy(session);
    mopt_model_destroy(model);
    mopt_options_destroy(opts);
    return 0;
}
