/*
 * test_symbols.c — ABI test (suite "abi"): takes the address of every
 * function declared in <mopt/mopt.h> and checks that each resolves to a
 * non-NULL address in the linked libmopt, and that the library's version
 * number matches the header's. check_exports.py verifies that this list is
 * complete (one SYM() per MOPT_API declaration) and that libmopt.so exports
 * exactly these functions.
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <mopt/mopt.h>

#include <stdio.h>
#include <string.h>

typedef void (*any_fn)(void);

typedef struct symbol {
    const char *name;
    any_fn fn;
} symbol;

#define SYM(f)                                                                                     \
    { #f, (any_fn)f }

/* volatile: the compiler must not assume the addresses are non-NULL. */
static const volatile symbol k_symbols[] = {
    SYM(mopt_set_log_callback),
    SYM(mopt_set_allocator),
    SYM(mopt_options_set_dim),
    SYM(mopt_model_load_v2),
    SYM(mopt_model_info),
    SYM(mopt_model_version),
    SYM(mopt_model_metadata_count),
    SYM(mopt_model_metadata_key),
    SYM(mopt_model_metadata_value),
    SYM(mopt_model_metadata),
    SYM(mopt_tensor_wrap_const),
    SYM(mopt_run_options_create),
    SYM(mopt_run_options_destroy),
    SYM(mopt_run_options_set_tag),
    SYM(mopt_run_options_tag),
    SYM(mopt_run_options_set_profiling),
    SYM(mopt_run_options_set_terminate),
    SYM(mopt_session_run_v2),
    SYM(mopt_model_pass_count),
    SYM(mopt_model_pass_name),
    SYM(mopt_model_pass_ms),
    SYM(mopt_model_pass_nodes_before),
    SYM(mopt_model_pass_nodes_after),
    SYM(mopt_model_pass_rewrites),
    SYM(mopt_model_pass_note),
    SYM(mopt_version_number),
    SYM(mopt_version),
    SYM(mopt_status_string),
    SYM(mopt_last_error),
    SYM(mopt_dtype_name),
    SYM(mopt_dtype_size),
    SYM(mopt_options_create),
    SYM(mopt_options_destroy),
    SYM(mopt_options_set_int),
    SYM(mopt_options_set_double),
    SYM(mopt_options_set_string),
    SYM(mopt_options_get_int),
    SYM(mopt_options_get_double),
    SYM(mopt_options_get_string),
    SYM(mopt_options_load_yaml),
    SYM(mopt_options_load_yaml_string),
    SYM(mopt_model_load),
    SYM(mopt_model_load_from_memory),
    SYM(mopt_model_destroy),
    SYM(mopt_model_save),
    SYM(mopt_model_check),
    SYM(mopt_model_pass_report),
    SYM(mopt_model_io_count),
    SYM(mopt_model_io_name),
    SYM(mopt_model_io_dtype),
    SYM(mopt_model_io_rank),
    SYM(mopt_model_io_dim),
    SYM(mopt_model_io_dim_name),
    SYM(mopt_model_io_find),
    SYM(mopt_model_node_count),
    SYM(mopt_model_node_op_type),
    SYM(mopt_model_node_name),
    SYM(mopt_model_opset),
    SYM(mopt_model_parameter_count),
    SYM(mopt_model_parameter_bytes),
    SYM(mopt_supported_op_count),
    SYM(mopt_supported_op_name),
    SYM(mopt_tensor_create),
    SYM(mopt_tensor_wrap),
    SYM(mopt_tensor_destroy),
    SYM(mopt_tensor_dtype),
    SYM(mopt_tensor_rank),
    SYM(mopt_tensor_dim),
    SYM(mopt_tensor_dims),
    SYM(mopt_tensor_element_count),
    SYM(mopt_tensor_size_bytes),
    SYM(mopt_tensor_data),
    SYM(mopt_tensor_data_const),
    SYM(mopt_tensor_load),
    SYM(mopt_tensor_save_npy),
    SYM(mopt_session_create),
    SYM(mopt_session_destroy),
    SYM(mopt_session_run),
    SYM(mopt_session_get_stat),
    SYM(mopt_session_profile_count),
    SYM(mopt_session_profile_node),
    SYM(mopt_session_profile_op),
    SYM(mopt_session_profile_kernel),
    SYM(mopt_session_profile_ns),
    SYM(mopt_session_profile_flops),
    /* dynamic batching */
    SYM(mopt_batcher_create),
    SYM(mopt_batcher_destroy),
    SYM(mopt_batcher_run),
    SYM(mopt_batcher_get_stats),
    /* shared thread pool */
    SYM(mopt_threadpool_create),
    SYM(mopt_threadpool_destroy),
    SYM(mopt_options_set_threadpool),
    SYM(mopt_threadpool_get_stats),
    /* node values (quantize-check) */
    SYM(mopt_model_node_value),
    /* generation (mopt_generator) */
    SYM(mopt_generator_create),
    SYM(mopt_generator_destroy),
    SYM(mopt_generator_set_int),
    SYM(mopt_generator_set_double),
    SYM(mopt_generator_set_stop_tokens),
    SYM(mopt_generator_set_cancel),
    SYM(mopt_generator_generate),
    SYM(mopt_generator_logits),
    SYM(mopt_generator_reset),
    SYM(mopt_generator_get_stat),
};

int main(void) {
    int failures = 0;
    size_t n = sizeof k_symbols / sizeof k_symbols[0];
    for (size_t i = 0; i < n; i++) {
        if (k_symbols[i].fn == NULL) {
            fprintf(stderr, "test_symbols: %s resolves to NULL\n", k_symbols[i].name);
            failures++;
        }
        for (size_t j = 0; j < i; j++)
            if (k_symbols[i].fn == k_symbols[j].fn) {
                fprintf(stderr, "test_symbols: %s and %s have the same address\n",
                        k_symbols[i].name, k_symbols[j].name);
                failures++;
            }
    }
    if (mopt_version_number() != MOPT_VERSION_NUMBER) {
        fprintf(stderr, "test_symbols: library version %d != header version %d\n",
                mopt_version_number(), MOPT_VERSION_NUMBER);
        failures++;
    }
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", MOPT_VERSION_MAJOR, MOPT_VERSION_MINOR,
             MOPT_VERSION_PATCH);
    if (strcmp(mopt_version(), want) != 0) {
        fprintf(stderr, "test_symbols: mopt_version() is '%s', header says '%s'\n", mopt_version(),
                want);
        failures++;
    }
    if (failures) return 1;
    printf("test_symbols: %zu functions resolved, version %s\n", n, mopt_version());
    return 0;
}
