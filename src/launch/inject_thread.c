/* Choosing the thread the injector borrows: one blocked in a system call (it holds no
 * lock of the C library's, and the call it makes is restarted as if nothing happened)
 * with stack to spare, the main thread first. Only that thread is ever stopped: the
 * others run on, so any lock dlopen needs is released meanwhile. */
#include "inject_thread.h"
#include "inject_arch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int culeak_parse_syscall(const char *text, struct culeak_thread_info *t)
{
    memset(t->args, 0, sizeof t->args);
    t->in_syscall = 0;
    t->nr = -1;
    t->sp = 0;
    if (strncmp(text, "running", 7) == 0)
        return 0;
    char *end;
    long nr = strtol(text, &end, 10);
    if (end == text)
        return -1;
    const char *p = end;
    uint64_t v[8];
    int k = 0;
    while (k < 8) {
        v[k] = strtoull(p, &end, 16);
        if (end == p)
            break;
        p = end;
        k++;
    }
    if (nr < 0 && k >= 1) { /* blocked, but not in a system call */
        t->sp = v[0];
        return 0;
    }
    if (nr < 0 || k != 8)
        return -1;
    t->in_syscall = 1;
    t->nr = nr;
    memcpy(t->args, v, sizeof t->args);
    t->sp = v[6];
    return 0;
}

int culeak_stack_room(FILE *maps, uint64_t sp)
{
    char line[4352];
    while (fgets(line, sizeof line, maps)) {
        unsigned long long lo, hi;
        int name_at = 0;
        if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &name_at) != 2)
            continue;
        if (sp < lo || sp >= hi)
            continue;
        if (name_at && strncmp(line + name_at, "[stack]", 7) == 0)
            return 1;
        return sp - lo >= CULEAK_STACK_ROOM;
    }
    return 0;
}

static int usable(const struct culeak_thread_info *t)
{
    return t->in_syscall && t->stack_ok && !culeak_arch_swaps_sigmask(t->nr, t->args);
}

int culeak_choose_thread(pid_t pid, const struct culeak_thread_info *threads, int n)
{
    int main_at = -1, first = -1;
    for (int i = 0; i < n; i++) {
        if (threads[i].tid == pid)
            main_at = i;
        if (usable(&threads[i]) && first < 0)
            first = i;
    }
    if (main_at >= 0 && usable(&threads[main_at]))
        return main_at;
    return first >= 0 ? first : main_at;
}

static int read_text(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    int e = errno;
    close(fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    buf[n] = 0;
    return 0;
}

int culeak_read_threads(pid_t pid, struct culeak_thread_info *threads, int max)
{
    char path[128], text[512];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0, refused = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
        if (read_text(path, text, sizeof text) != 0) {
            refused |= errno == EACCES || errno == EPERM;
            continue; /* a thread that ended meanwhile */
        }
        struct culeak_thread_info *t = &threads[n];
        if (culeak_parse_syscall(text, t) != 0)
            continue;
        t->tid = tid;
        snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
        FILE *maps = fopen(path, "re");
        t->stack_ok = maps && t->sp && culeak_stack_room(maps, t->sp);
        if (maps)
            fclose(maps);
        n++;
    }
    closedir(d);
    if (n == 0 && refused) {
        errno = EACCES;
        return -1;
    }
    return n;
}
