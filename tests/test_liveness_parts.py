"""The static peak's report, part by part, on HAND-WRITTEN minimal modules with figures
worked by hand (the mutation run of liveness.py found these unread): the constants' bytes,
what is live at the peak (largest first, a buffer whose last reader is the peak's instruction
included, with its op_name and source), a module with no temporaries, and donated outputs
(one the root hands back, one written anew)."""

from __future__ import annotations

from hloscope.cost.liveness import memory
from hloscope.parser import parse

HEAD = """// HAND-WRITTEN minimal module
HloModule m, is_scheduled=true{header}

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

"""


def _memory(body: str, header: str = ""):
    (m,) = parse(HEAD.format(header=header) + "ENTRY e {\n" + body + "\n}\n", "m")
    return memory(m)


def test_the_peak_lists_what_is_live_there_largest_first():
    r = _memory("""  k = f32[4]{0} constant({1, 2, 3, 4})
  z = f32[] constant(0)
  big = f32[4096]{0} broadcast(z), dimensions={}, metadata={op_name="jit(f)/big" source_file="f.py" source_line=3}
  mid = f32[2048]{0} broadcast(z), dimensions={}, metadata={op_name="jit(f)/mid" source_file="f.py" source_line=4}
  cat = f32[6144]{0} concatenate(big, mid), dimensions={0}
  s = f32[] reduce(cat, z), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[4]{0}) tuple(s, k)""")
    assert r.constant_bytes == 4 * 4 + 4  # k and z
    # at the concatenate: its 24 KiB result and both operands, whose last reader it is
    assert r.peak_instruction == "cat" and r.temp_peak_bytes == (6144 + 4096 + 2048) * 4
    assert [x["instruction"] for x in r.peak_live] == ["cat", "big", "mid"]
    big = r.peak_live[1]
    assert (big["bytes"], big["op_name"], big["source"], big["last_use"]) == (4096 * 4, "jit(f)/big", "f.py:3", 4)
    assert [str(x["shape"]).split("{")[0] for x in r.peak_live] == ["f32[6144]", "f32[4096]", "f32[2048]"]


def test_a_module_with_no_temporaries_peaks_at_nothing():
    r = _memory("""  p = f32[256]{0} parameter(0)
  ROOT n = f32[256]{0} negate(p)""")
    assert (r.temp_peak_bytes, r.peak_step, r.peak_live) == (0, 0, [])
    assert [step for step, _, _ in r.timeline] == [0, 1] and all(b == 0 for _, _, b in r.timeline)
    assert r.hbm_bytes == 2 * 256 * 4


def test_donated_outputs_count_once_whether_handed_back_or_written_anew():
    r = _memory("""  p0 = f32[256]{0} parameter(0)
  p1 = f32[512]{0} parameter(1)
  n = f32[512]{0} negate(p1)
  ROOT t = (f32[256]{0}, f32[512]{0}) tuple(p0, n)""",
                header=", input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }")
    # output 0 is p0's own buffer, output 1 is written into p1's: both aliased
    assert r.alias_bytes == 256 * 4 + 512 * 4
    assert r.argument_bytes == 256 * 4 + 512 * 4
    assert r.hbm_bytes == r.argument_bytes + r.output_bytes - r.alias_bytes + r.temp_peak_bytes



LT = """lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  x = s32[] parameter(2)
  y = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=LT
}

"""


def test_a_sort_is_done_in_its_operands_buffers():
    (m,) = parse(HEAD.format(header="") + LT + """ENTRY e {
  p = f32[1024]{0} parameter(0)
  k = f32[1024]{0} negate(p)
  v = s32[1024]{0} iota(), iota_dimension=0
  s = (f32[1024]{0}, s32[1024]{0}) sort(k, v), dimensions={0}, to_apply=lt
  sk = f32[1024]{0} get-tuple-element(s), index=0
  sv = s32[1024]{0} get-tuple-element(s), index=1
  c = f32[1024]{0} convert(sv)
  ROOT o = f32[1024]{0} add(sk, c)
}
""", "m")
    r = memory(m)
    # k and v (4 KiB each) are sorted where they are: the sort makes no buffer of its own
    assert r.temp_peak_bytes == 2 * 1024 * 4


