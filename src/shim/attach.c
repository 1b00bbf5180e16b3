/* The one entry of a shim loaded into a running process: `culeak attach` has a debugger
 * dlopen libculeak.so into the process and call culeak_attach_start(endpoint) once. The
 * call returns at once (the debugger holds the process while it runs); a thread of the
 * shim then does the work, once the debugger has detached (untraced.c):
 *   1. routes the entry points the modules already resolved through the shim (patch.c);
 *   2. starts the stream to the endpoint as a launched process does at its first traced
 *      call (HELLO, marked attached; MODULES);
 *   3. says in a NOTE what it routed and what it cannot see;
 *   4. sends what was live before the attach (inventory.c);
 *   5. in a Python process, has culeak's Python side run on the main thread
 *      (attach_python.c).
 * From then on every call through a rewritten slot is traced like a launched job's. */
#include "shim.h"
#include "common/wire.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static void note(const char *text)
{
    culeak_stream_note(text, strnlen(text, 512));
}

static void *attach_main(void *arg)
{
    (void)arg;
    culeak_wait_untraced();
    struct culeak_patch_count pc;
    culeak_patch_loaded(&pc);
    if (!culeak_ensure_started())
        return NULL;
    char text[512];
    snprintf(text, sizeof text,
             "attached: %u resolved entry point%s (GOT/PLT) and %u table pointer%s in %u module%s now go "
             "through culeak%s; pointers the program keeps on its heap or stack cannot be seen",
             pc.slots, pc.slots == 1 ? "" : "s", pc.tables, pc.tables == 1 ? "" : "s", pc.modules,
             pc.modules == 1 ? "" : "s", pc.failed ? " (some slots could not be made writable)" : "");
    note(text);
    if (pc.slots + pc.tables == 0)
        note("attached: no CUDA entry point was found in the program's modules; nothing will be traced "
             "(a statically linked program, or one that keeps its entry points on the heap)");
    struct culeak_inventory_count ic;
    culeak_inventory_send(&ic);
    snprintf(text, sizeof text,
             "before attach: %lu allocation%s, %llu bytes, live when culeak attached (found by the pointers the "
             "process holds; no stacks)%s",
             ic.found, ic.found == 1 ? "" : "s", (unsigned long long)ic.bytes,
             ic.incomplete ? "; the search ran out of time, some may be missing" : "");
    note(text);
    culeak_attach_python();
    culeak_stream_flush();
    return NULL;
}

/* 0: attaching (the stream connects to endpoint); 1: this process is traced already; -1:
 * it cannot be (out of memory, no thread). */
CULEAK_EXPORT int culeak_attach_start(const char *endpoint)
{
    if (!endpoint || !*endpoint)
        return -1;
    int r = culeak_attach_configure(endpoint);
    if (r != 0)
        return r;
    pthread_t t;
    pthread_attr_t attr;
    sigset_t all, old;
    sigfillset(&all); /* the program's signal handlers never run on the shim's thread */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    r = pthread_create(&t, &attr, attach_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0) {
        culeak_stop(NULL);
        return -1;
    }
    return 0;
}
