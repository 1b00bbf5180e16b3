/* Output paths: %p, %h and %r in a file name, the way valgrind's --log-file and
 * compute-sanitizer's --log-file expand them. Shared by the shim (recordings) and the
 * commands that write reports. No allocation: safe in the shim. */
#ifndef CULEAK_OUTPATH_H
#define CULEAK_OUTPATH_H

#include <stddef.h>

/* The rank of this process from the launcher's environment: the first of RANK,
 * OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, LOCAL_RANK that is set, else "0". */
const char *culeak_env_rank(void);

/* Expands tmpl into out[cap]: %p the pid, %h the host, %r the rank, %% a percent sign;
 * any other character, and % before any other one, stays as it is. host NULL: this
 * machine's name. Returns 1 when tmpl names the pid, 0 when not, -1 when out is too
 * small (out then holds what fitted). */
int culeak_expand_path(const char *tmpl, long pid, const char *host, const char *rank, char *out, size_t cap);

/* Can a file be created at path: its directory exists, is one, and this process may
 * create files in it? 0, or -1 with errno (ENOENT, ENOTDIR, EACCES, EROFS). */
int culeak_output_dir_writable(const char *path);

/* A recording holds the program's arguments and environment: created 0600, never
 * through a symbolic link (one planted at the path would have its target overwritten),
 * fresh; with replace, an existing regular file of this user is truncated instead. The
 * descriptor (close-on-exec), or -1 with errno. */
int culeak_create_private(const char *path, int replace);
/* The recording of process pid at path; shared: path is the job's one name, which the
 * first process takes while each other one writes path.PID. The name used goes to
 * made[cap]. The descriptor, or -1 with errno. */
int culeak_create_recording(const char *path, int shared, long pid, char *made, size_t cap);

#endif
