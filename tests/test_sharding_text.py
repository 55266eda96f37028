"""`hloscope sharding`'s text says what its JSON says: the mesh line, bytes per axis and
every collective's two lines, on the real FSDP compile with 4 gathers (3 async) and on a
reduce-scatter written as all-reduce + dynamic-slice (the mutation run found the text's
layout untested)."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, text_and_json

from hloscope.units import human_bytes, human_seconds

FSDP = FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt"
SCATTER = FIXTURES / "tpu" / "reduce_scatter_v5p.hlo.txt"


def _both(*args):
    lines, doc = text_and_json("sharding", *args)
    return lines, doc["modules"][0]


@pytest.mark.parametrize("path", [FSDP, SCATTER])
def test_every_collective_states_its_json_record(path):
    lines, m = _both(path, "--chip", "v5p", "--groups")
    mesh = m["mesh"]
    axes = ", ".join(f"{a['name']}={a['size']} (stride {a['stride']})" for a in mesh["axes"]) or "none"
    assert lines[0] == f"HloModule {m['name']}: {m['devices']} devices; mesh ({mesh['source']}): {axes}"
    assert ("  bytes moved per device by axis: "
            + ", ".join(f"{k} {human_bytes(v, 2)}" for k, v in m["bytes_per_axis"].items())) in lines
    assert sum(m["bytes_per_axis"].values()) == pytest.approx(sum(c["moved_bytes"] for c in m["collectives"]))
    for c in m["collectives"]:
        mode = f"async, {c['overlap_instructions']} ops overlap" if c["async"] else "sync"
        fused = f" (all-reduce + %{c['scattered_by']}, fused by XLA)" if c["scattered_by"] else ""
        head = (f"  {c['instruction']}: {c['opcode']}{fused} over {c['axis']}, {c['num_groups']} group(s) of "
                f"{c['group_size']}, {human_bytes(c['bytes'], 2)}/device -> {human_bytes(c['moved_bytes'], 2)} "
                f"moved, ~{human_seconds(c['est_seconds'], 3)} on {c['links']}, {mode}")
        k = lines.index(head)
        assert lines[k + 1] == f"      global shape {c['global_shape']}; first group {c['groups'][0]}"
        assert f"      groups {c['groups']}" in lines[k + 2:k + 2 + 1 + len(c["sources"])]
        for src in c["sources"]:
            if src["local_shape"] != src["global_shape"]:
                assert f"      from %{src['parameter']}: {src['local_shape']} of {src['global_shape']}" in lines


def test_top_lists_the_costliest_in_program_order():
    lines, m = _both(FSDP, "--chip", "v5p", "--top", "2")
    cs = m["collectives"]
    assert f"  {len(cs)} collectives; the 2 costliest, in program order:" in lines
    assert f"  and {len(cs) - 2} more (--top 0 lists all)" in lines
    shown = [x.split(":")[0].strip() for x in lines if x.startswith("  ") and ": all-gather" in x]
    assert len(shown) == 2
    order = [c["instruction"] for c in cs]
    assert shown == sorted(shown, key=order.index)


def test_a_reduce_scatter_says_it_is_one():
    lines, m = _both(SCATTER, "--chip", "v5p")
    (c,) = [c for c in m["collectives"] if c["scattered_by"]]
    assert c["opcode"] == "reduce-scatter"
    assert any(f"{c['instruction']}: reduce-scatter (all-reduce + %{c['scattered_by']}, fused by XLA)" in x
               for x in lines)
