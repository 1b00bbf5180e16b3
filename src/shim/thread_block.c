/* Per-thread blocks of the shim (shim.h): the stack walker's state, the trace tree's
 * last stack, the Python frames of the last walk. Each is made zeroed at a thread's
 * first need and freed when the thread ends, by one key destructor for all of them.
 *
 * Later key destructors may still allocate through the shim (libraries free per-thread
 * handles so): a block's pointer is cleared before it is freed, and a block made again
 * then sets the key again, so that it is freed in the destructors' next round. */
#include "shim.h"

#include <stdlib.h>

CULEAK_TLS void *culeak_thread_blocks[CULEAK_THREAD_BLOCKS];

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void blocks_gone(void *unused)
{
    (void)unused;
    for (int i = 0; i < CULEAK_THREAD_BLOCKS; i++) {
        void *p = culeak_thread_blocks[i];
        culeak_thread_blocks[i] = NULL;
        free(p);
    }
}

static void key_init(void) { pthread_key_create(&key, blocks_gone); }

void *culeak_thread_block_new(enum culeak_thread_block which, size_t size)
{
    pthread_once(&key_once, key_init);
    void *p = calloc(1, size);
    if (!p)
        return NULL;
    culeak_thread_blocks[which] = p;
    pthread_setspecific(key, culeak_thread_blocks); /* any value but NULL: the destructor runs */
    return p;
}
