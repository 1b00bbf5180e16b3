/* Leak suppressions (suppress.h): valgrind's block syntax, culeak's frames. */
#include "suppress.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAME_LINES 256 /* frame lines in one block */

enum pat_type { PAT_FUN, PAT_OBJ, PAT_SRC, PAT_ANY };

struct frame_pat {
    enum pat_type type;
    char *glob;     /* NULL for PAT_ANY */
    unsigned line;  /* PAT_SRC: 0 for any line */
};

struct block {
    char *name;
    const char *file; /* one of the suppressions' file names */
    unsigned line;
    uint32_t kinds;   /* bit (1u << kind); 0: every kind; KINDS_NOTHING: none */
    struct frame_pat *pats;
    size_t n;
    int is_default;   /* from suppressions_load_defaults */
};

struct suppressions {
    struct block *b;
    size_t n, cap;
    char **files;
    size_t nfiles;
    uint64_t stamp;   /* suppressions_stamp() */
};

/* Stamps of every suppression object of the process: never one twice, so an object
 * freed and another allocated at its address do not look the same to a cache. */
static uint64_t new_stamp(void)
{
    static atomic_uint_fast64_t last;
    return (uint64_t)atomic_fetch_add(&last, 1) + 1;
}

struct suppressions *suppressions_new(void)
{
    struct suppressions *s = calloc(1, sizeof *s);
    if (s)
        s->stamp = new_stamp();
    return s;
}

static void block_free(struct block *b)
{
    free(b->name);
    for (size_t i = 0; i < b->n; i++)
        free(b->pats[i].glob);
    free(b->pats);
}

void suppressions_free(struct suppressions *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        block_free(&s->b[i]);
    free(s->b);
    for (size_t i = 0; i < s->nfiles; i++)
        free(s->files[i]);
    free(s->files);
    free(s);
}

size_t suppressions_count(const struct suppressions *s) { return s ? s->n : 0; }

uint64_t suppressions_stamp(const struct suppressions *s) { return s ? s->stamp : 0; }

const char *suppressions_name(const struct suppressions *s, size_t i, const char **file, unsigned *line)
{
    if (!s || i >= s->n)
        return NULL;
    if (file)
        *file = s->b[i].file;
    if (line)
        *line = s->b[i].line;
    return s->b[i].name;
}

int suppressions_is_default(const struct suppressions *s, size_t i) { return s && i < s->n && s->b[i].is_default; }

size_t suppressions_user_count(const struct suppressions *s)
{
    size_t n = 0;
    for (size_t i = 0; s && i < s->n; i++)
        n += !s->b[i].is_default;
    return n;
}

/* ------------------------------------------------------------------ parsing */

struct parser {
    const char *name;
    unsigned lineno;
    char *err;
    size_t errlen;
};

