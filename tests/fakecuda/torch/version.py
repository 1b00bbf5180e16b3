# The fake caching allocator (tests/fakecuda/torch/c10_cuda.cpp) lays out its trace entries
# and its allocator's vtable like this torch version.
__version__ = '2.11.0+cu130'
