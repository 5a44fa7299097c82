//! The call tree: weights aggregated over a profile's stack table.
//!
//! Node 0 is the synthetic root ("all"); node `i + 1` is stack `i`. The tree borrows
//! its shape (frame, parent) from the [`StackTable`](super::stacks::StackTable) and adds totals, selfs and
//! ordered child lists, so a rebuild for another value type or a sample filter
//! reuses the table and never re-parses.

use super::frames::FrameId;
use super::profile::{Profile, ValueType};
use super::stacks::{NO_PREFIX, StackId};

mod children;
mod weights;
pub use children::ChildIter;
use children::{Kids, child_lists, runs};
use weights::{
    Totals, all_positive, column_self, column_self_total, column_totals, positive_totals, roll_up,
};

/// Fewer samples than this cannot be told apart from chance: a node or function
/// resting on fewer ([`CallTree::samples`]) is noise-level, and the viewer dims it.
pub const NOISE_SAMPLES: i64 = 50;

/// A node's values on both sides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodePair {
    /// Stored totals, `[before, after]`.
    pub total: [i64; 2],
    pub samples: [f64; 2],
}

/// Trees with more nodes than this build their child lists on a second thread.
const PARALLEL_NODES: usize = 1 << 20;

/// Index of a node in a [`CallTree`]; `NodeId::ROOT` is the synthetic root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct NodeId(pub u32);

impl NodeId {
    pub const ROOT: NodeId = NodeId(0);

    fn stack(self) -> Option<StackId> {
        (self.0 > 0).then(|| StackId(self.0 - 1))
    }

    fn of_stack(s: StackId) -> NodeId {
        NodeId(s.0 + 1)
    }
}

/// How siblings are ordered left to right.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ChildOrder {
    /// Alphabetical, as flamegraph.pl and inferno draw them: stable across reloads.
    #[default]
    Name,
    /// Heaviest first ("left heavy").
    Weight,
}

/// Which samples and which value feed a tree.
#[derive(Clone, Debug, Default)]
pub struct TreeOptions {
    pub value: usize,
    pub order: ChildOrder,
    /// Only samples in this index range (a time slice, an appended chunk); all when `None`.
    pub samples: Option<std::ops::Range<usize>>,
    /// In a diff profile, leave out the other side's weights (a second pane
    /// that takes them from the first pane's tree, which has the same nodes).
    pub one_side: bool,
    /// In a diff profile shown on its after side: widths from the larger of the
    /// two sides, stack by stack (before's self scaled to after's total, so the
    /// larger share wins), rolled up. Frames of either side are drawn.
    pub larger: bool,
}

#[derive(Clone, Debug, Default)]
pub struct CallTree {
    total: Totals,
    self_w: Vec<i64>,
    kids: Kids,
    /// Samples behind each node when the shown value is not a sample count (cpu
    /// time next to samples/count), in whole samples; see [`CallTree::samples`].
    counts: Option<Vec<i64>>,
    /// Scale of a shown value that counts samples (folded fractional counts);
    /// 0 when the shown value is no sample count.
    sample_scale: f64,
    /// In a diff profile showing one side: the other side's weights per node.
    pair: Option<Box<PairWeights>>,
    pub options: TreeOptions,
}

/// The other side of a diff, aligned with the shown side's nodes.
#[derive(Clone, Debug)]
struct PairWeights {
    /// Which side (0 before, 1 after) the tree shows.
    side: usize,
    /// The other side's (self, total) per node.
    other: [Vec<i64>; 2],
    /// Per side: (self, total) sample counts per node (`None`: the side's values
    /// count samples themselves), and their scale.
    counts: [Option<[Vec<i64>; 2]>; 2],
    scales: [f64; 2],
    /// The shown side's own (self, total) when the tree's weights are not that
    /// side's (`TreeOptions::larger`).
    shown: Option<[Vec<i64>; 2]>,
}

