/* What the commands that write reports share (check, report, the console): output files
 * with %p/%h/%r, suppression files, the options that say where call sites are and how
 * they are grouped. */
#ifndef CULEAK_CLI_REPORT_IO_H
#define CULEAK_CLI_REPORT_IO_H

#include "model/model.h"
#include "options.h"
#include "common/output_file.h"

#include <stddef.h>
#include <stdio.h>

struct suppressions;

/* A report's destination: a stream given (stdout, stderr), or a file opened for it. */
struct cli_sink {
    FILE *f;
    int owned; /* f was opened here: file's */
    struct culeak_output file;
};
/* path NULL: s keeps its stream. Otherwise path, with %p, %h and %r expanded from pid,
 * host and rank (NULL: this machine's), is written (output_file.h: complete, or left as
 * it was; a link there replaced, not followed): 0, or -1 after an error message. */
int cli_sink_open(const struct cli_command *c, struct cli_sink *s, const char *path, long pid, const char *host,
                  const char *rank);
/* Closes a file opened by cli_sink_open: 0, or -1 after "cannot write" (disk full...). */
int cli_sink_close(struct cli_sink *s);

/* Before a job starts: could the file path (NULL: none) be created, its directory there?
 * 0, or 2 after an error message. */
int cli_check_output_dir(const struct cli_command *c, const char *path);

/* --suppressions FILE: adds FILE's blocks to *supp (made on first use): 0, or 2 after
 * "culeak CMD: FILE:LINE: what is wrong". */
int cli_load_suppressions(const struct cli_command *c, struct suppressions **supp, const char *path);
/* Unless --no-default-suppressions: adds culeak's default suppressions to *supp (made on
 * first use), after the user's own, so theirs match first. 0 (a warning when the file is
 * not found: libraries' memory is then reported as leaked), or 2 after an error. */
int cli_load_default_suppressions(const struct cli_command *c, struct suppressions **supp);

/* --skip, --skip-function and --my-code (CLI_CALL_SITE_OPTIONS): comma-separated globs. */
struct cli_call_sites {
    char skip[4096], skip_fn[4096], my_code[4096];
};
/* One of them, by its key in c's table: appends ",glob" to its list: 0, or 2 when it
 * does not fit. */
int cli_call_site_option(const struct cli_command *c, struct cli_call_sites *s, int key, const char *glob);
/* The model's options they make (an empty list: none). */
struct model_options cli_call_sites_model_options(const struct cli_call_sites *s);

/* --group G into *group: 0, or 2 after "--group takes site, ...". */
int cli_group_option(const struct cli_command *c, enum model_group *group, const char *arg);

#endif
