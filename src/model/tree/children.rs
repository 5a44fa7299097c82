//! A tree's child lists, in one of two shapes.
//!
//! Most tables (a parse, a transform) list children explicitly, in CSR form.
//! A table whose every parent has its children adjacent and in name order
//! (what a reversal makes: the inverted view, a callers tree) already has its
//! children as runs of adjacent nodes. The tree then keeps no child list and
//! no start per node: a bit says a node's first child is the next node (the
//! reversal's chains, 92% of the 29M nodes of a 1M-line profile's inverted
//! view), the others' first children are kept by rank, and a bit marks each
//! run's end. That is 3.5 bits and about half a byte a node where the lists
//! took 8 bytes, with no pass that scatters children or sorts them.

use super::{NodeId, parent_index};
use crate::model::profile::Profile;
use crate::model::stacks::NO_PREFIX;

#[derive(Clone, Debug)]
pub(super) enum Kids {
    /// Node `n`'s children are `list[start[n]..start[n + 1]]`.
    Lists { start: Vec<u32>, list: Vec<u32> },
    /// Node `n`'s children (`n > 0`) are adjacent nodes in name order, from
    /// its first child to the first node marked in `ends` (each run's last).
    /// The first child is `n + 1` (`next`: most nodes of a reversal's table,
    /// its chains), or elsewhere (`far`, in [`Far`]), or there is none. The
    /// root's children are listed in `roots`.
    Runs {
        next: Vec<u64>,
        far: Far,
        ends: Vec<u64>,
        roots: Vec<u32>,
        nodes: usize,
    },
}

/// The first children that are not the next node, by the parent's rank
/// among the marked nodes: 4 bytes per such node and 1.5 bits per node, not
/// 4 bytes per node (117 MB less for a 29M-node inverted tree, 92% of whose
/// nodes are chains).
#[derive(Clone, Debug)]
pub(super) struct Far {
    marked: Vec<u64>,
    /// Marked nodes before each word of `marked`.
    before: Vec<u32>,
    first: Vec<u32>,
}

impl Far {
    #[inline]
    fn get(&self, n: usize) -> Option<u32> {
        self.first.get(self.rank(n)?).copied()
    }

    /// Where a marked node's first child is kept.
    #[inline]
    fn rank(&self, n: usize) -> Option<usize> {
        let (w, b) = (n / 64, n % 64);
        let word = *self.marked.get(w)?;
        if word >> b & 1 == 0 {
            return None;
        }
        Some((self.before[w] + (word & ((1u64 << b) - 1)).count_ones()) as usize)
    }
}

#[inline]
fn bit(bits: &[u64], n: usize) -> bool {
    bits.get(n / 64).is_some_and(|w| w >> (n % 64) & 1 == 1)
}

#[inline]
fn set(bits: &mut [u64], n: usize) {
    bits[n / 64] |= 1 << (n % 64);
}

