//! pprof's `Prune`: `drop_frames` / `keep_frames` applied when they are plain
//! `|`-separated names.

use super::tables::LocFrames;

/// `drop_frames` / `keep_frames` when they are plain alternatives of names.
pub(super) struct FrameFilter {
    drop: Vec<Vec<u8>>,
    keep: Vec<Vec<u8>>,
}

impl FrameFilter {
    /// `None` for an empty or non-literal regex (also when `keep` is non-literal).
    pub(super) fn new(drop: &[u8], keep: &[u8]) -> Option<FrameFilter> {
        if drop.is_empty() {
            return None;
        }
        Some(FrameFilter {
            drop: literal_alternatives(drop)?,
            keep: if keep.is_empty() {
                Vec::new()
            } else {
                literal_alternatives(keep)?
            },
        })
    }

    /// pprof's test: the simplified name matches `^(drop)$` and not `^(keep)$`.
    pub(super) fn drops(&self, name: &[u8]) -> bool {
        let name = simplify_func(name);
        self.drop.iter().any(|d| d == name) && !self.keep.iter().any(|k| k == name)
    }
}

/// `a|b|c` as names, if no alternative uses a regex metacharacter.
fn literal_alternatives(re: &[u8]) -> Option<Vec<Vec<u8>>> {
    const META: &[u8] = b"\\.+*?()[]{}^$";
    if re.iter().any(|b| META.contains(b)) {
        return None;
    }
    Some(re.split(|&b| b == b'|').map(<[u8]>::to_vec).collect())
}

/// pprof's `simplifyFunc`: no leading `.`, and cut at the first `(` that does
/// not begin `(anonymous namespace)` or end `operator()`.
pub(super) fn simplify_func(name: &[u8]) -> &[u8] {
    let name = name.strip_prefix(b".").unwrap_or(name);
    let mut i = 0;
    while i < name.len() {
        let rest = &name[i..];
        if rest.starts_with(b"(anonymous namespace)") {
            i += b"(anonymous namespace)".len();
        } else if rest.starts_with(b"operator()") {
            i += b"operator()".len();
        } else if rest[0] == b'(' {
            return &name[..i];
        } else {
            i += 1;
        }
    }
    name
}

/// pprof's `Prune` for one sample (locations leaf-first): the index of the first
/// location kept. From the root down, the first location with a dropped frame
/// that comes after a kept one cuts the stack there.
pub(super) fn prune_start(ids: &[u64], loc: impl Fn(u64) -> Option<LocFrames>) -> usize {
    let mut found_user = false;
    for i in (0..ids.len()).rev() {
        let Some(l) = loc(ids[i]) else {
            found_user = true;
            continue;
        };
        if !l.prune && !l.beneath {
            found_user = true;
            continue;
        }
        if !found_user {
            continue;
        }
        return if l.prune { i + 1 } else { i };
    }
    0
}
