/* Output paths: %p, %h and %r in a file name, the way valgrind's --log-file and
 * compute-sanitizer's --log-file expand them. Shared by the shim (recordings) and the
 * commands that write reports. No allocation: safe in the shim. */
#ifndef CULEAK_OUTPATH_H
#define CULEAK_OUTPATH_H

#include <stddef.h>

/* The variables launchers give a process's rank in the job, the one to read first first
 * (torchrun, DeepSpeed and Accelerate: RANK; mpirun: OMPI_COMM_WORLD_RANK, PMI_RANK,
 * PMIX_RANK, MV2_COMM_WORLD_RANK; srun: SLURM_PROCID); NULL-terminated. */
extern const char *const culeak_rank_vars[];
/* The rank of this process from the launcher's environment: the first of
 * culeak_rank_vars that is set, else LOCAL_RANK, else "0". */
const char *culeak_env_rank(void);

/* Expands tmpl into out[cap]: %p the pid, %h the host, %r the rank, %% a percent sign;
 * any other character, and % before any other one, stays as it is. host NULL: this
 * machine's name. Returns 1 when tmpl names the pid, 0 when not, -1 when out is too
 * small (out then holds what fitted). */
int culeak_expand_path(const char *tmpl, long pid, const char *host, const char *rank, char *out, size_t cap);

/* A rolled recording's part name (record --roll): %t in tmpl becomes t in UTC as
 * 20261206T080000Z, %n the part's number as 0001 (at least four digits, so that a shell's
 * sorted glob lists the parts in order); everything else stays as it is. Returns 1 when
 * tmpl names the part (%t or %n), 0 when not, -1 when out is too small. */
int culeak_expand_part(const char *tmpl, unsigned part, long long t, char *out, size_t cap);

/* Can a file be created at path: its directory exists, is one, and this process may
 * create files in it? 0, or -1 with errno (ENOENT, ENOTDIR, EACCES, EROFS). */
int culeak_output_dir_writable(const char *path);

/* Makes the directories of path's directory that are missing (`-o 'run/%h/%r.culeak'` on
 * a new run), mode 0700 as the recordings in them are private. Each is entered without
 * following a symbolic link that someone else could have planted in its parent (one of
 * this user's, or in a directory only its owner, this user or root, may write), existing
 * directories too. 0, or -1 with errno (ELOOP for a link refused). */
int culeak_make_parent_dirs(const char *path);
/* Whether path's directories are reached without following a symbolic link that someone
 * else could have planted (as culeak_make_parent_dirs enters them; nothing made): 0, or
 * -1 with ELOOP. */
int culeak_parent_dirs_trusted(const char *path);

/* A recording holds the program's arguments and environment: created 0600, never
 * through a symbolic link (one planted at the path would have its target overwritten),
 * fresh; with replace, an existing regular file of this user, of one name, is truncated
 * instead (anything else there, a FIFO too, is refused: EPERM). The descriptor
 * (close-on-exec), or -1 with errno. */
int culeak_create_private(const char *path, int replace);
/* The recording of process pid at path (its missing directories made); shared: path is the
 * job's one name, which the first process takes while each other one writes path.PID. The
 * name used goes to made[cap]. The descriptor, or -1 with errno. */
int culeak_create_recording(const char *path, int shared, long pid, char *made, size_t cap);

#endif
