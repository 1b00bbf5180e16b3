/* Output paths under a cluster's launcher (src/common/outpath.c): %r reads the launcher's
 * own rank variable before Slurm's, and a recording's missing directories are made
 * without following a link someone else planted on the way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/outpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const all_vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                       "MV2_COMM_WORLD_RANK", "SLURM_PROCID", "LOCAL_RANK"};

static void clear_ranks(void)
{
    for (size_t i = 0; i < sizeof all_vars / sizeof *all_vars; i++)
        unsetenv(all_vars[i]);
}

static const char *rank_of(char *out, size_t cap)
{
    assert_int_equal(culeak_expand_path("%r", 1, "h", NULL, out, cap), 0);
    return out;
}

static void test_rank_order(void **state)
{
    (void)state;
    char out[32];
    clear_ranks();
    assert_string_equal(rank_of(out, sizeof out), "0");
    setenv("SLURM_PROCID", "1", 1); /* srun's task */
    assert_string_equal(rank_of(out, sizeof out), "1");
    /* mpirun inside an allocation: every rank of a node inherits its srun task's number */
    setenv("OMPI_COMM_WORLD_RANK", "6", 1);
    assert_string_equal(rank_of(out, sizeof out), "6");
    unsetenv("OMPI_COMM_WORLD_RANK");
    setenv("PMIX_RANK", "7", 1); /* srun --mpi=pmix, OpenMPI 5's prterun */
    assert_string_equal(rank_of(out, sizeof out), "7");
    setenv("PMI_RANK", "8", 1); /* MPICH and Intel MPI's hydra */
    assert_string_equal(rank_of(out, sizeof out), "8");
    setenv("RANK", "3", 1); /* torchrun, DeepSpeed, Accelerate: the job's rank wins */
    setenv("LOCAL_RANK", "0", 1);
    assert_string_equal(rank_of(out, sizeof out), "3");
    clear_ranks();
    setenv("MV2_COMM_WORLD_RANK", "9", 1);
    assert_string_equal(rank_of(out, sizeof out), "9");
    clear_ranks();
}

struct tmp {
    char dir[64];
};

static void tmp_make(struct tmp *t)
{
    snprintf(t->dir, sizeof t->dir, "/tmp/culeak-outpath-XXXXXX");
    assert_non_null(mkdtemp(t->dir));
}

static void tmp_remove(struct tmp *t)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->dir);
    assert_int_equal(system(cmd), 0);
}

static int is_dir(const char *path, mode_t *mode)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    if (mode)
        *mode = st.st_mode & 07777;
    return 1;
}

