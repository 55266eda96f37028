//! The checks `hloscope/parser/validate.py` makes of a scanned module, compiled, as a sound
//! shortcut: `check` either answers "these modules pass every structural check" and lists
//! the distinct value signatures Python still has to check, or gives up with a reason, and
//! Python then runs its own `validate`. It never answers for a text it does not model.
//!
//! Structural (here): one module per `HloModule` line, each with computations; computation
//! names distinct, at most one ENTRY, none empty; per instruction a name not seen before in
//! its computation, operands defined above it, called computations defined before its own,
//! at most one ROOT, parameter numbers `0..n` each once. Value checks (Python, once per
//! distinct text): operand counts, comparison directions, literals, shapes against operands:
//! each a function of the instruction's opcode, shape, the attributes they read (Python
//! names the keys), literal and its operands' shapes, so one check per distinct signature
//! answers for all. An opcode Python's table does not class (the generic async ops, async
//! shorthand such as `custom-call-start`, opcodes XLA does not list) is handed back once per
//! distinct (opcode, shape, operands' opcodes and shapes): validate checks async chains
//! against the operand's opcode (`Decided`).
//!
//! Lines rewritten for the line reader and handed back for Python to compare (`Rewritten`):
//! comments, single-quoted strings, tuple-typed operands, and (when such a line stops the
//! first pass) a `backend_config` nested deeper than the reader takes, cut to `{}`. A
//! computation's `}` may carry its `execution_thread`.
//!
//! Given up on (Python decides): any other line the line reader leaves to Python inside a
//! computation, a computation header outside a module or after a line it does not read,
//! call keys Python reads itself, `%x#i` operands (the parser adds get-tuple-elements), a
//! parameter number that is not plain decimal digits, and any failed check.

use crate::count::{bump, Groups, Merged, Tally};
use crate::lines::{each_item, line, line_at, line_starts, split_lines, Line, CALL_KEYS};
use crate::structure::{Digest, Structure};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A fast hash for short texts (names, shapes), FxHash's: the maps here hold a few
/// thousand keys from one trusted text, where SipHash's guard against chosen keys costs
/// more than the checks.
#[derive(Default)]
pub struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl Fx {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

pub type Map<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;
pub type Set<K> = HashSet<K, BuildHasherDefault<Fx>>;

/// Why the checks give up on a line the line reader leaves to Python.
const PYTHON_LINE: &str = "a line Python reads inside a computation";

/// The debug tables' names: a header named so is Python's to read.
const SECTIONS: [&str; 4] = ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

/// What Python tells the checks: how it classes each opcode (others are its own to
/// decide) and the attribute keys its value checks read.
pub struct Table<'t> {
    pub classes: Map<&'t str, Class>,
    pub keys: Set<&'t str>,
    /// `key=` of each key (`marks`): an attribute list without any holds no item of one.
    pub marks: Vec<memchr::memmem::Finder<'static>>,
    /// Count what `stats` reads too (`Checked::counted`).
    pub count: bool,
    /// Digest each computation's structure too (`Checked::structures`).
    pub structures: bool,
}

/// How Python's table classes an opcode.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Known; no value check applies.
    Plain,
    /// Known; its value checks run in Python, once per signature.
    Value,
}

/// What one instruction's value checks read.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Signature<'a> {
    pub opcode: &'a str,
    pub shape: &'a str,
    /// The attribute items (`, key=value`) whose keys the value checks read, in order.
    pub attrs: Vec<&'a str>,
    pub literal: Option<&'a str>,
    pub operand_shapes: Vec<&'a str>,
}

/// An instruction of an opcode Python's table does not class (the generic async ops, an
/// async shorthand such as `custom-call-start`, an opcode XLA does not list): Python's
/// validate checks it against its operands' opcodes and shapes, once per distinct one.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Decided<'a> {
    pub opcode: &'a str,
    pub shape: &'a str,
    /// Each operand's (opcode, shape text).
    pub operands: Vec<(&'a str, &'a str)>,
}

/// A computation as the check saw it: name (no `%`), ENTRY, instruction count.
pub type Seen<'a> = (&'a str, bool, usize);

/// An instruction read from a line whose comments were taken out (`/*index=5*/` in a long
/// operand list), as Python's line scanner reads such a line: Python compares it with its
/// own instruction of that line and checks that one's values itself.
pub struct Rewritten<'a> {
    pub module: usize,
    pub computation: usize,
    pub line: usize,
    pub name: &'a str,
    pub opcode: &'a str,
    pub shape: &'a str,
    pub operands: Vec<&'a str>,
    pub literal: Option<&'a str>,
    pub root: bool,
    pub calls: Vec<&'a str>,
    /// Its operands' shape texts, and a fusion's kind as `count.rs` reads it.
    pub operand_shapes: Vec<&'a str>,
    pub kind: Option<&'a str>,
}

