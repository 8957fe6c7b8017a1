//! The per-page decision's bookkeeping, natively: the page record's binary codec (formats 2 and 3
//! of `recrawl.PageRecord.to_bytes`), the schedule's numbers as a record keeps them
//! (`schedule.ScheduleState.numbers`: CPython's `round(x, 3)`, `round(x, 4)` and `.6g`) and the
//! schedule state read from them (`recrawl._state`).
//!
//! Each function handles the common case and answers `None` for anything else (an int where a
//! float is expected, a 128-bit fingerprint, a record that does not parse, a number whose
//! rounding needs more than exact 128-bit arithmetic): the caller then runs the Python code,
//! which is the reference. Where it answers, the answer is the Python code's, bit for bit
//! (`tests/test_native_decision.py` compares the two on random records).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyString, PyTuple};

/// Format 2's and 3's first byte.
const V2: u8 = 2;
const V3: u8 = 3;
/// `recrawl._HEAD`: format, flags, width, history length, three times, two counts.
const HEAD: usize = 3 + 2 + 3 * 8 + 2 * 8;
/// `recrawl._SCHEDULE_HEAD`: 6 floats, 2 ints, 3 floats, probe, the length of recent.
const SCHEDULE_HEAD: usize = 6 * 8 + 2 * 8 + 3 * 8 + 8 + 2;
const GONE: u8 = 1;
const DUPLICATE_OF: u8 = 2;
const NEXT_DUE: u8 = 4;
/// The texts' flags in their order: duplicate_of, etag, last_modified, moved_to.
const TEXTS: [u8; 4] = [DUPLICATE_OF, 8, 16, 32];
const SCHEDULE: u8 = 64;
/// `recrawl._VISIBLE_KEY`: the visible key (`u64`) follows the schedule.
const VISIBLE_KEY: u8 = 128;
/// `sketch.SKETCH_BYTES`
const SKETCH: usize = 128;

/// CPython's `round(x, digits)` of a float (digits 3 or 4): the decimal nearest `x`'s exact
/// binary value, ties to even, read back as the float nearest it. `None` where that needs more
/// than this exact arithmetic (not finite, `|x| * 10**digits` near or above 2**53).
pub(crate) fn round_decimal(x: f64, digits: u32) -> Option<f64> {
    let scale = 10u64.pow(digits);
    if !x.is_finite() || x.abs() * scale as f64 >= 4.0e15 {
        return None;
    }
    let bits = x.to_bits();
    let negative = bits >> 63 == 1;
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mantissa, e) = if exponent == 0 {
        (fraction, -1074)
    } else {
        (fraction | 1u64 << 52, exponent - 1075)
    };
    if mantissa == 0 || e >= 0 {
        return Some(x); // zero (either sign) or a whole number
    }
    // x * scale = mantissa * scale / 2**s exactly; q its nearest integer, ties to even.
    let num = mantissa as u128 * scale as u128;
    let s = (-e) as u32;
    let q = if s >= 127 {
        0 // num < 2**67: below one half
    } else {
        let q = num >> s;
        let rest = num & ((1u128 << s) - 1);
        let half = 1u128 << (s - 1);
        if rest > half || (rest == half && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    };
    // q < 2**53 and scale are exact floats: the quotient is the float nearest q / scale, as
    // CPython's strtod of the decimal gives it.
    let value = q as f64 / scale as f64;
    Some(if negative { -value } else { value })
}

/// `float(f"{x:.6g}")`: the float nearest the 6-significant-digit decimal nearest `x` (Rust's
/// exact formatting rounds ties to even, as CPython's); `None` when not finite.
fn significant6(x: f64) -> Option<f64> {
    if !x.is_finite() {
        return None;
    }
    format!("{x:.5e}").parse().ok()
}

/// The value of an exact Python float, else `None` (an int, a bool, a subclass).
fn float_of(obj: &Bound<'_, PyAny>) -> Option<f64> {
    obj.cast_exact::<PyFloat>().ok().map(|f| f.value())
}

