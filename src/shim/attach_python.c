/* An attached Python process gets what a launched one gets from sitecustomize.py: once
 * the shim's stream is up, the attach thread asks the interpreter (Py_AddPendingCall,
 * which any thread may call without the GIL) to run python/culeak_attach.py on its main
 * thread, between two bytecodes, with the GIL held. Nothing of Python runs from the
 * debugger's call, which may have stopped the main thread while it holds the GIL. That
 * file attaches the caching allocator's trace tracker at once, sends the tensors and
 * segments the allocator holds (its memory_snapshot) as before-attach blocks and
 * segments, and wraps backward(); it catches every exception and says it in a NOTE. A
 * process without Python (no Py_AddPendingCall) is left alone. */
#include "shim.h"
#include "common/apis.h"
#include "common/wire.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char code[3 * PATH_MAX + 256]; /* the file's path twice, the shim's once */

CULEAK_EXPORT void culeak_attach_note(const char *text)
{
    if (!text)
        return;
    culeak_stream_note(text, strnlen(text, 512));
}

/* Who holds the live block at addr (python/culeak_holders.py's words), for the reports. */
CULEAK_EXPORT void culeak_report_holder(uint64_t addr, const char *words)
{
    if (!words)
        return;
    uint8_t rec[CULEAK_REC_HEADROOM + 2 * CULEAK_UVARINT_MAX + 1024];
    size_t k = culeak_put_u(rec + CULEAK_REC_HEADROOM, addr);
    k += culeak_put_s(rec + CULEAK_REC_HEADROOM + k, words, strnlen(words, 1024));
    culeak_stream_append(rec, culeak_rec_finish(rec, CULEAK_REC_HOLDER, k));
}

/* What PyTorch's caching allocator held when culeak attached: a block (is_block) or a
 * segment, sent as a before-attach allocation (size, device; no stack); a segment says
 * its pool (culeak-stream(5)). */
CULEAK_EXPORT void culeak_report_before_attach(int is_block, uint64_t addr, uint64_t size, int device)
{
    if (!addr)
        return;
    struct culeak_ev e = {CULEAK_OP_ALLOC, CULEAK_API_BEFORE_ATTACH,
                          is_block ? CULEAK_KIND_BLOCK : CULEAK_KIND_DEVICE, device, 0, size, addr,
                          is_block ? 0 : CULEAK_POOL_TORCH, 0};
    culeak_stream_event(&e, NULL, 0, 0);
}

static int run_attach_file(void *arg)
{
    (void)arg;
    int (*run)(const char *, void *) = (int (*)(const char *, void *))dlsym(RTLD_DEFAULT, "PyRun_SimpleStringFlags");
    if (run)
        run(code, NULL); /* the file reports its own errors; this line makes none of its own */
    return 0; /* never an exception for the job's code to see */
}

int culeak_python_file(const char *shim, const char *name, char *out, size_t len)
{
    static const char *const rel[] = {"../python", "../../share/culeak/python", "../share/culeak/python"};
    const char *slash = strrchr(shim, '/');
    if (!slash)
        return -1;
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char p[PATH_MAX];
        int n = snprintf(p, sizeof p, "%.*s/%s/%s", (int)(slash - shim), shim, rel[i], name);
        if (n > 0 && (size_t)n < sizeof p && realpath(p, out) && strlen(out) < len)
            return 0;
    }
    return -1;
}

int culeak_attach_python(void)
{
    int (*add)(int (*)(void *), void *) = (int (*)(int (*)(void *), void *))dlsym(RTLD_DEFAULT, "Py_AddPendingCall");
    int (*initialized)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    if (!add || !initialized || !initialized())
        return 0; /* no Python here */
    Dl_info self;
    char file[PATH_MAX];
    if (!dladdr((void *)culeak_attach_python, &self) || !self.dli_fname || culeak_python_file(self.dli_fname, "culeak_attach.py", file, sizeof file) != 0 ||
        strpbrk(file, "'\\\n") || strpbrk(self.dli_fname, "'\\\n")) {
        culeak_attach_note("attached: culeak_attach.py was not found beside the shim: no tensor tracking until "
                           "the allocator's next segment, no backward() attribution");
        return -1;
    }
    /* One expression: no name is left in __main__. */
    int n = snprintf(code, sizeof code,
             "exec(compile(__import__('pathlib').Path('%s').read_bytes(), '%s', 'exec'), "
             "{'__name__': '_culeak_attach', '__builtins__': __import__('builtins'), 'SHIM': '%s'})\n",
             file, file, self.dli_fname);
    if (n < 0 || (size_t)n >= sizeof code)
        return -1; /* a path longer than PATH_MAX: never a cut line of Python */
    if (add(run_attach_file, NULL) != 0) {
        culeak_attach_note("attached: Python's queue of pending calls is full: no tensor tracking until the "
                           "allocator's next segment, no backward() attribution");
        return -1;
    }
    return 0;
}
