"""What a Pallas/Mosaic kernel does, read from its MLIR: grid, blocks, memory spaces,
dimension semantics, an op histogram and its VMEM footprint.

Mosaic kernel signature: grid indices (one i32 per grid axis), scalar-prefetch
refs, then inputs, outputs and scratch buffers. `window_params` gives the block
shape of each pipelined input/output; those blocks are double-buffered in VMEM.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from math import prod

from hloscope.ir import Instruction
from hloscope.mlir.decode import KernelBody

_MEMREF = re.compile(r"memref<([^,>]*)")
_VECTOR = re.compile(r"vector<([0-9x]+)x([a-z][a-z0-9]*)>")
_SPACE = re.compile(r"#tpu\.memory_space<(\w+)>")
_DIM_SEM = re.compile(r"#tpu\.dimension_semantics<(\w+)>")
ELEM_BYTES = {"f32": 4, "i32": 4, "bf16": 2, "f16": 2, "i16": 2, "i8": 1, "f8E4M3FN": 1,
              "f8E5M2": 1, "i1": 1, "f64": 8, "i64": 8, "ui8": 1, "ui32": 4}


@dataclass
class Buffer:
    index: int  # position among the kernel's arguments
    role: str  # "scalar_prefetch" | "input" | "output" | "scratch"
    shape: list[int]
    dtype: str
    memory_space: str  # vmem | smem | any | hbm | semaphore_mem | ...
    block: list[int] | None = None  # window bounds, for pipelined inputs/outputs

    @property
    def bytes(self) -> int:
        dims = self.block or self.shape
        return prod(dims) * ELEM_BYTES.get(self.dtype, 4)

    def to_dict(self) -> dict:
        return {"role": self.role, "shape": self.shape, "dtype": self.dtype,
                "memory_space": self.memory_space, "block": self.block, "bytes": self.bytes}


@dataclass
class KernelSummary:
    name: str
    grid: list[int]
    dimension_semantics: list[str]
    operands: list[Buffer]
    scratch: list[Buffer]
    ops: dict[str, int]
    vmem_bytes: int
    largest_vector_bytes: int = 0
    largest_vector_type: str = ""
    output_reads: list[int] = field(default_factory=list)  # output indices loaded from
    # work of one grid step, from the body's ops (outside scf.if: what runs every step)
    matmul_flops_per_step: float = 0.0
    elementwise_flops_per_step: float = 0.0
    transcendentals_per_step: float = 0.0
    matmul_types: tuple[str, ...] = ()  # HLO element types of the first matmul's operands
    # HBM<->VMEM traffic over the grid implied by the BlockSpecs (None: index maps unread)
    block_traffic_bytes: int | None = None
    block_fetches: list[int] = field(default_factory=list)  # per pipelined operand

    @property
    def grid_steps(self) -> int:
        return prod(self.grid) if self.grid else 1

    @property
    def flops(self) -> float:
        return self.grid_steps * (self.matmul_flops_per_step + self.elementwise_flops_per_step)

    @property
    def matmul_flops(self) -> float:
        return self.grid_steps * self.matmul_flops_per_step

    @property
    def transcendentals(self) -> float:
        return self.grid_steps * self.transcendentals_per_step


def _func_attrs(op) -> dict[str, str]:
    out = {}
    for item in op.attributes:
        if isinstance(item, str):  # newer bindings iterate names
            out[item] = str(op.attributes[item])
        else:
            out[item.name] = str(item.attr)
    return out


def _array(text: str) -> list[int]:
    m = re.search(r"array<i64(?::\s*([-0-9,\s]*))?>", text)
    if not m or not m.group(1):
        return []
    return [int(x) for x in m.group(1).split(",") if x.strip()]


def _buffer(index: int, role: str, type_text: str) -> Buffer:
    """memref<256x512xbf16, #tpu.memory_space<vmem>> -> dims, dtype, memory space."""
    m = _MEMREF.match(type_text)
    if not m:
        return Buffer(index, role, [], type_text, "unknown")
    parts = m.group(1).split("x")
    dims: list[int] = []
    while parts and (parts[0].isdigit() or parts[0] == "?"):
        token = parts.pop(0)
        dims.append(int(token) if token.isdigit() else -1)
    space = _SPACE.search(type_text)
    return Buffer(index, role, dims, "x".join(parts), space.group(1) if space else "any")


_PASSIVE = ("vector.shape_cast", "vector.broadcast", "tpu.bitcast")


def _used(value, depth: int = 0) -> bool:
    """Whether a value reaches anything but dead reshapes (Pallas emits an unused
    load, sometimes reshaped, before storing to a ref)."""
    try:
        uses = list(value.uses)
    except AttributeError:  # older bindings: assume it is used
        return True
    for use in uses:
        owner = use.owner
        owner = getattr(owner, "operation", owner)
        if owner.name not in _PASSIVE or depth > 8:
            return True
        if any(_used(r, depth + 1) for r in owner.results):
            return True
    return False


