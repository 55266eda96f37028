"""`hloscope kernel` as text: each custom call's decoded kernel (grid, blocks, VMEM)."""

from __future__ import annotations

import json

from hloscope.units import human_bytes


def kernels_text(found: list, mlir: bool, views: dict | None = None) -> str:
    """`views`: measured kernel views by instruction name (kernel --trace), else None."""
    if not found:
        return "no custom calls"
    out = []
    for k in found:
        i = k.instruction
        out.append(f"%{i.name} ({i.computation}, line {i.line}): custom-call {k.target} -> {i.shape}")
        if k.error:
            out.append(f"  body: not decoded: {k.error}")
        for note in (k.body.notes if k.body else []):
            if not k.error or note not in k.error:
                out.append(f"  note: {note}")
        s = k.summary
        if s is not None:
            sem = ", ".join(s.dimension_semantics) or "-"
            out.append(f"  kernel {s.name}: grid {s.grid} ({s.grid_steps} steps), semantics [{sem}]")
            for b in s.operands + s.scratch:
                block = f" block {b.block}" if b.block and b.role != "scratch" else ""
                out.append(f"    {b.role:15} {b.dtype}{b.shape}{block} in {b.memory_space}"
                           f" ({human_bytes(b.bytes, 2)}{' per block' if block else ''})")
            scoped = k.scoped_vmem_bytes
            out.append(f"  VMEM: ~{human_bytes(s.vmem_bytes, 2)} (double-buffered blocks + scratch)"
                       + (f", {human_bytes(scoped, 2)} scoped for this call" if scoped else ""))
            out.append(f"  largest vector value: {s.largest_vector_type or '-'}")
            top = ", ".join(f"{op} {n}" for op, n in list(s.ops.items())[:12])
            out.append(f"  ops: {top}")
        if k.body is not None and k.body.config:
            shown = {key: v for key, v in k.body.config.items() if v not in ([], {}, None, "")}
            out.append(f"  config: {json.dumps(shown)}")
        if views is not None:
            from hloscope.report.profile import kernel_lines

            view = views.get(i.name)
            out.extend(["  measured:" + line[len("  kernel"):] if line.startswith("  kernel ") else line
                        for line in kernel_lines([view.to_dict()])] if view is not None
                       else ["  measured: not in the trace"])
        if mlir and k.body is not None and k.body.text:
            out.append(k.body.text.rstrip("\n"))
        out.append("")
    return "\n".join(out)


def kernel_tooltips(found: list) -> dict[str, str]:
    """One line per custom call, for graph node tooltips."""
    out = {}
    for k in found:
        s = k.summary
        if s is None:
            out[k.instruction.name] = f"{k.target}: {k.error or 'no kernel body'}"
            continue
        blocks = "; ".join(f"{b.role} {b.dtype}{b.block}" for b in s.operands)
        out[k.instruction.name] = (f"kernel {s.name}, grid {s.grid} {s.dimension_semantics}; "
                                   f"{blocks}; VMEM ~{human_bytes(s.vmem_bytes, 2)}")
    return out
