//! Granularity: what a frame stands for (a function, a function at one line,
//! a source file), and how a view at one granularity is found again at
//! another: each frame has a *key* at a coarser level (a line's function, a
//! function's file), so a place or a transform made on `main.parse` finds
//! `main.parse parse.go:42` or `parse.go`.

use std::borrow::Cow;
use std::collections::HashSet;

use super::{CallTree, FrameId, NodeId, Profile, Transform};

/// What a frame stands for: a function (the default), a function at one
/// source line (pprof's `-lines`), or a source file (pprof's `-files`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Granularity {
    #[default]
    Function,
    Line,
    File,
}

impl Granularity {
    pub fn name(self) -> &'static str {
        match self {
            Granularity::Function => "function",
            Granularity::Line => "line",
            Granularity::File => "file",
        }
    }

    /// The next one, for the viewer's key.
    pub fn next(self) -> Granularity {
        match self {
            Granularity::Function => Granularity::Line,
            Granularity::Line => Granularity::File,
            Granularity::File => Granularity::Function,
        }
    }

    /// The name of a frame of function `name` at `file`:`line` (empty file:
    /// unknown; line 0 or none: unknown), pprof's way: `name file:line`
    /// (`name file` without a line), or `file`; what has no file keeps `name`.
    pub fn frame_name<'a>(
        self,
        name: &'a [u8],
        file: &'a [u8],
        line: Option<u32>,
    ) -> std::borrow::Cow<'a, [u8]> {
        let line = line.filter(|&l| l > 0);
        match self {
            Granularity::Function => Cow::Borrowed(name),
            Granularity::File if !file.is_empty() => Cow::Borrowed(file),
            Granularity::File => Cow::Borrowed(name),
            Granularity::Line if file.is_empty() && line.is_none() => Cow::Borrowed(name),
            Granularity::Line => {
                let mut out = Vec::with_capacity(name.len() + file.len() + 12);
                out.extend_from_slice(name);
                out.push(b' ');
                out.extend_from_slice(file);
                if let Some(l) = line {
                    out.push(b':');
                    out.extend_from_slice(l.to_string().as_bytes());
                }
                Cow::Owned(out)
            }
        }
    }
}

impl Granularity {
    /// How coarse it is: a line is finer than its function, a function than
    /// its file.
    fn rank(self) -> u8 {
        match self {
            Granularity::Line => 0,
            Granularity::Function => 1,
            Granularity::File => 2,
        }
    }

    /// The level two views at `self` and `other` can both be keyed by.
    pub fn common(self, other: Granularity) -> Granularity {
        if self.rank() >= other.rank() {
            self
        } else {
            other
        }
    }
}

/// The file a frame's metadata names, if it names a real one.
fn file_of(p: &Profile, f: FrameId) -> Option<&str> {
    p.frame_meta
        .get(&f)
        .and_then(|m| m.file.as_deref())
        .filter(|f| !f.is_empty() && *f != "??")
}

/// Frame `f` of `p` (a profile at granularity `shown`) at the coarser `level`:
/// a line frame's function (its name less ` file:line`), any frame's file. A
/// frame with no file keeps its name, as [`Granularity::frame_name`] does.
pub fn frame_key<'a>(
    p: &'a Profile,
    f: FrameId,
    shown: Granularity,
    level: Granularity,
) -> Cow<'a, [u8]> {
    let name = p.frames.raw(f);
    if level == shown || level.rank() < shown.rank() {
        return Cow::Borrowed(name);
    }
    let file = file_of(p, f);
    match level {
        Granularity::File => Cow::Borrowed(file.map_or(name, str::as_bytes)),
        // Only a line frame gets here: `name file:line` or `name file`.
        _ => Cow::Borrowed(file.map_or(name, |file| strip_location(name, file.as_bytes()))),
    }
}

