//! memory's walk over one computation's schedule, its common steps in the core
//! (`hloscope_native.walk_steps`; `hloscope.cost.walk._Walk._steps` is the plain route and
//! the specification). The walk's buffers are a `Store` of columns while it runs; its
//! other state stays the Python objects it is (`values`, `sharing`, `touching`). The core
//! takes the steps most instructions take (each operand's buffers read at this step; a new
//! value of its own; an elementwise op or all-reduce of one array written over an operand
//! of its dims: `_Walk._shared`, `_may_share`) and hands every other instruction to
//! `_Walk.value`, which reads and writes the same buffers through `Slot` views; Python then
//! makes the `Buffer`s the rest of the analysis reads. The Python loop paid about 20k
//! machine instructions an instruction (Mixtral's entry: 30k instructions, 626M), mostly
//! the bytecode around a few dictionary and attribute operations and a `Buffer` made each.
//! A panic inside is raised as a RuntimeError (the walk then takes the Python steps).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString};
use std::collections::HashMap;

/// A walk's buffers while it runs (`_Walk.buffers`), one column per field of `Buffer`:
/// `store[k]` is a view (`Slot`) whose fields read and write the columns, `append` and
/// `extend` take `Buffer`s, and `buffers(Buffer)` makes the list of `Buffer`s the rest of
/// the analysis reads once the steps are walked.
#[pyclass(module = "hloscope_native")]
#[derive(Default)]
pub struct Store {
    computation: Vec<PyObject>,
    instruction: Vec<PyObject>,
    shape: Vec<PyObject>,
    bytes: Vec<i64>,
    space: Vec<i64>,
    defined: Vec<i64>,
    last_use: Vec<i64>,
    kind: Vec<PyObject>,
}

impl Store {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        computation: PyObject,
        instruction: PyObject,
        shape: PyObject,
        bytes: i64,
        space: i64,
        defined: i64,
        last_use: i64,
        kind: PyObject,
    ) -> usize {
        self.computation.push(computation);
        self.instruction.push(instruction);
        self.shape.push(shape);
        self.bytes.push(bytes);
        self.space.push(space);
        self.defined.push(defined);
        self.last_use.push(last_use);
        self.kind.push(kind);
        self.bytes.len() - 1
    }

    fn take(&mut self, b: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = b.py();
        self.push(
            b.getattr(intern!(py, "computation"))?.unbind(),
            b.getattr(intern!(py, "instruction"))?.unbind(),
            b.getattr(intern!(py, "shape"))?.unbind(),
            b.getattr(intern!(py, "bytes"))?.extract()?,
            b.getattr(intern!(py, "space"))?.extract()?,
            b.getattr(intern!(py, "defined"))?.extract()?,
            b.getattr(intern!(py, "last_use"))?.extract()?,
            b.getattr(intern!(py, "kind"))?.unbind(),
        );
        Ok(())
    }
}

#[pymethods]
impl Store {
    #[new]
    fn py_new() -> Self {
        Store::default()
    }

    fn __len__(&self) -> usize {
        self.bytes.len()
    }

    fn __getitem__(slf: Bound<'_, Self>, k: isize) -> PyResult<Slot> {
        let n = slf.borrow().bytes.len() as isize;
        let at = if k < 0 { k + n } else { k };
        if at < 0 || at >= n {
            return Err(pyo3::exceptions::PyIndexError::new_err(
                "list index out of range",
            ));
        }
        Ok(Slot {
            store: slf.unbind(),
            at: at as usize,
        })
    }

    fn append(&mut self, b: &Bound<'_, PyAny>) -> PyResult<()> {
        self.take(b)
    }

    fn extend(&mut self, bs: &Bound<'_, PyAny>) -> PyResult<()> {
        for b in bs.try_iter()? {
            self.take(&b?)?;
        }
        Ok(())
    }

    /// The buffers as `cls` objects (`Buffer`), in order.
    fn buffers<'py>(
        &self,
        py: Python<'py>,
        cls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for k in 0..self.bytes.len() {
            out.append(cls.call1((
                self.computation[k].bind(py),
                self.instruction[k].bind(py),
                self.shape[k].bind(py),
                self.bytes[k],
                self.space[k],
                self.defined[k],
                self.last_use[k],
                self.kind[k].bind(py),
            ))?)?;
        }
        Ok(out)
    }
}

/// One buffer of a `Store`, read and written in place.
#[pyclass(module = "hloscope_native")]
pub struct Slot {
    store: Py<Store>,
    at: usize,
}

