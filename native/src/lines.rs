//! The parser's fast route, line by line: each instruction line that hloscope's whole-line
//! pattern (`hloscope/parser/fast/patterns.py`, `LINE`) would take, split into the fields the
//! Python scanner builds an `Instruction` from; every other line (headers, closing braces,
//! debug tables, comments, continued or unusual lines) is left to the Python line scanner.
//!
//! The rule is "never take a line `LINE` would not": names are `[A-Za-z_][A-Za-z0-9_.-]*`,
//! operands plain names, each with any `#i` tuple-element suffixes (`%x#0`, as newer XLA
//! prints), or all typed as older and CPU dumps print them (`f32[2]{0} %a, s32[] %b`: array
//! shapes only, a tuple-typed operand goes to Python), literals only for constant/parameter,
//! the attribute list `, key=value` items whose values pair their brackets within the depths
//! `LINE` allows (three levels of any kind, or the JSON form of backend configs: `{` then up
//! to seven more of `[{`, `[{`, `[{`, `[{`, `{`, `[`, `{`), strings closed on the line, no
//! blank before a `key=` at a value's top level, and no `/`, `'` or control character
//! outside strings. A line that passes is one `LINE` takes with the same groups, so the
//! Python scanner builds the same IR from these fields.

pub enum Line<'a> {
    Other,
    Instruction(Fields<'a>),
    /// A computation header as `LINE`'s header group takes it.
    Header(Header<'a>),
    /// `}` at the start of the line, blanks after: a computation's end.
    Close,
}

pub struct Header<'a> {
    pub entry: bool,
    pub name: &'a str,   // with its `%`, as LINE's group holds it
    pub params: &'a str, // the text between the parentheses
    pub result: &'a str,
    /// The parameters' shape texts, as PARAM_ITEM reads them from `params`.
    pub shapes: Vec<&'a str>,
    /// The parameters' names (no `%`), as PARAM_ITEM reads them.
    pub names: Vec<&'a str>,
}

pub struct Fields<'a> {
    pub indent: usize,
    pub root: bool,
    pub name: &'a str,
    pub shape: &'a str,
    pub opcode: &'a str,
    pub operands: Vec<&'a str>,       // without `%`
    pub operand_shapes: Vec<&'a str>, // of typed operands (`f32[2]{0} %a`), else empty
    pub literal: Option<&'a str>,     // the text inside constant(...) / parameter(...)
    pub attrs: &'a str, // from the first `,` after the operands to the end of the line, or ""
    /// The computations its call keys name (`calls=%f`), in CALL_KEYS order; None when one
    /// is not a plain name, or a key is given twice (Python reads them then).
    pub calls: Option<Vec<&'a str>>,
}

const JSON_LEVELS: [&[u8]; 7] = [b"[{", b"[{", b"[{", b"[{", b"{", b"[", b"{"];

fn name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// The bytes a name goes on with: ASCII letters and digits, `_`, `.`, `-` (one lookup a
/// byte: names are most of a line's bytes after its metadata).
const NAME_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-';
        c += 1;
    }
    t
};

fn name_byte(c: u8) -> bool {
    NAME_BYTES[c as usize]
}

fn control(c: u8) -> bool {
    c < 0x09 || (0x0b..=0x1f).contains(&c) || c == 0x7f
}

/// The bytes `group` and `value` stop at (brackets, quotes, `/`, control characters, and
/// for `value` its `,` and blanks): every other byte is passed over in one tight loop.
const fn stops(extra: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b < 0x09 || (b >= 0x0b && b <= 0x1f) || b == 0x7f;
        c += 1;
    }
    let always = b"\"()[]{}/'";
    let mut k = 0;
    while k < always.len() {
        t[always[k] as usize] = true;
        k += 1;
    }
    let mut k = 0;
    while k < extra.len() {
        t[extra[k] as usize] = true;
        k += 1;
    }
    t
}

const GROUP_STOPS: [bool; 256] = stops(b"");
const VALUE_STOPS: [bool; 256] = stops(b", \t");

/// The first byte at or after `i` that `table` stops at (or the end).
fn skip(b: &[u8], mut i: usize, table: &[bool; 256]) -> usize {
    while i < b.len() && !table[b[i] as usize] {
        i += 1;
    }
    i
}

