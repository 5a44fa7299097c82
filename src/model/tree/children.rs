//! A tree's child lists, in one of two shapes.
//!
//! Most tables (a parse, a transform) list children explicitly, in CSR form.
//! A table made breadth first with siblings adjacent and in name order (what a
//! reversal makes: the inverted view, a callers tree) already has its children
//! as runs of adjacent nodes, so the tree keeps one start per node and no list:
//! no child array (117 MB less for the 29M-node inverted tree of a 1M-line
//! profile) and no pass that scatters children or sorts them.

use super::{NodeId, parent_index};
use crate::model::profile::Profile;
use crate::model::stacks::NO_PREFIX;

#[derive(Clone, Debug)]
pub(super) enum Kids {
    /// Node `n`'s children are `list[start[n]..start[n + 1]]`.
    Lists { start: Vec<u32>, list: Vec<u32> },
    /// Node `n`'s children (`n > 0`) are the nodes `start[n]..start[n + 1]`,
    /// except for the `empty` nodes, leaves whose range spans roots that lie
    /// between two runs (where the two halves of a parallel reversal meet).
    /// The root's children are listed in `roots`.
    Runs {
        start: Vec<u32>,
        roots: Vec<u32>,
        empty: Vec<u32>,
    },
}

impl Default for Kids {
    fn default() -> Self {
        Kids::Lists {
            start: Vec::new(),
            list: Vec::new(),
        }
    }
}

/// Gaps between runs that a [`Kids::Runs`] tolerates before the lists are
/// built instead (each costs a look-up per visit of a node's children).
const MAX_GAPS: usize = 8;

impl Kids {
    pub(super) fn of(&self, n: NodeId) -> ChildIter<'_> {
        let i = n.0 as usize;
        match self {
            Kids::Lists { start, list } => {
                let (a, b) = match (start.get(i), start.get(i + 1)) {
                    (Some(&a), Some(&b)) => (a as usize, b as usize),
                    _ => (0, 0),
                };
                ChildIter::List(list.get(a..b).unwrap_or_default().iter())
            }
            Kids::Runs { roots, .. } if i == 0 => ChildIter::List(roots.iter()),
            Kids::Runs { start, empty, .. } => match (start.get(i), start.get(i + 1)) {
                (Some(&a), Some(&b)) if !empty.contains(&n.0) => ChildIter::Run(a..b),
                _ => ChildIter::Run(0..0),
            },
        }
    }

    /// Runs re-listed (to be sorted another way).
    pub(super) fn into_lists(self) -> Kids {
        let n = match &self {
            Kids::Runs { start, .. } => start.len().saturating_sub(1),
            Kids::Lists { .. } => return self,
        };
        let mut start = Vec::with_capacity(n + 1);
        let mut list = Vec::new();
        for i in 0..n {
            start.push(list.len() as u32);
            list.extend(self.of(NodeId(i as u32)).map(|c| c.0));
        }
        start.push(list.len() as u32);
        Kids::Lists { start, list }
    }
}

/// A node's children, first to last.
#[derive(Clone, Debug)]
pub enum ChildIter<'a> {
    List(std::slice::Iter<'a, u32>),
    Run(std::ops::Range<u32>),
}

impl Iterator for ChildIter<'_> {
    type Item = NodeId;

    #[inline]
    fn next(&mut self) -> Option<NodeId> {
        match self {
            ChildIter::List(it) => it.next().map(|&c| NodeId(c)),
            ChildIter::Run(r) => r.next().map(NodeId),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            ChildIter::List(it) => it.size_hint(),
            ChildIter::Run(r) => r.size_hint(),
        }
    }
}

impl DoubleEndedIterator for ChildIter<'_> {
    fn next_back(&mut self) -> Option<NodeId> {
        match self {
            ChildIter::List(it) => it.next_back().map(|&c| NodeId(c)),
            ChildIter::Run(r) => r.next_back().map(NodeId),
        }
    }
}

impl ExactSizeIterator for ChildIter<'_> {}

/// Whether the table's first stacks are in breadth-first order (parents
/// never go back): worth trying [`runs`] on, which a parse's depth-first
/// table is not.
pub(super) fn looks_breadth_first(profile: &Profile) -> bool {
    let prefixes = profile.stacks.prefixes();
    let head = &prefixes[..prefixes.len().min(1 << 12)];
    let mut last = 0;
    head.iter().filter(|&&p| p != NO_PREFIX).all(|&p| {
        let ok = p >= last;
        last = p;
        ok
    })
}

