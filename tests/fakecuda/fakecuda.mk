# The fake CUDA driver (a test double) and its client programs; owned by tests/fakecuda.
#   $(FAKE)/libcuda.so.1      fake driver, real CUDA 13 ABI (+ libcuda.so link)
#   $(FAKE)/libcudart.so.13   fake shared runtime on top of it (+ libcudart.so link)
#   $(FAKE)/client_*          programs reaching the driver each way a real program does
FAKE          := $(BUILD)/fakecuda
FAKE_LIB_SRC  := $(wildcard tests/fakecuda/fake_*.c)
FAKE_LIB_OBJ  := $(patsubst %.c,$(BUILD)/fakepic/%.o,$(FAKE_LIB_SRC))
FAKE_CLIENTS  := $(addprefix $(FAKE)/,client_static client_driver client_dlsym client_runtime client_mixed_fp client_hostile)
FAKE_CPPFLAGS := -Itests/fakecuda

.PHONY: fakecuda
fakecuda: $(FAKE)/libcuda.so.1 $(FAKE)/libcuda.so $(FAKE)/libcudart.so.13 $(FAKE)/libcudart.so $(FAKE_CLIENTS) \
	$(FAKE)/libinterposer.so $(FAKE)/libcount_phdr.so $(FAKE)/libdlsym_counter.so $(FAKE)/torch/lib/libc10_cuda.so $(FAKE)/torch/version.py \
	$(FAKE)/torch-shifted/lib/libc10_cuda.so $(FAKE)/torch/lib/libtorch_cuda.so $(FAKE)/client_libs

