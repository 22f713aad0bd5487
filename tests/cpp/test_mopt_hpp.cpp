/*
 * test_mopt_hpp.cpp — the C++ wrapper (include/mopt/mopt.hpp) against the C
 * API it wraps: the same model run through both gives bit-identical outputs
 * (and matches the ONNX Runtime references in tests/models within their
 * tolerance), errors carry the status and message the C call produced, and
 * the owners move as documented. Usage: test_mopt_hpp TESTS_MODELS_DIR
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"

static std::string models_dir;

int second_tu_version_number(); // second_tu.cpp

static std::string model_path(const char *name) { return models_dir + "/" + name + "/model.onnx"; }
static std::string data_path(const char *name, const char *file) {
    return models_dir + "/" + name + "/test_data_set_0/" + file;
}

/* ---- the C API, by hand: the oracle for the wrapper ---------------------- */

/* Runs `model` through the C API with one thread; inputs in model order,
 * every output allocated by the library. Returns the outputs as float
 * vectors (the corpus models have only f32 outputs). */
static std::vector<std::vector<float>> c_api_run(const std::string &path,
                                                 const std::vector<const char *> &input_files) {
    mopt_options *opts = nullptr;
    mopt_model *model = nullptr;
    mopt_session *session = nullptr;
    CHECK(mopt_options_create(&opts) == MOPT_OK);
    CHECK(mopt_options_set_int(opts, "threads", 1) == MOPT_OK);
    CHECK(mopt_model_load(path.c_str(), opts, &model) == MOPT_OK);
    CHECK(mopt_session_create(model, opts, &session) == MOPT_OK);
    std::vector<mopt_tensor *> ins;
    for (const char *f : input_files) {
        mopt_tensor *t = nullptr;
        CHECK(mopt_tensor_load(f, &t) == MOPT_OK);
        ins.push_back(t);
    }
    size_t n_out = mopt_model_io_count(model, MOPT_OUTPUT);
    std::vector<mopt_tensor *> outs(n_out, nullptr);
    std::vector<const mopt_tensor *> cins(ins.begin(), ins.end());
    CHECK(mopt_session_run(session, cins.size(), nullptr, cins.data(), n_out, nullptr,
                           outs.data()) == MOPT_OK);
    std::vector<std::vector<float>> r;
    for (mopt_tensor *t : outs) {
        const float *p = static_cast<const float *>(mopt_tensor_data_const(t));
        r.emplace_back(p, p + mopt_tensor_element_count(t));
        mopt_tensor_destroy(t);
    }
    for (mopt_tensor *t : ins)
        mopt_tensor_destroy(t);
    mopt_session_destroy(session);
    mopt_model_destroy(model);
    mopt_options_destroy(opts);
    return r;
}

static float max_abs_diff(const std::vector<float> &a, const std::vector<float> &b) {
    if (a.size() != b.size()) return INFINITY;
    float m = 0;
    for (size_t i = 0; i < a.size(); i++)
        m = std::fmax(m, std::fabs(a[i] - b[i]));
    return m;
}

static mopt::options one_thread() {
    mopt::options o;
    o.set("threads", 1);
    return o;
}

/* ---- tests --------------------------------------------------------------- */

static void test_version_matches_header() {
    CHECK(mopt::version_number() == MOPT_VERSION_NUMBER);
    std::string expect = std::to_string(MOPT_VERSION_MAJOR) + "." +
                         std::to_string(MOPT_VERSION_MINOR) + "." +
                         std::to_string(MOPT_VERSION_PATCH);
    CHECK(mopt::version() == expect);
    CHECK(second_tu_version_number() == MOPT_VERSION_NUMBER);
}

static void test_cnn_matches_c_api_and_reference() {
    std::vector<std::vector<float>> c_out =
        c_api_run(model_path("cnn"), {data_path("cnn", "input_0.npy").c_str()});
    mopt::options opts = one_thread();
    mopt::model model = mopt::model::load(model_path("cnn"), &opts);
    mopt::session session(model, &opts);
    mopt::tensor in = mopt::tensor::load(data_path("cnn", "input_0.npy"));
    std::vector<mopt::tensor> out = session.run({in});
    CHECK(out.size() == 1);
    CHECK(out[0].dims() == (mopt::shape{1, 10}));
    CHECK(out[0].dtype() == MOPT_DTYPE_F32);
    std::vector<float> got = out[0].to_vector<float>();
    CHECK(c_out.size() == 1);
    CHECK(got == c_out[0]); // same library, same options: bit-identical
    mopt::tensor ref = mopt::tensor::load(data_path("cnn", "output_0.npy"));
    CHECK(max_abs_diff(got, ref.to_vector<float>()) <= 1e-4f);
    CHECK(session.stat("runs") == 1);
}

