//! Live reload, the viewer's side: a worker thread follows the file (or stdin, or
//! the newest profile in a directory) with [`crate::live`] and sends finished
//! views to the event loop; the [`App`] swaps them in and keeps the user's place.
//!
//! The worker owns the growing profile. It builds each new view (sample window,
//! value type, child order, transforms) itself, so the UI thread only re-finds
//! the zoom, selection and search in a tree that is already built.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use super::Msg;
use super::app::{App, Loaded, Phase, View};
use super::flame_state::{Orientation, SavedPlace};
use super::sandwich::{Sandwich, Side};
use crate::error::LoadError;
use crate::formats::LoadOptions;
use crate::input::Progress;
use crate::live::{self, Follower, Update};
use crate::model::{CallTree, ChildOrder, Profile, Transform, TreeOptions};

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
}

/// The App's handle on the worker.
pub struct Live {
    pub settings: Arc<Mutex<Settings>>,
    wake: Sender<Wake>,
    pub status: LiveStatus,
    /// What is followed, for the header: "file", "stdin" or "dir".
    pub kind: &'static str,
    /// The worker's read in flight, if any: a whole reload shows its progress.
    reading: Arc<Mutex<Option<Arc<Progress>>>>,
}

impl Live {
    /// A handle with no worker behind it (tests, benchmarks).
    pub fn detached(kind: &'static str) -> Live {
        let (wake, _) = mpsc::channel();
        Live {
            settings: Arc::default(),
            wake,
            status: LiveStatus::default(),
            kind,
            reading: Arc::default(),
        }
    }

    fn settings(&self) -> std::sync::MutexGuard<'_, Settings> {
        lock(&self.settings)
    }

    pub fn mode(&self) -> Mode {
        self.settings().mode
    }

    /// Asks the worker to rebuild with new settings.
    fn poke(&self) {
        let _ = self.wake.send(Wake::Settings);
    }
}

/// Builds the view of `profile` that `settings` ask for (what the worker sends);
/// the flag says a window was asked for but the profile has no timestamps.
pub fn build(
    mut profile: Profile,
    settings: &Settings,
    orientation: Orientation,
    started: Instant,
) -> (Box<Loaded>, bool) {
    let mut no_time = false;
    if let Mode::Window(secs) = settings.mode {
        match profile.samples.time.as_deref() {
            Some(times) if !times.is_empty() => {
                let last = times.iter().copied().max().unwrap_or(0);
                let from = last.saturating_sub(secs * 1_000_000_000);
                let keep: Vec<bool> = times.iter().map(|&t| t >= from).collect();
                let stride = profile.value_types.len();
                profile.samples.retain(&keep, stride);
            }
            _ => no_time = true,
        }
    }
    let value = settings
        .value
        .as_ref()
        .and_then(|kind| profile.value_types.iter().position(|vt| vt.kind == *kind))
        .unwrap_or(profile.default_value)
        .min(profile.value_types.len().saturating_sub(1));
    let tree = CallTree::build(
        &profile,
        TreeOptions {
            value,
            order: settings.order,
            samples: None,
        },
    );
    let mut loaded = Loaded::new(profile, tree, orientation, started.elapsed());
    // Transforms were checked when the user added them; one that fails anyway
    // leaves this view untransformed, and the App notices the lists differ.
    let _ = loaded.apply_transforms(settings.transforms.clone());
    if settings.inverted {
        loaded.set_inverted(true);
    }
    (Box::new(loaded), no_time)
}

/// How many samples a profile holds: its sample-count value summed when it has
/// one (folded counts, pprof samples/count), else one per sample row.
fn sample_count(p: &Profile) -> i64 {
    match p
        .value_types
        .iter()
        .position(|vt| vt.unit == crate::model::Unit::Samples)
    {
        Some(i) => (p.total(i) as f64 / p.value_types[i].scale()).round() as i64,
        None => p.samples.len() as i64,
    }
}