/// The value of an exact Python int in `i64`, else `None` (a bool, a float, out of range).
fn int_of(obj: &Bound<'_, PyAny>) -> Option<i64> {
    if obj.is_exact_instance_of::<PyInt>() {
        obj.extract::<i64>().ok()
    } else {
        None
    }
}

fn round3(obj: &Bound<'_, PyAny>) -> Option<f64> {
    round_decimal(float_of(obj)?, 3)
}

/// A schedule's first 12 numbers, each with its float's value (`schedule_head`).
type Head<'py> = Vec<(Bound<'py, PyAny>, f64)>;

/// The first 12 of a schedule's 13 numbers (`ScheduleState.numbers`' order: the counts `fetches`
/// and `changes` at 6 and 7, floats elsewhere, `recent` last), each with its float's value (0.0
/// for the counts); `None` unless `t` has 13 items, the counts exact ints and the others exact floats.
fn schedule_head<'py>(t: &Bound<'py, PyTuple>) -> PyResult<Option<Head<'py>>> {
    if t.len() != 13 {
        return Ok(None);
    }
    let mut head = Vec::with_capacity(12);
    for i in 0..12 {
        let item = t.get_item(i)?;
        let value = if i == 6 || i == 7 {
            int_of(&item).map(|_| 0.0)
        } else {
            float_of(&item)
        };
        let Some(value) = value else { return Ok(None) };
        head.push((item, value));
    }
    Ok(Some(head))
}

/// `ScheduleState.numbers()` of a state's fields `(last_fetch, last_change, interval, next_due,
/// rate, size, fetches, changes, old_changes, old_changed_secs, old_unchanged_secs, probe,
/// recent)`, each float rounded as it does; `None` unless every float is a float, the counts ints and `recent` pairs of
/// floats (the caller's `_schedule_of` then knows that format 2 holds them).
#[pyfunction]
pub(crate) fn schedule_numbers<'py>(
    py: Python<'py>,
    fields: &Bound<'py, PyTuple>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let Some(head) = schedule_head(fields)? else {
        return Ok(None);
    };
    let mut items: Vec<Bound<'py, PyAny>> = Vec::with_capacity(13);
    for (i, (item, v)) in head.into_iter().enumerate() {
        let rounded = match i {
            6 | 7 => {
                items.push(item); // fetches, changes
                continue;
            }
            4 => significant6(v),     // rate
            8 => round_decimal(v, 4), // old_changes
            _ => round_decimal(v, 3),
        };
        let Some(v) = rounded else { return Ok(None) };
        items.push(PyFloat::new(py, v).into_any());
    }
    let recent = fields.get_item(12)?;
    let Ok(recent) = recent.cast_exact::<PyTuple>() else {
        return Ok(None);
    };
    let mut flat = Vec::with_capacity(2 * recent.len());
    for pair in recent.iter() {
        let Ok(pair) = pair.cast_exact::<PyTuple>() else {
            return Ok(None);
        };
        if pair.len() != 2 {
            return Ok(None);
        }
        for x in pair.iter() {
            let Some(rounded) = round3(&x) else { return Ok(None) };
            flat.push(rounded);
        }
    }
    items.push(PyTuple::new(py, flat)?.into_any());
    Ok(Some(PyTuple::new(py, items)?))
}

