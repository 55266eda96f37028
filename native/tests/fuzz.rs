//! A time-boxed fuzz run over real compiler output (issue #37 point 5): random mutations of
//! fixture modules (bytes deleted, inserted, replaced by brackets, quotes, newlines, `%`,
//! `=`), each read by `scan`, by `check::check_text` and, line by line, by `lines::line`
//! (a line it leaves for its comments, by `lines::uncommented` with them taken out), and
//! by the whole-text helpers `text::lines_with` and `text::nesting_beyond`, and each line's
//! attribute items by `lines::item_value`, `lines::items` and `lines::items_deep` (what they
//! find lies inside the text, and they agree), and a module header's by `items_deep`.
//! None may panic, and every span must lie inside the text. `cargo test --no-default-features` runs it for 2 seconds;
//! `FUZZ_SECONDS=600 cargo test --no-default-features --release --test fuzz -- --nocapture`
//! runs it for ten
//! minutes (the run stated in bench/README.md). (`--no-default-features`: without the
//! Python bindings, which link against the interpreter only inside Python.)

use hloscope_native::check::{check_text, Class, Table};
use hloscope_native::lines::{
    item_value, items, items_deep, line, strip_comments, uncommented, Line,
};
use hloscope_native::scan::scan;
use hloscope_native::text::{lines_with, nesting_beyond};
use std::time::{Duration, Instant};

const BASES: [&str; 5] = [
    include_str!("../../fixtures/tpu/mlp_v5e.hlo.txt"),
    include_str!("../../fixtures/tpu/fsdp_async_fusion_v5p.hlo.txt"),
    include_str!("../../fixtures/zoo/convnet_train_h100.hlo.txt"),
    include_str!("../../fixtures/rules/G001/tile_overhang_gpu.hlo.txt"),
    TYPED,
];

/// HAND-WRITTEN (labelled as such): the forms of CPU dumps (the corpus's Gemma module, not
/// in the repository) that the reader takes since 2026-11-28: typed operands, headers with
/// parameters, call keys, a computation named after a keyword.
const TYPED: &str = "HloModule m, entry_computation_layout={(s32[], f32[2,3]{1,0})->pred[]}

%add.1 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %a = f32[] add(f32[] %x, f32[] %y), metadata={op_name=\"a, calls=%b\"}
}

ENTRY (p.0: s32[], %q: f32[2,3]{1,0}) -> pred[] {
  %p.0 = s32[] parameter(0)
  %q = f32[2,3]{1,0} parameter(1)
  %c = s32[] constant(0)
  %r = f32[2]{0} reduce(f32[2,3]{1,0} %q, f32[] %z), dimensions={1}, to_apply=%add.1
  %w = s32[] call(s32[] %p.0), to_apply=%add.1, to_apply=%add.1
  ROOT %e = pred[] compare(s32[] %p.0, s32[] %c), direction=EQ
}
";

#[test]
fn mutations_of_real_modules_never_panic() {
    let seconds: u64 = std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let stop = Instant::now() + Duration::from_secs(seconds);
    let mut seed = 0x2545f4914f6cdd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let alphabet = b"(){}[]\",%= \n\t\\/'xROOT0:*";
    // every opcode of the bases is known (parameters plain, the rest value-checked), so
    // the checks read the mutants to the end
    let table = Table {
        classes: BASES
            .iter()
            .flat_map(|b| b.split('\n'))
            .filter_map(|l| match line(l) {
                Line::Instruction(f) if f.opcode == "parameter" => Some((f.opcode, Class::Plain)),
                Line::Instruction(f) => Some((f.opcode, Class::Value)),
                _ => None,
            })
            .collect(),
        keys: ["dimensions", "index", "direction"].into_iter().collect(),
        marks: hloscope_native::check::marks(&["dimensions", "index", "direction"]),
        count: true,
        structures: true,
    };
    let mut answered = 0u64;
    let (mut cases, mut instructions) = (0u64, 0u64);
    while Instant::now() < stop {
        let base = BASES[(next() % BASES.len() as u64) as usize].as_bytes();
        let mut v = base.to_vec();
        for _ in 0..(1 + next() % 16) {
            if v.is_empty() {
                break;
            }
            let at = (next() % v.len() as u64) as usize;
            match next() % 4 {
                0 => {
                    v.remove(at);
                }
                1 => v.insert(at, alphabet[(next() % alphabet.len() as u64) as usize]),
                2 => v[at] = alphabet[(next() % alphabet.len() as u64) as usize],
                _ => {
                    let n = (next() % 64) as usize;
                    let end = (at + n).min(v.len());
                    v.drain(at..end);
                }
            }
        }
        let text = String::from_utf8_lossy(&v).into_owned();
        let t = scan(&text);
        assert!(t.spans_inside(text.len()));
        for l in text.split('\n') {
            // a module header's attributes, nested to any depth
            if let (true, Some(at)) = (l.starts_with("HloModule"), l.find(',')) {
                for (k, v) in items_deep(&l[at..]).into_iter().flatten() {
                    assert!(l.contains(k) && l.contains(v));
                }
            }
            let all = items(l);
            for key in ["calls", "metadata", "backend_config", "replica_groups", "x"] {
                if let Some(Some(v)) = item_value(l, key) {
                    let at = v.as_ptr() as usize - l.as_ptr() as usize;
                    assert!(at + v.len() <= l.len());
                    // (given once: the one item of that key)
                    let of_key: Vec<&str> = all
                        .iter()
                        .flatten()
                        .filter(|kv| kv.0 == key)
                        .map(|kv| kv.1)
                        .collect();
                    assert_eq!(of_key, [v]);
                }
            }
            if let Line::Instruction(f) = line(l) {
                instructions += 1;
                assert!(f.name.len() <= l.len() && f.attrs.len() <= l.len());
                for key in [
                    "calls",
                    "metadata",
                    "backend_config",
                    "replica_groups",
                    "kind",
                ] {
                    if let Some(Some(v)) = item_value(f.attrs, key) {
                        assert!(f.attrs.contains(v));
                    }
                }
                // (any nesting: it takes every list `items` takes, read alike)
                if let Some(found) = items(f.attrs) {
                    assert_eq!(items_deep(f.attrs), Some(found));
                }
            } else if let Some(t) = strip_comments(l) {
                // (a line left for its comments: read with them taken out)
                assert!(t.len() < l.len());
                if let Some(Line::Instruction(f)) = uncommented(&t) {
                    instructions += 1;
                    assert!(f.name.len() <= t.len() && f.attrs.len() <= t.len());
                }
            }
        }
        answered += check_text(&text, &table, |c| u64::from(c.is_ok()));
        // the whole-text helpers: each marked line once, in order, and a depth bound
        let marked = lines_with(&text, "/*");
        let want: Vec<(usize, &str)> = text
            .split('\n')
            .enumerate()
            .filter(|(_, l)| l.contains("/*"))
            .map(|(k, l)| (k + 1, l))
            .collect();
        assert_eq!(marked, want);
        let limit = (next() % 4) as usize;
        if let Some(at) = nesting_beyond(&text, limit) {
            assert!(at < text.chars().count());
        }
        cases += 1;
    }
    eprintln!(
        "fuzz: {cases} mutated modules ({answered} answered by the checks), \
         {instructions} instruction lines read, no panic"
    );
    assert!(cases > 0);
}
