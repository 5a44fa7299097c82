//! Stacks reversed in bulk: what the inverted view and a callers tree are made of.

use super::{NO_PREFIX, StackTable};
use crate::model::frames::FrameId;

/// [`reversed_paths`] on two threads when there is enough to do: the paths
/// are split by their first frame (the new root) into two halves of about
/// the same count, whose reversed trees share no stack. Both write into one
/// table's room (the first from its start, the second from the end of the
/// first's room), and the second part then moves down, its ids moved on.
pub fn reversed_paths_parallel(
    old: &StackTable,
    rank: &[u32],
    from: &[u32],
) -> (StackTable, Vec<u32>) {
    const MIN: usize = 1 << 16;
    if from.len() < MIN {
        return reversed_paths(old, rank, from);
    }
    // Paths per root frame, then the frames whose running count stays under
    // half go to the first part.
    let nframes = rank.len();
    let mut per_frame = vec![0usize; nframes];
    for &s in from {
        if let Some(n) = per_frame.get_mut(old.frame[s as usize].0 as usize) {
            *n += 1;
        }
    }
    let mut first_part = vec![false; nframes];
    let mut count = 0;
    for (f, &n) in per_frame.iter().enumerate() {
        if count + n <= from.len() / 2 {
            first_part[f] = true;
            count += n;
        }
    }
    let in_first: Vec<bool> = from
        .iter()
        .map(|&s| first_part.get(old.frame[s as usize].0 as usize) == Some(&true))
        .collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (&s, &first) in from.iter().zip(&in_first) {
        if first { a.push(s) } else { b.push(s) }
    }
    if a.is_empty() || b.is_empty() {
        return reversed_paths(old, rank, from);
    }
    let links = Links::of(old, rank);
    // Both halves write into one pair of arrays, each from its own end of
    // the room it may need: their pages are first touched (faulted) by the
    // thread that fills them, and the second half moves down afterwards.
    let (room_a, room_b) = (links.steps(&a), links.steps(&b));
    let mut prefix = vec![0u32; room_a + room_b];
    let mut frame = vec![0u32; room_a + room_b];
    let ((ids_a, len_a), (ids_b, len_b)) = {
        let (pa, pb) = prefix.split_at_mut(room_a);
        let (fa, fb) = frame.split_at_mut(room_a);
        std::thread::scope(|scope| {
            let hb = scope.spawn(|| reverse_into(&links, rank, &b, Out::new(pb, fb)));
            let ra = reverse_into(&links, rank, &a, Out::new(pa, fa));
            let rb = hb.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            (ra, rb)
        })
    };
    drop(links);
    let off = len_a as u32;
    // The second part's prefixes move down (and on) on one thread while its
    // frames move and the ids go back in `from`'s order on this one: each
    // is a pass over tens of megabytes.
    let out = std::thread::scope(|scope| {
        let moved = scope.spawn(|| {
            for i in 0..len_b {
                let p = prefix[room_a + i];
                prefix[len_a + i] = if p == NO_PREFIX { p } else { p + off };
            }
        });
        frame.copy_within(room_a..room_a + len_b, len_a);
        let (mut ia, mut ib) = (ids_a.into_iter(), ids_b.into_iter());
        let out: Vec<u32> = in_first
            .iter()
            .map(|&first| {
                if first {
                    ia.next().unwrap_or(NO_PREFIX)
                } else {
                    ib.next().map_or(NO_PREFIX, |id| id + off)
                }
            })
            .collect();
        moved
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        out
    });
    let table = StackTable::from_parts(prefix, frame, len_a + len_b);
    (table, out)
}

/// Reverses stacks in bulk: for each `from[i]`, its path in `old` read leaf first
/// (`from[i]`'s own frame becomes a root), interned in a new table. Returns the
/// table and the new stack of each `from[i]`. `rank` is each frame's place in
/// name order ([`Frames::name_ranks`](crate::model::Frames::name_ranks)):
/// siblings come out adjacent and in that order.
///
/// What inversion and a callers tree are made of. The work goes level by level
/// (breadth first) instead of stack by stack: every path still being reversed is
/// a cursor (where it is in `old`, the new stack it has reached), cursors under one
/// new parent sit together, and within that group a child is found by its frame
/// in an array stamped per group, so there is no hash table at all. Each step
/// reads `old` at an independent place, which the CPU overlaps; the stack-by-stack
/// walk waited on one hash probe after another. O(sum of path lengths + frames).
/// The new table comes out breadth first where paths share stacks, then the
/// paths alone as chains: a parent's children have adjacent ids, in name order.
pub fn reversed_paths(old: &StackTable, rank: &[u32], from: &[u32]) -> (StackTable, Vec<u32>) {
    let links = Links::of(old, rank);
    let room = links.steps(from);
    let (mut prefix, mut frame) = (vec![0u32; room], vec![0u32; room]);
    let (ids, len) = reverse_into(&links, rank, from, Out::new(&mut prefix, &mut frame));
    (StackTable::from_parts(prefix, frame, len), ids)
}

