//! A tree's weights: sums of a value column per node, rolled up to the root.

use super::parent_index;
use crate::model::profile::Profile;

/// Each node's total: 4 bytes a node when every total fits (a sample count's
/// totals mostly do: 117 MB less for the 29M nodes of a 1M-line profile's
/// inverted view, and half the memory for the roll-up to go through), else 8.
#[derive(Clone, Debug)]
pub(super) enum Totals {
    Wide(Vec<i64>),
    Narrow(Vec<u32>),
}

impl Default for Totals {
    fn default() -> Self {
        Totals::Wide(Vec::new())
    }
}

impl Totals {
    #[inline]
    pub(super) fn get(&self, i: usize) -> i64 {
        match self {
            Totals::Wide(w) => w[i],
            Totals::Narrow(w) => i64::from(w[i]),
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            Totals::Wide(w) => w.len(),
            Totals::Narrow(w) => w.len(),
        }
    }

    /// The totals as 8 bytes a node, for code that swaps or replaces them.
    pub(super) fn wide_mut(&mut self) -> &mut Vec<i64> {
        if let Totals::Narrow(w) = self {
            *self = Totals::Wide(w.iter().map(|&t| i64::from(t)).collect());
        }
        match self {
            Totals::Wide(w) => w,
            Totals::Narrow(_) => unreachable!("made wide above"),
        }
    }

    /// Whether every node but the root has a positive total.
    pub(super) fn all_positive_below_root(&self) -> bool {
        match self {
            Totals::Wide(w) => w.iter().skip(1).all(|&t| t > 0),
            Totals::Narrow(w) => w.iter().skip(1).all(|&t| t > 0),
        }
    }
}

/// The totals of value column `idx` over `range`, whose values are all
/// positive ([`all_positive`]): narrow when their sum (the root's total, the
/// largest) fits in 4 bytes.
pub(super) fn positive_totals(
    profile: &Profile,
    range: std::ops::Range<usize>,
    idx: usize,
) -> Totals {
    let sum = column(profile, range.clone(), idx)
        .map(|(_, v)| v)
        .try_fold(0u32, |sum, v| sum.checked_add(u32::try_from(v).ok()?));
    match sum {
        Some(_) => {
            let mut w = column_self_as(profile, range, idx, |v| v as u32);
            roll_up(profile, &mut w);
            Totals::Narrow(w)
        }
        None => Totals::Wide(column_totals(profile, range, idx)),
    }
}

/// Whether every sample in `range` has a positive value `idx`.
pub(super) fn all_positive(profile: &Profile, range: &std::ops::Range<usize>, idx: usize) -> bool {
    let stride = profile.value_types.len().max(1);
    profile
        .samples
        .values
        .get(range.start * stride..range.end * stride)
        .is_some_and(|v| v.iter().skip(idx).step_by(stride).all(|&v| v > 0))
}

/// Per node (self, total) of value column `idx` over the samples in `range`.
pub(super) fn column_self_total(
    profile: &Profile,
    range: std::ops::Range<usize>,
    idx: usize,
) -> [Vec<i64>; 2] {
    let self_w = column_self(profile, range, idx);
    let mut total = self_w.clone();
    roll_up(profile, &mut total);
    [self_w, total]
}

/// Per node totals of value column `idx` over the samples in `range`.
pub(super) fn column_totals(
    profile: &Profile,
    range: std::ops::Range<usize>,
    idx: usize,
) -> Vec<i64> {
    let mut total = column_self(profile, range, idx);
    roll_up(profile, &mut total);
    total
}

/// Per node sums of value column `idx` over the samples in `range`, each on its
/// own stack's node (self weights).
pub(super) fn column_self(
    profile: &Profile,
    range: std::ops::Range<usize>,
    idx: usize,
) -> Vec<i64> {
    column_self_as(profile, range, idx, |v| v)
}

/// Each sample's node and value `idx`, over `range`.
fn column(
    profile: &Profile,
    range: std::ops::Range<usize>,
    idx: usize,
) -> impl Iterator<Item = (usize, i64)> + '_ {
    let stride = profile.value_types.len().max(1);
    let stacks = &profile.samples.stack[range.clone()];
    let values = profile.samples.values[range.start * stride..range.end * stride]
        .iter()
        .skip(idx)
        .step_by(stride);
    stacks
        .iter()
        .zip(values)
        .map(|(&s, &v)| (if s == u32::MAX { 0 } else { s as usize + 1 }, v))
}

fn column_self_as<T: Copy + Default + std::ops::AddAssign>(
    profile: &Profile,
    range: std::ops::Range<usize>,
    idx: usize,
    as_t: impl Fn(i64) -> T,
) -> Vec<T> {
    let mut out = crate::host::alloc::zeros_written::<T>(profile.stacks.len() + 1);
    for (node, v) in column(profile, range, idx) {
        out[node] += as_t(v);
    }
    out
}

/// Adds every node's weight into its parent's, children before parents.
pub(super) fn roll_up<T: Copy + std::ops::AddAssign>(profile: &Profile, w: &mut [T]) {
    let prefixes = profile.stacks.prefixes();
    for s in (0..prefixes.len()).rev() {
        let v = w[s + 1];
        w[parent_index(prefixes[s])] += v;
    }
}

#[cfg(test)]
mod tests {
    use super::Totals;
    use crate::model::invert::invert;
    use crate::model::{CallTree, NodeId, Profile, TreeOptions, ValueType};

    fn profile(weight: i64) -> Profile {
        let mut p = Profile::new("test", vec![ValueType::samples()]);
        for path in [&["main", "a", "x"][..], &["main", "b", "x"], &["main", "b"]] {
            let s = p.intern_path(path.iter().map(|n| n.as_bytes()));
            p.push_sample(s, &[weight]);
        }
        p
    }

    #[test]
    fn totals_are_narrow_when_they_fit_and_wide_when_they_do_not() {
        for (w, narrow) in [(5, true), (1 << 31, false), (3_000_000_000, false)] {
            let inv = invert(&profile(w));
            let tree = CallTree::build(&inv, TreeOptions::default());
            assert_eq!(
                matches!(tree.total, Totals::Narrow(_)),
                narrow,
                "weight {w}"
            );
            assert_eq!(tree.total(NodeId::ROOT), 3 * w);
            let x = inv.frames.get(b"x");
            let top: Vec<(i64, i64)> = tree
                .child_ids(NodeId::ROOT)
                .filter(|&c| tree.frame(&inv, c) == x)
                .map(|c| (tree.total(c), tree.self_weight(c)))
                .collect();
            assert_eq!(top, [(2 * w, 0)], "x at the top, under weight {w}");
        }
    }
}
