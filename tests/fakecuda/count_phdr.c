/* A test double preloaded after the shim: counts the shim's dl_iterate_phdr calls (each
 * takes the loader lock), callback by callback, and at exit writes to stderr the most
 * any one callback was called: "count_phdr: shim max N". Calls from elsewhere (the
 * unwinder's library, the sanitizers) are passed on uncounted. */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef int (*phdr_cb)(struct dl_phdr_info *, size_t, void *);

#define CALLBACKS 64
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static phdr_cb seen[CALLBACKS];
static unsigned long counts[CALLBACKS];

static void count(phdr_cb cb)
{
    Dl_info in;
    if (!dladdr((void *)cb, &in) || !in.dli_fname || !strstr(in.dli_fname, "libculeak.so"))
        return;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < CALLBACKS; i++)
        if (seen[i] == cb || !seen[i]) {
            seen[i] = cb;
            counts[i]++;
            break;
        }
    pthread_mutex_unlock(&mu);
}

int dl_iterate_phdr(phdr_cb cb, void *data)
{
    static int (*real)(phdr_cb, void *);
    if (!real)
        real = (int (*)(phdr_cb, void *))dlsym(RTLD_NEXT, "dl_iterate_phdr");
    count(cb);
    return real(cb, data);
}

__attribute__((destructor)) static void report(void)
{
    unsigned long most = 0;
    for (int i = 0; i < CALLBACKS; i++)
        if (counts[i] > most)
            most = counts[i];
    char line[64];
    int n = snprintf(line, sizeof line, "count_phdr: shim max %lu\n", most);
    (void)!write(2, line, (size_t)n);
}
