# The set-up: `make deps` installs the missing packages of tools/packages.deb (tools/deps.sh).
# `make run` and `make test` run it while the Makefile is read, before anything is built,
# so that no compile starts without its libraries whatever -j says; when everything is
# installed that costs one dpkg-query call. CULEAK_NO_DEPS=1 skips it.
.PHONY: deps
deps:
	@tools/deps.sh

ifneq ($(filter run test,$(MAKECMDGOALS)),)
ifneq ($(CULEAK_NO_DEPS),1)
ifneq ($(shell tools/deps.sh >&2 && echo ok),ok)
$(error the set-up stopped (above); run make again once the packages are installed)
endif
endif
endif

# A plain `make` (or `make all`) installs nothing, but when a library's headers are missing
# it stops at once with one line that names them and the command that installs them,
# before a compile fails on the first #include. One preprocessor run when all are there
# (\043: a '#' that make would read as a comment).
CULEAK_BUILD_HEADERS ?= libunwind.h elfutils/libdw.h curses.h readline/readline.h vterm.h zlib.h
ifneq ($(filter all,$(or $(MAKECMDGOALS),all)),)
ifneq ($(CULEAK_NO_DEPS),1)
headers_missing = $(shell cf=$$(for m in libunwind libdw ncursesw readline vterm; do \
        pkg-config --cflags $$m 2>/dev/null; done); \
    printf '\043include <%s>\n' $(CULEAK_BUILD_HEADERS) | $(CC) $$cf -E -x c - -o /dev/null 2>/dev/null || \
    for h in $(CULEAK_BUILD_HEADERS); do \
        printf '\043include <%s>\n' $$h | $(CC) $$cf -E -x c - -o /dev/null 2>/dev/null || printf '%s ' $$h; done)
missing_headers := $(strip $(headers_missing))
ifneq ($(missing_headers),)
$(error no $(missing_headers) here: `make deps` installs the packages that the build needs (tools/packages.deb; README.md, Set-up, names them for other systems))
endif
endif
endif
