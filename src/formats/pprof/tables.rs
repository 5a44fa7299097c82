//! The decoded message's tables as the conversion reads them: ids to positions,
//! the string table (counting bad indexes), and each location's frames. Shared
//! by `convert`, `labels` and `prune`, and depending on none of them.

use std::collections::HashMap;

use super::proto;

/// Ids to positions: a table for the usual small dense ids, a map for the rest.
pub(super) struct IdIndex {
    dense: Vec<u32>,
    sparse: HashMap<u64, u32>,
}

const NONE: u32 = u32::MAX;

impl IdIndex {
    /// Indexes `ids` (positions in order); id 0 and repeated ids are left out and
    /// counted in the returned (zero, duplicate) pair.
    pub(super) fn new(ids: impl ExactSizeIterator<Item = u64>) -> (IdIndex, u64, u64) {
        let n = ids.len();
        let mut ix = IdIndex {
            dense: vec![NONE; n + 1],
            sparse: HashMap::new(),
        };
        let (mut zero, mut dup) = (0, 0);
        for (pos, id) in ids.enumerate() {
            let pos = pos as u32;
            if id == 0 {
                zero += 1;
                continue;
            }
            let slot = match usize::try_from(id).ok().filter(|&i| i <= n) {
                Some(i) => &mut ix.dense[i],
                None => ix.sparse.entry(id).or_insert(NONE),
            };
            if *slot == NONE {
                *slot = pos;
            } else {
                dup += 1;
            }
        }
        (ix, zero, dup)
    }

    pub(super) fn get(&self, id: u64) -> Option<usize> {
        let pos = match usize::try_from(id).ok().and_then(|i| self.dense.get(i)) {
            Some(&p) => p,
            None => *self.sparse.get(&id)?,
        };
        (pos != NONE).then_some(pos as usize)
    }
}

/// The string table with counted out-of-range indexes.
pub(super) struct Strings<'a> {
    table: &'a [Vec<u8>],
    bad: u64,
}

impl<'a> Strings<'a> {
    pub(super) fn new(table: &'a [Vec<u8>]) -> Strings<'a> {
        Strings { table, bad: 0 }
    }

    pub(super) fn get(&mut self, i: i64) -> &'a [u8] {
        match usize::try_from(i).ok().and_then(|i| self.table.get(i)) {
            Some(s) => s,
            None => {
                self.bad += 1;
                b""
            }
        }
    }

    pub(super) fn text(&mut self, i: i64) -> String {
        String::from_utf8_lossy(self.get(i)).into_owned()
    }

    /// How many indexes read so far were outside the table.
    pub(super) fn bad(&self) -> u64 {
        self.bad
    }
}

/// A location's frames, root-first, as a span of the one array holding every
/// location's frames.
#[derive(Clone, Copy, Default)]
pub(super) struct LocFrames {
    pub(super) start: u32,
    pub(super) len: u32,
    /// pprof `Prune`: drop this location and everything below it.
    pub(super) prune: bool,
    /// pprof `Prune`: keep this (trimmed) location, drop everything below it.
    pub(super) beneath: bool,
}

/// Location id -> its frames, directly indexed for the usual small dense ids.
pub(super) struct LocTable {
    dense: Vec<LocFrames>,
    sparse: HashMap<u64, LocFrames>,
}

impl LocTable {
    pub(super) fn new(
        index: &IdIndex,
        locations: &[proto::Location],
        locs: &[LocFrames],
    ) -> LocTable {
        let mut t = LocTable {
            dense: vec![LocFrames::default(); locations.len() + 1],
            sparse: HashMap::new(),
        };
        for loc in locations {
            let Some(i) = index.get(loc.id) else {
                continue;
            };
            match usize::try_from(loc.id)
                .ok()
                .and_then(|id| t.dense.get_mut(id))
            {
                Some(slot) => *slot = locs[i],
                None => {
                    t.sparse.insert(loc.id, locs[i]);
                }
            }
        }
        t
    }

    /// Every location has at least one frame, so an empty entry is no location.
    #[inline]
    pub(super) fn get(&self, id: u64) -> Option<LocFrames> {
        match usize::try_from(id).ok().and_then(|i| self.dense.get(i)) {
            Some(l) if l.len > 0 => Some(*l),
            Some(_) => None,
            None => self.sparse.get(&id).copied(),
        }
    }
}
