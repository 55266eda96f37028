"""Strict mode's checks of how a computation's instructions fit together, as XLA's parser
resolves them once the computation is read: an infeed gives a non-empty tuple; a
conditional's selector is a scalar pred (true/false computations) or s32 (branches); a
parameter_replication list has one element per leaf buffer; each async op wraps a
computation of its own, named alike along its chain; a dense layout has no physical shape;
an opcode's required attributes are there; result_accuracy is a mode or tolerance on a
transcendental op; an async update or done runs on its start's thread; an operand
printed with a shape has that shape (layouts aside); a custom call's api_version is one XLA
knows and its operand_layout_constraints give one compatible shape per operand; every
control predecessor is an instruction of the computation; the root has the shape the
computation's signature states. Each problem is worded as XLA words it."""

from __future__ import annotations

import re

from hloscope._speed import regex_cache
from hloscope.ir import Computation, Instruction


def wiring_problem(comp: Computation) -> tuple[Instruction, str] | None:
    """(instruction, XLA's complaint) for the first of these in a computation, else None."""
    wrapped: dict[str, str] = {}  # computation -> the async-start that calls it
    for instr in comp.instructions:
        problem = _instruction(instr, comp) or _async_calls(instr, comp, wrapped)
        if problem is not None:
            return instr, problem
    from hloscope.parser.attrs import parse_shape

    root = comp.root
    if comp.result_shape_text and root is not None and not _compatible(
            parse_shape(comp.result_shape_text), root.shape):
        return root, (f"Shape of computation {comp.name}, {comp.result_shape_text}, is not "
                      f"compatible with that of its root instruction {root.name}, {root.shape}")
    return None


def _async_calls(instr: Instruction, comp: Computation, wrapped: dict[str, str]) -> str | None:
    """One async op per wrapped computation; an update or done that names one names its start's."""
    called = instr.attrs.get("calls")
    if instr.opcode == "async-start" and called:
        if called in wrapped:
            return f"Computation {called.lstrip('%')} is called by more than one async op"
        wrapped[called] = instr.name
    elif instr.opcode in ("async-update", "async-done") and called:
        start = instr
        while start is not None and start.opcode != "async-start" and start.operands:
            start = comp.by_name.get(start.operands[0])
        mine, theirs = called.lstrip("%"), (start.attrs.get("calls") or "").lstrip("%") if start else ""
        if start is not None and theirs and mine != theirs:
            return f"Expect async_wrapped_computation to be {theirs}, but got {mine}"
    return None


_ACCURATE = frozenset({"exponential", "exponential-minus-one", "log", "log-plus-one", "logistic",
                       "rsqrt", "sqrt", "cbrt", "tanh", "sine", "cosine", "tan", "erf"})
_ACCURACY = regex_cache.compile(r"\{\s*(?:mode\s*=\s*(?:default|highest)"
                       r"|tolerance\s*=\s*\{\s*(?:(?:rtol|atol|ulps)\s*=\s*[-+.\deE]+\s*,?\s*)+\})\s*\}",
                       re.IGNORECASE)


def _result_accuracy(instr: Instruction) -> str | None:
    """result_accuracy: only on the transcendental ops; a mode (default, highest) or a
    tolerance of rtol/atol/ulps (what jaxlib's parser takes, checked case by case)."""
    value = instr.raw_attr("result_accuracy")
    if value is None:
        return None
    if instr.opcode not in _ACCURATE:
        return 'unexpected attribute "result_accuracy"'
    if not _ACCURACY.fullmatch(value.strip()):
        return f"expects a result_accuracy of {{mode=default|highest}} or {{tolerance={{rtol=, atol=, ulps=}}}}, not {value}"
    return None


def _thread(instr: Instruction, comp: Computation) -> str | None:
    """An async update or done runs on its start's thread (`main` unless the start says)."""
    if not instr.opcode.endswith(("-update", "-done")) or "async_execution_thread" not in instr.attrs:
        return None
    start = instr
    while start is not None and start.operands and not start.opcode.endswith("-start"):
        start = comp.by_name.get(start.operands[0])
    if start is None or not start.opcode.endswith("-start"):
        return None
    want = (start.attrs.get("async_execution_thread") or "main").strip('"')
    got = instr.attrs["async_execution_thread"].strip('"')
    return f"Expect async_execution_thread to be {want}, but got {got}" if got != want else None


def _physical_shape(shape) -> bool:
    """A layout with a physical shape P(...) on an array that is not sparse."""
    if shape.is_tuple:
        return any(_physical_shape(e) for e in shape.elements)
    layout = shape.layout
    return bool(layout is not None and layout.physical_shape is not None
                and all(t == "D" for t in layout.dim_level_types))


def _instruction(instr: Instruction, comp: Computation) -> str | None:
    if _physical_shape(instr.shape):
        return "Layout has physical shape, but is not for a sparse array"
    if instr.opcode == "infeed" and not (instr.shape.is_tuple and instr.shape.elements):
        return "infeed must have a non-empty tuple shape"
    for key in _REQUIRED.get(instr.opcode, ()):
        if key not in instr.attrs and not (key == "dimensions" and instr.opcode == "broadcast"
                                           and _scalar_operand(instr, comp)):
            return f"attribute {key} is expected but not seen"
    problem = _operand_shapes(instr, comp) or _result_accuracy(instr) or _thread(instr, comp)
    if problem is None:
        check = _BY_OPCODE.get(instr.opcode)
        problem = check(instr, comp) if check is not None else None
    if problem is not None:
        return problem
    for name in _NAMES.findall(instr.raw_attr("control-predecessors") or ""):
        if name not in comp.by_name:
            return f"'{name}' is not defined"
    return None