static int parse_error(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int parse_error(struct parser *p, const char *fmt, ...)
{
    int n = snprintf(p->err, p->errlen, "%s:%u: ", p->name, p->lineno);
    if (n >= 0 && (size_t)n < p->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The next line, trimmed, into buf; NULL at the end of the text. */
static const char *next_line(const char **text, char *buf, size_t len, struct parser *p)
{
    while (**text) {
        const char *start = *text, *nl = strchr(start, '\n');
        size_t n = nl ? (size_t)(nl - start) : strlen(start);
        *text = start + n + (nl != NULL);
        p->lineno++;
        while (n && isspace((unsigned char)*start)) {
            start++;
            n--;
        }
        while (n && isspace((unsigned char)start[n - 1]))
            n--;
        if (n == 0 || *start == '#')
            continue; /* blank lines and comments, anywhere */
        if (n >= len)
            n = len - 1;
        memcpy(buf, start, n);
        buf[n] = 0;
        return buf;
    }
    return NULL;
}

/* "culeak:Leak", "Memcheck,culeak:Leak": 1 ours, 0 another tool's, -1 malformed. */
static int parse_tool_line(struct parser *p, const char *l)
{
    const char *colon = strchr(l, ':');
    if (!colon || colon == l || !colon[1])
        return parse_error(p, "expected TOOL:KIND (culeak:Leak), got '%s'", l);
    int ours = 0;
    for (const char *t = l; t < colon;) {
        size_t n = strcspn(t, ",:");
        if (n == 6 && !strncmp(t, "culeak", 6))
            ours = 1;
        t += n + (t[n] == ',');
    }
    if (ours && strcmp(colon + 1, "Leak") != 0)
        return parse_error(p, "culeak suppresses leaks only: the kind is Leak, not '%s'", colon + 1);
    return ours;
}

/* A kinds mask that no allocation has: `match-leak-kinds: none` */
#define KINDS_NOTHING (1u << 31)
_Static_assert(CULEAK_KIND_COUNT < 31, "a kind's bit must not be KINDS_NOTHING");

/* valgrind's leak kinds say how reachable a block is, which culeak does not tell apart:
 * every leak is any of them, so a block shared with valgrind keeps its meaning. */
static int is_valgrind_leak_kind(const char *k)
{
    return !strcmp(k, "definite") || !strcmp(k, "indirect") || !strcmp(k, "possible") || !strcmp(k, "reachable");
}

static int parse_kinds(struct parser *p, const char *list, uint32_t *kinds)
{
    *kinds = 0;
    int every = 0, nothing = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *k = strtok_r(buf, ", \t", &save); k; k = strtok_r(NULL, ", \t", &save)) {
        if (!strcmp(k, "all") || is_valgrind_leak_kind(k)) {
            every = 1;
            continue;
        }
        if (!strcmp(k, "none")) {
            nothing = 1;
            continue;
        }
        int kind = culeak_kind_by_name(k);
        if (kind <= 0)
            return parse_error(p,
                               "unknown kind '%s' in match-leak-kinds (device, managed, pinned, ..., block, all, "
                               "none, or valgrind's definite, indirect, possible, reachable)",
                               k);
        *kinds |= 1u << kind;
    }
    if (every)
        *kinds = 0;
    else if (!*kinds && nothing)
        *kinds = KINDS_NOTHING;
    else if (!*kinds)
        return parse_error(p, "match-leak-kinds names no kind");
    return 0;
}

static int parse_frame_line(struct parser *p, const char *l, struct frame_pat *fp)
{
    memset(fp, 0, sizeof *fp);
    if (!strcmp(l, "...")) {
        fp->type = PAT_ANY;
        return 0;
    }
    if (!strncmp(l, "fun:", 4))
        fp->type = PAT_FUN;
    else if (!strncmp(l, "obj:", 4))
        fp->type = PAT_OBJ;
    else if (!strncmp(l, "src:", 4))
        fp->type = PAT_SRC;
    else
        return parse_error(p, "expected a frame line (fun:, obj:, src: or ...) or '}', got '%s'", l);
    char *glob = strdup(l + 4);
    if (!glob)
        return parse_error(p, "out of memory");
    if (fp->type == PAT_SRC) { /* src:FILE:LINE, the line optional */
        char *colon = strrchr(glob, ':');
        if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
            fp->line = (unsigned)strtoul(colon + 1, NULL, 10);
            *colon = 0;
        }
    }
    if (!*glob) {
        free(glob);
        return parse_error(p, "'%s' matches nothing: a glob follows the colon", l);
    }
    fp->glob = glob;
    return 0;
}

static const char *intern_file(struct suppressions *s, const char *name)
{
    for (size_t i = 0; i < s->nfiles; i++)
        if (!strcmp(s->files[i], name))
            return s->files[i];
    char **nf = realloc(s->files, (s->nfiles + 1) * sizeof *nf);
    if (!nf)
        return NULL;
    s->files = nf;
    if (!(nf[s->nfiles] = strdup(name)))
        return NULL;
    return nf[s->nfiles++];
}

static int add_block(struct suppressions *s, struct block *b)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        struct block *nb = realloc(s->b, nc * sizeof *nb);
        if (!nb)
            return -1;
        s->b = nb;
        s->cap = nc;
    }
    s->b[s->n++] = *b;
    s->stamp = new_stamp(); /* verdicts cached under the old stamp may change */
    return 0;
}

/* Is l a TOOL:KIND line naming culeak ("culeak:Leak", "Memcheck,culeak:Leak")? */
static int names_culeak_tool(const char *l)
{
    const char *colon = strchr(l, ':');
    if (!colon || colon == l || !colon[1] || strpbrk(colon + 1, " \t:"))
        return 0;
    for (const char *t = l; t < colon;) {
        size_t n = strcspn(t, ",:");
        if (n == 6 && !strncmp(t, "culeak", 6))
            return 1;
        t += n + (t[n] == ',');
    }
    return 0;
}

