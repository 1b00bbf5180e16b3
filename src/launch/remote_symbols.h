/* Addresses of functions in another process's own libraries (dlopen, dlsym, dlerror), from
 * its /proc/PID/maps and the ELF symbol tables of the files it mapped, never culeak's. */
#ifndef CULEAK_REMOTE_SYMBOLS_H
#define CULEAK_REMOTE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* A library mapped in a process: its path as the maps name it, where its offset-0
 * mapping starts, and the span of all its mappings. */
struct culeak_remote_module {
    char path[4096];
    uint64_t start; /* the mapping of file offset 0 */
    uint64_t lo, hi;
};

/* The first module of a maps text (the format of /proc/PID/maps) whose file name is
 * `soname` or, for the glibc before 2.34 style, `stem-<version>.so` (stem "libc" matches
 * libc-2.31.so). 1 found, 0 not. */
int culeak_maps_module(FILE *maps, const char *soname, const char *stem, struct culeak_remote_module *m);

/* The value of the dynamic symbol `name` in the ELF file `file` (the default version
 * where several versions exist) and the p_vaddr of its first PT_LOAD, rounded down to
 * its page. 0, or -1 (no such file or symbol). */
int culeak_elf_symbol(const char *file, const char *name, uint64_t *value, uint64_t *first_load);

/* What culeak calls in the process to load a library. */
struct culeak_remote_dl {
    uint64_t dlopen;  /* dlopen, or __libc_dlopen_mode (private: then dlopen_private) */
    uint64_t dlerror; /* 0 when the process has none to call */
    uint64_t dlsym;   /* dlsym or __libc_dlsym */
    int dlopen_private;
    char libc[4096]; /* the library they were found in */
};

/* Finds them in pid: glibc 2.34 and later have them in libc.so.6; before, libdl.so.2 when
 * the process loaded it, else libc's private __libc_dlopen_mode and __libc_dlsym. The
 * files are read through /proc/PID/root (a process in a container), else by their path.
 * 0, or -1 with a message (a statically linked program, a C library without them). */
int culeak_remote_dl(pid_t pid, struct culeak_remote_dl *dl, char *err, size_t len);

/* The span [lo, hi) of pid's C library and dynamic loader: a thread stopped there may
 * hold their locks. 0 fills both, -1 when not found. */
int culeak_remote_libc_spans(pid_t pid, uint64_t span[2][2]);

#endif