static void test_make_dirs(void **state)
{
    (void)state;
    struct tmp t;
    tmp_make(&t);
    char path[256], dir[256];
    mode_t mode = 0;
    snprintf(path, sizeof path, "%s/run/node1//./3.culeak", t.dir);
    assert_int_equal(culeak_make_parent_dirs(path), 0);
    snprintf(dir, sizeof dir, "%s/run/node1", t.dir);
    assert_true(is_dir(dir, &mode));
    assert_int_equal(mode, 0700); /* the recordings in it are private */
    assert_int_equal(culeak_make_parent_dirs(path), 0); /* there already: nothing to do */
    assert_int_equal(culeak_make_parent_dirs("plain-name"), 0);

    /* the recording itself, its directories made first */
    char made[300];
    snprintf(path, sizeof path, "%s/job/node2/5.culeak", t.dir);
    int fd = culeak_create_recording(path, 1, 42, made, sizeof made);
    assert_true(fd >= 0);
    close(fd);
    assert_string_equal(made, path);

    /* a file where a directory should be: said so */
    snprintf(path, sizeof path, "%s/file", t.dir);
    fd = open(path, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    close(fd);
    snprintf(path, sizeof path, "%s/file/x/r.culeak", t.dir);
    errno = 0;
    assert_int_equal(culeak_create_recording(path, 0, 42, made, sizeof made), -1);
    assert_int_equal(errno, ENOTDIR);
    tmp_remove(&t);
}

static void test_planted_link(void **state)
{
    (void)state;
    struct tmp t;
    tmp_make(&t);
    char pub[128], target[128], link[160], path[256], want[256];
    snprintf(target, sizeof target, "%s/target", t.dir);
    assert_int_equal(mkdir(target, 0700), 0);

    /* a link of this user's own is followed: `run` pointing at a scratch file system */
    snprintf(link, sizeof link, "%s/mine", t.dir);
    assert_int_equal(symlink(target, link), 0);
    snprintf(path, sizeof path, "%s/mine/a/r.culeak", t.dir);
    assert_int_equal(culeak_make_parent_dirs(path), 0);
    snprintf(want, sizeof want, "%s/a", target);
    assert_true(is_dir(want, NULL));

    /* one of another user's in a directory everyone may write (as /tmp) is not */
    snprintf(pub, sizeof pub, "%s/pub", t.dir);
    assert_int_equal(mkdir(pub, 0700), 0);
    assert_int_equal(chmod(pub, 01777), 0);
    snprintf(link, sizeof link, "%s/pub/run", t.dir);
    assert_int_equal(symlink(target, link), 0);
    if (lchown(link, 65534, 65534) != 0) {
        printf("SKIP: another user's link needs root to be made here (%s)\n", strerror(errno));
        tmp_remove(&t);
        return;
    }
    snprintf(path, sizeof path, "%s/pub/run/b/r.culeak", t.dir);
    errno = 0;
    assert_int_equal(culeak_make_parent_dirs(path), -1);
    assert_int_equal(errno, ELOOP);
    snprintf(want, sizeof want, "%s/b", target);
    assert_false(is_dir(want, NULL)); /* nothing made through it */
    char made[300];
    assert_int_equal(culeak_create_recording(path, 0, 42, made, sizeof made), -1);
    /* nor where the directory it leads to is there already */
    assert_int_equal(mkdir(want, 0700), 0);
    errno = 0;
    assert_int_equal(culeak_make_parent_dirs(path), -1);
    assert_int_equal(errno, ELOOP);
    errno = 0;
    assert_int_equal(culeak_parent_dirs_trusted(path), -1);
    assert_int_equal(errno, ELOOP);
    assert_int_equal(culeak_create_recording(path, 0, 42, made, sizeof made), -1);
    snprintf(made, sizeof made, "%s/pub/r.culeak", t.dir); /* the shared directory itself */
    assert_int_equal(culeak_parent_dirs_trusted(made), 0);
    assert_int_equal(rmdir(want), 0);
    /* others alone may write it (not its group): still refused */
    assert_int_equal(chmod(pub, 01703), 0);
    errno = 0;
    assert_int_equal(culeak_make_parent_dirs(path), -1);
    assert_int_equal(errno, ELOOP);
    /* only its owner, root, may: a link there is the system's, and followed */
    assert_int_equal(chmod(pub, 0755), 0);
    assert_int_equal(culeak_make_parent_dirs(path), 0);
    assert_true(is_dir(want, NULL));
    tmp_remove(&t);
}

/* A recording's name taken by something else: a FIFO is refused at once (nobody may ever
 * read it), and so is a hard link; a regular file of this user's is truncated. */
static void test_private_taken(void **state)
{
    (void)state;
    struct tmp t;
    tmp_make(&t);
    char fifo[128], file[128], other[128];
    snprintf(fifo, sizeof fifo, "%s/fifo", t.dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    errno = 0;
    assert_int_equal(culeak_create_private(fifo, 1), -1);
    assert_int_equal(errno, EPERM);
    snprintf(file, sizeof file, "%s/file", t.dir);
    snprintf(other, sizeof other, "%s/other", t.dir);
    int fd = open(file, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0 && write(fd, "precious", 8) == 8);
    close(fd);
    assert_int_equal(link(file, other), 0);
    errno = 0;
    assert_int_equal(culeak_create_private(other, 1), -1);
    assert_int_equal(errno, EPERM);
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    assert_int_equal(st.st_size, 8);
    assert_int_equal(unlink(other), 0);
    fd = culeak_create_private(file, 1);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, 0);
    assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    close(fd);
    tmp_remove(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_order),
        cmocka_unit_test(test_make_dirs),
        cmocka_unit_test(test_planted_link),
        cmocka_unit_test(test_private_taken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