/* One block, after its '{': 0 (added, or another tool's and skipped), -1 error. */
static int parse_block(struct suppressions *s, struct parser *p, const char **text, const char *file)
{
    char buf[4096];
    struct block b = {.line = p->lineno};
    struct frame_pat pats[MAX_FRAME_LINES];
    const char *l = next_line(text, buf, sizeof buf, p);
    if (!l)
        return parse_error(p, "the block opened at line %u has no name and no '}'", b.line);
    if (!strcmp(l, "}") || !strcmp(l, "{"))
        return parse_error(p, "the block opened at line %u has no name", b.line);
    if (names_culeak_tool(l)) /* read as its name, the block would be skipped as another tool's */
        return parse_error(p, "the block opened at line %u has no name: its first line is the TOOL:KIND line '%s'",
                           b.line, l);
    char *name = strdup(l);
    if (!name)
        return parse_error(p, "out of memory");
    int ours = 0, rc = -1;
    size_t n = 0;
    if (!(l = next_line(text, buf, sizeof buf, p))) {
        parse_error(p, "the block opened at line %u ends without TOOL:KIND and '}'", b.line);
        goto out;
    }
    if ((ours = parse_tool_line(p, l)) < 0)
        goto out;
    for (;;) {
        if (!(l = next_line(text, buf, sizeof buf, p))) {
            parse_error(p, "the block opened at line %u has no '}'", b.line);
            goto out;
        }
        if (!strcmp(l, "}"))
            break;
        if (!ours)
            continue; /* another tool's lines: valgrind checks them */
        if (!strcmp(l, "{")) {
            parse_error(p, "'{' inside the block opened at line %u (a '}' is missing)", b.line);
            goto out;
        }
        if (!strncmp(l, "match-leak-kinds:", 17)) {
            if (n) {
                parse_error(p, "match-leak-kinds comes before the frame lines");
                goto out;
            }
            if (parse_kinds(p, l + 17, &b.kinds) != 0)
                goto out;
            continue;
        }
        if (n == MAX_FRAME_LINES) {
            parse_error(p, "more than %d frame lines in one block", MAX_FRAME_LINES);
            goto out;
        }
        if (parse_frame_line(p, l, &pats[n]) != 0)
            goto out;
        n++;
    }
    if (!ours) {
        rc = 0;
        goto out;
    }
    if (n == 0) {
        parse_error(p, "the block '%s' has no frame lines (fun:, obj:, src: or ...)", name);
        goto out;
    }
    b.name = name;
    b.file = intern_file(s, file);
    b.pats = malloc(n * sizeof *b.pats);
    if (!b.file || !b.pats) {
        parse_error(p, "out of memory");
        goto out;
    }
    memcpy(b.pats, pats, n * sizeof *pats);
    b.n = n;
    if (add_block(s, &b) != 0) {
        parse_error(p, "out of memory");
        goto out;
    }
    return 0;
out:
    for (size_t i = 0; i < n; i++)
        free(pats[i].glob);
    free(b.pats);
    free(name);
    return rc;
}

int suppressions_parse(struct suppressions *s, const char *text, const char *name, char *err, size_t errlen)
{
    struct parser p = {name, 0, err, errlen};
    char buf[4096];
    const char *l;
    while ((l = next_line(&text, buf, sizeof buf, &p))) {
        if (strcmp(l, "{") != 0)
            return parse_error(&p, "expected '{' to open a suppression, got '%s'", l);
        if (parse_block(s, &p, &text, name) != 0)
            return -1;
    }
    return 0;
}

int suppressions_load(struct suppressions *s, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    char chunk[65536];
    errno = 0;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = (len + got + 1) * 2;
            char *nt = realloc(text, cap);
            if (!nt) {
                free(text);
                fclose(f);
                snprintf(err, errlen, "%s: out of memory", path);
                return -1;
            }
            text = nt;
        }
        memcpy(text + len, chunk, got);
        len += got;
    }
    int bad = ferror(f) ? (errno ? errno : EIO) : 0; /* a directory opens, and reads EISDIR */
    fclose(f);
    if (bad) {
        free(text);
        snprintf(err, errlen, "%s: %s", path, strerror(bad));
        return -1;
    }
    if (text && memchr(text, 0, len)) {
        free(text);
        snprintf(err, errlen, "%s: not a text file", path);
        return -1;
    }
    int rc = suppressions_parse(s, text ? (text[len] = 0, text) : "", path, err, errlen);
    free(text);
    return rc;
}

