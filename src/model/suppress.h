/* Leak suppressions in valgrind's file syntax (culeak-suppressions(5)):
 *
 *   {
 *      name
 *      culeak:Leak
 *      match-leak-kinds: device,managed      (optional; default: every kind; none: no kind;
 *                                             valgrind's definite, ..., reachable: every kind)
 *      fun:grow_buffers                      (function glob, demangled)
 *      src:train.py:57                       (source file glob, optional :LINE)
 *      obj:*libfoo.so                        (module path glob)
 *      ...                                   (any number of frames, none too)
 *   }
 *
 * Frame lines match a stack from its innermost frame outward, each line one frame, and
 * may stop before the stack does. A stack is tried from its innermost recorded frame,
 * then from its call site (the first frame outside looked-through code, where reports
 * start). Blocks of other tools (Memcheck:Leak) are read and ignored, so one file can
 * serve valgrind and culeak. No curses, no model state: frames in, a verdict out. */
#ifndef CULEAK_SUPPRESS_H
#define CULEAK_SUPPRESS_H

#include "model.h"

#include <stdio.h>

struct suppressions;

struct suppressions *suppressions_new(void);
void suppressions_free(struct suppressions *s);

/* Adds the blocks of text; name says where it comes from in messages. 0, or -1 with
 * "NAME:LINE: what is wrong" in err (blocks before the error are kept). */
int suppressions_parse(struct suppressions *s, const char *text, const char *name, char *err, size_t errlen);
/* The same for a file. */
int suppressions_load(struct suppressions *s, const char *path, char *err, size_t errlen);
/* The same for culeak's default suppressions (the file culeak ships, as valgrind's
 * default.supp): what its blocks match is memory a library holds until exit, reported
 * apart from what the user's own blocks suppress. */
int suppressions_load_defaults(struct suppressions *s, const char *path, char *err, size_t errlen);

size_t suppressions_count(const struct suppressions *s);
/* A number that names these blocks: no two suppression objects share one, and it changes
 * whenever blocks are added, so a verdict cached under it (the model's) stays right. */
uint64_t suppressions_stamp(const struct suppressions *s);
/* Block i: its name, and the file and line where it starts. */
const char *suppressions_name(const struct suppressions *s, size_t i, const char **file, unsigned *line);
/* Whether block i came from the default suppressions (suppressions_load_defaults). */
int suppressions_is_default(const struct suppressions *s, size_t i);
/* The blocks that did not (the user's own). */
size_t suppressions_user_count(const struct suppressions *s);

/* The first block that suppresses an allocation of kind (a culeak_kind) with this stack
 * (innermost first, site = index of the call site frame), or -1. */
int suppressions_match(const struct suppressions *s, const struct model_frame *f, size_t n, size_t site,
                       unsigned kind);

/* The frame line a suppression uses for a frame: "fun:NAME", or "obj:MODULE" when the
 * function is unknown. */
void suppressions_frame_line(const struct model_frame *f, char *buf, size_t len);
/* Writes a block named name for the allocations of kinds (bit 1u << kind) made at
 * lines[0..n) (frame lines from the call site outward). */
void suppressions_write_block(FILE *out, const char *name, uint32_t kinds, char *const *lines, size_t n);

#endif
