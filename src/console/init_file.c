/* Init files and -ex/-x at start (init_file.h, console_run_startup). */
#include "init_file.h"
#include "console.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCAL_INIT ".culeakinit"

int init_home_file(char *buf, size_t len)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/') /* a relative one is ignored, as the XDG rules say */
        n = snprintf(buf, len, "%s/culeak/init", xdg);
    else if (home && home[0])
        n = snprintf(buf, len, "%s/.config/culeak/init", home);
    else
        return -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Whether file lies in directory dir (resolved when it exists) or under it. */
static int under(const char *dir, const char *file)
{
    char real[PATH_MAX];
    if (realpath(dir, real))
        dir = real;
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 1 && dir[0] == '/')
        return 1;
    return strncmp(file, dir, n) == 0 && file[n] == '/';
}

int init_safe_path_allows(const char *safe_path, const char *file)
{
    const char *home = getenv("HOME");
    for (const char *p = safe_path; p && *p;) {
        size_t n = strcspn(p, ":");
        char dir[PATH_MAX];
        if (n >= 2 && p[0] == '~' && p[1] == '/' && home)
            snprintf(dir, sizeof dir, "%s%.*s", home, (int)n - 1, p + 1);
        else
            snprintf(dir, sizeof dir, "%.*s", (int)n, p);
        if (dir[0] == '/' && under(dir, file))
            return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

/* Runs the lines of s. As gdb does, an error is printed and the next command runs; an
 * error in a command file ends that file. */
static void run_lines(struct console *c, const struct script *s)
{
    int skip = 0;
    for (size_t i = 0; s && i < s->n; i++) {
        const struct script_line *l = &s->v[i];
        if (l->source && l->source == skip)
            continue;
        c->u.msg[0] = 0;
        c->u.msg_error = 0;
        console_exec(c, l->text);
        if (c->confirm_yes) { /* no one to answer before the job starts */
            c->confirm_yes = NULL;
            ui_message(&c->u, 1, "'%s' asks a question: type it at the prompt", l->text);
        }
        if (c->u.msg_error) {
            char line[1300];
            snprintf(line, sizeof line, "[culeak] %.500s: %.700s", l->where, c->u.msg);
            outbuf_add_line(&c->u.out, line);
            skip = l->source;
        }
    }
}

static void say(struct console *c, const char *fmt, const char *a, const char *b)
{
    char line[2 * PATH_MAX + 200];
    snprintf(line, sizeof line, fmt, a, b);
    outbuf_add_line(&c->u.out, line);
}

/* Reads and runs one init file; a file that is not there is no error. */
static void run_file(struct console *c, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    struct script s = {0};
    char err[700];
    if (script_add_file(&s, path, err, sizeof err) != 0)
        say(c, "[culeak] %s%s", err, "");
    else
        run_lines(c, &s);
    script_free(&s);
}

void console_run_startup(struct console *c)
{
    if (!c->opt.no_init) {
        char home[PATH_MAX], local[PATH_MAX], cwd[PATH_MAX];
        struct stat hs, ls;
        int have_home = init_home_file(home, sizeof home) == 0;
        if (have_home)
            run_file(c, home);
        int same = have_home && stat(home, &hs) == 0 && stat(LOCAL_INIT, &ls) == 0 && hs.st_dev == ls.st_dev &&
                   hs.st_ino == ls.st_ino;
        if (!same && stat(LOCAL_INIT, &ls) == 0 && realpath(LOCAL_INIT, local) && getcwd(cwd, sizeof cwd)) {
            if (init_safe_path_allows(c->safe_path, local)) {
                run_file(c, local);
            } else { /* gdb's auto-load refusal: say why and how to allow it */
                say(c, "[culeak] %s/" LOCAL_INIT " was not read: %s is not in the auto-load safe-path", cwd, cwd);
                say(c, "[culeak] to trust it, add the line 'set auto-load safe-path %s' to %s", cwd,
                    have_home ? home : "~/.config/culeak/init");
                ui_message(&c->u, 1, "./" LOCAL_INIT " was not read: its directory is not trusted (see the output pane)");
            }
        }
    }
    run_lines(c, c->opt.script);
}
