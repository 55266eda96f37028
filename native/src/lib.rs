//! hloscope's compiled core (issue #37): HLO text -> a compact module table, the parser's
//! line reader (and the instructions it makes), validate's structural checks (with each
//! computation's structure digest), the placement of temporaries, memory's walk, whole-text
//! questions (lines holding a marker, bracket depth), and the cache's file digest. The
//! pure-Rust modules are `scan`, `lines`, `check`, `count`, `structure`, `place`, `text`,
//! `digest`; with the `python` feature, PyO3 bindings expose them to hloscope
//! (`hloscope_native.scan_table`, `.scan_spans`, `.opcode_counts`, `.count`, `.lines`,
//! `.lines_from`, `.instructions_from`, `.checks`, `.place`, `.walk_steps` and `.Store`
//! (memory's walk: `steps`), `.lines_with`, `.nesting_beyond`, `.digest_bytes`,
//! `.digest_str`, `.digest_file`). A panic inside never reaches Python as a crash: it is
//! caught and raised as a RuntimeError.

pub mod check;
pub mod count;
pub mod digest;
pub mod lines;
pub mod place;
pub mod scan;
pub mod structure;
pub mod text;

#[cfg(feature = "python")]
mod steps;

#[cfg(feature = "python")]
mod python {
    use crate::scan::{scan, Span, Table};
    use pyo3::exceptions::PyRuntimeError;
    use pyo3::prelude::*;
    use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString};
    use std::panic::{catch_unwind, AssertUnwindSafe};

    fn guarded<T>(f: impl FnOnce() -> T) -> PyResult<T> {
        catch_unwind(AssertUnwindSafe(f)).map_err(|e| {
            let why = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            PyRuntimeError::new_err(format!("hloscope_native: internal error: {why}"))
        })
    }

    fn text_of(text: &str, sp: Span) -> &str {
        &text[sp.0 as usize..sp.1 as usize]
    }

    /// The module table of an HLO text, as Python lists: module name; computations as
    /// (name, entry, first instruction, end); per instruction its name, opcode, shape text,
    /// operand names, 1-based line and ROOT flag; and the lines not understood.
    #[pyfunction]
    fn scan_table<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
        let t: Table = py.allow_threads(|| guarded(|| scan(text)))?;
        let d = PyDict::new(py);
        d.set_item("module", text_of(text, t.module))?;
        let comps: Vec<(&str, bool, u32, u32)> = t
            .computations
            .iter()
            .map(|c| (text_of(text, c.name), c.entry, c.first, c.end))
            .collect();
        d.set_item("computations", comps)?;
        let names: Vec<&str> = t.names.iter().map(|&s| text_of(text, s)).collect();
        d.set_item("names", PyList::new(py, names)?)?;
        let opcode_names = PyList::new(py, &t.opcode_names)?;
        let ops: Vec<Bound<'_, PyAny>> = t
            .opcodes
            .iter()
            .map(|&o| opcode_names.get_item(o as usize))
            .collect::<PyResult<_>>()?;
        d.set_item("opcodes", PyList::new(py, ops)?)?;
        let shapes: Vec<&str> = t.shapes.iter().map(|&s| text_of(text, s)).collect();
        d.set_item("shapes", PyList::new(py, shapes)?)?;
        let operands = PyList::empty(py);
        for i in 0..t.len() {
            let names: Vec<&str> = t.operands(i).iter().map(|&s| text_of(text, s)).collect();
            operands.append(PyList::new(py, names)?)?;
        }
        d.set_item("operands", operands)?;
        d.set_item("lines", t.lines)?;
        d.set_item("roots", t.roots)?;
        d.set_item("misses", t.misses)?;
        Ok(d)
    }

    fn u32s(values: impl Iterator<Item = u32>) -> Vec<u8> {
        values.flat_map(u32::to_le_bytes).collect()
    }

    fn spans(spans: &[Span]) -> Vec<u8> {
        u32s(spans.iter().flat_map(|&(a, b)| [a, b]))
    }

    /// The module table with no Python object per instruction: names, shapes and operand
    /// names as (start, end) byte offsets into the text's UTF-8 encoding, every per-instruction
    /// column a little-endian array in one `bytes` (u32; opcodes u16, ROOT flags u8), operands
    /// in CSR (operand_starts[i]..operand_starts[i+1] index operand_spans). Python reads the
    /// columns in place as arrays (hloscope.parser.fast.table.SpanTable).
    #[pyfunction]
    fn scan_spans<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
        let t: Table = py.allow_threads(|| guarded(|| scan(text)))?;
        let d = PyDict::new(py);
        d.set_item("module", t.module)?;
        let comps: Vec<(Span, bool, u32, u32)> = t
            .computations
            .iter()
            .map(|c| (c.name, c.entry, c.first, c.end))
            .collect();
        d.set_item("computations", comps)?;
        d.set_item("opcode_names", &t.opcode_names)?;
        let opcodes: Vec<u8> = t.opcodes.iter().flat_map(|o| o.to_le_bytes()).collect();
        let roots: Vec<u8> = t.roots.iter().map(|&r| r as u8).collect();
        let columns: [(&str, Vec<u8>); 7] = [
            ("names", spans(&t.names)),
            ("shapes", spans(&t.shapes)),
            ("operand_spans", spans(&t.operand_spans)),
            ("operand_starts", u32s(t.operand_starts.iter().copied())),
            ("lines", u32s(t.lines.iter().copied())),
            ("opcodes", opcodes),
            ("roots", roots),
        ];
        for (key, bytes) in columns {
            d.set_item(key, PyBytes::new(py, &bytes))?;
        }
        d.set_item("misses", t.misses)?;
        Ok(d)
    }

    /// How many instructions of each opcode the text holds (what `hloscope stats` counts
    /// first), and the lines not understood.
    type Counts = (Vec<(String, u64)>, Vec<u32>);

    #[pyfunction]
    fn opcode_counts(py: Python<'_>, text: &str) -> PyResult<Counts> {
        let t = py.allow_threads(|| guarded(|| scan(text)))?;
        let mut counts = vec![0u64; t.opcode_names.len()];
        for &o in &t.opcodes {
            counts[o as usize] += 1;
        }
        Ok((
            t.opcode_names.iter().cloned().zip(counts).collect(),
            t.misses,
        ))
    }

    /// The scan alone, no Python objects made: the instruction count (for the bench).
    #[pyfunction]
    fn count(py: Python<'_>, text: &str) -> PyResult<usize> {
        py.allow_threads(|| guarded(|| scan(text).len()))
    }

    /// The parser's fast route, line by line (`lines.rs`): for each line of the text, its
    /// 1-based number when the Python line scanner must read it (with `texts`, the line's
    /// text instead: the caller need not split the text), or the fields of the
    /// instruction it is: (line, indent, root, name, shape, opcode, operands, literal or
    /// None, attribute text, the typed operands' shape texts or None, the computations its
    /// call keys name or None where Python must read them); a computation
    /// header's (line, entry, name, parameters' text, result shape, its parameters' (name,
    /// shape) pairs); a closing brace's (line,).
    #[pyfunction]
    #[pyo3(signature = (text, texts=false))]
    fn lines<'py>(py: Python<'py>, text: &str, texts: bool) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let count = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
        fill(py, &out, text, 0, count, texts, None)?;
        Ok(out)
    }

    /// `lines` of the text from byte `start` (where a line starts: line `first` + 1), at
    /// most `count` lines: (their items, and the byte where the next of its lines starts, or
    /// None when none is left). The parser reads a text so, a part at a time, each part's
    /// items made as it needs them and gone before the next (a part's strings are one object
    /// per text within it).
    #[pyfunction]
    #[pyo3(signature = (text, start, first, count, texts=false))]
    fn lines_from<'py>(
        py: Python<'py>,
        text: &str,
        start: usize,
        first: usize,
        count: usize,
        texts: bool,
    ) -> PyResult<(Bound<'py, PyList>, Option<usize>)> {
        let rest = text.get(start..).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err("start is past the text or inside a character")
        })?;
        let out = PyList::empty(py);
        let next = fill(py, &out, rest, first, count, texts, None)?;
        Ok((out, next.map(|at| start + at)))
    }

    /// `lines_from(text, start, first, count, texts=True)`, where an instruction printed
    /// with no operand shapes and with no literal or a parameter number in plain digits is
    /// made here (`make`: (cls, shapes, shape, reader, nones, at)), its shape text and
    /// Shape from `shapes` (text -> (that text, its Shape)) or else from `shape(text)`,
    /// which reads it and keeps it there: `cls(name, opcode, shape text, operands,
    /// nones[len(operands)], None, literal, root, line + at, indent + 1, "", shape,
    /// attributes, reader, calls)` (hloscope.parser.fast.native.scan_native, which sets
    /// its computation, makes the others from their fields as before).
    #[pyfunction]
    fn instructions_from<'py>(
        py: Python<'py>,
        text: &str,
        start: usize,
        first: usize,
        count: usize,
        make: Make<'py>,
    ) -> PyResult<(Bound<'py, PyList>, Option<usize>)> {
        let rest = text.get(start..).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err("start is past the text or inside a character")
        })?;
        let out = PyList::empty(py);
        let next = fill(py, &out, rest, first, count, true, Some(&make))?;
        Ok((out, next.map(|at| start + at)))
    }

    /// What `instructions_from` makes instructions with, a tuple: (cls, shapes, shape,
    /// reader, nones, at).
    #[derive(FromPyObject)]
    struct Make<'py>(
        Bound<'py, PyAny>,
        Bound<'py, PyDict>,
        Bound<'py, PyAny>,
        Bound<'py, PyAny>,
        Bound<'py, PyList>,
        usize,
    );

    /// The items of `text`'s lines (numbered from `first` + 1), at most `count`, appended to
    /// `out`; Some(the byte of `text` where the lines left start) when `count` stopped it.
    fn fill<'py>(
        py: Python<'py>,
        out: &Bound<'py, PyList>,
        text: &str,
        first: usize,
        count: usize,
        texts: bool,
        make: Option<&Make<'py>>,
    ) -> PyResult<Option<usize>> {
        use crate::check::Map;
        use crate::lines::{line, split_lines, strip_comments, uncommented, Line};
        // one Python string per distinct text: an operand is the name its instruction was
        // given (one object, not a copy per use), and a layer's shapes and opcodes repeat
        let mut strings: Map<&str, Bound<'py, PyString>> =
            Map::with_capacity_and_hasher(count.min(1 << 20), Default::default());
        let mut left = None;
        // each line is read and handed over at once: no table of every line's fields is
        // held beside the list (it was most of the line reader's peak memory)
        guarded(|| -> PyResult<()> {
            for (k, s) in split_lines(text).enumerate() {
                if k == count {
                    left = Some(s.as_ptr() as usize - text.as_ptr() as usize);
                    break;
                }
                if k % YIELD_EVERY == YIELD_EVERY - 1 {
                    py.allow_threads(|| ()); // (a thread waiting to start its own pass runs)
                }
                let no = first + k + 1;
                match line(s) {
                    // a line left for its comments (`/*index=5*/` in long tuples), read with
                    // them taken out as Python's line scanner takes them; its texts are new
                    // strings unless an earlier line made one (the stripped text is dropped)
                    Line::Other => match strip_comments(s).as_deref().and_then(uncommented) {
                        Some(l) => push(py, out, no, l, None, &mut |t: &str| {
                            strings
                                .get(t)
                                .cloned()
                                .unwrap_or_else(|| PyString::new(py, t))
                        })?,
                        None if texts => out.append(PyString::new(py, s))?,
                        None => out.append(no)?,
                    },
                    l => push(py, out, no, l, make, &mut |t| intern(py, &mut strings, t))?,
                }
            }
            Ok(())
        })??;
        Ok(left)
    }

    /// How many lines `lines` reads between two moments it lets other threads run.
    const YIELD_EVERY: usize = 4096;

    /// The item of one line `lines` reads (not `Line::Other`), appended to `out`: an
    /// instruction's fields, a computation header's, or a closing brace's (line,).
    fn push<'py, 's>(
        py: Python<'py>,
        out: &Bound<'py, PyList>,
        no: usize,
        read: crate::lines::Line<'s>,
        make: Option<&Make<'py>>,
        intern: &mut dyn FnMut(&'s str) -> Bound<'py, pyo3::types::PyString>,
    ) -> PyResult<()> {
        use crate::lines::Line;
        match read {
            Line::Other => out.append(no),
            Line::Close => out.append((no,)),
            Line::Header(h) => {
                let params = PyList::empty(py);
                for (name, shape) in h.names.iter().zip(&h.shapes) {
                    params.append((intern(name), intern(shape)))?;
                }
                out.append((no, h.entry, h.name, h.params, h.result, params))
            }
            Line::Instruction(f) => {
                let (name, shape, opcode) = (intern(f.name), intern(f.shape), intern(f.opcode));
                let operands = tuple_of(py, &f.operands, intern)?;
                let plain_literal = f
                    .literal
                    .is_none_or(|l| !l.is_empty() && l.bytes().all(|c| c.is_ascii_digit()));
                // (a shape text `shape` cannot read is left with the fields: the loop of
                // scan_native then raises its error where it would, in line order)
                let known = match make.filter(|_| f.operand_shapes.is_empty() && plain_literal) {
                    Some(m) => match m.1.get_item(&shape)? {
                        Some(known) => Some((m, known)),
                        None => match m.2.call1((&shape,)) {
                            Ok(known) => Some((m, known)),
                            Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(py) => None,
                            Err(e) => return Err(e), // (an interrupt, not the text's error)
                        },
                    },
                    None => None,
                };
                if let Some((m, known)) = known {
                    let known = known.downcast::<pyo3::types::PyTuple>()?;
                    let n = f.operands.len();
                    let nones = if n < m.4.len() {
                        m.4.get_item(n)?
                    } else {
                        pyo3::types::PyTuple::new(py, (0..n).map(|_| py.None()))?.into_any()
                    };
                    let calls = match &f.calls {
                        Some(names) => tuple_of(py, names, intern)?.into_any(),
                        None => py.None().into_bound(py),
                    };
                    let args: [Bound<'py, PyAny>; 15] = [
                        name.into_any(),
                        opcode.into_any(),
                        known.get_item(0)?,
                        operands.into_any(),
                        nones,
                        py.None().into_bound(py),
                        match f.literal {
                            Some(l) => PyString::new(py, l).into_any(),
                            None => py.None().into_bound(py),
                        },
                        PyBool::new(py, f.root).to_owned().into_any(),
                        (no + m.5).into_pyobject(py)?.into_any(),
                        (f.indent + 1).into_pyobject(py)?.into_any(),
                        PyString::new(py, "").into_any(),
                        known.get_item(1)?,
                        PyString::new(py, f.attrs).into_any(),
                        m.3.clone(),
                        calls,
                    ];
                    return out.append(m.0.call1(pyo3::types::PyTuple::new(py, args)?)?);
                }
                let typed = if f.operand_shapes.is_empty() {
                    None
                } else {
                    Some(tuple_of(py, &f.operand_shapes, intern)?)
                };
                let calls = match &f.calls {
                    Some(names) => Some(tuple_of(py, names, intern)?),
                    None => None,
                };
                out.append((
                    no, f.indent, f.root, name, shape, opcode, operands, f.literal, f.attrs, typed,
                    calls,
                ))
            }
        }
    }

    /// The one Python string of a text of the line list (made on its first use).
    fn intern<'py, 'a>(
        py: Python<'py>,
        strings: &mut crate::check::Map<&'a str, Bound<'py, pyo3::types::PyString>>,
        s: &'a str,
    ) -> Bound<'py, pyo3::types::PyString> {
        strings
            .entry(s)
            .or_insert_with(|| pyo3::types::PyString::new(py, s))
            .clone()
    }

    /// A tuple of the texts, each the string `intern` gives for it.
    fn tuple_of<'py, 's>(
        py: Python<'py>,
        texts: &[&'s str],
        intern: &mut dyn FnMut(&'s str) -> Bound<'py, pyo3::types::PyString>,
    ) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let items: Vec<Bound<'py, pyo3::types::PyString>> =
            texts.iter().map(|t| intern(t)).collect();
        pyo3::types::PyTuple::new(py, items)
    }

    /// Temporaries placed in output buffers (`place.rs`; hloscope.cost.placement's `_assign`
    /// is the plain route): whether each temporary (bytes, first step, last step, buffer id
    /// or -1) was placed. Outputs: bytes, definition step, held step ranges, buffer id each;
    /// `order` the order they are tried in; `touch` the (operand, result) buffer pairs.
    #[pyfunction]
    #[allow(clippy::too_many_arguments)]
    fn place(
        py: Python<'_>,
        bytes: Vec<i64>,
        defined: Vec<i64>,
        held: Vec<Vec<(i64, i64)>>,
        ids: Vec<i64>,
        order: Vec<usize>,
        temps: Vec<crate::place::Temp>,
        touch: std::collections::HashSet<(i64, i64)>,
        run: usize,
    ) -> PyResult<Vec<bool>> {
        use crate::place::{assign, Outputs};
        let n = bytes.len();
        if defined.len() != n
            || held.len() != n
            || ids.len() != n
            || order.len() != n
            || order.iter().any(|&k| k >= n)
        {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "place: one entry per output in bytes, defined, held, ids and order",
            ));
        }
        let outputs = Outputs {
            bytes: &bytes,
            defined: &defined,
            held: &held,
            ids: &ids,
        };
        py.allow_threads(|| guarded(|| assign(&outputs, &order, &temps, &touch, run)))?
            .map_err(|_| pyo3::exceptions::PyIndexError::new_err("list index out of range"))
    }

    /// A signature (opcode, shape, the attribute items the value checks read, literal or
    /// None, the operands' shape texts).
    type Sig = (String, String, String, Option<String>, Vec<String>);
    /// An instruction of an opcode Python decides: (opcode, shape, its operands' (opcode, shape)).
    type Decided = (String, String, Vec<(String, String)>);
    /// Per module its computations (name, ENTRY, instruction count).
    type Modules = Vec<Vec<(String, bool, usize)>>;
    /// An instruction of a commented line: (module, computation, line, name, opcode, shape,
    /// operands, literal or None, ROOT, called computations, operand shapes, a fusion's kind
    /// or None).
    type Again = (
        usize,
        usize,
        usize,
        String,
        String,
        String,
        Vec<String>,
        Option<String>,
        bool,
        Vec<String>,
        Vec<String>,
        Option<String>,
    );

    type Pairs = Vec<(String, usize)>;
    /// A module's counts for `stats` (`check.rs`'s ModuleCount): opcodes, fusion kinds,
    /// custom calls (computation index, line), memory groups (opcode, shape, an async
    /// start's operand shapes, count, the smallest (computation, name, line)), the
    /// computations fusions call, and per computation its opcodes and kinds (when asked).
    type ModuleCounts = (
        Pairs,
        Pairs,
        Vec<(usize, usize)>,
        Vec<(
            String,
            String,
            Vec<String>,
            usize,
            Vec<(String, String, usize)>,
        )>,
        Vec<String>,
        Vec<(Pairs, Pairs)>,
    );
    /// Per module its counts; the lines Python reads outside computations; the headers'
    /// lines; the shapes (of instructions, headers' parameters and results), typed operands'
    /// shapes and literals (distinct).
    type StatsCounts = (
        Vec<ModuleCounts>,
        Vec<usize>,
        Vec<usize>,
        Vec<String>,
        Vec<String>,
        Vec<String>,
    );
    /// Per module, each computation's structure digest (`structure.rs`), or None.
    type Structures = Vec<Vec<Option<crate::structure::Digest>>>;
    type Found = (
        Option<String>,
        Modules,
        Vec<Sig>,
        Vec<Again>,
        Option<StatsCounts>,
        Vec<Decided>,
        Option<Structures>,
    );

    fn owned(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn pairs(v: &[(&str, usize)]) -> Vec<(String, usize)> {
        v.iter().map(|&(s, n)| (s.to_string(), n)).collect()
    }

    fn counts(c: &crate::check::Counted<'_>, per_computation: bool) -> StatsCounts {
        let module = |m: &crate::check::ModuleCount<'_>| -> ModuleCounts {
            (
                pairs(&m.opcodes),
                pairs(&m.kinds),
                m.custom_calls.clone(),
                m.groups
                    .iter()
                    .map(|(key, n, smallest)| {
                        let s = smallest
                            .iter()
                            .map(|&(c, i, l)| (c.to_string(), i.to_string(), l));
                        (
                            key.0.to_string(),
                            key.1.to_string(),
                            owned(&key.2),
                            *n,
                            s.collect(),
                        )
                    })
                    .collect(),
                owned(&m.fused),
                if per_computation {
                    m.per_computation
                        .iter()
                        .map(|t| (pairs(&t.opcodes), pairs(&t.kinds)))
                        .collect()
                } else {
                    Vec::new()
                },
            )
        };
        (
            c.modules.iter().map(module).collect(),
            c.outside.clone(),
            c.headers.clone(),
            c.shapes.iter().map(|s| s.to_string()).collect(),
            c.typed.iter().map(|s| s.to_string()).collect(),
            c.literals.iter().map(|s| s.to_string()).collect(),
        )
    }

    /// validate's structural checks (`check.rs`): (None, the modules as seen, the distinct
    /// value signatures Python checks, the instructions of commented lines, and with
    /// `count` what `stats` reads (2: per computation too), else None, the instructions of
    /// opcodes Python decides: (opcode, shape, operands' (opcode, shape)), and with
    /// `structures` each computation's structure digest per module, else None), or (why it
    /// gave up and where, [], [], [], None, [], None): Python then validates. `classes`:
    /// opcode -> 1 (no value check) or 2 (value checks); others are Python's to decide.
    /// `keys`: the attribute keys the value checks read.
    #[pyfunction]
    #[pyo3(signature = (text, classes, keys, count=0, structures=false))]
    fn checks(
        py: Python<'_>,
        text: &str,
        classes: Vec<(String, u8)>,
        keys: Vec<String>,
        count: u8,
        structures: bool,
    ) -> PyResult<Found> {
        use crate::check::{check_text, Class, Table};
        let table = Table {
            classes: classes
                .iter()
                .filter_map(|(op, c)| match c {
                    1 => Some((op.as_str(), Class::Plain)),
                    2 => Some((op.as_str(), Class::Value)),
                    _ => None,
                })
                .collect(),
            keys: keys.iter().map(String::as_str).collect(),
            marks: crate::check::marks(&keys),
            count: count > 0,
            structures,
        };
        py.allow_threads(|| {
            guarded(|| {
                check_text(text, &table, |found| match found {
                    Err((why, line)) => (
                        Some(format!("{why} (line {line})")),
                        Vec::new(),
                        Vec::new(),
                        Vec::new(),
                        None,
                        Vec::new(),
                        None,
                    ),
                    Ok(c) => (
                        None,
                        c.modules
                            .iter()
                            .map(|m| m.iter().map(|&(n, e, k)| (n.to_string(), e, k)).collect())
                            .collect(),
                        c.signatures
                            .iter()
                            .map(|s| {
                                (
                                    s.opcode.to_string(),
                                    s.shape.to_string(),
                                    s.attrs.concat(),
                                    s.literal.map(str::to_string),
                                    owned(&s.operand_shapes),
                                )
                            })
                            .collect(),
                        c.rewritten
                            .iter()
                            .map(|r| {
                                (
                                    r.module,
                                    r.computation,
                                    r.line,
                                    r.name.to_string(),
                                    r.opcode.to_string(),
                                    r.shape.to_string(),
                                    owned(&r.operands),
                                    r.literal.map(str::to_string),
                                    r.root,
                                    owned(&r.calls),
                                    owned(&r.operand_shapes),
                                    r.kind.map(str::to_string),
                                )
                            })
                            .collect(),
                        c.counted.as_ref().map(|c| counts(c, count > 1)),
                        c.decided
                            .iter()
                            .map(|d| {
                                let operands = d.operands.iter();
                                (
                                    d.opcode.to_string(),
                                    d.shape.to_string(),
                                    operands
                                        .map(|&(o, s)| (o.to_string(), s.to_string()))
                                        .collect(),
                                )
                            })
                            .collect(),
                        structures.then_some(c.structures),
                    ),
                })
            })
        })
    }

    /// The byte offsets of the text's line breaks (`\n`), one little-endian i64 each: the
    /// index `hloscope.parser.text.Lines` keeps, for an ASCII text (whose byte offsets are
    /// Python's character offsets: Python asks for no other).
    #[pyfunction]
    fn line_breaks<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyBytes>> {
        let bytes: Vec<u8> = py.allow_threads(|| {
            guarded(|| {
                memchr::memchr_iter(b'\n', text.as_bytes())
                    .flat_map(|at| (at as i64).to_le_bytes())
                    .collect()
            })
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The texts of lines `numbers` (1-based, any order) of a text.
    #[pyfunction]
    fn line_texts(text: &str, numbers: Vec<usize>) -> Vec<&str> {
        use crate::lines::{line_at, line_starts};
        let starts = line_starts(text);
        numbers
            .iter()
            .map(|&n| {
                n.checked_sub(1)
                    .and_then(|k| line_at(text, &starts, k))
                    .unwrap_or("")
            })
            .collect()
    }

    /// The lines holding `needle`: (1-based number, text without its line break), in order.
    #[pyfunction]
    fn lines_with<'a>(
        py: Python<'_>,
        text: &'a str,
        needle: &str,
    ) -> PyResult<Vec<(usize, &'a str)>> {
        py.allow_threads(|| guarded(|| crate::text::lines_with(text, needle)))
    }

    /// The cache's digest of a file's bytes (`digest.rs`: BLAKE3, 32 bytes).
    #[pyfunction]
    fn digest_bytes<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        let d = py.allow_threads(|| guarded(|| crate::digest::of_bytes(data)))?;
        Ok(PyBytes::new(py, &d))
    }

    /// `digest_bytes` of a text's UTF-8 bytes (for a text decoded from a file: the file's
    /// digest, with no bytes object made; an ASCII text is read where Python holds it).
    #[pyfunction]
    fn digest_str<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyBytes>> {
        let d = py.allow_threads(|| guarded(|| crate::digest::of_bytes(text.as_bytes())))?;
        Ok(PyBytes::new(py, &d))
    }

    /// `digest_bytes` of a file's contents, read a block at a time (OSError when it cannot
    /// be read).
    #[pyfunction]
    fn digest_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Bound<'_, PyBytes>> {
        let d = py.allow_threads(|| guarded(|| crate::digest::of_file(&path)))??;
        Ok(PyBytes::new(py, &d))
    }

    /// The value text of attribute `key` in an instruction's attribute list (`, k=v, ...`,
    /// as the scan kept it): the value, None when the key is not given, or False when
    /// Python reads it (`lines::item_value`).
    #[pyfunction]
    fn attr_value(py: Python<'_>, attrs: &str, key: &str) -> PyResult<PyObject> {
        Ok(match guarded(|| crate::lines::item_value(attrs, key))? {
            Some(Some(v)) => PyString::new(py, v).into_any().unbind(),
            Some(None) => py.None(),
            None => PyBool::new(py, false).to_owned().into_any().unbind(),
        })
    }

    /// {key: value text} of an instruction's attribute list (`, k=v, ...`, as the scan kept
    /// it; a key given twice: its last value), or None when they are not such items
    /// (`lines::items`).
    #[pyfunction]
    fn attr_items<'py>(py: Python<'py>, attrs: &str) -> PyResult<Option<Bound<'py, PyDict>>> {
        item_dict(py, guarded(|| crate::lines::items(attrs))?)
    }

    fn item_dict<'py>(
        py: Python<'py>,
        items: Option<Vec<(&str, &str)>>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(items) = items else {
            return Ok(None);
        };
        let out = PyDict::new(py);
        for (k, v) in items {
            out.set_item(k, v)?;
        }
        Ok(Some(out))
    }

    /// `attr_items` with values nested to any depth (`lines::items_deep`): a module header's
    /// attribute list, or that of a line the line scanner reads.
    #[pyfunction]
    fn attr_items_deep<'py>(py: Python<'py>, attrs: &str) -> PyResult<Option<Bound<'py, PyDict>>> {
        item_dict(py, guarded(|| crate::lines::items_deep(attrs))?)
    }

    /// `s` with its comments taken out as Python's `strip_comments` takes them, or None when
    /// there are none or Python decides (`lines::strip_comments`).
    #[pyfunction]
    fn comments_out(py: Python<'_>, s: &str) -> PyResult<Option<String>> {
        py.allow_threads(|| guarded(|| crate::lines::strip_comments(s)))
    }

    /// The character offset of the first bracket nested deeper than `limit`, or None.
    #[pyfunction]
    fn nesting_beyond(py: Python<'_>, s: &str, limit: usize) -> PyResult<Option<usize>> {
        py.allow_threads(|| guarded(|| crate::text::nesting_beyond(s, limit)))
    }

    #[pymodule]
    fn hloscope_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_function(wrap_pyfunction!(lines, m)?)?;
        m.add_function(wrap_pyfunction!(lines_from, m)?)?;
        m.add_function(wrap_pyfunction!(instructions_from, m)?)?;
        m.add_function(wrap_pyfunction!(scan_table, m)?)?;
        m.add_function(wrap_pyfunction!(scan_spans, m)?)?;
        m.add_function(wrap_pyfunction!(opcode_counts, m)?)?;
        m.add_function(wrap_pyfunction!(count, m)?)?;
        m.add_function(wrap_pyfunction!(attr_items_deep, m)?)?;
        m.add_function(wrap_pyfunction!(comments_out, m)?)?;
        m.add_function(wrap_pyfunction!(place, m)?)?;
        m.add_function(wrap_pyfunction!(crate::steps::walk_steps, m)?)?;
        m.add_class::<crate::steps::Store>()?;
        m.add_class::<crate::steps::Slot>()?;
        m.add_function(wrap_pyfunction!(checks, m)?)?;
        m.add_function(wrap_pyfunction!(line_texts, m)?)?;
        m.add_function(wrap_pyfunction!(line_breaks, m)?)?;
        m.add_function(wrap_pyfunction!(lines_with, m)?)?;
        m.add_function(wrap_pyfunction!(nesting_beyond, m)?)?;
        m.add_function(wrap_pyfunction!(attr_value, m)?)?;
        m.add_function(wrap_pyfunction!(attr_items, m)?)?;
        m.add_function(wrap_pyfunction!(digest_bytes, m)?)?;
        m.add_function(wrap_pyfunction!(digest_str, m)?)?;
        m.add_function(wrap_pyfunction!(digest_file, m)?)?;
        Ok(())
    }
}