/* Two int64 inputs from caller vectors (zero copy, read-only), named run,
 * and outputs written into caller vectors (zero copy). */
static void test_bert_named_and_into_caller_buffers() {
    std::vector<std::vector<float>> c_out =
        c_api_run(model_path("bert"), {data_path("bert", "input_0.npy").c_str(),
                                       data_path("bert", "input_1.npy").c_str()});
    mopt::options opts = one_thread();
    mopt::model model = mopt::model::load(model_path("bert"), &opts);
    mopt::session session(model, &opts);

    mopt::tensor ids_file = mopt::tensor::load(data_path("bert", "input_0.npy"));
    mopt::tensor mask_file = mopt::tensor::load(data_path("bert", "input_1.npy"));
    const std::vector<int64_t> ids = ids_file.to_vector<int64_t>();
    const std::vector<int64_t> mask = mask_file.to_vector<int64_t>();
    CHECK(ids_file.dims() == (mopt::shape{1, 8}));
    mopt::tensor ids_t = mopt::tensor::wrap(ids, {1, 8});
    mopt::tensor mask_t = mopt::tensor::wrap(mask, {1, 8});
    CHECK(ids_t.read_only());
    CHECK(ids_t.data() == static_cast<const void *>(ids.data())); // borrowed, not copied

    // Named inputs in reverse model order; only the second output.
    std::vector<mopt::tensor> pooled =
        session.run({{"attention_mask", mask_t}, {"input_ids", ids_t}}, {"pooler_output"});
    CHECK(pooled.size() == 1);
    CHECK(pooled[0].dims() == (mopt::shape{1, 64}));
    CHECK(pooled[0].to_vector<float>() == c_out[1]);

    // Every output into caller buffers.
    std::vector<float> hidden(1 * 8 * 64, -1.0f), pool(64, -1.0f);
    mopt::tensor hidden_t = mopt::tensor::wrap(hidden, {1, 8, 64});
    mopt::tensor pool_t = mopt::tensor::wrap(pool, {1, 64});
    CHECK(!hidden_t.read_only());
    session.run_into({ids_t, mask_t}, {hidden_t, pool_t});
    CHECK(hidden == c_out[0]);
    CHECK(pool == c_out[1]);
    mopt::tensor ref = mopt::tensor::load(data_path("bert", "output_0.npy"));
    CHECK(max_abs_diff(hidden, ref.to_vector<float>()) <= 1e-4f);
    CHECK(session.stat("runs") == 2);
}

static void test_introspection() {
    mopt::model model = mopt::model::load(model_path("bert"));
    std::vector<mopt::io_info> in = model.inputs();
    CHECK(in.size() == 2 && model.input_count() == 2);
    CHECK(in[0].name == "input_ids" && in[1].name == "attention_mask");
    CHECK(in[0].dtype == MOPT_DTYPE_I64);
    CHECK(in[0].rank == 2);
    CHECK(in[0].dims == (mopt::shape{-1, -1}));
    CHECK(in[0].dim_names == (std::vector<std::string>{"batch", "seq"}));
    std::vector<mopt::io_info> out = model.outputs();
    CHECK(out.size() == 2);
    CHECK(out[0].name == "last_hidden_state" && out[0].dims.size() == 3 && out[0].dims[2] == 64);
    CHECK(model.find_input("attention_mask") == 1);
    CHECK(model.find_output("pooler_output") == 1);
    CHECK(model.opset() == 17);
    CHECK(model.node_count() > 0 && model.node_count() == mopt_model_node_count(model.get()));
    CHECK(!model.node_op_type(0).empty());
    CHECK(model.parameter_count() == mopt_model_parameter_count(model.get()));
    CHECK(model.parameter_count() > 100000);
    CHECK(model.pass_report() == mopt_model_pass_report(model.get()));
    CHECK_THROWS(model.input(2), MOPT_ERR_INVALID_ARGUMENT,
                 CHECK(err.message().find("index 2") != std::string::npos));
}

/* The message an error carries is the one the same C call leaves in
 * mopt_last_error(). */
