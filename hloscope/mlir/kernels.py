"""Every custom call of a module with its decoded body and kernel summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hloscope.ir import Instruction, Module
from hloscope.mlir.decode import DecodeError, KernelBody, decode_custom_call
from hloscope.mlir.summary import KernelSummary, summarize


@dataclass
class Kernel:
    instruction: Instruction
    target: str
    body: KernelBody | None
    summary: KernelSummary | None
    error: str | None  # why the body could not be decoded or summarized
    operand_shapes: list

    @property
    def scoped_vmem_bytes(self) -> int | None:
        """The scoped VMEM XLA granted this call (backend_config.scoped_memory_configs)."""
        config = self.instruction.attr("backend_config")
        if not isinstance(config, dict):
            return None
        sizes = [int(c.get("size", 0)) for c in config.get("scoped_memory_configs", [])
                 if str(c.get("memory_space")) == "1"]
        return max(sizes) if sizes else None

    def to_json(self, with_mlir: bool) -> dict[str, Any]:
        s = self.summary
        out: dict[str, Any] = {
            "instruction": self.instruction.name,
            "computation": self.instruction.computation,
            "target": self.target,
            "name": s.name if s else None,
            "grid": s.grid if s else [],
            "operands": [b.to_json() for b in s.operands] if s else
                        [{"shape": str(x), "memory_space": None} for x in self.operand_shapes],
            "result": self.instruction.shape.text(),
            "scratch": [b.to_json() for b in s.scratch] if s else [],
            "dimension_semantics": s.dimension_semantics if s else [],
            "ops": s.ops if s else {},
            "vmem_bytes": s.vmem_bytes if s else None,
            "scoped_vmem_bytes": self.scoped_vmem_bytes,
            "largest_vector": s.largest_vector_type if s else None,
            "config": self.body.config if self.body else {},
            "notes": self.body.notes if self.body else [],
            "error": self.error,
            "mlir": (self.body.text if self.body else None) if with_mlir else None,
        }
        return out


def kernels(module: Module, operand_shapes=None) -> list[Kernel]:
    """Custom calls of the module; `operand_shapes(instr)` gives operand Shapes."""
    if operand_shapes is None:
        from hloscope.cost.ops import CostModel

        operand_shapes = CostModel(module).operand_shapes
    out: list[Kernel] = []
    for instr in module.instructions():
        if instr.opcode != "custom-call":
            continue
        target = str(instr.attr("custom_call_target", ""))
        shapes = operand_shapes(instr)
        body = summary = error = None
        try:
            body = decode_custom_call(instr)
            if body.module is not None and not body.generic:
                summary = summarize(body, instr, shapes)
        except DecodeError as e:
            error = str(e)
        except Exception as e:  # noqa: BLE001 - an unexpected kernel: report, do not crash
            error = f"cannot summarize kernel: {type(e).__name__}: {e}"
        out.append(Kernel(instr, target, body, summary, error, shapes))
    return out
