"""Every collective of a module: its groups, mesh axis, bytes, global shape, timing.

A collective XLA has cloned into fusions (TPU async collective fusion: an
`async-collective-start` fusion, continuation fusions that carry the next step's compute,
an `async-collective-done` fusion, each holding a copy of one all-gather) is one logical
collective: async, its start and done the chain's first and last fusions, overlapped by the
compute of what runs between them. The chain is followed by data flow (each fusion reads the
state tuple of the one before), never by channel_id, which clones of several may share.

Ring costs per device (n = group size, B = bytes): all-gather (n-1)/n of its
result, reduce-scatter (n-1)/n of its operand, all-reduce 2(n-1)/n, all-to-all
(n-1)/n, collective-permute B. Time: hloscope.sharding.links (TPU: moved bytes / (2 x the
chip's one-way per-link ICI bandwidth), a bidirectional ring over one mesh axis; GPU: NCCL's
alpha-beta model over NVLink inside a node and the network across nodes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from math import prod

from hloscope.cost.chips import Chip
from hloscope.cost.flops import FREE
from hloscope.cost.ops import CostModel
from hloscope.ir import Computation, Instruction, Module, Shape
from hloscope.ir.opcodes import COLLECTIVES, MAY_BE_COLLECTIVE, async_shorthand
from hloscope.sharding.chains import fused_chains
from hloscope.sharding.groups import (
    axis_name,
    group_facts,
    groups_of,
    has_pairs,
    implicit_size,
    wrapped_collective,
)
from hloscope.sharding.links import link_time
from hloscope.sharding.mesh import (
    Mesh,
    Sharding,
    device_count,
    infer_mesh,
    mesh_beside,
    named_axes,
    sdy_mesh,
)
from hloscope.sharding.sizes import sized_collective


def base_opcode(instr: Instruction, module: Module) -> str | None:
    op = instr.opcode
    if op.endswith("-done") or op == "async-update":
        return None
    if op.endswith("-start") and op[: -len("-start")] in COLLECTIVES:
        return op[: -len("-start")]
    if op == "async-start":  # (the collective it wraps, if any)
        said = wrapped_collective(module, instr)
        return said.opcode if said is not instr else None
    return op if op in COLLECTIVES else None


@dataclass
class Collective:
    module: str
    computation: str
    instruction: str
    opcode: str
    is_async: bool
    done: str | None
    group_size: int
    num_groups: int
    groups: list[list[int]]
    axis: str
    strides: list[list[int]]  # (stride, size) factors of the first group
    bytes: int  # per-device operand bytes
    result_bytes: int
    moved_bytes: float
    global_shape: str
    # the entry parameters feeding it, traced when first asked (most readers never ask)
    sources_fn: Callable[[], list[dict]] | None = field(default=None, repr=False, compare=False)
    est_seconds: float | None = None
    overlap_instructions: int = 0
    overlap_flops: float = 0.0
    line: int = 0
    column: int = 0
    clones: list[str] = field(default_factory=list)  # the copies inside fusions, if cloned
    continuations: list[str] = field(default_factory=list)  # a cloned chain's middle fusions
    scattered_by: str = ""  # an all-reduce whose one user keeps 1/n of it: a reduce-scatter
    links: str = ""  # what its time is bound by: ICI, NVLink, network (sharding.links)
    crosses_domains: bool = False  # GPU: its group spans scale-up domains (nodes)

    _sources: list[dict] | None = field(default=None, repr=False, compare=False)

    @property
    def sources(self) -> list[dict]:
        """Entry parameters feeding it (parameter name, local and global shape)."""
        if self._sources is None:
            self._sources = self.sources_fn() if self.sources_fn is not None else []
        return self._sources

    def to_dict(self) -> dict:
        out = asdict(self)
        del out["sources_fn"], out["_sources"]
        out["sources"] = [dict(x) for x in self.sources]
        out["async"] = out.pop("is_async")
        return out


def _trace_params(comp: Computation, instr: Instruction, limit: int = 64) -> list[Instruction]:
    """Entry parameters this instruction's operands are computed from."""
    out: list[Instruction] = []
    seen: set[str] = set()
    by_name = comp.by_name
    stack = list(instr.operands)
    while stack and len(seen) < limit:
        name = stack.pop()
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        node = by_name[name]
        if node.opcode == "parameter":
            out.append(node)
        else:
            stack.extend(node.operands)
    return sorted(out, key=lambda p: p.parameter_number or 0)


