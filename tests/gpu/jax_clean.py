# A JAX job that leaks nothing: a jitted convolution (cuDNN) and matmul (cuBLAS), results
# read back to the host. XLA's set-up of cuDNN and cuBLAS allocates once and keeps it for
# the client's life (culeak's default suppressions), its buffers are in the BFC pool:
# tests/gpu/run.sh (section clean) expects `culeak check` to exit 0.
import jax
import jax.numpy as jnp


@jax.jit
def step(x, k, w):
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME")
    return (y.reshape(y.shape[0], -1) @ w).sum()


key = jax.random.PRNGKey(0)
x = jax.random.normal(key, (8, 3, 32, 32))
k = jax.random.normal(key, (16, 3, 3, 3))
w = jax.random.normal(key, (16 * 32 * 32, 10))
total = 0.0
for i in range(5):
    total += float(step(x, k, w))
print("jax_clean: done %.3f" % total)