/// The worker's loop over one followed file; returns when the UI is gone.
struct Worker {
    tx: Sender<Msg>,
    wake: Receiver<Wake>,
    settings: Arc<Mutex<Settings>>,
    orientation: Orientation,
    options: LoadOptions,
    /// The first load's progress, which the loading screen shows and `q` cancels.
    progress: Arc<Progress>,
    /// The progress of a later read in flight, which a newer change cancels.
    current: Arc<Mutex<Option<Arc<Progress>>>>,
    wake_tx: Sender<Wake>,
    /// Samples in the last view sent, for "+N samples".
    shown_samples: Option<i64>,
    first: bool,
}

impl Worker {
    fn settings(&self) -> Settings {
        lock(&self.settings).clone()
    }

    /// Sends a view of `profile`; false when the UI has gone.
    fn send(
        &mut self,
        profile: Profile,
        file: Option<(String, usize, usize)>,
        change: Change,
    ) -> bool {
        let started = Instant::now();
        let settings = self.settings();
        let samples = sample_count(&profile);
        let (loaded, no_time) = build(profile, &settings, self.orientation, started);
        let added = self.shown_samples.map_or(0, |before| samples - before);
        let change = match self.shown_samples {
            None if self.first => Change::First,
            None => Change::Switched,
            Some(_) => change,
        };
        self.shown_samples = Some(samples);
        self.first = false;
        let msg = Msg::Reloaded(Box::new(Reload {
            loaded,
            added,
            file,
            change,
        }));
        if no_time && self.tx.send(Msg::LiveNoTime).is_err() {
            return false;
        }
        self.tx.send(msg).is_ok()
    }

    fn problem(&self, text: String) -> bool {
        self.tx.send(Msg::LiveProblem(Some(text))).is_ok()
    }

    /// Waits for the next change; several pending ones count as one. A
    /// periodic look catches anything the OS watcher missed.
    fn wait(&self) -> Option<bool> {
        let first = match self.wake.recv_timeout(Duration::from_secs(2)) {
            Ok(w) => w,
            Err(RecvTimeoutError::Timeout) => Wake::Changed,
            Err(RecvTimeoutError::Disconnected) => return None,
        };
        let mut settings = matches!(first, Wake::Settings);
        while let Ok(w) = self.wake.try_recv() {
            settings |= matches!(w, Wake::Settings);
        }
        Some(settings)
    }

    /// Follows one file until the UI goes away (`None`) or, in a directory,
    /// until the user or a newer file asks for another one (`Some`).
    fn follow(
        &mut self,
        path: &Path,
        dir: Option<&Path>,
        file: Option<(String, usize, usize)>,
    ) -> Option<()> {
        let mut follower = Follower::new(path.to_path_buf(), self.options.clone());
        let mut rebuild = false;
        let mut said_problem = false;
        loop {
            let progress = if self.first {
                self.progress.clone()
            } else {
                let p = Progress::new();
                *lock(&self.current) = Some(p.clone());
                p
            };
            let update = follower.poll(&progress);
            *lock(&self.current) = None;
            let changed = matches!(
                update,
                Update::Appended {
                    new_samples: 1..,
                    ..
                } | Update::Reloaded { .. }
            );
            let fresh = match update {
                Update::Unchanged => rebuild,
                // Only part of a line arrived: nothing to show yet.
                Update::Appended { new_samples: 0, .. } => rebuild,
                Update::Appended { .. } | Update::Reloaded { .. } => true,
                Update::Missing => {
                    let text = format!("waiting for {} to appear", path.display());
                    self.problem(text).then_some(())?;
                    said_problem = true;
                    rebuild
                }
                // A newer change cancelled a whole read; its wake is queued.
                Update::Incomplete(LoadError::Cancelled) if !self.first => rebuild,
                Update::Incomplete(e) => {
                    if self.first && !matches!(e, LoadError::Empty { .. }) {
                        // Nothing good was ever shown: the error is the answer.
                        let _ = self.tx.send(Msg::LoadFailed(e));
                        return None;
                    }
                    let text = format!("{e}; showing the last good profile");
                    self.problem(text).then_some(())?;
                    said_problem = true;
                    rebuild
                }
            };
            if fresh && let Some(p) = follower.take_profile() {
                if said_problem {
                    self.tx.send(Msg::LiveProblem(None)).ok()?;
                    said_problem = false;
                }
                let change = if changed {
                    Change::Data
                } else {
                    Change::Rebuilt
                };
                self.send(p, file.clone(), change).then_some(())?;
            }
            let settings_changed = self.wait()?;
            // In a directory, any change may bring a newer file or a step.
            if let Some(dir) = dir
                && self.dir_target(dir).as_deref() != Some(path)
            {
                return Some(());
            }
            rebuild = settings_changed;
        }
    }

