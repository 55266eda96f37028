"""Does each rule's advice help? For every H/K rule: a real program where it fires and the same
program with the rule's help applied (both compiled by fixtures/generate.py), set side by side
on the figure the rule is about, from XLA's own analysis where XLA has one:

- time: the sum of XLA's estimated_cycles over the ops that run (TPU), else hloscope's step
  estimate;
- bytes: XLA's cost_analysis "bytes accessed";
- peak: XLA's memory_analysis, argument + output - alias + temp;
- exposed: the communication compute does not hide (hloscope's step estimate; XLA's
  per-op estimates do not see overlap);
- padded: the HBM bytes of the program's buffers as laid out (tiles and padding; the layout
  math matches libtpu's allocation sizes, fixtures/layout_sizes.json);
- a Pallas kernel's time: libtpu's static LLO estimate of it, in cycles (its custom call
  carries no estimated_cycles; fixtures/generate.py records the estimate in the manifest,
  from --xla_jf_dump_static_llo_profile_to);
- error: a kernel's numerical error, run in Pallas interpret mode on the CPU against numpy's
  float64 product (K001: accumulation precision);
- none: what the advice buys is not in any static figure (T005-T007: only in a capture).

A row is "better" when the fix lowers that figure; the rule must fire before and be silent
after. Rules whose advice does not help on their own case are listed as such, not hidden.

    python3 bench/advice.py               # the table (markdown)
    python3 bench/advice.py --json        # the rows as JSON
    python3 bench/advice.py --docs        # write each rule's row into rules/<CODE>-*.md

tests/test_advice.py holds every row to it: better (or no static figure, said so), firing
before, silent after.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Case:
    code: str
    before: str  # manifest name: the program where the rule fires
    after: str  # the same program with the rule's help applied
    figure: str  # "time" | "bytes" | "peak" | "vmem" | "vector"
    fix: str  # what was changed, in words


CASES = [
    Case("F001", "F001_exposed_gather_v5p", "F001_overlapped_gather_v5p", "exposed",
         "MaxText's async collective fusion flags"),
    Case("H001", "H001_scan_carry_cpu", "H001_scan_carry_donated_cpu", "bytes",
         "the scanned input donated (donate_argnums)"),
    Case("H001", "H001_dus_not_in_place_v5e", "H001_dus_donated_v5e", "time",
         "the updated buffer donated (XProf's dynamic-update-slice-not-in-place case)"),
    Case("H002", "H002_transpose_out_v5e", "H002_elementwise_v5e", "time",
         "the transpose left to the consumer (x returned in its own layout)"),
    Case("H003", "H003_narrow_kernel_operand_v5e", "H003_lane_dense_kernel_operand_v5e", "padded",
         "the kernel operand reshaped lane-dense (f32[1024,128])"),
    Case("H004", "H004_separate_qkv_v5p", "H004_fused_qkv_v5p", "bytes",
         "one stacked W_qkv [d, 3, d] parameter instead of three (bench/split_dot.py: time -1.1%)"),
    Case("H005", "H005_odd_matmul_v5e", "H005_aligned_matmul_v5e", "time_per_flop",
         "dimensions padded to MXU multiples"),
    Case("H006", "H006_exp_twice_preopt", "H006_exp_once_preopt", "time", "exp(x) bound once"),
    Case("H007", "H007_gather_whole_weight_v5p", "H007_sharded_weight_v5p", "time",
         "the weight kept sharded, activations moved"),
    Case("H008", "H008_exposed_permute_v5p", "H008_overlapped_permute_v5p", "exposed",
         "independent compute scheduled between start and done"),
    Case("H009", "H009_transpose_dot_preopt", "H009_plain_dot_preopt", "time",
         "the dot given the weight in its own layout"),
    Case("H010", "H010_f32_matmul_v5e", "H010_f32_default_v5e", "time", "precision=HIGHEST dropped"),
    Case("H011", "H011_naive_attention_v5e", "H011_flash_attention_v5e", "peak",
         "Pallas flash attention"),
    Case("H012", "H012_near_full_v5e", "H012_donated_v5e", "peak", "the input donated"),
    # the same advice on an H100 (deviceless GPU compiles: XLA's memory_analysis, no cycles)
    Case("H001", "H001_dus_not_in_place_h100", "H001_dus_donated_h100", "peak",
         "the updated buffer donated"),
    Case("H010", "H010_f32_matmul_h100", "H010_f32_default_h100", "time",
         "precision=HIGHEST dropped (TF32 tensor cores)"),
    Case("H011", "H011_naive_attention_h100", "H011_cudnn_attention_h100", "peak",
         "cuDNN flash attention (jax.nn.dot_product_attention)"),
    Case("H012", "H012_near_full_h100", "H012_donated_h100", "peak", "the input donated"),
    Case("H013", "H013_tiny_loop_v5e", "H013_vectorized_loop_v5e", "time",
         "the loop written as one array op (its closed form)"),
    Case("H014", "H014_stacked_axis1_v5p", "H014_stacked_axis0_v5p", "time",
         "the layers stacked and scanned on axis 0"),
    Case("H014", "H014_kv_token_rows_v5p", "H014_kv_seq_first_v5p", "time",
         "the KV cache laid out sequence-first, [S,B,H,D]"),
    Case("K001", "K001_output_accumulator_v5e", "K001_scratch_accumulator_v5e", "error",
         "an f32 VMEM scratch accumulator, o_ref written once"),
    Case("K002", "K002_unaligned_block_v5e", "K002_aligned_block_v5e", "time",
         "(8,128)-aligned blocks"),
    Case("K003", "K003_vmem_over_scoped_v5e", "K003_vmem_within_scoped_v5e", "time",
         "blocks within the scoped VMEM limit"),
    Case("K004", "K004_huge_vector_v5e", "K004_one_mib_vector_v5e", "time", "1 MiB blocks"),
    Case("K005", "K005_two_step_grid_v5e", "K005_eight_step_grid_v5e", "time",
         "a longer grid of 1 MiB blocks"),
    Case("K006", "K006_arbitrary_only_v5p", "K006_parallel_axes_v5p", "time",
         "independent grid axes marked parallel"),
]


def _figures(name: str, entry: dict) -> dict:
    from hloscope.cost.liveness import memory
    from hloscope.cost.resolve import resolve_chip
    from hloscope.cost.roofline import roofline
    from hloscope.mlir.cost import body_costs
    from hloscope.parser import load
    from hloscope.sharding.step import estimate

    (m,) = load(ROOT / "fixtures" / entry["file"])
    chip = resolve_chip(m, entry["topology"].split(":")[0] if entry.get("topology") else None).chip
    report = roofline(m, chip, kernel_costs=body_costs(m))
    cycles = {r.instruction: r.estimated_cycles * r.times for r in report.rows if r.estimated_cycles}
    for op, n in entry.get("llo_estimated_cycles", {}).items():
        cycles.setdefault(op, n)  # (a Pallas kernel: libtpu's static LLO estimate of it)
    xla = entry.get("cost_analysis", {})
    mem = entry.get("memory_analysis", {})
    out = {
        "xla_cycles": sum(cycles.values()) if cycles and chip.platform == "tpu" else None,
        "error": entry.get("numerics", {}).get("max_error"),
        "step_seconds": (step := estimate(m, chip, report)).step_seconds,
        "exposed": step.exposed_seconds,
        "padded": report.totals.hbm_bytes,
        "logical": report.totals.bytes,
        "flops": xla.get("flops") or report.totals.flops,
        "bytes": xla.get("bytes accessed"),
        "peak": (mem["argument_size_in_bytes"] + mem["output_size_in_bytes"]
                 - mem["alias_size_in_bytes"] + mem["temp_size_in_bytes"]) if mem else memory(m).hbm_bytes,
    }
    kernels = _kernels(m)
    if kernels:
        out["vmem"] = max(k.vmem_bytes for k in kernels)
        out["vector"] = max(k.largest_vector_bytes for k in kernels)
    return out


def _kernels(module) -> list:
    if not any(i.opcode == "custom-call" and i.may_contain("tpu_custom_call") for i in module.instructions()):
        return []
    from hloscope.mlir.kernels import kernels

    return [k.summary for k in kernels(module) if k.summary is not None]


def _value(figures: dict, figure: str) -> float | None:
    time = figures["xla_cycles"] if figures["xla_cycles"] is not None else figures["step_seconds"]
    if figure == "time":
        return time
    if figure == "time_per_flop":
        return time / figures["flops"] if figures["flops"] else None
    if figure == "none":
        return None
    return figures.get(figure)


def _fires(code: str, name: str, entry: dict) -> int:
    from hloscope.lint import LintOptions, lint_files

    chip = entry["topology"].split(":")[0] if entry.get("topology") else None
    return sum(1 for f in lint_files([ROOT / "fixtures" / entry["file"]],
                                     LintOptions(select=[code], chip=chip)).findings if f.code == code)


def rows() -> list[dict]:
    manifest = json.loads((ROOT / "fixtures" / "manifest.json").read_text())
    out = []
    for case in CASES:
        if case.before not in manifest or case.after not in manifest:
            out.append({"code": case.code, "before": case.before, "after": case.after, "missing": True})
            continue
        before, after = (_figures(n, manifest[n]) for n in (case.before, case.after))
        vb, va = _value(before, case.figure), _value(after, case.figure)
        unit = "cycles" if before["xla_cycles"] is not None and case.figure.startswith("time") else ""
        out.append({
            "code": case.code, "before": case.before, "after": case.after, "fix": case.fix,
            "figure": case.figure, "unit": unit, "value_before": vb, "value_after": va,
            "better": vb is not None and va is not None and va < vb,
            "fires_before": _fires(case.code, case.before, manifest[case.before]),
            "fires_after": _fires(case.code, case.after, manifest[case.after]),
            "figures_before": before, "figures_after": after,
        })
    return out


def _fmt(value, figure: str, unit: str) -> str:
    if value is None:
        return "-"
    if figure in ("bytes", "peak", "vmem", "vector", "padded"):
        return f"{value / 2**20:,.2f} MiB"
    if figure == "exposed":
        return f"{value * 1e6:,.2f} us"
    if figure == "error":
        return f"{value:.2%} max error"
    if figure.startswith("time") and unit == "cycles" and figure == "time":
        return f"{value:,.0f} cycles"
    if figure == "time":
        return f"{value * 1e6:,.2f} us"
    return f"{value:.3g}"


def table(data: list[dict]) -> str:
    lines = ["| rule | case -> fix | figure | before | after | better? | fires before / after |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in data:
        if r.get("missing"):
            lines.append(f"| {r['code']} | {r['before']} -> {r['after']} | - | - | - | no fixture | - |")
            continue
        what = r["figure"] + (" (XLA estimated cycles)" if r["unit"] == "cycles" else
                              " (hloscope step, before optimization)" if r["before"].endswith("preopt") else
                              " (hloscope step)" if r["figure"].startswith("time") else
                              " (XLA memory_analysis)" if r["figure"] == "peak" else
                              " (XLA cost_analysis)" if r["figure"] == "bytes" else
                              " (interpret mode vs float64)" if r["figure"] == "error" else "")
        ok = ("yes" if r["better"] else "no static figure" if r["figure"] == "none" else
              "same" if r["value_before"] == r["value_after"] else "NO")
        lines.append(f"| {r['code']} | {r['before'].split('_', 1)[1]} -> {r['fix']} | {what} | "
                     f"{_fmt(r['value_before'], r['figure'], r['unit'])} | "
                     f"{_fmt(r['value_after'], r['figure'], r['unit'])} | {ok} | "
                     f"{r['fires_before']} / {r['fires_after']} |")
    return "\n".join(lines)


_SECTION = "## Does the advice help?"


def write_docs(data: list[dict]) -> None:
    """Each rule's rows, under their own heading at the end of its doc (replaced on a rerun)."""
    head = table([])
    by_code: dict[str, list[dict]] = {}
    for r in data:
        by_code.setdefault(r["code"], []).append(r)
    for code, rs in by_code.items():
        (doc,) = (ROOT / "rules").glob(f"{code}-*.md")
        text = doc.read_text(encoding="utf-8").split("\n" + _SECTION)[0].rstrip()
        body = "\n".join(table([r]).splitlines()[-1] for r in rs)
        what = "real positive fixture" if len(rs) == 1 else "real positive fixtures, each"
        text += (f"\n\n{_SECTION}\n\nThis rule's {what} against the same program "
                 f"with its help applied, on the figure the rule is about (`python3 bench/advice.py`):"
                 f"\n\n{head}\n{body}\n")
        doc.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--docs", action="store_true", help="write each rule's row into its doc")
    ns = ap.parse_args(argv)
    data = rows()
    if ns.docs:
        write_docs(data)
    print(json.dumps(data, indent=1, default=str) if ns.json else table(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
