# The fake CUDA driver (a test double) and its client programs; owned by tests/fakecuda.
.PHONY: fakecuda
fakecuda:
