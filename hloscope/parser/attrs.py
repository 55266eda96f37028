"""Typed attribute values: which grammar rule parses which key, memoized by text."""

from __future__ import annotations

import json
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from hloscope.parser.fast.compact import MISSING, fast_value
from hloscope.parser.fast.shapes import fast_shape
from hloscope.parser.grammar.source import lark_parser, terminal_regex
from hloscope.parser.text import scalar_text

if TYPE_CHECKING:
    from hloscope.ir import Instruction, Module

INT_LIST_KEYS = (
    "dimensions", "lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims",
    "rhs_batch_dims", "slice_sizes", "dynamic_slice_sizes", "offset_dims",
    "collapsed_slice_dims", "start_index_map", "update_window_dims", "inserted_window_dims",
    "scatter_dims_to_operand_dims", "operand_batching_dims", "start_indices_batching_dims",
    "input_batching_dims", "scatter_indices_batching_dims", "fft_length", "broadcast_dimensions",
    "lhs_ragged_dimensions", "rhs_group_dimensions",
)

# Attribute key -> start rule in grammar/hlo.lark. Keys not listed are scalars
# (int, float, name, string) or kept as their generic tree.
KEY_RULES: dict[str, str] = {
    **{k: "int_list" for k in INT_LIST_KEYS},
    "replica_groups": "replica_groups",
    "source_target_pairs": "int_list_list",
    "window": "window",
    "slice": "slice_ranges",
    "dim_labels": "dim_labels",
    "padding": "padding",
    "sharding": "sharding",
    "metadata": "record",
    "frontend_attributes": "record",
    "result_accuracy": "record",
    "statistics": "record",
    "branch_computations": "name_list",
    "called_computations": "name_list",
    "control-predecessors": "name_list",
    "operand_layout_constraints": "shape_list",
    "entry_computation_layout": "program_shape",
    "parameter_replication": "bool_list",
    "allow_spmd_sharding_propagation_to_parameters": "bool_list",
    "allow_spmd_sharding_propagation_to_output": "bool_list",
}

_RECORD_KEYS = frozenset(k for k, rule in KEY_RULES.items() if rule == "record")

# Every attribute name XLA's parser takes on some instruction (strict mode refuses any
# other: XLA says "unexpected attribute"); seen in real dumps and in hlo_parser.cc.
KNOWN_KEYS = frozenset({
    "sharding", "frontend_attributes", "statistics", "parameter_replication",
    "control-predecessors", "origin", "metadata", "backend_config", "replica_groups",
    "channel_id", "dimensions", "constrain_layout", "use_global_device_ids", "to_apply",
    "source_target_pairs", "slice_sizes", "mode", "async_execution_thread",
    "output_to_operand_aliasing", "calls", "cross_program_prefetch_index", "inferred_dimension",
    "is_stable", "condition", "body", "is_host_transfer", "true_computation",
    "false_computation", "branch_computations", "custom_call_target", "window", "dim_labels",
    "feature_group_count", "batch_group_count", "operand_layout_constraints",
    "custom_call_has_side_effect", "literal", "schedule", "api_version", "padding_type",
    "operand_precision", "algorithm", "called_computations", "lhs_contracting_dims",
    "rhs_contracting_dims", "lhs_batch_dims", "rhs_batch_dims", "lhs_ragged_dimensions",
    "rhs_group_dimensions", "sparsity", "fft_type", "fft_length", "direction", "type",
    "distribution", "exponent_bits", "mantissa_bits", "offset_dims", "collapsed_slice_dims",
    "start_index_map", "index_vector_dim", "indices_are_sorted", "unique_indices",
    "operand_batching_dims", "start_indices_batching_dims", "update_window_dims",
    "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims",
    "scatter_indices_batching_dims", "dynamic_slice_sizes", "padding", "slice", "kind",
    "infeed_config", "outfeed_config", "outfeed_shape", "epsilon", "feature_index",
    "left_side", "lower", "unit_diagonal", "transpose_a", "k", "largest", "domain",
    "iota_dimension", "select", "scatter", "is_composite", "is_reverse", "num_carries",
    "is_associative", "result_accuracy", "index", "delta", "split_dimension", "conv_kind",
})

_SCALAR_TERMINALS = ("INT", "FLOAT", "NAME", "STRING", "SQSTRING", "NEG_SPECIAL", "DIM_LABELS")


@cache
def _builder() -> Any:
    from hloscope.parser.grammar.transform import ValueBuilder  # imports Lark

    return ValueBuilder()


def parse_rule(rule: str, text: str) -> Any:
    """Parse `text` with start rule `rule` and build its value (not memoized)."""
    return _builder().transform(lark_parser().parse(text, start=rule))


@lru_cache(maxsize=65536)
def parse_shape(text: str) -> Any:
    """The Shape of `text`: the printer's compact form directly, the rest by the grammar."""
    shape = fast_shape(text)
    return shape if shape is not None else parse_rule("shape", text)


def _scalar(text: str) -> Any:
    for term in _SCALAR_TERMINALS:
        if terminal_regex(term).fullmatch(text):
            return scalar_text(term, text)
    return MISSING


@lru_cache(maxsize=65536)
def parse_attr(key: str, text: str) -> Any:
    """The typed value of `key=text`; raises lark errors on malformed text."""
    rule = KEY_RULES.get(key)
    if rule == "int_list" and text.startswith("{{"):  # collective-permute's slice_sizes={{2}}
        rule = "int_list_list"
    if rule is not None:
        if rule == "name_list" and not text.startswith("{"):
            return (scalar_text("NAME", text),)
        if rule == "bool_list" and not text.startswith("{"):
            return text == "true"
        value = fast_value(rule, text)
        return value if value is not MISSING else parse_rule(rule, text)
    value = _scalar(text)
    if value is not MISSING:
        return value
    if key == "backend_config" and text.startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return parse_rule("generic", text)


def force_attributes(modules: list[Module]) -> None:
    """Check every instruction attribute value against its typed rule (strict mode does
    this; the module header's values are typed by validate, on both paths). Each distinct
    attribute list is checked once, and a record the compact form reads without fail is
    not built."""
    from hloscope.parser.fast.compact import accepted, plain_record

    for module in modules:
        checked: set[str] = set()  # attribute lists typed already (layers repeat them)
        for comp in module.computations:
            for instr in comp.instructions:
                text = instr.attr_text if instr._attrs is None else None
                if text is not None:
                    if text in checked:
                        continue
                    checked.add(text)  # (an error below ends the check: none stays wrongly)
                for key, value in instr.attrs_once().items():
                    if accepted(key, value) or (key in _RECORD_KEYS and plain_record(value)):
                        continue  # a form the grammar takes; nothing reads its tree now
                    try:
                        parse_attr(key, value)
                    except Exception as e:  # noqa: BLE001 - re-raised with a location
                        raise AttributeParseError(instr, key, e) from e


class AttributeParseError(Exception):
    def __init__(self, instr: Instruction, key: str, cause: Exception) -> None:
        super().__init__(f"malformed {key}= value of %{instr.name}: {cause}")
        self.instr = instr
        self.key = key
        self.cause = cause
