"""Every custom call of a module with its decoded body and kernel summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hloscope.ir import Instruction, Module
from hloscope.mlir.decode import TEXT_IR_KEYS, KernelBody, _backend_config
from hloscope.mlir.summary import CallInfo, KernelSummary


@dataclass
class Kernel:
    instruction: Instruction
    target: str
    body: KernelBody | None
    summary: KernelSummary | None
    error: str | None  # why the body could not be decoded or summarized
    operand_shapes: list

    def __repr__(self) -> str:
        s = self.summary
        what = (f"{s.name}, grid {tuple(s.grid)}" if s else f"not decoded: {self.error}")
        shapes = ", ".join(str(x) for x in self.operand_shapes[:4])
        return f"<Kernel %{self.instruction.name} ({self.target}): {what}; operands {shapes}>"

    @property
    def scoped_vmem_bytes(self) -> int | None:
        """The scoped VMEM XLA granted this call (backend_config.scoped_memory_configs)."""
        config = self.instruction.attr("backend_config")
        if not isinstance(config, dict):
            return None
        sizes = [int(c.get("size", 0)) for c in config.get("scoped_memory_configs", [])
                 if str(c.get("memory_space")) == "1"]
        return max(sizes) if sizes else None

    def to_dict(self, with_mlir: bool = True) -> dict[str, Any]:
        s = self.summary
        out: dict[str, Any] = {
            "instruction": self.instruction.name,
            "computation": self.instruction.computation,
            "target": self.target,
            "name": s.name if s else None,
            "grid": s.grid if s else [],
            "operands": [b.to_dict() for b in s.operands] if s else
                        [{"shape": str(x), "memory_space": None} for x in self.operand_shapes],
            "result": self.instruction.shape.text(),
            "scratch": [b.to_dict() for b in s.scratch] if s else [],
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
    """Custom calls of the module; `operand_shapes(instr)` gives operand Shapes. Kernel
    bodies are decoded in a child process (see hloscope.mlir.worker)."""
    if operand_shapes is None:
        from hloscope.cost.ops import CostModel

        operand_shapes = CostModel(module).operand_shapes
    calls = module.of_opcode("custom-call")
    items = []
    for instr in calls:
        target = str(instr.attr("custom_call_target", ""))
        items.append((target, _backend_config(instr), CallInfo.of(instr, operand_shapes(instr))))
    results = decode_isolated(items)
    out: list[Kernel] = []
    for instr, (target, config, _), (status, error, text, summary, notes) in zip(calls, items, results):
        body = None
        if status == "ok":
            meta = config.get("custom_call_config", config) if isinstance(config, dict) else {}
            meta = {k: v for k, v in meta.items() if k not in ("body",) + TEXT_IR_KEYS}
            body = KernelBody(target, meta, text, notes=list(notes))
        if summary is None and error is None and notes:  # (decoded, not summarized: why)
            error = "; ".join(notes)
        out.append(Kernel(instr, target, body, summary, error, operand_shapes(instr)))
    return out


_DECODED: dict[bytes, tuple] = {}  # per process: the same body is decoded once


def decode_isolated(items: list) -> list[tuple]:
    """Results for the items, decoding the ones not seen before in a worker process."""
    import hashlib
    import pickle

    keys = [hashlib.sha256(pickle.dumps(item)).digest() for item in items]
    todo = {k: item for k, item in zip(keys, items) if k not in _DECODED}
    if todo:
        for k, result in zip(todo, _run_worker(list(todo.values()))):
            _DECODED[k] = result
    return [_DECODED[k] for k in keys]


_WORKER = None  # the decoder process serving this one (started on first use)


def _ask(item) -> tuple:
    """One item through the decoder process; a crash there is reported, not raised."""
    import pickle
    import struct
    import subprocess
    import sys

    global _WORKER
    if _WORKER is None or _WORKER.poll() is not None:
        _WORKER = subprocess.Popen([sys.executable, "-m", "hloscope.mlir.worker"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL)
    data = pickle.dumps(item)
    try:
        _WORKER.stdin.write(struct.pack("<Q", len(data)) + data)
        _WORKER.stdin.flush()
        head = _WORKER.stdout.read(8)
        if len(head) == 8:
            (n,) = struct.unpack("<Q", head)
            body = _WORKER.stdout.read(n)
            if len(body) == n:
                return pickle.loads(body)
    except (OSError, pickle.UnpicklingError, EOFError):
        pass
    _WORKER.kill()
    _WORKER = None
    return ("error", "the MLIR decoder crashed on this kernel body (corrupt?)", None, None, [])


def _run_worker(items: list) -> list[tuple]:
    """Decode items: MLIR bodies in the decoder process, the rest here."""
    from hloscope.mlir.worker import _one

    return [_ask(item) if item[0] == "tpu_custom_call" else _one(item) for item in items]