def _sources_of(comp: Computation, instr: Instruction, cache: dict[int, dict]) -> Callable[[], list[dict]]:
    """A function giving the entry parameters an instruction is computed from."""
    return lambda: [_source(p, cache) for p in _trace_params(comp, instr) if p.shape.is_array]


def _source(param: Instruction, cache: dict[int, dict]) -> dict:
    found = cache.get(id(param))
    if found is None:
        found = cache[id(param)] = {"parameter": param.name, "local_shape": str(param.shape),
                                    "global_shape": str(global_shape(param))}
    return dict(found)


def global_shape(param: Instruction) -> Shape:
    """A parameter's unsharded shape: local dims times its sharding's tile counts."""
    shape = param.shape
    sharding = param.attr("sharding")
    if sharding is None or sharding.kind != "tiled" or not shape.is_array:
        return shape
    tiles = sharding.tile_shape[: shape.rank]
    return Shape(shape.element_type, tuple(d * t for d, t in zip(shape.dims, tiles)), shape.dynamic)


def _between(comp: Computation, start: Instruction, done: Instruction, model: CostModel,
             skip: frozenset[str] = frozenset()) -> tuple[int, float]:
    pos = comp.positions()
    a, b = pos[start.name], pos[done.name]
    count, flops = 0, 0.0
    for instr in comp.instructions[a + 1 : b]:
        if instr.opcode in FREE or start.name in instr.operands or instr.name in skip:
            continue
        count += 1
        flops += model.compute(instr).flops
    return count, flops


def _chain_overlap(comp: Computation, fusions: list[Instruction], model: CostModel,
                   ) -> tuple[int, float]:
    """What runs between a chain's first and last fusion (its continuations included)."""
    if len(fusions) < 2:
        return 0, 0.0
    middles = fusions[1:-1]  # (counted once each, however they read the start's tuple)
    count, flops = _between(comp, fusions[0], fusions[-1], model,
                            frozenset(f.name for f in middles))
    for middle in middles:
        count += 1
        flops += model.compute(middle).flops
    return count, flops


def _scattered_by(module: Module, instr: Instruction, n: int, users: list[Instruction]) -> str:
    """The user that keeps 1/n of an all-reduce's result (a dynamic-slice, or a fusion rooted
    in one): TPU compiles a reduce-scatter so, and fuses the pair into one reduce-scatter
    (XProf's "all-reduce-scatter fusion"); "" otherwise. `users`: the all-reduce's."""
    if len(users) != 1 or n < 2 or not instr.shape.is_array:
        return ""
    user = users[0]
    root = user
    if user.opcode == "fusion" and user.called_computations:
        callee = module.by_name.get(user.called_computations[0])
        root = callee.root if callee is not None else None
        while root is not None and root.opcode == "bitcast" and root.operands:
            root = callee.by_name.get(root.operands[0])
    if root is None or root.opcode != "dynamic-slice" or not user.shape.is_array:
        return ""
    return user.name if user.shape.num_elements * n == instr.shape.num_elements else ""


def _users_asked(found: list[tuple[Computation, Instruction, str]]) -> dict[int, dict]:
    """By id(computation): the users of its all-reduces (is one a reduce-scatter?) and of
    its async starts (their dones), found together, once per computation."""
    asked: dict[int, tuple[Computation, list[str]]] = {}
    for comp, instr, op in found:
        entry = asked.get(id(comp))
        if entry is None:
            entry = asked[id(comp)] = (comp, [])
        if op == "all-reduce" or instr.opcode.endswith("-start"):
            entry[1].append(instr.name)
    return {key: comp.users_of(names) for key, (comp, names) in asked.items()}


