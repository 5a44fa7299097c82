//! The per-function table: self and total weight of every frame name.
//!
//! Total counts a function once per stack, however often it recurses, so a
//! function's total never exceeds the profile's total.

use super::frames::FrameId;
use super::profile::Profile;
use super::tree::{CallTree, NodeId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionRow {
    pub frame: FrameId,
    pub self_weight: i64,
    pub total: i64,
    /// Distinct callers (parent frames; the root counts as one).
    pub sites: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SortKey {
    #[default]
    SelfWeight,
    Total,
    Name,
}

#[derive(Clone, Debug, Default)]
pub struct TopTable {
    pub rows: Vec<FunctionRow>,
    /// The tree's total (all samples in view).
    pub total: i64,
    /// Weight of samples with an empty stack (py-spy writes ` 8` for samples taken
    /// outside any Python frame): part of `total`, in no function's row.
    pub no_frames: i64,
}

impl TopTable {
    /// One row per function that has weight in `tree`.
    pub fn build(profile: &Profile, tree: &CallTree) -> TopTable {
        let nframes = profile.frames.len();
        let mut self_w = vec![0i64; nframes];
        let mut total = vec![0i64; nframes];
        let mut seen = vec![false; nframes];
        let mut on_path = vec![0u32; nframes];
        let mut sites = vec![0u32; nframes];
        let mut callers: std::collections::HashSet<(u32, u32), foldhash::fast::FixedState> =
            std::collections::HashSet::default();
        // Iterative depth-first walk; `true` entries mark the exit of a node.
        let mut stack: Vec<(NodeId, bool)> =
            tree.child_ids(NodeId::ROOT).map(|c| (c, false)).collect();
        while let Some((node, exit)) = stack.pop() {
            let Some(f) = tree.frame(profile, node) else {
                continue;
            };
            let fi = f.0 as usize;
            if exit {
                on_path[fi] -= 1;
                continue;
            }
            seen[fi] = true;
            let caller = tree
                .parent(profile, node)
                .and_then(|p| tree.frame(profile, p))
                .map_or(u32::MAX, |c| c.0);
            if callers.insert((f.0, caller)) {
                sites[fi] += 1;
            }
            self_w[fi] += tree.self_weight(node);
            if on_path[fi] == 0 {
                total[fi] += tree.total(node);
            }
            on_path[fi] += 1;
            stack.push((node, true));
            stack.extend(tree.child_ids(node).map(|c| (c, false)));
        }
        let rows = (0..nframes)
            .filter(|&i| seen[i])
            .map(|i| FunctionRow {
                frame: FrameId(i as u32),
                self_weight: self_w[i],
                total: total[i],
                sites: sites[i],
            })
            .collect();
        TopTable {
            rows,
            total: tree.total(NodeId::ROOT),
            no_frames: tree.self_weight(NodeId::ROOT),
        }
    }

    /// Sorts rows; ties break by name so output is deterministic.
    pub fn sort(&mut self, profile: &Profile, key: SortKey, descending: bool) {
        let frames = &profile.frames;
        self.rows.sort_by(|a, b| {
            let primary = match key {
                SortKey::SelfWeight => a.self_weight.cmp(&b.self_weight),
                SortKey::Total => a.total.cmp(&b.total),
                SortKey::Name => frames.raw(a.frame).cmp(frames.raw(b.frame)),
            };
            let primary = if descending {
                primary.reverse()
            } else {
                primary
            };
            primary.then_with(|| frames.raw(a.frame).cmp(frames.raw(b.frame)))
        });
    }
}
