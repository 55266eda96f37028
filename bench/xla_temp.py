"""What XLA's TPU `temp_size_in_bytes` holds, beside XLA's own buffer assignment (#33's memory
point). Each program is compiled deviceless again with `--xla_dump_to`, and four figures of the
temporaries are set side by side:

- `temp`: compiled.memory_analysis().temp_size_in_bytes, the issue's oracle;
- `allocation`: the default memory space's `preallocated-temp` allocation in XLA's own
  buffer-assignment dump (the heap buffer assignment packed the temporaries into);
- `live peak`: peak_memory_in_bytes - argument - output + alias, XLA's own peak of what is
  live at once, less the entry's parameters and outputs;
- `hloscope`: cost.liveness.memory()'s temporaries on the fixture's text.

`temp` exceeds the allocation on every TPU program measured, by 0.01% to 34%, and the dumped
module after code generation holds the same instructions: the rest is HBM the TPU back end
takes after buffer assignment, which no HLO text shows. hloscope's figure follows XLA's live
peak (the allocation adds packing slack on top of it). On v5e, peak_memory_in_bytes is not an
HBM figure alone: there it can be as large as the program's VMEM allocation (color 1), listed
beside it, so its column says nothing of HBM on that chip.

    python3 bench/xla_temp.py                     # the zoo's seven outside 5%, and five within
    python3 bench/xla_temp.py NAME [NAME ...]     # fixtures by name (fixtures/manifest.json)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "fixtures"))
os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")

from hloscope.cost.liveness import memory  # noqa: E402
from hloscope.cost.xla_memory import read  # noqa: E402
from hloscope.parser import load  # noqa: E402

DEFAULT = ["zoo_llama_fsdp_train_v5p4", "H014_stacked_axis0_v5p", "zoo_fsdp_train_donated_v5p8",
           "zoo_fsdp_train_v5p8", "zoo_transformer_scan_train_remat_v5p",
           "zoo_transformer_scan_long_v5p", "zoo_transformer_train_f32_v5e",
           "zoo_transformer_train_remat_attn_v5e",
           # within 5%
           "zoo_transformer_train_wide_v5p", "zoo_transformer_train_v5e", "zoo_fsdp_train_8l_v5p8",
           "memory_deep_mlp_train_v5e", "memory_big_temporary_v5e"]


def measure(name: str) -> dict:
    import json

    import generate

    fx = generate.FIXTURES[name]
    entry = json.loads((ROOT / "fixtures" / "manifest.json").read_text())[name]
    with tempfile.TemporaryDirectory(prefix="xla-temp-") as dump:
        fn, args = fx.build(generate._mesh(fx))
        compiled = fn.lower(*args).compile(compiler_options={**(fx.compiler_options or {}),
                                                             "xla_dump_to": dump})
        ma = compiled.memory_analysis()
        reports = sorted(Path(dump).glob("*after_optimizations-buffer-assignment.txt"))
        xla = read([reports[-1]])  # (the entry's module: the last one compiled)
    (module,) = load(ROOT / "fixtures" / entry["file"])
    ours = memory(module)
    return {"program": name, "temp": ma.temp_size_in_bytes,
            "allocation": xla.space(0).temporaries,
            "live_peak": (ma.peak_memory_in_bytes - ma.argument_size_in_bytes
                          - ma.output_size_in_bytes + ma.alias_size_in_bytes),
            "vmem": xla.space(1).temporaries, "hloscope": ours.temp_peak_bytes}


def main(argv: list[str]) -> int:
    names = argv or DEFAULT
    mib = 1 << 20
    print("| program | XLA temp_size | XLA's preallocated-temp allocation | temp over it | "
          "XLA's live peak (temporaries) | XLA's VMEM allocation | hloscope | hloscope / live peak |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        d = measure(name)
        print(f"| {name} | {d['temp'] / mib:,.2f} MiB | {d['allocation'] / mib:,.2f} MiB | "
              f"{d['temp'] / d['allocation'] - 1:+.1%} | {d['live_peak'] / mib:,.2f} MiB | "
              f"{d['vmem'] / mib:,.2f} MiB | "
              f"{d['hloscope'] / mib:,.2f} MiB | "
              f"{d['hloscope'] / d['live_peak'] if d['live_peak'] else float('nan'):.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
