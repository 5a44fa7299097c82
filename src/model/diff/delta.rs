//! The delta table: per function self and total on both sides, sorted by change.

use super::*;

/// One function on both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct DeltaRow {
    pub frame: FrameId,
    /// Stored values, `[before, after]`.
    pub self_w: [i64; 2],
    pub total: [i64; 2],
    /// Samples behind them.
    pub self_samples: [f64; 2],
    pub total_samples: [f64; 2],
}

/// Sort orders of the delta table (largest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DeltaSort {
    /// Absolute change of self.
    #[default]
    SelfDelta,
    /// Absolute change of total.
    TotalDelta,
    /// Relative change of total (new and gone functions first).
    Relative,
}

/// The function table of a diff.
#[derive(Clone, Debug, Default)]
pub struct DeltaTable {
    pub rows: Vec<DeltaRow>,
    pub totals: [i64; 2],
    pub sample_totals: [f64; 2],
}

impl DeltaTable {
    /// One row per function present on either side, over the samples in `range`
    /// (all when `None`). `None` when `profile` is no diff.
    pub fn build(profile: &Profile, range: Option<std::ops::Range<usize>>) -> Option<DeltaTable> {
        DeltaTable::from_samples(profile, range)
    }

    /// [`DeltaTable::from_tree`] without a tree: each sample in `range` (all when
    /// `None`) walks up its stack once, adding to its leaf's self and, once per
    /// function however often it recurses, to the totals. Memory is the rows
    /// and a mark per frame, not per-node columns, so the viewer can build it
    /// on the job thread next to its tree. Counts are summed before they are
    /// scaled, so the sample figures may differ from the tree's in the last bit.
    pub fn from_samples(
        profile: &Profile,
        range: Option<std::ops::Range<usize>>,
    ) -> Option<DeltaTable> {
        let meta = profile.meta.diff.as_deref()?;
        let stride = profile.value_types.len().max(1);
        let cols = [0, 1].map(|s| (meta.sides[s].value, meta.sides[s].count));
        let scales = [0, 1].map(|s| profile.value_types[meta.sides[s].count].scale().max(1.0));
        let range = range.unwrap_or(0..profile.samples.len());
        let prefixes = profile.stacks.prefixes();
        let frames = profile.stacks.frames();
        let nframes = profile.frames.len();
        let mut at = vec![u32::MAX; nframes];
        let mut mark = vec![usize::MAX; nframes];
        // Per row: self and total, values then counts, each [before, after].
        let mut sums: Vec<(FrameId, [[i64; 2]; 4])> = Vec::new();
        let (mut totals, mut counts) = ([0i64; 2], [0i64; 2]);
        for i in range {
            let vals = &profile.samples.values[i * stride..(i + 1) * stride];
            let v = [vals[cols[0].0], vals[cols[1].0]];
            let c = [vals[cols[0].1], vals[cols[1].1]];
            for side in 0..2 {
                totals[side] += v[side];
                counts[side] += c[side];
            }
            let s = profile.samples.stack[i];
            if (v == [0, 0] && c == [0, 0]) || s == u32::MAX {
                continue;
            }
            let mut node = s as usize;
            let mut leaf = true;
            loop {
                let f = frames[node];
                let fi = f.0 as usize;
                if at[fi] == u32::MAX {
                    at[fi] = sums.len() as u32;
                    sums.push((f, [[0; 2]; 4]));
                }
                let row = &mut sums[at[fi] as usize].1;
                for side in 0..2 {
                    if leaf {
                        row[0][side] += v[side];
                        row[2][side] += c[side];
                    }
                    if mark[fi] != i {
                        row[1][side] += v[side];
                        row[3][side] += c[side];
                    }
                }
                mark[fi] = i;
                leaf = false;
                match prefixes[node] {
                    crate::model::stacks::NO_PREFIX => break,
                    p => node = p as usize,
                }
            }
        }
        let scaled = |c: [i64; 2]| [0, 1].map(|s| c[s] as f64 / scales[s]);
        Some(DeltaTable {
            rows: sums
                .into_iter()
                .map(|(frame, [self_w, total, self_c, total_c])| DeltaRow {
                    frame,
                    self_w,
                    total,
                    self_samples: scaled(self_c),
                    total_samples: scaled(total_c),
                })
                .collect(),
            totals,
            sample_totals: scaled(counts),
        })
    }

