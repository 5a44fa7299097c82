//! The passes behind each transform: an old-to-new stack mapping ([`Remap`])
//! built in one pass over the old stacks, then [`finish`] rewrites the samples.

use super::super::frames::{FrameId, Frames};
use super::super::profile::{Profile, Samples};
use super::super::stacks::{NO_PREFIX, StackId, StackTable};

/// What an old stack becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// This stack of the new table.
    To(StackId),
    /// The empty stack: samples are kept with no frames (`u32::MAX`).
    Empty,
    /// Dropped, and so is everything below it.
    Dropped,
    /// Focus only: above the focus; its own samples are dropped, its callees may
    /// still reach a matching frame.
    Outside,
}

/// The old-to-new stack mapping being built.
///
/// Most new stacks are the image of one old stack, and then their children are
/// new too: old (prefix, frame) pairs are distinct, so they are appended with no
/// lookup. Only a new stack that several old stacks map to (a merged caller, a
/// focus root, a collapsed recursion) can receive the same frame twice; it is
/// marked `shared`, its children so far are entered in `shared_children`, and
/// frames arriving under it are looked up there. A drop or a minimum width
/// never shares, and a merge shares only the callers of what it merges, so
/// transforms cost about one sequential pass instead of a hash probe per stack.
pub(super) struct Remap<'a> {
    old: &'a StackTable,
    new: StackTable,
    /// One per old stack, by id.
    slots: Vec<Slot>,
    /// The slot of the empty stack, and the caller slot of root frames.
    root: Slot,
    /// Per new stack: several old stacks map to it.
    shared: Vec<bool>,
    /// Per new stack: its first child and its next sibling (`NONE`), so that a
    /// stack's children can be listed when it becomes shared.
    first_child: Vec<u32>,
    next_sibling: Vec<u32>,
    /// (new prefix or `NO_PREFIX`, frame) -> new stack, for children of shared
    /// stacks and for root frames.
    shared_children: hashbrown::HashMap<(u32, FrameId), u32, foldhash::fast::FixedState>,
}

const NONE: u32 = u32::MAX;

impl<'a> Remap<'a> {
    fn new(old: &'a StackTable, root: Slot) -> Self {
        Remap {
            old,
            new: StackTable::new(),
            slots: Vec::with_capacity(old.len()),
            root,
            shared: Vec::with_capacity(old.len()),
            first_child: Vec::with_capacity(old.len()),
            next_sibling: Vec::with_capacity(old.len()),
            shared_children: hashbrown::HashMap::default(),
        }
    }

    /// The slot of old stack `s`'s caller (already decided: it has a smaller id).
    #[inline]
    fn caller(&self, s: usize) -> Slot {
        match self.old.prefixes()[s] {
            NO_PREFIX => self.root,
            p => self.slots[p as usize],
        }
    }

    /// `frame` called from `caller`.
    #[inline]
    fn push(&mut self, caller: Slot, frame: FrameId) -> Slot {
        match caller {
            Slot::To(p) => Slot::To(self.child(p.0, frame)),
            Slot::Empty => Slot::To(self.child(NO_PREFIX, frame)),
            Slot::Dropped | Slot::Outside => caller,
        }
    }

    /// The new stack `frame` under new stack `p` (`NO_PREFIX`: a root), added
    /// if new; one that already existed becomes shared.
    #[inline]
    fn child(&mut self, p: u32, frame: FrameId) -> StackId {
        if p == NO_PREFIX || self.shared[p as usize] {
            if let Some(&id) = self.shared_children.get(&(p, frame)) {
                self.share(StackId(id));
                return StackId(id);
            }
            let id = self.append(p, frame);
            self.shared_children.insert((p, frame), id);
            return StackId(id);
        }
        StackId(self.append(p, frame))
    }

    fn append(&mut self, p: u32, frame: FrameId) -> u32 {
        let prefix = (p != NO_PREFIX).then_some(StackId(p));
        let id = self.new.push_unique(prefix, frame).0;
        self.shared.push(false);
        self.first_child.push(NONE);
        if p == NO_PREFIX {
            self.next_sibling.push(NONE);
        } else {
            self.next_sibling.push(self.first_child[p as usize]);
            self.first_child[p as usize] = id;
        }
        id
    }

    /// Marks new stack `s` as the image of more than one old stack.
    fn share(&mut self, s: StackId) {
        let i = s.0 as usize;
        if self.shared[i] {
            return;
        }
        self.shared[i] = true;
        let mut c = self.first_child[i];
        while c != NONE {
            self.shared_children
                .insert((s.0, self.new.frame(StackId(c))), c);
            c = self.next_sibling[c as usize];
        }
    }

