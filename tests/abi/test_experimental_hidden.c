/*
 * test_experimental_hidden.c — ABI test (suite "abi"): without
 * MOPT_EXPERIMENTAL_API, <mopt/mopt.h> declares none of the experimental
 * calls. This file compiles only if so: it uses their names for objects of
 * its own, which would clash with a function declaration. The program then
 * checks that the stable calls it needs are there.
 */
#include <mopt/mopt.h>

#include <stdio.h>
#include <string.h>

static int mopt_session_profile_count = 1;
static int mopt_session_get_stat = 2;
static int mopt_model_pass_report = 3;
static int mopt_model_pass_count = 4;
static int mopt_model_check = 5;
static int mopt_check_callback = 6;
static int mopt_batcher_run = 7;

int main(void) {
    int sum = mopt_session_profile_count + mopt_session_get_stat + mopt_model_pass_report +
              mopt_model_pass_count + mopt_model_check + mopt_check_callback + mopt_batcher_run;
    if (sum != 28) return 1;
    if (strcmp(mopt_status_string(MOPT_ERR_CANCELLED), "cancelled") != 0) {
        fprintf(stderr, "test_experimental_hidden: wrong status string\n");
        return 1;
    }
    return 0;
}
