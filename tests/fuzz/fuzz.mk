# make fuzz: the libFuzzer target for the stream decoder and the model (clang needed).
# tests/fuzz/run.sh builds it and runs it briefly from tests/fuzz/corpus.
FUZZ_CC  ?= clang
FUZZ_BIN := $(BUILD)/fuzz/fuzz_model

$(FUZZ_BIN): tests/fuzz/fuzz_model.c $(COMMON_SRC) $(MODEL_SRC) $(wildcard src/model/*.h src/common/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 -g -O1 -fno-omit-frame-pointer \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ tests/fuzz/fuzz_model.c $(COMMON_SRC) $(MODEL_SRC) $(DW_LIBS) -ldl

fuzz: $(FUZZ_BIN)
