//! Callers and callees of one function, merged across every place it occurs
//! (the "sandwich"): two profiles rooted at the function.
//!
//! Both are one pass over the stack table in id order (a prefix is settled before
//! its stacks) plus one over the samples, so opening a sandwich costs about as
//! much as building a tree, not a regex transform and an inversion.

use super::frames::FrameId;
use super::profile::Profile;
use super::stacks::{NO_PREFIX, StackId, StackTable, reversed_paths};

const NONE: u32 = u32::MAX;

/// Stacks through `f`, re-rooted at its outermost occurrence: the function's
/// callees as a tree under it. Samples without `f` are left out.
pub fn callees(profile: &Profile, f: FrameId) -> Profile {
    super::transform::focus_frame(profile, f)
}

/// Stacks through `f`, reversed from its innermost occurrence up to the root:
/// the function's callers as a tree under it (its caller, the caller's caller...).
pub fn callers(profile: &Profile, f: FrameId) -> Profile {
    let old = &profile.stacks;
    let prefixes = old.prefixes();
    // The innermost occurrence of `f` at or above each stack.
    let mut occ = vec![NONE; old.len()];
    for s in 0..old.len() {
        occ[s] = if old.frame(StackId(s as u32)) == f {
            s as u32
        } else if prefixes[s] != NO_PREFIX {
            occ[prefixes[s] as usize]
        } else {
            NONE
        };
    }
    // Each occurrence's reversed path, built once for all of them.
    let mut index = vec![NONE; old.len()];
    let mut from: Vec<u32> = Vec::new();
    for &o in &occ {
        if o != NONE && index[o as usize] == NONE {
            index[o as usize] = from.len() as u32;
            from.push(o);
        }
    }
    let (new, reversed) = reversed_paths(old, &profile.frames.name_ranks(), &from);
    let map: Vec<u32> = occ
        .iter()
        .map(|&o| match o {
            NONE => NONE,
            o => reversed[index[o as usize] as usize],
        })
        .collect();
    remap(profile, new, &map)
}

/// The samples whose stack maps somewhere, moved onto `new`.
fn remap(profile: &Profile, new: StackTable, map: &[u32]) -> Profile {
    let mut samples = profile.samples.clone();
    let keep: Vec<bool> = samples
        .stack
        .iter()
        .map(|&s| s != NONE && map[s as usize] != NONE)
        .collect();
    samples.retain(&keep, profile.value_types.len());
    for s in &mut samples.stack {
        *s = map[*s as usize];
    }
    profile.derive(new, samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ValueType;

    fn profile(lines: &[(&str, i64)]) -> Profile {
        let mut p = Profile::new("test", vec![ValueType::samples()]);
        for (path, n) in lines {
            let s = p.intern_path(path.split(';').map(str::as_bytes));
            p.push_sample(s, &[*n]);
        }
        p
    }

    /// `path count` per stack, sorted.
    fn folded(p: &Profile) -> Vec<String> {
        let mut sums = std::collections::BTreeMap::<String, i64>::new();
        for i in 0..p.samples.len() {
            let Some(s) = p.samples.stack_of(i) else {
                continue;
            };
            let names: Vec<String> = p
                .stacks
                .path(s)
                .iter()
                .map(|f| p.frames.name(*f).into_owned())
                .collect();
            *sums.entry(names.join(";")).or_default() += p.samples.values[i];
        }
        sums.into_iter().map(|(k, v)| format!("{k} {v}")).collect()
    }

    fn frame(p: &Profile, name: &str) -> FrameId {
        p.frames
            .ids()
            .find(|&f| p.frames.name(f) == name)
            .unwrap_or_default()
    }

    #[test]
    fn callees_merge_every_occurrence_under_the_function() {
        let p = profile(&[
            ("main;a;f;x", 3),
            ("main;b;f;y", 2),
            ("main;b;f", 1),
            ("main;c", 7),
        ]);
        let c = callees(&p, frame(&p, "f"));
        assert_eq!(folded(&c), ["f 1", "f;x 3", "f;y 2"]);
        assert_eq!(c.total(0), 6);
    }

    #[test]
    fn callers_reverse_from_the_function_to_the_root() {
        let p = profile(&[
            ("main;a;f;x", 3),
            ("main;b;f;y", 2),
            ("main;b;f", 1),
            ("main;c", 7),
        ]);
        let c = callers(&p, frame(&p, "f"));
        assert_eq!(folded(&c), ["f;a;main 3", "f;b;main 3"]);
    }

    #[test]
    fn recursion_counts_each_sample_once() {
        let p = profile(&[("main;f;g;f;h", 4), ("main;f", 1)]);
        let f = frame(&p, "f");
        // Callees start at the outermost f, callers at the innermost.
        assert_eq!(folded(&callees(&p, f)), ["f 1", "f;g;f;h 4"]);
        assert_eq!(folded(&callers(&p, f)), ["f;g;f;main 4", "f;main 1"]);
        assert_eq!(callers(&p, f).total(0), 5);
    }

    #[test]
    fn a_function_nowhere_gives_an_empty_profile() {
        let mut p = profile(&[("main;a", 2)]);
        let ghost = p.frames.intern(b"ghost");
        assert!(callees(&p, ghost).samples.is_empty());
        assert!(callers(&p, ghost).samples.is_empty());
    }
}