/// The children as runs, when the table is breadth first with each node's
/// children adjacent and in name order (`rank`), and every node is to be
/// shown; `None` as soon as the table is seen to be otherwise (a parse's
/// depth-first table fails within its first few stacks).
pub(super) fn runs(profile: &Profile, rank: &[u32]) -> Option<Kids> {
    let prefixes = profile.stacks.prefixes();
    let frames = profile.stacks.frames();
    let rank_of = |c: usize| rank.get(frames[c].0 as usize).copied();
    let mut start = crate::alloc::zeros_written::<u32>(prefixes.len() + 2);
    let mut roots = Vec::new();
    let mut empty = Vec::new();
    // The node whose run is open (0: none yet) and the node after its last child.
    let (mut cur, mut end) = (0usize, 0usize);
    for (c, &p) in prefixes.iter().enumerate() {
        let node = c + 1;
        if p == NO_PREFIX {
            roots.push(node as u32);
            continue;
        }
        let pn = parent_index(p);
        if pn == cur {
            // The run goes on: adjacent, and after its last sibling by name.
            if node != end || rank_of(c - 1)? >= rank_of(c)? {
                return None;
            }
            end = node + 1;
            continue;
        }
        if pn < cur {
            return None;
        }
        // A new run: the nodes between the open one and `pn` are leaves.
        if cur == 0 {
            start[1..=pn].fill(node as u32);
        } else if node == end {
            start[cur + 1..=pn].fill(node as u32);
        } else {
            // Roots lie between the runs: the leaf just before `pn` would
            // span them, so it is marked empty.
            if pn == cur + 1 || empty.len() == MAX_GAPS {
                return None;
            }
            start[cur + 1..pn].fill(end as u32);
            start[pn] = node as u32;
            empty.push((pn - 1) as u32);
        }
        rank_of(c)?;
        (cur, end) = (pn, node + 1);
    }
    start[cur + 1..].fill(end.max(1) as u32);
    let ranks: Option<Vec<u32>> = roots.iter().map(|&r| rank_of(r as usize - 1)).collect();
    let ranks = ranks?;
    let mut order: Vec<(u32, u32)> = ranks.into_iter().zip(roots.iter().copied()).collect();
    order.sort_unstable();
    let roots = order.into_iter().map(|(_, r)| r).collect();
    Some(Kids::Runs {
        start,
        roots,
        empty,
    })
}

