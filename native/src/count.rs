//! `hloscope stats` counted in the checks' one pass (`check.rs`), per computation, with no
//! Python object per instruction: opcodes and fusion kinds in the order first seen (as
//! Python's `Counter` keeps them), the lines of custom calls (few: Python reads their
//! targets and configs itself), and the instructions grouped by what `cost/memory.py`'s
//! facts read of them (opcode, shape, and for an async start its operands' shapes), each
//! group with its count and its five smallest names (the largest buffers are the smallest
//! (-bytes, computation, name): only those can be among them).

use crate::check::Map;
use crate::lines::{each_item, Fields};

/// The instructions of one computation that share what the memory facts read of them.
pub struct Group<'a> {
    pub count: usize,
    /// The smallest (name, line) pairs, at most five, in name order.
    pub smallest: Vec<(&'a str, usize)>,
}

/// (opcode, shape, operand shapes of an async start, else none).
pub type GroupKey<'a> = (&'a str, &'a str, Vec<&'a str>);

#[derive(Default)]
pub struct Tally<'a> {
    pub opcodes: Vec<(&'a str, usize)>,
    pub kinds: Vec<(&'a str, usize)>,
    pub custom_calls: Vec<usize>,
    pub groups: Map<GroupKey<'a>, Group<'a>>,
    /// The order groups were first seen in (their keys).
    pub order: Vec<GroupKey<'a>>,
}

fn bump<'a>(counts: &mut Vec<(&'a str, usize)>, key: &'a str) {
    match counts.iter_mut().find(|c| c.0 == key) {
        Some(c) => c.1 += 1,
        None => counts.push((key, 1)),
    }
}

/// A fusion's kind as `stats/counts.py`'s `_kind` reads it: the one `kind` item's value
/// when it is a plain name, `kLoop` without one; None when that is not plain to tell here
/// (Python counts the module then).
pub fn kind<'a>(attrs: &'a str) -> Option<&'a str> {
    let mut found: Vec<&'a str> = Vec::new();
    each_item(attrs, 0, |_, key, value| {
        if key == "kind" {
            found.push(value);
        }
    })?;
    match found[..] {
        [] if !attrs.contains("kind=") => Some("kLoop"),
        [v] => {
            let b = v.as_bytes();
            let plain = !b.is_empty()
                && (b[0].is_ascii_alphabetic() || b[0] == b'_')
                && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_');
            plain.then_some(v)
        }
        _ => None,
    }
}

impl<'a> Tally<'a> {
    /// Count one instruction (`operand_shapes`: its operands' shape texts, in order).
    pub fn add(&mut self, f: &Fields<'a>, line: usize, operand_shapes: &[&'a str]) -> Option<()> {
        bump(&mut self.opcodes, f.opcode);
        if f.opcode == "fusion" {
            bump(&mut self.kinds, kind(f.attrs)?);
        } else if f.opcode == "custom-call" {
            self.custom_calls.push(line);
        }
        let carried = if f.opcode.ends_with("-start") {
            operand_shapes.to_vec()
        } else {
            Vec::new()
        };
        let key = (f.opcode, f.shape, carried);
        let group = match self.groups.get_mut(&key) {
            Some(g) => g,
            None => {
                self.order.push(key.clone());
                self.groups.entry(key).or_insert(Group {
                    count: 0,
                    smallest: Vec::new(),
                })
            }
        };
        group.count += 1;
        let s = &mut group.smallest;
        if s.len() < 5 || s[4].0 > f.name {
            let at = s.partition_point(|p| p.0 < f.name);
            s.insert(at, (f.name, line));
            s.truncate(5);
        }
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
        let mut t = Tally::default();
        let texts: Vec<String> = (0..8)
            .map(|k| format!("  %n.{} = f32[2]{{0}} add(%a, %b)", 8 - k))
            .chain(["  %f = f32[2]{0} fusion(%a), kind=kInput, calls=%g".to_string()])
            .chain(["  %g = f32[2]{0} fusion(%a), calls=%g".to_string()])
            .collect();
        for (k, s) in texts.iter().enumerate() {
            t.add(&fields(s), k + 1, &["f32[2]{0}", "f32[2]{0}"])
                .unwrap();
        }
        assert_eq!(t.opcodes, vec![("add", 8), ("fusion", 2)]);
        assert_eq!(t.kinds, vec![("kInput", 1), ("kLoop", 1)]);
        let adds = &t.groups[&("add", "f32[2]{0}", vec![])];
        assert_eq!(adds.count, 8);
        let names: Vec<&str> = adds.smallest.iter().map(|p| p.0).collect();
        assert_eq!(names, ["n.1", "n.2", "n.3", "n.4", "n.5"]);
        assert_eq!(t.order.len(), 2);
    }

    #[test]
    fn reads_kinds_as_python_does_or_not_at_all() {
        assert_eq!(kind(", kind=kLoop, calls=%f"), Some("kLoop"));
        assert_eq!(kind(", calls=%f"), Some("kLoop"));
        assert_eq!(kind(", calls=%f, kind=kOutput"), Some("kOutput"));
        assert_eq!(kind(", kind=kLoop, kind=kInput"), None);
        assert_eq!(kind(", kind=\"x\""), None);
        assert_eq!(kind(", metadata={op_name=\"kind=x\"}"), None); // (Python seeks it)
    }
}