# The attributes XLA's parser requires, per opcode: bench/required_attrs.py derives them by
# deleting each attribute from a real instruction of fixtures/ and the corpus and asking
# jaxlib's parser (channel_id is left out: it is required only beside use_global_device_ids;
# a conditional takes branch_computations or true/false computations)
_REQUIRED = {
    "all-gather": ("dimensions",), "all-gather-start": ("dimensions",),
    "all-reduce": ("to_apply",), "all-reduce-start": ("to_apply",), "async-start": ("calls",),
    "batch-norm-grad": ("epsilon", "feature_index"),
    "batch-norm-training": ("epsilon", "feature_index"), "broadcast": ("dimensions",),
    "call": ("to_apply",), "call-start": ("to_apply",),
    "collective-permute": ("source_target_pairs",),
    "collective-permute-start": ("source_target_pairs",), "compare": ("direction",),
    "concatenate": ("dimensions",), "convolution": ("dim_labels",),
    "custom-call": ("custom_call_target",), "domain": ("domain",),
    "dynamic-slice": ("dynamic_slice_sizes",), "fft": ("fft_length", "fft_type"),
    "fusion": ("calls", "kind"),
    "gather": ("collapsed_slice_dims", "index_vector_dim", "offset_dims", "slice_sizes",
               "start_index_map"),
    "get-dimension-size": ("dimensions",), "get-tuple-element": ("index",),
    "iota": ("iota_dimension",), "map": ("to_apply",), "pad": ("padding",),
    "reduce": ("dimensions", "to_apply"), "reduce-precision": ("exponent_bits", "mantissa_bits"),
    "reduce-scatter": ("dimensions", "to_apply"), "reduce-window": ("to_apply",),
    "reverse": ("dimensions",), "rng": ("distribution",), "rng-bit-generator": ("algorithm",),
    "rng-get-and-update-state": ("delta",), "scan": ("dimensions", "num_carries", "to_apply"),
    "scatter": ("index_vector_dim", "inserted_window_dims", "scatter_dims_to_operand_dims",
                "to_apply", "update_window_dims"),
    "select-and-scatter": ("scatter", "select"), "set-dimension-size": ("dimensions",),
    "slice": ("slice",), "slice-start": ("slice",), "sort": ("dimensions", "to_apply"),
    "topk": ("k",), "transpose": ("dimensions",), "while": ("body", "condition"),
}


def _scalar_operand(instr: Instruction, comp: Computation) -> bool:
    operand = comp.by_name.get(instr.operands[0]) if instr.operands else None
    return operand is not None and operand.shape.is_array and not operand.shape.dims


_NAMES = regex_cache.compile(r"%?([^\s{},%]+)")
_API_VERSIONS = frozenset({"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                           "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"})


def _operand_shapes(instr: Instruction, comp: Computation) -> str | None:
    """An operand printed with a shape must be given the shape of the instruction it names."""
    from hloscope.parser.attrs import parse_shape

    for name, declared in zip(instr.operands, instr.operand_shapes):
        operand = comp.by_name.get(name) if declared else None
        if operand is not None and declared != operand.shape_text and not _compatible(
                parse_shape(declared), operand.shape):
            return (f"The declared operand shape {declared} is not compatible with the shape of "
                    f"the operand instruction {operand.shape}.")
    return None


def _custom_call(instr: Instruction, comp: Computation) -> str | None:
    """A custom call's api_version is one XLA knows; its operand_layout_constraints give one
    shape per operand, each the operand's."""
    version = instr.attrs.get("api_version")
    if version is not None and version not in _API_VERSIONS:
        return (f"Invalid API version {version}" if version == "API_VERSION_UNSPECIFIED"
                else f"Unknown API version {version}")
    constraints = instr.attrs.get("operand_layout_constraints")
    if constraints is None:
        return None
    from hloscope.parser.attrs import parse_attr

    shapes = parse_attr("operand_layout_constraints", constraints)
    if len(shapes) != len(instr.operands):
        return f"Expected {len(instr.operands)} operand layout constraints, {len(shapes)} given"
    for k, (shape, name) in enumerate(zip(shapes, instr.operands)):
        operand = comp.by_name.get(name)
        if operand is not None and not _compatible(shape, operand.shape):
            return f"operand {k} is not compatible with operand shape {operand.shape}"
    return None


def _conditional(instr: Instruction, comp: Computation) -> str | None:
    """The selector is a pred (true/false computations) or s32 scalar (branch_computations)."""
    selector = comp.by_name.get(instr.operands[0]) if instr.operands else None
    if selector is None:
        return None
    shape = selector.shape
    if shape.is_tuple or shape.dims or shape.element_type not in ("pred", "s32"):
        return "The first operand must be a scalar of PRED or S32"
    if shape.element_type == "pred" and "branch_computations" in instr.attrs:
        return 'unexpected attribute "branch_computations"'
    return None


def _parameter(instr: Instruction, comp: Computation) -> str | None:
    """parameter_replication={..} has one element per leaf buffer of the parameter."""
    text = instr.raw_attr("parameter_replication")
    if not text or not text.startswith("{"):
        return None
    given = len([x for x in text.strip("{}").split(",") if x.strip()])
    leaves = len(instr.shape.leaves())
    if given != leaves:
        return f"parameter has {leaves} leaf buffers, but parameter_replication has {given} elements"
    return None


_BY_OPCODE = {"custom-call": _custom_call, "conditional": _conditional, "parameter": _parameter}


def _compatible(a, b) -> bool:
    if a.is_tuple or b.is_tuple:
        return a.is_tuple and b.is_tuple and len(a.elements) == len(b.elements) and all(
            _compatible(x, y) for x, y in zip(a.elements, b.elements))
    return a.element_type == b.element_type and a.dims == b.dims