def test_a_root_that_is_the_first_parameter_is_aliased():
    """The root hands back parameter 0 (buffer 0): its 4 KiB are an argument and an output,
    aliased once (XLA counts such an output in both)."""
    r = _memory("  ROOT p = f32[1024]{0} parameter(0)")
    assert (r.argument_bytes, r.output_bytes, r.alias_bytes) == (4096, 4096, 4096)
    assert r.hbm_bytes == 4096 and r.module == "m"


def test_the_output_tuple_table_only_with_tiled_layouts():
    """A tuple root: XLA's TPU memory_analysis adds its index table (4 bytes per element, in
    a 512-byte unit); a module without tiled layouts (CPU) has none."""
    body = ("  p = f32[1024]{0} parameter(0)\n  a = f32[1024]{0} negate(p)\n"
            "  b = f32[1024]{0} exponential(p)\n  ROOT t = (f32[1024]{0}, f32[1024]{0}) tuple(a, b)")
    assert _memory(body).output_bytes == 2 * 4096
    tiled = body.replace("{0}", "{0:T(1024)}")
    assert _memory(tiled).output_bytes == 2 * 4096 + 512


LOOP = """cond {
  p = (s32[], f32[256]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[256]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[256]{0} get-tuple-element(p), index=1
  f = f32[] convert(i)
  big = f32[4096]{0} broadcast(f), dimensions={}
  w = f32[256]{0} slice(big), slice={[0:256]}
  u = f32[256]{0} add(w, v)
  ROOT t = (s32[], f32[256]{0}) tuple(j, u)
}

"""


def test_a_loop_bodys_temporaries_are_a_row_of_their_own_at_the_peak():
    """The body broadcasts to f32[4096] (16 KiB) each trip and slices 1 KiB of it, both live
    at the slice: at the loop's step the peak lists their 17 KiB as one row, the loop's, with
    no op_name or source of its own."""
    (m,) = parse(HEAD.format(header="") + LOOP + """ENTRY e {
  x = f32[256]{0} parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[256]{0}) tuple(z, x)
  l = (s32[], f32[256]{0}) while(t), condition=cond, body=body
  ROOT r = f32[256]{0} get-tuple-element(l), index=1
}
""", "m")
    r = memory(m)
    assert r.peak_instruction == "l" and r.temp_peak_bytes == 16384 + 1024
    assert r.peak_live[-1] == {"instruction": "l", "shape": "(temporaries of the computations it calls)",
                               "bytes": 16384 + 1024, "defined": r.peak_step, "last_use": r.peak_step,
                               "op_name": "", "source": ""}


def test_the_peak_lists_ten_buffers_unless_asked_for_more():
    """Thirteen 4 KiB values made before they are summed: at the peak more than ten are live,
    and ten are listed by default."""
    lines = ["  p = f32[1024]{0} parameter(0)"]
    lines += [f"  n{k} = f32[1024]{{0}} negate(p)" for k in range(13)]
    total = "n0"
    for k in range(1, 13):
        lines.append(f"  s{k} = f32[1024]{{0}} add({total}, n{k})")
        total = f"s{k}"
    lines.append(f"  ROOT r = f32[1024]{{0}} negate({total})")
    (m,) = parse(HEAD.format(header="") + "ENTRY e {\n" + "\n".join(lines) + "\n}\n", "m")
    assert len(memory(m).peak_live) == 10
    r = memory(m, top=20)
    assert len(r.peak_live) == r.temp_peak_bytes // 4096 > 10


# HAND-WRITTEN: a computation that holds exp(x) and log(x) (4 KiB each) at once, then adds them
_CALLEE = """callee {
  x = f32[1024]{0} parameter(0)
  a = f32[1024]{0} exponential(x)
  c = f32[1024]{0} log(x)
  ROOT b = f32[1024]{0} add(a, c)
}
"""