pub struct Checked<'a> {
    /// Per module, its computations in order.
    pub modules: Vec<Vec<Seen<'a>>>,
    pub signatures: Vec<Signature<'a>>,
    pub decided: Vec<Decided<'a>>,
    pub rewritten: Vec<Rewritten<'a>>,
    /// What `stats` reads, when asked for.
    pub counted: Option<Counted<'a>>,
    /// Per module, each computation's structure (`structure.rs`), when asked for.
    pub structures: Vec<Vec<Option<Digest>>>,
}

/// `stats`' counts (`count.rs`) and what Python checks of the text beside the signatures
/// for the module it would have built: the lines it reads itself outside the computations
/// (module headers, debug tables), the shapes (of instructions, and of the headers'
/// parameters and results), the typed operands' shapes and the literals (each distinct text
/// once).
#[derive(Default)]
pub struct Counted<'a> {
    pub modules: Vec<ModuleCount<'a>>,
    pub outside: Vec<usize>,
    pub headers: Vec<usize>,
    pub shapes: Set<&'a str>,
    pub typed: Set<&'a str>,
    pub literals: Set<&'a str>,
}

/// One module's counts: opcodes and fusion kinds in the order first seen, custom calls
/// (computation index, line), the memory groups of the computations fusions do not call
/// (merged), those computations' names, and per computation its opcodes and kinds.
#[derive(Default)]
pub struct ModuleCount<'a> {
    pub opcodes: Vec<(&'a str, usize)>,
    pub kinds: Vec<(&'a str, usize)>,
    pub custom_calls: Vec<(usize, usize)>,
    pub groups: Vec<Merged<'a>>,
    pub fused: Vec<&'a str>,
    pub per_computation: Vec<Tally<'a>>,
    building: Groups<'a>,
}

impl<'a> ModuleCount<'a> {
    /// Merge the per-computation counts, once the module's computations are all read.
    fn finish(&mut self, names: &[&'a str]) {
        let mut fused: Vec<&'a str> = Vec::new();
        for (k, t) in self.per_computation.iter().enumerate() {
            for &(op, n) in &t.opcodes {
                bump(&mut self.opcodes, op, n);
            }
            for &(kind, n) in &t.kinds {
                bump(&mut self.kinds, kind, n);
            }
            self.custom_calls
                .extend(t.custom_calls.iter().map(|&l| (k, l)));
        }
        fused.append(&mut self.fused);
        fused.sort_unstable();
        fused.dedup();
        let fused_set: Set<&str> = fused.iter().copied().collect();
        self.groups = self
            .building
            .merged(names, |k| !fused_set.contains(names[k]));
        self.fused = fused;
    }
}

struct Comp<'a> {
    name: &'a str,
    entry: bool,
    shapes: Map<&'a str, (&'a str, &'a str)>, // instruction -> (shape text, opcode)
    count: usize,
    roots: usize,
    params: Set<usize>,
    /// Its counts (when counting) and the computations its fusions call.
    counts: Option<(Tally<'a>, Vec<&'a str>)>,
    /// Its structure's digest so far (when asked for).
    structure: Option<Structure<'a>>,
}

#[derive(Default)]
struct Module<'a> {
    comps: Vec<Seen<'a>>,
    names: Set<&'a str>,
    entries: usize,
    /// Each computation's structure, by name (when asked for).
    digests: Map<&'a str, Option<Digest>>,
}

/// The finders of `key=` for each key (`Table::marks`).
pub fn marks<K: AsRef<str>>(keys: &[K]) -> Vec<memchr::memmem::Finder<'static>> {
    keys.iter()
        .map(|k| memchr::memmem::Finder::new(&format!("{}=", k.as_ref())).into_owned())
        .collect()
}

/// The items of an attribute list whose keys are in `keys` (`marks`: their `key=`), each
/// `, key=value` as printed.
fn items_of<'a>(
    attrs: &'a str,
    keys: &Set<&str>,
    marks: &[memchr::memmem::Finder<'static>],
) -> Option<Vec<&'a str>> {
    let mut out = Vec::new();
    if !marks.iter().any(|m| m.find(attrs.as_bytes()).is_some()) {
        return Some(out); // (no `key=` anywhere: no item of one, without reading them)
    }
    let mut start: Option<usize> = None;
    each_item(attrs, 0, |comma, key, value| {
        if let Some(at) = start.take() {
            out.push(&attrs[at..comma]);
        }
        if keys.contains(key) {
            start = Some(comma);
        }
        let _ = value;
    })?;
    if let Some(at) = start {
        out.push(&attrs[at..]);
    }
    Some(out)
}

