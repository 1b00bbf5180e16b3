/* The table's order: by a column, larger first, then by live bytes, then by id (lower
 * first), a site's blocks row after its other row; reverse turns all of it around. The
 * comparator is the definition. rows_sort gets the same order from radix passes over the
 * numeric columns (about 3 ms for 100k rows where qsort takes 10 to 15) and over the
 * ranks of the site and module texts (kept in the scratch from one sort to the next:
 * only texts not seen before are compared); the kind column sorts by the comparator.
 * rows_window puts only some places in order. */
#ifndef CULEAK_CONSOLE_ROW_ORDER_H
#define CULEAK_CONSOLE_ROW_ORDER_H

#include "ui.h"

/* <0: a is shown before b; >0: after; 0 only for rows equal in every key. */
int row_order_cmp(const struct row *a, const struct row *b, enum sort_field f, int reverse);

/* Sorts (*rows)[0..n) by row_order_cmp (s: buffers kept from one sort to the next). The
 * sorted rows may come back in another buffer of *cap rows: the old one goes to s. */
void rows_sort(struct row **rows, size_t *cap, size_t n, enum sort_field f, int reverse,
               struct row_sort_scratch *s);
void row_sort_scratch_free(struct row_sort_scratch *s);

/* A frame of a big table needs the order of the rows it shows, not all of it. rows_keys
 * makes the keys of rows[0..n) in s (the kind column: the comparator's; -1: out of
 * memory, use rows_sort); then
 * rows_rank is the place in the order of row i, and rows_window puts the rows of places
 * [lo, hi) there, in order (the others around them in no order): O(n log (hi - lo))
 * comparisons, and only the rows that move are copied. at: a row whose place is
 * in [lo, hi), the one the window is found around; n (none): the window is [0, hi).
 * Returns where the window starts (lo, or 0). */
int rows_keys(const struct row *rows, size_t n, enum sort_field f, int reverse, struct row_sort_scratch *s);
size_t rows_rank(const struct row_sort_scratch *s, size_t n, size_t i);
size_t rows_window(struct row *rows, size_t n, size_t at, size_t lo, size_t hi, struct row_sort_scratch *s);

#endif
