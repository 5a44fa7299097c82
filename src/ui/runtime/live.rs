//! Live reload, the viewer's side: a worker thread follows the file (or stdin, or
//! the newest profile in a directory) with [`crate::live`] and sends finished
//! views to the event loop; the App swaps them in (`app/live.rs`) and keeps the
//! user's place ([`Place`]).
//!
//! The worker owns the growing profile. It builds each new view (sample window,
//! value type, child order, transforms) itself, so the UI thread only re-finds
//! the zoom, selection and search in a tree that is already built.

mod worker;

use std::path::PathBuf;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use crate::model::{ChildOrder, Profile, Transform};
use crate::sources::input::Progress;
use crate::ui::loaded::Loaded;
use crate::ui::views::flame_state::SavedPlace;
use crate::ui::views::sandwich::{Sandwich, Side};

pub use worker::{build, spawn_dir, spawn_file, spawn_stdin};

/// What the live worker tells the viewer, through its [`Report`].
pub enum LiveMsg {
    /// A new view and what changed.
    Reloaded(Box<Reload>),
    /// The followed file is missing or unreadable right now (`None`: fine again).
    Problem(Option<String>),
    /// The followed stream (stdin) has ended.
    Ended,
    /// A sliding window was asked for but the profile has no timestamps.
    NoTime,
    /// The first load failed.
    LoadFailed(crate::error::LoadError),
    /// The worker thread panicked (its message).
    Panicked(String),
}

/// Where the worker reports; false when the viewer is gone. The viewer maps
/// each [`LiveMsg`] into its own event type: the worker does not know it.
pub type Report = Arc<dyn Fn(LiveMsg) -> bool + Send + Sync>;

/// The guarded value, also after a panic elsewhere (the data is plain).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a live view follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Followed {
    File,
    /// The newest profile of a directory (`--watch-dir`).
    Dir,
    Stdin,
}

/// How growing data is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Everything since the start.
    #[default]
    Cumulative,
    /// Only the samples of the last N seconds (by the profile's own timestamps).
    Window(u64),
}

impl Mode {
    /// The next mode for the `m` key.
    pub fn next(self) -> Mode {
        match self {
            Mode::Cumulative => Mode::Window(10),
            Mode::Window(s) if s < 30 => Mode::Window(30),
            Mode::Window(s) if s < 60 => Mode::Window(60),
            Mode::Window(_) => Mode::Cumulative,
        }
    }
}

/// What the worker needs to know of the view when it builds one.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub transforms: Vec<Transform>,
    /// `--from/--until/--exclude`, until the first view has them as a transform.
    pub time: crate::model::timerange::TimeSelection,
    /// Value type the user picked (by kind, so it carries over to another file
    /// of a directory); `None` for the profile's default.
    pub value: Option<String>,
    pub order: ChildOrder,
    pub mode: Mode,
    /// In a watched directory: the profile the user stepped back to, or `None`
    /// to follow the newest.
    pub pick: Option<PathBuf>,
    /// Steps asked for with `[` / `]` (negative: older), taken by the worker.
    pub step: i32,
    /// The inverted view is on screen: build it too, off the UI thread.
    pub inverted: bool,
    /// Read the file again at this granularity (`None`: the one it started with).
    pub granularity: Option<crate::model::granularity::Granularity>,
    /// `ember diff` with a followed side: each new profile is compared with
    /// this one before it is shown.
    pub baseline: Option<Arc<Baseline>>,
}

/// The side of a live comparison that is read once.
#[derive(Debug)]
pub struct Baseline {
    pub profile: Profile,
    /// Which side the followed source is (0 before, 1 after).
    pub live_side: usize,
    pub merge: crate::model::diff::MergeOptions,
}

impl Baseline {
    /// The comparison of the baseline with `live`.
    pub fn compare(&self, live: Profile) -> Result<Profile, String> {
        let base = self.profile.clone();
        let (before, after) = if self.live_side == 1 {
            (base, live)
        } else {
            (live, base)
        };
        crate::model::diff::merge(before, after, &self.merge).map_err(|e| e.to_string())
    }
}

/// Why the worker wakes up.
pub enum Wake {
    /// Something changed on disk.
    Changed,
    /// The mode or the directory pick changed: rebuild or switch.
    Settings,
}

