/* A PyTorch memory snapshot (the pickle of torch.cuda.memory._snapshot(), as
 * _dump_snapshot writes it) read as a recording: the culeak stream it amounts to, so that
 * report, open, dump and every reader of recordings take it. Read with the restricted
 * unpickler (pickle_read.h): nothing in the file is run.
 *
 * What the stream says: one process (host "torch snapshot"); the blocks live before
 * the trace's first entry, allocated at its start; then each entry in time order: alloc
 * and free_completed as PyTorch's blocks (torch.alloc, torch.free), segment_alloc/map and
 * segment_free/unmap as device memory taken by PyTorch's caching allocator (a frame in
 * "libc10_cuda.so" under its Python frames), oom as a failed allocation. Frames become
 * Python frames (the .py ones, when a stack has any; else every frame), innermost first as
 * PyTorch lists them. A block's size is the size asked for (its requested_size, as its
 * alloc entry has it), not the rounded size it takes in its segment. Marks: each START of external_annotations (record_function ranges,
 * "Optimizer.step#SGD.step 3": numbered per name), and TORCH_SNAPSHOT_TIME_MARKS evenly
 * spaced over the trace's time ("trace +120 ms"), so that --diff and the suspects have
 * points to compare. */
#ifndef CULEAK_TORCH_SNAPSHOT_H
#define CULEAK_TORCH_SNAPSHOT_H

#include "common/recording_read.h"

#include <stddef.h>
#include <stdint.h>

#define TORCH_SNAPSHOT_TIME_MARKS 20
#define TORCH_SNAPSHOT_HOST "torch snapshot"

/* Does a file starting with these bytes look like a pickle (PROTO 2 to 5)? */
int culeak_is_pickle(const uint8_t *head, size_t n);

/* The stream of the snapshot buf[0..n) handed to fn: 0 at its end, 1 when fn stopped it,
 * -1 with err ("NAME: pickle: at offset N: ...", "NAME: not a PyTorch memory snapshot").
 * Work is bounded by the size of the input, whatever the memo makes of it. */
int culeak_torch_snapshot_stream(const uint8_t *buf, size_t n, const char *name, culeak_bytes_fn fn, void *ctx,
                                 char *err, size_t errlen);

#endif