    /// Decides every old stack in ascending id order with `decide(remap, stack,
    /// frame, caller slot)`. A stack that is given its caller's slot shares it.
    fn run(mut self, mut decide: impl FnMut(&mut Self, usize, FrameId, Slot) -> Slot) -> Self {
        let old = self.old;
        for (s, &f) in old.frames().iter().enumerate() {
            let caller = self.caller(s);
            let slot = decide(&mut self, s, f, caller);
            if let (Slot::To(p), true) = (slot, slot == caller) {
                self.share(p);
            }
            self.slots.push(slot);
        }
        self
    }
}

pub(super) fn focus<'a>(old: &'a StackTable, hit: &[bool]) -> Remap<'a> {
    Remap::new(old, Slot::Outside).run(|r, _, f, caller| match caller {
        Slot::Outside if hit[f.0 as usize] => r.push(Slot::Empty, f),
        Slot::Outside => Slot::Outside,
        _ => r.push(caller, f),
    })
}

pub(super) fn drop_matching<'a>(old: &'a StackTable, hit: &[bool]) -> Remap<'a> {
    Remap::new(old, Slot::Empty).run(|r, _, f, caller| {
        if hit[f.0 as usize] {
            Slot::Dropped
        } else {
            r.push(caller, f)
        }
    })
}

pub(super) fn merge<'a>(old: &'a StackTable, hit: &[bool]) -> Remap<'a> {
    Remap::new(old, Slot::Empty).run(|r, _, f, caller| {
        if hit[f.0 as usize] {
            caller
        } else {
            r.push(caller, f)
        }
    })
}

pub(super) fn hide<'a>(old: &'a StackTable, frames: &Frames, path: &[String]) -> Remap<'a> {
    // depth[s] = d > 0 when stack s is the path's first d names, else 0.
    let mut depth: Vec<u32> = Vec::with_capacity(old.len());
    let want = path.len();
    Remap::new(old, Slot::Empty).run(|r, s, f, caller| {
        let above = match old.prefixes()[s] {
            NO_PREFIX => Some(0),
            p => Some(depth[p as usize] as usize).filter(|&d| d > 0),
        };
        let d = match above {
            Some(d) if d < want && frames.name(f) == path[d].as_str() => d + 1,
            _ => 0,
        };
        depth.push(d as u32);
        if d == want { caller } else { r.push(caller, f) }
    })
}

pub(super) fn collapse_direct(old: &StackTable) -> Remap<'_> {
    Remap::new(old, Slot::Empty).run(|r, s, f, caller| match old.prefixes()[s] {
        p if p != NO_PREFIX && old.frames()[p as usize] == f => caller,
        _ => r.push(caller, f),
    })
}

