/* Recording paths checked against the output pattern (path_match.h). */
#include "path_match.h"

#include <stdio.h>
#include <string.h>

/* tmpl against path from their starts; rest: what may follow once tmpl is used up */
static int match(const char *t, const char *p, const char *pid, const char *rest)
{
    for (; *t; t++) {
        if (t[0] != '%' || !t[1] || !strchr("phr%", t[1])) {
            if (*p++ != *t)
                return 0;
            continue;
        }
        t++;
        if (*t == '%') {
            if (*p++ != '%')
                return 0;
        } else if (*t == 'p') {
            size_t n = strlen(pid);
            if (strncmp(p, pid, n) != 0)
                return 0;
            p += n;
        } else { /* %h, %r: a name of the writer's, within one path component */
            for (const char *q = p;; q++) {
                if (match(t + 1, q, pid, rest))
                    return 1;
                if (!*q || *q == '/')
                    return 0;
            }
        }
    }
    return !*p || !strcmp(p, rest);
}

/* Whether each "." or ".." component of path is the template's own: a %h or %r of ".."
 * would lead out of the directory the pattern names. The components line up, as no
 * name of the writer's holds a '/'. */
static int dots_are_tmpl(const char *t, const char *p)
{
    while (*p) {
        size_t pn = strcspn(p, "/"), tn = strcspn(t, "/");
        int dots = (pn == 1 && p[0] == '.') || (pn == 2 && p[0] == '.' && p[1] == '.');
        if (dots && (tn != pn || strncmp(t, p, pn) != 0))
            return 0;
        p += pn + (p[pn] == '/');
        t += tn + (t[tn] == '/');
    }
    return 1;
}

int culeak_path_matches(const char *tmpl, long pid, const char *path)
{
    char num[32], dotted[34];
    snprintf(num, sizeof num, "%ld", pid);
    snprintf(dotted, sizeof dotted, ".%ld", pid);
    return pid > 0 && match(tmpl, path, num, dotted) && dots_are_tmpl(tmpl, path);
}
