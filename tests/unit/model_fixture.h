/* Test helper (cmocka tests of the model): a model that looks through libcudart only, and
 * a built stream fed into it. Include after cmocka.h, model.h and stream_builder.h. */
#ifndef CULEAK_TEST_MODEL_FIXTURE_H
#define CULEAK_TEST_MODEL_FIXTURE_H

/* Feeds b's bytes as one stream: MODEL_FEED_OK, or the feed's or finish's result. */
static inline int load(struct model *m, struct sb *b)
{
    struct model_stream *s = model_stream_open(m);
    assert_non_null(s);
    int rc = model_stream_feed(s, b->buf, b->n);
    if (rc == MODEL_FEED_OK)
        rc = model_stream_finish(s);
    model_stream_close(s);
    return rc;
}

/* Feeds b whole into m, which must take it; b is freed. */
static inline void feed_all(struct model *m, struct sb *b)
{
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    sb_free(b);
}

static inline struct model *new_model(void)
{
    struct model_options o = {.no_default_skips = 1, .skip_modules = "libcudart*"};
    struct model *m = model_new(&o);
    assert_non_null(m);
    return m;
}

#endif
