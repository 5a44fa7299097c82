//! Transforms: focus, drop, merge, hide, collapse recursion and minimum width, each
//! a function from a profile to a new profile.
//!
//! A transform rewrites stacks, never frames: the result shares the frame table (a
//! clone), gets a new [`StackTable`](super::stacks::StackTable), and keeps every sample that is not dropped
//! with its stack rewritten and all its other columns (values, time, thread, CPU,
//! labels) unchanged. Everything else about the profile is carried over.
//!
//! The work is a pass over the old stacks in ascending id order (a stack's prefix
//! has a smaller id, so its caller is already decided) that gives each old stack a
//! slot: the new stack it becomes, the empty stack, or "dropped". A pass over the
//! samples then reads the slot of each sample's stack. (Collapsing indirect
//! recursion walks the stacks depth first instead, still callers before callees;
//! see `collapse_indirect`.) Patterns are compiled once and matched once per
//! distinct frame name, never per stack or per sample. The cost is
//! O(stacks + samples) plus one regex match per frame name. No recursion.
//!
//! Patterns are regular expressions ([`regex`] syntax) searched for anywhere in the
//! frame name as text (invalid UTF-8 replaced), so `malloc` matches `je_malloc`;
//! anchor with `^...$` for a whole name.

use std::fmt;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::frames::{FrameId, Frames};
use super::profile::Profile;
use super::timerange::{RangeError, TimeFilter, Window, slice};

mod remap;
use remap::{
    collapse_direct, collapse_indirect, drop_matching, finish, focus, hide, merge, min_width,
};

/// One step that rewrites a profile's stacks. Serialised with a `kind` tag, so a
/// list of them can live in a TOML recipe (see [`super::recipe`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Transform {
    /// Keeps only samples whose stack passes through a frame matching `pattern`, and
    /// re-roots each at its outermost matching frame (the frames above it are cut
    /// off). Samples with no matching frame, and samples with an empty stack, are
    /// dropped.
    Focus { pattern: String },
    /// Drops every sample whose stack passes through a frame matching `pattern`
    /// ("ignore"). Samples with an empty stack are kept.
    #[serde(alias = "ignore")]
    Drop { pattern: String },
    /// Merges every function matching `pattern` into its callers: each matching
    /// frame is removed from every stack, its callees attach to its caller and its
    /// self weight goes to the caller. A matching root frame's self weight goes to
    /// the empty stack (the flame graph's "all"). Totals are unchanged.
    Merge { pattern: String },
    /// Hides one node: merges the frame at the end of `path` (frame names from the
    /// root) into its parent. Only stacks that start with exactly `path` lose that one
    /// frame; the same function elsewhere is untouched. Totals are unchanged.
    Hide { path: Vec<String> },
    /// Collapses recursion. Walking each stack from the root, a frame whose function
    /// is already open is not pushed again; the stack returns to that open
    /// occurrence, which takes over the frame's self weight and callees.
    ///
    /// - `indirect = false` (direct recursion only): a frame equal to its caller is
    ///   folded into it, `a;a;a;b` -> `a;b`; `a;b;a` stays as it is.
    /// - `indirect = true`: any function already on the collapsed stack counts as
    ///   open, so `a;b;a;c` -> `a;c`, `a;b;a` -> `a`, `a;b;c;b;d` -> `a;b;d`; the
    ///   frames between the two occurrences are dropped from that stack (their own
    ///   samples keep them). A collapsed stack never names a function twice.
    ///
    /// Totals are unchanged.
    CollapseRecursion {
        #[serde(default, skip_serializing_if = "is_false")]
        indirect: bool,
    },
    /// Cuts every stack at its first node narrower than `percent` of the profile's
    /// total; the cut node's weight (with everything below it) goes to the nearest
    /// ancestor wide enough to keep, or to the empty stack for a narrow root frame.
    /// Widths are measured in the profile's default value type, as sums of absolute
    /// values (so a node is never narrower than its children, even in a profile with
    /// negative values). Totals are unchanged.
    MinWidth { percent: f64 },
    /// Keeps the samples taken inside `keep` (all when absent) and outside every
    /// `exclude` window, in the profile's clock (see [`super::timerange`]).
    /// Stacks are unchanged; the duration becomes the window's.
    TimeRange {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keep: Option<Window>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        exclude: Vec<Window>,
    },
}