static void test_errors_carry_status_and_c_message() {
    const std::string missing = models_dir + "/no_such_model.onnx";
    mopt_model *raw = nullptr;
    CHECK(mopt_model_load(missing.c_str(), nullptr, &raw) == MOPT_ERR_IO);
    const std::string c_msg = mopt_last_error();
    CHECK(!c_msg.empty());
    CHECK_THROWS(mopt::model::load(missing), MOPT_ERR_IO, {
        CHECK(err.message() == c_msg);
        CHECK(err.message().find("no_such_model.onnx") != std::string::npos);
        CHECK(std::string(err.what()) ==
              std::string(mopt_status_string(MOPT_ERR_IO)) + ": " + c_msg);
    });

    mopt::options opts;
    CHECK_THROWS(opts.set("no_such_key", 1), MOPT_ERR_INVALID_ARGUMENT,
                 CHECK(err.message().find("no_such_key") != std::string::npos));
    CHECK_THROWS(opts.set("threads", "many"), MOPT_ERR_INVALID_ARGUMENT,
                 CHECK(err.message().find("threads") != std::string::npos));
    CHECK_THROWS(opts.get_int("backend"), MOPT_ERR_INVALID_ARGUMENT, (void)err);

    mopt::model model = mopt::model::load(model_path("cnn"));
    mopt::session session(model);
    // Wrong element type, then wrong shape, then an unknown name.
    std::vector<int64_t> ints(3 * 32 * 32);
    mopt::tensor wrong_type = mopt::tensor::wrap(ints, {1, 3, 32, 32});
    CHECK_THROWS(session.run({wrong_type}), MOPT_ERR_TYPE, CHECK(!err.message().empty()));
    std::vector<float> small(3 * 16 * 16);
    mopt::tensor wrong_shape = mopt::tensor::wrap(small, {1, 3, 16, 16});
    CHECK_THROWS(session.run({wrong_shape}), MOPT_ERR_SHAPE, CHECK(!err.message().empty()));
    std::vector<float> pixels(3 * 32 * 32);
    mopt::tensor good = mopt::tensor::wrap(pixels, {1, 3, 32, 32});
    CHECK_THROWS(session.run({{"pixels", good}}, {}), MOPT_ERR_NOT_FOUND,
                 CHECK(err.message().find("pixels") != std::string::npos));
    CHECK_THROWS(session.run({{"input", good}}, {"nope"}), MOPT_ERR_NOT_FOUND,
                 CHECK(err.message().find("nope") != std::string::npos));
    // A caller output of the wrong shape is refused and left untouched.
    std::vector<float> out5(5, 7.0f);
    mopt::tensor out5_t = mopt::tensor::wrap(out5, {1, 5});
    CHECK_THROWS(session.run_into({good}, {out5_t}), MOPT_ERR_SHAPE, (void)err);
    CHECK(out5 == std::vector<float>(5, 7.0f));
    CHECK(session.stat("runs") == 0);
    CHECK_THROWS(session.stat("no_such_stat"), MOPT_ERR_NOT_FOUND, (void)err);

    // Errors raised by the wrapper itself.
    mopt::tensor f = mopt::tensor::copy_of(std::vector<float>{1, 2, 3}, {3});
    CHECK_THROWS(f.to_vector<int64_t>(), MOPT_ERR_TYPE,
                 CHECK(err.message() == "tensor holds f32, not i64"));
    CHECK_THROWS(mopt::tensor::copy_of(std::vector<float>{1, 2}, {3}), MOPT_ERR_INVALID_ARGUMENT,
                 (void)err);
    const std::vector<float> ro{1, 2};
    mopt::tensor ro_t = mopt::tensor::wrap(ro, {2});
    CHECK_THROWS(ro_t.mutable_data(), MOPT_ERR_INVALID_ARGUMENT, (void)err);
    CHECK_THROWS(mopt::tensor::wrap(ints, {2, 2}), MOPT_ERR_INVALID_ARGUMENT, (void)err);
    CHECK_THROWS(mopt::tensor(MOPT_DTYPE_F32, mopt::shape(9, 1)), MOPT_ERR_INVALID_ARGUMENT,
                 (void)err);
}

static void test_tensor_basics() {
    mopt::tensor z(MOPT_DTYPE_I32, {2, 3});
    CHECK(z.rank() == 2 && z.dim(1) == 3 && z.element_count() == 6 && z.size_bytes() == 24);
    CHECK(z.to_vector<int32_t>() == std::vector<int32_t>(6, 0));
    z.mutable_data_as<int32_t>()[4] = 42;
    CHECK(z.values<int32_t>()[4] == 42);
    mopt::tensor scalar(MOPT_DTYPE_F64, {});
    CHECK(scalar.rank() == 0 && scalar.element_count() == 1 && scalar.dims().empty());
    std::array<float, 4> arr{1, 2, 3, 4};
    mopt::tensor a = mopt::tensor::wrap(mopt::span<float>(arr), {2, 2});
    a.mutable_data_as<float>()[0] = 9; // writes through to the caller's array
    CHECK(arr[0] == 9);
    mopt::tensor_view v = a;
    CHECK(v.get() == a.get() && v.dims() == (mopt::shape{2, 2}));
    mopt::const_tensor_view cv = v;
    CHECK(cv.to_vector<float>() == (std::vector<float>{9, 2, 3, 4}));
}

