"""`hloscope kernel`'s text, branch by branch, on kernels written by hand (labelled as such:
stand-ins with the fields hloscope.mlir.kernels gives), each expected line worked out by
hand. test_kernels_text.py holds real decoded Pallas kernels to their MLIR."""

from __future__ import annotations

from types import SimpleNamespace as NS

from hloscope.report.kernels import kernel_tooltips, kernels_text


def _instr(name="cc.1"):
    return NS(name=name, computation="main", line=12, shape="f32[8,128]{1,0}")


def _block(role, block, nbytes, dtype="f32", shape=(8, 128), space="vmem"):
    return NS(role=role, dtype=dtype, shape=list(shape), block=block, memory_space=space, bytes=nbytes)


def _summary(**more):
    s = NS(name="matmul_kernel", grid=(4, 2), grid_steps=8, dimension_semantics=["parallel", "arbitrary"],
           operands=[_block("input 0", [8, 128], 4096), _block("output 0", [8, 128], 4096)],
           scratch=[_block("scratch", [8, 128], 4096)], vmem_bytes=20480, largest_vector_type="vector<8x128xf32>",
           ops={f"op{k}": 20 - k for k in range(14)})
    for key, value in more.items():
        setattr(s, key, value)
    return s


def _kernel(summary=None, error=None, notes=(), config=None, text="", scoped=0, name="cc.1"):
    body = NS(notes=list(notes), config=config or {}, text=text) if (notes or config or text or summary) else None
    return NS(instruction=_instr(name), target="tpu_custom_call", error=error, body=body, summary=summary,
              scoped_vmem_bytes=scoped)


def test_nothing_found():
    assert kernels_text([], False) == "no custom calls"


def test_a_kernel_not_decoded_keeps_its_other_notes():
    k = _kernel(error="no backend_config", notes=["no backend_config", "version 3"])
    lines = kernels_text([k], False).split("\n")
    assert lines == ["%cc.1 (main, line 12): custom-call tpu_custom_call -> f32[8,128]{1,0}",
                     "  body: not decoded: no backend_config", "  note: version 3", ""]
    plain = kernels_text([_kernel(notes=["version 3"], text="x")], False).split("\n")
    assert plain[1] == "  note: version 3"


def test_the_summary_lines():
    k = _kernel(summary=_summary(), scoped=32 * 2**20)
    lines = kernels_text([k], False).split("\n")
    assert lines[1] == "  kernel matmul_kernel: grid (4, 2) (8 steps), semantics [parallel, arbitrary]"
    assert lines[2] == "    input 0         f32[8, 128] block [8, 128] in vmem (4.00 KiB per block)"
    assert lines[3] == "    output 0        f32[8, 128] block [8, 128] in vmem (4.00 KiB per block)"
    assert lines[4] == "    scratch         f32[8, 128] in vmem (4.00 KiB)"  # (a scratch buffer has no block)
    assert lines[5] == "  VMEM: ~20.00 KiB (double-buffered blocks + scratch), 32.00 MiB scoped for this call"
    assert lines[6] == "  largest vector value: vector<8x128xf32>"
    assert lines[7] == "  ops: " + ", ".join(f"op{k} {20 - k}" for k in range(12))  # (the first 12 of 14)
    assert lines[8] == ""


def test_summary_fallbacks():
    s = _summary(dimension_semantics=[], largest_vector_type=None,
                 operands=[_block("input 0", None, 512)], scratch=[])
    lines = kernels_text([_kernel(summary=s)], False).split("\n")
    assert lines[1].endswith("semantics [-]")
    assert lines[2] == "    input 0         f32[8, 128] in vmem (512 B)"  # (no block: the whole array)
    assert lines[3] == "  VMEM: ~20.00 KiB (double-buffered blocks + scratch)"
    assert lines[4] == "  largest vector value: -"


def test_config_without_empty_values_and_the_mlir_text():
    k = _kernel(config={"flags": [], "name": "k", "opts": {}, "dims": None, "empty": "", "steps": 3},
                text="module {\n}\n\n")
    lines = kernels_text([k], True).split("\n")
    assert lines[1] == '  config: {"name": "k", "steps": 3}'
    assert lines[2:] == ["module {", "}", ""]
    assert "module {" not in kernels_text([k], False)


def test_measured_views():
    view = NS(to_dict=lambda: {"instruction": "cc.1", "runs": 3, "seconds": 1.5e-3, "kinds": {},
                               "shares": {}, "bundles": 0, "counters": {}, "regions": []})
    a, b = _kernel(text="t"), _kernel(text="t", name="cc.2")
    lines = kernels_text([a, b], False, views={"cc.1": view}).split("\n")
    assert lines[1] == "  measured: %cc.1: 3 run(s), 1.500 ms"
    assert lines[4] == "  measured: not in the trace"
    assert "measured" not in kernels_text([a], False)


def test_tooltips():
    tips = kernel_tooltips([_kernel(summary=_summary()), _kernel(error="bad", name="cc.2"),
                            _kernel(name="cc.3")])
    assert tips["cc.1"] == ("kernel matmul_kernel, grid (4, 2) ['parallel', 'arbitrary']; "
                            "input 0 f32[8, 128]; output 0 f32[8, 128]; VMEM ~20.00 KiB")
    assert tips["cc.2"] == "tpu_custom_call: bad"
    assert tips["cc.3"] == "tpu_custom_call: no kernel body"


def test_a_kernel_with_no_body_at_all():
    lines = kernels_text([_kernel(error="no backend_config")], False).split("\n")
    assert lines == ["%cc.1 (main, line 12): custom-call tpu_custom_call -> f32[8,128]{1,0}",
                     "  body: not decoded: no backend_config", ""]


def test_only_a_measured_views_head_is_relabelled():
    view = NS(to_dict=lambda: {"instruction": "cc.1", "runs": 1, "seconds": 1e-3, "kinds": {}, "shares": {},
                               "bundles": 0, "counters": {"MXU": 50.0}, "regions": []})
    lines = kernels_text([_kernel(text="t")], False, views={"cc.1": view}).split("\n")
    assert lines[1:3] == ["  measured: %cc.1: 1 run(s), 1.000 ms", "    utilization over its runs: MXU 50.0%"]
