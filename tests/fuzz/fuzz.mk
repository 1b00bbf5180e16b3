# make fuzz: the libFuzzer targets (clang needed): the stream decoder and the model
# (fuzz_model), and a traced process's connection read by the console (fuzz_console).
# tests/fuzz/run.sh builds them and runs each briefly from tests/fuzz/corpus.
FUZZ_CC  ?= clang
FUZZ_BIN := $(BUILD)/fuzz/fuzz_model

FUZZ_GEN := $(BUILD)/gen/report_html_page.c

$(FUZZ_BIN): tests/fuzz/fuzz_model.c $(COMMON_SRC) $(MODEL_SRC) $(FUZZ_GEN) $(wildcard src/model/*.h src/common/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 -g -O1 -fno-omit-frame-pointer \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ tests/fuzz/fuzz_model.c $(COMMON_SRC) $(MODEL_SRC) $(FUZZ_GEN) $(DW_LIBS) -lm -ldl

FUZZ_CONSOLE_BIN := $(BUILD)/fuzz/fuzz_console

$(FUZZ_CONSOLE_BIN): tests/fuzz/fuzz_console.c $(COMMON_SRC) $(MODEL_SRC) $(LAUNCH_SRC) $(CONSOLE_SRC) $(FUZZ_GEN) \
		$(wildcard src/model/*.h src/common/*.h src/console/*.h src/launch/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 -g -O1 -fno-omit-frame-pointer \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ tests/fuzz/fuzz_console.c $(COMMON_SRC) $(MODEL_SRC) $(LAUNCH_SRC) $(CONSOLE_SRC) $(FUZZ_GEN) \
		$(CONSOLE_LIBS) -ldl

fuzz: $(FUZZ_BIN) $(FUZZ_CONSOLE_BIN)
