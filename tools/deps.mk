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
