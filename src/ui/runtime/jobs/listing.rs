//! [`Job::Listing`](super::Job::Listing): the source pane of one function,
//! built on the job thread: its routines weighed (trees and a function table,
//! four of each for a comparison) and their source files found and read
//! (which may ask `go env` or `rustc`). Nothing of it on the UI thread.

use std::sync::Arc;

use crate::model::diff::Norm;
use crate::model::listing::{paired_routines, routines};
use crate::model::{CallTree, NodeId, Profile, TreeOptions};
use crate::output::listing::{SourceOptions, find_source};
use crate::ui::views::source::SourcePane;

/// Where the lines come from.
pub enum ListingInput {
    /// The input read again at line granularity, weighed in the value type
    /// named `value` (else its default).
    Read {
        source: crate::sources::input::Source,
        options: crate::formats::LoadOptions,
        value: String,
    },
    /// The profile on screen, already at line granularity, in value `value`.
    Loaded { profile: Arc<Profile>, value: usize },
    /// A comparison on screen at line granularity, normalised as `norm`.
    Compared { profile: Arc<Profile>, norm: Norm },
}

/// The pane of `function`, or why there is none.
pub fn pane(
    input: ListingInput,
    function: &str,
    sources: &SourceOptions,
) -> Result<Box<SourcePane>, String> {
    let tree = |p: &Profile, value: usize| {
        CallTree::build(
            p,
            TreeOptions {
                value,
                ..TreeOptions::default()
            },
        )
    };
    let none = || {
        format!(
            "the profile has no line numbers for {}",
            crate::host::sanitize::sanitize(function)
        )
    };
    let with_source = |file: &Option<String>| find_source(file.as_deref().unwrap_or(""), sources);
    let (profile, value) = match input {
        ListingInput::Compared { profile, norm } => {
            let meta = profile.meta.diff.as_deref().ok_or("not a comparison")?;
            let after = tree(&profile, meta.sides[1].value);
            let (cmp, _) = crate::ui::views::diff::compare(&profile, &after, norm)
                .ok_or("not a comparison")?;
            let paired = paired_routines(&profile, |n| n == function);
            if paired.is_empty() {
                return Err(none());
            }
            let listed = paired
                .into_iter()
                .map(|r| {
                    let src = with_source(&r.file);
                    (r, src)
                })
                .collect();
            let vt = profile.value_types[meta.sides[1].value].clone();
            return Ok(Box::new(SourcePane::new_diff(
                function.to_string(),
                listed,
                &cmp,
                vt,
            )));
        }
        ListingInput::Loaded { profile, value } => (profile, value),
        ListingInput::Read {
            source,
            options,
            value,
        } => {
            let progress = crate::sources::input::Progress::new();
            let p =
                crate::formats::load(&source, &options, &progress).map_err(|e| e.to_string())?;
            let v = p
                .value_types
                .iter()
                .position(|vt| vt.kind == value)
                .unwrap_or(p.default_value);
            (Arc::new(p), v)
        }
    };
    let t = tree(&profile, value);
    let found = routines(&profile, &t, |n| n == function);
    if found.is_empty() {
        return Err(none());
    }
    let listed = found
        .into_iter()
        .map(|r| {
            let src = with_source(&r.file);
            (r, src)
        })
        .collect();
    Ok(Box::new(SourcePane::new(
        function.to_string(),
        listed,
        t.total(NodeId::ROOT),
        profile.value_types[value].clone(),
    )))
}
