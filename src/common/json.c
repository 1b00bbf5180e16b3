/* JSON string escaping. */
#include "json.h"

#include <string.h>

/* Length of a valid UTF-8 sequence starting at s (max n bytes), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

void json_write_str(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    putc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            putc('\\', f);
            putc(c, f);
            i++;
        } else if (c == '\n') {
            fputs("\\n", f);
            i++;
        } else if (c == '\t') {
            fputs("\\t", f);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
            i++;
        } else if (c < 0x80) {
            putc(c, f);
            i++;
        } else {
            size_t l = utf8_len(s + i, n - i);
            if (l) {
                fwrite(s + i, 1, l, f);
                i += l;
            } else {
                fprintf(f, "\\u%04x", c); /* a stray byte, shown as its Latin-1 code point */
                i++;
            }
        }
    }
    putc('"', f);
}

void json_write_cstr(FILE *f, const char *s)
{
    if (s)
        json_write_str(f, s, strlen(s));
    else
        fputs("null", f);
}