impl Default for Kids {
    fn default() -> Self {
        Kids::Lists {
            start: Vec::new(),
            list: Vec::new(),
        }
    }
}

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
            Kids::Runs {
                next, far, ends, ..
            } => {
                let first = if bit(next, i) {
                    Some(n.0 + 1)
                } else {
                    far.get(i)
                };
                match first {
                    Some(a) => ChildIter::Run(a..run_end(ends, a) + 1),
                    None => ChildIter::Run(0..0),
                }
            }
        }
    }

    /// Runs re-listed (to be sorted another way).
    pub(super) fn into_lists(self) -> Kids {
        let n = match &self {
            Kids::Runs { nodes, .. } => *nodes,
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

/// The first node at or after `a` marked in `ends` (`a` itself if none is).
fn run_end(ends: &[u64], a: u32) -> u32 {
    let mut w = a as usize / 64;
    let mut bits = ends.get(w).copied().unwrap_or(0) & (!0u64 << (a % 64));
    loop {
        if bits != 0 {
            return (w * 64) as u32 + bits.trailing_zeros();
        }
        w += 1;
        match ends.get(w) {
            Some(&b) => bits = b,
            None => return a,
        }
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

/// Whether the table's first stacks could have their children as runs:
/// each parent's children adjacent (what [`runs`] needs throughout), worth
/// ranking the names for. A parse's depth-first table fails within a few
/// stacks (a parent's second child comes after its first child's callees).
pub(super) fn looks_like_runs(profile: &Profile) -> bool {
    let prefixes = profile.stacks.prefixes();
    let head = &prefixes[..prefixes.len().min(1 << 12)];
    let mut seen = std::collections::HashSet::new();
    head.iter()
        .enumerate()
        .all(|(c, &p)| p == NO_PREFIX || (c > 0 && head[c - 1] == p) || seen.insert(p))
}

/// The children as runs, when each node's children are adjacent and in name
/// order (`rank`), as a reversal makes them (breadth first where paths share
/// stacks, then chains), and every node is to be shown; `None` as soon as the
/// table is seen to be otherwise.
pub(super) fn runs(profile: &Profile, rank: &[u32]) -> Option<Kids> {
    let prefixes = profile.stacks.prefixes();
    let frames = profile.stacks.frames();
    let rank_of = |c: usize| rank.get(frames[c].0 as usize).copied();
    let n = prefixes.len();
    let words = (n + 1).div_ceil(64);
    let (mut next, mut ends) = (vec![0u64; words], vec![0u64; words]);
    let mut far_marked = vec![0u64; words];
    // (parent, first child) of the runs that do not start at the parent's next node.
    let mut far: Vec<(u32, u32)> = Vec::with_capacity(n / 8);
    let mut roots = Vec::new();
    // The parent and name rank of the node before (none before the first).
    let (mut last, mut last_rank) = (NO_PREFIX, 0);
    for (c, &p) in prefixes.iter().enumerate() {
        let node = c + 1;
        let pn = parent_index(p);
        let r = rank_of(c)?;
        if pn >= node {
            return None;
        }
        if c > 0 && p == last {
            // The run goes on, after its last sibling by name.
            if p != NO_PREFIX && last_rank >= r {
                return None;
            }
        } else {
            // A new run: the one before ends, and this parent has no other.
            if c > 0 {
                set(&mut ends, c);
            }
            if p != NO_PREFIX {
                // A parent's run starts once: marked `next` or `far` then.
                if bit(&next, pn) || bit(&far_marked, pn) {
                    return None;
                }
                if pn + 1 == node {
                    set(&mut next, pn);
                } else {
                    set(&mut far_marked, pn);
                    far.push((pn as u32, node as u32));
                }
            }
            last = p;
        }
        if p == NO_PREFIX {
            roots.push(node as u32);
        }
        last_rank = r;
    }
    if n > 0 {
        set(&mut ends, n);
    }
    let mut before = Vec::with_capacity(words);
    let mut count = 0u32;
    for w in &far_marked {
        before.push(count);
        count += w.count_ones();
    }
    // Each first child at its parent's rank among the marked nodes.
    let mut far_first = Far {
        marked: far_marked,
        before,
        first: vec![0; count as usize],
    };
    for (p, c) in far {
        if let Some(i) = far_first.rank(p as usize) {
            far_first.first[i] = c;
        }
    }
    let ranks: Option<Vec<u32>> = roots.iter().map(|&r| rank_of(r as usize - 1)).collect();
    let ranks = ranks?;
    let mut order: Vec<(u32, u32)> = ranks.into_iter().zip(roots.iter().copied()).collect();
    order.sort_unstable();
    let roots = order.into_iter().map(|(_, r)| r).collect();
    Some(Kids::Runs {
        next,
        far: far_first,
        ends,
        roots,
        nodes: n + 1,
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
    let mut child_start = crate::host::alloc::zeros_written::<u32>(n + 1);
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
    fn a_run_ends_at_the_next_mark_across_words() {
        let mut ends = vec![0u64; 3];
        set(&mut ends, 3);
        set(&mut ends, 130);
        assert_eq!(run_end(&ends, 3), 3);
        assert_eq!(run_end(&ends, 4), 130);
        assert_eq!(run_end(&ends, 64), 130);
        assert_eq!(
            run_end(&ends, 131),
            131,
            "no mark after: the run is one node"
        );
    }

    #[test]
    fn an_inverted_tree_keeps_its_runs_and_equals_the_listed_tree() {
        // Enough paths for the reversal's two threads (the second's roots
        // come after the first's chains), chains of 1-3 stacks.
        let p = wide(120_000);
        let inv = invert(&p);
        let tree = CallTree::build(&inv, TreeOptions::default());
        assert!(
            matches!(tree.kids, Kids::Runs { .. }),
            "the inverted tree was listed"
        );
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