/// Where a reversal writes its stacks: room in the new table's arrays, ids
/// counted from the room's start. Zeroed room is mapped lazily, so the pages
/// are faulted in by whoever writes them.
struct Out<'a> {
    prefix: &'a mut [u32],
    frame: &'a mut [u32],
    len: usize,
}

impl<'a> Out<'a> {
    fn new(prefix: &'a mut [u32], frame: &'a mut [u32]) -> Self {
        Out {
            prefix,
            frame,
            len: 0,
        }
    }

    /// Appends a stack; the room is one slot per step, so it always fits.
    #[inline]
    fn push_new(&mut self, p: u32, f: FrameId) -> u32 {
        let id = self.len;
        self.prefix[id] = p;
        self.frame[id] = f.0;
        self.len += 1;
        id as u32
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Room for `n` stacks written later with [`Out::set`]: the first's id.
    fn reserve(&mut self, n: usize) -> u32 {
        let id = self.len;
        self.len += n;
        id as u32
    }

    #[inline]
    fn set(&mut self, id: u32, p: u32, f: FrameId) {
        self.prefix[id as usize] = p;
        self.frame[id as usize] = f.0;
    }
}

/// What the reversal reads of the old table, made once for both threads.
struct Links {
    /// (frame, prefix) side by side: each step then costs one cache miss, not two.
    links: Vec<(FrameId, u32)>,
    /// Each old stack's depth.
    depth: Vec<u32>,
    /// Bounds every frame id in the table, whatever `rank` covers.
    nframes: usize,
}

impl Links {
    /// At most one new stack per step: the paths' total length.
    fn steps(&self, from: &[u32]) -> usize {
        from.iter().map(|&s| self.depth[s as usize] as usize).sum()
    }

