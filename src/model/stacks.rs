//! The stack table: every distinct stack as (prefix stack, leaf frame), a trie.
//!
//! A stack's prefix always has a smaller id than the stack itself, so a pass in
//! ascending id order sees parents before children and a descending pass sees
//! children before parents. The call tree is built on this table without copying it.

use hashbrown::HashTable;

use super::frames::FrameId;

/// Index of a stack in a [`StackTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackId(pub u32);

/// The prefix of a root-level stack.
pub const NO_PREFIX: u32 = u32::MAX;

#[derive(Default, Clone)]
pub struct StackTable {
    prefix: Vec<u32>,
    frame: Vec<FrameId>,
    /// (prefix, frame) -> stack. Built on first need: bulk loaders use a
    /// [`StackBuilder`] instead, which needs no index for sorted input.
    index: Option<HashTable<u32>>,
}

impl std::fmt::Debug for StackTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StackTable")
            .field("len", &self.len())
            .finish()
    }
}

fn build_index(prefixes: &[u32], frames: &[FrameId]) -> HashTable<u32> {
    let mut index = HashTable::with_capacity(prefixes.len());
    for id in 0..prefixes.len() {
        index.insert_unique(key_hash(prefixes[id], frames[id]), id as u32, |&o| {
            key_hash(prefixes[o as usize], frames[o as usize])
        });
    }
    index
}

#[inline]
fn key_hash(prefix: u32, frame: FrameId) -> u64 {
    // A multiplicative mix of the 64-bit key; good enough for ids and cheap.
    let k = (u64::from(prefix) << 32) | u64::from(frame.0);
    let h = k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 29)
}

impl StackTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.prefix.len()
    }

    /// Room for `n` more stacks without growing.
    pub fn reserve(&mut self, n: usize) {
        self.prefix.reserve_exact(n);
        self.frame.reserve_exact(n);
    }

    pub fn is_empty(&self) -> bool {
        self.prefix.is_empty()
    }

    /// The stack `prefix` + `frame`, added if new. `prefix` is `None` for a root frame.
    #[inline]
    pub fn intern(&mut self, prefix: Option<StackId>, frame: FrameId) -> StackId {
        let p = prefix.map_or(NO_PREFIX, |s| s.0);
        let hash = key_hash(p, frame);
        let Self {
            prefix: prefixes,
            frame: frames,
            index,
        } = self;
        let index = index.get_or_insert_with(|| build_index(prefixes, frames));
        if let Some(&id) = index.find(hash, |&id| {
            prefixes[id as usize] == p && frames[id as usize] == frame
        }) {
            return StackId(id);
        }
        let id = prefixes.len() as u32;
        prefixes.push(p);
        frames.push(frame);
        index.insert_unique(hash, id, |&o| {
            key_hash(prefixes[o as usize], frames[o as usize])
        });
        StackId(id)
    }

    /// Appends the stack `prefix` + `frame`, which the caller guarantees is not in
    /// the table yet (a walk that meets every (prefix, frame) pair once, such as
    /// pprof's radix walk). Breaking the guarantee makes duplicate siblings, not
    /// undefined behaviour.
    pub fn push_unique(&mut self, prefix: Option<StackId>, frame: FrameId) -> StackId {
        StackId(self.push_new(prefix.map_or(NO_PREFIX, |s| s.0), frame))
    }

    /// Appends a stack known to be new (the caller checked), keeping any index.
    #[inline]
    fn push_new(&mut self, p: u32, frame: FrameId) -> u32 {
        let id = self.prefix.len() as u32;
        self.prefix.push(p);
        self.frame.push(frame);
        if let Some(index) = &mut self.index {
            let (prefixes, frames) = (&self.prefix, &self.frame);
            index.insert_unique(key_hash(p, frame), id, |&o| {
                key_hash(prefixes[o as usize], frames[o as usize])
            });
        }
        id
    }

    /// The table of the first `len` stacks in `prefix` and `frame` (ids),
    /// which a bulk builder filled (the rest of each array is spare room).
    fn from_parts(mut prefix: Vec<u32>, mut frame: Vec<u32>, len: usize) -> StackTable {
        prefix.truncate(len);
        // Cut first: the spare room is never touched (nor faulted in). The
        // map collects in place.
        frame.truncate(len);
        let frame: Vec<FrameId> = frame.into_iter().map(FrameId).collect();
        StackTable {
            prefix,
            frame,
            index: None,
        }
    }

    fn lookup(&self, p: u32, frame: FrameId) -> Option<u32> {
        let index = self.index.as_ref()?;
        index
            .find(key_hash(p, frame), |&id| {
                self.prefix[id as usize] == p && self.frame[id as usize] == frame
            })
            .copied()
    }

    fn ensure_index(&mut self) {
        if self.index.is_none() {
            self.index = Some(build_index(&self.prefix, &self.frame));
        }
    }

    /// The stack's parent stack, `None` at the root.
    #[inline]
    pub fn prefix(&self, s: StackId) -> Option<StackId> {
        let p = self.prefix[s.0 as usize];
        (p != NO_PREFIX).then_some(StackId(p))
    }

    /// The raw prefix column (`NO_PREFIX` for root stacks).
    pub fn prefixes(&self) -> &[u32] {
        &self.prefix
    }

    #[inline]
    pub fn frame(&self, s: StackId) -> FrameId {
        self.frame[s.0 as usize]
    }

    pub fn frames(&self) -> &[FrameId] {
        &self.frame
    }

    /// Frames of the stack from root to leaf.
    pub fn path(&self, s: StackId) -> Vec<FrameId> {
        let mut out = Vec::new();
        let mut cur = Some(s);
        while let Some(c) = cur {
            out.push(self.frame(c));
            cur = self.prefix(c);
        }
        out.reverse();
        out
    }

    /// The stack for a root-to-leaf path if every prefix of it exists.
    pub fn find(&mut self, path: &[FrameId]) -> Option<StackId> {
        self.ensure_index();
        let mut cur: Option<StackId> = None;
        for &f in path {
            let p = cur.map_or(NO_PREFIX, |s| s.0);
            cur = Some(StackId(self.lookup(p, f)?));
        }
        cur
    }

    pub fn heap_bytes(&self) -> usize {
        self.prefix.capacity() * 4
            + self.frame.capacity() * 4
            + self.index.as_ref().map_or(0, |i| i.capacity() * 5)
    }
}

