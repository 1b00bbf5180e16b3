/* Text from a recording (a program's arguments, host and module names, symbols, mark
 * labels) written into a plain-text report: a newline in it would forge report lines and
 * an escape sequence would reach the terminal, so control characters are escaped as JSON
 * escapes them (\n, \t, \u001b), a backslash doubled and a byte that is not UTF-8
 * written as \xHH. */
#ifndef CULEAK_TEXT_ESCAPE_H
#define CULEAK_TEXT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

void text_write_escaped(FILE *f, const char *s);
/* The same into buf (cut at a whole escape when it does not fit); returns buf. */
char *text_escape(char *buf, size_t len, const char *s);

#endif