/// `name file:line` or `name file` less the location; `name` when it has none.
fn strip_location<'a>(name: &'a [u8], file: &[u8]) -> &'a [u8] {
    let mut needle = Vec::with_capacity(file.len() + 1);
    needle.push(b' ');
    needle.extend_from_slice(file);
    let Some(at) = name
        .windows(needle.len())
        .rposition(|w| w == needle.as_slice())
    else {
        return name;
    };
    let rest = &name[at + needle.len()..];
    let location = rest.is_empty()
        || rest
            .strip_prefix(b":")
            .is_some_and(|d| !d.is_empty() && d.iter().all(u8::is_ascii_digit));
    if location { &name[..at] } else { name }
}

/// Whether any frame of `p` knows its source file: else another granularity
/// names every frame as this one does.
pub fn has_sources(p: &Profile) -> bool {
    p.frames.ids().any(|f| file_of(p, f).is_some())
}

/// The node of `tree` (of `p`, at `shown`) that best stands for a path of
/// `keys` at `level`: from the root, the heaviest child whose key is the next
/// one, as deep as they go.
pub fn find_keys(
    tree: &CallTree,
    p: &Profile,
    shown: Granularity,
    level: Granularity,
    keys: &[Vec<u8>],
) -> NodeId {
    let mut at = NodeId::ROOT;
    for key in keys {
        let next = tree
            .child_ids(at)
            .filter(|&c| tree.total(c) != 0)
            .filter(|&c| {
                tree.frame(p, c)
                    .is_some_and(|f| frame_key(p, f, shown, level).as_ref() == key.as_slice())
            })
            .max_by_key(|&c| (tree.total(c), std::cmp::Reverse(c)));
        match next {
            Some(c) => at = c,
            None => break,
        }
    }
    at
}

/// The keys at `level` of the path to `n` in `tree` (of `p`, at `shown`).
pub fn path_keys(
    tree: &CallTree,
    p: &Profile,
    n: NodeId,
    shown: Granularity,
    level: Granularity,
) -> Vec<Vec<u8>> {
    tree.frame_path(p, n)
        .into_iter()
        .map(|f| frame_key(p, f, shown, level).into_owned())
        .collect()
}

/// What became of the transforms on the way to another granularity.
#[derive(Debug, Default)]
pub struct Translated {
    pub transforms: Vec<Transform>,
    /// The ones that name nothing at the new granularity, or cannot be said
    /// there (a hidden path), described.
    pub dropped: Vec<String>,
}

/// The transforms as the user made them, at the granularity they were made
/// at, with the keys of the frames each pattern named: its functions (unless
/// it was made on files) and its files. Every view at another granularity is
/// translated from here, not from the last one, so a round trip through the
/// coarser file view comes back to the very frames it began with.
#[derive(Debug)]
pub struct Anchor {
    pub made_at: Granularity,
    items: Vec<Anchored>,
}

#[derive(Debug)]
struct Anchored {
    transform: Transform,
    /// The named frames' functions: `None` when made on files, or for a
    /// transform that names no frame.
    functions: Option<HashSet<Vec<u8>>>,
    files: HashSet<Vec<u8>>,
}