/// `recrawl._state` of a `_Schedule`'s numbers (`ScheduleState.numbers`' order): the
/// `ScheduleState`'s fields as a dict (`recent` as pairs), the numbers themselves, when they are
/// of format 2's types and pass `ScheduleState.from_dict`'s checks (finite, `interval > 0`, no
/// negative rate, size or folded observation); `None` otherwise (the Python code decides).
#[pyfunction]
pub(crate) fn schedule_state<'py>(
    py: Python<'py>,
    numbers: &Bound<'py, PyTuple>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(head) = schedule_head(numbers)? else {
        return Ok(None);
    };
    let values: Vec<f64> = head.iter().map(|(_, v)| *v).collect();
    // last_fetch, interval, rate, size and old x 3 finite; interval > 0; rate, size, old >= 0
    let checked = [0, 2, 4, 5, 8, 9, 10];
    if !checked.iter().all(|&i| values[i].is_finite())
        || values[2] <= 0.0
        || !checked[2..].iter().all(|&i| values[i] >= 0.0)
    {
        return Ok(None);
    }
    let flat = numbers.get_item(12)?;
    let Ok(flat) = flat.cast_exact::<PyTuple>() else {
        return Ok(None);
    };
    if flat.len() % 2 != 0 {
        return Ok(None);
    }
    let mut pairs = Vec::with_capacity(flat.len() / 2);
    for i in (0..flat.len()).step_by(2) {
        let (elapsed, size) = (flat.get_item(i)?, flat.get_item(i + 1)?);
        if float_of(&elapsed).is_none() || float_of(&size).is_none() {
            return Ok(None);
        }
        pairs.push(PyTuple::new(py, [elapsed, size])?);
    }
    let state = PyDict::new(py);
    let names = [
        intern!(py, "last_fetch"),
        intern!(py, "last_change"),
        intern!(py, "interval"),
        intern!(py, "next_due"),
        intern!(py, "rate"),
        intern!(py, "size"),
        intern!(py, "fetches"),
        intern!(py, "changes"),
    ];
    for (i, name) in names.into_iter().enumerate() {
        state.set_item(name, numbers.get_item(i)?)?;
    }
    state.set_item(intern!(py, "recent"), PyTuple::new(py, pairs)?)?;
    state.set_item(intern!(py, "old_changes"), numbers.get_item(8)?)?;
    state.set_item(intern!(py, "old_changed_secs"), numbers.get_item(9)?)?;
    state.set_item(intern!(py, "old_unchanged_secs"), numbers.get_item(10)?)?;
    state.set_item(intern!(py, "probe"), numbers.get_item(11)?)?;
    Ok(Some(state))
}

