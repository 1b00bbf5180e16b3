/* Report outputs, suppression files, call-site globs and grouping of the commands (report_io.h). */
#include "report_io.h"
#include "launch/launch.h"
#include "common/outpath.h"
#include "model/suppress.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int cli_sink_open(const struct cli_command *c, struct cli_sink *s, const char *path, long pid, const char *host,
                  const char *rank)
{
    if (!path)
        return 0;
    char name[4096];
    if (culeak_expand_path(path, pid, host, rank, name, sizeof name) < 0) {
        cli_fail(c, "cannot write %s: %s", path, strerror(ENAMETOOLONG));
        return -1;
    }
    if (culeak_output_open(&s->file, name) != 0) {
        cli_fail(c, "cannot write %s: %s", name, strerror(errno));
        return -1;
    }
    s->f = s->file.f;
    s->owned = 1;
    return 0;
}

int cli_sink_close(struct cli_sink *s)
{
    if (!s->f)
        return 0;
    int bad = ferror(s->f);
    errno = 0;
    if (s->owned)
        bad |= culeak_output_close(&s->file, 0) != 0;
    else
        bad |= fflush(s->f) != 0;
    s->f = NULL;
    if (bad)
        fprintf(stderr, "culeak: cannot write the report: %s\n", strerror(errno ? errno : EIO));
    return bad ? -1 : 0;
}

int cli_check_output_dir(const struct cli_command *c, const char *path)
{
    if (!path)
        return 0;
    char name[4096];
    int r = culeak_expand_path(path, (long)getpid(), NULL, NULL, name, sizeof name);
    if (r < 0)
        errno = ENAMETOOLONG;
    if (r < 0 || culeak_output_dir_writable(name) != 0) {
        cli_fail(c, "cannot write %s: %s", path, strerror(errno));
        return 2;
    }
    return 0;
}

int cli_load_suppressions(const struct cli_command *c, struct suppressions **supp, const char *path)
{
    if (!*supp && !(*supp = suppressions_new())) {
        cli_fail(c, "out of memory");
        return 2;
    }
    char err[1024];
    if (suppressions_load(*supp, path, err, sizeof err) != 0) {
        cli_fail(c, "%s", err);
        return 2;
    }
    return 0;
}

int cli_load_default_suppressions(const struct cli_command *c, struct suppressions **supp)
{
    const char *path = culeak_default_suppressions_path();
    if (!path) {
        fprintf(stderr, "culeak: warning: culeak's default suppressions (share/culeak/default.supp beside the "
                        "culeak executable's directory) are missing: memory the CUDA libraries hold until exit "
                        "shows as leaked\n");
        return 0;
    }
    if (!*supp && !(*supp = suppressions_new())) {
        cli_fail(c, "out of memory");
        return 2;
    }
    char err[1024];
    if (suppressions_load_defaults(*supp, path, err, sizeof err) != 0) {
        cli_fail(c, "%s", err);
        return 2;
    }
    return 0;
}

static int append_glob(const struct cli_command *c, char *list, size_t len, const char *glob)
{
    size_t n = strlen(list);
    int w = snprintf(list + n, len - n, "%s%s", n ? "," : "", glob);
    if (w < 0 || (size_t)w >= len - n) {
        list[n] = 0;
        return cli_error(c, "too many globs to look through");
    }
    return 0;
}

int cli_call_site_option(const struct cli_command *c, struct cli_call_sites *s, int key, const char *glob)
{
    char name[64];
    cli_option_name(c, key, name, sizeof name);
    char *list = !strcmp(name, "--skip") ? s->skip : !strcmp(name, "--skip-function") ? s->skip_fn : s->my_code;
    return append_glob(c, list, sizeof s->skip, glob);
}

struct model_options cli_call_sites_model_options(const struct cli_call_sites *s)
{
    return (struct model_options){.skip_modules = s->skip[0] ? s->skip : NULL,
                                  .skip_functions = s->skip_fn[0] ? s->skip_fn : NULL,
                                  .my_code = s->my_code[0] ? s->my_code : NULL};
}

int cli_group_option(const struct cli_command *c, enum model_group *group, const char *arg)
{
    int g = model_group_by_name(arg);
    if (g < 0)
        return cli_error(c, "--group takes site, function, file, module or stack, not '%s'", arg);
    *group = (enum model_group)g;
    return 0;
}
