//! The granularity key (`g`): the profile read again by function, by line or
//! by file, on the job thread (or by the live worker for a followed file);
//! the place, the table's row and the transforms carried over by their keys
//! ([`crate::model::granularity`]).

use super::{App, Loaded, Phase, View};
use crate::model::granularity::{self, Granularity};
use crate::model::{CallTree, Transform, TreeOptions};
use crate::ui::runtime::jobs::{Carry, Job, Regranulated};
use crate::ui::runtime::live::Followed;

impl App {
    /// `g`: asks for the next granularity, or says why there is none.
    pub(super) fn switch_granularity(&mut self) {
        let Phase::Ready(l) = &self.phase else {
            return;
        };
        let to = self.granularity.next();
        let refused = if l.profile.meta.diff.is_some() || self.compare_from.is_some() {
            Some(
                "a comparison is read at one granularity: ember diff --granularity line A B".into(),
            )
        } else if !granularity::has_sources(l.loaded_profile()) {
            Some(no_sources(&l.profile.format))
        } else {
            None
        };
        if let Some(text) = refused {
            self.prompt.message = Some((format!("granularity: {text}"), true));
            return;
        }
        if let Some(live) = &self.live {
            let names = l.transforms.iter().any(names_frames);
            let text: Option<String> = match live.kind {
                Followed::Stdin => Some(
                    "a stream cannot be read again: start ember with --granularity line".into(),
                ),
                _ if names => Some(
                    "undo the focus, drop, merge or hide first (u): a followed file is read again without them"
                        .into(),
                ),
                _ => None,
            };
            if let Some(text) = text {
                self.prompt.message = Some((format!("granularity: {text}"), true));
                return;
            }
            live.settings().granularity = Some(to);
            live.poke();
            self.prompt.message = Some((format!("reading at {} granularity…", to.name()), false));
            return;
        }
        let Some((source, options)) = &self.reread else {
            let text = "this input cannot be read again: start ember with --granularity line";
            self.prompt.message = Some((format!("granularity: {text}"), true));
            return;
        };
        // Still the transforms the last switch gave: carried from where
        // they were made, not from the last view.
        let carry = match &self.granularity_anchor {
            Some((anchor, gave)) if *gave == l.transforms => Carry::Anchor(anchor.clone()),
            _ => Carry::Make {
                old: l.loaded_profile().clone(),
                transforms: l.transforms.clone(),
            },
        };
        let job = Job::Regranulate {
            source: source.clone(),
            options: crate::formats::LoadOptions {
                granularity: to,
                ..options.clone()
            },
            from: self.granularity,
            carry,
            orientation: self.orientation,
        };
        self.request(job);
    }

    /// The job's answer: the view at the new granularity, or why not.
    pub(super) fn regranulated(&mut self, result: Result<Box<Regranulated>, String>) {
        match result {
            Ok(r) => {
                let r = *r;
                let gave = r.loaded.transforms.clone();
                self.install_granularity(r.loaded, r.from, r.to, &r.dropped);
                self.granularity_anchor = Some((r.anchor, gave));
            }
            Err(e) => self.prompt.message = Some((format!("granularity: {e}"), true)),
        }
    }

    /// Shows `new`, a view at `to` of what is on screen at `from`, at the
    /// same place: the zoom and the selection become the heaviest path with
    /// the same keys (a function's heaviest line, a line's function, a
    /// function's file), the table keeps its order and finds its row.
    pub(super) fn install_granularity(
        &mut self,
        mut new: Box<Loaded>,
        from: Granularity,
        to: Granularity,
        dropped: &[String],
    ) {
        self.granularity = to;
        new.flame.orientation = self.orientation;
        new.set_inverted(false);
        let Phase::Ready(old) = &mut self.phase else {
            self.set_loaded(new);
            return;
        };
        let level = from.common(to);
        old.set_inverted(false);
        let keys = |n| granularity::path_keys(&old.tree, &old.profile, n, from, level);
        let (zoom, selected) = (keys(old.flame.zoom), keys(old.flame.selected));
        let row = (self.view == View::Table)
            .then(|| old.table.selected())
            .flatten()
            .map(|f| granularity::frame_key(&old.profile, f, from, level).into_owned());
        let (sort, descending) = (old.table.sort, old.table.descending);
        let (value, order) = (old.tree.options.value, old.tree.options.order);
        // The same file: the same value types, so the one the user picked.
        if new.tree.options.value != value && value < new.profile.value_types.len() {
            let options = TreeOptions {
                value,
                order,
                ..new.tree.options.clone()
            };
            let tree = CallTree::build(&new.profile, options);
            new.set_tree(tree, None);
        } else if new.tree.options.order != order {
            std::sync::Arc::make_mut(&mut new.tree).set_order(&new.profile, order);
        }
        let z = granularity::find_keys(&new.tree, &new.profile, to, level, &zoom);
        let s = granularity::find_keys(&new.tree, &new.profile, to, level, &selected);
        let l = &mut *new;
        l.flame.place_at(&l.tree, &l.profile, z, s, Vec::new());
        (l.table.sort, l.table.descending) = (sort, descending);
        if let Some(key) = row {
            l.table.ensure(&l.profile, &l.tree);
            // The first in the table's order: the heaviest by what it sorts.
            let (p, table) = (&l.profile, &l.table);
            let first =
                table.first_where(|f| granularity::frame_key(p, f, to, level).as_ref() == key);
            if let Some(f) = first {
                l.table.select_frame(f);
            }
        }
        if self.view == View::Sandwich {
            self.view = self.return_view;
        }
        let frames = l.profile.frames.len();
        let mut text = format!(
            "granularity: {} ({} frames)",
            to.name(),
            crate::output::value_grouped(frames as i64, &crate::model::ValueType::samples())
        );
        if !dropped.is_empty() {
            text.push_str(&format!("; not carried over: {}", dropped.join(", ")));
        }
        self.prompt.message = Some((text, false));
        self.phase = Phase::Ready(new);
        self.refresh_search();
        self.ensure_inverted();
        self.dirty = true;
    }
}

/// Whether a transform names frames (and so means something else at another
/// granularity).
fn names_frames(t: &Transform) -> bool {
    matches!(
        t,
        Transform::Focus { .. }
            | Transform::Drop { .. }
            | Transform::Merge { .. }
            | Transform::Hide { .. }
    )
}

/// Why `g` has nothing to switch to in a profile of `format`.
fn no_sources(format: &str) -> String {
    if format.contains("perf") {
        "this perf script has no source lines: record them with perf script -F +srcline, or open the perf.data with --granularity line".into()
    } else {
        format!("this {format} profile names no source files: function is all it has")
    }
}
