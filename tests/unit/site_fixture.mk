# The program tests/unit/test_model_site.c symbolizes: a -g "user" unit, a "CUDA runtime"
# linked in without -g (like nvcc's static cudart), then another -g unit. Built with
# plain flags (no sanitizers): only its symbols and DWARF matter.
SITE_FIXTURE     := $(BUILD)/tests/site_fixture
SITE_FIXTURE_DIR := tests/unit/site_fixture

$(SITE_FIXTURE): $(wildcard $(SITE_FIXTURE_DIR)/*.c $(SITE_FIXTURE_DIR)/include/*.h)
	@mkdir -p $(@D)/site_fixture.objs
	$(CC) -O0 -g -I$(SITE_FIXTURE_DIR)/include -c $(SITE_FIXTURE_DIR)/user.c -o $(@D)/site_fixture.objs/user.o
	$(CC) -O0 -g0 -c $(SITE_FIXTURE_DIR)/cudart_fake.c -o $(@D)/site_fixture.objs/cudart_fake.o
	$(CC) -O0 -g -c $(SITE_FIXTURE_DIR)/tail.c -o $(@D)/site_fixture.objs/tail.o
	$(CC) -o $@ $(@D)/site_fixture.objs/user.o $(@D)/site_fixture.objs/cudart_fake.o $(@D)/site_fixture.objs/tail.o

$(BUILD)/tests/test_model_site: $(SITE_FIXTURE)
