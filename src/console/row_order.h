/* The table's order: by a column, larger first (reverse: smaller first), then by live
 * bytes the same way, then by id (lower first; reverse: higher first), a site's blocks row
 * after its other row. The comparator is the definition; rows_sort gets the same order
 * from radix passes over the numeric columns (about 2 ms for 100k rows where a comparison
 * sort takes 10 to 15) and uses the comparator for the text columns. */
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

#endif