impl Transform {
    /// The time-range transform of `filter`.
    pub fn time_range(filter: TimeFilter) -> Transform {
        Transform::TimeRange {
            keep: filter.keep,
            exclude: filter.exclude,
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Why a transform cannot be applied.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TransformError {
    #[error("bad pattern {pattern:?}: {reason}")]
    BadPattern { pattern: String, reason: String },
    #[error("empty frame path to hide")]
    EmptyPath,
    #[error("minimum width {percent}% is not between 0% and 100%")]
    BadPercent { percent: f64 },
    #[error("{0}")]
    Range(#[from] RangeError),
}

impl Transform {
    /// A short label for a breadcrumb: "focus: main", "drop: ^runtime\.",
    /// "hide: malloc", "merge: fmt::write", "collapse recursion", "min width 0.5%".
    /// Patterns and names come from the user or the profile: sanitize before
    /// showing them on a terminal.
    pub fn describe(&self) -> String {
        match self {
            Transform::Focus { pattern } => format!("focus: {pattern}"),
            Transform::Drop { pattern } => format!("drop: {pattern}"),
            Transform::Merge { pattern } => format!("merge: {pattern}"),
            Transform::Hide { path } => match path.last() {
                Some(name) => format!("hide: {name}"),
                None => "hide: (nothing)".to_string(),
            },
            Transform::CollapseRecursion { indirect: false } => "collapse recursion".to_string(),
            Transform::CollapseRecursion { indirect: true } => {
                "collapse indirect recursion".to_string()
            }
            Transform::MinWidth { percent } => format!("min width {percent}%"),
            Transform::TimeRange { keep, exclude } => {
                let mut s = String::from("time range");
                if let Some(w) = keep {
                    s.push_str(&format!(" {:.3} s", w.len_ns() as f64 / 1e9));
                }
                if !exclude.is_empty() {
                    s.push_str(&format!(" ({} excluded)", exclude.len()));
                }
                s
            }
        }
    }

    /// Checks the transform without a profile: the pattern compiles, the path is not
    /// empty, the percentage is one.
    pub fn check(&self) -> Result<(), TransformError> {
        match self {
            Transform::Focus { pattern }
            | Transform::Drop { pattern }
            | Transform::Merge { pattern } => compile(pattern).map(|_| ()),
            Transform::Hide { path } if path.is_empty() => Err(TransformError::EmptyPath),
            Transform::MinWidth { percent } if !(0.0..=100.0).contains(percent) => {
                Err(TransformError::BadPercent { percent: *percent })
            }
            Transform::Hide { .. }
            | Transform::CollapseRecursion { .. }
            | Transform::MinWidth { .. }
            | Transform::TimeRange { .. } => Ok(()),
        }
    }
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Applies `t` to `profile` and returns the new profile.
pub fn apply(profile: &Profile, t: &Transform) -> Result<Profile, TransformError> {
    t.check()?;
    let old = &profile.stacks;
    let remap = match t {
        Transform::Focus { pattern } => focus(old, &matches(&profile.frames, pattern)?),
        Transform::Drop { pattern } => drop_matching(old, &matches(&profile.frames, pattern)?),
        Transform::Merge { pattern } => merge(old, &matches(&profile.frames, pattern)?),
        Transform::Hide { path } => hide(old, &profile.frames, path),
        Transform::CollapseRecursion { indirect: false } => collapse_direct(old),
        Transform::CollapseRecursion { indirect: true } => {
            collapse_indirect(old, profile.frames.len())
        }
        Transform::MinWidth { percent } => min_width(profile, *percent),
        Transform::TimeRange { keep, exclude } => {
            let filter = TimeFilter {
                keep: *keep,
                exclude: exclude.clone(),
            };
            return Ok(slice(profile, &filter)?);
        }
    };
    Ok(finish(profile, remap))
}

/// A focus on one frame (by id, not by pattern): the stacks through `f`,
/// re-rooted at its outermost occurrence. The callees pane of a sandwich.
pub fn focus_frame(profile: &Profile, f: FrameId) -> Profile {
    let mut hit = vec![false; profile.frames.len()];
    if let Some(h) = hit.get_mut(f.0 as usize) {
        *h = true;
    }
    finish(profile, focus(&profile.stacks, &hit))
}

/// Applies `transforms` in order. No transforms gives a copy of `profile`.
pub fn apply_all(profile: &Profile, transforms: &[Transform]) -> Result<Profile, TransformError> {
    let Some((first, rest)) = transforms.split_first() else {
        return Ok(profile.clone());
    };
    let mut out = apply(profile, first)?;
    for t in rest {
        out = apply(&out, t)?;
    }
    Ok(out)
}

fn compile(pattern: &str) -> Result<Regex, TransformError> {
    Regex::new(pattern).map_err(|e| TransformError::BadPattern {
        pattern: pattern.to_string(),
        reason: short_regex_error(&e),
    })
}

/// The regex crate's syntax errors span several lines (the pattern, a caret, the
/// message); keep the message.
fn short_regex_error(e: &regex::Error) -> String {
    let text = e.to_string();
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    last.trim().trim_start_matches("error: ").to_string()
}

/// Whether each frame name (by `FrameId`) matches `pattern`.
fn matches(frames: &Frames, pattern: &str) -> Result<Vec<bool>, TransformError> {
    let re = compile(pattern)?;
    Ok(frames.ids().map(|f| re.is_match(&frames.name(f))).collect())
}

#[cfg(test)]
mod tests;
