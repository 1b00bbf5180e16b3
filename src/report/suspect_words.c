/* The words of growth suspects (suspects.h): sizes, counts and durations as people say
 * them, and the forecast's sentence. No libm: the fuzz targets link none. */
#include "model/suspects.h"
#include "common/units.h"

#include <inttypes.h>
#include <stdio.h>

void model_format_size(char *buf, size_t len, double bytes)
{
    double v = (bytes < 0 ? -bytes : bytes) + 0.5; /* a rate's fraction of a byte: the nearest byte */
    char size[32];
    culeak_units_size(size, sizeof size, v >= 0x1p64 ? UINT64_MAX : (uint64_t)v, CULEAK_UNITS_SHORT);
    snprintf(buf, len, "%s%s", bytes < 0 ? "-" : "", size);
}

/* v with thousands separators: 1234567 -> "1,234,567" */
static int put_grouped(char *buf, size_t len, uint64_t v)
{
    if (v < 1000)
        return snprintf(buf, len, "%" PRIu64, v);
    int n = put_grouped(buf, len, v / 1000);
    if (n < 0 || (size_t)n >= len)
        return n;
    return n + snprintf(buf + n, len - (size_t)n, ",%03" PRIu64, v % 1000);
}

void model_format_count(char *buf, size_t len, double n)
{
    /* two significant digits; millions and up in words: ~41,000, ~9.5 million, ~120 million */
    static const struct {
        uint64_t unit;
        const char *name;
    } words[] = {{1000000000000ull, "trillion"}, {1000000000ull, "billion"}, {1000000ull, "million"}};
    if (n < 0)
        n = 0;
    if (n > 1e18) /* more than anything counts to here: said as the most we say */
        n = 1e18;
    uint64_t v = (uint64_t)(n + 0.5), scale = 1;
    while (v / scale >= 100)
        scale *= 10;
    v = (v + scale / 2) / scale * scale;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        uint64_t u = words[i].unit;
        if (v < u)
            continue;
        int w = snprintf(buf, len, "~");
        w += put_grouped(buf + w, len - (size_t)w, v / u);
        uint64_t tenths = v % u / (u / 10); /* two significant digits: at most one decimal */
        if (tenths && w >= 0 && (size_t)w < len)
            w += snprintf(buf + w, len - (size_t)w, ".%" PRIu64, tenths);
        if (w >= 0 && (size_t)w < len)
            snprintf(buf + w, len - (size_t)w, " %s", words[i].name);
        return;
    }
    int w = snprintf(buf, len, "~");
    put_grouped(buf + w, len - (size_t)w, v);
}

void model_format_duration(char *buf, size_t len, double s)
{
    const double day = 86400, month = 30.44 * day, year = 365.25 * day;
    if (s < 1)
        snprintf(buf, len, "under a second");
    else if (s < 90)
        snprintf(buf, len, "~%.0f s", s);
    else if (s < 90 * 60)
        snprintf(buf, len, "~%.0f min", s / 60);
    else if (s < 2 * day)
        snprintf(buf, len, "~%.1f h", s / 3600);
    else if (s < 10 * day)
        snprintf(buf, len, "~%.1f days", s / day);
    else if (s < 60 * day)
        snprintf(buf, len, "~%.0f days", s / day);
    else if (s < 2 * year)
        snprintf(buf, len, "~%.0f months", s / month);
    else if (s < 10 * year)
        snprintf(buf, len, "~%.1f years", s / year);
    else {
        char n[48];
        model_format_count(n, sizeof n, s / year);
        snprintf(buf, len, "%s years", n);
    }
}

int model_format_interval(char *buf, size_t len, double s)
{
    if (!(s > 0)) {
        snprintf(buf, len, "%s", "");
        return 0;
    }
    if (s >= 10)
        snprintf(buf, len, "%.0f s", s);
    else if (s >= 0.1)
        snprintf(buf, len, "%.2f s", s);
    else if (s >= 1e-3)
        snprintf(buf, len, "%.1f ms", s * 1e3);
    else if (s >= 1e-6)
        snprintf(buf, len, "%.0f \xc2\xb5s", s * 1e6);
    else
        snprintf(buf, len, "under 1 \xc2\xb5s");
    return 1;
}

void model_suspect_fill_text(const struct model_suspect *s, char *buf, size_t len)
{
    char when[48], dur[48] = "";
    model_format_count(when, sizeof when, s->fill_marks);
    if (s->interval_s > 0) { /* marks at one instant: no time to speak of */
        char d[40];
        model_format_duration(d, sizeof d, s->fill_s);
        snprintf(dur, sizeof dur, " (%s)", d);
    }
    const char *its = s->fill_marks == 1 ? "" : "s";
    if (s->running)
        snprintf(buf, len, "fills device %d in %s iteration%s%s", s->device, when, its, dur);
    else
        snprintf(buf, len, "would have filled device %d in %s more iteration%s%s", s->device, when, its, dur);
}

void model_suspect_forecast(const struct model_suspect *s, char *buf, size_t len)
{
    char per[32], iv[32], each[48] = "", fill[160];
    model_format_size(per, sizeof per, (double)s->per_mark);
    if (model_format_interval(iv, sizeof iv, s->interval_s))
        snprintf(each, sizeof each, " (%s each)", iv);
    if (!s->forecast) {
        snprintf(buf, len, "at +%s per iteration%s; the device's free memory is unknown", per, each);
        return;
    }
    if (s->free_bytes == 0) {
        snprintf(buf, len, "at +%s per iteration%s; device %d has no free memory left", per, each, s->device);
        return;
    }
    model_suspect_fill_text(s, fill, sizeof fill);
    snprintf(buf, len, "at +%s per iteration%s, this site %s", per, each, fill);
}

void model_suspect_rise_words(const struct model_suspect *s, char *buf, size_t len)
{
    if (s->stepwise) /* not the 80% rule: say why it is a suspect */
        snprintf(buf, len, "rose in steps at %u of the last %u marks and never fell", s->rises, s->intervals);
    else
        snprintf(buf, len, "rose at %u of the last %u marks", s->rises, s->intervals);
}
