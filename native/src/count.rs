//! `hloscope stats` counted in the checks' one pass (`check.rs`), per computation, with no
//! Python object per instruction: opcodes and fusion kinds in the order first seen (as
//! Python's `Counter` keeps them), the lines of custom calls (few: Python reads their
//! targets and configs itself), and the instructions grouped by what `cost/memory.py`'s
//! facts read of them (opcode, shape, and for an async start its operands' shapes), each
//! group with its count and its five smallest names (the largest buffers are the smallest
//! (-bytes, computation, name): only those can be among them).

use crate::check::Map;
use crate::lines::{each_item, Fields};

/// (opcode, shape, operand shapes of an async start, else none).
pub type GroupKey<'a> = (&'a str, &'a str, Vec<&'a str>);

/// The instructions of one computation that share a GroupKey: how many, and the smallest
/// (name, line) pairs, at most five, in name order.
#[derive(Default)]
pub struct Group<'a> {
    pub count: usize,
    pub smallest: Vec<(&'a str, usize)>,
}

impl<'a> Group<'a> {
    fn add(&mut self, name: &'a str, line: usize) {
        self.count += 1;
        let s = &mut self.smallest;
        if s.len() < 5 || s[4].0 > name {
            let at = s.partition_point(|p| p.0 < name);
            s.insert(at, (name, line));
            s.truncate(5);
        }
    }
}

/// A module's groups: per key, per computation (by its index) that has one.
#[derive(Default)]
pub struct Groups<'a> {
    map: Map<GroupKey<'a>, Vec<(usize, Group<'a>)>>,
}

/// A merged group: key, count, the smallest (computation, name, line) triples.
pub type Merged<'a> = (GroupKey<'a>, usize, Vec<(&'a str, &'a str, usize)>);

impl<'a> Groups<'a> {
    /// One instruction of computation `comp` (instructions come computation by computation).
    pub fn add(&mut self, key: GroupKey<'a>, comp: usize, name: &'a str, line: usize) {
        let per = self.map.entry(key).or_default();
        if per.last().map(|p| p.0) != Some(comp) {
            per.push((comp, Group::default()));
        }
        if let Some(last) = per.last_mut() {
            last.1.add(name, line);
        }
    }

    /// The groups of the computations `keep` says yes to (by index), merged by key: what
    /// the memory facts of those computations read (sums, and the five smallest
    /// (computation, name) of each key: only those can be among the largest buffers).
    pub fn merged(&self, names: &[&'a str], keep: impl Fn(usize) -> bool) -> Vec<Merged<'a>> {
        let mut out = Vec::new();
        for (key, per) in &self.map {
            let mut count = 0;
            let mut smallest: Vec<(&'a str, &'a str, usize)> = Vec::new();
            for (comp, g) in per.iter().filter(|p| keep(p.0)) {
                count += g.count;
                smallest.extend(g.smallest.iter().map(|&(n, l)| (names[*comp], n, l)));
            }
            if count > 0 {
                smallest.sort_unstable();
                smallest.truncate(5);
                out.push((key.clone(), count, smallest));
            }
        }
        out
    }
}

/// One computation's counts.
#[derive(Default)]
pub struct Tally<'a> {
    pub opcodes: Vec<(&'a str, usize)>,
    pub kinds: Vec<(&'a str, usize)>,
    pub custom_calls: Vec<usize>,
}

/// Counts in the order first seen.
pub fn bump<'a>(counts: &mut Vec<(&'a str, usize)>, key: &'a str, n: usize) {
    match counts.iter_mut().find(|c| c.0 == key) {
        Some(c) => c.1 += n,
        None => counts.push((key, n)),
    }
}

/// A fusion's kind as `stats/counts.py`'s `_kind` reads it: the one `kind` item's value
/// when it is a plain name, `kLoop` without one; None when that is not plain to tell here
/// (Python counts the module then).
pub fn kind<'a>(attrs: &'a str) -> Option<&'a str> {
    // (as XLA prints it, first: `, kind=kLoop, ...`, the only `kind=` in the text; Python
    // reads it there too)
    let head = attrs
        .strip_prefix(',')
        .map(|a| a.trim_start_matches([' ', '\t']));
    if let Some(v) = head.and_then(|a| a.strip_prefix("kind=")) {
        let end = v.find([',', ' ', '\t']).unwrap_or(v.len());
        let after = v[end..].trim_start_matches([' ', '\t']);
        if (after.is_empty() || after.starts_with(',')) && plain(&v[..end]) && !v.contains("kind=")
        {
            return Some(&v[..end]);
        }
    }
    let mut found: Vec<&'a str> = Vec::new();
    each_item(attrs, 0, |_, key, value| {
        if key == "kind" {
            found.push(value);
        }
    })?;
    match found[..] {
        [] if !attrs.contains("kind=") => Some("kLoop"),
        [v] => plain(v).then_some(v),
        _ => None,
    }
}

