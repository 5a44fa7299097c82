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
    index: HashTable<u32>,
}

impl std::fmt::Debug for StackTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StackTable")
            .field("len", &self.len())
            .finish()
    }
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
    pub fn find(&self, path: &[FrameId]) -> Option<StackId> {
        let mut cur: Option<StackId> = None;
        for &f in path {
            let p = cur.map_or(NO_PREFIX, |s| s.0);
            let hash = key_hash(p, f);
            let id = self.index.find(hash, |&id| {
                self.prefix[id as usize] == p && self.frame[id as usize] == f
            })?;
            cur = Some(StackId(*id));
        }
        cur
    }

    pub fn heap_bytes(&self) -> usize {
        self.prefix.capacity() * 4 + self.frame.capacity() * 4 + self.index.capacity() * 5
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
        assert_eq!(t.find(&[a, b]), Some(sab));
        assert_eq!(t.find(&[b]), None);
        // The same frame under another prefix is another stack.
        assert_ne!(t.intern(Some(sab), a), sa);
    }
}