int suppressions_load_defaults(struct suppressions *s, const char *path, char *err, size_t errlen)
{
    size_t first = s->n;
    int rc = suppressions_load(s, path, err, errlen);
    for (size_t i = first; i < s->n; i++)
        s->b[i].is_default = 1;
    s->stamp = new_stamp(); /* a verdict's meaning changed with the flag */
    return rc;
}

/* ------------------------------------------------------------------ matching */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* valgrind's wildcards: '*' any run of characters ('/' too), '?' any one character;
 * every other character is itself (no brackets: C++ names have them). */
static int glob_match(const char *g, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*g == '*') {
            star = ++g;
            resume = s;
        } else if (*g == '?' || *g == *s) {
            g++;
            s++;
        } else if (star) {
            g = star;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*g == '*')
        g++;
    return *g == 0;
}

static int glob_path(const char *glob, const char *path)
{
    return path && (glob_match(glob, path) || glob_match(glob, base_name(path)));
}

static int frame_matches(const struct frame_pat *p, const struct model_frame *f)
{
    switch (p->type) {
    case PAT_FUN: {
        if (!f->function)
            return 0;
        if (glob_match(p->glob, f->function))
            return 1;
        char plain[1024]; /* "ns::f(int)" is also "ns::f" */
        size_t n = strcspn(f->function, "(");
        if (!f->function[n] || n == 0 || n >= sizeof plain)
            return 0;
        memcpy(plain, f->function, n);
        plain[n] = 0;
        return glob_match(p->glob, plain);
    }
    case PAT_OBJ: return glob_path(p->glob, f->module);
    case PAT_SRC: return glob_path(p->glob, f->file) && (!p->line || p->line == f->line);
    case PAT_ANY: return 1;
    }
    return 0;
}

/* Do the frame lines match f[0..n) from its start (the stack may go on past them)? */
static int block_matches(const struct block *b, const struct model_frame *f, size_t n)
{
    /* ok[j]: the lines from i on match the frames from j on; i runs backwards */
    unsigned char stack_ok[513], *ok = n < sizeof stack_ok ? stack_ok : malloc(n + 1);
    if (!ok)
        return 0;
    memset(ok, 1, n + 1);
    for (size_t i = b->n; i-- > 0;) {
        const struct frame_pat *p = &b->pats[i];
        if (p->type == PAT_ANY) { /* zero frames, or one and the same "..." again */
            for (size_t j = n; j-- > 0;)
                ok[j] = ok[j] || ok[j + 1];
            continue;
        }
        for (size_t j = 0; j < n; j++)
            ok[j] = frame_matches(p, &f[j]) && ok[j + 1];
        ok[n] = 0;
    }
    int r = ok[0];
    if (ok != stack_ok)
        free(ok);
    return r;
}

int suppressions_match(const struct suppressions *s, const struct model_frame *f, size_t n, size_t site,
                       unsigned kind)
{
    if (!s)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        const struct block *b = &s->b[i];
        if (b->kinds && !(b->kinds >> kind & 1))
            continue;
        if (block_matches(b, f, n) || (site > 0 && site < n && block_matches(b, f + site, n - site)))
            return (int)i;
    }
    return -1;
}

/* ------------------------------------------------------------------ writing */

void suppressions_frame_line(const struct model_frame *f, char *buf, size_t len)
{
    if (f->function)
        snprintf(buf, len, "fun:%s", f->function);
    else
        snprintf(buf, len, "obj:%s", f->module ? f->module : "*");
    for (char *c = buf; *c; c++)
        if (*c == '\n')
            *c = ' ';
}

void suppressions_write_block(FILE *out, const char *name, uint32_t kinds, char *const *lines, size_t n)
{
    fputs("{\n   ", out);
    for (const char *c = name; *c; c++)
        fputc(*c == '\n' ? ' ' : *c, out);
    fputs("\n   culeak:Leak\n", out);
    if (kinds) {
        fputs("   match-leak-kinds: ", out);
        int first = 1;
        for (unsigned k = 0; k < CULEAK_KIND_COUNT; k++)
            if (kinds >> k & 1) {
                fprintf(out, "%s%s", first ? "" : ",", culeak_kind_name(k));
                first = 0;
            }
        fputc('\n', out);
    }
    for (size_t i = 0; i < n; i++)
        fprintf(out, "   %s\n", lines[i]);
    fputs("}\n", out);
}
