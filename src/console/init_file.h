/* The init files read at start, as gdb's: ~/.config/culeak/init ($XDG_CONFIG_HOME), then
 * ./.culeakinit only from a directory the user trusted (auto-load safe-path), then -ex/-x.
 * -nx reads none. The rules here are plain functions (no curses): unit-tested. */
#ifndef CULEAK_CONSOLE_INIT_FILE_H
#define CULEAK_CONSOLE_INIT_FILE_H

#include <stddef.h>

/* The user's init file: $XDG_CONFIG_HOME/culeak/init (an absolute XDG_CONFIG_HOME), else
 * $HOME/.config/culeak/init. 0, or -1 when neither is set. */
int init_home_file(char *buf, size_t len);

/* Whether safe_path (DIR[:DIR...], a leading ~/ is $HOME, / trusts everything) allows the
 * file at the absolute, resolved path file: it lies in one of the directories or under it. */
int init_safe_path_allows(const char *safe_path, const char *file);

#endif
