"""`hloscope report`: one offline HTML page, checked as a file (budget, nothing fetched,
the numbers of the other commands) and in headless Chromium (no console errors, sorting
and filtering change the rows, plots and graphs draw, injected markup never runs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from browser import page_of, screenshot_dir
from conftest import FIXTURES
from typer.testing import CliRunner

from hloscope.cli.app import app

runner = CliRunner()
BIG = FIXTURES / "tpu" / "llm_v5p_big.hlo.txt"  # the largest TPU fixture (5.6 MB, 27k instructions)
BUDGET = 3 << 20  # bytes of HTML for the largest fixture
CPU = FIXTURES / "rules" / "T004" / "transpose_copy_cpu.hlo.txt"
CPU_TRACE = FIXTURES / "rules" / "T004" / "transpose_copy_cpu.trace.json.gz"


def _report(tmp_path: Path, *args: str, name: str = "report.html") -> Path:
    out = tmp_path / name
    result = runner.invoke(app, ["report", *args, "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def big_report(tmp_path_factory) -> Path:
    return _report(tmp_path_factory.mktemp("big"), str(BIG), "--chip", "v5p")


@pytest.fixture(scope="module")
def varied_report(tmp_path_factory) -> Path:
    """A real training step whose findings are of three rules, in groups of 1 to 4 (sorting
    and filtering have work)."""
    return _report(tmp_path_factory.mktemp("varied"), str(FIXTURES / "zoo" / "transformer_train_f32_v5e.hlo.txt"),
                   "--chip", "v5e")


def _json(*args: str) -> dict:
    result = runner.invoke(app, [*args, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_largest_fixture_is_one_offline_file_within_budget(big_report):
    html = big_report.read_text(encoding="utf-8")
    assert len(html.encode()) <= BUDGET
    # nothing to fetch: no external script, style, image or font; one inline script
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html)
    assert not re.search(r"@import|url\(\s*['\"]?https?:", html)
    assert "<link" not in html
    assert len(re.findall(r"<script\b", html)) == 1
    assert "Content-Security-Policy" in html
    for section in ("findings", "roofline", "ops", "memory", "collectives", "kernels", "graphs"):
        assert f'id="m1-{section}"' in html, section


def test_header_and_groups_agree_with_the_other_commands(big_report):
    html = big_report.read_text(encoding="utf-8")
    lint = _json("lint", str(BIG), "--chip", "v5p")
    assert html.count("<tr data-severity=") == lint["summary"]["groups"]
    counts = sorted(int(n) for n in re.findall(r"&times; (\d+)</td>", html))
    by_group: dict[str, int] = {}
    for f in lint["findings"]:
        by_group[f["group"]] = by_group.get(f["group"], 0) + 1
    assert counts == sorted(by_group.values())
    memory = _json("memory", str(BIG), "--chip", "v5p")["modules"][0]
    from hloscope.units import human_bytes

    assert f"HBM {human_bytes(memory['hbm_bytes'])} = arguments" in html
    assert f"(at <code>%{memory['peak_instruction']}</code>, step {memory['peak_step']})" in html


def test_cpu_module_with_its_real_trace_shows_measured_top_ops(tmp_path):
    from hloscope.trace import join, load_profile

    out = _report(tmp_path, str(CPU), "--trace", str(CPU_TRACE))
    html = out.read_text(encoding="utf-8")
    assert "Top ops by measured time" in html
    from hloscope.parser import load

    module = load(CPU)[0]
    index = join(load_profile(CPU_TRACE), [module])
    top = max(index.stats.values(), key=lambda s: s.total_ns)
    row = re.search(r"<td><code>%" + re.escape(top.instruction) + r"</code></td><td>[^<]*</td>\s*"
                    r'<td class="num" data-sort="([^"]+)"', html)
    assert row is not None
    # per step on one device: the profile held 3 steps of this program
    assert index.steps == 3
    assert float(row.group(1)) == pytest.approx(top.total_ns * 1e-9 / 3)
    assert "measured op time per step" in html and "over 3 step(s)" in html
    assert "host memory: no capacity verdict" in html  # a CPU module: no HBM verdict


def test_an_unreadable_input_is_listed_and_the_others_reported(tmp_path):
    bad = tmp_path / "truncated.hlo.txt"
    bad.write_text(CPU.read_text()[:400])
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(CPU), str(bad), "-o", str(out)])
    assert result.exit_code == 2
    assert f"{bad}:" in result.output
    html = out.read_text(encoding="utf-8")
    assert "Inputs that could not be read" in html and "HloModule jit__lambda" in html


def test_usage_errors(tmp_path):
    result = runner.invoke(app, ["report", str(CPU), "-o", str(tmp_path / "r.txt")])
    assert result.exit_code == 2 and "HTML" in result.output
    result = runner.invoke(app, ["report", str(CPU), "--chip", "z80", "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "unknown chip" in result.output


def _rows(page, table: str) -> list[str]:
    return page.eval_on_selector_all(f"#{table} tbody tr:not([hidden])",
                                     "rows => rows.map(r => r.cells[2].textContent.trim())")


def test_in_the_browser_sorting_filtering_plots_and_graphs(varied_report):
    shots = screenshot_dir()
    with page_of(varied_report) as (page, problems):
        table = "m1-ft"
        before = _rows(page, table)
        assert len(before) >= 2
        count = page.locator(f"#{table} thead th").nth(2).locator("button")
        count.focus()
        page.keyboard.press("Enter")  # keyboard: a header button sorts
        ascending = _rows(page, table)
        assert [int(x.split()[-1]) for x in ascending] == sorted(int(x.split()[-1]) for x in before)
        count.click()
        descending = _rows(page, table)
        assert descending == ascending[::-1] and descending != ascending
        assert page.locator(f"#{table} thead th").nth(2).get_attribute("aria-sort") == "descending"
        codes = page.eval_on_selector_all(f"#{table} tbody tr", "rs => rs.map(r => r.dataset.code)")
        page.select_option(f'.f-code[data-table="{table}"]', codes[-1])
        shown = page.eval_on_selector_all(f"#{table} tbody tr:not([hidden])", "rs => rs.map(r => r.dataset.code)")
        assert shown and set(shown) == {codes[-1]} and len(shown) < len(codes)
        page.select_option(f'.f-code[data-table="{table}"]', "")
        page.fill(f'.f-text[data-table="{table}"]', "no finding says this")
        assert _rows(page, table) == []
        page.fill(f'.f-text[data-table="{table}"]', "")
        assert len(_rows(page, table)) == len(before)
        for selector in ("svg.plot >> nth=0", ".graph svg >> nth=0"):
            box = page.locator(selector).bounding_box()
            assert box and box["width"] > 100 and box["height"] > 100, selector
        assert page.locator("svg.plot >> nth=0").locator("circle.op").count() > 10
        assert page.locator(".graph svg >> nth=0").locator("g.node").count() >= 2
        for section in ("findings", "roofline", "ops", "memory", "collectives", "kernels", "graphs"):
            path = shots / f"report-{section}.png"
            heading = page.locator(f"#m1-{section}")
            heading.evaluate("e => e.scrollIntoView({block: 'start'})")
            page.screenshot(path=str(path))
            print(f"screenshot: {path}")
        page.emulate_media(media="print")
        page.screenshot(path=str(shots / "report-print.png"), full_page=False)
        assert problems == []


def test_in_the_browser_a_step_with_no_hbm_temporaries_says_so(tmp_path):
    """The remat training step's temporaries all live in VMEM, as XLA's memory_analysis says
    (temp 0 in HBM): the memory section says so instead of drawing an empty timeline."""
    out = _report(tmp_path, str(FIXTURES / "zoo" / "transformer_train_remat_v5e.hlo.txt"), "--chip", "v5e")
    with page_of(out) as (page, problems):
        assert "no HBM temporaries" in page.locator(".memory-note").first.inner_text()
        assert problems == []


INJECTIONS = {
    'op_name="jit(<lambda>)/dot_general"':
        'op_name="<script>window.__pwned=1</script><img src=x onerror=\\"window.__pwned=2\\">"',
    '1 "/work/main/fixtures/generate.py"':
        '1 "/src/\\" onload=\\"window.__pwned=3\\" x=\\"<svg onload=window.__pwned=4>.py"',
}


def test_markup_in_the_input_is_shown_as_text_and_never_runs(tmp_path):
    """A real compile (the H010 positive fixture) with script payloads written into its
    op_name metadata and its FileNames table (hand-edited for this test)."""
    text = (FIXTURES / "rules" / "H010" / "f32_matmul_v5e.hlo.txt").read_text()
    for old, new in INJECTIONS.items():
        assert old in text
        text = text.replace(old, new)
    module = tmp_path / "payload.hlo.txt"
    module.write_text(text)
    out = _report(tmp_path, str(module))
    html = out.read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in html and "<img src=x" not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    with page_of(out) as (page, problems):
        assert page.evaluate("typeof window.__pwned") == "undefined"
        body = page.inner_text("body")
        assert "<script>window.__pwned=1</script>" in body  # shown as text
        assert 'onload="window.__pwned=3"' in body
        assert page.locator("img").count() == 0
        assert problems == []


def test_in_the_browser_a_measured_kernel_and_a_comparison(tmp_path):
    """A Pallas kernel with its (synthetic, labelled) TPU capture, compared with another
    compile: the kernels table and the A/B section render without errors."""
    hlo = FIXTURES / "rules" / "T005" / "dma_bound_matmul_v5e.hlo.txt"
    out = _report(tmp_path, str(hlo), "--trace", str(hlo.with_name("dma_bound_matmul_v5e.xplane.pb")),
                  "--against", str(FIXTURES / "rules" / "T005" / "pipelined_matmul_v5e.hlo.txt"),
                  "--chip", "v5e")
    shots = screenshot_dir()
    with page_of(out) as (page, problems):
        for section in ("kernels", "compare"):
            page.locator(f"#m1-{section}").evaluate("e => e.scrollIntoView({block: 'start'})")
            page.screenshot(path=str(shots / f"report-measured-{section}.png"))
            print(f"screenshot: {shots / f'report-measured-{section}.png'}")
        assert page.locator("#m1-k-t tbody tr").count() == 1
        assert "3 runs" in page.inner_text("#m1-k-t")
        assert problems == []


def test_in_the_browser_report_fixes(tmp_path):
    """A module with no temporaries says so instead of drawing an empty axis; many modules'
    navigation wraps inside the page; the roofline plot says which ops it leaves out; a
    profiled module's header is per step and its MFU measured (#35 point 6)."""
    many = sorted((FIXTURES / "zoo").glob("*.hlo.txt"))[:12]
    no_temps = FIXTURES / "rules" / "H001" / "donated_return_old_cpu.hlo.txt"
    out = _report(tmp_path, str(no_temps), *map(str, many), "--chip", "v5e")
    traced = _report(tmp_path, str(CPU), "--trace", str(CPU_TRACE), name="traced.html")
    with page_of(out) as (page, problems):
        nav = page.locator("nav.modules")
        assert nav.locator("a").count() == 13
        width = page.evaluate("() => document.documentElement.clientWidth")
        box = nav.bounding_box()
        assert box["x"] + box["width"] <= width + 1  # wraps inside the page, no overflow
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width + 1
        first = page.locator("section.module").first
        assert "no HBM temporaries" in first.locator(".memory-note").inner_text()
        assert first.locator("svg[aria-labelledby='tl-title']").count() == 0
        assert "Largest buffers live at the peak" not in first.inner_text()
        second = page.locator("section.module").nth(1)
        note = second.inner_text()
        assert re.search(r"\d+ ops drawn \(of \d+ with a time\)", note)
        assert not problems
    with page_of(traced) as (page, problems):
        cards = page.locator("section.module .cards").first.inner_text()
        assert "measured op time per step" in cards and "over 3 step(s)" in cards
        assert "MFU (measured)" in cards and "estimate" in cards
        assert not problems


def test_a_gpu_module_speaks_gpu(tmp_path):
    """A real V100 dump (corpus alpa-gpu-dumps): the V100, collectives over NVLink, no TPU
    words (MXU, ICI, VMEM, TPU) anywhere on the page."""
    from conftest import CORPUS

    gpu = CORPUS / "alpa-gpu-dumps" / "module_0082.func_shard_parallel__1.68.sm_7.0_gpu_after_optimizations.txt"
    if not gpu.exists():
        pytest.skip("corpus not present")
    html = _report(tmp_path, str(gpu)).read_text(encoding="utf-8")
    text = re.sub(r"<script.*?</script>|<style.*?</style>|<[^>]+>", " ", html, flags=re.S)
    assert "NVIDIA V100" in text and "NVLink" in text
    assert not re.search(r"\b(MXU|ICI|VMEM|TPU)\b", text)
