# make fuzz: the libFuzzer targets (clang needed): the stream decoder and the model
# (fuzz_model), and a traced process's connection read by the console (fuzz_console).
# tests/fuzz/run.sh builds them and runs each briefly from tests/fuzz/corpus.
FUZZ_CC  ?= clang
FUZZ_BIN := $(BUILD)/fuzz/fuzz_model

# The model's HTML report links the page the build generates from report_html.html.
FUZZ_SRC := tests/fuzz/fuzz_model.c $(COMMON_SRC) $(SYMBOLS_SRC) $(MODEL_SRC) $(REPORT_SRC) $(BUILD)/gen/report_html_page.c

$(FUZZ_BIN): $(FUZZ_SRC) $(wildcard src/model/*.h src/symbols/*.h src/report/*.h src/common/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 -g -O1 -fno-omit-frame-pointer \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ $(FUZZ_SRC) $(DW_LIBS) $(ZLIB_LIBS) -lm -ldl

FUZZ_CONSOLE_BIN := $(BUILD)/fuzz/fuzz_console

FUZZ_CONSOLE_SRC := tests/fuzz/fuzz_console.c $(COMMON_SRC) $(SYMBOLS_SRC) $(MODEL_SRC) $(REPORT_SRC) $(LAUNCH_SRC) $(CONSOLE_SRC) \
	$(BUILD)/gen/report_html_page.c

$(FUZZ_CONSOLE_BIN): $(FUZZ_CONSOLE_SRC) \
		$(wildcard src/model/*.h src/symbols/*.h src/report/*.h src/common/*.h src/console/*.h src/launch/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 -g -O1 -fno-omit-frame-pointer \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ $(FUZZ_CONSOLE_SRC) $(CONSOLE_LIBS) -ldl

fuzz: $(FUZZ_BIN) $(FUZZ_CONSOLE_BIN)
