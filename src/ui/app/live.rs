//! The App's side of [`crate::ui::runtime::live`]: a new view from the worker swapped in
//! at the user's place (or held while frozen), and the live keys and settings
//! passed back to the worker.

use std::time::SystemTime;

use super::{App, Loaded, Phase, View};
use crate::model::{CallTree, TreeOptions};
use crate::ui::runtime::live::{Change, Followed, Place, Reload};

impl App {
    /// A reloaded view arrived: shown at once, or held while frozen.
    pub fn reloaded(&mut self, r: Box<Reload>) {
        let Some(live) = &mut self.live else {
            self.apply_reload(*r);
            return;
        };
        live.status.problem = None;
        if live.status.frozen && !matches!(self.phase, Phase::Loading { .. }) {
            let added = live.status.pending.as_ref().map_or(0, |p| p.added);
            let mut r = r;
            r.added += added;
            live.status.pending = Some(r);
            self.dirty = true;
            return;
        }
        self.apply_reload(*r);
    }

    fn apply_reload(&mut self, r: Reload) {
        let Reload {
            mut loaded,
            added,
            file,
            change,
            granularity,
        } = r;
        if let Some(live) = &mut self.live {
            if matches!(change, Change::Data | Change::Switched) {
                live.status.last_reload = Some((SystemTime::now(), change));
                live.status.added = added;
            }
            if file.is_some() {
                live.status.file = file;
            }
        }
        if granularity != self.granularity && matches!(self.phase, Phase::Ready(_)) {
            // The `g` key's answer: the same data by line, file or function.
            let from = self.granularity;
            self.install_granularity(loaded, from, granularity, &[]);
            self.granularity_anchor = None;
            return;
        }
        loaded.flame.orientation = self.orientation;
        // Top-down first (free when the worker built both): transforms and
        // places are about the top-down profile.
        loaded.set_inverted(false);
        let Phase::Ready(old) = &mut self.phase else {
            self.set_loaded(loaded);
            return;
        };
        // The worker builds with the transforms it was last told of (those of a
        // job still running included). If the user changed them since, this
        // view is stale: the worker is asked for another, which will have them.
        let expected = self.wanted_transforms.as_ref().unwrap_or(&old.transforms);
        if loaded.transforms != *expected {
            if let Some(live) = &mut self.live
                && live.status.stale_views < 3
            {
                live.status.stale_views += 1;
                live.settings().transforms = expected.clone();
                live.poke();
                return;
            }
            // Still stale after asking again (a transform that fails on the new
            // data): apply the user's list here.
            let base = loaded.base.take().unwrap_or_else(|| loaded.profile.clone());
            let options = loaded.tree.options.clone();
            let mut rebuilt =
                Loaded::build(base, options, self.orientation, std::time::Instant::now());
            rebuilt.load_time = loaded.load_time;
            if rebuilt.apply_transforms(expected.clone()).is_ok() {
                *loaded = rebuilt;
            }
        }
        if let Some(live) = &mut self.live {
            live.status.stale_views = 0;
        }
        let place = Place::save(old, self.view == View::Table);
        // The value type or order the user picked since the worker started (of
        // this file: another file of a directory brings its own value types).
        let (value, order) = (old.tree.options.value, old.tree.options.order);
        let same_file = change != Change::Switched;
        if same_file
            && loaded.tree.options.value != value
            && value < loaded.profile.value_types.len()
        {
            let options = TreeOptions {
                value,
                order,
                ..TreeOptions::default()
            };
            let tree = CallTree::build(&loaded.profile, options);
            loaded.set_tree(tree, None);
        } else if loaded.tree.options.order != order {
            std::sync::Arc::make_mut(&mut loaded.tree).set_order(&loaded.profile, order);
        }
        loaded.transform_error = old.transform_error.take();
        place.restore(&mut loaded);
        if self.view == View::Sandwich && loaded.sandwich.is_none() {
            // The function is gone from the new profile.
            self.view = self.return_view;
        }
        self.phase = Phase::Ready(loaded);
        self.refresh_search();
        self.ensure_inverted();
        self.dirty = true;
    }

    pub fn live_problem(&mut self, problem: Option<String>) {
        if let Some(live) = &mut self.live {
            live.status.problem = problem;
            self.dirty = true;
        }
    }

    pub fn live_ended(&mut self) {
        if let Some(live) = &mut self.live {
            live.status.ended = true;
            self.dirty = true;
        }
    }

    pub fn live_no_time(&mut self) {
        if let Some(live) = &mut self.live {
            live.status.no_time = true;
            self.dirty = true;
        }
    }

    /// Stops or resumes applying updates; on resume the newest view is shown.
    pub fn toggle_freeze(&mut self) {
        let Some(live) = &mut self.live else {
            return;
        };
        live.status.frozen = !live.status.frozen;
        if !live.status.frozen
            && let Some(r) = live.status.pending.take()
        {
            self.apply_reload(*r);
        }
    }

    /// Cycles cumulative / sliding windows; the worker rebuilds.
    pub fn next_live_mode(&mut self) {
        if let Some(live) = &mut self.live {
            let next = live.mode().next();
            live.settings().mode = next;
            live.status.no_time = false;
            live.poke();
        }
    }

    /// Steps to an older (`-1`) or newer (`1`) profile of a watched directory.
    pub fn step_profile(&mut self, step: i32) {
        if let Some(live) = &mut self.live
            && live.kind == Followed::Dir
        {
            live.settings().step += step;
            live.poke();
        }
    }

    /// Tells the worker what the next view must look like.
    pub fn sync_live(&mut self) {
        let (Some(live), Phase::Ready(l)) = (&self.live, &self.phase) else {
            return;
        };
        let mut s = live.settings();
        if s.transforms != l.transforms {
            s.transforms = l.transforms.clone();
        }
        // The command line's range is in the view's transforms from now on
        // (or was cleared there).
        s.time = Default::default();
        let v = l.tree.options.value;
        s.value = (v != l.profile.default_value)
            .then(|| l.profile.value_types.get(v).map(|vt| vt.kind.clone()))
            .flatten();
        s.order = l.tree.options.order;
        // Also while the job thread still builds it: a reload then brings it.
        s.inverted = l.inverted || self.view == View::Inverted;
        if let Some(wanted) = &self.wanted_transforms {
            s.transforms = wanted.clone();
        }
    }
}
