//! A computation's structure (`hloscope.ir.Computation.structure`): a 128-bit digest of what
//! its instructions are, without their names. Two computations with equal digests hold the
//! same opcodes, shapes, operands (by the position of the instruction that defines them),
//! literals, ROOT and attributes, metadata apart, and call computations of equal structure;
//! so the cost model computes a fused computation's FLOPs and traffic once per structure (an
//! unrolled transformer repeats each layer's fusions: the 31 MB training step's 14,449 fused
//! computations have 65 structures). A computation holding an op whose cost is not its
//! structure's alone (a custom call, found by its name; control flow and async parts, costed
//! in their caller's context) has none.

use crate::check::Map;
use crate::lines::{each_item, Fields, CALL_KEYS};
use std::hash::{DefaultHasher, Hasher};

/// A structure's digest: two SipHash outputs of the same 256-bit state.
pub type Digest = (u64, u64);

/// Opcodes whose cost is not their computation's structure's alone.
fn unshared(op: &str) -> bool {
    matches!(
        op,
        "custom-call" | "while" | "conditional" | "call" | "send" | "recv"
    ) || op.starts_with("async-")
        || op.ends_with("-start")
        || op.ends_with("-done")
        || op.ends_with("-update")
}

/// The digest of one computation, fed its instructions in order.
pub struct Structure<'a> {
    hasher: DefaultHasher,
    positions: Map<&'a str, u32>,
    known: bool,
}

impl<'a> Default for Structure<'a> {
    fn default() -> Self {
        Structure {
            hasher: DefaultHasher::new(),
            positions: Map::default(),
            known: true,
        }
    }
}

impl<'a> Structure<'a> {
    /// Add the next instruction; `callees`: the digests of the module's computations so far,
    /// by name (None: one without).
    pub fn add(&mut self, f: &Fields<'a>, callees: &Map<&'a str, Option<Digest>>) {
        if !self.known {
            return; // (it has none: nothing more is read)
        }
        self.known = self.feed(f, callees).is_some();
        let at = self.positions.len() as u32;
        self.positions.insert(f.name, at);
    }

    fn feed(&mut self, f: &Fields<'a>, callees: &Map<&'a str, Option<Digest>>) -> Option<()> {
        if unshared(f.opcode) {
            return None;
        }
        let h = &mut self.hasher;
        for text in [f.opcode, f.shape] {
            h.write(text.as_bytes());
            h.write_u8(0xff);
        }
        h.write_usize(f.operands.len());
        for o in &f.operands {
            h.write_u32(*self.positions.get(o)?);
        }
        h.write_usize(f.operand_shapes.len());
        for t in &f.operand_shapes {
            h.write(t.as_bytes());
            h.write_u8(0xff);
        }
        match f.literal {
            Some(l) => {
                h.write_u8(1);
                h.write(l.as_bytes());
                h.write_u8(0xff);
            }
            None => h.write_u8(0),
        }
        h.write_u8(u8::from(f.root));
        let mut called = true;
        each_item(f.attrs, 0, |_, key, value| {
            if key == "metadata" {
                return;
            }
            h.write(key.as_bytes());
            h.write_u8(0xfe);
            if CALL_KEYS.contains(&key) {
                let v = value.trim_end_matches([' ', '\t']);
                match callees.get(v.strip_prefix('%').unwrap_or(v)) {
                    Some(Some((a, b))) => {
                        h.write_u64(*a);
                        h.write_u64(*b);
                    }
                    _ => called = false, // (a list, or a callee without a structure)
                }
            } else {
                h.write(value.as_bytes());
            }
            h.write_u8(0xfe);
        })?;
        called.then_some(())
    }

    /// The digest, or None (an op whose cost is not the structure's, an operand not
    /// defined above, a call not read here).
    pub fn finish(mut self) -> Option<Digest> {
        if !self.known {
            return None;
        }
        let first = self.hasher.finish();
        self.hasher.write_u8(1);
        Some((first, self.hasher.finish()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::{line, Line};

    fn digest(lines: &[&str], callees: &Map<&str, Option<Digest>>) -> Option<Digest> {
        let mut s = Structure::default();
        for l in lines {
            match line(l) {
                Line::Instruction(f) => s.add(&f, callees),
                _ => panic!("not an instruction line: {l}"),
            }
        }
        s.finish()
    }

    // (hand-written lines, for the digest's rules: names and metadata apart, all the rest)
    #[test]
    fn names_and_metadata_apart_equal_structures_digest_alike() {
        let none = Map::default();
        let a = digest(
            &[
                "  %p.1 = f32[8]{0} parameter(0)",
                "  ROOT %e.2 = f32[8]{0} exponential(%p.1), metadata={op_name=\"a\"}",
            ],
            &none,
        );
        let b = digest(
            &[
                "  %q = f32[8]{0} parameter(0)",
                "  ROOT %x = f32[8]{0} exponential(%q), metadata={op_name=\"b\" source_line=3}",
            ],
            &none,
        );
        assert!(a.is_some());
        assert_eq!(a, b);
        for other in [
            "  ROOT %x = f32[8]{1} exponential(%q)",
            "  ROOT %x = f32[8]{0} log(%q)",
            "  %x = f32[8]{0} exponential(%q)",
            "  ROOT %x = f32[8]{0} exponential(%q), sharding={replicated}",
        ] {
            assert_ne!(
                a,
                digest(&["  %q = f32[8]{0} parameter(0)", other], &none),
                "{other}"
            );
        }
        // operands by the position of what defines them
        let two = |x: &str| {
            digest(
                &[
                    "  %a = f32[8]{0} parameter(0)",
                    "  %b = f32[8]{0} parameter(1)",
                    x,
                ],
                &none,
            )
        };
        assert_ne!(
            two("  ROOT %s = f32[8]{0} subtract(%a, %b)"),
            two("  ROOT %s = f32[8]{0} subtract(%b, %a)")
        );
    }

    #[test]
    fn callees_by_their_structure_and_unshared_ops_have_none() {
        let mut callees: Map<&str, Option<Digest>> = Map::default();
        callees.insert("add.1", Some((1, 2)));
        callees.insert("add.2", Some((1, 2)));
        callees.insert("mul.3", Some((3, 4)));
        callees.insert("kernel", None);
        let reduce = |to: &str| {
            let l = format!("  ROOT %r = f32[] reduce(%p, %z), dimensions={{0}}, to_apply=%{to}");
            digest(
                &[
                    "  %p = f32[8]{0} parameter(0)",
                    "  %z = f32[] constant(0)",
                    l.as_str(),
                ],
                &callees,
            )
        };
        assert!(reduce("add.1").is_some());
        assert_eq!(reduce("add.1"), reduce("add.2"));
        assert_ne!(reduce("add.1"), reduce("mul.3"));
        assert_eq!(reduce("kernel"), None);
        assert_eq!(reduce("missing"), None);
        for op in [
            "  ROOT %c = f32[8]{0} custom-call(%p), custom_call_target=\"k\"",
            "  ROOT %c = f32[8]{0} all-reduce-start(%p), to_apply=%add.1",
        ] {
            assert_eq!(
                digest(&["  %p = f32[8]{0} parameter(0)", op], &callees),
                None
            );
        }
    }
}
