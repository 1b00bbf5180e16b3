/* Waiting for the debugger that called culeak_attach_start to let the process go. */
#include "shim.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The debugger that called culeak_attach_start still holds the process: whatever the
 * attach's thread did meanwhile (the loader's probes are breakpoints) could leave a trap
 * pending that kills the process if the debugger died before detaching. So it waits for
 * the detach first (TracerPid 0), checking every 10 ms, for a minute at most. */
void culeak_wait_untraced(void)
{
    for (int i = 0; i < 6000; i++) {
        char buf[2048];
        int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (n <= 0)
            return;
        buf[n] = 0;
        const char *t = strstr(buf, "TracerPid:");
        if (!t || strtol(t + 10, NULL, 10) == 0)
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}
