/* The frameworks' table (common/frameworks.h): each row whole, ids outside it refused,
 * and --no-pool's environment made from its rows (launch.h culeak_no_pool_env). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/apis.h"
#include "common/frameworks.h"
#include "launch/launch.h"
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

static void test_rows_whole(void **state)
{
    (void)state;
    assert_null(culeak_framework(CULEAK_FRAMEWORK_NONE));
    assert_null(culeak_framework(CULEAK_FRAMEWORK_COUNT));
    assert_null(culeak_framework(1000));
    for (unsigned c = 1; c < CULEAK_FRAMEWORK_COUNT; c++) {
        const struct culeak_framework *f = culeak_framework(c);
        assert_non_null(f);
        assert_true(f->name && *f->name && f->pool && *f->pool);
        assert_non_null(f->module_globs);
        assert_non_null(f->functions[0]); /* every allocator is known by a function */
        assert_true(!f->block_api == !f->block_free_api); /* blocks come and go through one row */
        for (const char *const *e = f->no_pool_env; *e; e++)
            assert_non_null(strchr(*e, '='));
    }
    assert_string_equal(model_cache_name(MODEL_CACHE_PYTORCH), "pytorch");
    assert_string_equal(model_cache_name(MODEL_CACHE_CUPY), "cupy");
    assert_string_equal(model_cache_name(MODEL_CACHE_XLA), "xla");
    assert_string_equal(model_cache_name(MODEL_CACHE_NONE), "");
    assert_string_equal(model_pool_name(MODEL_CACHE_PYTORCH), "pytorch caching allocator");
    assert_string_equal(model_pool_name(MODEL_CACHE_NONE), "caching allocator");
    /* the blocks' APIs of the stream (culeak-stream(5)) name their framework */
    assert_int_equal(culeak_framework(CULEAK_FRAMEWORK_PYTORCH)->block_api, CULEAK_API_TORCH_BLOCK_ALLOC);
    assert_int_equal(culeak_framework(CULEAK_FRAMEWORK_CUPY)->block_api, CULEAK_API_CUPY_BLOCK_ALLOC);
    assert_int_equal(culeak_framework(CULEAK_FRAMEWORK_PYTORCH)->block_free_api, CULEAK_API_TORCH_BLOCK_FREE);
    assert_int_equal(culeak_framework(CULEAK_FRAMEWORK_CUPY)->block_free_api, CULEAK_API_CUPY_BLOCK_FREE);
    assert_int_equal(culeak_framework(CULEAK_FRAMEWORK_XLA)->block_free_api, 0);
}

static void test_no_pool_environment(void **state)
{
    (void)state;
    const char *names[] = {"PYTORCH_NO_CUDA_MEMORY_CACHING", "XLA_PYTHON_CLIENT_PREALLOCATE",
                           "XLA_PYTHON_CLIENT_ALLOCATOR", "CULEAK_NO_POOL"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        unsetenv(names[i]);
    setenv("XLA_PYTHON_CLIENT_ALLOCATOR", "bfc", 1);
    culeak_no_pool_env();
    assert_string_equal(getenv("PYTORCH_NO_CUDA_MEMORY_CACHING"), "1");
    assert_string_equal(getenv("XLA_PYTHON_CLIENT_PREALLOCATE"), "false");
    assert_string_equal(getenv("XLA_PYTHON_CLIENT_ALLOCATOR"), "platform");
    assert_string_equal(getenv("CULEAK_NO_POOL"), "1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_whole),
        cmocka_unit_test(test_no_pool_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