# Default visibility (a version script limits the exports); -Bsymbolic-functions binds the
# fake's own references locally, so the addresses cuGetProcAddress hands out are the
# exported definitions even when an interposer exports the same names.
$(BUILD)/fakepic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(FAKE_CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=default -MMD -MP -c $< -o $@

$(FAKE)/libcuda.so.1: $(FAKE_LIB_OBJ) tests/fakecuda/libcuda.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libcuda.so.1 -Wl,--version-script=tests/fakecuda/libcuda.map \
		-Wl,-Bsymbolic-functions -o $@ $(filter %.o,$^) $(LDFLAGS) -lpthread

$(FAKE)/libcuda.so: $(FAKE)/libcuda.so.1
	ln -sf libcuda.so.1 $@

$(FAKE)/libcudart.so.13: $(BUILD)/fakepic/tests/fakecuda/cudart/cudart.o tests/fakecuda/cudart/libcudart.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libcudart.so.13 -Wl,--version-script=tests/fakecuda/cudart/libcudart.map \
		-o $@ $(filter %.o,$^) $(LDFLAGS) -ldl -lpthread

$(FAKE)/libcudart.so: $(FAKE)/libcudart.so.13
	ln -sf libcudart.so.13 $@

$(FAKE)/libinterposer.so: $(BUILD)/fakepic/tests/fakecuda/interposer.o
	$(CC) -shared -o $@ $^ $(LDFLAGS)

# Counts the shim's dl_iterate_phdr calls (the loader lock), preloaded after it.
$(FAKE)/libcount_phdr.so: $(BUILD)/fakepic/tests/fakecuda/count_phdr.o
	$(CC) -shared -o $@ $^ $(LDFLAGS) -ldl -lpthread

# Another tool wrapping dlsym, preloaded after the shim.
$(FAKE)/libdlsym_counter.so: $(BUILD)/fakepic/tests/fakecuda/dlsym_counter.o
	$(CC) -shared -o $@ $^ $(LDFLAGS) -ldl

FAKE_CLIENT_COMMON := tests/fakecuda/client_scenarios.c
FAKE_CLIENT_HDRS   := tests/fakecuda/client_api.h tests/fakecuda/scenarios.h tests/fakecuda/fakecuda.h include/culeak.h

# client_static and client_dlsym find libcuda.so.1 the way real programs do: through the
# loader's search path (tests set LD_LIBRARY_PATH); they are not linked against it.
$(FAKE)/client_static $(FAKE)/client_dlsym: $(FAKE)/%: tests/fakecuda/%.c $(FAKE_CLIENT_COMMON) $(FAKE_CLIENT_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(FAKE_CPPFLAGS) $(CFLAGS) -o $@ $< $(FAKE_CLIENT_COMMON) $(LDFLAGS) -ldl -lpthread

$(FAKE)/client_driver: tests/fakecuda/client_driver.c $(FAKE_CLIENT_COMMON) $(FAKE_CLIENT_HDRS) $(FAKE)/libcuda.so
	$(CC) $(CPPFLAGS) $(FAKE_CPPFLAGS) $(CFLAGS) -o $@ $< $(FAKE_CLIENT_COMMON) $(LDFLAGS) \
		-L$(FAKE) -lcuda -Wl,-rpath,'$$ORIGIN' -ldl -lpthread

$(FAKE)/client_hostile: tests/fakecuda/client_hostile.c tests/fakecuda/scenarios.h $(FAKE)/libcuda.so
	$(CC) $(CPPFLAGS) $(FAKE_CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS) -L$(FAKE) -lcuda -Wl,-rpath,'$$ORIGIN' -lpthread

$(FAKE)/client_runtime: tests/fakecuda/client_runtime.c $(FAKE_CLIENT_HDRS) $(FAKE)/libcudart.so $(FAKE)/libcuda.so
	$(CC) $(CPPFLAGS) $(FAKE_CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS) \
		-L$(FAKE) -lcudart -Wl,-rpath,'$$ORIGIN' -ldl -lpthread

# Stacks through levels built with and without frame pointers (the stack walker's test).
$(BUILD)/fakecuda/mixed_fp_levels.o: tests/fakecuda/mixed_fp_levels.c tests/fakecuda/mixed_fp.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(FAKE_CPPFLAGS) $(CFLAGS) -fomit-frame-pointer -mno-red-zone -c $< -o $@

$(FAKE)/client_mixed_fp: tests/fakecuda/client_mixed_fp.c $(BUILD)/fakecuda/mixed_fp_levels.o tests/fakecuda/mixed_fp.h \
		$(FAKE)/libcuda.so
	$(CC) $(CPPFLAGS) $(FAKE_CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/fakecuda/mixed_fp_levels.o $(LDFLAGS) \
		-L$(FAKE) -lcuda -Wl,-rpath,'$$ORIGIN' -lpthread

# The unit tests of the fake and of the shim under it need all of the above.
$(BUILD)/tests/test_fakecuda: | fakecuda $(BUILD)/libculeak.so
$(BUILD)/tests/test_shim_%: | fakecuda $(BUILD)/libculeak.so

# A stand-in for PyTorch's caching allocator (libc10_cuda.so in a torch/lib tree, with the
# torch version it mimics in torch/version.py); it takes its segments from the fake cudart.
# Its base class's out-of-line members are in a libc10.so of their own, as torch's are.
FAKE_C10_CXX := $(CXX) -std=c++17 -O2 -g -fPIC -fvisibility=hidden -Wall -Wextra -Werror -Isrc $(SANFLAGS)
FAKE_C10_DEPS := tests/fakecuda/torch/c10_cuda.cpp tests/fakecuda/torch/c10_allocator.h $(FAKE)/libc10.so \
	$(FAKE)/libcudart.so $(FAKE)/libcuda.so
FAKE_C10_LINK := -L$(FAKE) -lc10 -lcudart -lcuda -Wl,-rpath,'$$ORIGIN/../..' $(LDFLAGS)

$(FAKE)/libc10.so: tests/fakecuda/torch/c10.cpp tests/fakecuda/torch/c10_allocator.h
	@mkdir -p $(@D)
	$(FAKE_C10_CXX) -shared -Wl,-soname,libc10.so -o $@ $< $(LDFLAGS)

$(FAKE)/torch/lib/libc10_cuda.so: $(FAKE_C10_DEPS)
	@mkdir -p $(@D)
	$(FAKE_C10_CXX) -shared -Wl,-soname,libc10_cuda.so -o $@ $< $(FAKE_C10_LINK)

# The same with its method two vtable slots away from where torch 2.11 has it.
$(FAKE)/torch-shifted/lib/libc10_cuda.so: $(FAKE_C10_DEPS)
	@mkdir -p $(@D)
	$(FAKE_C10_CXX) -DFAKE_C10_SHIFTED -shared -Wl,-soname,libc10_cuda.so -o $@ $< $(FAKE_C10_LINK)

# Its pinned-host caching allocator (libtorch_cuda.so), on the fake cudart.
$(FAKE)/torch/lib/libtorch_cuda.so: tests/fakecuda/torch/torch_cuda.cpp $(FAKE)/libcudart.so $(FAKE)/libcublas.so
	@mkdir -p $(@D)
	$(FAKE_C10_CXX) -shared -Wl,-soname,libtorch_cuda.so -o $@ $< -L$(FAKE) -lcublas -lcudart \
		-Wl,-rpath,'$$ORIGIN/../..' $(LDFLAGS)

# Stand-ins for the CUDA libraries that allocate once and hold until exit (cuDNN, cuBLAS,
# NCCL) and for XLA's CUDA plugin, on the fake cudart; client_libs goes through them the
# ways of a framework and of a program of its own (the default suppressions' test).
FAKE_LIB_CFLAGS := $(CPPFLAGS) $(FAKE_CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden
$(FAKE)/libcudnn.so.9: tests/fakecuda/libs/cudnn.c $(FAKE)/libcudart.so
	$(CC) $(FAKE_LIB_CFLAGS) -shared -Wl,-soname,libcudnn.so.9 -o $@ $< -L$(FAKE) -lcudart -Wl,-rpath,'$$ORIGIN' $(LDFLAGS)

$(FAKE)/libcublas.so.13: tests/fakecuda/libs/cublas.c $(FAKE)/libcudart.so
	$(CC) $(FAKE_LIB_CFLAGS) -shared -Wl,-soname,libcublas.so.13 -o $@ $< -L$(FAKE) -lcudart -Wl,-rpath,'$$ORIGIN' $(LDFLAGS)

$(FAKE)/libnccl.so.2: tests/fakecuda/libs/nccl.c $(FAKE)/libcudart.so
	$(CC) $(FAKE_LIB_CFLAGS) -shared -Wl,-soname,libnccl.so.2 -o $@ $< -L$(FAKE) -lcudart -Wl,-rpath,'$$ORIGIN' \
		$(LDFLAGS) -lpthread

$(FAKE)/libcudnn.so: $(FAKE)/libcudnn.so.9
	ln -sf libcudnn.so.9 $@
$(FAKE)/libcublas.so: $(FAKE)/libcublas.so.13
	ln -sf libcublas.so.13 $@
$(FAKE)/libnccl.so: $(FAKE)/libnccl.so.2
	ln -sf libnccl.so.2 $@

$(FAKE)/xla/xla_cuda_plugin.so: tests/fakecuda/libs/xla_plugin.cpp $(FAKE)/libcudnn.so
	@mkdir -p $(@D)
	$(FAKE_C10_CXX) -shared -o $@ $< -L$(FAKE) -lcudnn -Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS)

$(FAKE)/client_libs: tests/fakecuda/client_libs.c $(FAKE)/libcublas.so $(FAKE)/libnccl.so $(FAKE)/xla/xla_cuda_plugin.so \
		$(FAKE)/torch/lib/libtorch_cuda.so $(FAKE)/libcudart.so
	$(CC) $(CPPFLAGS) $(FAKE_CPPFLAGS) $(CFLAGS) -o $@ $< -L$(FAKE) -L$(FAKE)/xla -L$(FAKE)/torch/lib \
		-l:xla_cuda_plugin.so -ltorch_cuda -lcublas -lnccl -lcudart \
		-Wl,-rpath,'$$ORIGIN:$$ORIGIN/xla:$$ORIGIN/torch/lib' $(LDFLAGS) -lpthread

$(FAKE)/torch/version.py: tests/fakecuda/torch/version.py
	@mkdir -p $(@D)
	cp $< $@

# The engine of a backward pass: a node on a thread without Python allocates through
# ATen's empty helper (loaded by the stand-in torch package of tests/e2e/python).
fakecuda: $(FAKE)/libtorch_cpu.so
$(FAKE)/libtorch_cpu.so: tests/fakecuda/torch/autograd.cpp
	@mkdir -p $(@D)
	$(FAKE_C10_CXX) -shared -Wl,-soname,libtorch_cpu.so -o $@ $< -pthread $(LDFLAGS)
$(BUILD)/tests/test_runtime_frames: | $(FAKE)/libtorch_cpu.so
