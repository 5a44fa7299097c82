//! Stacks reversed in bulk: what the inverted view and a callers tree are made of.

use super::{NO_PREFIX, StackTable};
use crate::model::frames::FrameId;

/// [`reversed_paths`] on two threads when there is enough to do: the paths
/// are split by their first frame (the new root) into two halves of about
/// the same count, whose reversed trees share no stack, and the second
/// table is appended to the first with its ids moved on.
pub fn reversed_paths_parallel(
    old: &StackTable,
    nframes: usize,
    from: &[u32],
) -> (StackTable, Vec<u32>) {
    const MIN: usize = 1 << 16;
    if from.len() < MIN {
        return reversed_paths(old, nframes, from);
    }
    // Paths per root frame, then the frames whose running count stays under
    // half go to the first part.
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
    let in_first = |s: u32| first_part.get(old.frame[s as usize].0 as usize) == Some(&true);
    let (a, b): (Vec<u32>, Vec<u32>) = from.iter().partition(|&&s| in_first(s));
    if a.is_empty() || b.is_empty() {
        return reversed_paths(old, nframes, from);
    }
    let ((mut table, ids_a), (second, ids_b)) = std::thread::scope(|scope| {
        let hb = scope.spawn(|| reversed_paths(old, nframes, &b));
        let ra = reversed_paths_with_room(old, nframes, &a, &b);
        let rb = hb.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (ra, rb)
    });
    let off = table.len() as u32;
    table.reserve(second.len());
    for (&p, &f) in second.prefix.iter().zip(&second.frame) {
        table.push_new(if p == NO_PREFIX { p } else { p + off }, f);
    }
    // Back in `from`'s order.
    let (mut ia, mut ib) = (ids_a.into_iter(), ids_b.into_iter());
    let out = from
        .iter()
        .map(|&s| {
            if in_first(s) {
                ia.next().unwrap_or(NO_PREFIX)
            } else {
                ib.next().map_or(NO_PREFIX, |id| id + off)
            }
        })
        .collect();
    (table, out)
}

/// Reverses stacks in bulk: for each `from[i]`, its path in `old` read leaf first
/// (`from[i]`'s own frame becomes a root), interned in a new table. Returns the
/// table and the new stack of each `from[i]`. `nframes` bounds the frame ids.
///
/// What inversion and a callers tree are made of. The work goes level by level
/// (breadth first) instead of stack by stack: every path still being reversed is
/// a cursor (where it is in `old`, the new stack it has reached), cursors under one
/// new parent sit together, and within that group a child is found by its frame
/// in an array stamped per group, so there is no hash table at all. Each step
/// reads `old` at an independent place, which the CPU overlaps; the stack-by-stack
/// walk waited on one hash probe after another. O(sum of path lengths + frames).
/// The new table comes out breadth first: a parent's children have adjacent ids.
pub fn reversed_paths(old: &StackTable, nframes: usize, from: &[u32]) -> (StackTable, Vec<u32>) {
    reversed_paths_with_room(old, nframes, from, &[])
}

/// [`reversed_paths`] with room left in the table for the reversal of `more`
/// too (appended afterwards, as the parallel version does).
fn reversed_paths_with_room(
    old: &StackTable,
    nframes: usize,
    from: &[u32],
    more: &[u32],
) -> (StackTable, Vec<u32>) {
    #[derive(Clone, Copy)]
    struct Cursor {
        /// Where the path is in `old`.
        pos: u32,
        /// Index into `from`.
        origin: u32,
        /// The new stack reached so far (`NO_PREFIX` before the first step).
        parent: u32,
    }
    // (frame, prefix) side by side: each step then costs one cache miss, not two.
    let links: Vec<(FrameId, u32)> = old
        .frame
        .iter()
        .copied()
        .zip(old.prefix.iter().copied())
        .collect();
    // At most one new stack per step: the paths' total length, from each old
    // stack's depth (one pass, prefixes first), so the table never regrows.
    let mut depth: Vec<u32> = Vec::with_capacity(old.len());
    for &p in &old.prefix {
        depth.push(if p == NO_PREFIX {
            1
        } else {
            depth[p as usize] + 1
        });
    }
    let steps: usize = from
        .iter()
        .chain(more)
        .map(|&s| depth[s as usize] as usize)
        .sum();
    drop(depth);
    let mut new = StackTable::new();
    new.reserve(steps);
    let mut out = vec![NO_PREFIX; from.len()];
    let mut stamp = vec![u32::MAX; nframes];
    let mut slot = vec![0u32; nframes];
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
    // Per cursor of the level: its new stack, and where its path goes next in `old`.
    let mut step: Vec<(u32, u32)> = Vec::with_capacity(cur.len());
    let mut counts: Vec<u32> = Vec::new();
    let mut gathered: Vec<(FrameId, u32)> = Vec::with_capacity(cur.len());
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
            group = group.wrapping_add(1);
            if group == u32::MAX {
                // Stamps of an earlier group could collide: start afresh.
                stamp.fill(u32::MAX);
                group = 0;
            }
            while i < cur.len() && cur[i].parent == p {
                let (f, up) = gathered[i];
                let fi = f.0 as usize;
                let id = if stamp.get(fi) == Some(&group) {
                    slot[fi]
                } else {
                    let id = new.push_new(p, f);
                    if fi < stamp.len() {
                        stamp[fi] = group;
                        slot[fi] = id;
                    }
                    id
                };
                step.push((id, up));
                i += 1;
            }
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
    (new, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::frames::FrameId;
    use crate::model::stacks::StackId;

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
        let nframes = 320;
        let (one, ids_one) = reversed_paths(&t, nframes, &from);
        let (two, ids_two) = reversed_paths_parallel(&t, nframes, &from);
        assert!(from.len() >= 1 << 16);
        assert_eq!(two.len(), one.len(), "the same stacks");
        no_stack_twice(&two);
        for (i, (&a, &b)) in ids_one.iter().zip(&ids_two).enumerate() {
            assert_eq!(one.path(StackId(a)), two.path(StackId(b)), "path {i}");
        }
        // Each is the reversal of its origin.
        let mut want = t.path(StackId(from[5]));
        want.reverse();
        assert_eq!(two.path(StackId(ids_two[5])), want);
    }
}
