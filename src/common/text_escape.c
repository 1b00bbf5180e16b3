/* Plain-text escaping of strings from a recording (text_escape.h). */
#include "text_escape.h"

#include <string.h>

/* Length of a valid UTF-8 sequence at s (at most n bytes) that is no C1 control
 * (U+0080..U+009F, which terminals may take as escape sequences), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    if (len == 0 || len > n || (s[0] == 0xc2 && s[1] < 0xa0))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

/* The escape for s[0] into out (room for 7 bytes), or 0 when s[0..*n) goes as it is. */
static size_t escape_one(const unsigned char *s, size_t avail, char *out, size_t *n)
{
    unsigned char c = s[0];
    *n = 1;
    if (c == '\\')
        return (size_t)snprintf(out, 8, "\\\\");
    if (c == '\n')
        return (size_t)snprintf(out, 8, "\\n");
    if (c == '\t')
        return (size_t)snprintf(out, 8, "\\t");
    if (c < 0x20 || c == 0x7f)
        return (size_t)snprintf(out, 8, "\\u%04x", c);
    if (c < 0x80)
        return 0;
    size_t l = utf8_len(s, avail);
    if (l) {
        *n = l;
        return 0;
    }
    return (size_t)snprintf(out, 8, "\\x%02x", c);
}

void text_write_escaped(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t len = strlen(str), run = 0; /* characters that stay as they are, written at once */
    for (size_t i = 0; i < len;) {
        char esc[8];
        size_t n, k = escape_one(s + i, len - i, esc, &n);
        if (k) {
            fwrite(s + i - run, 1, run, f);
            run = 0;
            fwrite(esc, 1, k, f);
        } else {
            run += n;
        }
        i += n;
    }
    fwrite(s + len - run, 1, run, f);
}

char *text_escape(char *buf, size_t cap, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t len = strlen(str), o = 0;
    if (!cap)
        return buf;
    for (size_t i = 0; i < len;) {
        char esc[8];
        size_t n, k = escape_one(s + i, len - i, esc, &n);
        const char *from = k ? esc : (const char *)s + i;
        size_t w = k ? k : n;
        if (o + w >= cap)
            break;
        memcpy(buf + o, from, w);
        o += w;
        i += n;
    }
    buf[o] = 0;
    return buf;
}
