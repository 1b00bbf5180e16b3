/* Ends whose EXIT record was lost. Each mode allocates 1 MiB that stays live first.
 *   threads          64 threads and main call exit(3) at once
 *   return           main returns 3 (libc's exit, not the shim's); while its destructors
 *                    run, a thread calls exit(3) (the main thread waits in one of them)
 *   daemon           daemon(1, 1): its parent ends inside libc (_exit(0)); the child
 *                    returns 0 at once
 *   flood GO DONE    creates GO.ready, waits for the file GO, allocates and frees 200000 times (more than
 *                    a ring holds), creates DONE and returns 0 */
#include "cuda/culeak_cudart.h"

#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t go;

static void *quit(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&go);
    exit(3);
}

static int threads(void)
{
    pthread_barrier_init(&go, NULL, 65);
    for (int i = 0; i < 64; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, quit, NULL) != 0)
            return 1;
    }
    pthread_barrier_wait(&go);
    exit(3);
}

static sem_t in_destructor;
static int returning;

__attribute__((destructor)) static void wait_for_exit(void)
{
    if (!returning)
        return;
    sem_post(&in_destructor);
    for (;;) /* the other thread's exit ends the process */
        pause();
}

static void *exit_late(void *arg)
{
    (void)arg;
    while (sem_wait(&in_destructor) != 0)
        ;
    exit(3);
}

static int return_from_main(void)
{
    pthread_t t;
    if (sem_init(&in_destructor, 0, 0) != 0 || pthread_create(&t, NULL, exit_late, NULL) != 0)
        return 1;
    returning = 1;
    return 3;
}

static int flood(const char *go_file, const char *done_file)
{
    struct timespec ms = {0, 1000000};
    char ready[4096];
    snprintf(ready, sizeof ready, "%s.ready", go_file);
    int rfd = open(ready, O_CREAT | O_WRONLY, 0600);
    if (rfd < 0)
        return 1;
    close(rfd);
    while (access(go_file, F_OK) != 0)
        nanosleep(&ms, NULL);
    for (int i = 0; i < 200000; i++) {
        void *q;
        if (cudaMalloc(&q, 256) != cudaSuccess || cudaFree(q) != cudaSuccess)
            return 1;
    }
    int fd = open(done_file, O_CREAT | O_WRONLY, 0600);
    return fd < 0;
}

int main(int argc, char **argv)
{
    void *p;
    if (argc < 2 || cudaMalloc(&p, 1u << 20) != cudaSuccess)
        return 1;
    if (!strcmp(argv[1], "threads"))
        return threads();
    if (!strcmp(argv[1], "return"))
        return return_from_main();
    if (!strcmp(argv[1], "daemon")) {
        return daemon(1, 1) != 0;
    }
    if (!strcmp(argv[1], "flood") && argc == 4)
        return flood(argv[2], argv[3]);
    return 1;
}