/// A name as `_KIND_FIRST` takes one (no `.` or `-`).
fn plain(v: &str) -> bool {
    let b = v.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

impl<'a> Tally<'a> {
    /// Count one instruction of computation `comp` (`operand_shapes`: its operands' shape
    /// texts, in order) here and in its module's `groups`.
    pub fn add(
        &mut self,
        f: &Fields<'a>,
        line: usize,
        operand_shapes: &[&'a str],
        groups: &mut Groups<'a>,
        comp: usize,
    ) -> Option<()> {
        bump(&mut self.opcodes, f.opcode, 1);
        if f.opcode == "fusion" {
            bump(&mut self.kinds, kind(f.attrs)?, 1);
        } else if f.opcode == "custom-call" {
            self.custom_calls.push(line);
        }
        let carried = if f.opcode.ends_with("-start") {
            operand_shapes.to_vec()
        } else {
            Vec::new()
        };
        groups.add((f.opcode, f.shape, carried), comp, f.name, line);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::{line, Line};

    fn fields(s: &str) -> Fields<'_> {
        match line(s) {
            Line::Instruction(f) => f,
            _ => panic!("{s}"),
        }
    }

    #[test]
    fn counts_in_first_seen_order_and_keeps_the_five_smallest_names() {
        let (mut t, mut groups) = (Tally::default(), Groups::default());
        let texts: Vec<String> = (0..8)
            .map(|k| format!("  %n.{} = f32[2]{{0}} add(%a, %b)", 8 - k))
            .chain(["  %f = f32[2]{0} fusion(%a), kind=kInput, calls=%g".to_string()])
            .chain(["  %g = f32[2]{0} fusion(%a), calls=%g".to_string()])
            .collect();
        for (k, s) in texts.iter().enumerate() {
            let comp = usize::from(k >= 4); // (two computations)
            t.add(
                &fields(s),
                k + 1,
                &["f32[2]{0}", "f32[2]{0}"],
                &mut groups,
                comp,
            )
            .unwrap();
        }
        assert_eq!(t.opcodes, vec![("add", 8), ("fusion", 2)]);
        assert_eq!(t.kinds, vec![("kInput", 1), ("kLoop", 1)]);
        let merged = groups.merged(&["a", "b"], |_| true);
        let adds = merged.iter().find(|m| m.0 .0 == "add").unwrap();
        assert_eq!(adds.1, 8);
        let names: Vec<(&str, &str)> = adds.2.iter().map(|p| (p.0, p.1)).collect();
        assert_eq!(
            names,
            [
                ("a", "n.5"),
                ("a", "n.6"),
                ("a", "n.7"),
                ("a", "n.8"),
                ("b", "n.1")
            ]
        );
        let only_b = groups.merged(&["a", "b"], |c| c == 1);
        assert_eq!(only_b.iter().map(|m| m.1).sum::<usize>(), 6); // (4 adds, 2 fusions)
    }

    #[test]
    fn reads_kinds_as_python_does_or_not_at_all() {
        assert_eq!(kind(", kind=kLoop, calls=%f"), Some("kLoop"));
        assert_eq!(kind(",\tkind=kInput "), Some("kInput"));
        // (twice in the text, once an item: read from the items, as Python's split does)
        assert_eq!(
            kind(", kind=kLoop, metadata={op_name=\"kind=x\"}"),
            Some("kLoop")
        );
        assert_eq!(kind(", kind=k.x, calls=%f"), None);
        assert_eq!(kind(", calls=%f"), Some("kLoop"));
        assert_eq!(kind(", calls=%f, kind=kOutput"), Some("kOutput"));
        assert_eq!(kind(", kind=kLoop, kind=kInput"), None);
        assert_eq!(kind(", kind=\"x\""), None);
        assert_eq!(kind(", metadata={op_name=\"kind=x\"}"), None); // (Python seeks it)
    }
}
