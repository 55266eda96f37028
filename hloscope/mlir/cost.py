"""Costs of Pallas/Mosaic custom calls that state no `cost_estimate`, from their decoded
bodies: FLOPs = grid steps x the work of one step (matmuls, elementwise ops), bytes = the
HBM<->VMEM traffic of the blocks their BlockSpecs move (a block is fetched again only when
its index changes from one grid step to the next)."""

from __future__ import annotations

from hloscope.cost.flops import kernel_cost_estimate
from hloscope.cost.ops import BodyCost
from hloscope.ir import Module


def needs_body_costs(module: Module) -> bool:
    """Whether the module has a Mosaic kernel with no cost_estimate (decoding costs a worker)."""
    return any(i.attr("custom_call_target") == "tpu_custom_call" and not kernel_cost_estimate(i)
               for i in module.of_opcode("custom-call"))


def body_costs(module: Module) -> dict[str, BodyCost]:
    """{custom-call name: BodyCost} for each decodable kernel with no cost_estimate."""
    if not needs_body_costs(module):
        return {}
    from hloscope.mlir.kernels import kernels

    out = {}
    for k in kernels(module):
        s = k.summary
        if s is None or kernel_cost_estimate(k.instruction):
            continue
        out[k.instruction.name] = BodyCost(s.flops, s.transcendentals, s.block_traffic_bytes, s.matmul_flops,
                                          s.matmul_types)
    return out