/// A column's value as a field reads it (a copy, or another reference to the object).
trait Cell {
    fn read(&self, py: Python<'_>) -> Self;
}

impl Cell for i64 {
    fn read(&self, _: Python<'_>) -> i64 {
        *self
    }
}

impl Cell for PyObject {
    fn read(&self, py: Python<'_>) -> PyObject {
        self.clone_ref(py)
    }
}

/// A `Slot`'s fields, each read and written in its `Store` column.
macro_rules! slot_fields {
    ($($field:ident / $set:ident: $ty:ty),* $(,)?) => {
        #[pymethods]
        impl Slot {
            $(
                #[getter]
                fn $field(&self, py: Python<'_>) -> $ty {
                    self.store.borrow(py).$field[self.at].read(py)
                }
                #[setter]
                fn $set(&self, py: Python<'_>, v: $ty) {
                    self.store.borrow_mut(py).$field[self.at] = v;
                }
            )*
        }
    };
}

slot_fields!(
    computation / set_computation: PyObject,
    instruction / set_instruction: PyObject,
    shape / set_shape: PyObject,
    bytes / set_bytes: i64,
    space / set_space: i64,
    defined / set_defined: i64,
    last_use / set_last_use: i64,
    kind / set_kind: PyObject,
);

/// One array leaf of a shape, as `memory_leaves` gives it.
struct Leaf {
    shape: PyObject,
    bytes: i64,
    space: i64,
}

/// How the walk takes an opcode's instructions.
#[derive(Clone, Copy, PartialEq)]
enum Class {
    /// A new value of its own unless an aliasing attribute says otherwise (`_plain`).
    Plain,
    /// Elementwise or an all-reduce (`SHARE_OPS`): may be written over an operand.
    Shares,
    /// Everything else: `_Walk.value`.
    Other,
}

/// A shape's facts, kept with the shape (so that its id stays its own while cached).
type Kept<T> = HashMap<usize, (PyObject, T)>;

struct Walk<'py> {
    py: Python<'py>,
    values: Bound<'py, PyDict>,
    buffers: Bound<'py, Store>,
    sharing: Bound<'py, PyList>,
    touching: Bound<'py, PySet>,
    by_name: Bound<'py, PyDict>,
    walk: Bound<'py, PyAny>,
    comp_name: Bound<'py, PyAny>,
    memory_leaves: Bound<'py, PyAny>,
    temp: Bound<'py, PyString>,
    gpu: bool,
    tpu: bool,
    passed: Vec<String>,
    /// per shape object: memory_leaves
    leaves: Kept<Vec<Leaf>>,
    /// per shape object: (is_array, dims)
    arrays: Kept<(bool, PyObject)>,
}

impl<'py> Walk<'py> {
    /// memory_leaves(shape), once per shape object.
    fn leaves(&mut self, shape: &Bound<'py, PyAny>) -> PyResult<&[Leaf]> {
        let key = shape.as_ptr() as usize;
        if !self.leaves.contains_key(&key) {
            let py = self.py;
            let mut leaves = Vec::new();
            for mem in self.memory_leaves.call1((shape,))?.try_iter()? {
                let mem = mem?;
                leaves.push(Leaf {
                    shape: mem.getattr(intern!(py, "shape"))?.unbind(),
                    bytes: mem.getattr(intern!(py, "padded_bytes"))?.extract()?,
                    space: mem.getattr(intern!(py, "memory_space"))?.extract()?,
                });
            }
            self.leaves.insert(key, (shape.clone().unbind(), leaves));
        }
        Ok(&self.leaves[&key].1)
    }

    /// (shape.is_array, shape.dims), once per shape object.
    fn array(&mut self, shape: &Bound<'py, PyAny>) -> PyResult<(bool, Bound<'py, PyAny>)> {
        let key = shape.as_ptr() as usize;
        if !self.arrays.contains_key(&key) {
            let py = self.py;
            let facts = (
                shape.getattr(intern!(py, "is_array"))?.is_truthy()?,
                shape.getattr(intern!(py, "dims"))?.unbind(),
            );
            self.arrays.insert(key, (shape.clone().unbind(), facts));
        }
        let (is_array, dims) = &self.arrays[&key].1;
        Ok((*is_array, dims.bind(self.py).clone()))
    }

    /// A buffer of this computation (`Buffer(comp, instruction, shape, bytes, space,
    /// defined=step, last_use=step, "temp")`), appended; its id.
    fn push(&self, name: &Bound<'py, PyAny>, leaf: &Leaf, step: usize) -> PyResult<usize> {
        let py = self.py;
        let step = step as i64;
        Ok(self.buffers.borrow_mut().push(
            self.comp_name.clone().unbind(),
            name.clone().unbind(),
            leaf.shape.clone_ref(py),
            leaf.bytes,
            leaf.space,
            step,
            step,
            self.temp.clone().into_any().unbind(),
        ))
    }

