"""`hloscope kernel`'s text says what its JSON says: each decoded kernel's header, grid and
semantics, every block line, VMEM, largest vector, ops and config, on real Pallas compiles
(the mutation run found the text's layout untested). Figures worked by hand where they can be:
a bf16 [256, 512] block is 256 x 512 x 2 bytes; VMEM is two buffers of each block plus scratch."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, text_and_json
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.units import human_bytes

MATMUL = FIXTURES / "tpu" / "pallas_matmul_4096_v5e.hlo.txt"
SCOPED = FIXTURES / "rules" / "K003" / "vmem_over_scoped_v5e.hlo.txt"


def _both(*args):
    lines, doc = text_and_json("kernel", *args)
    return lines, doc["kernels"]


@pytest.mark.parametrize("path", [MATMUL, SCOPED])
def test_every_kernel_states_its_json_record(path):
    lines, kernels = _both(path)
    assert kernels
    for k in kernels:
        head = next(x for x in lines if x.startswith(f"%{k['instruction']} ({k['computation']}, line "))
        assert head.endswith(f": custom-call {k['target']} -> {k['result'].split('{')[0]}")
        steps = 1
        for g in k["grid"]:
            steps *= g
        sem = ", ".join(k["dimension_semantics"]) or "-"
        assert f"  kernel {k['name']}: grid {k['grid']} ({steps} steps), semantics [{sem}]" in lines
        for b in k["operands"] + k["scratch"]:
            block = f" block {b['block']}" if b["block"] and b["role"] != "scratch" else ""
            line = (f"    {b['role']:15} {b['dtype']}{b['shape']}{block} in {b['memory_space']}"
                    f" ({human_bytes(b['bytes'], 2)}{' per block' if block else ''})")
            assert line in lines
        scoped = k["scoped_vmem_bytes"]
        assert (f"  VMEM: ~{human_bytes(k['vmem_bytes'], 2)} (double-buffered blocks + scratch)"
                + (f", {human_bytes(scoped, 2)} scoped for this call" if scoped else "")) in lines
        assert f"  largest vector value: {k['largest_vector'] or '-'}" in lines
        assert "  ops: " + ", ".join(f"{op} {n}" for op, n in list(k["ops"].items())[:12]) in lines
        shown = {key: v for key, v in k["config"].items() if v not in ([], {}, None, "")}
        assert f"  config: {json.dumps(shown)}" in lines


def test_the_matmul_kernels_blocks_and_vmem_by_hand():
    _, (k,) = _both(MATMUL)
    a, b, out = k["operands"]
    assert (a["block"], a["bytes"]) == ([256, 512], 256 * 512 * 2)
    assert (b["block"], b["bytes"]) == ([512, 256], 512 * 256 * 2)
    assert (out["block"], out["bytes"]) == ([256, 256], 256 * 256 * 2)
    (acc,) = k["scratch"]
    assert (acc["dtype"], acc["bytes"]) == ("f32", 256 * 256 * 4)
    assert k["vmem_bytes"] == 2 * (a["bytes"] + b["bytes"] + out["bytes"]) + acc["bytes"]
    assert k["grid"] == [4096 // 256, 4096 // 256, 4096 // 512]


def test_mlir_prints_the_body_and_a_module_without_kernels_says_so():
    lines, (k,) = _both(MATMUL, "--mlir")
    assert any(x.startswith("module attributes {stable_mosaic.version") for x in lines)
    plain = CliRunner().invoke(app, ["kernel", str(FIXTURES / "cpu" / "scan_cpu.hlo.txt")]).output
    assert plain.strip() == "no custom calls"
