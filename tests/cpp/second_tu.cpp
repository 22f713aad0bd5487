/*
 * second_tu.cpp — a second translation unit including mopt.hpp, linked into
 * test_mopt_hpp: the header must define nothing that collides at link time.
 */
#include <mopt/mopt.hpp>

int second_tu_version_number();
int second_tu_version_number() { return mopt::version_number(); }
