//! Temporaries placed in output buffers (issue #37 point 4: a hot analysis moved into the
//! core). The same first-fit as `hloscope/cost/placement.py`'s `_assign` with
//! `hloscope/cost/sharing.py`'s `first_fit`, which stay the specification and the plain
//! route: on a 30 MB training step (thousands of outputs, ten thousand temporaries) their
//! Python loop was half of all lint time (H012).
//!
//! Each output holds step ranges kept sorted by start (they never overlap): the ranges
//! `held` gives (a chain written in place into it), then the output itself from its
//! definition on. Temporaries come largest first; each goes into the first output, in
//! `order`, that is at least its size, is written after its last use, and has room over
//! its steps. A range may begin on the step where one before it ends, or end where the
//! next begins, when `touch` pairs their buffers (a value written into the other's buffer).

use std::collections::HashSet;

/// One temporary: (bytes, first step, last step, its buffer id or -1).
pub type Temp = (i64, i64, i64, i64);

/// A temporary's range fell past every range of an output (its first step after its last:
/// Python's bisect would index past the end there).
#[derive(Debug, PartialEq, Eq)]
pub struct OutOfRange;

const FOREVER: i64 = 1 << 62;

pub struct Outputs<'a> {
    pub bytes: &'a [i64],
    pub defined: &'a [i64],
    pub held: &'a [Vec<(i64, i64)>],
    pub ids: &'a [i64],
}

/// Whether each temporary was placed, in the order given.
pub fn assign(
    outputs: &Outputs,
    order: &[usize],
    temps: &[Temp],
    touch: &HashSet<(i64, i64)>,
    run: usize,
) -> Result<Vec<bool>, OutOfRange> {
    let n = outputs.bytes.len();
    let defined = outputs.defined;
    let mut starts: Vec<Vec<i64>> = outputs
        .held
        .iter()
        .zip(defined)
        .map(|(h, &d)| h.iter().map(|r| r.0).chain([d]).collect())
        .collect();
    let mut ends: Vec<Vec<i64>> = outputs
        .held
        .iter()
        .map(|h| h.iter().map(|r| r.1).chain([FOREVER]).collect())
        .collect();
    let mut owners: Vec<Vec<i64>> = outputs
        .held
        .iter()
        .zip(outputs.ids)
        .map(|(h, &k)| std::iter::repeat_n(-1, h.len()).chain([k]).collect())
        .collect();
    let mut rank = vec![0usize; n];
    for (r, &k) in order.iter().enumerate() {
        rank[k] = r;
    }
    let mut by_size: Vec<usize> = (0..n).collect();
    by_size.sort_by_key(|&k| std::cmp::Reverse(outputs.bytes[k])); // (stable, as Python's)
    let mut eligible: Vec<usize> = Vec::new();
    let mut runs: Vec<(i64, Vec<usize>)> = Vec::new();
    let mut added = 0;
    let touching = !touch.is_empty();
    let mut placed = Vec::with_capacity(temps.len());
    for &(size, first, last, me) in temps {
        let grew = added;
        while added < n && outputs.bytes[by_size[added]] >= size {
            let k = by_size[added];
            let at = eligible.partition_point(|&e| rank[e] <= rank[k]);
            eligible.insert(at, k);
            added += 1;
        }
        if added > grew {
            runs = eligible
                .chunks(run.max(1))
                .map(|c| {
                    (
                        c.iter().map(|&k| defined[k]).max().unwrap_or(i64::MIN),
                        c.to_vec(),
                    )
                })
                .collect();
        }
        let mut fit = false;
        'runs: for (latest, members) in &runs {
            if *latest < last || (*latest == last && !touching) {
                continue;
            }
            for &k in members {
                if defined[k] < last || (defined[k] == last && !touching) {
                    continue;
                }
                let (s, e, o) = (&mut starts[k], &mut ends[k], &mut owners[k]);
                let at = s.partition_point(|&x| x < first);
                let before = at == 0
                    || e[at - 1] < first
                    || (e[at - 1] == first && touch.contains(&(o[at - 1], me)));
                if at >= s.len() {
                    return Err(OutOfRange);
                }
                let after = s[at] > last || (s[at] == last && touch.contains(&(me, o[at])));
                if before && after {
                    s.insert(at, first);
                    e.insert(at, last);
                    o.insert(at, me);
                    fit = true;
                    break 'runs;
                }
            }
        }
        placed.push(fit);
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outs<'a>(
        bytes: &'a [i64],
        defined: &'a [i64],
        held: &'a [Vec<(i64, i64)>],
        ids: &'a [i64],
    ) -> Outputs<'a> {
        Outputs {
            bytes,
            defined,
            held,
            ids,
        }
    }

    #[test]
    fn a_temporary_goes_into_the_first_output_written_after_it() {
        // two outputs of 100 bytes written at steps 10 and 20; in that order, a temporary
        // living over 2..5 goes in the first, one over 3..12 only in the second (the first
        // is written at 10), one over 4..6 fits neither any more, one over 13..25 outlives both
        let held = vec![vec![], vec![]];
        let o = outs(&[100, 100], &[10, 20], &held, &[0, 1]);
        let temps = [
            (50, 2, 5, -1),
            (50, 3, 12, -1),
            (50, 4, 6, -1),
            (50, 13, 25, -1),
        ];
        let got = assign(&o, &[0, 1], &temps, &HashSet::new(), 32).unwrap();
        assert_eq!(got, vec![true, true, false, false]);
    }

    #[test]
    fn too_big_or_touching_steps() {
        let held = vec![vec![(0, 3)]];
        let o = outs(&[64], &[10], &held, &[7]);
        // 3..5 starts where the held range ends: only when their buffers touch
        // (temporaries come largest first: 65 bytes is more than the output holds)
        let plain = assign(
            &o,
            &[0],
            &[(65, 6, 7, -1), (64, 3, 5, 2)],
            &HashSet::new(),
            32,
        )
        .unwrap();
        assert_eq!(plain, vec![false, false]);
        let touch: HashSet<(i64, i64)> = [(-1, 2)].into_iter().collect();
        assert_eq!(
            assign(&o, &[0], &[(64, 3, 5, 2)], &touch, 32).unwrap(),
            vec![true]
        );
    }

    #[test]
    fn a_range_past_every_other_is_refused_as_python_would() {
        let held = vec![vec![]];
        let o = outs(&[64], &[10], &held, &[0]);
        let touch: HashSet<(i64, i64)> = [(5, 5)].into_iter().collect();
        assert_eq!(
            assign(&o, &[0], &[(8, 12, 10, -1)], &touch, 32),
            Err(OutOfRange)
        );
    }
}
