//! The live worker: follows one source (a file, a directory's newest profile,
//! stdin) with [`crate::live`] and sends each new view, built here, to the UI.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{
    Change, Followed, Live, LiveMsg, LiveStatus, Mode, Reload, Report, Settings, Wake, lock,
};
use crate::error::LoadError;
use crate::formats::LoadOptions;
use crate::live::{self, Follower, Update};
use crate::model::{Profile, TreeOptions};
use crate::sources::input::Progress;
use crate::ui::loaded::Loaded;
use crate::ui::views::flame_state::Orientation;

/// Builds the view of `profile` that `settings` ask for (what the worker sends);
/// the flag says a window was asked for but the profile has no timestamps.
pub fn build(
    profile: impl Into<Arc<Profile>>,
    settings: &Settings,
    orientation: Orientation,
    started: Instant,
) -> (Box<Loaded>, bool) {
    let mut profile: Arc<Profile> = profile.into();
    let mut no_time = false;
    if let Mode::Window(secs) = settings.mode {
        match profile.samples.time.as_deref() {
            Some(times) if !times.is_empty() => {
                let last = times.iter().copied().max().unwrap_or(0);
                let from = last.saturating_sub(secs * 1_000_000_000);
                let keep: Vec<bool> = times.iter().map(|&t| t >= from).collect();
                let stride = profile.value_types.len();
                // A copy only here: the parser still holds the whole profile.
                Arc::make_mut(&mut profile).samples.retain(&keep, stride);
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
    let options = TreeOptions {
        value,
        order: settings.order,
        ..TreeOptions::default()
    };
    let mut loaded = Loaded::build(profile, options, orientation, started);
    // Transforms were checked when the user added them; one that fails anyway
    // leaves this view untransformed, and the App notices the lists differ.
    let timed = crate::model::timerange::with_selection(
        &settings.transforms,
        &settings.time,
        &loaded.profile,
    );
    let transforms = match timed {
        Ok(t) => t,
        Err(e) => {
            // Shown in the status line; the view opens uncut.
            loaded.transform_error = Some(format!("--from/--until/--exclude: {e}"));
            settings.transforms.clone()
        }
    };
    if let Err(e) = loaded.apply_transforms(transforms.clone()) {
        // The cut holds no samples (`--from` past the end), or a transform
        // fails on this profile: say so where the user looks, and show what
        // the remaining transforms make of the whole profile.
        let cut = transforms != settings.transforms;
        loaded.transform_error = Some(if cut {
            format!("--from/--until/--exclude: {e}; showing the whole profile")
        } else {
            e.to_string()
        });
        if cut {
            let _ = loaded.apply_transforms(settings.transforms.clone());
        }
    }
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
        .position(crate::model::ValueType::counts_samples)
    {
        Some(i) => (p.total(i) as f64 / p.value_types[i].scale()).round() as i64,
        None => p.samples.len() as i64,
    }
}

/// The worker's loop over one followed file; returns when the UI is gone.
struct Worker {
    tx: Report,
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
        profile: Arc<Profile>,
        file: Option<(String, usize, usize)>,
        change: Change,
    ) -> bool {
        let started = Instant::now();
        let settings = self.settings();
        let samples = sample_count(&profile);
        let profile = match &settings.baseline {
            Some(b) => match b.compare(Arc::unwrap_or_clone(profile)) {
                Ok(p) => Arc::new(p),
                Err(e) => return self.problem(e),
            },
            None => profile,
        };
        let (loaded, no_time) = build(profile, &settings, self.orientation, started);
        let added = self.shown_samples.map_or(0, |before| samples - before);
        let change = match self.shown_samples {
            None if self.first => Change::First,
            None => Change::Switched,
            Some(_) => change,
        };
        self.shown_samples = Some(samples);
        self.first = false;
        let msg = LiveMsg::Reloaded(Box::new(Reload {
            loaded,
            added,
            file,
            change,
            granularity: self.options.granularity,
        }));
        if no_time && !(self.tx)(LiveMsg::NoTime) {
            return false;
        }
        (self.tx)(msg)
    }

    fn problem(&self, text: String) -> bool {
        (self.tx)(LiveMsg::Problem(Some(text)))
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
        // The next view is the same data at another granularity, not new data.
        let mut regranulated = false;
        loop {
            // A change during a whole read of pprof or JSON makes it stale, so the
            // change cancels it. A line format's read is not cancelled: what it
            // read stays good and appends continue it (cancelling would restart
            // it from byte 0 at every write of a busy writer).
            let cancellable = !self.first && follower.format().is_none_or(|f| !f.reads_lines());
            let progress = if self.first {
                self.progress.clone()
            } else {
                Progress::new()
            };
            if cancellable {
                *lock(&self.current) = Some(progress.clone());
            }
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
                    // (In a directory the next file may be good: keep waiting.)
                    if self.first && dir.is_none() && !matches!(e, LoadError::Empty { .. }) {
                        // Nothing good was ever shown: the error is the answer.
                        let _ = (self.tx)(LiveMsg::LoadFailed(e));
                        return None;
                    }
                    // Until one good profile came there is none to fall back on.
                    let text = if self.first {
                        format!("{e}; waiting for data")
                    } else {
                        format!("{e}; showing the last good profile")
                    };
                    self.problem(text).then_some(())?;
                    said_problem = true;
                    rebuild
                }
            };
            if fresh && let Some(p) = follower.take_profile() {
                if said_problem {
                    (self.tx)(LiveMsg::Problem(None)).then_some(())?;
                    said_problem = false;
                }
                let change = if changed && !regranulated {
                    Change::Data
                } else {
                    Change::Rebuilt
                };
                regranulated = false;
                self.send(p, file.clone(), change).then_some(())?;
            }
            let settings_changed = self.wait()?;
            // Another granularity: the file is read again from its start.
            if let Some(g) = self.settings().granularity
                && g != self.options.granularity
            {
                self.options.granularity = g;
                follower = Follower::new(path.to_path_buf(), self.options.clone());
                regranulated = true;
            }
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
    tx: Report,
    options: LoadOptions,
    progress: Arc<Progress>,
    orientation: Orientation,
    settings: Settings,
    kind: Followed,
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

/// A worker thread's body, with a panic reported to the UI instead of leaving
/// it waiting for a view that never comes.
fn guarded(tx: Report, body: impl FnOnce() + Send + 'static) -> impl FnOnce() + Send + 'static {
    move || {
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).is_err() {
            let m = crate::ui::runtime::terminal::take_worker_panic()
                .unwrap_or_else(|| "unknown panic".into());
            let _ = tx(LiveMsg::Panicked(m));
        }
    }
}

/// Follows `path` (watching its directory) on a worker thread.
pub fn spawn_file(
    tx: Report,
    path: PathBuf,
    options: LoadOptions,
    progress: Arc<Progress>,
    orientation: Orientation,
    settings: Settings,
) -> std::io::Result<Live> {
    let (mut worker, live) = worker(tx, options, progress, orientation, settings, Followed::File);
    let watch = live::watch_file(&path, worker.on_change()).map_err(std::io::Error::other)?;
    std::thread::Builder::new()
        .name("ember-live".into())
        .spawn(guarded(worker.tx.clone(), move || {
            let _watch = watch;
            worker.follow(&path, None, None);
        }))?;
    Ok(live)
}

/// Follows the newest profile in `dir` on a worker thread.
pub fn spawn_dir(
    tx: Report,
    dir: PathBuf,
    options: LoadOptions,
    progress: Arc<Progress>,
    orientation: Orientation,
    settings: Settings,
) -> std::io::Result<Live> {
    let (mut worker, live) = worker(tx, options, progress, orientation, settings, Followed::Dir);
    let watch = live::watch_dir(&dir, worker.on_change()).map_err(std::io::Error::other)?;
    std::thread::Builder::new()
        .name("ember-live".into())
        .spawn(guarded(worker.tx.clone(), move || {
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
        }))?;
    Ok(live)
}

/// Reads stdin as it arrives on a worker thread, showing the profile growing.
pub fn spawn_stdin(
    tx: Report,
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
        Followed::Stdin,
    );
    std::thread::Builder::new()
        .name("ember-live".into())
        .spawn(guarded(worker.tx.clone(), move || {
            let mut last: Option<Arc<Profile>> = None;
            let result = live::follow_reader(
                std::io::stdin(),
                "<stdin>",
                &options,
                &progress,
                Duration::from_millis(500),
                |p, done| {
                    // Only the final profile is kept, for mode changes after
                    // the stream ends; snapshots go straight to the UI.
                    // Shared with the view, not copied.
                    let p = Arc::new(p);
                    let keep = done.then(|| p.clone());
                    if worker.send(p, None, Change::Data) && keep.is_some() {
                        last = keep;
                    }
                },
            );
            match result {
                Err(e) if worker.first => {
                    let _ = (worker.tx)(LiveMsg::LoadFailed(e));
                    return;
                }
                Err(e) => {
                    worker.problem(format!("{e}; showing what arrived before"));
                }
                Ok(()) => {}
            }
            if !(worker.tx)(LiveMsg::Ended) {
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
        }))?;
    Ok(live)
}
