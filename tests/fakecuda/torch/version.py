# The fake caching allocator (tests/fakecuda/torch/c10_cuda.cpp) lays out its trace entries
# and its allocator's vtable like this torch version. The lines are as torch's own file
# has them: __all__ names __version__ before the line that sets it.
from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']
__version__ = '2.11.0+cu130'
debug = False
cuda: Optional[str] = '13.0'
git_version = '0000000000000000000000000000000000000000'
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None
