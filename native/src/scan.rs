//! HLO text -> a compact module table, in one pass over the lines.
//!
//! What it reads is what XLA's printer writes: the `HloModule` header, computations
//! (`[ENTRY ]%name (params) -> shape {` ... `}`), one instruction per line
//! (`[ROOT ]%name = shape opcode(operands), attributes`), and the debug tables between them
//! (FileNames ... StackFrames), which it steps over. Every span is a byte range of the text;
//! opcodes are interned. A line it cannot read (an instruction written over several lines, an
//! unbalanced bracket) is listed in `misses`, never guessed: the caller then parses the file
//! with the full grammar, as it does for the Python scanner's misses.

use std::collections::HashMap;

pub type Span = (u32, u32);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Computation {
    pub name: Span,
    pub entry: bool,
    pub first: u32, // index of its first instruction
    pub end: u32,   // one past its last
}

#[derive(Debug, Default)]
pub struct Table {
    pub module: Span,
    pub computations: Vec<Computation>,
    pub names: Vec<Span>,
    pub opcodes: Vec<u16>,
    pub opcode_names: Vec<String>,
    pub shapes: Vec<Span>,
    pub operand_starts: Vec<u32>, // CSR: operands of instruction i are operand_spans[starts[i]..starts[i+1]]
    pub operand_spans: Vec<Span>,
    pub lines: Vec<u32>, // 1-based
    pub roots: Vec<bool>,
    pub misses: Vec<u32>, // 1-based lines not understood
}

impl Table {
    pub fn len(&self) -> usize {
        self.names.len()
    }
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
    pub fn operands(&self, i: usize) -> &[Span] {
        let a = self.operand_starts[i] as usize;
        let b = self.operand_starts[i + 1] as usize;
        &self.operand_spans[a..b]
    }
    /// Whether every name, shape and operand span lies inside a text of `len` bytes (what
    /// the fuzz tests hold every table to).
    pub fn spans_inside(&self, len: usize) -> bool {
        self.names
            .iter()
            .chain(&self.shapes)
            .chain(&self.operand_spans)
            .all(|&(a, b)| a <= b && b as usize <= len)
    }
}

/// Opcodes whose parentheses hold a literal (`constant(1)`, `parameter(0)`), not operands.
fn literal_opcode(op: &[u8]) -> bool {
    op == b"constant" || op == b"parameter"
}

/// The bytes of a name as the table reads it (`%` too): one lookup a byte.
const NAME_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-' || b == b'%';
        c += 1;
    }
    t
};

fn is_name_byte(c: u8) -> bool {
    NAME_BYTES[c as usize]
}