def test_a_calls_peak_holds_what_its_callee_holds_at_once():
    """HAND-WRITTEN minimal module: inside the call, exp(x) and log(x) (4 KiB each) are live
    together before the add, which writes into the call's result buffer: the peak is 8 KiB,
    at the call."""
    (m,) = parse("HloModule m\n\n" + _CALLEE + """
ENTRY e {
  p = f32[1024]{0} parameter(0)
  r = f32[1024]{0} call(p), to_apply=callee
  ROOT t = f32[1024]{0} negate(r)
}
""", "m")
    r = memory(m)
    assert (r.temp_peak_bytes, r.peak_instruction) == (8192, "r")


def test_a_conditionals_peak_holds_what_its_larger_branch_holds_at_once():
    """HAND-WRITTEN minimal module: one branch holds exp(x) and log(x) together (8 KiB), the
    other nothing of its own: the peak is the first branch's, at the conditional."""
    (m,) = parse("""HloModule m

heavy {
  x = f32[1024]{0} parameter(0)
  a = f32[1024]{0} exponential(x)
  c = f32[1024]{0} log(x)
  ROOT b = f32[1024]{0} add(a, c)
}

light {
  x = f32[1024]{0} parameter(0)
  ROOT n = f32[1024]{0} negate(x)
}

ENTRY e {
  p = f32[1024]{0} parameter(0)
  i = s32[] parameter(1)
  r = f32[1024]{0} conditional(i, p, p), branch_computations={heavy, light}
  ROOT t = f32[1024]{0} negate(r)
}
""", "m")
    r = memory(m)
    assert (r.temp_peak_bytes, r.peak_instruction) == (8192, "r")


def test_a_peak_at_the_root_names_the_root():
    """HAND-WRITTEN minimal module: the root calls a computation that holds exp(x) and log(x)
    (4 KiB each) at once: the peak (8 KiB) is at the last instruction, the root."""
    (m,) = parse("HloModule m\n\n" + _CALLEE + """
ENTRY e {
  p = f32[1024]{0} parameter(0)
  ROOT r = f32[1024]{0} call(p), to_apply=callee
}
""", "m")
    r = memory(m)
    assert (r.temp_peak_bytes, r.peak_step, r.peak_instruction) == (8192, 1, "r")


def test_a_result_with_two_dying_operands_takes_one_and_the_chain_after_it_goes_on():
    """HAND-WRITTEN minimal module: exp(p) and log(p) (4 KiB each) die into their add, which
    takes one of their buffers; the negate, exp and negate after it each write into the
    buffer of the value before (one chain). Of exp and log, live together, one fits in the
    output's buffer while it is free (the output is written last): the peak is 4 KiB, not 8."""
    (m,) = parse("""HloModule m

ENTRY e {
  p = f32[1024]{0} parameter(0)
  x = f32[1024]{0} exponential(p)
  y = f32[1024]{0} log(p)
  r = f32[1024]{0} add(x, y)
  u = f32[1024]{0} negate(r)
  v = f32[1024]{0} exponential(u)
  ROOT w = f32[1024]{0} negate(v)
}
""", "m")
    assert memory(m).temp_peak_bytes == 4096


def test_an_all_reduce_done_holds_its_starts_buffer_until_its_last_reader():
    """HAND-WRITTEN minimal module: the all-reduce works in place in exp(p)'s buffer, and its
    done's value is that buffer, read by the root: it is still live (4 KiB) when log(p) (4 KiB)
    is made, so the peak is 8 KiB."""
    (m,) = parse("""HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[1024]{0} parameter(0)
  x = f32[1024]{0} exponential(p)
  s = f32[1024]{0} all-reduce-start(x), replica_groups={}, to_apply=sum
  d = f32[1024]{0} all-reduce-done(s)
  y = f32[1024]{0} log(p)
  ROOT r = f32[1024]{0} add(d, y)
}
""", "m")
    r = memory(m)
    assert (r.temp_peak_bytes, r.peak_instruction) == (8192, "y")
