"""JAX without preallocation: its arrays live in VMM mappings (cuMemCreate/cuMemMap)."""
import sys

import jax
import jax.numpy as jnp

keep = []
for i in range(4):
    a = jnp.ones(((i + 1) * 1024, 1024), dtype=jnp.float32)
    a.block_until_ready()
    keep.append(a)
    ptr = a.addressable_data(0).unsafe_buffer_pointer()
    print("LEDGER inside", a.nbytes, hex(ptr), file=sys.stderr, flush=True)
print("jax: done", jax.devices())
