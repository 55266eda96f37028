"""XProf's static HLO detectors on a dump alone: which hloscope rule covers each, and, for the
ones with no rule, XLA's own figures showing why (#34 point 10).

For every detector, a program where the pattern appears and the same program written the
way the detector's advice says, compiled deviceless for TPU v5e (needs the fixtures extra:
jax 0.10.2 + libtpu 0.0.42), set side by side on the sum of XLA's `estimated_cycles` over
the ops that run and cost_analysis bytes. A rule is written only where the advised form is
cheaper by XLA's own figures; the rows where it is not say so.

    python3 bench/detectors.py            # the table (markdown)
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N = 4096


def _programs():
    import jax
    import jax.numpy as jnp
    from jax import lax

    f32, bf16 = jnp.float32, jnp.bfloat16
    sq = ((N, N), f32)

    def sm_exp(x):
        e = jnp.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    def sm_exp2(x):
        e = jnp.exp2((x - x.max(-1, keepdims=True)) * 1.4426950408889634)
        return e / e.sum(-1, keepdims=True)

    def dus(c, u, i):
        return lax.dynamic_update_slice(c, u, (i, 0))

    dus_args = (sq, ((8, N), f32), ((), jnp.int32))
    # (detector, rule or None, pattern program, advised program)
    return [
        ("dynamic-update-slice not in place", "H001",
         ("undonated buffer", jax.jit(dus), dus_args),
         ("buffer donated", jax.jit(dus, donate_argnums=0), dus_args)),
        ("layout-mismatch copy / unfused reshape (lane alignment)", "H002",
         ("x.T returned", jax.jit(lambda x: x.T * 2), (((1024, 512), bf16),)),
         ("x returned in its own layout", jax.jit(lambda x: x * 2), (((1024, 512), bf16),))),
        ("reduction over the lane (minor) dimension", None,
         ("sum over axis 1 of f32[4096,4096]{1,0}", jax.jit(lambda x: x.sum(axis=1)), (sq,)),
         ("sum over axis 0 (a major dimension)", jax.jit(lambda x: x.sum(axis=0)), (sq,))),
        ("transcendental-heavy fusion", None,
         ("softmax with exp", jax.jit(sm_exp), (((8, 2048, 2048), f32),)),
         ("softmax with exp2(x * log2 e)", jax.jit(sm_exp2), (((8, 2048, 2048), f32),))),
        ("transcendental-heavy fusion (elementwise)", None,
         ("exp(x) + 1", jax.jit(lambda x: jnp.exp(x) + 1), (sq,)),
         ("x * 2 + 1 (no transcendental)", jax.jit(lambda x: x * 2 + 1), (sq,))),
        ("convert -> reduce -> convert (f32 promotion)", None,
         ("jnp.sum of bf16 (reduces in f32)", jax.jit(lambda x: x.sum(axis=0)), (((N, N), bf16),)),
         ("max of bf16 (reduces in bf16)", jax.jit(lambda x: x.max(axis=0)), (((N, N), bf16),))),
    ]


def _figures(fn, specs, device) -> tuple[int, float]:
    import jax
    from jax.sharding import SingleDeviceSharding

    sh = SingleDeviceSharding(device)
    return xla_figures(fn.lower(*(jax.ShapeDtypeStruct(s, d, sharding=sh) for s, d in specs)).compile())


def xla_figures(compiled) -> tuple[int, float]:
    """XLA's own figures of a compiled TPU program: the sum of its ops' estimated_cycles, and
    cost_analysis's bytes accessed (also bench/split_dot.py's)."""
    cycles = sum(int(c) for c in re.findall(r'"estimated_cycles":"(\d+)"', compiled.as_text()))
    return cycles, float(compiled.cost_analysis().get("bytes accessed", 0.0))


def main() -> int:
    os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")
    from jax.experimental import topologies

    device = topologies.get_topology_desc(topology_name="v5e:2x2", platform="tpu").devices[0]
    print("| detector | hloscope rule | pattern | advised form | XLA cycles | XLA bytes | advised form cheaper? |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for detector, rule, (what, fn, specs), (fix, fn2, specs2) in _programs():
        c1, b1 = _figures(fn, specs, device)
        c2, b2 = _figures(fn2, specs2, device)
        cheaper = "yes" if c2 < 0.95 * c1 or b2 < 0.95 * b1 else "no"
        print(f"| {detector} | {rule or 'none'} | {what} | {fix} | {c1:,} -> {c2:,} | "
              f"{b1 / 2**20:,.1f} -> {b2 / 2**20:,.1f} MiB | {cheaper} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
