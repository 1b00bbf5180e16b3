/* A stack as people read it (the console's stack pane, PAUSED view, show and diff; the
 * text reports; the HTML report's flame graph): innermost first, each run of
 * looked-through frames (CUDA libraries, the Python interpreter between Python frames)
 * folded into one line so that the call site and its callers fit in a few rows. */
#ifndef CULEAK_STACK_FOLD_H
#define CULEAK_STACK_FOLD_H

#include "model/model.h"

#include <stddef.h>

struct stack_line {
    size_t frame; /* #N of its frame, or of the first frame folded into it */
    size_t count; /* frames folded into this line; 0: one frame, shown as is */
    int site;     /* the call site: the first frame outside looked-through code */
};

/* The site's index in f[0..n): the first frame not looked through; when every frame is
 * (*all_skipped set), the first outside allocator and runtime code, else the outermost. */
size_t stack_site(const struct model_frame *f, size_t n, int *all_skipped);
/* Lines of f[0..n). With fold, each run of two or more looked-through frames becomes one
 * line (a marker frame stays a line of its own); when every frame is looked through
 * nothing is folded. out has room for n lines; returns how many. */
size_t stack_lines(const struct model_frame *f, size_t n, int fold, struct stack_line *out);
/* "  #3  fn at file:line", "> #3  ..." for the site,
 * "  ... 19 frames in libc10_cuda.so, libtorch_cuda.so (looked through)" for a fold. */
char *stack_line_text(const struct stack_line *l, const struct model_frame *f, char *buf, size_t len);
/* "19 frames in libc10_cuda.so, libtorch_cuda.so" for the folded frames f[0..count). */
char *stack_fold_text(const struct model_frame *f, size_t count, char *buf, size_t len);

#endif
