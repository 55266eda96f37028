"""An example model for `hloscope compile`: a two-layer MLP's training step (SGD on a
mean-squared error), data-parallel over a mesh axis `data`.

    hloscope compile examples/mlp.py:train_step --topology v5e:2x2 --mesh data:4 \
        --args-from examples/mlp.py:example_args -o out/
"""

import jax
import jax.numpy as jnp


def loss(params, x, y):
    w1, w2 = params
    h = jax.nn.relu(x @ w1)
    return jnp.mean((h @ w2 - y) ** 2)


def train_step(w1, w2, x, y):
    grads = jax.grad(loss)((w1, w2), x, y)
    return w1 - 1e-3 * grads[0], w2 - 1e-3 * grads[1]


def example_args(mesh):
    """The arguments as ShapeDtypeStructs: weights replicated, the batch split over `data`."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    rep, batch = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    return (jax.ShapeDtypeStruct((1024, 4096), jnp.bfloat16, sharding=rep),
            jax.ShapeDtypeStruct((4096, 1024), jnp.bfloat16, sharding=rep),
            jax.ShapeDtypeStruct((256, 1024), jnp.bfloat16, sharding=batch),
            jax.ShapeDtypeStruct((256, 1024), jnp.bfloat16, sharding=batch))