impl CallTree {
    /// Aggregates `profile`'s samples into a tree. O(samples + stacks log fan-out).
    pub fn build(profile: &Profile, options: TreeOptions) -> CallTree {
        let stride = profile.value_types.len().max(1);
        let value = options.value.min(stride - 1);
        let range = options.samples.clone().unwrap_or(0..profile.samples.len());
        let mut pair = if options.one_side {
            None
        } else {
            pair_weights(profile, value, &range)
        };
        // A table with each node's children adjacent and in name order (a
        // reversal's) keeps them as they are, when every node is shown.
        // (A parse's depth-first table mostly fails the first look, before
        // any name is ranked; one that passes it is checked in full.)
        if options.order == ChildOrder::Name
            && pair.is_none()
            && children::looks_like_runs(profile)
            && all_positive(profile, &range, value)
        {
            let rank = &profile.frames.name_ranks();
            let totals = || positive_totals(profile, range.clone(), value);
            // The runs on a second thread while the totals are summed (both
            // mostly wait on fresh pages).
            let (kids, total) = if profile.stacks.len() > PARALLEL_NODES {
                std::thread::scope(|s| {
                    let kids = s.spawn(|| runs(profile, rank));
                    let total = totals();
                    let kids = kids.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                    (kids, total)
                })
            } else {
                (runs(profile, rank), totals())
            };
            // Positive weights give every node a positive total; a table with
            // stacks no sample reaches has nodes of none, which are not shown.
            if let Some(kids) = kids
                && total.all_positive_below_root()
            {
                let (counts, sample_scale) = own_counts(profile, value, range);
                return CallTree {
                    total,
                    kids,
                    counts,
                    sample_scale,
                    options: TreeOptions { value, ..options },
                    ..CallTree::default()
                };
            }
        }
        let mut weights = column_self(profile, range.clone(), value);
        // A diff side keeps its self weights (swapped with the other side's,
        // or replaced by the larger of the two). Any other tree rolls them
        // up into the totals in place and works a node's self out from its
        // children's totals when asked: one array of a weight per node less
        // (233 MB for the 29M nodes of a 1M-line profile's inverted view).
        let mut self_w = if pair.is_some() {
            weights.clone()
        } else {
            Vec::new()
        };
        let larger = options.larger && pair.is_some();
        let kids = match pair.as_deref_mut() {
            // The widths change to the larger of the two sides, and so do the
            // self weights that say which nodes are live.
            Some(p) if larger => {
                roll_up(profile, &mut weights);
                larger_of_two(p, &mut self_w, &mut weights, profile);
                child_lists(profile, nonzero(&self_w))
            }
            // A node is live when it or a callee has weight (of either sign).
            // On a big tree the lists are built on a second thread while the
            // totals roll up.
            _ => {
                let live = nonzero(&weights);
                if weights.len() > PARALLEL_NODES {
                    std::thread::scope(|s| {
                        let lists = s.spawn(|| child_lists(profile, live));
                        roll_up(profile, &mut weights);
                        lists
                            .join()
                            .unwrap_or_else(|e| std::panic::resume_unwind(e))
                    })
                } else {
                    roll_up(profile, &mut weights);
                    child_lists(profile, live)
                }
            }
        };
        let total = Totals::Wide(weights);
        let shown = profile.value_types.get(value);
        let (counts, sample_scale) = match (&pair, shown) {
            (Some(p), Some(vt)) => match (&p.counts[p.side], &p.shown) {
                (Some(c), _) => (Some(c[1].clone()), 0.0),
                // The widths are no side's: noise is judged by the shown side.
                (None, Some(own)) if vt.scale() <= 1.0 => (Some(own[1].clone()), 0.0),
                (None, Some(own)) => (
                    Some(
                        own[1]
                            .iter()
                            .map(|&v| (v as f64 / vt.scale()) as i64)
                            .collect(),
                    ),
                    0.0,
                ),
                (None, None) => (None, vt.scale()),
            },
            _ => own_counts(profile, value, range),
        };
        let mut tree = CallTree {
            total,
            self_w,
            kids,
            counts,
            sample_scale,
            pair,
            options: TreeOptions {
                value,
                larger,
                ..options
            },
        };
        tree.sort_children(profile);
        tree
    }

    /// Shows the other side of a diff in place: the weights trade places with
    /// the other side's, and only the child lists are rebuilt (a side switch
    /// costs no pass over the samples). False when the tree is no diff side.
    pub fn swap_sides(&mut self, profile: &Profile) -> bool {
        let (Some(meta), Some(pair)) = (profile.meta.diff.as_deref(), self.pair.as_deref_mut())
        else {
            return false;
        };
        if pair.shown.is_some() {
            return false; // the larger of the two is no side to swap
        }
        let [other_self, other_total] = &mut pair.other;
        std::mem::swap(&mut self.self_w, other_self);
        std::mem::swap(self.total.wide_mut(), other_total);
        pair.side = 1 - pair.side;
        self.options.value = meta.sides[pair.side].value;
        (self.counts, self.sample_scale) = match &pair.counts[pair.side] {
            Some(c) => (Some(c[1].clone()), 0.0),
            None => (None, profile.value_types[self.options.value].scale()),
        };
        self.kids = child_lists(profile, nonzero(&self.self_w));
        self.sort_children(profile);
        true
    }

