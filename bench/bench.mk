# make bench: the shim's cost per alloc+free pair beside heaptrack's (bench/shim_bench.c),
# on a driver stand-in that does next to nothing (bench/bench_driver.c) and on the fake one.
BENCH_BIN := $(BUILD)/bench/shim_bench
BENCH_DRIVER := $(BUILD)/bench/libcuda_bench.so.1

$(BENCH_BIN): bench/shim_bench.c bench/bench_driver.h bench/bench_time.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS) -ldl

$(BENCH_DRIVER): bench/bench_driver.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 -o $@ $< $(LDFLAGS)

bench: $(BENCH_BIN) $(BENCH_DRIVER) $(BUILD)/libculeak.so fakecuda
	$(BENCH_BIN) $(BUILD)/libculeak.so $(BENCH_DRIVER) $(BUILD)/fakecuda/libcuda.so.1

# make bench also runs bench/model_bench.c: decode+model events/s, bytes per live
# allocation, and the time to symbolize and print a report of 1M events / 10k stacks.
MODEL_BENCH_BIN := $(BUILD)/bench/model_bench

$(MODEL_BENCH_BIN): bench/model_bench.c $(BUILD)/culeak-lib.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit -o $@ $< $(BUILD)/culeak-lib.a $(LDFLAGS) $(CONSOLE_LIBS) -ldl

.PHONY: bench-model
bench-model: $(MODEL_BENCH_BIN)
	$(MODEL_BENCH_BIN)

bench: bench-model

# make bench also runs bench/console_bench.c: 1M live allocations over 100k stacks through
# the console's path; events/s ingested, time per table frame, memory.
CONSOLE_BENCH_BIN := $(BUILD)/bench/console_bench

$(CONSOLE_BENCH_BIN): bench/console_bench.c $(BUILD)/culeak-lib.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit -o $@ $< $(BUILD)/culeak-lib.a $(LDFLAGS) $(CONSOLE_LIBS) -ldl

.PHONY: bench-console
bench-console: $(CONSOLE_BENCH_BIN)
	$(CONSOLE_BENCH_BIN)

bench: bench-console

# make bench also runs bench/suspects_bench.c: what a mark costs the model (growth
# suspects) at 1k and 10k live sites, with a few changes between marks.
SUSPECTS_BENCH_BIN := $(BUILD)/bench/suspects_bench

$(SUSPECTS_BENCH_BIN): bench/suspects_bench.c $(BUILD)/culeak-lib.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit -o $@ $< $(BUILD)/culeak-lib.a $(LDFLAGS) $(CONSOLE_LIBS) -ldl

.PHONY: bench-suspects
bench-suspects: $(SUSPECTS_BENCH_BIN)
	$(SUSPECTS_BENCH_BIN)

bench: bench-suspects

# make bench also runs bench/report_bench.c: `culeak report` at scale, on recordings that
# bench/gen_recording.c writes with the wire format's encoders: 100M events of one
# process, and 10,000 processes of 100 events, running code of their own and one code
# (wall, CPU, peak RSS: median and range of 3 runs). REPORT_BENCH_ARGS="EVENTS PROCESSES
# RUNS" changes the sizes (0 skips one).
GEN_RECORDING_BIN := $(BUILD)/bench/gen_recording
REPORT_BENCH_BIN := $(BUILD)/bench/report_bench
REPORT_BENCH_ARGS ?= 100000000 10000 3

$(GEN_RECORDING_BIN): bench/gen_recording.c $(BUILD)/culeak-lib.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/culeak-lib.a $(LDFLAGS)

$(REPORT_BENCH_BIN): bench/report_bench.c bench/bench_time.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS)

.PHONY: bench-report
bench-report: $(REPORT_BENCH_BIN) $(GEN_RECORDING_BIN) $(BUILD)/culeak
	$(REPORT_BENCH_BIN) $(BUILD)/culeak $(GEN_RECORDING_BIN) $(BUILD)/bench/scale $(REPORT_BENCH_ARGS)

bench: bench-report
# make bench also runs bench/holders_bench.py: the holders walk's seconds in a process of
# about 1M Python objects (the bound is 1 s).
.PHONY: bench-holders
bench-holders: fakecuda
	LD_LIBRARY_PATH=$(BUILD)/fakecuda FAKE_C10=$(BUILD)/fakecuda/torch/lib/libc10_cuda.so python3 bench/holders_bench.py

bench: bench-holders

# make bench also runs bench/ranks_bench.c: the cross-rank view of 1,024 recordings of 1M
# events each (8 ranks a host, one growing): `culeak report DIR`'s wall, CPU and peak RSS
# (median and range of 3 runs). RANKS_BENCH_ARGS="RANKS EVENTS RUNS" changes the sizes.
RANKS_BENCH_BIN := $(BUILD)/bench/ranks_bench
RANKS_BENCH_ARGS ?= 1024 1000000 3

$(RANKS_BENCH_BIN): bench/ranks_bench.c bench/bench_time.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS)

.PHONY: bench-ranks
bench-ranks: $(RANKS_BENCH_BIN) $(GEN_RECORDING_BIN) $(BUILD)/culeak
	$(RANKS_BENCH_BIN) $(BUILD)/culeak $(GEN_RECORDING_BIN) $(BUILD)/bench/ranks $(RANKS_BENCH_ARGS)

bench: bench-ranks

# make bench also runs bench/aggregate_bench.c: an always-on recording of a job of 10k
# live call sites at 100k events/s on the driver stand-in, full and --aggregate: recording
# per hour, the recorder's memory over the run, the job's and the recorder's CPU per
# event, report time. AGGREGATE_BENCH_ARGS="SECONDS REPS" (default 30 s, 3 runs).
AGGREGATE_BENCH_BIN := $(BUILD)/bench/aggregate_bench
AGGREGATE_BENCH_ARGS ?= 30 3

$(AGGREGATE_BENCH_BIN): bench/aggregate_bench.c bench/bench_driver.h bench/bench_time.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS) -ldl

.PHONY: bench-aggregate
bench-aggregate: $(AGGREGATE_BENCH_BIN) $(BENCH_DRIVER) $(BUILD)/culeak $(BUILD)/libculeak.so
	$(AGGREGATE_BENCH_BIN) $(BUILD)/culeak $(BENCH_DRIVER) $(BUILD)/bench/aggregate $(AGGREGATE_BENCH_ARGS)

bench: bench-aggregate