/// A name at `i`: its end.
pub(crate) fn name(b: &[u8], i: usize) -> Option<usize> {
    if i < b.len() && name_start(b[i]) {
        let mut j = i + 1;
        while j < b.len() && name_byte(b[j]) {
            j += 1;
        }
        Some(j)
    } else {
        None
    }
}

pub(crate) fn blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

/// A string `"..."` at `i` (escapes; not past the line): its end.
pub(crate) fn string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        i += memchr::memchr2(b'"', b'\\', &b[i..])?;
        match b[i] {
            b'"' => return Some(i + 1),
            b'\\' => {
                if i + 1 >= b.len() {
                    return None;
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    None
}

fn closer(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        _ => b'}',
    }
}

/// A bracketed group at `i` whose nesting `LINE` accepts (any nesting, where `deep`): its end.
fn group(b: &[u8], i: usize, deep: bool) -> Option<usize> {
    let top = b[i];
    let mut stack = vec![top];
    let (mut deepest, mut json) = (1usize, top == b'{');
    let mut j = i + 1;
    while j < b.len() {
        j = skip(b, j, &GROUP_STOPS);
        if j >= b.len() {
            break;
        }
        let c = b[j];
        match c {
            b'"' => {
                j = string(b, j)?;
                continue;
            }
            b'(' | b'[' | b'{' => {
                stack.push(c);
                let depth = stack.len();
                deepest = deepest.max(depth);
                if depth > 8 || depth >= 2 && !JSON_LEVELS[depth - 2].contains(&c) {
                    json = false;
                }
            }
            b')' | b']' | b'}' => {
                let open = stack.pop()?;
                if closer(open) != c {
                    return None;
                }
                if stack.is_empty() {
                    return (deep || deepest <= 3 || json).then_some(j + 1);
                }
            }
            b'/' | b'\'' => return None,
            _ if control(c) => return None,
            _ => {}
        }
        j += 1;
    }
    None
}

/// One attribute value at `i` (`LINE`'s `_VALUE`): its end, at a top-level `,` or the line's.
fn value(b: &[u8], mut i: usize, deep: bool) -> Option<usize> {
    let start = i;
    while i < b.len() {
        i = skip(b, i, &VALUE_STOPS);
        if i >= b.len() {
            break;
        }
        match b[i] {
            b',' => break,
            b' ' | b'\t' => {
                let after = blanks(b, i);
                // (a blank before `key=` is a lost comma: not one value)
                let mut k = after;
                if k < b.len() && b[k] == b'%' {
                    k += 1;
                }
                if let Some(e) = name(b, k) {
                    if blanks(b, e) < b.len() && b[blanks(b, e)] == b'=' {
                        return None;
                    }
                }
                i = after;
            }
            b'"' => i = string(b, i)?,
            b'(' | b'[' | b'{' => i = group(b, i, deep)?,
            b')' | b']' | b'}' | b'/' | b'\'' => return None,
            c if control(c) => return None,
            _ => i += 1,
        }
    }
    (i > start).then_some(i)
}

/// The attribute keys whose values name called computations, in `hloscope.ir.instruction`'s
/// CALL_KEYS order (the order `called_computations` lists them in).
pub const CALL_KEYS: [&str; 10] = [
    "to_apply",
    "calls",
    "condition",
    "body",
    "branch_computations",
    "called_computations",
    "true_computation",
    "false_computation",
    "select",
    "scatter",
];

/// Each `, key=value` item to the end of the line, in order: `f(the item's comma, key, its
/// value)`. None when they are not such items.
pub fn each_item<'a>(s: &'a str, i: usize, f: impl FnMut(usize, &'a str, &'a str)) -> Option<()> {
    each_item_at(s, i, false, f)
}

/// `each_item`, where `deep`: brackets nested to any depth inside a value (a module
/// header's `entry_computation_layout={(f32[8]{0:T(8)}, ...)->...}`), which the whole-line
/// pattern of an instruction does not take.
fn each_item_at<'a>(
    s: &'a str,
    mut i: usize,
    deep: bool,
    mut f: impl FnMut(usize, &'a str, &'a str),
) -> Option<()> {
    let b = s.as_bytes();
    while i < b.len() {
        if b[i] != b',' {
            return None;
        }
        let comma = i;
        i = blanks(b, i + 1);
        let key_at = i;
        let e = name(b, i)?;
        if e >= b.len() || b[e] != b'=' {
            return None;
        }
        let end = value(b, e + 1, deep)?;
        f(comma, &s[key_at..e], &s[e + 1..end]);
        i = end;
    }
    Some(())
}

