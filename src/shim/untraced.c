/* Waiting for the injector that called culeak_attach_start to let the process go. */
#include "shim.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* TracerPid of one thread's status; 0 when it cannot be read (a thread that ended). */
static long tracer_of(const char *task)
{
    char path[96], buf[2048];
    snprintf(path, sizeof path, "/proc/self/task/%s/status", task);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *t = strstr(buf, "TracerPid:");
    return t ? strtol(t + 10, NULL, 10) : 0;
}

/* Whether any thread of the process is traced: culeak's own injector holds only the thread
 * it borrowed, which need not be the main one; a debugger holds them all. */
static int any_traced(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    int traced = 0;
    struct dirent *e;
    while (!traced && (e = readdir(d)))
        traced = e->d_name[0] != '.' && tracer_of(e->d_name) != 0;
    closedir(d);
    return traced;
}

/* The injector that called culeak_attach_start still holds the process: whatever the
 * attach's thread did meanwhile (a debugger's probes on the loader are breakpoints) could
 * leave a trap pending that kills the process if the injector died before detaching. So it
 * waits for the detach first (TracerPid 0 in every thread), checking every 10 ms, for a
 * minute at most. */
void culeak_wait_untraced(void)
{
    for (int i = 0; i < 6000 && any_traced(); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}