    /// Made on two threads when the table is big (each array is a fresh
    /// block of tens of megabytes, so half the time goes on page faults).
    fn of(old: &StackTable, rank: &[u32]) -> Links {
        let pairs = || {
            let mut links: Vec<(FrameId, u32)> = crate::host::alloc::for_random_reads(old.len());
            links.extend(old.frame.iter().copied().zip(old.prefix.iter().copied()));
            links
        };
        let depths = || {
            let mut depth: Vec<u32> = Vec::with_capacity(old.len());
            for &p in &old.prefix {
                depth.push(if p == NO_PREFIX {
                    1
                } else {
                    depth[p as usize] + 1
                });
            }
            depth
        };
        let (links, depth) = if old.len() > 1 << 20 {
            std::thread::scope(|s| {
                let links = s.spawn(pairs);
                let depth = depths();
                (
                    links
                        .join()
                        .unwrap_or_else(|e| std::panic::resume_unwind(e)),
                    depth,
                )
            })
        } else {
            (pairs(), depths())
        };
        let nframes = old
            .frame
            .iter()
            .map(|f| f.0 as usize + 1)
            .max()
            .unwrap_or(0)
            .max(rank.len());
        Links {
            links,
            depth,
            nframes,
        }
    }
}

/// A path being reversed.
#[derive(Clone, Copy)]
struct Cursor {
    /// Where the path is in `old`.
    pos: u32,
    /// Index into `from`.
    origin: u32,
    /// The new stack reached so far (`NO_PREFIX` before the first step).
    parent: u32,
}

/// The reversal itself, into `new`: the new stack of each `from[i]` (ids
/// from the room's start) and how many stacks were written.
fn reverse_into(old: &Links, rank: &[u32], from: &[u32], mut new: Out<'_>) -> (Vec<u32>, usize) {
    let Links { links, nframes, .. } = old;
    let mut out = vec![NO_PREFIX; from.len()];
    let nframes = *nframes;
    let rank_of = |f: FrameId| rank.get(f.0 as usize).copied().unwrap_or(u32::MAX);
    let mut stamp = vec![u32::MAX; nframes];
    let mut slot = vec![0u32; nframes];
    let mut distinct: Vec<FrameId> = Vec::new();
    let mut group = 0u32;
    let mut cur: Vec<Cursor> = from
        .iter()
        .enumerate()
        .map(|(i, &pos)| Cursor {
            pos,
            origin: i as u32,
            parent: NO_PREFIX,
        })
        .collect();
    let mut next: Vec<Cursor> = Vec::with_capacity(cur.len());
    // Per cursor of the level: its new stack, and where its path goes next in
    // `old` (`NO_PREFIX`: it ends here, or goes on as a chain).
    let mut step: Vec<(u32, u32)> = Vec::with_capacity(cur.len());
    let mut counts: Vec<u32> = Vec::new();
    let mut gathered: Vec<(FrameId, u32)> = Vec::with_capacity(cur.len());
    let mut chains: Vec<Cursor> = Vec::new();
    while !cur.is_empty() {
        let base = new.len() as u32;
        // Gather first, in a loop of its own: its loads are independent cache
        // misses, and a short loop body lets the CPU keep many in flight.
        gathered.clear();
        gathered.extend(cur.iter().map(|c| links[c.pos as usize]));
        step.clear();
        let mut i = 0;
        while i < cur.len() {
            let p = cur[i].parent;
            let mut j = i + 1;
            while j < cur.len() && cur[j].parent == p {
                j += 1;
            }
            if j - i == 1 {
                // A path alone under its new parent stays alone to its end
                // (most of them, deep down: 92% of the steps of a 1M-line
                // profile): the rest of it is a chain, walked after the
                // levels (see `walk_chains`).
                let (f, up) = gathered[i];
                let id = new.push_new(p, f);
                if up != NO_PREFIX {
                    chains.push(Cursor {
                        pos: up,
                        origin: cur[i].origin,
                        parent: id,
                    });
                }
                step.push((id, NO_PREFIX));
                i = j;
                continue;
            }
            group = group.wrapping_add(1);
            if group == u32::MAX {
                // Stamps of an earlier group could collide: start afresh.
                stamp.fill(u32::MAX);
                group = 0;
            }
            // The group's distinct frames become its new stacks, in name
            // order: siblings are then adjacent and sorted, which the tree
            // takes as they are (see `CallTree::build`).
            distinct.clear();
            for &(f, _) in &gathered[i..j] {
                let fi = f.0 as usize;
                if stamp[fi] != group {
                    stamp[fi] = group;
                    distinct.push(f);
                }
            }
            distinct.sort_unstable_by_key(|f| (rank_of(*f), f.0));
            for &f in &distinct {
                slot[f.0 as usize] = new.push_new(p, f);
            }
            step.extend(
                gathered[i..j]
                    .iter()
                    .map(|&(f, up)| (slot[f.0 as usize], up)),
            );
            i = j;
        }
        // The cursors that go on, grouped by their new stack (a counting sort:
        // this level's stacks have ids base..new.len()).
        counts.clear();
        counts.resize(new.len() - base as usize + 1, 0);
        for (c, &(id, up)) in cur.iter().zip(&step) {
            if up == NO_PREFIX {
                out[c.origin as usize] = id;
            } else {
                counts[(id - base) as usize + 1] += 1;
            }
        }
        for k in 1..counts.len() {
            counts[k] += counts[k - 1];
        }
        next.clear();
        next.resize(
            counts.last().copied().unwrap_or(0) as usize,
            Cursor {
                pos: 0,
                origin: 0,
                parent: 0,
            },
        );
        for (c, &(id, up)) in cur.iter().zip(&step) {
            if up != NO_PREFIX {
                let k = &mut counts[(id - base) as usize];
                next[*k as usize] = Cursor {
                    pos: up,
                    origin: c.origin,
                    parent: id,
                };
                *k += 1;
            }
        }
        std::mem::swap(&mut cur, &mut next);
    }
    drop((cur, next, step, gathered));
    walk_chains(old, &chains, &mut new, &mut out);
    (out, new.len())
}

/// The paths left alone under their new parent, each written as a chain of
/// adjacent stacks (a stack's only child is the next one), its length known
/// from the old stack's depth. A few chains go in step with one another: the
/// old table is read mostly one stack back (a parse makes a line's frames
/// adjacent), so each chain's reads stay in the cache lines it last read,
/// and the chains' misses (where a path jumps up the old table) overlap.
fn walk_chains(old: &Links, chains: &[Cursor], new: &mut Out<'_>, out: &mut [u32]) {
    /// Chains in step: enough misses in flight, few enough lines to stay cached.
    const LANES: usize = 16;
    #[derive(Clone, Copy, Default)]
    struct Lane {
        pos: u32,
        /// The next slot to write and the stack it hangs from.
        at: u32,
        parent: u32,
        origin: u32,
    }
    let links = &old.links;
    let start = |c: &Cursor, new: &mut Out<'_>| Lane {
        pos: c.pos,
        at: new.reserve(old.depth[c.pos as usize] as usize),
        parent: c.parent,
        origin: c.origin,
    };
    let mut todo = chains.iter();
    let mut lanes = [Lane::default(); LANES];
    let mut live = 0;
    for c in todo.by_ref().take(LANES) {
        lanes[live] = start(c, new);
        live += 1;
    }
    // A lane whose chain ends takes the next one, so a long chain (deep
    // recursion) is walked beside others.
    while live > 0 {
        let mut k = 0;
        while k < live {
            let lane = &mut lanes[k];
            let (f, up) = links[lane.pos as usize];
            new.set(lane.at, lane.parent, f);
            lane.parent = lane.at;
            lane.at += 1;
            lane.pos = up;
            if up != NO_PREFIX {
                k += 1;
                continue;
            }
            out[lane.origin as usize] = lane.parent;
            match todo.next() {
                Some(c) => {
                    lanes[k] = start(c, new);
                    k += 1;
                }
                None => {
                    live -= 1;
                    lanes[k] = lanes[live];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::frames::FrameId;
    use crate::model::stacks::StackId;

    /// Each stack's children are one run of adjacent ids, in `rank` order,
    /// and so are the roots of each thread's part.
    fn siblings_adjacent_in_rank_order(t: &StackTable, rank: &[u32]) {
        let mut seen = std::collections::HashSet::new();
        for c in 0..t.len() {
            let p = t.prefix[c];
            let continues = c > 0 && t.prefix[c - 1] == p;
            if continues {
                let (a, b) = (t.frame[c - 1].0 as usize, t.frame[c].0 as usize);
                assert!(rank[a] < rank[b], "siblings {} and {c} out of order", c - 1);
            } else if p != NO_PREFIX {
                assert!(seen.insert(p), "the children of {p} in two runs");
            }
        }
    }

    fn no_stack_twice(t: &StackTable) {
        let mut pairs: Vec<(u32, u32)> = t
            .prefix
            .iter()
            .zip(&t.frame)
            .map(|(&p, f)| (p, f.0))
            .collect();
        pairs.sort_unstable();
        let n = pairs.len();
        pairs.dedup();
        assert_eq!(pairs.len(), n, "a stack twice");
    }

    #[test]
    fn two_threads_reverse_like_one() {
        // 8 roots x 90 callees x 100 leaves (more paths than the parallel
        // threshold), the leaves shared across callees so reversed paths merge.
        let mut t = StackTable::new();
        let mut from = Vec::new();
        for r in 0..8u32 {
            let sr = t.intern(None, FrameId(r));
            for m in 0..90u32 {
                let sm = t.intern(Some(sr), FrameId(100 + m));
                for l in 0..100u32 {
                    from.push(t.intern(Some(sm), FrameId(200 + (l * 7 + m) % 120)).0);
                }
            }
        }
        // Interior stacks too, in a scrambled order.
        from.extend((0..t.len() as u32).step_by(13));
        // A name order unlike the id order.
        let rank: Vec<u32> = (0..320u32).map(|f| (f * 97) % 320).collect();
        let (one, ids_one) = reversed_paths(&t, &rank, &from);
        let (two, ids_two) = reversed_paths_parallel(&t, &rank, &from);
        assert!(from.len() >= 1 << 16);
        assert_eq!(two.len(), one.len(), "the same stacks");
        no_stack_twice(&two);
        siblings_adjacent_in_rank_order(&one, &rank);
        siblings_adjacent_in_rank_order(&two, &rank);
        for (i, (&a, &b)) in ids_one.iter().zip(&ids_two).enumerate() {
            assert_eq!(one.path(StackId(a)), two.path(StackId(b)), "path {i}");
        }
        // Each is the reversal of its origin.
        let mut want = t.path(StackId(from[5]));
        want.reverse();
        assert_eq!(two.path(StackId(ids_two[5])), want);
    }
}
