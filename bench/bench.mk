# make bench: the shim's cost per alloc+free pair on the fake driver (bench/shim_bench.c).
BENCH_BIN := $(BUILD)/bench/shim_bench

$(BENCH_BIN): bench/shim_bench.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS) -ldl

bench: $(BENCH_BIN) $(BUILD)/libculeak.so fakecuda
	$(BENCH_BIN) $(BUILD)/libculeak.so $(BUILD)/fakecuda/libcuda.so.1