/// The computations an attribute list's call keys name, in CALL_KEYS order, where each
/// is one `%?name` or a list `{%?name, ...}` and none is given twice (as Python's
/// `Instruction.calls()` reads them); None otherwise.
fn callees(attrs: &str) -> Option<Vec<&str>> {
    let mut found: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut plain = true;
    each_item(attrs, 0, |_, key, value| {
        let Some(k) = CALL_KEYS.iter().position(|&c| c == key) else {
            return;
        };
        let v = value.trim_matches([' ', '\t']);
        let names = match v.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
            Some(inner) if inner.trim_matches([' ', '\t']).is_empty() => Some(Vec::new()),
            Some(inner) => inner
                .split(',')
                .map(|n| one_name(n.trim_matches([' ', '\t'])))
                .collect(),
            None => one_name(v).map(|n| vec![n]),
        };
        match names {
            Some(names) if !found.iter().any(|f| f.0 == k) => found.push((k, names)),
            _ => plain = false,
        }
    })?;
    found.sort_by_key(|f| f.0);
    plain.then(|| found.into_iter().flat_map(|f| f.1).collect())
}

/// `%?name` as a whole: the name.
fn one_name(s: &str) -> Option<&str> {
    let n = s.strip_prefix('%').unwrap_or(s);
    (crate::lines::name(n.as_bytes(), 0)? == n.len()).then_some(n)
}

/// Brackets balanced outside strings and comments, strings and comments closed, no `//`:
/// a header line Python reads whole.
fn whole(s: &str) -> bool {
    let b = s.as_bytes();
    let (mut depth, mut i) = (0i64, 0);
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if i >= b.len() {
                    return false;
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            // (`/*index=5*/` in a long layout list: a comment closed on the line)
            b'/' if b.get(i + 1) == Some(&b'*') => match s[i + 2..].find("*/") {
                Some(k) => i += k + 3,
                None => return false,
            },
            b'/' => return false,
            _ => {}
        }
        i += 1;
    }
    depth == 0
}

/// A line the line reader leaves to Python, rewritten so that it takes it: comments out as
/// Python's `strip_comments` takes them (`/*...*/` and `//...` outside double-quoted
/// strings), and single-quoted strings (`mesh['axis_0'=2]` in replica groups) written with
/// double quotes. Python reads such a line itself and compares what it reads with what the
/// reader made of the rewritten one (`Rewritten`). None when there is nothing to rewrite, or
/// the line holds what this does not model (an open string or comment, a quote or backslash
/// in a single-quoted string).
pub fn uncommented(s: &str) -> Option<String> {
    crate::lines::rewrite(s, true)
}

/// An instruction line whose operands are typed with a tuple among them (`while((s32[],
/// f32[]) %t)`, as CPU dumps print them; the line reader leaves those to Python), with the
/// operands' names alone: what the checks need of it (Python reads the line itself and
/// compares). None for any other line (and for a tuple-typed operand without its `%`).
pub fn untyped(s: &str) -> Option<String> {
    use crate::lines::{blanks, name, shape};
    let b = s.as_bytes();
    memchr::memmem::find(b, b") %")?; // (as dumps print one: `(s32[]) %t`)
    let mut i = blanks(b, 0);
    if b[i..].starts_with(b"ROOT") {
        i = blanks(b, i + 4);
    }
    i += usize::from(b.get(i) == Some(&b'%'));
    i = blanks(b, name(b, i)?);
    if b.get(i) != Some(&b'=') {
        return None;
    }
    let end = shape(b, blanks(b, i + 1))?;
    let op_at = blanks(b, end);
    let open = name(b, op_at)?;
    if op_at == end
        || b.get(open) != Some(&b'(')
        || matches!(&s[op_at..open], "constant" | "parameter")
    {
        return None;
    }
    let (mut depth, mut close, mut cuts) = (0usize, None, vec![open]);
    for (k, &c) in b.iter().enumerate().skip(open + 1) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' if depth == 0 => {
                close = Some(k);
                break;
            }
            b')' | b']' | b'}' => depth = depth.checked_sub(1)?,
            b',' if depth == 0 => cuts.push(k),
            b'"' | b'\'' | b'/' => return None,
            _ => {}
        }
    }
    let close = close?;
    if !s[open + 1..close].contains('(') {
        return None; // (no tuple among them: not a line this rewrites)
    }
    cuts.push(close);
    let mut names = Vec::new();
    for w in cuts.windows(2) {
        let piece = &s[w[0] + 1..w[1]];
        let p = piece.as_bytes();
        let at = blanks(p, 0);
        let typed_end = shape(p, at)?;
        let name_at = blanks(p, typed_end);
        if name_at == typed_end {
            return None;
        }
        let n_at = name_at + usize::from(p.get(name_at) == Some(&b'%'));
        let n_end = name(p, n_at)?;
        if blanks(p, n_end) != p.len() {
            return None;
        }
        names.push(&piece[n_at..n_end]);
    }
    Some(format!("{}{})", &s[..=open], names.join(", ")) + &s[close + 1..])
}

/// A computation's closing brace with its execution thread (`}, execution_thread="sparsecore"`,
/// as TPU compiles print a SparseCore computation's end).
fn thread_close(s: &str) -> bool {
    let t = s.trim_matches([' ', '\t', '\r']);
    t.strip_prefix('}')
        .map(|r| r.trim_start_matches([' ', '\t']))
        .and_then(|r| r.strip_prefix(','))
        .map(|r| r.trim_start_matches([' ', '\t']))
        .and_then(|r| r.strip_prefix("execution_thread=\""))
        .and_then(|r| r.strip_suffix('"'))
        .is_some_and(|v| !v.contains(['"', '\\']))
}

