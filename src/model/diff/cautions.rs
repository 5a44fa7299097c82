//! Cautions a comparison earns from what its sides share.

use crate::model::profile::Profile;

/// Below this share of a side's value in functions the other side also has,
/// a comparison mostly says that names differ.
const SHARED_SHARE: f64 = 0.5;

/// A caution when the sides share no function, or when less than
/// [`SHARED_SHARE`] of a side's value is in functions (leaf frames) the other
/// side also has anywhere in its stacks. `acc` holds each stack's values,
/// `ncols` wide, row 0 the samples without a stack. O(stacks).
pub(super) fn shared_frames(
    out: &Profile,
    acc: &[i64],
    ncols: usize,
    names: &[String; 2],
) -> Option<String> {
    let n = out.stacks.len();
    let prefixes = out.stacks.prefixes();
    let frames = out.stacks.frames();
    // Which stacks each side reaches (its own or a descendant's samples):
    // a prefix's id is below its children's, so one backward pass carries it.
    let mut reached = [vec![false; n], vec![false; n]];
    for s in (0..n).rev() {
        for side in 0..2 {
            if acc[(s + 1) * ncols + side] != 0 {
                reached[side][s] = true;
            }
            let p = prefixes[s];
            if reached[side][s] && p != crate::model::stacks::NO_PREFIX {
                reached[side][p as usize] = true;
            }
        }
    }
    let mut has = [vec![false; out.frames.len()], vec![false; out.frames.len()]];
    for s in 0..n {
        for side in 0..2 {
            if reached[side][s] {
                has[side][frames[s].0 as usize] = true;
            }
        }
    }
    let common = (0..out.frames.len())
        .filter(|&f| has[0][f] && has[1][f])
        .count();
    if common == 0 {
        return Some(format!(
            "{} and {} share no function: every frame is new or gone (another program, \
             or names that differ: --strip-hex, --granularity)",
            names[0], names[1]
        ));
    }
    // Per side, the share of its value whose function the other side has.
    let mut shared = [0f64; 2];
    let mut total = [0f64; 2];
    for s in 0..n {
        let f = frames[s].0 as usize;
        for side in 0..2 {
            let v = acc[(s + 1) * ncols + side].unsigned_abs() as f64;
            total[side] += v;
            if has[1 - side][f] {
                shared[side] += v;
            }
        }
    }
    let low = (0..2)
        .filter(|&i| total[i] > 0.0 && shared[i] / total[i] < SHARED_SHARE)
        .min_by(|&a, &b| (shared[a] / total[a]).total_cmp(&(shared[b] / total[b])))?;
    Some(format!(
        "only {:.0}% of {}'s total is in functions {} also has: most of the difference is \
         in names, not time",
        100.0 * shared[low] / total[low],
        names[low],
        names[1 - low]
    ))
}