    /// The file a watched directory should show now, honouring `[` / `]`.
    fn dir_target(&self, dir: &Path) -> Option<PathBuf> {
        let files = live::profiles_in(dir).ok()?;
        let mut s = lock(&self.settings);
        let newest = files.len().checked_sub(1)?;
        let mut i = match &s.pick {
            Some(p) => files.iter().position(|f| f == p).unwrap_or(newest),
            None => newest,
        };
        if s.step != 0 {
            i = (i as i64 + i64::from(s.step)).clamp(0, newest as i64) as usize;
            s.step = 0;
            s.pick = (i != newest).then(|| files[i].clone());
        }
        Some(files[i].clone())
    }
}

/// A worker and the App's handle on it, before its thread starts.
fn worker(
    tx: Sender<Msg>,
    options: LoadOptions,
    progress: Arc<Progress>,
    orientation: Orientation,
    settings: Settings,
    kind: &'static str,
) -> (Worker, Live) {
    let (wake_tx, wake_rx) = mpsc::channel();
    let settings = Arc::new(Mutex::new(settings));
    let worker = Worker {
        tx,
        wake: wake_rx,
        settings: settings.clone(),
        orientation,
        options,
        progress,
        current: Arc::default(),
        wake_tx: wake_tx.clone(),
        shown_samples: None,
        first: true,
    };
    let live = Live {
        settings,
        wake: wake_tx,
        status: LiveStatus::default(),
        kind,
        reading: worker.current.clone(),
    };
    (worker, live)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Worker {
    /// What the OS watcher calls: wakes the worker and cancels a whole read in
    /// flight, which the change has made stale (a newer change supersedes it).
    fn on_change(&self) -> impl FnMut() + Send + 'static {
        let wake = self.wake_tx.clone();
        let current = self.current.clone();
        move || {
            if let Some(p) = &*lock(&current) {
                p.cancel();
            }
            let _ = wake.send(Wake::Changed);
        }
    }
}

/// Follows `path` (watching its directory) on a worker thread.
pub fn spawn_file(
    tx: Sender<Msg>,
    path: PathBuf,
    options: LoadOptions,
    progress: Arc<Progress>,
    orientation: Orientation,
    settings: Settings,
) -> std::io::Result<Live> {
    let (mut worker, live) = worker(tx, options, progress, orientation, settings, "file");
    let watch = live::watch_file(&path, worker.on_change()).map_err(std::io::Error::other)?;
    std::thread::Builder::new()
        .name("ember-live".into())
        .spawn(move || {
            let _watch = watch;
            worker.follow(&path, None, None);
        })?;
    Ok(live)
}

/// Follows the newest profile in `dir` on a worker thread.
pub fn spawn_dir(
    tx: Sender<Msg>,
    dir: PathBuf,
    options: LoadOptions,
    progress: Arc<Progress>,
    orientation: Orientation,
    settings: Settings,
) -> std::io::Result<Live> {
    let (mut worker, live) = worker(tx, options, progress, orientation, settings, "dir");
    let watch = live::watch_dir(&dir, worker.on_change()).map_err(std::io::Error::other)?;
    std::thread::Builder::new()
        .name("ember-live".into())
        .spawn(move || {
            let _watch = watch;
            loop {
                let Some(path) = worker.dir_target(&dir) else {
                    let text = format!("waiting for a profile in {}", dir.display());
                    if !worker.problem(text) {
                        return;
                    }
                    if worker.wait().is_none() {
                        return;
                    }
                    continue;
                };
                let files = live::profiles_in(&dir).unwrap_or_default();
                let pos = files.iter().position(|f| *f == path).map_or(0, |i| i + 1);
                let name = path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                // Another file is another profile: "+N" starts afresh.
                worker.shown_samples = None;
                if worker
                    .follow(&path, Some(&dir), Some((name, pos, files.len())))
                    .is_none()
                {
                    return;
                }
            }
        })?;
    Ok(live)
}

