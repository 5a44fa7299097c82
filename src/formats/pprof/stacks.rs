//! Every sample's stack interned in one radix walk over frame keys.

use crate::model::{FrameId, Frames, Profile, StackId};

/// Frames numbered in name order, so that comparing numbers compares names.
pub(super) struct NameOrder {
    /// The frame of each key (key `k` is `by_key[k - 1]`; 0 means "no frame").
    pub(super) by_key: Vec<FrameId>,
    /// The key of each frame id.
    key_of: Vec<u32>,
}

impl NameOrder {
    pub(super) fn new(frames: &Frames) -> NameOrder {
        let mut by_key: Vec<FrameId> = frames.ids().collect();
        by_key.sort_unstable_by(|&a, &b| frames.raw(a).cmp(frames.raw(b)));
        let mut key_of = vec![0u32; by_key.len()];
        for (k, f) in by_key.iter().enumerate() {
            key_of[f.0 as usize] = k as u32 + 1;
        }
        NameOrder { by_key, key_of }
    }

    /// The key of `f`. Frames interned after `new` get keys after all others: out
    /// of name order, which only changes the order siblings are created in.
    pub(super) fn key(&mut self, f: FrameId) -> u32 {
        let i = f.0 as usize;
        if i >= self.key_of.len() {
            self.key_of.resize(i + 1, 0);
        }
        if self.key_of[i] == 0 {
            self.by_key.push(f);
            self.key_of[i] = self.by_key.len() as u32;
        }
        self.key_of[i]
    }
}

/// Interns every sample's stack (`seq[offs[k]..offs[k + 1]]`: frame keys of
/// [`NameOrder`], root-first) and returns the stack of each (`u32::MAX` for an
/// empty one).
///
/// pprof samples are one per distinct stack and most of their frames are new
/// stacks (85% of the frames of a long Go CPU profile), so a hash probe per frame
/// would cost a cache miss each. Instead the samples are partitioned depth by
/// depth (an MSD radix walk): every (prefix, frame) pair is met exactly once, so
/// each is appended as a new stack without any lookup
/// ([`crate::model::StackTable::push_unique`]), children of a prefix in name
/// order, and a group of one sample appends the rest of its frames in a line.
pub(super) fn build_stacks(
    profile: &mut Profile,
    by_key: &[FrameId],
    seq: &[u32],
    offs: &[usize],
) -> Vec<u32> {
    let n = offs.len().saturating_sub(1);
    let mut stack_of = vec![u32::MAX; n];
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut keys: Vec<u64> = Vec::new();
    // Every (prefix, frame) pair is met exactly once below, so each stack is new:
    // it is appended without a lookup.
    // (range of `order`, depth, prefix stack or u32::MAX).
    let mut todo: Vec<(usize, usize, usize, u32)> = vec![(0, n, 0, u32::MAX)];
    while let Some((lo, hi, depth, prefix)) = todo.pop() {
        let prefix_id = (prefix != u32::MAX).then_some(StackId(prefix));
        if hi - lo == 1 {
            let k = order[lo] as usize;
            let mut cur = prefix_id;
            for &key in &seq[offs[k] + depth..offs[k + 1]] {
                let f = by_key[key as usize - 1];
                cur = Some(profile.stacks.push_unique(cur, f));
            }
            stack_of[k] = cur.map_or(u32::MAX, |s| s.0);
            continue;
        }
        keys.clear();
        keys.extend(order[lo..hi].iter().map(|&k| {
            let at = offs[k as usize] + depth;
            let key = if at < offs[k as usize + 1] {
                seq[at]
            } else {
                0
            };
            (u64::from(key) << 32) | u64::from(k)
        }));
        keys.sort_unstable();
        for (slot, &key) in order[lo..hi].iter_mut().zip(&keys) {
            *slot = key as u32;
        }
        let mut i = 0;
        while i < keys.len() {
            let key = keys[i] >> 32;
            let mut j = i + 1;
            while j < keys.len() && keys[j] >> 32 == key {
                j += 1;
            }
            if key == 0 {
                // These samples end here.
                for &k in &order[lo + i..lo + j] {
                    stack_of[k as usize] = prefix;
                }
            } else {
                let f = by_key[key as usize - 1];
                let child = profile.stacks.push_unique(prefix_id, f);
                todo.push((lo + i, lo + j, depth + 1, child.0));
            }
            i = j;
        }
    }
    stack_of
}
