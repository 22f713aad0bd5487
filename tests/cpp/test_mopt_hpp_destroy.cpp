/*
 * test_mopt_hpp_destroy.cpp — when the C++ wrapper calls each *_destroy.
 * This program interposes mopt_{model,session,tensor,options}_destroy: its
 * own definitions log the handle and forward to libmopt's (dlsym
 * RTLD_NEXT), so the tests see the exact sequence of destroy calls the
 * header's destructors and move assignments make. Asserted: every handle is
 * destroyed exactly once, never by a moved-from object, a session always
 * before its model whatever order the C++ objects die in, and a move
 * assignment releases the old handle at once.
 * Usage: test_mopt_hpp_destroy TESTS_MODELS_DIR
 */
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"

namespace {
struct event {
    char kind; // 'm'odel, 's'ession, 't'ensor, 'o'ptions
    const void *handle;
    bool operator==(const event &o) const { return kind == o.kind && handle == o.handle; }
};
std::vector<event> &log_() {
    static std::vector<event> events;
    return events;
}
template <class F> F next_(const char *name) {
    void *sym = dlsym(RTLD_NEXT, name);
    if (!sym) {
        std::fprintf(stderr, "dlsym(%s): %s\n", name, dlerror());
        std::abort();
    }
    F f;
    std::memcpy(&f, &sym, sizeof f);
    return f;
}
/* Events for the given handles only, in order (libmopt may destroy its own
 * internal objects through the same entry points). */
std::vector<event> events_for(const std::vector<const void *> &handles) {
    std::vector<event> r;
    for (const event &e : log_())
        for (const void *h : handles)
            if (e.handle == h) r.push_back(e);
    return r;
}
} // namespace

/* type_destroy interposed: logs a non-NULL handle as `kind`, then calls
 * libmopt's own. */
#define LOGGED_DESTROY(type, kind)                                                                 \
    void type##_destroy(type *p) {                                                                 \
        static auto real = next_<void (*)(type *)>(#type "_destroy");                              \
        if (p) log_().push_back({kind, p});                                                        \
        real(p);                                                                                   \
    }

extern "C" {
LOGGED_DESTROY(mopt_model, 'm')
LOGGED_DESTROY(mopt_session, 's')
LOGGED_DESTROY(mopt_tensor, 't')
LOGGED_DESTROY(mopt_options, 'o')
}

static std::string models_dir;

static void test_model_object_dies_first() {
    log_().clear();
    const void *m_raw = nullptr, *s_raw = nullptr, *o_raw = nullptr;
    {
        mopt::session s;
        {
            mopt::options o;
            o.set("threads", 1);
            o_raw = o.get();
            mopt::model m = mopt::model::load(models_dir + "/cnn/model.onnx", &o);
            m_raw = m.get();
            s = mopt::session(m, &o);
            s_raw = s.get();
        }
        // options destroyed with its object; the model only once its session is gone
        CHECK(events_for({m_raw, s_raw, o_raw}) == (std::vector<event>{{'o', o_raw}}));
        mopt::tensor in = mopt::tensor::load(models_dir + "/cnn/test_data_set_0/input_0.npy");
        CHECK(s.run({in}).size() == 1);
    }
    CHECK(events_for({m_raw, s_raw, o_raw}) ==
          (std::vector<event>{{'o', o_raw}, {'s', s_raw}, {'m', m_raw}}));
}

static void test_sessions_before_model_in_any_order() {
    log_().clear();
    const void *m_raw, *s1_raw, *s2_raw;
    {
        mopt::model m = mopt::model::load(models_dir + "/cnn/model.onnx");
        m_raw = m.get();
        auto s1 = std::make_unique<mopt::session>(m);
        mopt::session s2(m);
        s1_raw = s1->get();
        s2_raw = s2.get();
        mopt::model gone = std::move(m); // the model object moves and dies first
        (void)gone;
        s1.reset();
        CHECK(events_for({m_raw, s1_raw, s2_raw}) == (std::vector<event>{{'s', s1_raw}}));
    } // objects die as gone, s2, s1 (empty), m (empty): the last session, then the model
    CHECK(events_for({m_raw, s1_raw, s2_raw}) ==
          (std::vector<event>{{'s', s1_raw}, {'s', s2_raw}, {'m', m_raw}}));
}

static void test_move_assignment_releases_old_handle() {
    log_().clear();
    mopt::tensor a(MOPT_DTYPE_F32, {2});
    mopt::tensor b(MOPT_DTYPE_F32, {3});
    const void *a_raw = a.get(), *b_raw = b.get();
    a = std::move(b); // a's old tensor is destroyed now, b's is moved, not destroyed
    CHECK(events_for({a_raw, b_raw}) == (std::vector<event>{{'t', a_raw}}));
    {
        mopt::tensor moved_from = std::move(a);
        (void)moved_from;
    }
    CHECK(events_for({a_raw, b_raw}) == (std::vector<event>{{'t', a_raw}, {'t', b_raw}}));

    // A session replaced by move assignment is destroyed before its model.
    log_().clear();
    const void *m1_raw, *s1_raw, *m2_raw, *s2_raw;
    mopt::session s;
    {
        mopt::model m1 = mopt::model::load(models_dir + "/cnn/model.onnx");
        m1_raw = m1.get();
        s = mopt::session(m1);
        s1_raw = s.get();
    }
    mopt::model m2 = mopt::model::load(models_dir + "/mobilenet/model.onnx");
    m2_raw = m2.get();
    s = mopt::session(m2);
    s2_raw = s.get();
    CHECK(events_for({m1_raw, s1_raw, m2_raw, s2_raw}) ==
          (std::vector<event>{{'s', s1_raw}, {'m', m1_raw}}));
}

static void test_outputs_are_owned_once() {
    log_().clear();
    mopt::model m = mopt::model::load(models_dir + "/bert/model.onnx");
    mopt::session s(m);
    mopt::tensor ids = mopt::tensor::load(models_dir + "/bert/test_data_set_0/input_0.npy");
    mopt::tensor mask = mopt::tensor::load(models_dir + "/bert/test_data_set_0/input_1.npy");
    const void *o0, *o1;
    {
        std::vector<mopt::tensor> out = s.run({ids, mask});
        CHECK(out.size() == 2);
        o0 = out[0].get();
        o1 = out[1].get();
        CHECK(o0 && o1 && o0 != o1);
        CHECK(events_for({o0, o1}).empty());
    }
    CHECK(events_for({o0, o1}) == (std::vector<event>{{'t', o0}, {'t', o1}}));
    // A failed run hands nothing over, and the caller's inputs are not destroyed.
    log_().clear();
    CHECK_THROWS(s.run({ids}), MOPT_ERR_INVALID_ARGUMENT, (void)err);
    CHECK(events_for({ids.get(), mask.get()}).empty());
}

int main(int argc, char **argv) {
    if (!check::models_dir_arg(argc, argv, models_dir)) return 2;
    RUN(test_model_object_dies_first);
    RUN(test_sessions_before_model_in_any_order);
    RUN(test_move_assignment_releases_old_handle);
    RUN(test_outputs_are_owned_once);
    return check::failures() ? 1 : 0;
}
