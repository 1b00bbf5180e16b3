/* A recording cut off mid-write (the traced process was killed): culeak_decode_file
 * reports the cut (1) and still delivers every record before it; a cut exactly on a
 * record boundary is a clean end (0). Checked at many offsets of a real recording. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_shim_harness.h"
#include "common/wire.h"

static uint8_t *load(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*len ? *len : 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, *len, f), *len);
    fclose(f);
    return b;
}

static void test_truncated_recordings(void **s)
{
    char dir[64], path[128], cut_path[128];
    struct th_rec rec;
    struct th_run run;
    const char *args[] = {"families", NULL};
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    assert_int_equal(th_record(&rec, &run, dir, "client_static", args, NULL, 0), 0);
    assert_int_equal(rec.rc, 0);
    uint64_t all_records = rec.records;
    th_rec_free(&rec);
    snprintf(path, sizeof path, "%s/rec.culeak", dir);
    snprintf(cut_path, sizeof cut_path, "%s/cut.culeak", dir);
    size_t len;
    uint8_t *b = load(path, &len);

    /* record ends, read here from the framing man/culeak-stream.5 defines (type:u8
     * length:uvarint payload), not by the decoder under test */
    assert_memory_equal(b, CULEAK_MAGIC, CULEAK_MAGIC_LEN);
    size_t ends[8192], nends = 0;
    size_t off = CULEAK_MAGIC_LEN;
    while (off < len && nends < 8192) {
        size_t at = off + 1; /* past the type byte */
        uint64_t plen = 0;
        for (unsigned shift = 0;; shift += 7) {
            assert_true(at < len && shift < 64);
            plen |= (uint64_t)(b[at] & 0x7f) << shift;
            if (!(b[at++] & 0x80))
                break;
        }
        assert_true(plen <= len - at);
        off = at + plen;
        ends[nends++] = off;
    }
    assert_int_equal(off, len);
    assert_int_equal(nends, all_records); /* every record of this stream has a callback */
    assert_true(nends > 10);

    /* offsets: inside the first record, a spread over the file, and around several ends */
    size_t cuts[64], ncut = 0;
    cuts[ncut++] = CULEAK_MAGIC_LEN + 1;
    for (int k = 1; k < 16; k++)
        cuts[ncut++] = CULEAK_MAGIC_LEN + (len - CULEAK_MAGIC_LEN) * (size_t)k / 16;
    for (size_t i = 0; i < nends && ncut + 3 <= 64; i += nends / 10 + 1) {
        cuts[ncut++] = ends[i] - 1;
        cuts[ncut++] = ends[i];
        cuts[ncut++] = ends[i] + 1 < len ? ends[i] + 1 : len - 1;
    }
    cuts[ncut - 1] = len - 1;

    for (size_t c = 0; c < ncut; c++) {
        size_t cut = cuts[c], complete = 0;
        int boundary = 0;
        for (size_t i = 0; i < nends; i++) {
            complete += ends[i] <= cut;
            boundary |= ends[i] == cut;
        }
        FILE *f = fopen(cut_path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(b, 1, cut, f), cut);
        fclose(f);
        th_rec_load(&rec, cut_path);
        if (rec.rc != (boundary ? 0 : 1) || rec.records != complete)
            fail_msg("cut at %zu of %zu: rc %d (want %d), %llu records (want %zu): %s", cut, len, rec.rc,
                     boundary ? 0 : 1, (unsigned long long)rec.records, complete, rec.err);
        th_rec_free(&rec);
    }
    free(b);
    th_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_recordings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
