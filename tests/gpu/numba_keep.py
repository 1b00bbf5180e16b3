# numba.cuda: one device array kept per step: the site must be the KEEP line.
import numpy as np
from numba import cuda

import culeak

kept = []
for i in range(12):
    culeak.mark("iteration %d" % i)
    kept.append(cuda.device_array(1 << 20, dtype=np.uint8))  # KEEP
print("numba_keep: %d arrays kept" % len(kept))