/// Every `, key=value` item of an attribute list (as `each_item` reads them), trailing blanks
/// trimmed, in order; None when they are not such items.
pub fn items(s: &str) -> Option<Vec<(&str, &str)>> {
    items_at(s, false)
}

/// `items` with values nested to any depth (`each_item_at`'s `deep`): a module header's
/// attributes, or those of a line the line scanner reads.
pub fn items_deep(s: &str) -> Option<Vec<(&str, &str)>> {
    items_at(s, true)
}

fn items_at(s: &str, deep: bool) -> Option<Vec<(&str, &str)>> {
    let mut out = Vec::new();
    each_item_at(s, 0, deep, |_, k, v| {
        out.push((k, v.trim_end_matches([' ', '\t'])))
    })?;
    Some(out)
}

/// The value of `key` among an attribute list's `, key=value` items (as `each_item` reads
/// them), for `Instruction.raw_attr`: `Some(Some(value))`, trailing blanks trimmed, when the
/// key is given once; `Some(None)` when it is not given; `None` when Python reads it: not
/// such items, the key given twice (Python keeps the last), or `replica_groups=mesh[...]`
/// followed by its `device_ids=` item (one value, which Python joins).
pub fn item_value<'a>(s: &'a str, key: &str) -> Option<Option<&'a str>> {
    let mut found: Option<&'a str> = None;
    let (mut twice, mut mesh, mut after_groups) = (false, false, false);
    each_item(s, 0, |_, k, v| {
        if after_groups && k == "device_ids" {
            mesh = true;
        }
        after_groups = false;
        if k == key {
            twice |= found.is_some();
            found = Some(v.trim_end_matches([' ', '\t']));
            after_groups = key == "replica_groups";
        }
    })?;
    (!twice && !mesh).then_some(found)
}

/// `, key=value` items to the end of the line: None when they are not; else the names the
/// call keys among them give, in CALL_KEYS order, or Err(()) when that is not plain to read
/// here (a value not one `%?name`, or a call key given twice): Python reads them then.
fn attributes(s: &str, i: usize) -> Option<Result<Vec<&str>, ()>> {
    let mut calls: Vec<(usize, &str)> = Vec::new();
    let mut plain = true;
    each_item(s, i, |_, key, v| {
        if let Some(k) = CALL_KEYS.iter().position(|&c| c == key) {
            let v = v.trim_end_matches([' ', '\t']);
            let at = usize::from(v.starts_with('%'));
            if name(v.as_bytes(), at) == Some(v.len()) && !calls.iter().any(|c| c.0 == k) {
                calls.push((k, &v[at..]));
            } else {
                plain = false;
            }
        }
    })?;
    calls.sort_by_key(|c| c.0);
    Some(if plain {
        Ok(calls.into_iter().map(|c| c.1).collect())
    } else {
        Err(())
    })
}

/// An array shape `LINE` takes (`[a-z][a-z0-9]*\[...\]({...})?`, no nested braces) or a
/// tuple shape (parentheses nested at most three deep): its end.
pub(crate) fn shape(b: &[u8], i: usize) -> Option<usize> {
    if i >= b.len() {
        return None;
    }
    if b[i] == b'(' {
        let mut depth = 0;
        let mut j = i;
        while j < b.len() {
            match b[j] {
                b'(' => {
                    depth += 1;
                    if depth > 3 {
                        return None;
                    }
                }
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j + 1);
                    }
                }
                b'/' | b'\n' => return None,
                _ => {}
            }
            j += 1;
        }
        return None;
    }
    if !b[i].is_ascii_lowercase() {
        return None;
    }
    let mut j = i + 1;
    while j < b.len() && (b[j].is_ascii_lowercase() || b[j].is_ascii_digit()) {
        j += 1;
    }
    if j >= b.len() || b[j] != b'[' {
        return None;
    }
    while j < b.len() && b[j] != b']' {
        if b[j] == b'/' {
            return None;
        }
        j += 1;
    }
    if j >= b.len() {
        return None;
    }
    j += 1;
    if j < b.len() && b[j] == b'{' {
        while j < b.len() && b[j] != b'}' {
            if b[j] == b'{' && b[j - 1] != b']' || b[j] == b'/' {
                return None;
            }
            j += 1;
        }
        if j >= b.len() {
            return None;
        }
        j += 1;
    }
    Some(j)
}

