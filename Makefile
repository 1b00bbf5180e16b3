# culeak: a GPU-memory leak debugger. `make` builds everything, `make test` runs the suite,
# `make run` opens the console on a demo. SAN=1 builds with ASan+UBSan into build-san/.
# No CUDA toolkit is needed: src/cuda declares the CUDA API culeak uses. CUDA_HOME (nvcc)
# is used only by the real demos (demo/demo.mk) and the toolkit comparison test.

# `make run` and `make test` first install the missing packages of tools/packages.deb.
.DEFAULT_GOAL := all
include tools/deps.mk

CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
CC        ?= cc
ifeq ($(SAN),1)
BUILD     ?= build-san
SANFLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=undefined
else
BUILD     ?= build
SANFLAGS  :=
endif

# The one version number (the VERSION file): culeak --version, the JSON reports, culeak.pc
# and the wheel's name.
VERSION   := $(shell cat VERSION)

WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
# Includes name their folder (#include "model/model.h"); tools/layers.sh checks that each folder
# includes only the layers below it.
CPPFLAGS  += -D_GNU_SOURCE -Isrc -Iinclude
CPPFLAGS  += -DCULEAK_VERSION='"$(VERSION)"'
CFLAGS    ?= -O2 -g
CFLAGS    += -std=c11 -fno-omit-frame-pointer $(WARN) $(SANFLAGS)
LDFLAGS   += $(SANFLAGS)

# Compiler and linker flags of the libraries, from pkg-config where the library ships a
# .pc file; $(call pc_libs,MODULES,FLAGS) falls back to FLAGS where it does not.
PKG_CONFIG ?= pkg-config
pc_cflags = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pc_libs   = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null || echo '$(2)')
UNWIND_LIBS   := $(call pc_libs,libunwind,-lunwind)
DW_LIBS       := $(call pc_libs,libdw libelf,-ldw -lelf)
READLINE_LIBS := $(call pc_libs,readline,-lreadline)
CURSES_LIBS   := $(call pc_libs,ncursesw,-lncursesw -ltinfo)
CMOCKA_LIBS   := $(call pc_libs,cmocka,-lcmocka)
VTERM_LIBS    := $(call pc_libs,vterm,-lvterm)
ZLIB_LIBS     := $(call pc_libs,zlib,-lz)
CPPFLAGS      += $(sort $(foreach m,libunwind libdw readline ncursesw cmocka vterm,$(call pc_cflags,$(m))))