impl Anchor {
    /// The anchor of `transforms`, made on a view of `p` (as loaded) at `at`.
    pub fn new(transforms: &[Transform], p: &Profile, at: Granularity) -> Anchor {
        let items = transforms
            .iter()
            .map(|t| {
                let named = pattern_of(t)
                    .and_then(|pattern| regex::Regex::new(pattern).ok())
                    .map(|re| {
                        p.frames
                            .ids()
                            .filter(|&f| re.is_match(&p.frames.name(f)))
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default();
                let keys = |level: Granularity| -> HashSet<Vec<u8>> {
                    named
                        .iter()
                        .map(|&f| frame_key(p, f, at, level).into_owned())
                        .collect()
                };
                Anchored {
                    transform: t.clone(),
                    functions: (at != Granularity::File && pattern_of(t).is_some())
                        .then(|| keys(Granularity::Function)),
                    files: keys(Granularity::File),
                }
            })
            .collect();
        Anchor { made_at: at, items }
    }

    /// The transforms for a view of `new` at `to`. At the granularity they
    /// were made at they are what the user made (a hidden path too: the same
    /// input read the same way has the same paths). Elsewhere the ones that
    /// name no frame (a time range, collapsed recursion, a minimum width)
    /// stay, a pattern names the frames whose function (or, on the way to or
    /// from files, whose file) it named: kept as it is when it already names
    /// exactly those, else the alternation of their names (`^main\.parse$` at
    /// line granularity becomes every line of `main.parse`), and a hidden path
    /// is dropped: it names one node, which has no single counterpart.
    pub fn translate(&self, new: &Profile, to: Granularity) -> Translated {
        let mut out = Translated::default();
        for item in &self.items {
            let t = &item.transform;
            if to == self.made_at {
                out.transforms.push(t.clone());
                continue;
            }
            let Some(pattern) = pattern_of(t) else {
                match t {
                    Transform::Hide { .. } => out.dropped.push(t.describe()),
                    other => out.transforms.push(other.clone()),
                }
                continue;
            };
            let (keys, level) = match &item.functions {
                Some(functions) if to != Granularity::File => (functions, Granularity::Function),
                _ => (&item.files, Granularity::File),
            };
            let Some(translated) = pattern_for(pattern, keys, new, to, level) else {
                out.dropped.push(t.describe());
                continue;
            };
            out.transforms.push(match t {
                Transform::Focus { .. } => Transform::Focus {
                    pattern: translated,
                },
                Transform::Drop { .. } => Transform::Drop {
                    pattern: translated,
                },
                _ => Transform::Merge {
                    pattern: translated,
                },
            });
        }
        out
    }

    /// How many transforms it holds.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The pattern of a transform that names frames by one.
fn pattern_of(t: &Transform) -> Option<&str> {
    match t {
        Transform::Focus { pattern }
        | Transform::Drop { pattern }
        | Transform::Merge { pattern } => Some(pattern),
        _ => None,
    }
}

/// A pattern naming the frames of `new` (at `to`) whose key at `level` is
/// one of `keys`: `pattern` itself when it names exactly those; `None` when
/// there are none.
fn pattern_for(
    pattern: &str,
    keys: &HashSet<Vec<u8>>,
    new: &Profile,
    to: Granularity,
    level: Granularity,
) -> Option<String> {
    let wanted: Vec<FrameId> = new
        .frames
        .ids()
        .filter(|&f| keys.contains(frame_key(new, f, to, level).as_ref()))
        .collect();
    if wanted.is_empty() {
        return None;
    }
    let set: HashSet<FrameId> = wanted.iter().copied().collect();
    let same = regex::Regex::new(pattern).is_ok_and(|re| {
        new.frames
            .ids()
            .all(|f| re.is_match(&new.frames.name(f)) == set.contains(&f))
    });
    if same {
        return Some(pattern.to_string());
    }
    let names: Vec<String> = wanted
        .iter()
        .map(|&f| regex::escape(&new.frames.name(f)))
        .collect();
    Some(match names.as_slice() {
        [one] => format!("^{one}$"),
        _ => format!("^(?:{})$", names.join("|")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_is_stripped_only_when_it_is_one() {
        let s = |name: &str, file: &str| {
            String::from_utf8_lossy(strip_location(name.as_bytes(), file.as_bytes())).into_owned()
        };
        assert_eq!(s("main.parse parse.go:42", "parse.go"), "main.parse");
        assert_eq!(s("main.parse parse.go", "parse.go"), "main.parse");
        // Not a line number after the file: the name as it is.
        assert_eq!(
            s("main.parse parse.go:x", "parse.go"),
            "main.parse parse.go:x"
        );
        assert_eq!(
            s("main.parse parse.go.bak", "parse.go"),
            "main.parse parse.go.bak"
        );
        assert_eq!(s("main.parse", "parse.go"), "main.parse");
        // The last occurrence: a name that itself holds the file.
        assert_eq!(s("f a.c a.c:3", "a.c"), "f a.c");
    }

    #[test]
    fn the_common_level_is_the_coarser() {
        use Granularity::*;
        assert_eq!(Line.common(Function), Function);
        assert_eq!(Function.common(Line), Function);
        assert_eq!(Line.common(File), File);
        assert_eq!(File.common(Function), File);
        assert_eq!(Line.common(Line), Line);
        assert_eq!(Function.next().next().next(), Function);
    }
}
