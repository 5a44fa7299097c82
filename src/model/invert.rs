//! The inverted (bottom-up) profile: every stack reversed, so the leaves become
//! roots and self time gathers at the top level.

use super::profile::Profile;
use super::stacks::reversed_paths_parallel;

/// `profile` with every stack read leaf first. Frames are shared (cloned), so
/// frame ids and search matches stay valid; samples keep every column.
pub fn invert(profile: &Profile) -> Profile {
    let old = &profile.stacks;
    // Each distinct stack with samples is reversed once; samples reuse the result.
    let mut memo: Vec<u32> = vec![u32::MAX; old.len()];
    let mut from: Vec<u32> = Vec::new();
    for &s in &profile.samples.stack {
        if let Some(m) = memo.get_mut(s as usize)
            && *m == u32::MAX
        {
            *m = from.len() as u32;
            from.push(s);
        }
    }
    let (new, ids) = reversed_paths_parallel(old, &profile.frames.name_ranks(), &from);
    let mut samples = profile.samples.clone();
    for s in samples.stack.iter_mut() {
        if let Some(&m) = memo.get(*s as usize) {
            *s = ids[m as usize];
        }
    }
    profile.derive(new, samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CallTree, NodeId, TreeOptions, ValueType};

    #[test]
    fn leaves_become_roots_and_self_time_gathers_there() {
        let mut p = Profile::new("test", vec![ValueType::samples()]);
        for (path, w) in [
            (&["main", "a", "alloc"][..], 5),
            (&["main", "b", "alloc"][..], 3),
            (&["main", "b"][..], 2),
        ] {
            let s = p.intern_path(path.iter().map(|n| n.as_bytes()));
            p.push_sample(s, &[w]);
        }
        let inv = invert(&p);
        let tree = CallTree::build(&inv, TreeOptions::default());
        let roots: Vec<(String, i64)> = tree
            .child_ids(NodeId::ROOT)
            .map(|c| {
                (
                    inv.frames
                        .name(tree.frame(&inv, c).unwrap_or_default())
                        .into_owned(),
                    tree.total(c),
                )
            })
            .collect();
        assert_eq!(roots, [("alloc".to_string(), 8), ("b".to_string(), 2)]);
        assert_eq!(tree.total(NodeId::ROOT), 10);
        // alloc's callers below it: a (5) and b (3), each then main.
        let alloc = tree.child_ids(NodeId::ROOT).next().unwrap_or_default();
        let callers: Vec<i64> = tree.child_ids(alloc).map(|c| tree.total(c)).collect();
        assert_eq!(callers, [5, 3]);
    }
}
