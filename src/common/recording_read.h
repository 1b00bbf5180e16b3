/* The one loop that reads a recording file: its bytes, in large chunks, handed to a
 * function (the stream decoder's, or the model's stream) until the end or a stop. A
 * PyTorch memory snapshot (a pickle) is read as the stream it amounts to
 * (torch_snapshot.h). */
#ifndef CULEAK_RECORDING_READ_H
#define CULEAK_RECORDING_READ_H

#include <stddef.h>
#include <stdint.h>

/* Takes the next n bytes of the file: 0 to go on, anything else stops the reading (the
 * caller keeps why in ctx). */
typedef int (*culeak_bytes_fn)(void *ctx, const uint8_t *bytes, size_t n);

/* Reads path to its end through fn: 0 at the end of the file, 1 when fn stopped it, -1
 * when the file could not be opened or read ("PATH: what" or "PATH: read error: what"
 * in err). */
int culeak_read_recording(const char *path, culeak_bytes_fn fn, void *ctx, char *err, size_t errlen);

#endif