/// Why a new view was built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The first view of this source.
    First,
    /// New data: an append, a rewrite, more of a stream.
    Data,
    /// The same data in another mode.
    Rebuilt,
    /// Another file of a watched directory.
    Switched,
}

/// A newly built view and what changed.
pub struct Reload {
    pub loaded: Box<Loaded>,
    /// Samples added since the previous view (negative after a truncation).
    pub added: i64,
    /// The file in a watched directory, with its position (1-based) and count.
    pub file: Option<(String, usize, usize)>,
    pub change: Change,
    /// What the frames stand for in this view (the `g` key asks the worker
    /// for another).
    pub granularity: crate::model::granularity::Granularity,
}

/// Where the live view stands, for the header.
#[derive(Default)]
pub struct LiveStatus {
    /// When new data or another file was last shown, and which it was.
    pub last_reload: Option<(SystemTime, Change)>,
    /// Samples the last reload added (all arrivals while frozen).
    pub added: i64,
    /// Waiting for the file, or its current state is unreadable.
    pub problem: Option<String>,
    /// The stream (stdin) has ended: nothing more will come.
    pub ended: bool,
    pub frozen: bool,
    /// The newest view, held back while frozen.
    pub pending: Option<Box<Reload>>,
    /// Watched directory: (file name, position, count).
    pub file: Option<(String, usize, usize)>,
    /// The mode whose window the profile has no timestamps for.
    pub no_time: bool,
    /// Views dropped in a row because their transforms were out of date.
    pub stale_views: u32,
}

/// The App's handle on the worker.
pub struct Live {
    pub settings: Arc<Mutex<Settings>>,
    wake: Sender<Wake>,
    pub status: LiveStatus,
    /// What is followed.
    pub kind: Followed,
    /// The worker's read in flight, if any: a whole reload shows its progress.
    reading: Arc<Mutex<Option<Arc<Progress>>>>,
}

impl Live {
    /// A handle with no worker behind it (tests, benchmarks).
    pub fn detached(kind: Followed) -> Live {
        let (wake, _) = mpsc::channel();
        Live {
            settings: Arc::default(),
            wake,
            status: LiveStatus::default(),
            kind,
            reading: Arc::default(),
        }
    }

    pub(in crate::ui) fn settings(&self) -> std::sync::MutexGuard<'_, Settings> {
        lock(&self.settings)
    }

    pub fn mode(&self) -> Mode {
        self.settings().mode
    }

    /// Asks the worker to rebuild with new settings.
    pub(in crate::ui) fn poke(&self) {
        let _ = self.wake.send(Wake::Settings);
    }
}

/// The view's place in every view, saved by names so a new tree can re-find it.
pub(in crate::ui) struct Place {
    flame: SavedPlace,
    inverted: Option<SavedPlace>,
    sandwich: Option<(Vec<u8>, Side, SavedPlace, SavedPlace)>,
    /// Sort key and direction, and the function under the cursor when the
    /// table is on screen.
    table: (crate::model::SortKey, bool, Option<Vec<u8>>),
}

impl Place {
    /// Saves `l`'s place (and the table's row when `table` is on screen),
    /// leaving `l` top-down.
    pub(in crate::ui) fn save(l: &mut Loaded, table: bool) -> Place {
        let inverted = l.inverted.then(|| l.flame.save(&l.tree, &l.profile));
        let sandwich = l.sandwich.as_ref().map(|sw| {
            let name = sw.callees.profile.frames.raw(sw.function).to_vec();
            let c = &sw.callers;
            let e = &sw.callees;
            (
                name,
                sw.active,
                c.flame.save(&c.tree, &c.profile),
                e.flame.save(&e.tree, &e.profile),
            )
        });
        l.set_inverted(false);
        let row = table
            .then(|| l.table.selected())
            .flatten()
            .map(|f| l.profile.frames.raw(f).to_vec());
        Place {
            flame: l.flame.save(&l.tree, &l.profile),
            inverted,
            sandwich,
            table: (l.table.sort, l.table.descending, row),
        }
    }

