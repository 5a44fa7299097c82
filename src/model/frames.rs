//! Interned frame names.
//!
//! Names are stored as the raw bytes the profile carried (so invalid UTF-8 interns to one
//! id per distinct byte string) and decoded lossily only when shown.

use std::borrow::Cow;

use hashbrown::HashTable;

/// Index of an interned frame name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FrameId(pub u32);

/// The frame-name interner: one arena of bytes, one span per name, a hash index.
#[derive(Default, Clone)]
pub struct Frames {
    bytes: Vec<u8>,
    spans: Vec<(usize, usize)>,
    index: HashTable<u32>,
    hasher: foldhash::fast::FixedState,
}

impl std::fmt::Debug for Frames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frames").field("len", &self.len()).finish()
    }
}

impl Frames {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of distinct names.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    fn hash(&self, name: &[u8]) -> u64 {
        use std::hash::BuildHasher;
        self.hasher.hash_one(name)
    }

    /// The id of `name`, adding it if it is new.
    pub fn intern(&mut self, name: &[u8]) -> FrameId {
        let hash = self.hash(name);
        let Self {
            bytes,
            spans,
            index,
            hasher,
        } = self;
        let found = index.find(hash, |&id| {
            let (start, len) = spans[id as usize];
            &bytes[start..start + len] == name
        });
        if let Some(&id) = found {
            return FrameId(id);
        }
        let id = spans.len() as u32;
        spans.push((bytes.len(), name.len()));
        bytes.extend_from_slice(name);
        index.insert_unique(hash, id, |&other| {
            use std::hash::BuildHasher;
            let (start, len) = spans[other as usize];
            hasher.hash_one(&bytes[start..start + len])
        });
        FrameId(id)
    }

    /// The id of `name` if it was interned.
    pub fn get(&self, name: &[u8]) -> Option<FrameId> {
        let hash = self.hash(name);
        self.index
            .find(hash, |&id| self.raw(FrameId(id)) == name)
            .map(|&id| FrameId(id))
    }

    /// The name's bytes as the profile carried them.
    pub fn raw(&self, id: FrameId) -> &[u8] {
        let (start, len) = self.spans[id.0 as usize];
        &self.bytes[start..start + len]
    }

    /// The name as text; invalid UTF-8 is replaced, control characters are kept
    /// (use [`crate::host::sanitize`] before the name reaches a terminal).
    pub fn name(&self, id: FrameId) -> Cow<'_, str> {
        String::from_utf8_lossy(self.raw(id))
    }

    pub fn ids(&self) -> impl Iterator<Item = FrameId> + use<> {
        (0..self.spans.len() as u32).map(FrameId)
    }

    /// Each frame's position in byte-wise name order (the order siblings are
    /// drawn in), by id.
    pub fn name_ranks(&self) -> Vec<u32> {
        let mut ids: Vec<FrameId> = self.ids().collect();
        ids.sort_unstable_by(|a, b| self.raw(*a).cmp(self.raw(*b)));
        let mut rank = vec![0u32; ids.len()];
        for (r, id) in ids.iter().enumerate() {
            rank[id.0 as usize] = r as u32;
        }
        rank
    }

    /// Bytes held, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.spans.capacity() * 16 + self.index.capacity() * 5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_each_name_once() {
        let mut f = Frames::new();
        let a = f.intern(b"main");
        let b = f.intern(b"foo");
        assert_ne!(a, b);
        assert_eq!(f.intern(b"main"), a);
        assert_eq!(f.len(), 2);
        assert_eq!(f.get(b"foo"), Some(b));
        assert_eq!(f.get(b"bar"), None);
        assert_eq!(f.name(b), "foo");
    }

    #[test]
    fn keeps_invalid_utf8_distinct_and_shows_it_lossily() {
        let mut f = Frames::new();
        let a = f.intern(b"caf\xe9");
        let b = f.intern(b"caf\xff");
        assert_ne!(a, b);
        assert_eq!(f.name(a), "caf\u{fffd}");
    }
}