/// The text's lines, as `text.split('\n')` gives them (a last empty one after a final
/// newline), found with `memchr`.
pub fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    let mut start = 0;
    ends.map(move |end| {
        let piece = &text[start..end];
        start = end + 1;
        piece
    })
}

/// Where each of the text's lines (as `split_lines` cuts them) starts.
pub fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
        .collect()
}

/// Line `k` (from 0) of a text whose line starts are `starts`, or None past its end.
pub fn line_at<'a>(text: &'a str, starts: &[usize], k: usize) -> Option<&'a str> {
    let at = *starts.get(k)?;
    let end = starts.get(k + 1).map_or(text.len(), |e| e - 1);
    Some(&text[at..end])
}

/// `s` with its comments taken out exactly as Python's `strip_comments` takes them
/// (`/*...*/` and `//...` outside double- and single-quoted strings, the strings kept as they
/// are), or None when there is none to take out, or the line holds what this does not model
/// (a string or a `/*` left open: Python decides those).
pub fn strip_comments(s: &str) -> Option<String> {
    rewrite(s, false)
}

/// `strip_comments`, and with `quotes` each single-quoted string written with double quotes
/// (`mesh['axis_0'=2]`, for the checks' reader: `check::uncommented`): None when nothing is
/// taken out or rewritten, or the line holds what this does not model (a string or `/*`
/// left open, with `quotes` a quote or backslash inside a single-quoted string).
pub(crate) fn rewrite(s: &str, quotes: bool) -> Option<String> {
    let b = s.as_bytes();
    let slash =
        memchr::memmem::find(b, b"/*").is_some() || memchr::memmem::find(b, b"//").is_some();
    if !(slash || quotes && memchr::memchr(b'\'', b).is_some()) {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let (mut i, mut kept, mut cut) = (0, 0, false);
    while i < b.len() {
        match b[i] {
            b'\'' if quotes => {
                let inner = &s[i + 1..i + 1 + s[i + 1..].find('\'')?];
                if inner.contains(['"', '\\']) {
                    return None;
                }
                out.push_str(&s[kept..i]);
                out.push('"');
                out.push_str(inner);
                out.push('"');
                i += inner.len() + 2;
                (kept, cut) = (i, true);
            }
            q @ (b'"' | b'\'') => {
                let mut j = i + 1;
                while j < b.len() && b[j] != q {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                if j >= b.len() {
                    return None;
                }
                i = j + 1;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = i + 2 + memchr::memmem::find(&b[i + 2..], b"*/")? + 2;
                out.push_str(&s[kept..i]);
                (i, kept, cut) = (end, end, true);
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push_str(&s[kept..i]);
                return Some(out);
            }
            _ => i += 1,
        }
    }
    out.push_str(&s[kept..]);
    cut.then_some(out) // (comment marks or quotes inside strings only: the line as it is)
}

/// A line `line` leaves to Python because of its comments, read with them taken out
/// (`strip_comments`), as Python's line scanner reads it: an instruction line `LINE` takes,
/// or a computation header `HEADER` takes, with no control character anywhere (the line
/// scanner leaves those to the grammar); None otherwise (Python reads the line).
/// (Python's line scanner reads an instruction's shape and operands by pairing brackets: a
/// line whose brackets do not pair, outside strings, it reads otherwise than `LINE`.)
pub fn uncommented(stripped: &str) -> Option<Line<'_>> {
    if stripped.bytes().any(control) {
        return None;
    }
    match line(stripped) {
        l @ Line::Instruction(_) if paired(stripped.as_bytes()) => Some(l),
        l @ Line::Header(_) => Some(l), // (as `HEADER` alone takes it: no pairing read)
        _ => None,
    }
}

/// Every bracket outside double-quoted strings closed by its own kind, in order.
fn paired(b: &[u8]) -> bool {
    let mut open: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => match string(b, i) {
                Some(end) => {
                    i = end;
                    continue;
                }
                None => return false,
            },
            c @ (b'(' | b'[' | b'{') => open.push(closer(c)),
            c @ (b')' | b']' | b'}') if open.pop() != Some(c) => return false,
            _ => {}
        }
        i += 1;
    }
    open.is_empty()
}