/// `PageRecord._pack` (with the sketch of format 3) of a record's fields in `PageRecord`'s order
/// (`first_seen`, `last_fetched`, `last_changed`, `fetch_count`, `change_count`, `history`,
/// `duplicate_of`, `next_due`, `schedule`, `etag`, `last_modified`, `gone`, `moved_to`, `sketch`,
/// `visible_key`),
/// the schedule given as its numbers (`_Schedule.numbers`, or `None` for none); `None` for
/// anything but the common case: 64-bit fingerprints, floats, ints and strings where format 2 has
/// them, a change distance of at least 0 or none.
#[pyfunction]
pub(crate) fn pack_record<'py>(
    py: Python<'py>,
    fields: &Bound<'py, PyTuple>,
    schedule: Option<&Bound<'py, PyTuple>>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    if fields.len() != 15 {
        return Ok(None);
    }
    let get = |i: usize| fields.get_item(i);
    let mut times = [0.0f64; 3];
    for (i, t) in times.iter_mut().enumerate() {
        let Some(v) = round3(&get(i)?) else { return Ok(None) };
        *t = v;
    }
    let (Some(fetch_count), Some(change_count)) = (int_of(&get(3)?), int_of(&get(4)?)) else {
        return Ok(None);
    };
    let history = get(5)?;
    let Ok(history) = history.cast_exact::<PyTuple>() else {
        return Ok(None);
    };
    let n = history.len();
    if n > u16::MAX as usize {
        return Ok(None);
    }
    let mut fps = Vec::with_capacity(n);
    let mut distances = Vec::with_capacity(n);
    for entry in history.iter() {
        let Ok(entry) = entry.cast_exact::<PyTuple>() else {
            return Ok(None);
        };
        if entry.len() != 2 {
            return Ok(None);
        }
        let fp = entry.get_item(0)?;
        if !fp.is_exact_instance_of::<PyInt>() {
            return Ok(None);
        }
        let Ok(fp) = fp.extract::<u64>() else { return Ok(None) }; // negative or 128-bit: Python's
        let distance = entry.get_item(1)?;
        let distance = if distance.is_none() {
            -1
        } else {
            match int_of(&distance) {
                Some(d) if (0..=i32::MAX as i64).contains(&d) => d as i32,
                _ => return Ok(None), // -1 (format 1 keeps it), out of range, not an int
            }
        };
        fps.push(fp);
        distances.push(distance);
    }
    let gone = get(11)?;
    let Ok(gone) = gone.cast_exact::<PyBool>() else {
        return Ok(None);
    };
    let mut flags = if gone.is_true() { GONE } else { 0 };
    let mut tail: Vec<u8> = Vec::with_capacity(512);
    let next_due = get(7)?;
    if !next_due.is_none() {
        let Some(due) = round3(&next_due) else { return Ok(None) };
        flags |= NEXT_DUE;
        tail.extend_from_slice(&due.to_le_bytes());
    }
    for (flag, i) in TEXTS.into_iter().zip([6, 9, 10, 12]) {
        let text = get(i)?;
        if text.is_none() {
            continue;
        }
        let Ok(text) = text.cast_exact::<PyString>() else {
            return Ok(None);
        };
        let Ok(text) = text.to_str() else { return Ok(None) }; // lone surrogates: Python raises
        let Ok(size) = u32::try_from(text.len()) else {
            return Ok(None);
        };
        flags |= flag;
        tail.extend_from_slice(&size.to_le_bytes());
        tail.extend_from_slice(text.as_bytes());
    }
    if !get(8)?.is_none() {
        let Some(numbers) = schedule else { return Ok(None) };
        if !pack_schedule(numbers, &mut tail)? {
            return Ok(None);
        }
        flags |= SCHEDULE;
    }
    let visible = get(14)?;
    if !visible.is_none() {
        if !visible.is_exact_instance_of::<PyInt>() {
            return Ok(None);
        }
        // out of range: Python's
        let Ok(key) = visible.extract::<u64>() else {
            return Ok(None);
        };
        flags |= VISIBLE_KEY;
        tail.extend_from_slice(&key.to_le_bytes());
    }
    let sketch = get(13)?;
    let format = if sketch.is_none() {
        V2
    } else {
        let Ok(sketch) = sketch.cast_exact::<PyBytes>() else {
            return Ok(None);
        };
        if sketch.as_bytes().len() == SKETCH {
            tail.extend_from_slice(sketch.as_bytes());
            V3
        } else {
            V2 // to_bytes keeps only a sketch of SKETCH bytes
        }
    };
    let mut out: Vec<u8> = Vec::with_capacity(HEAD + 12 * n + tail.len());
    out.extend_from_slice(&[format, flags, 8]);
    out.extend_from_slice(&(n as u16).to_le_bytes());
    for t in times {
        out.extend_from_slice(&t.to_le_bytes());
    }
    out.extend_from_slice(&fetch_count.to_le_bytes());
    out.extend_from_slice(&change_count.to_le_bytes());
    for fp in fps {
        out.extend_from_slice(&fp.to_be_bytes());
    }
    for d in distances {
        out.extend_from_slice(&d.to_le_bytes());
    }
    out.extend_from_slice(&tail);
    Ok(Some(PyBytes::new(py, &out)))
}

/// `recrawl._pack_schedule` of a `_Schedule`'s numbers; `false` where format 2 cannot hold them
/// or they are not of `ScheduleState.numbers`' types (the caller takes the Python path).
fn pack_schedule(numbers: &Bound<'_, PyTuple>, out: &mut Vec<u8>) -> PyResult<bool> {
    if numbers.len() != 13 {
        return Ok(false);
    }
    for i in 0..12 {
        let item = numbers.get_item(i)?;
        let bytes = if i == 6 || i == 7 {
            match int_of(&item) {
                Some(v) => v.to_le_bytes(),
                None => return Ok(false),
            }
        } else {
            match float_of(&item) {
                Some(v) => v.to_le_bytes(),
                None => return Ok(false),
            }
        };
        out.extend_from_slice(&bytes);
    }
    let flat = numbers.get_item(12)?;
    let Ok(flat) = flat.cast_exact::<PyTuple>() else {
        return Ok(false);
    };
    if flat.len() % 2 != 0 || flat.len() / 2 > u16::MAX as usize {
        return Ok(false);
    }
    out.extend_from_slice(&((flat.len() / 2) as u16).to_le_bytes());
    for x in flat.iter() {
        let Some(v) = float_of(&x) else { return Ok(false) };
        out.extend_from_slice(&v.to_le_bytes());
    }
    Ok(true)
}

