"""hloscope.cost.sharing's in-place and aliasing reads, each on a HAND-WRITTEN minimal module
(labelled as such) whose answer is worked out by hand from the rule the function states; the
backend_config texts are in the form real TPU dumps print (fixtures/tpu: `"aliasing_operands":
{"lists":[{"indices":["0","28"]},...]}`)."""

from __future__ import annotations

from hloscope.cost.sharing import backend_aliases, in_place
from hloscope.parser import parse

_AR = """HloModule m, is_scheduled=true

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[8], y: f32[4]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %one = f32[8]{0} all-reduce-start(%x), replica_groups={}, to_apply=%sum{config}
  %two = (f32[8]{0}, f32[4]{0}) all-reduce-start(%x, %y), replica_groups={}, to_apply=%sum
  %d1 = f32[8]{0} all-reduce-done(%one)
  %d2 = (f32[8]{0}, f32[4]{0}) all-reduce-done(%two)
  %u = f32[8]{0} dynamic-update-slice(%x, %y, %c)
  ROOT %r = f32[8]{0} add(%d1, %u)
}
"""


def _module(config: str = ""):
    text = _AR.replace("{config}", config).replace(
        "  %u = f32[8]{0} dynamic-update-slice(%x, %y, %c)",
        "  %c = s32[] constant(0)\n  %u = f32[8]{0} dynamic-update-slice(%x, %y, %c)")
    (m,) = parse(text)
    return m


def test_an_all_reduce_start_runs_in_place_unless_nvshmem():
    m = _module()
    by = m.entry.by_name
    assert in_place(by["one"], m) == [(0, 0)]
    assert in_place(by["two"], m) == [(0, 0), (1, 1)]  # (operand k into result leaf k)
    assert in_place(by["u"], m) == [(0, 0)]  # (a dynamic-update-slice: into its first operand)
    assert in_place(by["r"], m) == [] and in_place(by["x"], m) == []
    # (as XLA writes it, its GPU tests' form: the backend enum's name; it was once looked for
    # in lower case, which XLA never prints, so NVSHMEM's starts were taken as in place)
    nv = _module(', backend_config={"collective_backend_config":{"backend":"NVSHMEM"}}')
    assert in_place(nv.entry.by_name["one"], nv) == []  # (NVSHMEM's one-shot: separate buffers)
    default = _module(', backend_config={"collective_backend_config":{"backend":"DEFAULT"}}')
    assert in_place(default.entry.by_name["one"], default) == [(0, 0)]


def _tpu(config: str, operands: int = 2):
    names = ", ".join(f"%p{k}" for k in range(operands))
    params = "\n".join(f"  %p{k} = f32[8]{{0}} parameter({k})" for k in range(operands))
    sig = ", ".join(f"p{k}: f32[8]" for k in range(operands))
    text = f"""HloModule m

ENTRY %main ({sig}) -> (f32[8], f32[8]) {{
{params}
  ROOT %f = (f32[8]{{0}}, f32[8]{{0}}) custom-call({names}), custom_call_target="foo", backend_config={config}
}}
"""
    (m,) = parse(text)
    return m.entry.by_name["f"]


def test_backend_aliases_groups():
    """2 operands: numbers 0-1 are operands, 2 and 3 result leaves 0 and 1. A group naming
    two result leaves is left out."""
    f = _tpu('{"aliasing_operands":{"lists":[{"indices":["0","2"]},{"indices":["1","3"]}]}}')
    assert backend_aliases(f) == {0: [0], 1: [1]}
    both = _tpu('{"aliasing_operands":{"lists":[{"indices":["0","1","2"]},{"indices":["0","2","3"]}]}}')
    assert backend_aliases(both) == {0: [0, 1]}
    empty = _tpu('{"aliasing_operands":{"lists":[]},"other":{"lists":[{"indices":["0","2"]}]}}')
    assert backend_aliases(empty) == {}
    later = _tpu('{"flag":true,"aliasing_operands":{"lists":[{"indices":["1","2"]}]}}')
    assert backend_aliases(later) == {0: [1]}
    assert backend_aliases(_tpu('{"flag":true}')) == {}


def test_alias_paths_of_nested_tuples_read_every_index():
    """XLA prints an alias path of a nested tuple element with its indices comma-separated,
    blanks after the commas in a module header: `{0, 1}`."""
    from hloscope.cost.sharing import alias_pairs

    assert alias_pairs("{ {0, 1}: (0, {1}, may-alias), {2}: (1, {}, must-alias) }") == [
        ((0, 1), 0, (1,)), ((2,), 1, ())]
    assert alias_pairs("{{1}: (2, {0,1})}") == [((1,), 2, (0, 1))]
    assert alias_pairs(None) == [] and alias_pairs("") == []


def test_a_fusion_updating_a_buffer_it_makes_itself_is_not_in_place():
    """HAND-WRITTEN minimal module: the fused dynamic-update-slice writes into a broadcast the
    fusion makes, not into a fused parameter, so no operand's buffer is updated in place;
    the same update into parameter 0 is."""
    from hloscope.cost.sharing import in_place

    def fusion(target: str):
        (m,) = parse(f"""HloModule m

fused {{
  p0 = f32[8]{{0}} parameter(0)
  p1 = f32[2]{{0}} parameter(1)
  z = f32[] constant(0)
  b = f32[8]{{0}} broadcast(z), dimensions={{}}
  i = s32[] constant(0)
  ROOT u = f32[8]{{0}} dynamic-update-slice({target}, p1, i)
}}

ENTRY e {{
  x = f32[8]{{0}} parameter(0)
  y = f32[2]{{0}} parameter(1)
  ROOT f = f32[8]{{0}} fusion(x, y), kind=kLoop, calls=fused
}}
""")
        return in_place(m.entry.by_name["f"], m)

    assert fusion("b") == [] and fusion("p0") == [(0, 0)]