mod reverse;
pub use reverse::{reversed_paths, reversed_paths_parallel};

/// Builds a [`StackTable`] fast from stacks that arrive mostly in sorted order, as
/// collapsers write them.
///
/// A general hash index costs a cache miss per new stack. Here each parent keeps
/// its child with the greatest name: a frame whose name sorts after it is
/// certainly new, which in sorted input is almost every new stack, and needs no
/// lookup at all. Other frames walk the parent's child list; if such walks add up
/// (unsorted input, wide fan-out), the builder switches to the hash index, so the
/// worst case stays linear.
#[derive(Clone, Debug)]
pub struct StackBuilder {
    max_child: Vec<u32>,
    first_child: Vec<u32>,
    next_sibling: Vec<u32>,
    root_max: u32,
    root_first: u32,
    walk_budget: i64,
}

const NONE: u32 = u32::MAX;

impl Default for StackBuilder {
    /// A builder for an empty table (see [`StackBuilder::resume`] for one that
    /// has stacks).
    fn default() -> Self {
        StackBuilder {
            max_child: Vec::new(),
            first_child: Vec::new(),
            next_sibling: Vec::new(),
            root_max: NONE,
            root_first: NONE,
            walk_budget: 1 << 22,
        }
    }
}

impl StackBuilder {
    fn slots(&mut self, p: u32) -> (&mut u32, &mut u32) {
        if p == NO_PREFIX {
            (&mut self.root_max, &mut self.root_first)
        } else {
            (
                &mut self.max_child[p as usize],
                &mut self.first_child[p as usize],
            )
        }
    }

    /// A builder that continues `table` (stacks already there are found, not
    /// added again): its child lists and greatest children are rebuilt, one
    /// pass. What a parser resumes with after handing its profile over.
    pub fn resume(table: &StackTable, names: &super::frames::Frames) -> Self {
        let mut b = Self::default();
        let n = table.len();
        b.max_child.reserve_exact(n);
        b.first_child.reserve_exact(n);
        b.next_sibling.reserve_exact(n);
        let greater = |a: FrameId, b: FrameId| names.raw(a) > names.raw(b);
        for id in 0..table.len() as u32 {
            b.link(table, table.prefix[id as usize], id, greater);
        }
        b
    }

    /// Room for `n` more stacks without growing.
    pub fn reserve(&mut self, n: usize) {
        self.max_child.reserve_exact(n);
        self.first_child.reserve_exact(n);
        self.next_sibling.reserve_exact(n);
    }

    /// Records new stack `id` under `p`; `greater(a, b)` says name a > name b.
    fn link(
        &mut self,
        table: &StackTable,
        p: u32,
        id: u32,
        greater: impl Fn(FrameId, FrameId) -> bool,
    ) {
        self.max_child.push(NONE);
        self.first_child.push(NONE);
        let (max, first) = self.slots(p);
        let old_first = *first;
        *first = id;
        if *max == NONE || greater(table.frame[id as usize], table.frame[*max as usize]) {
            *max = id;
        }
        self.next_sibling.push(old_first);
        self.walk_budget += 4;
    }

    /// The stack `prefix` + `frame`, added if new.
    #[inline]
    pub fn child(
        &mut self,
        table: &mut StackTable,
        names: &super::frames::Frames,
        prefix: Option<StackId>,
        frame: FrameId,
    ) -> StackId {
        self.child_by(table, |a, b| names.raw(a) > names.raw(b), prefix, frame)
    }

