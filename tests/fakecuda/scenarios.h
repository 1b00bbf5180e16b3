/* Sizes the client scenarios use, shared with the tests that assert them. */
#ifndef FAKECUDA_SCENARIOS_H
#define FAKECUDA_SCENARIOS_H

#define SZ_ALLOC 1000
#define SZ_PITCH_W 100          /* x 10 rows, element 4: pitch 512 -> 5120 bytes */
#define SZ_PITCH_H 10
#define SZ_PITCH_BYTES 5120
#define SZ_MANAGED 2000
#define SZ_HOST 3000
#define SZ_HOSTALLOC 4000
#define SZ_REGISTER 8192
#define SZ_ASYNC 5000
#define SZ_ASYNC_PTSZ 5001
#define SZ_POOL 6000
#define SZ_POOL_PTSZ 6001
#define SZ_VMM (2u << 20)
#define SZ_VA (4u << 20)
#define SZ_ARRAY 8192           /* 64 x 32 float, 1 channel */
#define SZ_ARRAY3D 16384        /* 16 x 16 x 16 uint8, 4 channels */
#define SZ_MIPMAP 4096          /* 32 x 32 float, 1 level */
#define SZ_RT_MIPMAP 5376       /* 32 x 32 float, 3 levels: 4096 + 1024 + 256 */
#define SZ_IPC 9000
#define SZ_EXTERNAL 65536
#define SZ_GRAPH 7000
#define SZ_FORK_PARENT 1111
#define SZ_FORK_CHILD 2222
#define SZ_OOM_LIMIT (1u << 20) /* run oom with FAKECUDA_MEM_BYTES=1048576 */
#define SZ_OOM (2u << 20)
#define SZ_CTX 3333
#define SZ_THREAD 4096
#define SZ_LONG 512
#define SZ_MARK 777
#define SZ_GROW 16384           /* growth: kept every iteration */
#define SZ_CHURN (1u << 20)     /* growth: allocated and freed every iteration */
#define SZ_SAW 65536            /* growth: up, up, back to nothing */
#define SZ_BEFORE_ATTACH 8192   /* attach: allocated before culeak attaches, kept */
#define SZ_AFTER_ATTACH 12288   /* attach: leaked after the attach, at ATTACH_LEAK_LINE */
#define N_AFTER_ATTACH 3
#define SZ_PINNED_BEFORE_ATTACH 4096 /* attach: pinned host memory from before, freed after */
#define ATTACH_EXIT 7           /* attach: the program's own exit status */

#endif