    /// `_Walk.new(instr, step)`: a temporary per array leaf of the shape.
    fn new_value(
        &mut self,
        shape: &Bound<'py, PyAny>,
        name: &Bound<'py, PyAny>,
        step: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.leaves(shape)?;
        let leaves = &self.leaves[&(shape.as_ptr() as usize)].1;
        let mut ids = Vec::with_capacity(leaves.len());
        for leaf in leaves {
            ids.push(self.push(name, leaf, step)?);
        }
        Ok(PyList::new(self.py, ids)?.into_any())
    }

    /// `_Walk._shared`: its own buffer, which may take over an operand's of its dims.
    fn shared(
        &mut self,
        shape: &Bound<'py, PyAny>,
        name: &Bound<'py, PyAny>,
        operands: &Bound<'py, PyAny>,
        step: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let names: Vec<Bound<'py, PyAny>> = operands.try_iter()?.collect::<PyResult<_>>()?;
        let operands: Vec<Bound<'py, PyAny>> = names
            .iter()
            .map(|o| -> PyResult<Bound<'py, PyAny>> {
                self.by_name
                    .get_item(o)?
                    .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(o.clone().unbind()))
            })
            .collect::<PyResult<_>>()?;
        if self.leaves(shape)?.len() != 1 || operands.is_empty() {
            return self.new_value(shape, name, step);
        }
        let (size, space, made) = {
            let leaf = &self.leaves[&(shape.as_ptr() as usize)].1[0];
            (leaf.bytes, leaf.space, self.push(name, leaf, step)?)
        };
        let dims = self.array(shape)?.1; // (asked already of an instruction that shares)
        let mut same = Vec::new();
        for (k, o) in operands.iter().enumerate() {
            let s = shape_of(py, o)?;
            if s.is(shape) {
                same.push(k);
                continue;
            }
            let (is_array, s_dims) = self.array(&s)?;
            if s_dims.eq(&dims)? && is_array {
                same.push(k);
            }
        }
        if !same.is_empty() && self.may_share(step, made, size, space, &operands, &names, &same)? {
            return Ok(PyList::new(py, [-1i64])?.into_any());
        }
        Ok(PyList::new(py, [made])?.into_any())
    }

    /// `_Walk._may_share`: note the operands whose buffer the result may be written into;
    /// true where it is written into a caller's buffer now.
    #[allow(clippy::too_many_arguments)]
    fn may_share(
        &self,
        step: usize,
        made: usize,
        size: i64,
        space: i64,
        operands: &[Bound<'py, PyAny>],
        names: &[Bound<'py, PyAny>],
        candidates: &[usize],
    ) -> PyResult<bool> {
        let py = self.py;
        for &k in candidates {
            let o = &operands[k];
            let ids = self
                .values
                .get_item(&names[k])?
                .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err("an operand's value"))?;
            let ids = ids.downcast::<PyList>()?;
            if ids.len() != 1 {
                continue;
            }
            let bid: i64 = ids.get_item(0)?.extract()?;
            if bid >= 0 {
                let temp = {
                    let store = self.buffers.borrow();
                    let b = bid as usize;
                    if b >= store.bytes.len() {
                        return Err(pyo3::exceptions::PyIndexError::new_err(
                            "list index out of range",
                        ));
                    }
                    if store.bytes[b] != size || store.space[b] != space {
                        continue;
                    }
                    let kind = store.kind[b].bind(py);
                    kind.is(&self.temp) || kind.eq(&self.temp)?
                };
                if self.gpu {
                    self.touching.add((bid, made))?;
                }
                if temp
                    && (self.tpu || {
                        let op = o.getattr(intern!(py, "opcode"))?;
                        let op = op.downcast::<PyString>()?.to_str()?;
                        !self.passed.iter().any(|p| p == op) && !op.ends_with("-done")
                    })
                {
                    self.sharing.append((step, bid, made))?;
                }
            } else if bid == -1
                && self
                    .walk
                    .call_method1(intern!(py, "_only_reader"), (o, step, size, space))?
                    .is_truthy()?
            {
                self.buffers.borrow_mut().bytes[made] = 0;
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// `instr.shape`: the parsed shape its slot holds, else the property (which parses it).
fn shape_of<'py>(py: Python<'py>, instr: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let kept = instr.getattr(intern!(py, "_shape"))?;
    if kept.is_none() {
        return instr.getattr(intern!(py, "shape"));
    }
    Ok(kept)
}

/// No aliasing attribute (`output_to_operand_aliasing`, a backend_config's
/// `aliasing_operands`), as `walk._unaliased` asks it.
fn unaliased(py: Python<'_>, instr: &Bound<'_, PyAny>) -> PyResult<bool> {
    let text = instr.getattr(intern!(py, "attr_text"))?;
    if text.is_truthy()? {
        return Ok(!text.downcast::<PyString>()?.to_str()?.contains("aliasing"));
    }
    Ok(!instr.getattr(intern!(py, "_attrs"))?.is_truthy()?)
}

/// `_Walk.run`'s loop over the computation's instructions (the root's buffers are then
/// marked by Python): `plain(opcode)` says whether an opcode's value is plainly its own,
/// `share_ops` holds the opcodes that may share an operand's buffer, `passed` those whose
/// value is another's (`_PASSED`).
#[pyfunction]
pub fn walk_steps(
    py: Python<'_>,
    walk: &Bound<'_, PyAny>,
    memory_leaves: &Bound<'_, PyAny>,
    plain: &Bound<'_, PyAny>,
    share_ops: &Bound<'_, PyAny>,
    passed: Vec<String>,
) -> PyResult<()> {
    // (a panic inside is raised as a RuntimeError: the walk then takes the Python steps)
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> PyResult<()> {
        let platform: Option<String> = walk.getattr(intern!(py, "platform"))?.extract()?;
        let comp = walk.getattr(intern!(py, "comp"))?;
        let mut w = Walk {
            py,
            values: walk.getattr(intern!(py, "values"))?.downcast_into()?,
            buffers: walk.getattr(intern!(py, "buffers"))?.downcast_into()?,
            sharing: walk.getattr(intern!(py, "sharing"))?.downcast_into()?,
            touching: walk.getattr(intern!(py, "touching"))?.downcast_into()?,
            by_name: walk.getattr(intern!(py, "by_name"))?.downcast_into()?,
            walk: walk.clone(),
            comp_name: comp.getattr(intern!(py, "name"))?,
            memory_leaves: memory_leaves.clone(),
            temp: PyString::new(py, "temp"),
            gpu: platform.as_deref() == Some("gpu"),
            tpu: platform.as_deref() == Some("tpu"),
            passed,
            leaves: HashMap::new(),
            arrays: HashMap::new(),
        };
        let value = walk.getattr(intern!(py, "value"))?;
        let mut classes: HashMap<String, Class> = HashMap::new();
        // (by the opcode's string object first: the parse makes one per distinct text, mostly;
        // each kept alive by the map so that its address stays its own)
        let mut seen: HashMap<usize, (PyObject, Class)> = HashMap::new();
        let instructions = comp.getattr(intern!(py, "instructions"))?;
        for (step, instr) in instructions.downcast::<PyList>()?.iter().enumerate() {
            let operands = instr.getattr(intern!(py, "operands"))?;
            for o in operands.try_iter()? {
                let o = o?;
                let ids = w
                    .values
                    .get_item(&o)?
                    .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(o.unbind()))?;
                let ids = ids.downcast::<PyList>()?;
                let mut store = w.buffers.borrow_mut();
                for b in ids.iter() {
                    let b: i64 = b.extract()?;
                    if b >= 0 {
                        // (steps only grow: this read is the latest so far)
                        *store.last_use.get_mut(b as usize).ok_or_else(|| {
                            pyo3::exceptions::PyIndexError::new_err("list index out of range")
                        })? = step as i64;
                    }
                }
            }
            let op = instr.getattr(intern!(py, "opcode"))?;
            let class = if let Some((_, c)) = seen.get(&(op.as_ptr() as usize)) {
                *c
            } else {
                let op_text = op.downcast::<PyString>()?.to_str()?;
                let class = match classes.get(op_text) {
                    Some(&c) => c,
                    None => {
                        let c = if plain.call1((&op,))?.is_truthy()? {
                            Class::Plain
                        } else if share_ops.contains(&op)? {
                            Class::Shares
                        } else {
                            Class::Other
                        };
                        classes.insert(op_text.to_string(), c);
                        c
                    }
                };
                seen.insert(op.as_ptr() as usize, (op.clone().unbind(), class));
                class
            };
            let name = instr.getattr(intern!(py, "name"))?;
            let ids = if class == Class::Other {
                value.call1((&instr, step))?
            } else {
                // (the shape first where the Python walk asks it first: `shape.is_array`)
                let shape = if class == Class::Shares {
                    Some(shape_of(py, &instr)?)
                } else {
                    None
                };
                let array = match &shape {
                    Some(s) => w.array(s)?.0,
                    None => true,
                };
                if array && unaliased(py, &instr)? {
                    let shape = match shape {
                        Some(s) => s,
                        None => shape_of(py, &instr)?,
                    };
                    if class == Class::Plain {
                        w.new_value(&shape, &name, step)?
                    } else {
                        w.shared(&shape, &name, &operands, step)?
                    }
                } else {
                    value.call1((&instr, step))?
                }
            };
            w.values.set_item(&name, ids)?;
        }
        Ok(())
    }))
    .unwrap_or_else(|_| {
        Err(pyo3::exceptions::PyRuntimeError::new_err(
            "hloscope_native: internal error in walk_steps",
        ))
    })
}