/// One line (no newline).
pub fn line(s: &str) -> Line<'_> {
    if let Some(f) = fields(s) {
        return Line::Instruction(f);
    }
    let b = s.as_bytes();
    if b.first() == Some(&b'}') && blanks(b, 1) == b.len() {
        return Line::Close;
    }
    match header(s) {
        Some(h) => Line::Header(h),
        None => Line::Other,
    }
}

/// A computation header exactly as `LINE` takes it (`HEADER`): `[ENTRY ]%?name(p: shape, ...)
/// -> shape {`, blanks where the pattern allows them and nowhere else.
fn header(s: &str) -> Option<Header<'_>> {
    let b = s.as_bytes();
    let mut i = blanks(b, 0);
    let mut entry = false;
    if b[i..].starts_with(b"ENTRY") && i + 5 < b.len() && (b[i + 5] == b' ' || b[i + 5] == b'\t') {
        let j = blanks(b, i + 5);
        if j < b.len() && (b[j] == b'%' || name_start(b[j])) {
            entry = true;
            i = j;
        }
    }
    let name_at = i;
    if i < b.len() && b[i] == b'%' {
        i += 1;
    }
    i = name(b, i)?;
    let name_end = i;
    i = blanks(b, i);
    if i >= b.len() || b[i] != b'(' {
        return None;
    }
    let params_at = i + 1;
    let mut j = params_at;
    let (mut shapes, mut names) = (Vec::new(), Vec::new());
    if j < b.len() && b[j] != b')' {
        loop {
            j = blanks(b, j);
            if j < b.len() && b[j] == b'%' {
                j += 1;
            }
            let name_end = name(b, j)?;
            names.push(&s[j..name_end]);
            j = blanks(b, name_end);
            if j >= b.len() || b[j] != b':' {
                return None;
            }
            let at = blanks(b, j + 1);
            let end = shape(b, at)?;
            shapes.push(&s[at..end]);
            j = blanks(b, end);
            match b.get(j) {
                Some(b',') => j += 1,
                Some(b')') => break,
                _ => return None,
            }
        }
    }
    if j >= b.len() {
        return None;
    }
    let params_end = j;
    i = blanks(b, j + 1);
    if !b[i..].starts_with(b"->") {
        return None;
    }
    let result_at = blanks(b, i + 2);
    let result_end = shape(b, result_at)?;
    i = blanks(b, result_end);
    if i >= b.len() || b[i] != b'{' || blanks(b, i + 1) != b.len() {
        return None;
    }
    Some(Header {
        entry,
        name: &s[name_at..name_end],
        params: &s[params_at..params_end],
        result: &s[result_at..result_end],
        shapes,
        names,
    })
}