/// Little-endian reads that fail past the end.
struct Reader<'a> {
    raw: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.raw.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
}

/// `PageRecord.from_bytes` of a format 2 or 3 record with 64-bit fingerprints: the fields in
/// `PageRecord`'s order, the schedule as its numbers (`_Schedule.numbers`, or `None`); `None`
/// for anything else (other formats, 128-bit fingerprints, a record that does not parse: the
/// Python code then says why).
#[pyfunction]
pub(crate) fn unpack_record<'py>(py: Python<'py>, raw: &Bound<'py, PyBytes>) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let raw = raw.as_bytes();
    let (body, sketch) = match raw.first() {
        Some(&V2) => (raw, None),
        Some(&V3) if raw.len() > SKETCH => (&raw[..raw.len() - SKETCH], Some(&raw[raw.len() - SKETCH..])),
        _ => return Ok(None),
    };
    let Some(fields) = unpack_fields(body) else {
        return Ok(None);
    };
    let Unpacked {
        times,
        counts,
        fps,
        distances,
        next_due,
        texts,
        gone,
        schedule,
        visible,
    } = fields;
    let f = |v: f64| PyFloat::new(py, v).into_any();
    let history = fps
        .iter()
        .zip(&distances)
        .map(|(&fp, &d)| {
            let d = if d == -1 {
                py.None().into_bound(py)
            } else {
                d.into_pyobject(py)?.into_any()
            };
            PyTuple::new(py, [fp.into_pyobject(py)?.into_any(), d])
        })
        .collect::<PyResult<Vec<_>>>()?;
    let text = |t: Option<&str>| match t {
        Some(t) => PyString::new(py, t).into_any(),
        None => py.None().into_bound(py),
    };
    let schedule = match schedule {
        None => py.None().into_bound(py),
        Some((floats, ints, flat)) => {
            let mut items: Vec<Bound<'py, PyAny>> = Vec::with_capacity(13);
            items.extend(floats[..6].iter().map(|&v| f(v)));
            items.push(ints[0].into_pyobject(py)?.into_any());
            items.push(ints[1].into_pyobject(py)?.into_any());
            items.extend(floats[6..].iter().map(|&v| f(v)));
            items.push(PyTuple::new(py, flat)?.into_any());
            PyTuple::new(py, items)?.into_any()
        }
    };
    let items: [Bound<'py, PyAny>; 15] = [
        f(times[0]),
        f(times[1]),
        f(times[2]),
        counts[0].into_pyobject(py)?.into_any(),
        counts[1].into_pyobject(py)?.into_any(),
        PyTuple::new(py, history)?.into_any(),
        text(texts[0]),
        match next_due {
            Some(v) => f(v),
            None => py.None().into_bound(py),
        },
        schedule,
        text(texts[1]),
        text(texts[2]),
        PyBool::new(py, gone).to_owned().into_any(),
        text(texts[3]),
        match sketch {
            Some(s) => PyBytes::new(py, s).into_any(),
            None => py.None().into_bound(py),
        },
        match visible {
            Some(v) => v.into_pyobject(py)?.into_any(),
            None => py.None().into_bound(py),
        },
    ];
    Ok(Some(PyTuple::new(py, items)?))
}

/// A schedule's numbers as format 2 keeps them: 10 floats (last_fetch .. size, old x 3, probe),
/// fetches and changes, recent's pairs one after the other.
type ScheduleNumbers = ([f64; 10], [i64; 2], Vec<f64>);

