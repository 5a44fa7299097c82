//! Format-independent adjustments applied after parsing: which value type to show,
//! and process/thread root frames.

use std::collections::HashMap;

use crate::model::{Profile, StackId};

/// Picks the value type named `want` (its kind, case-insensitive, or its index).
pub fn select_value(profile: &mut Profile, want: &str) -> Result<(), String> {
    let found = profile
        .value_types
        .iter()
        .position(|vt| vt.kind.eq_ignore_ascii_case(want))
        .or_else(|| {
            want.parse::<usize>()
                .ok()
                .filter(|&i| i < profile.value_types.len())
        });
    match found {
        Some(i) => {
            profile.default_value = i;
            Ok(())
        }
        None => Err(format!(
            "no sample type {want:?} in this profile (it has: {})",
            profile
                .value_types
                .iter()
                .map(|vt| vt.kind.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Keeps only the samples of threads (or sub-profiles) whose name matches
/// `pattern`, a regex. Errors name the threads there are.
pub fn only_threads(profile: &mut Profile, pattern: &str) -> Result<(), String> {
    let re = regex::Regex::new(pattern).map_err(|e| format!("--only-thread: {e}"))?;
    let Some(col) = &profile.samples.thread else {
        return Err("--only-thread: this profile has no thread or sub-profile information".into());
    };
    let wanted: Vec<bool> = profile
        .threads
        .iter()
        .map(|t| re.is_match(&t.name))
        .collect();
    let keep: Vec<bool> = col
        .iter()
        .map(|&t| wanted.get(t as usize).copied().unwrap_or(false))
        .collect();
    if !keep.contains(&true) {
        let mut names: Vec<&str> = profile.threads.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names.truncate(20);
        return Err(format!(
            "--only-thread {pattern:?} matches no thread with samples (threads: {})",
            names.join(", ")
        ));
    }
    let stride = profile.value_types.len();
    profile.samples.retain(&keep, stride);
    profile
        .notes
        .push(format!("only threads matching {pattern:?}"));
    Ok(())
}

/// Puts a process frame and/or a thread frame at the root of every sample's stack.
/// Returns false when the profile has no thread information to do it with.
pub fn add_roots(profile: &mut Profile, process: bool, thread: bool) -> bool {
    if !process && !thread {
        return true;
    }
    let Some(threads) = profile.samples.thread.clone() else {
        return false;
    };
    // The root frames for each thread, interned once.
    let mut root_of_thread: Vec<Option<StackId>> = Vec::with_capacity(profile.threads.len());
    for t in profile.threads.clone() {
        let mut names: Vec<String> = Vec::new();
        if process {
            names.push(match t.pid {
                Some(pid) => format!("process {pid}"),
                None => format!("process {}", t.name),
            });
        }
        if thread {
            names.push(match t.tid {
                Some(tid) => format!("{} (tid {tid})", t.name),
                None => t.name.clone(),
            });
        }
        root_of_thread.push(profile.intern_path(names.iter().map(|n| n.as_bytes())));
    }
    // Re-intern each (root, old stack) once; walk up to the first known prefix.
    let mut memo: HashMap<(u32, u32), u32> = HashMap::new();
    let old = profile.stacks.clone();
    let mut path = Vec::new();
    for (i, &t) in threads.iter().enumerate() {
        let t = t as usize;
        let Some(&Some(root)) = root_of_thread.get(t) else {
            continue;
        };
        let Some(leaf) = profile.samples.stack_of(i) else {
            profile.samples.stack[i] = root.0;
            continue;
        };
        path.clear();
        let mut cur = Some(leaf);
        let mut base = root;
        while let Some(s) = cur {
            if let Some(&n) = memo.get(&(root.0, s.0)) {
                base = StackId(n);
                break;
            }
            path.push(s);
            cur = old.prefix(s);
        }
        for &s in path.iter().rev() {
            base = profile.stacks.intern(Some(base), old.frame(s));
            memo.insert((root.0, s.0), base.0);
        }
        profile.samples.stack[i] = base.0;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CallTree, ThreadInfo, TreeOptions, ValueType};

    fn two_threads() -> Profile {
        let mut p = Profile::new(
            "test",
            vec![
                ValueType::samples(),
                ValueType::new("period", crate::model::Unit::Nanoseconds),
            ],
        );
        p.threads = vec![
            ThreadInfo {
                name: "web".into(),
                pid: Some(7),
                tid: Some(8),
            },
            ThreadInfo {
                name: "gc".into(),
                pid: Some(7),
                tid: Some(9),
            },
        ];
        let s = p.intern_path([&b"main"[..], b"run"]);
        p.push_sample(s, &[1, 10]);
        p.push_sample(s, &[1, 10]);
        p.push_sample(s, &[1, 10]);
        p.samples.thread = Some(vec![0, 1, 0]);
        p
    }

    #[test]
    fn selects_value_types_by_kind_or_index() {
        let mut p = two_threads();
        assert!(select_value(&mut p, "PERIOD").is_ok());
        assert_eq!(p.default_value, 1);
        assert!(select_value(&mut p, "0").is_ok());
        assert_eq!(p.default_value, 0);
        let Err(err) = select_value(&mut p, "cpu") else {
            panic!("cpu is not a value type here");
        };
        assert!(err.contains("samples, period"), "{err}");
    }

    #[test]
    fn puts_process_and_thread_frames_at_the_root() {
        let mut p = two_threads();
        assert!(add_roots(&mut p, true, true));
        let tree = CallTree::build(&p, TreeOptions::default());
        let top: Vec<String> = tree
            .child_ids(tree.root())
            .map(|c| {
                p.frames
                    .name(tree.frame(&p, c).unwrap_or(crate::model::FrameId(0)))
                    .into_owned()
            })
            .collect();
        assert_eq!(top, ["process 7"]);
        let proc_node = tree.child_ids(tree.root()).next().unwrap_or_default();
        let threads: Vec<(String, i64)> = tree
            .child_ids(proc_node)
            .map(|c| {
                let f = tree.frame(&p, c).unwrap_or(crate::model::FrameId(0));
                (p.frames.name(f).into_owned(), tree.total(c))
            })
            .collect();
        assert_eq!(
            threads,
            [
                ("gc (tid 9)".to_string(), 1),
                ("web (tid 8)".to_string(), 2)
            ]
        );
        assert_eq!(tree.total(tree.root()), 3);
    }

    #[test]
    fn keeps_only_the_chosen_threads_in_every_column() {
        let mut p = two_threads();
        p.samples.time = Some(vec![1, 2, 3]);
        assert!(only_threads(&mut p, "^gc$").is_ok());
        assert_eq!(p.samples.len(), 1);
        assert_eq!(p.samples.values, vec![1, 10]);
        assert_eq!(p.samples.time, Some(vec![2]));
        assert_eq!(p.samples.thread, Some(vec![1]));
        let mut p = two_threads();
        let Err(e) = only_threads(&mut p, "nope") else {
            panic!("nothing matches");
        };
        assert!(e.contains("gc, web"), "{e}");
    }

    #[test]
    fn reports_when_there_is_no_thread_information() {
        let mut p = two_threads();
        p.samples.thread = None;
        assert!(!add_roots(&mut p, false, true));
        assert!(add_roots(&mut p, false, false));
    }
}
