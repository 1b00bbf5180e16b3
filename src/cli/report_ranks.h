/* `culeak report` over the recordings of many ranks: directories given are searched for
 * recordings, and the recordings are read a few at a time on every core, each into a
 * model of its own that is summarized (report/ranks.h) and freed. */
#ifndef CULEAK_CLI_REPORT_RANKS_H
#define CULEAK_CLI_REPORT_RANKS_H

#include "model/model.h"
#include "report/ranks.h"

/* The arguments with each directory replaced by the recordings under it (any depth,
 * sorted by path): 0 with *out (free with report_files_free), or -1 after a message (a
 * directory unreadable or with no recording in it, out of memory). */
int report_files_expand(const char *const *args, int nargs, char ***out, int *nout);
void report_files_free(char **files, int n);

/* Does a recording of the files carry a rank (RANK and the like in its process's
 * environment)? Reads the first record of each until one does. */
int report_files_ranked(const char *const *files, int nfiles);

/* The summaries of the files, read by up to `threads` threads (0: one per core); a
 * recording that cannot be read is a summary with its error. 0, or -1 out of memory. */
int report_ranks_read(const char *const *files, int nfiles, int threads, const struct model_options *mo,
                      const struct report_options *ro, struct ranks_view *out);

#endif