struct Unpacked<'a> {
    times: [f64; 3],
    counts: [i64; 2],
    fps: Vec<u64>,
    distances: Vec<i32>,
    next_due: Option<f64>,
    texts: [Option<&'a str>; 4],
    gone: bool,
    schedule: Option<ScheduleNumbers>,
    visible: Option<u64>,
}

fn unpack_fields(raw: &[u8]) -> Option<Unpacked<'_>> {
    let mut r = Reader { raw, at: 1 };
    let flags = r.take(1)?[0];
    let width = r.take(1)?[0];
    if width != 8 {
        return None;
    }
    let n = r.u16()? as usize;
    let times = [r.f64()?, r.f64()?, r.f64()?];
    let counts = [r.i64()?, r.i64()?];
    let fps = r
        .take(8 * n)?
        .chunks_exact(8)
        .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
        .collect();
    let distances = r
        .take(4 * n)?
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let next_due = if flags & NEXT_DUE != 0 { Some(r.f64()?) } else { None };
    let mut texts = [None; 4];
    for (slot, flag) in texts.iter_mut().zip(TEXTS) {
        if flags & flag != 0 {
            let size = r.u32()? as usize;
            *slot = Some(std::str::from_utf8(r.take(size)?).ok()?);
        }
    }
    let schedule = if flags & SCHEDULE != 0 {
        let head = r.take(SCHEDULE_HEAD)?;
        let word = |i: usize| -> [u8; 8] { head[8 * i..8 * i + 8].try_into().unwrap() };
        let mut floats = [0.0f64; 10];
        for (slot, i) in floats.iter_mut().zip([0, 1, 2, 3, 4, 5, 8, 9, 10, 11]) {
            *slot = f64::from_le_bytes(word(i));
        }
        let ints = [i64::from_le_bytes(word(6)), i64::from_le_bytes(word(7))];
        let pairs = u16::from_le_bytes(head[96..98].try_into().unwrap()) as usize;
        let flat = r
            .take(16 * pairs)?
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        Some((floats, ints, flat))
    } else {
        None
    };
    let visible = if flags & VISIBLE_KEY != 0 {
        Some(u64::from_le_bytes(r.take(8)?.try_into().ok()?))
    } else {
        None
    };
    if r.at != raw.len() {
        return None;
    }
    Some(Unpacked {
        times,
        counts,
        fps,
        distances,
        next_due,
        texts,
        gone: flags & GONE != 0,
        schedule,
        visible,
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(schedule_numbers, m)?)?;
    m.add_function(wrap_pyfunction!(schedule_state, m)?)?;
    m.add_function(wrap_pyfunction!(pack_record, m)?)?;
    m.add_function(wrap_pyfunction!(unpack_record, m)?)?;
    Ok(())
}