    /// The table of a tree that shows one side of a diff (it holds both sides'
    /// weights for every stack, shown or not). One depth-first walk over the
    /// whole stack table; a function's total counts once per stack however
    /// often it recurses. `None` when the tree is no diff side.
    pub fn from_tree(profile: &Profile, tree: &CallTree) -> Option<DeltaTable> {
        let root = tree.pair(NodeId::ROOT)?;
        // Children of every node, live on either side or not, in CSR form.
        let prefixes = profile.stacks.prefixes();
        let n = prefixes.len() + 1;
        let parent = |s: usize| match prefixes[s] {
            crate::model::stacks::NO_PREFIX => 0,
            p => p as usize + 1,
        };
        let mut start = vec![0u32; n + 1];
        for s in 0..prefixes.len() {
            start[parent(s) + 1] += 1;
        }
        for i in 1..=n {
            start[i] += start[i - 1];
        }
        let mut fill = start.clone();
        let mut kids = vec![0u32; prefixes.len()];
        for s in 0..prefixes.len() {
            let p = parent(s);
            kids[fill[p] as usize] = s as u32 + 1;
            fill[p] += 1;
        }
        drop(fill);
        let nframes = profile.frames.len();
        let mut at: Vec<u32> = vec![u32::MAX; nframes];
        let mut on_path = vec![0u32; nframes];
        let mut rows: Vec<DeltaRow> = Vec::new();
        let children = |k: usize| kids[start[k] as usize..start[k + 1] as usize].iter();
        let mut stack: Vec<(u32, bool)> = children(0).map(|&c| (c, false)).collect();
        while let Some((node, exit)) = stack.pop() {
            let id = NodeId(node);
            let Some(f) = tree.frame(profile, id) else {
                continue;
            };
            let fi = f.0 as usize;
            if exit {
                on_path[fi] -= 1;
                continue;
            }
            let (Some(total), Some(own)) = (tree.pair(id), tree.pair_self(id)) else {
                continue;
            };
            if total.total == [0, 0] && total.samples == [0.0, 0.0] {
                continue; // nothing below on either side
            }
            if at[fi] == u32::MAX {
                at[fi] = rows.len() as u32;
                rows.push(DeltaRow {
                    frame: f,
                    self_w: [0; 2],
                    total: [0; 2],
                    self_samples: [0.0; 2],
                    total_samples: [0.0; 2],
                });
            }
            let row = &mut rows[at[fi] as usize];
            for side in 0..2 {
                row.self_w[side] += own.total[side];
                row.self_samples[side] += own.samples[side];
                if on_path[fi] == 0 {
                    row.total[side] += total.total[side];
                    row.total_samples[side] += total.samples[side];
                }
            }
            on_path[fi] += 1;
            stack.push((node, true));
            stack.extend(children(node as usize).map(|&c| (c, false)));
        }
        Some(DeltaTable {
            rows,
            totals: root.total,
            sample_totals: root.samples,
        })
    }

    /// Sorts rows largest change first; ties break by name.
    pub fn sort(&mut self, profile: &Profile, cmp: &Compare, key: DeltaSort) {
        let frames = &profile.frames;
        let score = |r: &DeltaRow| -> f64 {
            match key {
                DeltaSort::SelfDelta => cmp.change(r.self_w, r.self_samples).delta().abs(),
                DeltaSort::TotalDelta => cmp.change(r.total, r.total_samples).delta().abs(),
                DeltaSort::Relative => cmp
                    .change(r.total, r.total_samples)
                    .relative()
                    .map_or(f64::INFINITY, f64::abs),
            }
        };
        let mut keyed: Vec<(f64, DeltaRow)> = self.rows.drain(..).map(|r| (score(&r), r)).collect();
        keyed.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| frames.raw(a.1.frame).cmp(frames.raw(b.1.frame)))
        });
        self.rows = keyed.into_iter().map(|(_, r)| r).collect();
    }

    /// The comparison of this table's totals under `norm`.
    pub fn compare(&self, profile: &Profile, norm: Norm) -> Result<Compare, String> {
        let meta = profile
            .meta
            .diff
            .as_deref()
            .ok_or_else(|| "not a diff".to_string())?;
        let scale = profile.value_types[meta.sides[0].value].scale();
        Compare::new(meta, norm, self.totals, self.sample_totals, scale)
    }
}

/// The root of a diff tree compared under `norm`.
pub fn tree_compare(
    profile: &Profile,
    tree: &CallTree,
    norm: Norm,
) -> Option<Result<Compare, String>> {
    let meta = profile.meta.diff.as_deref()?;
    let root = tree.pair(NodeId::ROOT)?;
    let scale = profile.value_types[meta.sides[0].value].scale();
    Some(Compare::new(meta, norm, root.total, root.samples, scale))
}
