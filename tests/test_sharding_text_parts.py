"""`hloscope sharding`'s text, branch by branch, on collectives written by hand (labelled as
such: stand-ins with the fields hloscope.sharding gives), each expected line worked out by
hand. test_sharding_text.py holds real compiles' text to their JSON."""

from __future__ import annotations

from types import SimpleNamespace as NS

from hloscope.report.sharding import sharding_text


def _mesh():
    return NS(devices=8, source="replica groups", axes=[NS(name="data", size=4, stride=2), NS(name="model", size=2, stride=1)])


def _c(name, moved, est=None, is_async=False, **more):
    c = NS(instruction=name, opcode="all-reduce", scattered_by=None, axis="data", num_groups=2, group_size=4,
           bytes=2**20, moved_bytes=moved, est_seconds=est, links=None, is_async=is_async, overlap_instructions=3,
           global_shape="f32[1024,256]", groups=[[0, 2, 4, 6], [1, 3, 5, 7]], sources=[])
    for k, v in more.items():
        setattr(c, k, v)
    return c


def test_the_header_and_no_collectives():
    text = sharding_text([(NS(name="m"), _mesh(), [])], [{}], False, 0)
    assert text.split("\n") == [
        "HloModule m: 8 devices; mesh (replica groups): data=4 (stride 2), model=2 (stride 1)",
        "  no collectives"]
    none = sharding_text([(NS(name="m"), NS(devices=1, source="none", axes=[]), [])], [{"data": 3 * 2**20}], False, 0)
    assert none.split("\n")[:2] == ["HloModule m: 1 devices; mesh (none): none",
                                     "  bytes moved per device by axis: data 3.00 MiB"]


def test_a_collective_in_full():
    c = _c("ar.1", 1.5 * 2**20, est=2.5e-5, is_async=True, links="ICI", scattered_by="ds.3",
           sources=[{"parameter": "w", "local_shape": "f32[256,256]", "global_shape": "f32[1024,256]"},
                    {"parameter": "b", "local_shape": "f32[8]", "global_shape": "f32[8]"}])
    lines = sharding_text([(NS(name="m"), _mesh(), [c])], [{}], True, 0).split("\n")
    assert lines[1] == ("  ar.1: all-reduce (all-reduce + %ds.3, fused by XLA) over data, 2 group(s) of 4, "
                        "1.00 MiB/device -> 1.50 MiB moved, ~25.00 us on ICI, async, 3 ops overlap")
    assert lines[2] == "      global shape f32[1024,256]; first group [0, 2, 4, 6]"
    assert lines[3] == "      from %w: f32[256,256] of f32[1024,256]"  # (b is not sharded: no line)
    assert lines[4] == "      groups [[0, 2, 4, 6], [1, 3, 5, 7]]"
    assert len(lines) == 5


def test_no_estimate_no_links_and_no_groups():
    c = _c("ag", 2**20, links="ICI", groups=[])
    lines = sharding_text([(NS(name="m"), _mesh(), [c])], [{}], False, 0).split("\n")
    assert lines[1].endswith("1.00 MiB moved, ~-, sync")
    assert lines[2].endswith("first group []")


def test_top_keeps_the_costliest_in_program_order():
    """Estimates 30, 10 and 20 us, and one with none (by bytes, 5 MiB > any estimate): top 2
    keeps the unestimated one and the 30 us one, in program order."""
    cs = [_c("a", 2**20, est=3e-5), _c("b", 2**20, est=1e-5), _c("c", 2**20, est=2e-5), _c("d", 5 * 2**20)]
    lines = sharding_text([(NS(name="m"), _mesh(), cs)], [{}], False, top=2).split("\n")
    assert lines[1] == "  4 collectives; the 2 costliest, in program order:"
    assert [ln.split(":")[0].strip() for ln in lines[2::2][:2]] == ["a", "d"]
    assert lines[-1] == "  and 2 more (--top 0 lists all)"
    assert len(sharding_text([(NS(name="m"), _mesh(), cs)], [{}], False, top=4).split("\n")) == 9
    assert len(sharding_text([(NS(name="m"), _mesh(), cs)], [{}], False, top=0).split("\n")) == 9


def test_top_one_keeps_the_costliest_and_estimates_in_ms_show_three_decimals():
    cs = [_c("a", 2**20, est=1.23456e-3), _c("b", 2**20, est=2.5e-5)]
    lines = sharding_text([(NS(name="m"), _mesh(), cs)], [{}], False, top=1).split("\n")
    assert lines[1] == "  2 collectives; the 1 costliest, in program order:"
    assert lines[2].endswith("1.00 MiB moved, ~1.235 ms, sync")
    assert lines[-1] == "  and 1 more (--top 0 lists all)"