/// The rounding and the codec's reader against the Python reference: the expected values were
/// computed once with CPython (`round(x, 3)`, `round(x, 4)`, `float(f"{x:.6g}")`, and
/// `PageRecord.to_bytes()` on the Python path of records built there) and pasted here.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_cpythons() {
        // (x, round(x, 3), round(x, 4), float(f"{x:.6g}")); round(x, 4) None: x * 10**4 is past
        // exact arithmetic here (Python's round(1e12 + 0.0005, 4) is 1000000000000.0005)
        let cases: [(f64, f64, Option<f64>, f64); 10] = [
            (0.0005, 0.001, Some(0.0005), 0.0005),
            (0.0015, 0.002, Some(0.0015), 0.0015),
            (1.0005, 1.0, Some(1.0005), 1.0005),
            (2.675, 2.675, Some(2.675), 2.675),
            (-0.0005, -0.001, Some(-0.0005), -0.0005),
            (123456.7895, 123456.789, Some(123456.7895), 123457.0),
            (1e-300, 0.0, Some(0.0), 1e-300),
            (5e-324, 0.0, Some(0.0), 5e-324),
            (0.1 + 0.2, 0.3, Some(0.3), 0.3),
            (1e12 + 0.0005, 1e12, None, 1e12),
        ];
        for (x, r3, r4, g6) in cases {
            assert_eq!(
                round_decimal(x, 3).map(f64::to_bits),
                Some(r3.to_bits()),
                "round({x}, 3)"
            );
            assert_eq!(
                round_decimal(x, 4).map(f64::to_bits),
                r4.map(f64::to_bits),
                "round({x}, 4)"
            );
            assert_eq!(significant6(x).map(f64::to_bits), Some(g6.to_bits()), "{x}:.6g");
        }
        // Past exact arithmetic, or not finite: no answer (the Python code runs).
        for x in [f64::NAN, f64::INFINITY, 4.0e12, -1e300] {
            assert_eq!(round_decimal(x, 3), None, "{x}");
        }
        assert_eq!(round_decimal(-0.0, 3).map(f64::to_bits), Some((-0.0f64).to_bits()));
        assert_eq!(significant6(f64::NAN), None);
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn unpack_reads_pythons_records() {
        // PageRecord(first_seen=1.5, last_fetched=2.25, last_changed=2.0, fetch_count=3,
        // change_count=1, history=((0x0123456789abcdef, None), (42, 7)), duplicate_of="https://a/é",
        // etag='"x"', gone=True, visible_key=99).to_bytes()
        let raw = hex(
            "028b080200000000000000f83f00000000000002400000000000000040030000000000000001000000000000000123456789\
             abcdef000000000000002affffffff070000000c00000068747470733a2f2f612fc3a9030000002278226300000000000000",
        );
        let u = unpack_fields(&raw).expect("a format 2 record");
        assert_eq!(u.times, [1.5, 2.25, 2.0]);
        assert_eq!(u.counts, [3, 1]);
        assert_eq!(u.fps, [0x0123456789abcdef, 42]);
        assert_eq!(u.distances, [-1, 7]);
        assert_eq!(u.texts, [Some("https://a/é"), Some("\"x\""), None, None]);
        assert!(u.gone && u.next_due.is_none() && u.schedule.is_none());
        assert_eq!(u.visible, Some(99));
        // A byte more, a byte less, another width: no record.
        assert!(unpack_fields(&[&raw[..], &[0]].concat()).is_none());
        assert!(unpack_fields(&raw[..raw.len() - 1]).is_none());
        let mut wide = raw.clone();
        wide[2] = 16;
        assert!(unpack_fields(&wide).is_none());
        assert!(unpack_fields(&raw[..1]).is_none());
    }

    #[test]
    fn unpack_reads_a_schedule() {
        // a record with history ((5, None),), next_due=3610.0 and the schedule of
        // ScheduleState(last_fetch=10.0, last_change=5.0, interval=3600.0, next_due=3610.0,
        // rate=0.5, size=2.0, fetches=4, changes=2, recent=((1.0, 2.0),), old_changes=0.25,
        // old_changed_secs=7.0, old_unchanged_secs=8.0, probe=0.0)
        let raw = hex(
            "0244080100000000000000f03f000000000000f03f000000000000f03f010000000000000000000000000000000000000000\
             000005ffffffff000000000034ac4000000000000024400000000000001440000000000020ac40000000000034ac40000000\
             000000e03f000000000000004004000000000000000200000000000000000000000000d03f0000000000001c400000000000\
             00204000000000000000000100000000000000f03f0000000000000040",
        );
        let u = unpack_fields(&raw).expect("a format 2 record");
        assert_eq!(u.next_due, Some(3610.0));
        let (floats, ints, recent) = u.schedule.expect("a schedule");
        assert_eq!(floats, [10.0, 5.0, 3600.0, 3610.0, 0.5, 2.0, 0.25, 7.0, 8.0, 0.0]);
        assert_eq!(ints, [4, 2]);
        assert_eq!(recent, [1.0, 2.0]);
    }
}
