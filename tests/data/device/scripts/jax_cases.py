import sys
import jax, jax.numpy as jnp
if sys.argv[1] == "oom":
    x = jnp.ones((200 * 2**30,), dtype=jnp.uint8)
    print(x.sum())
else:
    print(jax.devices())
    print(jnp.ones(10).sum())
