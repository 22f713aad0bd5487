/*
 * check.hpp — the few assertion macros the C++ wrapper tests use: a failed
 * CHECK prints the file, line and expression and makes the test exit 1.
 */
#ifndef MOPT_TESTS_CPP_CHECK_HPP
#define MOPT_TESTS_CPP_CHECK_HPP

#include <cstdio>
#include <cstdlib>
#include <string>

#include <mopt/mopt.hpp>

namespace check {
inline int &failures() {
    static int n = 0;
    return n;
}

/* The one argument of a test program, the tests/models folder, into dir:
 * false (after the usage line on stderr) when it is not given. */
inline bool models_dir_arg(int argc, char **argv, std::string &dir) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s TESTS_MODELS_DIR\n", argv[0]);
        return false;
    }
    dir = argv[1];
    return true;
}
} // namespace check

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);          \
            check::failures()++;                                                                   \
        }                                                                                          \
    } while (0)

/* Runs stmt, which must throw mopt::error with this status; binds the caught
 * error to `err` for the checks in `then`. */
#define CHECK_THROWS(stmt, expected_status, then)                                                  \
    do {                                                                                           \
        bool thrown_ = false;                                                                      \
        try {                                                                                      \
            stmt;                                                                                  \
        } catch (const mopt::error &err) {                                                         \
            thrown_ = true;                                                                        \
            if (err.status() != (expected_status)) {                                               \
                std::fprintf(stderr, "%s:%d: %s threw status %d (%s), expected %s\n", __FILE__,    \
                             __LINE__, #stmt, static_cast<int>(err.status()), err.what(),          \
                             #expected_status);                                                    \
                check::failures()++;                                                               \
            }                                                                                      \
            then;                                                                                  \
        }                                                                                          \
        if (!thrown_) {                                                                            \
            std::fprintf(stderr, "%s:%d: %s did not throw\n", __FILE__, __LINE__, #stmt);          \
            check::failures()++;                                                                   \
        }                                                                                          \
    } while (0)

/* Runs one test function, reporting an unexpected exception as a failure. */
#define RUN(test)                                                                                  \
    do {                                                                                           \
        int before_ = check::failures();                                                           \
        try {                                                                                      \
            test();                                                                                \
        } catch (const std::exception &e) {                                                        \
            std::fprintf(stderr, "%s: unexpected exception: %s\n", #test, e.what());               \
            check::failures()++;                                                                   \
        }                                                                                          \
        std::printf("%s %s\n", check::failures() == before_ ? "ok  " : "FAIL", #test);             \
    } while (0)

#endif