COMMON_SRC  := $(wildcard src/common/*.c)
SHIM_SRC    := $(wildcard src/shim/*.c)
SYMBOLS_SRC := $(wildcard src/symbols/*.c)
MODEL_SRC   := $(wildcard src/model/*.c)
REPORT_SRC  := $(wildcard src/report/*.c)
CLI_SRC     := $(filter-out src/cli/main.c,$(wildcard src/cli/*.c))
LAUNCH_SRC  := $(wildcard src/launch/*.c)
CONSOLE_SRC := $(wildcard src/console/*.c)
# tests/unit: the unit tests; tests/shim: the shim's process tests (each runs programs of
# the fake driver under libculeak.so). One binary each in $(BUILD)/tests.
UNIT_SRC    := $(wildcard tests/unit/test_*.c tests/shim/test_*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
pic = $(patsubst %.c,$(BUILD)/pic/%.o,$(1))

LIB_OBJ   := $(call obj,$(COMMON_SRC) $(SYMBOLS_SRC) $(MODEL_SRC) $(REPORT_SRC) $(LAUNCH_SRC) $(CLI_SRC) $(CONSOLE_SRC)) $(BUILD)/obj/report_html_page.o
# The shim links only the parts of common/ it uses: the API and frameworks tables, the stream's records,
# the ring, the output file names and the secure-exec test (wire_encode.c in its LTO unit:
# the encoder inlines into the writer); -z defs makes a symbol it
# lacks an error at its link, not at the job's start.
SHIM_COMMON_SRC := $(addprefix src/common/,apis.c frameworks.c outpath.c ring.c secure_exec.c wire.c wire_encode.c)
SHIM_OBJ  := $(call pic,$(SHIM_SRC) $(SHIM_COMMON_SRC))
UNIT_BIN  := $(patsubst %.c,$(BUILD)/tests/%,$(notdir $(UNIT_SRC)))

CONSOLE_LIBS := $(VTERM_LIBS) $(DW_LIBS) $(READLINE_LIBS) $(CURSES_LIBS) $(ZLIB_LIBS) -lutil -lpthread -lm
SHIM_LIBS    := -ldl -lpthread

.PHONY: all test run demo install uninstall clean lint bench fuzz
all: $(BUILD)/libculeak.so $(BUILD)/libculeak_unwind.so $(BUILD)/libculeak_torch.so $(BUILD)/culeak fakecuda

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# The shim is optimized as one unit at its link (-flto): its path from a wrapper to the
# ring crosses a dozen files, whose small functions are then inlined (7% fewer
# instructions per event).
SHIM_LTO := -flto=auto

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SHIM_LTO) -fPIC -fvisibility=hidden -MMD -MP -c $< -o $@

# The HTML report's page, compiled in as one C string (every line quoted and escaped).
$(BUILD)/gen/report_html_page.c: src/report/report_html.html
	@mkdir -p $(@D)
	{ echo 'const char culeak_report_html_page[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $<; echo ';'; } >$@

$(BUILD)/obj/report_html_page.o: $(BUILD)/gen/report_html_page.c
	$(CC) $(CFLAGS) -Wno-overlength-strings -c $< -o $@

# -Bsymbolic-functions: the shim's own references to its wrappers (the hook table) are its
# own also when it is loaded after the driver into a running process (culeak attach).
$(BUILD)/libculeak.so: $(SHIM_OBJ) src/shim/exports.map
	$(CC) $(CFLAGS) $(SHIM_LTO) -fPIC -shared -Wl,--version-script=src/shim/exports.map -Wl,-z,defs -Wl,-z,now -Wl,-Bsymbolic-functions -o $@ $(SHIM_OBJ) $(LDFLAGS) $(SHIM_LIBS)

# The library through which the shim loads libunwind privately (src/unwind_lib): the
# shim itself links nothing but the C library.
$(BUILD)/libculeak_unwind.so: src/unwind_lib/unwind_lib.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -o $@ $< $(LDFLAGS) -Wl,--no-as-needed $(UNWIND_LIBS)

# The C++ bridge to PyTorch's caching allocator: the shim loads it only next to libc10_cuda.
CXX       ?= c++
BRIDGE_CXXFLAGS := -std=c++17 -O2 -g -fPIC -fvisibility=hidden -Wall -Wextra -Werror $(SANFLAGS)
$(BUILD)/libculeak_torch.so: src/torch_bridge/bridge.cpp
	@mkdir -p $(@D)
	$(CXX) $(BRIDGE_CXXFLAGS) -shared -o $@ $< $(LDFLAGS) -ldl

$(LIB_OBJ) $(call obj,src/cli/main.c): VERSION

$(BUILD)/culeak-lib.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/culeak: $(call obj,src/cli/main.c) $(BUILD)/culeak-lib.a
	$(CC) -o $@ $^ $(LDFLAGS) $(CONSOLE_LIBS)

TEST_LINK = $(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit -o $@ $< $(BUILD)/culeak-lib.a $(LDFLAGS) $(CMOCKA_LIBS) $(CONSOLE_LIBS) -ldl
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/culeak-lib.a
	@mkdir -p $(@D)
	$(TEST_LINK)
$(BUILD)/tests/%: tests/shim/%.c $(BUILD)/culeak-lib.a
	@mkdir -p $(@D)
	$(TEST_LINK)

# test_trace_tree compiles the shim's trace tree and its per-thread blocks in;
# test_thread_block, test_backward and test_untraced their files of the shim likewise,
# test_inventory and test_patch the attach's inventory and patcher, test_torch_range
# the torch blocks' range check.
$(BUILD)/tests/test_trace_tree: src/shim/trace_tree.c src/shim/thread_block.c src/shim/shim.h
$(BUILD)/tests/test_thread_block: src/shim/thread_block.c src/shim/shim.h
$(BUILD)/tests/test_backward: src/shim/backward.c src/shim/shim.h
$(BUILD)/tests/test_untraced: src/shim/untraced.c src/shim/shim.h
$(BUILD)/tests/test_inventory: src/shim/inventory.c src/shim/shim.h src/shim/hooks.h
$(BUILD)/tests/test_patch: src/shim/patch.c src/shim/shim.h src/shim/hooks.h
$(BUILD)/tests/test_torch_range: src/shim/torch_blocks.c src/shim/shim.h src/shim/hooks.h

include tests/fakecuda/fakecuda.mk
include tests/unit/site_fixture.mk
-include demo/demo.mk
-include bench/bench.mk
-include tests/fuzz/fuzz.mk

test: all $(UNIT_BIN)
	BUILD=$(BUILD) tests/run.sh

run: all
	BUILD=$(BUILD) demo/run.sh

# Mutation testing, not part of `make test`: each mutation in tests/mutants/mutations.txt,
# alone in a scratch copy, against the tests of its file (tests/mutants/groups.txt), then
# the whole suite when those pass. At the lowest priority: the machine stays usable.
# MUTANTS_ARGS: run.py's options and name filters (MUTANTS_ARGS='--quick shim:').
.PHONY: mutants
mutants:
	nice -n 19 tests/mutants/run.py $(MUTANTS_ARGS)

# Installed layout: culeak finds its shim at <bin>/../lib/culeak/libculeak.so.
BINDIR     = $(PREFIX)/bin
LIBDIR     = $(PREFIX)/lib
INCLUDEDIR = $(PREFIX)/include
MANDIR     = $(PREFIX)/share/man
DATADIR    = $(PREFIX)/share
MAN_PAGES  = $(wildcard man/*.1 man/*.3 man/*.5)
INSTALLED  = $(BINDIR)/culeak $(LIBDIR)/culeak/libculeak.so $(LIBDIR)/culeak/libculeak_unwind.so \
             $(LIBDIR)/culeak/libculeak_torch.so \
             $(INCLUDEDIR)/culeak.h \
             $(LIBDIR)/pkgconfig/culeak.pc $(DATADIR)/culeak/python/culeak.py \
             $(DATADIR)/culeak/python/sitecustomize.py $(DATADIR)/culeak/python/culeak_attach.py \
             $(DATADIR)/culeak/python/culeak_holders.py $(DATADIR)/culeak/python/culeak_holders_ask.py \
             $(DATADIR)/culeak/default.supp \
             $(foreach p,$(MAN_PAGES),$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(notdir $(p)))

install: $(BUILD)/culeak $(BUILD)/libculeak.so $(BUILD)/libculeak_unwind.so $(BUILD)/libculeak_torch.so
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/culeak $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)
	install -m 755 $(BUILD)/culeak $(DESTDIR)$(BINDIR)/culeak
	install -m 755 $(BUILD)/libculeak.so $(DESTDIR)$(LIBDIR)/culeak/libculeak.so
	install -m 755 $(BUILD)/libculeak_unwind.so $(DESTDIR)$(LIBDIR)/culeak/libculeak_unwind.so
	install -m 755 $(BUILD)/libculeak_torch.so $(DESTDIR)$(LIBDIR)/culeak/libculeak_torch.so
	install -m 644 include/culeak.h $(DESTDIR)$(INCLUDEDIR)/culeak.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' include/culeak.pc.in \
	    > $(DESTDIR)$(LIBDIR)/pkgconfig/culeak.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/culeak.pc
	install -d $(DESTDIR)$(DATADIR)/culeak/python
	install -m 644 python/culeak.py $(DESTDIR)$(DATADIR)/culeak/python/culeak.py
	install -m 644 python/sitecustomize.py $(DESTDIR)$(DATADIR)/culeak/python/sitecustomize.py
	install -m 644 python/culeak_attach.py $(DESTDIR)$(DATADIR)/culeak/python/culeak_attach.py
	install -m 644 python/culeak_holders.py $(DESTDIR)$(DATADIR)/culeak/python/culeak_holders.py
	install -m 644 python/culeak_holders_ask.py $(DESTDIR)$(DATADIR)/culeak/python/culeak_holders_ask.py
	install -m 644 share/culeak/default.supp $(DESTDIR)$(DATADIR)/culeak/default.supp
	@set -e; for page in $(MAN_PAGES); do \
	    dir=$(DESTDIR)$(MANDIR)/man$${page##*.}; \
	    echo "install -m 644 $$page $$dir"; install -d $$dir; install -m 644 $$page $$dir; done

# `make wheel`: dist/culeak-VERSION-py3-none-manylinux_2_N_x86_64.whl, for
# `pip install`: culeak with the libraries it needs in culeak.libs/ (tools/wheel.py).
DIST ?= dist
.PHONY: wheel
wheel: $(BUILD)/culeak $(BUILD)/libculeak.so $(BUILD)/libculeak_unwind.so $(BUILD)/libculeak_torch.so
	tools/wheel.py $(BUILD) $(DIST)

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rmdir $(DESTDIR)$(LIBDIR)/culeak $(DESTDIR)$(DATADIR)/culeak/python $(DESTDIR)$(DATADIR)/culeak 2>/dev/null || true

lint:
	@tools/layers.sh >/dev/null || tools/layers.sh
	@set -e; for page in $(wildcard man/*.[0-9]); do mandoc -Tlint -Wwarning $$page; done

clean:
	rm -rf build build-san

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