_ELEMENTWISE = frozenset({
    "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf", "arith.minimumf",
    "arith.negf", "arith.remf", "arith.addi", "arith.subi", "arith.muli", "arith.maxsi",
    "arith.minsi", "arith.select", "math.absf", "math.sqrt", "math.rsqrt", "math.fma"})
_TRANSCENDENTAL = frozenset({"math.exp", "math.log", "math.tanh", "math.sin", "math.cos",
                             "math.log1p", "math.expm1", "math.powf", "math.erf", "math.exp2"})
_CONTRACTING = re.compile(r"dot_dimension_numbers<\[([\d, ]*)\]")
_STEPS_READ = 1 << 22  # grids up to 4M steps are walked; larger ones fetch every step


def _elements(value) -> int:
    m = _VECTOR.match(str(value.type))
    return prod(int(d) for d in m.group(1).split("x")) if m else 0


def _dims(value) -> list[int]:
    m = _VECTOR.match(str(value.type))
    return [int(d) for d in m.group(1).split("x")] if m else []


def _matmul_flops(op) -> float:
    """2 x result elements x the contracted size, from tpu.matmul / vector.contract types."""
    if not op.results or len(op.operands) < 2:
        return 0.0
    lhs = _dims(op.operands[0])
    out = _elements(op.results[0])
    if not lhs or not out:
        return 0.0
    m = _CONTRACTING.search(str(op.attributes["dimension_numbers"])) if "dimension_numbers" in op.attributes else None
    if m and m.group(1).strip():
        k = prod(lhs[int(d)] for d in m.group(1).split(","))
    else:  # vector.contract / no numbers: the lhs's last dim
        k = lhs[-1]
    return 2.0 * out * k


_HLO_TYPE = {"i8": "s8", "i16": "s16", "i32": "s32", "i4": "s4", "ui8": "u8"}


def _mlir_type(value) -> str:
    """An operand's element type as HLO names it (vector<128x256xbf16> -> bf16)."""
    m = _VECTOR.match(str(value.type))
    if not m:
        return ""
    t = m.group(2)
    return _HLO_TYPE.get(t, t.lower())


def _matmul_types(main) -> tuple[str, ...]:
    for op in _walk(main):
        if op.name in ("tpu.matmul", "vector.contract") and len(op.operands) >= 2:
            return tuple(_mlir_type(v) for v in list(op.operands)[:2])
    return ()


def _step_work(main) -> tuple[float, float, float]:
    """(matmul FLOPs, elementwise FLOPs, transcendentals) of one grid step: the ops at the
    top level of the kernel body (a scf.if body runs on some steps only: left out)."""
    mm = ew = tr = 0.0
    for inner in main.regions[0].blocks[0].operations:
        op = inner.operation
        if op.name in ("tpu.matmul", "vector.contract"):
            mm += _matmul_flops(op)
        elif op.name in _ELEMENTWISE and op.results:
            ew += _elements(op.results[0])
        elif op.name in _TRANSCENDENTAL and op.results:
            tr += _elements(op.results[0])
    return mm, ew, tr


def _index_map(module, symbol: str, n_grid: int):
    """A transform function as [grid axis or ('const', value)] per block dimension; None
    when it computes anything but grid indices and constants."""
    for op in module.body.operations:
        op = op.operation
        if op.name != "func.func" or _func_attrs(op).get("sym_name", "").strip('"') != symbol:
            continue
        block = op.regions[0].blocks[0]
        consts = {}
        out = None
        for inner in block.operations:
            inner = inner.operation
            if inner.name == "arith.constant" and inner.results:
                m = re.search(r"(-?\d+)\s*:", str(inner.attributes["value"]))
                if m:
                    consts[inner.results[0].get_name()] = int(m.group(1))
            elif inner.name == "func.return":
                out = []
                for v in inner.operands:
                    name = v.get_name()
                    args = [a.get_name() for a in block.arguments]
                    if name in args and args.index(name) < n_grid:
                        out.append(args.index(name))
                    elif name in consts:
                        out.append(("const", consts[name]))
                    else:
                        return None
            elif inner.name != "arith.constant":
                return None
        return out
    return None


def _fetches(index_map, grid: list[int]) -> int:
    """Times a block is moved over the grid (row-major, last axis fastest): once per step
    whose block index differs from the previous step's (Pallas skips the copy otherwise)."""
    steps = prod(grid) if grid else 1
    if steps > _STEPS_READ:
        return steps
    used = [a for a in index_map if not isinstance(a, tuple)]
    if not used:
        return 1
    # the block index changes exactly when an axis it reads changes; an axis changes on
    # every step of the axes inside it (and axes of size 1 never change)
    innermost = max((a for a in used if grid[a] > 1), default=None)
    if innermost is None:
        return 1
    return prod(grid[: innermost + 1])


def _walk(op):
    yield op
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield from _walk(inner.operation)


@dataclass(frozen=True)
class CallInfo:
    """What the summary needs of the custom call: its operands' and results' dims."""

    operand_dims: tuple[tuple[int, ...] | None, ...]
    result_dims: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, instr: Instruction, operand_shapes: list) -> CallInfo:
        results = instr.shape.elements if instr.shape.is_tuple else (instr.shape,)
        dims = [tuple(s.dims) for s in operand_shapes]
        dims += [None] * (len(instr.operands) - len(dims))
        return cls(tuple(dims), tuple(tuple(r.dims) for r in results))