/// Child lists in CSR form (start offsets, children) of the nodes with a
/// non-zero weight somewhere below them (`live` marks the nodes with a weight
/// of their own), in stack order.
pub(super) fn child_lists(profile: &Profile, own: Vec<bool>) -> Kids {
    let n = own.len();
    let prefixes = profile.stacks.prefixes();
    // One pass, children before parents (a prefix has the smaller id): a node
    // is live when it has weight or a live callee, which by then have all
    // been counted at it; each live node is counted at its parent.
    let mut child_start = crate::alloc::zeros_written::<u32>(n + 1);
    for s in (0..prefixes.len()).rev() {
        if own[s + 1] || child_start[s + 1] > 0 {
            child_start[parent_index(prefixes[s])] += 1;
        }
    }
    // Running sums make child_start[p] the end of p's children; filling from
    // the back moves it down to their start (so no second cursor array). When
    // a node is reached its callees are placed, so its start is final, and so
    // is the next node's, which is its end: it is live when they differ.
    for i in 1..=n {
        child_start[i] += child_start[i - 1];
    }
    let mut children = vec![0u32; child_start[n] as usize];
    for s in (0..prefixes.len()).rev() {
        let node = s + 1;
        if own[node] || child_start[node + 1] > child_start[node] {
            let p = parent_index(prefixes[s]);
            child_start[p] -= 1;
            children[child_start[p] as usize] = node as u32;
        }
    }
    Kids::Lists {
        start: child_start,
        list: children,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::invert::invert;
    use crate::model::{CallTree, ChildOrder, TreeOptions, ValueType};

    /// Each node's (total, self, children) from the root down.
    fn shape(tree: &CallTree) -> Vec<(u32, i64, i64, Vec<u32>)> {
        let mut out = Vec::new();
        let mut todo = vec![NodeId::ROOT];
        while let Some(n) = todo.pop() {
            let kids: Vec<u32> = tree.child_ids(n).map(|c| c.0).collect();
            out.push((n.0, tree.total(n), tree.self_weight(n), kids));
            todo.extend(tree.child_ids(n));
        }
        out
    }

    /// The same tree through the child lists: built by weight, re-sorted by name.
    fn listed(p: &Profile, options: TreeOptions) -> CallTree {
        let mut t = CallTree::build(
            p,
            TreeOptions {
                order: ChildOrder::Weight,
                ..options
            },
        );
        assert!(matches!(t.kids, Kids::Lists { .. }));
        t.set_order(p, ChildOrder::Name);
        t
    }

    /// `n` paths of 3-5 frames, most of them distinct, weights 1..=3.
    fn wide(n: u32) -> Profile {
        let mut p = Profile::new("test", vec![ValueType::samples()]);
        for i in 0..n {
            let names = [
                "main".to_string(),
                format!("mid{}", i % 37),
                format!("low{}", (i / 37) % 41),
                format!("leaf{}", (i * 7) % 53),
                format!("deep{i}"),
            ];
            let depth = if i % 5 == 0 { 3 } else { 4 + (i % 2) as usize };
            let s = p.intern_path(names[..depth].iter().map(|n| n.as_bytes()));
            p.push_sample(s, &[1 + i64::from(i % 3)]);
        }
        p
    }

    #[test]
    fn an_inverted_tree_keeps_its_runs_and_equals_the_listed_tree() {
        // Enough paths for the reversal's two threads, whose tables meet
        // with roots between two runs.
        let p = wide(120_000);
        let inv = invert(&p);
        let tree = CallTree::build(&inv, TreeOptions::default());
        let Kids::Runs { empty, .. } = &tree.kids else {
            panic!("the inverted tree was listed");
        };
        assert_eq!(empty.len(), 1, "one gap where the halves meet");
        assert_eq!(shape(&tree), shape(&listed(&inv, TreeOptions::default())));
        assert_eq!(tree.total(NodeId::ROOT), p.total(0));
        // Re-sorted by weight, it is the tree built by weight.
        let mut by_weight = tree.clone();
        by_weight.set_order(&inv, ChildOrder::Weight);
        let built = CallTree::build(
            &inv,
            TreeOptions {
                order: ChildOrder::Weight,
                ..TreeOptions::default()
            },
        );
        assert_eq!(shape(&by_weight), shape(&built));
    }

    #[test]
    fn a_range_that_leaves_stacks_unreached_falls_back_to_lists() {
        let inv = invert(&wide(500));
        let options = TreeOptions {
            samples: Some(100..200),
            ..TreeOptions::default()
        };
        let tree = CallTree::build(&inv, options.clone());
        assert!(matches!(tree.kids, Kids::Lists { .. }));
        let nodes = shape(&tree);
        assert!(nodes.iter().skip(1).all(|n| n.1 > 0), "no empty node shown");
        assert_eq!(nodes, shape(&listed(&inv, options)));
        assert_eq!(
            tree.total(NodeId::ROOT),
            (100..200).map(|i| 1 + i % 3).sum::<i64>()
        );
    }

    #[test]
    fn a_zero_weight_sample_keeps_lists() {
        let mut p = wide(300);
        let s = p.intern_path(["main", "zero"].iter().map(|n| n.as_bytes()));
        p.push_sample(s, &[0]);
        let inv = invert(&p);
        let tree = CallTree::build(&inv, TreeOptions::default());
        assert!(matches!(tree.kids, Kids::Lists { .. }));
        let zero = inv.frames.get(b"zero");
        assert!(
            tree.child_ids(NodeId::ROOT)
                .all(|c| tree.frame(&inv, c) != zero),
            "the weightless stack is not shown"
        );
    }

    #[test]
    fn a_parsed_table_is_listed() {
        let p = wide(300);
        let tree = CallTree::build(&p, TreeOptions::default());
        assert!(matches!(tree.kids, Kids::Lists { .. }));
        assert!(runs(&p, &p.frames.name_ranks()).is_none());
    }
}