    /// [`StackBuilder::child`] with the name order given as `greater(a, b)`
    /// (name a sorts after name b), e.g. by precomputed ranks.
    #[inline]
    pub fn child_by(
        &mut self,
        table: &mut StackTable,
        greater: impl Fn(FrameId, FrameId) -> bool,
        prefix: Option<StackId>,
        frame: FrameId,
    ) -> StackId {
        let p = prefix.map_or(NO_PREFIX, |s| s.0);
        let (max, first) = if p == NO_PREFIX {
            (self.root_max, self.root_first)
        } else {
            (self.max_child[p as usize], self.first_child[p as usize])
        };
        if max != NONE {
            let mf = table.frame[max as usize];
            if mf == frame {
                return StackId(max);
            }
            if !greater(frame, mf) {
                // Maybe an older sibling: ask the index, or walk the list.
                if table.index.is_some() {
                    if let Some(id) = table.lookup(p, frame) {
                        return StackId(id);
                    }
                } else {
                    let mut c = first;
                    while c != NONE {
                        self.walk_budget -= 1;
                        if table.frame[c as usize] == frame {
                            return StackId(c);
                        }
                        c = self.next_sibling[c as usize];
                    }
                    if self.walk_budget < 0 {
                        table.ensure_index();
                    }
                }
            }
        }
        let id = table.push_new(p, frame);
        self.link(table, p, id, greater);
        StackId(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_prefixes_and_keeps_parents_before_children() {
        let mut t = StackTable::new();
        let (a, b, c) = (FrameId(0), FrameId(1), FrameId(2));
        let sa = t.intern(None, a);
        let sab = t.intern(Some(sa), b);
        let sac = t.intern(Some(sa), c);
        assert_eq!(t.intern(None, a), sa);
        assert_eq!(t.intern(Some(sa), b), sab);
        assert_eq!(t.len(), 3);
        assert!(sa < sab && sa < sac);
        assert_eq!(t.path(sac), vec![a, c]);
        let mut t = t;
        assert_eq!(t.find(&[a, b]), Some(sab));
        assert_eq!(t.find(&[b]), None);
        // The same frame under another prefix is another stack.
        assert_ne!(t.intern(Some(sab), a), sa);
    }
}

#[cfg(test)]
mod builder_tests {
    use super::*;
    use crate::model::frames::Frames;

    /// Interns `paths` with a builder and with the indexed table; both must agree.
    fn both(paths: &[&[&str]]) {
        let mut names = Frames::new();
        let mut fast = StackTable::new();
        let mut slow = StackTable::new();
        let mut b = StackBuilder::default();
        for path in paths {
            let (mut pf, mut ps) = (None, None);
            for n in *path {
                let f = names.intern(n.as_bytes());
                pf = Some(b.child(&mut fast, &names, pf, f));
                ps = Some(slow.intern(ps, f));
            }
            assert_eq!(pf, ps, "{path:?}");
        }
        assert_eq!(fast.len(), slow.len());
    }

    #[test]
    fn builder_dedupes_sorted_unsorted_and_revisited_children() {
        both(&[
            &["a", "foo"],
            &["a", "foo::bar", "x"],
            &["a", "foo", "y"],
            &["a", "foo::bar", "x"],
            &["b"],
            &["a"],
            &["a", "foo", "y", "z"],
            &["a", "zzz"],
            &["a", "aaa"],
            &["a", "zzz"],
        ]);
    }

    #[test]
    fn builder_switches_to_the_index_on_wide_unsorted_fan_out() {
        let names: Vec<String> = (0..3000)
            .map(|i| format!("f{:05}", (i * 7919) % 3000))
            .collect();
        let mut paths: Vec<Vec<&str>> = names.iter().map(|n| vec!["root", n.as_str()]).collect();
        paths.extend(names.iter().rev().map(|n| vec!["root", n.as_str(), "leaf"]));
        let refs: Vec<&[&str]> = paths.iter().map(|p| p.as_slice()).collect();
        both(&refs);
    }
}

#[cfg(test)]
mod resume_tests {
    use super::*;
    use crate::model::frames::Frames;

    #[test]
    fn a_resumed_builder_finds_every_stack_already_there() {
        // Under "a": children b, c, d in that order, so the greatest (d) is not
        // the first; a builder that took the first as greatest would add d again.
        let mut names = Frames::new();
        let mut table = StackTable::new();
        let mut b = StackBuilder::default();
        let ids: Vec<FrameId> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| names.intern(n.as_bytes()))
            .collect();
        let a = b.child(&mut table, &names, None, ids[0]);
        let mut kids = Vec::new();
        for &f in &ids[1..] {
            kids.push(b.child(&mut table, &names, Some(a), f));
        }
        let len = table.len();
        let mut r = StackBuilder::resume(&table, &names);
        assert_eq!(r.child(&mut table, &names, None, ids[0]), a);
        for (&f, &k) in ids[1..].iter().zip(&kids) {
            assert_eq!(r.child(&mut table, &names, Some(a), f), k);
        }
        assert_eq!(table.len(), len, "nothing added");
        // And a new one still is.
        let e = names.intern(b"e");
        let se = r.child(&mut table, &names, Some(a), e);
        assert_eq!(table.len(), len + 1);
        assert_eq!(r.child(&mut table, &names, Some(a), e), se);
    }
}