/// Indirect recursion needs to know whether a function is anywhere on the
/// collapsed caller stack. A walk up each stack would cost its depth, so this one
/// walks the old trie depth first (parents still before children) and keeps the
/// collapsed stack of the current node as an array, with each open function's
/// position in it; every change is undone on leaving the node, so each stack costs
/// O(1).
pub(super) fn collapse_indirect(old: &StackTable, nframes: usize) -> Remap<'_> {
    let n = old.len();
    let prefixes = old.prefixes();
    let frames = old.frames();
    // Children in CSR form; index 0 is the root, index s + 1 is stack s.
    let parent_of = |s: usize| match prefixes[s] {
        NO_PREFIX => 0,
        p => p as usize + 1,
    };
    let mut start = vec![0u32; n + 2];
    for s in 0..n {
        start[parent_of(s) + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut fill = start.clone();
    let mut children = vec![0u32; n];
    for s in 0..n {
        let p = parent_of(s);
        children[fill[p] as usize] = s as u32;
        fill[p] += 1;
    }
    drop(fill);

    enum Step {
        Enter(u32),
        /// Undo a node: the caller's length, a path entry it overwrote, and the
        /// position of its function before it was pushed.
        Leave {
            len: usize,
            entry: Option<(usize, u32)>,
            open: Option<(usize, u32, u32)>,
        },
    }
    let mut remap = Remap::new(old, Slot::Empty);
    remap.slots = vec![Slot::Empty; n];
    // The collapsed stack of the current node is path[..len] (new stack ids);
    // open_at[f] / open_depth[f] say where function f was last pushed on it.
    let mut path: Vec<u32> = Vec::new();
    let mut len = 0usize;
    let mut open_at = vec![NONE; nframes];
    let mut open_depth = vec![0u32; nframes];
    let mut todo: Vec<Step> = children[start[0] as usize..start[1] as usize]
        .iter()
        .map(|&c| Step::Enter(c))
        .collect();
    while let Some(step) = todo.pop() {
        let s = match step {
            Step::Enter(s) => s as usize,
            Step::Leave {
                len: l,
                entry,
                open,
            } => {
                if let Some((f, at, d)) = open {
                    open_at[f] = at;
                    open_depth[f] = d;
                }
                if let Some((i, v)) = entry {
                    path[i] = v;
                }
                len = l;
                continue;
            }
        };
        let f = frames[s];
        let fi = f.0 as usize;
        let (at, d) = (open_at[fi], open_depth[fi] as usize);
        if at != NONE && d < len && path[d] == at {
            // Re-entered: return to the open occurrence.
            remap.slots[s] = Slot::To(StackId(at));
            remap.share(StackId(at));
            todo.push(Step::Leave {
                len,
                entry: None,
                open: None,
            });
            len = d + 1;
        } else {
            let caller = len.checked_sub(1).map_or(NO_PREFIX, |i| path[i]);
            let id = remap.child(caller, f);
            remap.slots[s] = Slot::To(id);
            let entry = if len < path.len() {
                let was = path[len];
                path[len] = id.0;
                Some((len, was))
            } else {
                path.push(id.0);
                None
            };
            todo.push(Step::Leave {
                len,
                entry,
                open: Some((fi, at, open_depth[fi])),
            });
            open_at[fi] = id.0;
            open_depth[fi] = len as u32;
            len += 1;
        }
        let (a, b) = (start[s + 1] as usize, start[s + 2] as usize);
        todo.extend(children[a..b].iter().map(|&c| Step::Enter(c)));
    }
    remap
}

pub(super) fn min_width(profile: &Profile, percent: f64) -> Remap<'_> {
    let old = &profile.stacks;
    let stride = profile.value_types.len();
    let v = profile.default_value;
    // Width of each stack's node: absolute values of its samples and its callees'.
    let mut width = vec![0u64; old.len()];
    let mut total = 0u64;
    if v < stride {
        let values = profile.samples.values.iter().skip(v).step_by(stride);
        for (&s, &x) in profile.samples.stack.iter().zip(values) {
            let x = x.unsigned_abs();
            total = total.saturating_add(x);
            if let Some(w) = width.get_mut(s as usize) {
                *w = w.saturating_add(x);
            }
        }
    }
    let prefixes = old.prefixes();
    for s in (0..old.len()).rev() {
        if let Some(p) = prefixes.get(s).filter(|&&p| p != NO_PREFIX) {
            width[*p as usize] = width[*p as usize].saturating_add(width[s]);
        }
    }
    let limit = percent / 100.0 * total as f64;
    // A narrow node's callees are narrow too, so a stack cut at its first narrow
    // node maps to the nearest wide ancestor.
    Remap::new(old, Slot::Empty).run(|r, s, f, caller| {
        if (width[s] as f64) < limit {
            caller
        } else {
            r.push(caller, f)
        }
    })
}

/// The new profile: stacks from `remap`, samples remapped, dropped samples removed
/// from every column.
pub(super) fn finish(profile: &Profile, remap: Remap<'_>) -> Profile {
    let Remap {
        new, slots, root, ..
    } = remap;
    let old = &profile.samples;
    let mut stack = Vec::with_capacity(old.len());
    // Filled only once a sample is dropped.
    let mut keep: Vec<bool> = Vec::new();
    for (i, &s) in old.stack.iter().enumerate() {
        let slot = match s {
            u32::MAX => root,
            s => slots.get(s as usize).copied().unwrap_or(Slot::Dropped),
        };
        match slot {
            Slot::To(n) => stack.push(n.0),
            Slot::Empty => stack.push(u32::MAX),
            Slot::Dropped | Slot::Outside => {
                // A placeholder, removed with the sample's other columns below.
                stack.push(u32::MAX);
                if keep.is_empty() {
                    keep = vec![true; old.len()];
                }
                keep[i] = false;
            }
        }
    }
    let mut samples = Samples {
        stack,
        ..old.clone()
    };
    if !keep.is_empty() {
        samples.retain(&keep, profile.value_types.len());
    }
    profile.derive(new, samples)
}