fn fields(s: &str) -> Option<Fields<'_>> {
    let b = s.as_bytes();
    let indent = blanks(b, 0);
    let mut i = indent;
    let mut root = false;
    if b[i..].starts_with(b"ROOT") && i + 4 < b.len() && (b[i + 4] == b' ' || b[i + 4] == b'\t') {
        root = true;
        i = blanks(b, i + 4);
    }
    if i < b.len() && b[i] == b'%' {
        i += 1;
    }
    let name_at = i;
    i = name(b, i)?;
    let name_end = i;
    i = blanks(b, i);
    if i >= b.len() || b[i] != b'=' {
        return None;
    }
    i = blanks(b, i + 1);
    let shape_at = i;
    i = shape(b, i)?;
    let shape_end = i;
    let after = blanks(b, i);
    if after == i {
        return None;
    }
    let op_at = after;
    let op_end = name(b, op_at)?;
    if op_end >= b.len() || b[op_end] != b'(' {
        return None;
    }
    let opcode = &s[op_at..op_end];
    let literal_op = opcode == "constant" || opcode == "parameter";
    // the operands: up to the first `)` (LINE's groups hold no parenthesis)
    let inner_at = op_end + 1;
    let mut k = inner_at;
    while k < b.len() && b[k] != b')' {
        if b[k] == b'(' || b[k] == b'/' || b[k] == b'\n' || control(b[k]) {
            return None;
        }
        k += 1;
    }
    if k >= b.len() {
        return None;
    }
    let inner = &s[inner_at..k];
    let mut operands = Vec::new();
    let mut operand_shapes = Vec::new();
    let mut literal = None;
    if literal_op {
        if inner.contains('[') {
            return None; // (a typed operand in LINE's eyes, or a form the grammar decides)
        }
        literal = Some(inner);
    } else if inner.contains('[') {
        typed(inner, &mut operands, &mut operand_shapes)?;
    } else if !inner.is_empty() {
        // `%?name(#[0-9]+)*(,[ \t]*%?name(#[0-9]+)*)*`, exactly
        let ib = inner.as_bytes();
        let mut p = 0;
        loop {
            if p < ib.len() && ib[p] == b'%' {
                p += 1;
            }
            let mut e = name(ib, p)?;
            while e < ib.len() && ib[e] == b'#' {
                let digits = ib[e + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                if digits == 0 {
                    return None;
                }
                e += 1 + digits;
            }
            operands.push(&inner[p..e]);
            if e == ib.len() {
                break;
            }
            if ib[e] != b',' {
                return None;
            }
            p = blanks(ib, e + 1);
        }
    }
    let rest_at = k + 1;
    let rest = &s[rest_at..];
    let (attrs, calls) = if rest.bytes().all(|c| c == b' ' || c == b'\t') {
        ("", Some(Vec::new()))
    } else {
        (rest, attributes(s, rest_at)?.ok())
    };
    Some(Fields {
        indent,
        root,
        name: &s[name_at..name_end],
        shape: &s[shape_at..shape_end],
        opcode,
        operands,
        operand_shapes,
        literal,
        attrs,
        calls,
    })
}

