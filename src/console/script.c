/* Console commands from the command line (script.h). */
#include "script.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add(struct script *s, const char *text, size_t len, const char *where, int source)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        struct script_line *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    struct script_line *l = &s->v[s->n];
    l->text = strndup(text, len);
    l->where = strdup(where);
    l->source = source;
    if (!l->text || !l->where) {
        free(l->text);
        free(l->where);
        return -1;
    }
    s->n++;
    return 0;
}

int script_add_command(struct script *s, const char *cmd) { return add(s, cmd, strlen(cmd), "-ex", 0); }

int script_add_text(struct script *s, const char *name, const char *text, size_t len)
{
    int source = ++s->nfiles;
    const char *end = text + len;
    for (int lineno = 1; text < end; lineno++) {
        const char *nl = memchr(text, '\n', (size_t)(end - text));
        const char *stop = nl ? nl : end;
        const char *a = text, *b = stop;
        while (a < b && (*a == ' ' || *a == '\t'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
            b--;
        if (a < b && *a != '#') {
            char where[600];
            snprintf(where, sizeof where, "%.500s:%d", name, lineno);
            if (add(s, a, (size_t)(b - a), where, source) != 0)
                return -1;
        }
        text = nl ? nl + 1 : end;
    }
    return 0;
}

int script_add_file(struct script *s, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *text = NULL;
    size_t len = 0;
    FILE *m = f ? open_memstream(&text, &len) : NULL;
    int bad = !f || !m;
    char buf[4096];
    size_t n;
    while (!bad && (n = fread(buf, 1, sizeof buf, f)) > 0)
        bad = fwrite(buf, 1, n, m) != n;
    int e = errno;
    bad |= f && ferror(f);
    if (m)
        fclose(m);
    if (f)
        fclose(f);
    if (!bad && memchr(text, 0, len)) {
        snprintf(err, errlen, "%s: not a text file of console commands", path);
        free(text);
        return -1;
    }
    if (bad) {
        snprintf(err, errlen, "%s: %s", path, strerror(e ? e : EIO));
        free(text);
        return -1;
    }
    int rc = script_add_text(s, path, text, len);
    free(text);
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    return rc;
}

void script_free(struct script *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].text);
        free(s->v[i].where);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}