    /// Re-finds the place in `l`, a new view.
    pub(in crate::ui) fn restore(self, l: &mut Loaded) {
        // The worker may have built the inverted view already: then both
        // orientations are at hand and swapping is free.
        l.set_inverted(false);
        l.flame.restore(&l.tree, &l.profile, &self.flame);
        let (sort, descending, row) = self.table;
        (l.table.sort, l.table.descending) = (sort, descending);
        if let Some(f) = row.and_then(|name| l.profile.frames.get(&name)) {
            l.table.ensure(&l.profile, &l.tree);
            l.table.select_frame(f);
        }
        // Only when the worker built it: inverting here would stall the UI
        // (the App asks the job thread for it instead).
        if let Some(p) = &self.inverted
            && l.alt.is_some()
        {
            l.set_inverted(true);
            l.flame.restore(&l.tree, &l.profile, p);
        }
        if let Some((name, side, callers, callees)) = self.sandwich
            && let Some(f) = l.profile.frames.get(&name)
        {
            let all = l.tree.total(crate::model::NodeId::ROOT);
            let mut sw = Sandwich::build(&l.profile, &l.tree.options, f, all);
            sw.active = side;
            for (pane, place) in [(&mut sw.callers, &callers), (&mut sw.callees, &callees)] {
                pane.flame.restore(&pane.tree, &pane.profile, place);
                if !pane
                    .tree
                    .is_ancestor_or_self(&pane.profile, pane.home, pane.flame.zoom)
                {
                    pane.reset();
                }
            }
            // Still interned but in no stack now (dropped, outside the window):
            // the view it was opened from is shown instead.
            if sw.through > 0 {
                l.sandwich = Some(Box::new(sw));
            }
        }
    }
}

/// "3 s ago", "4 min ago", for the header.
fn ago(t: SystemTime) -> String {
    let s = t.elapsed().map_or(0, |d| d.as_secs());
    match s {
        0..=59 => format!("{s} s ago"),
        60..=3599 => format!("{} min ago", s / 60),
        _ => format!("{} h ago", s / 3600),
    }
}

/// "1,204": thousands separated, as the header writes counts.
fn grouped(n: i64) -> String {
    crate::output::value_grouped(n, &crate::model::ValueType::samples())
}

impl Live {
    /// The header's live segment and whether it is a warning.
    pub fn label(&self) -> (String, bool) {
        let st = &self.status;
        let mut parts: Vec<String> = Vec::new();
        let mut warn = false;
        if let Some(p) = &*lock(&self.reading)
            && p.read() > 0
        {
            // A whole reload under way (appends are too quick to show).
            let mib = p.read() as f64 / 1048576.0;
            parts.push(match p.total() {
                0 => format!("reloading: {mib:.0} MiB read"),
                t => format!("reloading {:.0}%", 100.0 * p.read() as f64 / t as f64),
            });
        }
        if let Some((name, pos, count)) = &st.file {
            let newest = if pos == count { ", newest" } else { "" };
            parts.push(format!("{name} ({pos} of {count}{newest})"));
        }
        if st.frozen {
            let waiting = st.pending.as_ref().map_or(0, |p| p.added);
            parts.push(format!("frozen (p): +{} samples waiting", grouped(waiting)));
        } else if st.ended {
            parts.push("stream ended".into());
        } else if let Some((t, change)) = st.last_reload {
            if change == Change::Switched {
                parts.push(format!("live: opened {}", ago(t)));
            } else if st.added < 0 {
                parts.push(format!("live: file rewritten {}", ago(t)));
            } else {
                parts.push(format!("live: +{} samples {}", grouped(st.added), ago(t)));
            }
        } else {
            parts.push(match self.kind {
                Followed::Stdin => "reading the stream".into(),
                _ => "watching".into(),
            });
        }
        if let Mode::Window(s) = self.mode() {
            if st.no_time {
                parts.push(format!("last {s} s: no timestamps, showing all"));
                warn = true;
            } else {
                parts.push(format!("last {s} s"));
            }
        }
        if let Some(p) = &st.problem {
            parts.push(p.clone());
            warn = true;
        }
        (parts.join(" · "), warn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_cycle_back_to_cumulative() {
        let mut m = Mode::Cumulative;
        let mut seen = Vec::new();
        for _ in 0..4 {
            m = m.next();
            seen.push(m);
        }
        assert_eq!(
            seen,
            [
                Mode::Window(10),
                Mode::Window(30),
                Mode::Window(60),
                Mode::Cumulative
            ]
        );
    }
}