/// Typed operands as `LINE`'s `_TYPED_OPERAND` list takes them, exactly:
/// `shape[ \t]+%?name(,[ \t]*shape[ \t]+%?name)*` with array shapes (the operand text holds
/// no parenthesis here: a tuple shape, or a tiled layout, leaves the line to Python).
fn typed<'a>(inner: &'a str, names: &mut Vec<&'a str>, shapes: &mut Vec<&'a str>) -> Option<()> {
    let ib = inner.as_bytes();
    let mut p = 0;
    loop {
        if p >= ib.len() || ib[p] == b'(' {
            return None;
        }
        let shape_end = shape(ib, p)?;
        let at = blanks(ib, shape_end);
        if at == shape_end {
            return None;
        }
        let name_at = if at < ib.len() && ib[at] == b'%' {
            at + 1
        } else {
            at
        };
        let e = name(ib, name_at)?;
        shapes.push(&inner[p..shape_end]);
        names.push(&inner[name_at..e]);
        if e == ib.len() {
            return Some(());
        }
        if ib[e] != b',' {
            return None;
        }
        p = blanks(ib, e + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(s: &str) -> Option<Fields<'_>> {
        match line(s) {
            Line::Instruction(f) => Some(f),
            _ => None,
        }
    }

    #[test]
    fn reads_headers_and_closing_braces_as_line_does() {
        let Line::Header(h) =
            line("ENTRY %main.5 (p.1: f32[2]{0}, %q: (s32[], u8[0]{0})) -> f32[2]{0} {")
        else {
            panic!("a header")
        };
        assert!(h.entry && h.name == "%main.5");
        assert_eq!(
            (h.params, h.result),
            ("p.1: f32[2]{0}, %q: (s32[], u8[0]{0})", "f32[2]{0}")
        );
        assert_eq!(h.shapes, ["f32[2]{0}", "(s32[], u8[0]{0})"]);
        assert_eq!(h.names, ["p.1", "q"]);
        let Line::Header(h) = line("%f () -> bf16[8,128]{1,0:T(8,128)(2,1)} {  ") else {
            panic!("a header")
        };
        assert!(!h.entry && h.name == "%f" && h.params.is_empty());
        let Line::Header(h) = line("ENTRY (x: f32[]) -> f32[] {") else {
            panic!("a computation named ENTRY")
        };
        assert!(!h.entry && h.name == "ENTRY");
        assert!(matches!(line("}"), Line::Close) && matches!(line("} \t"), Line::Close));
        for s in [
            "  }",                        // indented: the line scanner's
            "}, execution_thread=\"x\"",  // attributes after it
            "%f ( ) -> f32[] {",          // a blank alone between the parentheses
            "%f (p f32[]) -> f32[] {",    // no colon
            "%f (p: f32[]) f32[] {",      // no arrow
            "%f (p: f32[]) -> f32[] { x", // text after the brace
            "%f (p: f32[]) -> f32[]{",    // a brace the shape's layout would take
            "%f (p: f32[], ) -> f32[] {", // a trailing comma
            "FileNames {",                // a debug table
        ] {
            assert!(matches!(line(s), Line::Other), "{s}");
        }
    }

    #[test]
    fn takes_printed_instruction_lines() {
        let f =
            take("  ROOT %r = f32[8]{0} reduce(%p, %c), dimensions={1}, to_apply=%add").unwrap();
        assert!(f.root && f.indent == 2);
        assert_eq!((f.name, f.shape, f.opcode), ("r", "f32[8]{0}", "reduce"));
        assert_eq!(f.operands, ["p", "c"]);
        assert_eq!(f.attrs, ", dimensions={1}, to_apply=%add");
        let f = take("  %c = f32[] constant(1)  ").unwrap();
        assert_eq!((f.literal, f.attrs), (Some("1"), ""));
        let json = r#"  %f = bf16[8,128]{1,0:T(8,128)(2,1)} fusion(%a), kind=kLoop, calls=%g, backend_config={"a":[{"b":{"c":["1"]}}],"s":"x/y'z"}"#;
        assert!(take(json).is_some());
        let g = take("  %g = f32[2]{0} add(%c.2#0, %t#1#12)").unwrap();
        assert_eq!(g.operands, ["c.2#0", "t#1#12"]); // tuple elements, as LINE's _OPERAND takes them
        let r = take("  %r = f32[8]{0} reduce(%p, %c), dimensions={1}, to_apply=%add").unwrap();
        assert_eq!(r.calls, Some(vec!["add"]));
        let w = take(
            "  %w = s32[] while(%s), body=%b.1 , condition=c, metadata={op_name=\", calls=%x\"}",
        )
        .unwrap();
        assert_eq!(w.calls, Some(vec!["c", "b.1"])); // (CALL_KEYS order; a string's text is no key)
        let k = take("  %k = s32[] conditional(%p, %a, %b), branch_computations={%t, %f}").unwrap();
        assert_eq!(k.calls, None); // (a list: Python reads it)
        let d = take("  %d = s32[] call(%p), to_apply=%f, to_apply=%g").unwrap();
        assert_eq!(d.calls, None); // (given twice)
        assert_eq!(take("  %n = s32[] negate(%p)").unwrap().calls, Some(vec![]));
        let c = take("  %c = pred[] compare(s32[] %a.1, f32[2,3]{1,0} b),\tdirection=EQ").unwrap();
        assert_eq!(c.operands, ["a.1", "b"]);
        assert_eq!(c.operand_shapes, ["s32[]", "f32[2,3]{1,0}"]);
        let t = take("  %t = (f32[2]{0}, (s32[], u8[0]{0})) tuple(%a, %b)").unwrap();
        assert_eq!(t.shape, "(f32[2]{0}, (s32[], u8[0]{0}))");
    }

    #[test]
    fn takes_comments_out_as_python_strip_comments_does() {
        // (each expected text is what hloscope.parser.text.strip_comments returns)
        for (s, want) in [
            ("a /*x*/b // y", Some("a b ")),
            ("a=\"/*s*/\" /**/", Some("a=\"/*s*/\" ")),
            ("a='x/*y*/' /**/c", Some("a='x/*y*/' c")),
            ("a=\"o\\\"p\" /*q*/", Some("a=\"o\\\"p\" ")),
            ("/*/ x */y", Some("y")),
            ("a//b/*c*/", Some("a")),
            ("a=\"//s\"", None), // (in a string only: nothing taken out)
            ("plain", None),
            ("a /* open", None),     // (an open comment: Python decides)
            ("a=\"open /**/", None), // (an open string)
        ] {
            assert_eq!(strip_comments(s).as_deref(), want, "{s}");
        }
        let read = |s: &str| uncommented(&strip_comments(s).unwrap()).is_some();
        assert!(read("  %t = (f32[], /*index=1*/f32[]) tuple(%a, %b)"));
        assert!(read("%f (p: f32[]) -> (f32[], /*index=1*/f32[]) {"));
        assert!(!read("  %t = (f32[], /*index=1*/f32[) tuple(%a, %b)")); // (brackets unpaired)
        assert!(!read("  %t = f32[] add(%a, %b), x=\"\u{1}\" /**/")); // (a control character)
    }

    #[test]
    fn leaves_other_lines_to_python() {
        for s in [
            "HloModule m",
            "ENTRY %e (p: f32[]) -> f32[] {",
            "}",
            "",
            "  // comment",
            "  %a = f32[2]{0} add(%b , %c)", // blank before a comma
            "  %a = f32[2]{0} add(f32[2]{0} %b, %c)", // typed and untyped operands mixed
            "  %a = f32[2]{0} add(f32[2]{0} %b , f32[2]{0} %c)", // a blank before a comma
            "  %a = f32[2]{0} add( f32[2]{0} %b)", // a blank after the parenthesis
            "  %a = f32[2]{0} add(f32[2]{0}%b)", // no blank between a shape and its name
            "  %a = f32[2]{0} add(f32[2]{0} %b#0)", // a typed tuple element
            "  %a = f32[2]{0} add((f32[2]{0}) %b)", // a tuple-typed operand
            "  %a = f32[2]{0} add(%b), kind=kLoop calls=%f", // a lost comma
            "  %a = f32[2]{0} add(%b), x=a/b", // a comment-like slash
            "  %a = f32[2]{0} add(%b), x={((((1))))}", // nested deeper than LINE takes
            "  %a = f32[2]{0} add(%b), x=\"open", // an open string
            "  %a = f32[2]{0} add(%b), x={\n", // continued below
            "  %a = f32[2]{0} add(%b) , x=1", // a blank before the first comma
            "  %a = f32[2]{0} custom-call(%b), x=(1]", // mismatched brackets
            "  %a = f32[2]{0} add(%b#, %c)", // a `#` with no index
            "  %a = f32[2]{0} add(%b#x, %c)", // nor a number
        ] {
            assert!(take(s).is_none(), "{s}");
        }
    }

    #[test]
    fn items_deep_takes_any_nesting_that_items_leaves() {
        // (hand-written, labelled as such: a module header's layout nests four deep)
        let header =
            ", is_scheduled=true, entry_computation_layout={(f32[8]{0:T(8)})->f32[8]{0:T(8)}}";
        assert_eq!(items(header), None);
        assert_eq!(
            items_deep(header),
            Some(vec![
                ("is_scheduled", "true"),
                (
                    "entry_computation_layout",
                    "{(f32[8]{0:T(8)})->f32[8]{0:T(8)}}"
                )
            ])
        );
        assert_eq!(items_deep(", a={(1)"), None); // (unbalanced: Python's)
        assert_eq!(items_deep(", a=1 b=2"), None); // (a lost comma)
    }

    #[test]
    fn item_value_reads_one_key_or_leaves_it_to_python() {
        // (hand-written attribute lists, labelled as such, in the forms the scan keeps)
        let attrs = ", kind=kLoop, calls=%f, metadata={op_name=\"a, calls=%b\"}, backend_config={\"x\":{\"y\":[1,2]}}  ";
        assert_eq!(item_value(attrs, "calls"), Some(Some("%f")));
        assert_eq!(
            item_value(attrs, "metadata"),
            Some(Some("{op_name=\"a, calls=%b\"}"))
        );
        assert_eq!(
            item_value(attrs, "backend_config"),
            Some(Some("{\"x\":{\"y\":[1,2]}}"))
        );
        assert_eq!(item_value(attrs, "op_name"), Some(None)); // (inside a value: not an item)
        assert_eq!(item_value("", "calls"), Some(None));
        assert_eq!(item_value(", a=1, a=2", "a"), None); // twice: Python keeps the last
        let mesh = ", replica_groups=mesh[x=2], device_ids=(0,1) {0}, channel_id=1";
        assert_eq!(item_value(mesh, "replica_groups"), None); // one value Python joins
        assert_eq!(item_value(mesh, "channel_id"), Some(Some("1")));
        assert_eq!(item_value("kind=kLoop", "kind"), None); // not `, key=value` items
    }
}