/// Reads stdin as it arrives on a worker thread, showing the profile growing.
pub fn spawn_stdin(
    tx: Sender<Msg>,
    options: LoadOptions,
    progress: Arc<Progress>,
    orientation: Orientation,
    settings: Settings,
) -> std::io::Result<Live> {
    let (mut worker, live) = worker(
        tx,
        options.clone(),
        progress.clone(),
        orientation,
        settings,
        "stdin",
    );
    std::thread::Builder::new()
        .name("ember-live".into())
        .spawn(move || {
            let mut last: Option<Profile> = None;
            let result = live::follow_reader(
                std::io::stdin(),
                "<stdin>",
                &options,
                &progress,
                Duration::from_millis(500),
                |p, _done| {
                    if worker.send(p.clone(), None, Change::Data) {
                        last = Some(p);
                    }
                },
            );
            match result {
                Err(e) if worker.first => {
                    let _ = worker.tx.send(Msg::LoadFailed(e));
                    return;
                }
                Err(e) => {
                    worker.problem(format!("{e}; showing what arrived before"));
                }
                Ok(()) => {}
            }
            if worker.tx.send(Msg::LiveEnded).is_err() {
                return;
            }
            // The stream is over; mode changes still rebuild what arrived.
            while let Some(settings_changed) = worker.wait() {
                if settings_changed
                    && let Some(p) = &last
                    && !worker.send(p.clone(), None, Change::Rebuilt)
                {
                    return;
                }
            }
        })?;
    Ok(live)
}

/// The view's place in every view, saved by names so a new tree can re-find it.
struct Place {
    flame: SavedPlace,
    inverted: Option<SavedPlace>,
    sandwich: Option<(Vec<u8>, Side, SavedPlace, SavedPlace)>,
    table: (crate::model::SortKey, bool),
}

impl Place {
    fn save(l: &mut Loaded) -> Place {
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
        Place {
            flame: l.flame.save(&l.tree, &l.profile),
            inverted,
            sandwich,
            table: (l.table.sort, l.table.descending),
        }
    }

    fn restore(self, l: &mut Loaded) {
        // The worker may have built the inverted view already: then both
        // orientations are at hand and swapping is free.
        l.set_inverted(false);
        l.flame.restore(&l.tree, &l.profile, &self.flame);
        (l.table.sort, l.table.descending) = self.table;
        if let Some(p) = &self.inverted {
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
            l.sandwich = Some(Box::new(sw));
        }
    }
}

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
        loaded.flame.orientation = self.orientation;
        // Top-down first (free when the worker built both): transforms and
        // places are about the top-down profile.
        loaded.set_inverted(false);
        let Phase::Ready(old) = &mut self.phase else {
            self.set_loaded(loaded);
            return;
        };
        let place = Place::save(old);
        // The user may have transformed since the worker started building.
        if loaded.transforms != old.transforms {
            let base = loaded.base.take().unwrap_or_else(|| loaded.profile.clone());
            let tree = CallTree::build(&base, loaded.tree.options.clone());
            let mut rebuilt = Loaded::new(base, tree, self.orientation, loaded.load_time);
            if rebuilt.apply_transforms(old.transforms.clone()).is_ok() {
                *loaded = rebuilt;
            }
        }
        loaded.transform_error = old.transform_error.take();
        place.restore(&mut loaded);
        if self.view == View::Sandwich && loaded.sandwich.is_none() {
            // The function is gone from the new profile.
            self.view = self.return_view;
            loaded.set_inverted(self.view == View::Inverted);
        }
        self.phase = Phase::Ready(loaded);
        self.refresh_search();
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
            && live.kind == "dir"
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
        let v = l.tree.options.value;
        s.value = (v != l.profile.default_value)
            .then(|| l.profile.value_types.get(v).map(|vt| vt.kind.clone()))
            .flatten();
        s.order = l.tree.options.order;
        s.inverted = l.inverted;
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
                "stdin" => "reading the stream".into(),
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