def summarize(body: KernelBody, call: CallInfo) -> KernelSummary:
    """Summary of a decoded Mosaic kernel (requires body.module)."""
    with body.context:
        return _summarize(body, call)


def _summarize(body: KernelBody, call: CallInfo) -> KernelSummary:
    from jaxlib.mlir import ir

    module = body.module
    funcs = [op.operation for op in module.body.operations if op.operation.name == "func.func"]
    if not funcs:
        raise ValueError("kernel module holds no func.func")
    main = next((f for f in funcs if "iteration_bounds" in _func_attrs(f) or
                 "window_params" in _func_attrs(f)), funcs[0])
    attrs = _func_attrs(main)
    name = attrs.get("sym_name", '"kernel"').strip('"')
    grid = _array(attrs.get("iteration_bounds", ""))
    semantics = _DIM_SEM.findall(attrs.get("dimension_semantics", ""))
    n_prefetch = int(re.match(r"-?\d+", attrs.get("scalar_prefetch", "0")).group())
    n_scratch = int(re.match(r"-?\d+", attrs.get("scratch_operands", "0")).group())
    windows = [_array(w) for w in re.findall(r"window_bounds = (array<i64[^>]*>)", attrs.get("window_params", ""))]
    block = main.regions[0].blocks[0]
    args = list(block.arguments)
    refs = args[len(grid):]
    n_out = len(call.result_dims)
    n_in = len(refs) - n_prefetch - n_scratch - n_out
    roles = (["scalar_prefetch"] * n_prefetch + ["input"] * n_in + ["output"] * n_out
             + ["scratch"] * n_scratch)
    buffers = [_buffer(i, role, str(a.type)) for i, (role, a) in enumerate(zip(roles, refs))]
    pipelined = [b for b in buffers if b.role in ("input", "output")]
    # shapes of the whole arrays, from the HLO: operands after the scalar-prefetch ones
    hlo_shapes = [list(d) if d is not None else None for d in call.operand_dims[n_prefetch:]]
    hlo_shapes += [list(d) for d in call.result_dims]
    for b, w in zip(pipelined, windows):
        b.block = w or list(b.shape)
    for b, full in zip(pipelined, hlo_shapes):
        if full is not None:
            b.shape = full
    ops: Counter[str] = Counter()
    largest, largest_type = 0, ""
    output_args = {id_ for id_ in range(len(grid) + n_prefetch + n_in,
                                        len(grid) + n_prefetch + n_in + n_out)}
    reads: set[int] = set()
    for op in _walk(main):
        if op is main:
            continue
        ops[op.name] += 1
        for result in op.results:
            m = _VECTOR.match(str(result.type))
            if m:
                nbytes = prod(int(d) for d in m.group(1).split("x")) * ELEM_BYTES.get(m.group(2), 4)
                if nbytes > largest:
                    largest, largest_type = nbytes, str(result.type)
        if op.name in ("vector.load", "tpu.load", "memref.load", "tpu.strided_load") and op.operands:
            if op.results and not _used(op.results[0]):
                continue  # Pallas emits an unused load before some stores
            src = op.operands[0]
            if isinstance(src, ir.BlockArgument) or ir.BlockArgument.isinstance(src):
                arg = ir.BlockArgument(src)
                if arg.owner == block and arg.arg_number in output_args:
                    reads.add(arg.arg_number - (len(grid) + n_prefetch + n_in))
    mm, ew, tr = _step_work(main)
    traffic: int | None = 0
    fetches: list[int] = []
    symbols = re.findall(r"transform_indices = @(\w+)", attrs.get("window_params", ""))
    for b, symbol in zip(pipelined, symbols):
        index_map = _index_map(module, symbol, len(grid))
        if index_map is None or b.block is None:
            traffic = None
            break
        n = _fetches(index_map, grid)
        fetches.append(n)
        traffic += n * b.bytes
    if len(symbols) != len(pipelined):
        traffic = None
    # Pipelined blocks live in VMEM twice (double buffering); scratch once.
    vmem = sum(2 * b.bytes for b in pipelined if b.block is not None)
    vmem += sum(b.bytes for b in buffers if b.role == "scratch" and b.memory_space == "vmem")
    return KernelSummary(
        name=name, grid=grid, dimension_semantics=semantics,
        operands=[b for b in buffers if b.role != "scratch"],
        scratch=[b for b in buffers if b.role == "scratch"],
        ops=dict(ops.most_common()), vmem_bytes=vmem,
        largest_vector_bytes=largest, largest_vector_type=largest_type,
        output_reads=sorted(reads),
        matmul_flops_per_step=mm, elementwise_flops_per_step=ew, transcendentals_per_step=tr,
        matmul_types=_matmul_types(main),
        block_traffic_bytes=traffic, block_fetches=fetches if traffic is not None else [],
    )
