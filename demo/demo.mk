# The demo programs: `make demo` builds one CUDA program per classic leak into
# $(BUILD)/demo/ (needs nvcc), plus the simulated loop-leak scenario (plain C, run on the
# fake driver). `make demo-sim` builds only the simulation, which is part of `all`: it is
# what `make run` opens without a GPU or nvcc.
NVCC      ?= $(CUDA_HOME)/bin/nvcc
NVCCFLAGS ?= -g -lineinfo
NVCC_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90

DEMO_NAMES := loop_leak early_return ctor_leak double_alloc raii_ok oom
DEMO_BIN   := $(addprefix $(BUILD)/demo/,$(DEMO_NAMES))
DEMO_SIM   := $(BUILD)/demo/loop_leak_sim

.PHONY: demo demo-sim demo-nvcc
all: $(DEMO_SIM)
demo: $(DEMO_BIN) $(DEMO_SIM)
demo-sim: $(DEMO_SIM)

demo-nvcc:
	@command -v $(NVCC) >/dev/null 2>&1 || { \
	    echo "make demo: nvcc not found at $(NVCC); install the CUDA toolkit or set CUDA_HOME=DIR or NVCC=PATH" >&2; \
	    exit 1; }

$(DEMO_BIN): $(BUILD)/demo/%: demo/%.cu demo/demo.h include/culeak.h | demo-nvcc
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) $(NVCC_ARCH) -Iinclude -Idemo -o $@ $< -ldl

# Linked like a driver-API program (-lcuda, no rpath): LD_LIBRARY_PATH picks the driver.
$(DEMO_SIM): demo/sim/loop_leak_sim.c demo/demo.h include/culeak.h | fakecuda
	@test -e $(BUILD)/fakecuda/libcuda.so || { \
	    echo "make demo-sim: $(BUILD)/fakecuda/libcuda.so is missing (built by 'make fakecuda')" >&2; exit 1; }
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Idemo $(CFLAGS) -o $@ $< -L$(BUILD)/fakecuda $(LDFLAGS) -lcuda -ldl