/// An instruction line whose `backend_config` value is nested deeper than the line reader
/// takes (a GPU compile's Triton fusion config), with that value as `{}`: the checks read
/// nothing in it, and Python reads the line itself and compares (`Rewritten`). None when
/// the line has no such item or its brackets do not pair.
pub fn shallow(s: &str) -> Option<String> {
    let at = s.find(", backend_config={")? + ", backend_config=".len();
    let b = s.as_bytes();
    let (mut depth, mut j) = (0usize, at);
    while j < b.len() {
        match b[j] {
            b'"' => {
                j = crate::lines::string(b, j)?;
                continue;
            }
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(format!("{}{{}}{}", &s[..at], &s[j + 1..]));
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// `check` of a whole text, its commented lines read as Python reads them (and, when a line
/// the reader leaves to Python stops the first pass, its deep `backend_config` values cut:
/// `shallow`); `then` gets the result (which borrows the lines made here).
pub fn check_text<R>(
    text: &str,
    table: &Table,
    then: impl FnOnce(Result<Checked<'_>, (&'static str, usize)>) -> R,
) -> R {
    // the lines rewritten for the reader, by index (few: the others are read as they are),
    // among those holding what a rewrite takes out (found over the whole text at once)
    let starts = line_starts(text);
    let b = text.as_bytes();
    let mut marked: Vec<usize> = memchr::memmem::find_iter(b, "/*")
        .chain(memchr::memmem::find_iter(b, "//"))
        .chain(memchr::memchr_iter(b'\'', b))
        .chain(memchr::memmem::find_iter(b, ") %"))
        .map(|at| starts.partition_point(|&s| s <= at) - 1)
        .collect();
    marked.sort_unstable();
    marked.dedup();
    let mut again: Map<usize, String> = marked
        .into_iter()
        .filter_map(|k| {
            let s = line_at(text, &starts, k)?;
            match uncommented(s) {
                Some(u) => Some(untyped(&u).unwrap_or(u)),
                None => untyped(s),
            }
            .map(|r| (k, r))
        })
        .collect();
    let first = check(text, &again, table);
    if !matches!(first, Err((why, _)) if why == PYTHON_LINE) {
        return then(first);
    }
    let deep: Vec<(usize, String)> = split_lines(text)
        .enumerate()
        .filter(|(k, s)| !again.contains_key(k) && matches!(line(s), Line::Other))
        .filter_map(|(k, s)| shallow(s).map(|r| (k, r)))
        .collect();
    if deep.is_empty() {
        return then(first);
    }
    again.extend(deep);
    then(check(text, &again, table))
}

/// A computation of the last module, opened (Err: none, or the name is taken).
fn open<'a>(
    modules: &[Module<'a>],
    name: &'a str,
    entry: bool,
    (counting, digesting): (bool, bool),
    shapes: Map<&'a str, (&'a str, &'a str)>,
) -> Result<Comp<'a>, &'static str> {
    let module = modules.last().ok_or("a computation before HloModule")?;
    if module.names.contains(name) {
        return Err("a computation defined twice");
    }
    Ok(Comp {
        name,
        entry,
        shapes,
        count: 0,
        roots: 0,
        params: Set::default(),
        counts: counting.then(|| (Tally::default(), Vec::new())),
        structure: digesting.then(Structure::default),
    })
}

/// The map of a computation's names, made as large as the lines from its header `line` (a
/// slice of `text`) to the next line that starts with `}`: a 40,000-instruction
/// computation's map then never grows (rehashing was 7% of the pass).
fn room<'a>(text: &str, line: &str) -> Map<&'a str, (&'a str, &'a str)> {
    let from = (line.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    let rest = text.as_bytes().get(from..).unwrap_or_default();
    let end = memchr::memmem::find(rest, b"\n}").unwrap_or(rest.len());
    let lines = memchr::memchr_iter(b'\n', &rest[..end]).count();
    Map::with_capacity_and_hasher(lines.clamp(16, 1 << 21), Default::default())
}

/// A header without a signature, as a pre-optimization dump prints one (`region_0.1 {`,
/// `ENTRY main.5 {`; Python's `_COMP_HEAD`): (name without `%`, ENTRY), or None.
fn bare_header(t: &str) -> Option<(&str, bool)> {
    let head = t.strip_suffix('{')?.trim_end_matches([' ', '\t']);
    let (entry, name) = match head.strip_prefix("ENTRY") {
        Some(rest) if rest.starts_with([' ', '\t']) => (true, rest.trim_start_matches([' ', '\t'])),
        _ => (false, head),
    };
    let name = one_name(name)?;
    (!SECTIONS.contains(&name)).then_some((name, entry))
}

/// The checks of a whole text against Python's table, its lines read as they are except
/// those `again` holds rewritten, by index (`uncommented`, `untyped`). Err: why it gave up,
/// and the line it was reading (1-based).
pub fn check<'a>(
    text: &'a str,
    again: &'a Map<usize, String>,
    table: &Table,
) -> Result<Checked<'a>, (&'static str, usize)> {
    let mut at = 0;
    checked(text, again, table, &mut at).map_err(|why| (why, at))
}

fn checked<'a>(
    text: &'a str,
    again: &'a Map<usize, String>,
    table: &Table,
    at: &mut usize,
) -> Result<Checked<'a>, &'static str> {
    let mut modules: Vec<Module<'a>> = Vec::new();
    let mut comp: Option<Comp<'a>> = None;
    let mut signatures: Set<Signature<'a>> = Set::default();
    let mut decided: Set<Decided<'a>> = Set::default();

    let mut counted: Option<Counted<'a>> = table.count.then(Counted::default);
    let mut read_again: Vec<Rewritten<'a>> = Vec::new();
    for (k, raw) in split_lines(text).enumerate() {
        *at = k + 1;
        let rewritten = again.get(&k);
        let s: &'a str = rewritten.map_or(raw, String::as_str);
        let mut read = line(s);
        if matches!(read, Line::Other) && comp.is_some() && thread_close(s) {
            read = Line::Close; // (the attribute is the computation's: validate reads none)
        }
        match read {
            Line::Instruction(f) => {
                let c = comp
                    .as_mut()
                    .ok_or("an instruction outside a computation")?;
                let kind = table.classes.get(f.opcode).copied();
                let calls = match &f.calls {
                    Some(names) => names.clone(),
                    None => callees(f.attrs).ok_or("call keys Python reads")?,
                };
                if c.shapes.contains_key(f.name) {
                    return Err("a name defined twice");
                }
                let mut operand_shapes = Vec::with_capacity(f.operands.len());
                for o in &f.operands {
                    if o.contains('#') {
                        return Err("a tuple-element operand");
                    }
                    operand_shapes.push(c.shapes.get(o).ok_or("an operand not defined above")?.0);
                }
                let module = modules.last().ok_or("no module")?;
                if calls.iter().any(|k| !module.names.contains(k)) {
                    return Err("a call of a computation not defined before");
                }
                c.roots += usize::from(f.root);
                if c.roots > 1 {
                    return Err("two ROOTs");
                }
                if f.opcode == "parameter" {
                    let digits = f.literal.unwrap_or("").trim_matches([' ', '\t']);
                    if digits.is_empty() || !digits.bytes().all(|d| d.is_ascii_digit()) {
                        return Err("a parameter number Python reads");
                    }
                    let n: usize = digits.parse().map_err(|_| "a parameter number too large")?;
                    if !c.params.insert(n) {
                        return Err("a parameter number given twice");
                    }
                }
                if rewritten.is_some() {
                    read_again.push(Rewritten {
                        module: modules.len() - 1,
                        computation: module.comps.len(),
                        line: k + 1,
                        name: f.name,
                        opcode: f.opcode,
                        shape: f.shape,
                        operands: f.operands.clone(),
                        literal: f.literal,
                        root: f.root,
                        calls: calls.clone(),
                        operand_shapes: operand_shapes.clone(),
                        kind: (f.opcode == "fusion")
                            .then(|| crate::count::kind(f.attrs))
                            .flatten(),
                    });
                } else if kind.is_none() {
                    decided.insert(Decided {
                        opcode: f.opcode,
                        shape: f.shape,
                        operands: f
                            .operands
                            .iter()
                            .map(|o| (c.shapes[o].1, c.shapes[o].0))
                            .collect(),
                    });
                } else if kind == Some(Class::Value) {
                    signatures.insert(Signature {
                        opcode: f.opcode,
                        shape: f.shape,
                        attrs: items_of(f.attrs, &table.keys, &table.marks)
                            .ok_or("attributes not read")?,
                        literal: f.literal,
                        operand_shapes,
                    });
                }
                if let Some((tally, fused)) = c.counts.as_mut() {
                    let shapes: Vec<&'a str> = f.operands.iter().map(|o| c.shapes[o].0).collect();
                    let all = counted.as_mut().ok_or("no count")?;
                    let index = modules.last().map_or(0, |m| m.comps.len());
                    let groups = &mut all.modules.last_mut().ok_or("no module")?.building;
                    tally
                        .add(&f, k + 1, &shapes, groups, index)
                        .ok_or("a fusion kind Python reads")?;
                    if f.opcode == "fusion" {
                        fused.extend(calls.iter().copied());
                    }
                    all.shapes.insert(f.shape);
                    all.typed.extend(f.operand_shapes.iter().copied());
                    all.literals.extend(f.literal);
                }
                if let Some(st) = c.structure.as_mut() {
                    st.add(&f, &module.digests);
                }
                c.shapes.insert(f.name, (f.shape, f.opcode));
                c.count += 1;
            }
            Line::Header(h) => {
                if comp.is_some() || SECTIONS.contains(&h.name) {
                    return Err("a header Python reads");
                }
                let counting = counted.is_some();
                if let Some(all) = counted.as_mut() {
                    all.headers.push(k + 1);
                    all.shapes.extend(h.shapes.iter().copied());
                    all.shapes.insert(h.result);
                }
                comp = Some(open(
                    &modules,
                    h.name.trim_start_matches('%'),
                    h.entry,
                    (counting, table.structures),
                    room(text, raw),
                )?);
            }
            Line::Close => {
                let c = comp.take().ok_or("a closing brace outside a computation")?;
                if c.count == 0 {
                    return Err("an empty computation");
                }
                // numbers 0..n, each once (given twice was refused above), each below the count
                if c.params
                    .iter()
                    .any(|&p| p >= c.params.len() || p >= c.count)
                {
                    return Err("parameter numbers with a gap or out of range");
                }
                let module = modules.last_mut().ok_or("no module")?;
                module.entries += usize::from(c.entry);
                if module.entries > 1 {
                    return Err("two ENTRY computations");
                }
                module.names.insert(c.name);
                module.comps.push((c.name, c.entry, c.count));
                if let Some(st) = c.structure {
                    module.digests.insert(c.name, st.finish());
                }
                if let (Some(all), Some((tally, mut fused))) = (counted.as_mut(), c.counts) {
                    let m = all.modules.last_mut().ok_or("no module")?;
                    m.per_computation.push(tally);
                    m.fused.append(&mut fused);
                }
            }
            Line::Other => {
                let t =
                    s.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c));
                if t.is_empty() {
                    continue;
                }
                if comp.is_some() {
                    return Err(PYTHON_LINE);
                }
                let header = !s.starts_with("HloModule") && bare_header(t).is_some();
                if let (Some(all), false) = (counted.as_mut(), header) {
                    all.outside.push(k + 1); // (Python reads it: a module header, a table line)
                }
                if s.starts_with("HloModule") && whole(s) {
                    modules.push(Module::default());
                    if let Some(all) = counted.as_mut() {
                        all.modules.push(ModuleCount::default());
                    }
                } else if let Some((name, entry)) = bare_header(t) {
                    if let Some(all) = counted.as_mut() {
                        all.headers.push(k + 1);
                    }
                    let shapes = room(text, raw);
                    let asked = (counted.is_some(), table.structures);
                    comp = Some(open(&modules, name, entry, asked, shapes)?);
                } else if t.starts_with("HloModule") || t.ends_with('{') {
                    return Err("a header Python reads");
                }
                // (else a debug table's line: FileNames, StackFrames, ..., before or after
                // the computations; Python reads them into the module's tables)
            }
        }
    }
    if comp.is_some() {
        return Err("an unclosed computation");
    }
    if modules.is_empty() || modules.iter().any(|m| m.comps.is_empty()) {
        return Err("a module without computations");
    }
    let names: Vec<Vec<&'a str>> = modules
        .iter()
        .map(|m| m.comps.iter().map(|c| c.0).collect())
        .collect();
    // (each computation's digest, in order: names are unique within a module)
    let structures = if table.structures {
        let digest = |m: &Module<'a>, name| m.digests.get(name).copied().flatten();
        modules
            .iter()
            .map(|m| m.comps.iter().map(|c| digest(m, c.0)).collect())
            .collect()
    } else {
        Vec::new()
    };
    Ok(Checked {
        structures,
        modules: modules.into_iter().map(|m| m.comps).collect(),
        signatures: signatures.into_iter().collect(),
        decided: decided.into_iter().collect(),
        rewritten: read_again,
        counted: counted.map(|mut c| {
            for (m, names) in c.modules.iter_mut().zip(&names) {
                m.finish(names);
            }
            c
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table<'static> {
        let plain = ["parameter", "tuple", "fusion", "while"];
        let value = ["add", "constant", "get-tuple-element", "reduce"];
        Table {
            classes: plain
                .iter()
                .map(|&o| (o, Class::Plain))
                .chain(value.iter().map(|&o| (o, Class::Value)))
                .collect(),
            keys: ["dimensions", "index"].into_iter().collect(),
            marks: marks(&["dimensions", "index"]),
            count: true,
            structures: true,
        }
    }

    fn why(text: &str) -> Result<usize, &'static str> {
        check_text(text, &table(), |c| {
            c.map(|c| c.signatures.len()).map_err(|e| e.0)
        })
    }

    // hand-written minimal modules (syntax corners), not compiler output
    const OK: &str =
        "HloModule m, entry_computation_layout={(f32[2]{0}, /*index=1*/f32[])->f32[2]{0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b), metadata={op_name=\"x\"}
}

ENTRY %main (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  %c = f32[] constant(0)
  %r = f32[] reduce(%p, %c), dimensions={0}, to_apply=%add
  ROOT %q = f32[2]{0} add(%p, %p), metadata={op_name=\"y\"}
}

FileNames
1 \"a.py\"
";

    #[test]
    fn answers_for_a_module_it_models() {
        check_text(OK, &table(), |c| {
            let c = c.unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(c.modules, vec![vec![("add", false, 3), ("main", true, 4)]]);
            // add(f32[]) once, add(f32[2]) once (metadata left out), constant, reduce
            assert_eq!(c.signatures.len(), 4);
            let reduce = c.signatures.iter().find(|s| s.opcode == "reduce").unwrap();
            assert_eq!(reduce.attrs, vec![", dimensions={0}"]); // (the keys checks read)
            assert!(c.rewritten.is_empty());
        });
        // a commented line is read as Python reads it, and handed back for comparison
        let text = OK.replace("add(%p, %p)", "add(%p, /*index=1*/%p) // x");
        check_text(&text, &table(), |c| {
            let c = c.unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(c.signatures.len(), 3);
            let r = &c.rewritten[0];
            assert_eq!((r.module, r.computation, r.line, r.name), (0, 1, 13, "q"));
            assert_eq!((r.operands.clone(), r.root), (vec!["p", "p"], true));
        });
    }

    #[test]
    fn hands_unclassed_opcodes_to_python_with_their_operands() {
        let text = OK.replace("%c = f32[] constant(0)", "%c = f32[] negate(%p)");
        check_text(&text, &table(), |c| {
            let c = c.unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(c.decided.len(), 1);
            let d = &c.decided[0];
            let operands = vec![("parameter", "f32[2]{0}")];
            assert_eq!(
                (d.opcode, d.shape, d.operands.clone()),
                ("negate", "f32[]", operands)
            );
        });
    }

    #[test]
    fn cuts_deep_backend_configs_and_closes_on_an_execution_thread() {
        let long = r#"  %f = f32[] fusion(%p), backend_config={"a":[{"b":"}"}]}, metadata={x="}"}"#;
        let cut = r#"  %f = f32[] fusion(%p), backend_config={}, metadata={x="}"}"#;
        assert_eq!(shallow(long).as_deref(), Some(cut));
        assert_eq!(shallow("  %a = f32[] add(%b, %c)"), None);
        assert_eq!(
            shallow(r#"  %a = f32[] add(%b), backend_config={"a":"open"#),
            None
        );
        assert!(thread_close(r#"}, execution_thread="sparsecore""#));
        assert!(thread_close(r#"  } ,execution_thread="main"  "#));
        assert!(!thread_close(r#"}, execution_thread="a"b""#));
        assert!(!thread_close(r#"}, other="x""#));
        // a line nested deeper than the reader takes is handed back; the thread closes
        let deep = r#"  %d = f32[] add(%a, %b), backend_config={"a":{"b":{"c":[{"d":[1]}]}}}"#;
        assert!(matches!(line(deep), Line::Other));
        let root = "  ROOT %s = f32[] add(%a, %b), metadata={op_name=\"x\"}\n}";
        let text = OK.replace(root, &format!("{deep}\n{root}, execution_thread=\"s\""));
        check_text(&text, &table(), |c| {
            let c = c.unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(c.modules[0][0], ("add", false, 4));
            assert_eq!((c.rewritten.len(), c.rewritten[0].name), (1, "d"));
        });
    }

    #[test]
    fn takes_comments_out_as_python_does() {
        assert_eq!(uncommented("a /*x*/b // y").as_deref(), Some("a b "));
        assert_eq!(
            uncommented("a=\"/*s*/\" /**/").as_deref(),
            Some("a=\"/*s*/\" ")
        );
        assert_eq!(uncommented("a=\"//s\""), None); // (in a string only)
        assert_eq!(uncommented("a /* open"), None);
        assert_eq!(uncommented("a='x' /**/").as_deref(), Some("a=\"x\" "));
        assert_eq!(
            uncommented("m['a'=2,'b'=1]").as_deref(),
            Some("m[\"a\"=2,\"b\"=1]")
        );
        assert_eq!(uncommented("a='x\"' /**/"), None);
        assert_eq!(uncommented("a='open"), None);
        assert_eq!(uncommented("a=\"'\" /**/").as_deref(), Some("a=\"'\" "));
        assert_eq!(uncommented("a=\"'\""), None);
        assert_eq!(uncommented("a=\"open /**/"), None);
        assert_eq!(uncommented("plain"), None);
    }

    #[test]
    fn gives_up_on_what_it_does_not_model_or_what_fails() {
        let cases = [
            ("%c = f32[] constant(0)", "%c = f32[] add(%z, %p)"), // an undefined operand
            ("%c = f32[] constant(0)", "%p = f32[] constant(0)"), // a name given twice
            ("%c = f32[] constant(0)", "ROOT %c = f32[] constant(0)"), // two ROOTs
            ("%c = f32[] constant(0)", "%c = f32[] parameter(2)"), // a gap in the numbers
            ("%c = f32[] constant(0)", "%c = f32[] parameter(+1)"), // a number Python reads
            ("%c = f32[] constant(0)", "%c = f32[] add(%p#0, %p)"), // a tuple element
            ("%c = f32[] constant(0)", "  // a comment"),         // a line Python reads
            ("to_apply=%add", "to_apply=%nope"),                  // an unknown callee
            ("to_apply=%add", "to_apply={%add, %nope}"),          // a list naming an unknown one
            ("to_apply=%add", "to_apply={%add}, to_apply=%add"),  // a call key twice
            ("to_apply=%add", "to_apply=(%add)"),                 // call keys Python reads
            ("ENTRY %main", "ENTRY %add"),                        // a computation twice
            ("%add (a", "ENTRY %add (a"),                         // two ENTRYs
            ("HloModule m, entry", "HloModule m, (entry"),        // a header Python continues
            ("HloModule m, entry", "HloModule m, /*(*/ /*entry"), // an open comment
            ("\n\nENTRY", "\n%f (p: f32[]) -> f32[] {\n}\nENTRY"), // an empty computation
            ("\n\nENTRY", "\n%f (p: (f32[])) -> f32[] { // x\nENTRY"), // a header Python reads
            ("\n\nENTRY", "\n%f {\n}\nENTRY"),                    // an empty bare one
            (
                "\n\nENTRY",
                "\nENTRY g {\n  %x = f32[] parameter(0)\n}\nENTRY",
            ), // two ENTRYs
            ("\n\nENTRY", "\n%f x {\n}\nENTRY"),                  // a header Python reads
        ];
        for (from, to) in cases {
            assert!(OK.contains(from), "{from}");
            let text = OK.replacen(from, to, 1);
            assert!(why(&text).is_err(), "{to}");
        }
        assert!(why("").is_err() && why("HloModule m\n").is_err());
    }

    #[test]
    fn reads_callee_lists_and_debug_tables() {
        let text = OK.replace("to_apply=%add", "to_apply={%add}").replace(
            "HloModule m, entry_computation_layout={(f32[2]{0}, /*index=1*/f32[])->f32[2]{0}}",
            "HloModule m\nFileNames\n1 \"b.py\"\n",
        );
        assert_eq!(why(&text), Ok(4));
        assert_eq!(
            callees(", calls=%f, to_apply={%a, b.1}"),
            Some(vec!["a", "b.1", "f"])
        );
        assert_eq!(callees(", branch_computations={}"), Some(vec![]));
        assert_eq!(callees(", calls={%f, }"), None);
    }

    #[test]
    fn reads_tuple_typed_operands_by_their_names() {
        let s = "  %w = (s32[], f32[]) while((s32[], f32[2]{0}) %t), condition=%c, body=%b";
        assert_eq!(
            untyped(s).as_deref(),
            Some("  %w = (s32[], f32[]) while(t), condition=%c, body=%b")
        );
        let k = "  ROOT k = s32[11]{0} conditional(s32[] %p, () %t, (f32[]) %u), branch_computations={%a, %b}";
        assert_eq!(
            untyped(k).as_deref(),
            Some("  ROOT k = s32[11]{0} conditional(p, t, u), branch_computations={%a, %b}")
        );
        assert_eq!(untyped("  %a = f32[] add(f32[] %b, f32[] %c)"), None); // (no tuple)
        assert_eq!(untyped("  %c = c64[] constant((0, 1))"), None);
        assert_eq!(untyped("  %a = f32[] add((f32[]) %b %c)"), None);
        assert_eq!(untyped("  %w = (s32[]) while((s32[]) t)"), None); // (no `%`: Python's)
        let text = OK.replace("reduce(%p, %c)", "reduce(f32[2]{0} %p, (f32[]) %c)");
        check_text(&text, &table(), |c| {
            assert_eq!(c.unwrap().rewritten.len(), 1)
        });
    }

    #[test]
    fn reads_headers_without_signatures() {
        assert_eq!(bare_header("region_0.1 {"), Some(("region_0.1", false)));
        assert_eq!(bare_header("ENTRY\t%main.5{"), Some(("main.5", true)));
        assert_eq!(bare_header("ENTRY {"), Some(("ENTRY", false))); // (as Python's pattern)
        assert_eq!(bare_header("FileNames {"), None);
        assert_eq!(bare_header("a b {"), None);
        let text = OK.replace("ENTRY %main (p: f32[2]) -> f32[2] {", "ENTRY main {");
        assert_eq!(why(&text), Ok(4));
    }

    #[test]
    fn keeps_the_items_the_checks_read() {
        let keys = ["dimensions", "index"].into_iter().collect();
        let m = marks(&["dimensions", "index"]);
        let items = items_of(
            ", index=1, metadata={a=\", dimensions=\"}, dimensions={0,1} ",
            &keys,
            &m,
        );
        assert_eq!(items, Some(vec![", index=1", ", dimensions={0,1} "]));
        assert_eq!(items_of(", index=", &keys, &m), None); // (not items)
                                                           // no `key=` anywhere: none of its items, the list not read
        let none = ", metadata={op_name=\"index dimensions\"}";
        assert_eq!(items_of(none, &keys, &m), Some(vec![]));
    }
}