    fn sort_children(&mut self, profile: &Profile) {
        let frames = profile.stacks.frames();
        if let (Kids::Runs { .. }, ChildOrder::Weight) = (&self.kids, self.options.order) {
            self.kids = std::mem::take(&mut self.kids).into_lists();
        }
        let Kids::Lists { start, list } = &mut self.kids else {
            return; // runs are in name order already
        };
        match self.options.order {
            ChildOrder::Name => {
                let rank = profile.frames.name_ranks();
                let key = |c: &u32| rank[frames[*c as usize - 1].0 as usize];
                for w in 0..start.len().saturating_sub(1) {
                    let (a, b) = (start[w] as usize, start[w + 1] as usize);
                    if b - a > 1 {
                        list[a..b].sort_unstable_by_key(key);
                    }
                }
            }
            ChildOrder::Weight => {
                let total = &self.total;
                for w in 0..start.len().saturating_sub(1) {
                    let (a, b) = (start[w] as usize, start[w + 1] as usize);
                    if b - a > 1 {
                        list[a..b].sort_unstable_by(|x, y| {
                            (total.get(*y as usize))
                                .cmp(&total.get(*x as usize))
                                .then(x.cmp(y))
                        });
                    }
                }
            }
        }
    }

    /// Re-orders siblings without rebuilding the weights.
    pub fn set_order(&mut self, profile: &Profile, order: ChildOrder) {
        if self.options.order != order {
            self.options.order = order;
            self.sort_children(profile);
        }
    }

    pub fn len(&self) -> usize {
        self.total.len()
    }

    pub fn is_empty(&self) -> bool {
        self.total.len() <= 1
    }

    pub fn root(&self) -> NodeId {
        NodeId::ROOT
    }

    #[inline]
    pub fn total(&self, n: NodeId) -> i64 {
        self.total.get(n.0 as usize)
    }

    /// How many samples lie under `n`, when the profile says: the shown value
    /// itself if it counts samples, else the profile's sample-count value type.
    /// What "noise-level" is judged by ([`NOISE_SAMPLES`]).
    pub fn samples(&self, n: NodeId) -> Option<f64> {
        match &self.counts {
            Some(c) => Some(c[n.0 as usize] as f64),
            None if self.sample_scale > 0.0 => Some(self.total(n) as f64 / self.sample_scale),
            None => None,
        }
    }

    /// Both sides' totals of node `n` when the tree shows one side of a diff
    /// profile.
    pub fn pair(&self, n: NodeId) -> Option<NodePair> {
        self.pair_of(n, 1)
    }

    /// Both sides' self weights of node `n`, as [`CallTree::pair`].
    pub fn pair_self(&self, n: NodeId) -> Option<NodePair> {
        self.pair_of(n, 0)
    }

    /// `which`: 0 self, 1 total.
    fn pair_of(&self, n: NodeId, which: usize) -> Option<NodePair> {
        let p = self.pair.as_deref()?;
        let i = n.0 as usize;
        let mut total = [0i64; 2];
        total[p.side] = match &p.shown {
            Some(own) => own[which][i],
            None if which == 0 => self.self_w[i],
            None => self.total.get(i),
        };
        total[1 - p.side] = p.other[which][i];
        let samples = [0, 1].map(|s| match &p.counts[s] {
            Some(c) => c[which][i] as f64 / p.scales[s],
            None => total[s] as f64 / p.scales[s],
        });
        Some(NodePair { total, samples })
    }

    /// The weight of the samples that end at `n`: stored for a diff side,
    /// else its total less its children's (a callee-less child's total is
    /// zero, so the live children are all it takes).
    #[inline]
    pub fn self_weight(&self, n: NodeId) -> i64 {
        let i = n.0 as usize;
        match self.self_w.get(i) {
            Some(&w) => w,
            None => {
                let below: i64 = self.child_ids(n).map(|c| self.total(c)).sum();
                self.total.get(i) - below
            }
        }
    }

