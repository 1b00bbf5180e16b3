/* The stream's encoder (culeak-stream(5)), beside its decoder (decode.h): each function
 * writes one record at rec, in room the caller reserved (the _MAX sizes below), and
 * returns its size. The compact records step from the records before them: struct
 * culeak_enc keeps what they step from, as struct culeak_decoder keeps it on the other
 * side. No allocation, no clock, no lock: the caller gives the time and the thread. */
#ifndef CULEAK_WIRE_ENCODE_H
#define CULEAK_WIRE_ENCODE_H

#include "common/wire.h"

#include <stddef.h>
#include <stdint.h>

/* One event as a hook saw it (the seq, time, thread and stack come apart). */
struct culeak_ev {
    unsigned op, api, kind;
    int device;
    uint64_t ctx, size, addr, aux, result;
};

/* What the next record steps from; zeroed, then t_last set to the stream's start. */
struct culeak_enc {
    uint64_t seq;      /* the last seq given; a dropped event takes one too (++seq) */
    uint64_t t_last;   /* the time of the last timed record */
    uint64_t seq_put;  /* the seq of the last EVENT, FREE, MARK or EXIT written */
    uint64_t tid_put;  /* the tid of the last EVENT, ALLOC or FREE written */
    uint64_t ctx_put;  /* the context of the last EVENT or ALLOC written */
    uint64_t ip_put;   /* the ip of the last trace-tree node written */
    uint64_t addr_put; /* the address of the last FREE or ALLOC written */
    /* the last FREE's and ALLOC's fields that a FREE_AGAIN or ALLOC_AGAIN repeats; api 0
     * (no API's number) until one was written */
    uint64_t free_api, free_kind, free_size;
    uint64_t alloc_api, alloc_kind, alloc_size, alloc_leaf;
    int64_t alloc_device;
};

/* Room to reserve: a NODE; an EVENT, ALLOC, FREE, EXIT or MARK without its label; a LOST;
 * a NOTE of len bytes. */
#define CULEAK_ENC_NODE_MAX (CULEAK_REC_HEADROOM + 3 * CULEAK_UVARINT_MAX)
#define CULEAK_ENC_EVENT_MAX (CULEAK_REC_HEADROOM + 14 * CULEAK_UVARINT_MAX)
#define CULEAK_ENC_LOST_MAX (CULEAK_REC_SHORT + 3 * CULEAK_UVARINT_MAX)
#define CULEAK_ENC_NOTE_MAX(len) (CULEAK_REC_HEADROOM + CULEAK_UVARINT_MAX + (len))

/* A trace-tree node as a NODE (id: the previous node's plus one). */
size_t culeak_enc_node(struct culeak_enc *s, uint8_t *rec, uint32_t id, uint32_t parent, uint64_t ip);
/* A free without stack, device or context: a FREE, or a FREE_AGAIN when it repeats the last. */
size_t culeak_enc_free(struct culeak_enc *s, uint8_t *rec, const struct culeak_ev *e, uint64_t now, uint64_t tid);
/* An allocation at stack leaf (held: the shim waits for RELEASE): ALLOC or ALLOC_AGAIN. */
size_t culeak_enc_alloc(struct culeak_enc *s, uint8_t *rec, const struct culeak_ev *e, uint64_t now, uint64_t tid,
                        uint32_t leaf, int held);
/* Any other event, whole, as an EVENT. */
size_t culeak_enc_event(struct culeak_enc *s, uint8_t *rec, const struct culeak_ev *e, uint64_t now, uint64_t tid,
                        uint32_t leaf);

/* The current device's memory a MARK carries. */
struct culeak_enc_mem {
    int device;
    uint64_t free, total;
};
/* A MARK of label[0..n) (mem NULL: no memory figures). */
size_t culeak_enc_mark(struct culeak_enc *s, uint8_t *rec, uint64_t now, uint64_t tid, const char *label, size_t n,
                       unsigned flags, const struct culeak_enc_mem *mem);
size_t culeak_enc_exit(struct culeak_enc *s, uint8_t *rec, uint64_t now, unsigned reason);

/* The records that step from nothing. */
size_t culeak_enc_lost(uint8_t *rec, uint64_t count, uint64_t first_seq, uint64_t last_seq);
size_t culeak_enc_note(uint8_t *rec, const char *text, size_t len);
/* ROLL: which (CULEAK_ROLL_NEXT or _PREVIOUS), the number of the part it is in (from 1),
 * the stream's bytes before the cut, the other part's file name (up to PATH_MAX bytes:
 * rec needs CULEAK_REC_HEADROOM + 3 * CULEAK_UVARINT_MAX + 5 + len). */
size_t culeak_enc_roll(uint8_t *rec, unsigned which, uint64_t part, uint64_t offset, const char *name, size_t len);
/* A PYFRAME; flags 0 is left out (as a reader without flags expects). Room:
 * CULEAK_REC_HEADROOM + file_len + func_len + 6 * CULEAK_UVARINT_MAX. */
size_t culeak_enc_pyframe(uint8_t *rec, uint64_t id, const char *file, size_t file_len, const char *func,
                          size_t func_len, uint64_t line, uint64_t firstlineno, uint64_t flags);

#endif
