/* Fitting site and frame texts into a column (site_text.h). */
#include "site_text.h"

#include <stdio.h>
#include <string.h>

/* Columns of UTF-8 text (one per code point). */
static int cols(const char *s, size_t n)
{
    int c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Bytes of s that make its first k columns. */
static size_t bytes_of(const char *s, size_t n, int k)
{
    size_t i = 0;
    for (int c = 0; i < n; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80 && c++ == k)
            break;
    }
    return i;
}

/* Finds the last " at PATH:LINE" in text: the head before it, the path, ":LINE", the tail. */
static int split(const char *text, size_t *head, const char **path, size_t *pathlen, const char **line,
                 size_t *linelen)
{
    const char *found = NULL;
    for (const char *p = strstr(text, " at "); p; p = strstr(p + 1, " at ")) {
        const char *s = p + 4, *end = s + strcspn(s, " ");
        if (end > s && end[-1] == ',') /* "FILE:LINE, via LIB:LINE": the rest is the tail */
            end--;
        const char *colon = NULL;
        for (const char *q = s; q < end; q++)
            if (*q == ':')
                colon = q;
        if (!colon || colon == s || colon + 1 == end)
            continue;
        const char *d = colon + 1;
        while (d < end && *d >= '0' && *d <= '9')
            d++;
        if (d != end)
            continue;
        found = p;
        *path = s;
        *pathlen = (size_t)(colon - s);
        *line = colon;
        *linelen = (size_t)(end - colon);
    }
    if (!found)
        return -1;
    *head = (size_t)(found - text);
    return 0;
}

const char *site_fit(const char *text, const char *cwd, int width, char *buf, size_t len)
{
    size_t head = 0, pathlen = 0, linelen = 0;
    const char *path = NULL, *line = NULL;
    if (!len)
        return buf;
    if (split(text, &head, &path, &pathlen, &line, &linelen) != 0) {
        size_t n = strlen(text);
        if (width > 0)
            n = bytes_of(text, n, width);
        snprintf(buf, len, "%.*s", (int)n, text);
        return buf;
    }
    size_t cl = cwd ? strlen(cwd) : 0;
    while (cl > 1 && cwd[cl - 1] == '/')
        cl--;
    if (cl && pathlen > cl + 1 && strncmp(path, cwd, cl) == 0 && path[cl] == '/') {
        path += cl + 1;
        pathlen -= cl + 1;
    }
    const char *tail = line + linelen;
    size_t taillen = strlen(tail);
    /* the directory from the left, one component at a time, then the tail */
    const char *dir = path;
    int cut_dir = 0;
    for (;;) {
        const char *rest = path + (dir - path);
        size_t restlen = pathlen - (size_t)(dir - path);
        int need = cols(text, head) + 4 + (cut_dir ? 4 : 0) + cols(rest, restlen) + cols(line, linelen) +
                   cols(tail, taillen);
        if (width <= 0 || need <= width) {
            snprintf(buf, len, "%.*s at %s%.*s%.*s%.*s", (int)head, text, cut_dir ? ".../" : "", (int)restlen, rest,
                     (int)linelen, line, (int)taillen, tail);
            return buf;
        }
        const char *slash = memchr(dir, '/', restlen);
        if (slash) {
            dir = slash + 1;
            cut_dir = 1;
            continue;
        }
        if (cut_dir) { /* no directory left: the file alone */
            cut_dir = 0;
            path = dir;
            pathlen = restlen;
            continue;
        }
        if (taillen) {
            taillen = 0;
            continue;
        }
        break;
    }
    /* the function's end, then the file's start */
    int fl = cols(path, pathlen) + cols(line, linelen);
    int room = width - 4 - fl;
    if (room >= 4) {
        size_t keep = bytes_of(text, head, room - 3);
        snprintf(buf, len, "%.*s... at %.*s%.*s", (int)keep, text, (int)pathlen, path, (int)linelen, line);
        return buf;
    }
    char fileline[1024];
    snprintf(fileline, sizeof fileline, "%.*s%.*s", (int)pathlen, path, (int)linelen, line);
    size_t n = strlen(fileline);
    int c = cols(fileline, n);
    if (c <= width) {
        snprintf(buf, len, "%s", fileline);
        return buf;
    }
    if (width <= 3) {
        snprintf(buf, len, "%.*s", (int)(n - bytes_of(fileline, n, c - (width > 0 ? width : 0))),
                 fileline + bytes_of(fileline, n, c - (width > 0 ? width : 0)));
        return buf;
    }
    size_t from = bytes_of(fileline, n, c - (width - 3));
    snprintf(buf, len, "...%s", fileline + from);
    return buf;
}
