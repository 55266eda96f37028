"""When does merging matmuls that share an operand help? XLA's own figures for H004's advice.

For each case, the program as written (separate matmuls) and the merged forms, compiled
deviceless for TPU v5e, v5p and v6e (needs the fixtures extra: jax 0.10.2 + libtpu 0.0.42),
set side by side on the sum of XLA's `estimated_cycles` over the program's ops and
cost_analysis's "bytes accessed":

- qkv: one pre-norm transformer block (fixtures/generate.py's transformer_block), Q, K and V
  projections of one activation, model-sharded over 4 chips (2x4 on v5p). Merged two ways:
  concatenated `[W_q | W_k | W_v]` split after the matmul, and stacked `[d, 3, d]` with the
  heads' axis sharded as the separate weights were.
- gate: a SwiGLU MLP, `silu(x w1) * (x w3)` then `w2`, on one chip, forward and train step;
  merged as a stacked `[d, 2, f]` weight.

The rule's trigger and help follow this table (rules/H004-split-dot.md).

    python3 bench/split_dot.py            # the table (markdown)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "fixtures"))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")

from detectors import xla_figures  # noqa: E402

CHIPS = (("v5e:2x2", (1, 4)), ("v5p:2x2x2", (2, 4)), ("v6e:2x2", (1, 4)))


def _qkv(mesh, form: str):
    """The transformer block with its Q, K, V weights as `form`: separate, cat, stacked."""
    import jax
    import jax.numpy as jnp
    from generate import _block_params, _sds, transformer_block

    b, s, d, f, heads = 8, 512, 1024, 4096, 8
    params = _block_params(mesh, d, f, jnp.bfloat16, fused_qkv=form == "stacked")
    if form == "cat":
        for name in ("wq", "wk", "wv"):
            del params[name]
        params["wcat"] = _sds((d, 3 * d), jnp.bfloat16, mesh, (None, "model"))
    x = _sds((b, s, d), jnp.bfloat16, mesh, ("data", None, None))
    return jax.jit(lambda p, x: transformer_block(p, x, heads=heads)).lower(params, x).compile()


def _gate(device, form: str, train: bool):
    import jax
    import jax.numpy as jnp
    from jax.sharding import SingleDeviceSharding

    t, d, f = 4096, 2048, 5632
    sh = SingleDeviceSharding(device)

    def sds(shape):
        return jax.ShapeDtypeStruct(shape, jnp.bfloat16, sharding=sh)

    def mlp(p, x):
        if "w13" in p:
            ab = jnp.einsum("td,dkf->ktf", x, p["w13"])
            a, b = ab[0], ab[1]
        else:
            a, b = x @ p["w1"], x @ p["w3"]
        return (jax.nn.silu(a) * b) @ p["w2"]

    def step(p, x):
        g = jax.grad(lambda p, x: (mlp(p, x).astype(jnp.float32) ** 2).mean())(p, x)
        return jax.tree.map(lambda w, gw: w - 0.01 * gw.astype(w.dtype), p, g)

    params = ({"w13": sds((d, 2, f))} if form == "stacked" else
              {"w1": sds((d, f)), "w3": sds((d, f))}) | {"w2": sds((f, d))}
    fn = jax.jit(step, donate_argnums=0) if train else jax.jit(mlp)
    return fn.lower(params, sds((t, d))).compile()


def rows() -> list[dict]:
    import numpy as np
    from jax.experimental import topologies
    from jax.sharding import Mesh

    out = []
    for topology, shape in CHIPS:
        chip = topology.split(":")[0]
        topo = topologies.get_topology_desc(topology_name=topology, platform="tpu")
        mesh = Mesh(np.array(topo.devices).reshape(shape), ("data", "model"))
        base = xla_figures(_qkv(mesh, "separate"))
        for form in ("cat", "stacked"):
            out.append(_row("qkv (block, model-sharded)", chip, form, base, xla_figures(_qkv(mesh, form))))
        for train in (False, True):
            base = xla_figures(_gate(topo.devices[0], "separate", train))
            out.append(_row(f"gate ({'train step' if train else 'forward'})", chip, "stacked", base,
                            xla_figures(_gate(topo.devices[0], "stacked", train))))
    return out


def _row(case: str, chip: str, form: str, before, after) -> dict:
    return {"case": case, "chip": chip, "merged": form, "cycles": before[0], "merged_cycles": after[0],
            "bytes": before[1], "merged_bytes": after[1]}


def table(data: list[dict]) -> str:
    lines = ["| case | chip | merged as | cycles separate -> merged | bytes separate -> merged |",
             "| --- | --- | --- | --- | --- |"]
    for r in data:
        lines.append(f"| {r['case']} | {r['chip']} | {r['merged']} | {r['cycles']:,} -> "
                     f"{r['merged_cycles']:,} ({r['merged_cycles'] / r['cycles'] - 1:+.1%}) | "
                     f"{r['bytes'] / 2**20:,.1f} -> {r['merged_bytes'] / 2**20:,.1f} MiB "
                     f"({r['merged_bytes'] / r['bytes'] - 1:+.1%}) |")
    return "\n".join(lines)


def main() -> int:
    print(table(rows()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