/// Index one past the bracket that closes the one at `at` (`(`, `[` or `{`), skipping
/// strings; None when the line ends first.
fn close(b: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut i = at;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
                if depth < 0 {
                    return None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The end of a shape written without spaces at the top level (`f32[2,3]{1,0:T(8,128)}`).
fn shape_end(b: &[u8], mut i: usize) -> Option<usize> {
    if i < b.len() && b[i] == b'(' {
        return close(b, i);
    }
    while i < b.len() && b[i] != b' ' {
        match b[i] {
            b'[' | b'{' | b'(' => i = close(b, i)?,
            _ => i += 1,
        }
    }
    Some(i)
}

struct Interner {
    ids: HashMap<Vec<u8>, u16>,
}

pub fn scan(text: &str) -> Table {
    let b = text.as_bytes();
    let mut t = Table::default();
    let mut interner = Interner {
        ids: HashMap::new(),
    };
    let mut open: Option<Computation> = None;
    let mut more = More::default(); // (an instruction's attributes continued on the next lines)
    let mut line_no = 0u32;
    let mut start = 0usize;
    t.operand_starts.push(0);
    while start <= b.len() {
        let end = memchr::memchr(b'\n', &b[start..]).map_or(b.len(), |k| start + k);
        line_no += 1;
        let mut line_end = end;
        if line_end > start && b[line_end - 1] == b'\r' {
            line_end -= 1;
        }
        if more.pending() {
            more.feed(&b[start..line_end]);
        } else {
            read_line(
                b,
                start,
                line_end,
                line_no,
                &mut t,
                &mut interner,
                &mut open,
                &mut more,
            );
        }
        if end == b.len() {
            break;
        }
        start = end + 1;
    }
    if let Some(c) = open.take() {
        // (a computation the text never closes)
        t.misses.push(line_no);
        close_computation(&mut t, c);
    }
    if !t.computations.iter().any(|c| c.entry) {
        if let Some(last) = t.computations.last_mut() {
            last.entry = true; // (as XLA's parser: with no ENTRY, the last computation is it)
        }
    }
    t
}

/// A computation's end; with no instruction marked ROOT, its last one is (as XLA reads it).
fn close_computation(t: &mut Table, c: Computation) {
    let end = t.names.len() as u32;
    if end > c.first && !t.roots[c.first as usize..end as usize].iter().any(|&r| r) {
        t.roots[end as usize - 1] = true;
    }
    t.computations.push(Computation { end, ..c });
}

/// Bracket depth and trailing comma of an instruction's attribute list: while either says
/// it goes on, the next lines are its continuation (XLA's printer breaks long backend
/// configs; XLA's own tests write attributes one per line).
#[derive(Default)]
struct More {
    depth: i64,
    comma: bool,
    in_string: bool,
}

impl More {
    fn pending(&self) -> bool {
        self.depth > 0 || self.comma || self.in_string
    }
    fn feed(&mut self, line: &[u8]) {
        let mut i = 0;
        while i < line.len() {
            let c = line[i];
            if self.in_string {
                if c == b'\\' {
                    i += 1;
                } else if c == b'"' {
                    self.in_string = false;
                }
            } else {
                match c {
                    b'"' => self.in_string = true,
                    b'(' | b'[' | b'{' => self.depth += 1,
                    b')' | b']' | b'}' => self.depth -= 1,
                    _ => {}
                }
            }
            i += 1;
        }
        if self.depth < 0 {
            self.depth = 0;
        }
        let trimmed = line
            .iter()
            .rposition(|&c| c != b' ' && c != b'\t')
            .map(|k| &line[..=k]);
        self.comma = !self.in_string && trimmed.is_some_and(|l| l.ends_with(b","));
    }
}

#[allow(clippy::too_many_arguments)]
fn read_line(
    b: &[u8],
    start: usize,
    end: usize,
    line_no: u32,
    t: &mut Table,
    interner: &mut Interner,
    open: &mut Option<Computation>,
    more: &mut More,
) {
    let mut i = start;
    while i < end && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    if i == end || b[i..end].starts_with(b"//") {
        return;
    }
    let line = &b[i..end];
    if open.is_some() {
        if line[0] == b'}' {
            // (`}`, `} // comment`, or `}, execution_thread="..."` after an async computation)
            let c = open.take().unwrap();
            close_computation(t, c);
            return;
        }
        match instruction(b, i, end, line_no, t, interner) {
            Some(rest) => more.feed(&b[rest..end]),
            None => t.misses.push(line_no),
        }
        return;
    }
    if line.starts_with(b"HloModule ") {
        let mut a = i + "HloModule ".len();
        while a < end && b[a] == b' ' {
            a += 1;
        }
        let mut z = a;
        while z < end && is_name_byte(b[z]) {
            z += 1;
        }
        t.module = (a as u32, z as u32);
        return;
    }
    if line[0].is_ascii_digit()
        || matches!(
            line,
            b"FileNames" | b"FunctionNames" | b"FileLocations" | b"StackFrames"
        )
    {
        return; // (a debug table and its rows)
    }
    if line.ends_with(b"{") {
        let mut a = i;
        let entry = line.starts_with(b"ENTRY ");
        if entry {
            a += "ENTRY ".len();
            while a < end && b[a] == b' ' {
                a += 1;
            }
        }
        if a < end && b[a] == b'%' {
            a += 1;
        }
        let mut z = a;
        while z < end && is_name_byte(b[z]) {
            z += 1;
        }
        if z == a {
            t.misses.push(line_no);
            return;
        }
        *open = Some(Computation {
            name: (a as u32, z as u32),
            entry,
            first: t.names.len() as u32,
            end: 0,
        });
        return;
    }
    t.misses.push(line_no);
}

/// One instruction line: where its attributes start when read, None (nothing recorded) when not.
fn instruction(
    b: &[u8],
    mut i: usize,
    end: usize,
    line_no: u32,
    t: &mut Table,
    interner: &mut Interner,
) -> Option<usize> {
    let root = b[i..end].starts_with(b"ROOT ");
    if root {
        i += 5;
        while i < end && b[i] == b' ' {
            i += 1;
        }
    }
    if i < end && b[i] == b'%' {
        i += 1;
    }
    let name_start = i;
    while i < end && is_name_byte(b[i]) {
        i += 1;
    }
    let name_end = i;
    if name_end == name_start {
        return None;
    }
    while i < end && b[i] == b' ' {
        i += 1;
    }
    if i >= end || b[i] != b'=' {
        return None;
    }
    i += 1;
    while i < end && b[i] == b' ' {
        i += 1;
    }
    let shape_start = i;
    let shape_stop = match shape_end(&b[..end], i) {
        Some(z) if z > shape_start => z,
        _ => return None,
    };
    i = shape_stop;
    while i < end && b[i] == b' ' {
        i += 1;
    }
    let op_start = i;
    while i < end && is_name_byte(b[i]) && b[i] != b'%' {
        i += 1;
    }
    let op_end = i;
    if op_end == op_start || i >= end || b[i] != b'(' {
        return None;
    }
    let args_end = close(&b[..end], i)?;
    let opcode = &b[op_start..op_end];
    let before = t.operand_spans.len();
    if !literal_opcode(opcode) {
        operands(b, i + 1, args_end - 1, &mut t.operand_spans);
    }
    if t.operand_spans.len() > u32::MAX as usize || before > u32::MAX as usize {
        return None;
    }
    let id = match interner.ids.get(opcode) {
        Some(&id) => id,
        None => {
            let id = t.opcode_names.len() as u16;
            interner.ids.insert(opcode.to_vec(), id);
            t.opcode_names
                .push(String::from_utf8_lossy(opcode).into_owned());
            id
        }
    };
    t.names.push((name_start as u32, name_end as u32));
    t.opcodes.push(id);
    t.shapes.push((shape_start as u32, shape_stop as u32));
    t.operand_starts.push(t.operand_spans.len() as u32);
    t.lines.push(line_no);
    t.roots.push(root);
    Some(args_end)
}

/// The operand names between a call's parentheses: each top-level item's last word (an
/// operand may be printed with its shape first: `f32[2]{0} %p`), without its `%`.
fn operands(b: &[u8], a: usize, z: usize, out: &mut Vec<Span>) {
    let mut item = a;
    let mut i = a;
    while i <= z {
        if i == z || b[i] == b',' {
            let mut e = i;
            while e > item && b[e - 1] == b' ' {
                e -= 1;
            }
            let mut s = e;
            while s > item && is_name_byte(b[s - 1]) {
                s -= 1;
            }
            if s < e && b[s] == b'%' {
                s += 1;
            }
            if s < e {
                out.push((s as u32, e as u32));
            }
            item = i + 1;
            i += 1;
            continue;
        }
        match b[i] {
            b'(' | b'[' | b'{' => match close(&b[..z], i) {
                Some(k) => i = k,
                None => return,
            },
            _ => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "HloModule m, is_scheduled=true\n\n\
%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %z = f32[] add(%x, %y)\n}\n\n\
ENTRY %main (p: f32[8,4]) -> (f32[8], f32[8,4]) {\n  %p = f32[8,4]{1,0} parameter(0)\n  %c = f32[] constant(0)\n  %r = f32[8]{0} reduce(f32[8,4]{1,0} %p, %c), dimensions={1}, to_apply=%add, metadata={op_name=\"a(b)\"}\n  ROOT %t = (f32[8]{0}, f32[8,4]{1,0}) tuple(%r, %p)\n}\n";

    fn s(t: &str, sp: Span) -> &str {
        &t[sp.0 as usize..sp.1 as usize]
    }

    #[test]
    fn reads_a_module() {
        let t = scan(TEXT);
        assert_eq!(s(TEXT, t.module), "m");
        assert!(t.misses.is_empty(), "{:?}", t.misses);
        assert_eq!(t.computations.len(), 2);
        assert_eq!(s(TEXT, t.computations[1].name), "main");
        assert!(t.computations[1].entry);
        assert_eq!(t.len(), 7);
        let names: Vec<&str> = t.names.iter().map(|&n| s(TEXT, n)).collect();
        assert_eq!(names, ["x", "y", "z", "p", "c", "r", "t"]);
        let r = 5;
        assert_eq!(t.opcode_names[t.opcodes[r] as usize], "reduce");
        assert_eq!(s(TEXT, t.shapes[r]), "f32[8]{0}");
        let ops: Vec<&str> = t.operands(r).iter().map(|&o| s(TEXT, o)).collect();
        assert_eq!(ops, ["p", "c"]);
        assert_eq!(s(TEXT, t.shapes[6]), "(f32[8]{0}, f32[8,4]{1,0})");
        assert!(t.roots[6] && !t.roots[5]);
        assert!(t.operands(3).is_empty()); // (parameter(0) holds a literal)
        assert_eq!(t.lines[0], 4);
    }

    #[test]
    fn unbalanced_lines_are_misses_not_guesses() {
        let text = "HloModule m\nENTRY %e {\n  %a = f32[2 parameter(0)\n  ROOT %b = f32[2]{0} negate(%a\n}\n";
        let t = scan(text);
        assert_eq!(t.misses, vec![3, 4]);
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn continued_attributes_and_closers_with_text() {
        let text = "HloModule m\n%c (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0)\n}, execution_thread=\"x\"\n\nENTRY %e {\n  %p = f32[2]{0} parameter(0)\n  ROOT %r = f32[2]{0} fusion(%p), kind=kCustom,\n    calls=%c,\n    backend_config={\"a\":\n      \"}\"}\n} // e\n";
        let t = scan(text);
        assert!(t.misses.is_empty(), "{:?}", t.misses);
        assert_eq!(t.computations.len(), 2);
        assert_eq!(t.len(), 3);
        assert_eq!(s(text, t.operands(2)[0]), "p");
    }

    /// A deterministic fuzz smoke: 20,000 mutations of a real-looking module (bytes deleted,
    /// duplicated, swapped for brackets, quotes, newlines), each scanned; none may panic, and
    /// every span must lie inside the text. `cargo fuzz` would go further; this runs in
    /// `cargo test`.
    #[test]
    fn mutations_never_panic() {
        let base = TEXT.as_bytes();
        let mut seed = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let alphabet = b"(){}[]\",%= \n\\/ROOTENTRY0";
        for _ in 0..20_000 {
            let mut v = base.to_vec();
            for _ in 0..(1 + next() % 4) {
                let at = (next() % v.len() as u64) as usize;
                match next() % 3 {
                    0 => {
                        v.remove(at);
                    }
                    1 => v.insert(at, alphabet[(next() % alphabet.len() as u64) as usize]),
                    _ => v[at] = alphabet[(next() % alphabet.len() as u64) as usize],
                }
                if v.is_empty() {
                    break;
                }
            }
            let text = String::from_utf8_lossy(&v).into_owned();
            let t = scan(&text);
            assert!(t.spans_inside(text.len()));
            assert_eq!(t.operand_starts.len(), t.len() + 1);
        }
    }

    #[test]
    fn any_bytes_never_panic() {
        for text in [
            "",
            "}",
            "{",
            "HloModule",
            "ENTRY {",
            "x = (",
            "\"",
            "ENTRY %e {\n ROOT %r = f32[] a(\"\\\n",
        ] {
            let _ = scan(text);
        }
    }
}