    /// The node's children, left to right.
    #[inline]
    pub fn child_ids(&self, n: NodeId) -> ChildIter<'_> {
        self.kids.of(n)
    }

    #[inline]
    pub fn parent(&self, profile: &Profile, n: NodeId) -> Option<NodeId> {
        let s = n.stack()?;
        Some(
            profile
                .stacks
                .prefix(s)
                .map_or(NodeId::ROOT, NodeId::of_stack),
        )
    }

    /// The node's frame; `None` for the root.
    #[inline]
    pub fn frame(&self, profile: &Profile, n: NodeId) -> Option<FrameId> {
        n.stack().map(|s| profile.stacks.frame(s))
    }

    /// Depth below the root (the root is 0).
    pub fn depth(&self, profile: &Profile, n: NodeId) -> usize {
        let mut d = 0;
        let mut cur = n;
        while let Some(p) = self.parent(profile, cur) {
            d += 1;
            cur = p;
        }
        d
    }

    /// Nodes from the root down to `n`, both included.
    pub fn ancestry(&self, profile: &Profile, n: NodeId) -> Vec<NodeId> {
        let mut out = vec![n];
        let mut cur = n;
        while let Some(p) = self.parent(profile, cur) {
            out.push(p);
            cur = p;
        }
        out.reverse();
        out
    }

    /// Frame path of `n` from the root (empty for the root).
    pub fn frame_path(&self, profile: &Profile, n: NodeId) -> Vec<FrameId> {
        n.stack().map_or_else(Vec::new, |s| profile.stacks.path(s))
    }

    /// Whether `a` is `b` or one of its ancestors.
    pub fn is_ancestor_or_self(&self, profile: &Profile, a: NodeId, b: NodeId) -> bool {
        let mut cur = Some(b);
        while let Some(c) = cur {
            if c == a {
                return true;
            }
            if c.0 < a.0 {
                return false; // ancestors have smaller ids
            }
            cur = self.parent(profile, c);
        }
        false
    }

    /// The deepest live node along `path`, and how many frames of it were found.
    pub fn find_path(&self, profile: &Profile, path: &[FrameId]) -> (NodeId, usize) {
        let mut cur = NodeId::ROOT;
        for (i, f) in path.iter().enumerate() {
            let next = self
                .child_ids(cur)
                .find(|&c| self.frame(profile, c) == Some(*f));
            match next {
                Some(c) => cur = c,
                None => return (cur, i),
            }
        }
        (cur, path.len())
    }
}

/// Which nodes have a weight of their own.
fn nonzero(self_w: &[i64]) -> Vec<bool> {
    self_w.iter().map(|&w| w != 0).collect()
}

/// The other side's weights and both sides' sample counts, when `profile` is a
/// diff and `value` one of its sides.
fn pair_weights(
    profile: &Profile,
    value: usize,
    range: &std::ops::Range<usize>,
) -> Option<Box<PairWeights>> {
    let meta = profile.meta.diff.as_deref()?;
    let side = meta.side_of(value)?;
    let other = column_self_total(profile, range.clone(), meta.sides[1 - side].value);
    let counts = [0, 1].map(|s| {
        let info = &meta.sides[s];
        (info.count != info.value).then(|| column_self_total(profile, range.clone(), info.count))
    });
    let scales = [0, 1].map(|s| profile.value_types[meta.sides[s].count].scale().max(1.0));
    Some(Box::new(PairWeights {
        side,
        other,
        counts,
        scales,
        shown: None,
    }))
}

/// Replaces the shown side's weights with the larger of the two sides per
/// stack (the other side's self scaled to the shown side's total), rolled up;
/// the shown side's own weights move into `p.shown`.
fn larger_of_two(p: &mut PairWeights, self_w: &mut [i64], total: &mut Vec<i64>, profile: &Profile) {
    let (mine, theirs) = (total[0], p.other[1][0]);
    let k = if theirs == 0 {
        0.0
    } else {
        mine as f64 / theirs as f64
    };
    let own_self = self_w.to_vec();
    for (w, &o) in self_w.iter_mut().zip(&p.other[0]) {
        *w = (*w).max((o as f64 * k).round() as i64);
    }
    let mut rolled = self_w.to_vec();
    roll_up(profile, &mut rolled);
    let own_total = std::mem::replace(total, rolled);
    p.shown = Some([own_self, own_total]);
}

/// What noise is judged by in a tree of no diff: the shown value's own
/// scale when it counts samples, else the profile's sample counts.
fn own_counts(
    profile: &Profile,
    value: usize,
    range: std::ops::Range<usize>,
) -> (Option<Vec<i64>>, f64) {
    match profile.value_types.get(value) {
        Some(vt) if vt.counts_samples() => (None, vt.scale()),
        _ => (sample_counts(profile, range), 0.0),
    }
}

/// Per node totals of the profile's sample-count value type, if it has one.
fn sample_counts(profile: &Profile, range: std::ops::Range<usize>) -> Option<Vec<i64>> {
    let idx = profile
        .value_types
        .iter()
        .position(ValueType::counts_samples)?;
    let scale = profile.value_types[idx].scale().max(1.0);
    let mut total = column_totals(profile, range, idx);
    if scale > 1.0 {
        total
            .iter_mut()
            .for_each(|t| *t = (*t as f64 / scale) as i64);
    }
    Some(total)
}

#[inline]
fn parent_index(prefix: u32) -> usize {
    if prefix == NO_PREFIX {
        0
    } else {
        prefix as usize + 1
    }
}