def analyze(module: Module, chip: Chip | None = None) -> Sharding:
    model = CostModel(module)
    found: list[tuple[Computation, Instruction, str]] = []
    in_fusions: list[tuple[Computation, Instruction, str]] = []
    all_groups: set[tuple[int, ...]] = set()
    implicit_sizes: dict[int, int] = {}  # id(instr) -> participants its shapes imply
    read_groups: dict[int, tuple] = {}  # id(instr) -> groups_of(instr, 1): read once
    by_text: dict[str | None, tuple] = {}  # replica_groups text -> groups_of it
    counted: set[int] = set()  # ids of the reads (read_groups keeps them) all_groups holds
    fusion_comps = module.fusion_computations()
    # (an async-start's wrapped computation, or a `<op>-start` shorthand's: its collective is the start's)
    starts = [op for op in module.opcodes() if op == "async-start" or async_shorthand(op)]
    wrapped = {c for i in module.of_opcodes(starts) for c in i.called_computations}
    # (from the module's opcode index: a training step has tens of thousands of small
    # fused computations and one entry of tens of thousands of instructions)
    by_name = module.by_name
    candidates = [(by_name[instr.computation], instr)
                  for instr in module.of_opcodes(MAY_BE_COLLECTIVE) if instr.computation not in wrapped]
    for comp, instr in candidates:
        op = base_opcode(instr, module)
        if op is None:
            continue
        (in_fusions if comp.name in fusion_comps else found).append((comp, instr, op))
        said = wrapped_collective(module, instr)  # (its groups are the wrapped op's)
        if has_pairs(said):
            read = groups_of(said, 1)
        else:
            text = said.raw_attr("replica_groups")
            read = by_text.get(text)
            if read is None:
                read = by_text[text] = groups_of(said, 1)
        groups, rg = read_groups[id(instr)] = read
        implicit = implicit_sizes[id(instr)] = implicit_size(instr, said, op, model, rg)
        if implicit > 1:
            all_groups.add(tuple(range(implicit)))
        elif id(read) not in counted:  # (each text's groups once: a layer repeats the last's)
            counted.add(id(read))
            all_groups.update(groups)
    chains = {id(clones[0]): (caller, fusions, clones)
              for caller, fusions, clones, _ in fused_chains(module, in_fusions)}
    found += [(comp, instr, op) for comp, instr, op in in_fusions if id(instr) in chains]
    devices = device_count(module, all_groups)

    mesh = Mesh(devices)
    axes = sdy_mesh(module)
    if axes:
        mesh.axes, mesh.source = axes, "sdy"
    elif (beside := mesh_beside(module)) is not None and prod(a.size for a in beside[0]) == devices:
        mesh.axes, mesh.source = beside
    has_names = bool(mesh.axes)  # (names from Shardy or beside the module beat axis_0, axis_1)
    collectives: list[Collective] = []
    factors_seen: list[tuple[int, int]] = []
    source_cache: dict[int, dict] = {}  # collectives of one layer trace to the same parameters
    sizes: dict[tuple, tuple[int, int, float, str]] = {}  # (by shape ids: the module keeps them)
    users = _users_asked(found)
    links: dict[tuple, object] = {}  # (op, moved, n, id(groups)) -> link_time (groups kept)
    kept: list[list] = []
    # (groups, rg, factors, n) by (id of the groups read, implicit size, permute?): a
    # module's collectives share a few group texts, each read once (read_groups keeps them)
    grouped: dict[tuple, tuple] = {}
    axis_of: list[tuple] = []  # each collective's grouped entry, for its axis name below
    for comp, instr, op in found:
        read = read_groups[id(instr)]
        implicit = implicit_sizes[id(instr)]
        permute = op == "collective-permute"
        group_key = (id(read), implicit, permute)
        entry = grouped.get(group_key)
        if entry is None:
            entry = grouped[group_key] = group_facts(module, instr, read, implicit, devices, permute)
            factors_seen.extend(entry[2] or [])  # (infer_mesh keeps each stride's first)
        groups, rg, factors, n = entry
        axis_of.append(entry)
        axis = "permute" if permute else ""
        if rg is not None and rg.form == "mesh" and not has_names:
            mesh.axes, mesh.source = named_axes(list(rg.mesh_axes)), "replica_groups"
        operands = model.operand_shapes(instr)
        scattered_by = (_scattered_by(module, instr, n, users[id(comp)].get(instr.name, []))
                        if op == "all-reduce" else "")
        op = "reduce-scatter" if scattered_by else op
        # (a layer's collectives repeat the last layer's shapes: sized once per signature)
        key = (op, instr.opcode, n, id(instr.shape), *map(id, operands))
        sized = sizes.get(key)
        if sized is None:
            sized = sizes[key] = sized_collective(op, n, instr, operands)
        operand_bytes, result_bytes, moved, gshape = sized
        first = comp.by_name.get(instr.operands[0]) if op != "all-gather" and len(instr.operands) == 1 else None
        if first is not None and first.opcode == "parameter":
            gshape = str(global_shape(first))  # (its only source is that parameter)
        sources = _sources_of(comp, instr, source_cache)
        done = None
        overlap = (0, 0.0)
        is_async = instr.opcode.endswith("-start")
        clones: list[str] = []
        continuations: list[str] = []
        where, named = comp, instr
        if id(instr) in chains:  # cloned into fusions: the chain is the collective
            where, fusions, cloned = chains[id(instr)]
            named, clones = fusions[0], [c.name for c in cloned]
            continuations = [f.name for f in fusions[1:-1]]
            is_async = len(fusions) > 1
            done = fusions[-1].name if is_async else None
            overlap = _chain_overlap(where, fusions, model)
            sources = _sources_of(where, named, source_cache)
        elif is_async:
            done_instr = next((u for u in users[id(comp)].get(instr.name, ())
                               if u.opcode.endswith("-done")), None)
            if done_instr is not None:
                done = done_instr.name
                overlap = _between(comp, instr, done_instr, model)
            if '"is_sync":true' in (instr.raw_attr("backend_config") or "").replace('\\"', '"').replace(" ", ""):
                is_async, overlap = False, (0, 0.0)  # XLA GPU runs it in place (is_sync)
        group_list = [list(g) for g in groups]
        link_key = (op, moved, n, id(groups))  # (a layer's collectives repeat the last's)
        link = links.get(link_key)
        if link is None:
            link = links[link_key] = link_time(chip, op, moved, n, group_list)
            kept.append(groups)  # (its id stays its own while the key lives)
        collectives.append(Collective(
            module=module.name, computation=where.name, instruction=named.name, opcode=op,
            is_async=is_async, done=done,
            group_size=n if op != "collective-permute" else len(groups),
            num_groups=len(groups) if op != "collective-permute" else 1,
            groups=group_list, axis=axis,
            strides=[list(f) for f in (factors or [])], bytes=operand_bytes,
            result_bytes=result_bytes, moved_bytes=moved, global_shape=gshape, sources_fn=sources,
            est_seconds=link.seconds, links=link.links, crosses_domains=link.crosses_domains,
            overlap_instructions=overlap[0], overlap_flops=overlap[1],
            line=named.line, column=named.column, clones=clones, continuations=continuations,
            scattered_by=scattered_by,
        ))
    if not mesh.axes:
        mesh.axes = infer_mesh(devices, factors_seen)
    named: dict[int, str] = {}  # id(grouped entry) -> its axis name
    for c, entry in zip(collectives, axis_of):
        if c.opcode == "collective-permute":
            continue
        name = named.get(id(entry))
        if name is None:
            name = named[id(entry)] = axis_name(mesh, entry[2] or [])
        c.axis = name
    return Sharding(mesh, collectives)


def bytes_per_axis(collectives: list[Collective]) -> dict[str, float]:
    out: dict[str, float] = {}
    for c in collectives:
        out[c.axis] = out.get(c.axis, 0.0) + c.moved_bytes
    return dict(sorted(out.items()))
