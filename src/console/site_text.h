/* A site or frame as the console shows it in a column: "fn at dir/file.c:42". Its path is
 * made relative to the working directory when under it, and when the text is too wide
 * the directory goes first (".../sub/file.c:42", then "file.c:42"), then what follows
 * the line number, then the function's end, so that file:line stays visible. No curses. */
#ifndef CULEAK_CONSOLE_SITE_TEXT_H
#define CULEAK_CONSOLE_SITE_TEXT_H

#include <stddef.h>

/* text fitted into width columns (width <= 0: no limit) with paths relative to cwd (NULL
 * or empty: as they are); returns buf. Texts without " at FILE:LINE" are only cut. */
const char *site_fit(const char *text, const char *cwd, int width, char *buf, size_t len);

#endif
