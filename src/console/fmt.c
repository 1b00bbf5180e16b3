/* Sizes, counts and durations as the console shows and reads them. */
#include "fmt.h"
#include "common/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

char *fmt_size(char *buf, size_t len, uint64_t bytes)
{
    return culeak_units_size(buf, len, bytes, CULEAK_UNITS_SHORT);
}

char *fmt_delta(char *buf, size_t len, int64_t bytes)
{
    if (bytes == 0) {
        snprintf(buf, len, "0");
        return buf;
    }
    char tmp[32];
    uint64_t mag = bytes < 0 ? (uint64_t)0 - (uint64_t)bytes : (uint64_t)bytes;
    fmt_size(tmp, sizeof tmp, mag);
    snprintf(buf, len, "%c%s", bytes < 0 ? '-' : '+', tmp);
    return buf;
}

char *fmt_count(char *buf, size_t len, uint64_t n)
{
    if (n < 1000000)
        snprintf(buf, len, "%llu", (unsigned long long)n);
    else if (n < 1000000000ull)
        snprintf(buf, len, "%.1fM", (double)n / 1e6);
    else
        snprintf(buf, len, "%.1fG", (double)n / 1e9);
    return buf;
}

char *fmt_duration(char *buf, size_t len, double s)
{
    if (s < 0)
        s = 0;
    if (s < 60)
        snprintf(buf, len, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, len, "%dh%02dm", (int)(s / 3600), ((int)s % 3600) / 60);
    return buf;
}

int parse_u64(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int parse_size(const char *s, uint64_t *out)
{
    if (!s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s) && *s != '.')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0 || !isfinite(v))
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    static const struct {
        const char *name;
        int shift;
    } units[] = {
        {"", 0},     {"b", 0},    {"k", 10},   {"kb", 10},  {"kib", 10}, {"m", 20},
        {"mb", 20},  {"mib", 20}, {"g", 30},   {"gb", 30},  {"gib", 30}, {"t", 40},
        {"tb", 40},  {"tib", 40},
    };
    size_t ulen = strlen(end);
    while (ulen && isspace((unsigned char)end[ulen - 1]))
        ulen--;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        if (strlen(units[i].name) == ulen && strncasecmp(units[i].name, end, ulen) == 0) {
            double bytes = ldexp(v, units[i].shift);
            if (bytes >= 18446744073709551615.0)
                return -1;
            if (units[i].shift == 0 && v != floor(v))
                return -1; /* fractional bytes */
            *out = (uint64_t)(bytes + 0.5);
            return 0;
        }
    }
    return -1;
}

int parse_seconds(const char *s, double *out)
{
    if (!s || (!isdigit((unsigned char)*s) && *s != '.'))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0 || !isfinite(v))
        return -1;
    double mul;
    if (*end == 0 || strcmp(end, "s") == 0)
        mul = 1;
    else if (strcmp(end, "ms") == 0)
        mul = 1e-3;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        mul = 60;
    else if (strcmp(end, "h") == 0)
        mul = 3600;
    else
        return -1;
    *out = v * mul;
    return 0;
}

char *fmt_fit_command(char *buf, size_t len, const char *cmd, int width)
{
    if (!len)
        return buf;
    buf[0] = 0;
    if (width <= 0)
        return buf;
    if (strlen(cmd) <= (size_t)width) {
        snprintf(buf, len, "%s", cmd);
        return buf;
    }
    size_t first = strcspn(cmd, " ");
    const char *name = cmd;
    for (const char *c = cmd; c < cmd + first; c++)
        if (*c == '/' && c + 1 < cmd + first)
            name = c + 1;
    size_t n = strlen(name);
    if (n <= (size_t)width) {
        snprintf(buf, len, "%s", name);
        return buf;
    }
    /* still too long: the directories of the arguments go too ("python3 /a/b/train.py" ->
     * "python3 train.py"), the program's own words kept */
    char short_args[1024];
    size_t k = 0;
    for (const char *w = name; *w && k + 1 < sizeof short_args;) {
        size_t wl = strcspn(w, " ");
        const char *base = w;
        for (const char *c = w; c < w + wl; c++)
            if (*c == '/' && c + 1 < w + wl)
                base = c + 1;
        k += (size_t)snprintf(short_args + k, sizeof short_args - k, "%.*s", (int)(w + wl - base), base);
        w += wl;
        for (; *w == ' ' && k + 1 < sizeof short_args; w++)
            short_args[k++] = ' ';
        short_args[k] = 0;
    }
    if (k >= sizeof short_args)
        k = sizeof short_args - 1;
    short_args[k] = 0;
    name = short_args;
    n = strlen(name);
    if (n <= (size_t)width) {
        snprintf(buf, len, "%s", name);
        return buf;
    }
    if (width <= 3) {
        snprintf(buf, len, "%.*s", width, name);
        return buf;
    }
    snprintf(buf, len, "%.*s...", width - 3, name);
    return buf;
}

/* Bytes of the first cols UTF-8 characters of s (all of it when shorter); *n_cols gets
 * how many there were. */
static size_t utf8_prefix(const char *s, int cols, int *n_cols)
{
    size_t i = 0;
    int c = 0;
    while (s[i] && c < cols) {
        i++;
        while ((s[i] & 0xC0) == 0x80)
            i++;
        c++;
    }
    *n_cols = c;
    return i;
}

char *fmt_fit_words(char *buf, size_t len, const char *text, int width)
{
    if (!len)
        return buf;
    int cols;
    size_t all = utf8_prefix(text, width > 0 ? width + 1 : 0, &cols);
    if (width <= 0 || cols <= width) { /* fits (or nothing fits) */
        snprintf(buf, len, "%.*s", width > 0 ? (int)all : 0, text);
        return buf;
    }
    if (width <= 3) {
        snprintf(buf, len, "%.*s", (int)utf8_prefix(text, width, &cols), text);
        return buf;
    }
    int keep_cols;
    size_t keep = utf8_prefix(text, width - 3, &keep_cols), cut = keep;
    if (text[keep] != ' ') { /* inside a word: back to the blank before it */
        size_t b = keep;
        while (b > 0 && text[b - 1] != ' ')
            b--;
        if (b * 2 > keep) /* (bytes for columns: near enough to choose) */
            cut = b - 1;
    }
    while (cut > 0 && strchr(" ,;:", text[cut - 1]))
        cut--;
    snprintf(buf, len, "%.*s...", (int)cut, text);
    return buf;
}
