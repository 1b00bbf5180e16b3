/* Python frames in the model. A process's PYFRAME records (wire.h) are interned model-wide
 * by (file, function, line), so the same Python line in two processes is one site; FRAME
 * ips tagged CULEAK_PYFRAME_TAG are rewritten to CULEAK_PYFRAME_TAG | model-wide id as
 * they arrive. Each process then maps the tagged range to the pseudo module "python",
 * whose module offset is that id, so sites, groups and stacks treat Python frames like
 * native ones: symbolizing one gives function, file and line (pyframes_lookup).
 *
 * Looked-through Python files (the call site is never inside them): the frameworks'
 * own packages (torch, cupy, jax, ...; PYFRAMES_DEFAULT_SKIPS), the standard library
 * (under lib/pythonX.Y but not in site-packages/dist-packages), every installed package
 * (under site-packages/ or dist-packages/), frozen modules, and every skip glob of the
 * model (--skip, $CULEAK_SKIP_MODULES) matched against the .py path. Files under a
 * prefix of model_options.my_code or $CULEAK_MY_CODE are the program's own: only the
 * skip globs apply to them. */
#ifndef CULEAK_PYFRAMES_H
#define CULEAK_PYFRAMES_H

#include "common/decode.h"
#include "symbols/symbols.h"

#include <stdint.h>

struct model;
struct process;

#define PYFRAMES_MODULE "python"
#define PYFRAMES_BACKWARD_TEXT "[autograd backward]" /* the marker's function name */

/* A PYFRAME record of process p. -1: out of memory. */
int pyframes_add(struct model *m, struct process *p, const struct culeak_pyframe *f);
/* A FRAME ip as the model keeps it: tagged ips become model-wide; others unchanged. */
uint64_t pyframes_ip(const struct model *m, const struct process *p, uint64_t ip);
/* The frame of model-wide id `id` (a "python" module offset), or NULL when unknown. */
const struct sym_result *pyframes_lookup(const struct model *m, uint64_t id);
/* Is path (a .py file or a native module) under a prefix of the program's own code
 * (model_options.my_code, $CULEAK_MY_CODE)? */
int pyframes_is_mine(const struct model *m, const char *path);
/* Is this model ip a Python frame in a looked-through file? */
int pyframes_skipped(const struct model *m, uint64_t ip);
/* Is this model ip the autograd backward marker? In a stack, the frames inside it are a
 * thread without Python frames (autograd's engine), the Python frames outside it those of
 * the thread that was inside backward() meanwhile. It is looked through, and never a
 * site. */
int pyframes_marker(const struct model *m, uint64_t ip);
/* For a Python frame in an installed package (not a framework's own): "pkg/mod.py:12",
 * the path after site-packages/ or dist-packages/. NULL otherwise. */
const char *pyframes_lib_line(const struct model *m, uint64_t ip);
/* Module id of "python" (0 before the first Python frame). */
uint32_t pyframes_module(const struct model *m);
void pyframes_free(struct model *m);

#endif