static void test_options_round_trip() {
    mopt::options opts;
    CHECK(opts.get_string("backend") == "auto");
    opts.set("threads", 3).set("backend", std::string("ref"));
    CHECK(opts.get_int("threads") == 3);
    CHECK(opts.get_string("backend") == "ref");
    opts.load_yaml_string("threads: 2\nopt_level: 1\n");
    CHECK(opts.get_int("threads") == 2 && opts.get_int("opt_level") == 1);
    CHECK_THROWS(opts.load_yaml_string("threads: [1, 2]\n"), MOPT_ERR_PARSE, (void)err);
}

static void test_move_semantics() {
    mopt::tensor a(MOPT_DTYPE_F32, {4});
    mopt_tensor *raw = a.get();
    mopt::tensor b(std::move(a));
    CHECK(!a && a.get() == nullptr); // NOLINT: moved-from is documented as empty
    CHECK(b.get() == raw);
    mopt::tensor c;
    c = std::move(b);
    CHECK(!b && c.get() == raw);
    const std::vector<float> ro{1};
    mopt::tensor r = mopt::tensor::wrap(ro, {1});
    mopt::tensor r2 = std::move(r);
    CHECK(r2.read_only() && !r.read_only());

    mopt::options o1;
    o1.set("threads", 1);
    mopt::options o2 = std::move(o1);
    CHECK(!o1 && o2.get_int("threads") == 1);

    mopt::model m1 = mopt::model::load(model_path("cnn"), &o2);
    const mopt_model *mraw = m1.get();
    mopt::model m2 = std::move(m1);
    CHECK(!m1 && m2.get() == mraw);
    mopt::session s1(m2, &o2);
    mopt::session s2 = std::move(s1);
    CHECK(!s1 && s2);
    mopt::tensor in = mopt::tensor::load(data_path("cnn", "input_0.npy"));
    std::vector<float> first = s2.run({in})[0].to_vector<float>();
    CHECK_THROWS(s1.run({in}), MOPT_ERR_INVALID_ARGUMENT,
                 CHECK(err.message().find("empty") != std::string::npos));
    // Sessions in a vector survive reallocation (moves).
    std::vector<mopt::session> many;
    for (int i = 0; i < 5; i++)
        many.emplace_back(m2, &o2);
    for (auto &s : many)
        CHECK(s.run({in})[0].to_vector<float>() == first);
    CHECK_THROWS(mopt::session{m1}, MOPT_ERR_INVALID_ARGUMENT, (void)err);
}

/* The model object may die before its sessions: they keep it alive. */
static void test_session_outlives_model_object() {
    mopt::options opts = one_thread();
    mopt::tensor in = mopt::tensor::load(data_path("cnn", "input_0.npy"));
    mopt::session s;
    std::vector<float> expect;
    {
        mopt::model m = mopt::model::load(model_path("cnn"), &opts);
        s = mopt::session(m, &opts);
        expect = s.run({in})[0].to_vector<float>();
    }
    CHECK(s.run({in})[0].to_vector<float>() == expect);
}

static void test_load_from_memory_and_profile() {
    std::ifstream f(model_path("cnn"), std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    CHECK(bytes.size() > 1000);
    mopt::options opts = one_thread();
    opts.set("profile", "1");
    mopt::model m = mopt::model::load_from_memory(bytes.data(), bytes.size(), &opts);
    mopt::session s(m, &opts);
    CHECK(s.profile().empty()); // before the first run
    mopt::tensor in = mopt::tensor::load(data_path("cnn", "input_0.npy"));
    std::vector<float> got = s.run({in})[0].to_vector<float>();
    std::vector<std::vector<float>> c_out =
        c_api_run(model_path("cnn"), {data_path("cnn", "input_0.npy").c_str()});
    CHECK(got == c_out[0]);
    std::vector<mopt::profile_entry> prof = s.profile();
    CHECK(prof.size() == mopt_session_profile_count(s.get()));
    CHECK(!prof.empty() && !prof[0].op.empty() && !prof[0].kernel.empty());
    CHECK(s.stat("last_run_ns") > 0);
    CHECK_THROWS(mopt::model::load_from_memory(bytes.data(), 10), MOPT_ERR_PARSE, (void)err);
}

int main(int argc, char **argv) {
    if (!check::models_dir_arg(argc, argv, models_dir)) return 2;
    RUN(test_version_matches_header);
    RUN(test_cnn_matches_c_api_and_reference);
    RUN(test_bert_named_and_into_caller_buffers);
    RUN(test_introspection);
    RUN(test_errors_carry_status_and_c_message);
    RUN(test_tensor_basics);
    RUN(test_options_round_trip);
    RUN(test_move_semantics);
    RUN(test_session_outlives_model_object);
    RUN(test_load_from_memory_and_profile);
    return check::failures() ? 1 : 0;
}
