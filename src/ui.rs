//! The terminal UI: the only module that names ratatui or crossterm.
//!
//! One event loop owns the [`App`]; a loader thread, an input thread and a signal
//! thread feed it messages through one channel, so the UI never blocks on a load.

pub mod app;
pub mod chrome;
pub mod loaded;
mod msg;
pub mod runtime;
pub mod views;

pub use msg::{Msg, jobs_report, live_report};

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use self::app::{App, Effect, Loaded, Phase};
use self::chrome::keymap::Keymap;
use self::chrome::theme::{ColorChoice, ColorDepth, Theme};
use self::views::flame_state::Orientation;
use crate::error::LoadError;
use crate::formats::{self, LoadOptions};
use crate::model::timerange::TimeSelection;
use crate::model::{Profile, Transform};
use crate::output::report_warnings;
use crate::sources::input::{Progress, Source};

/// Loads `source` and builds its tree; what the loader thread runs.
pub fn load_and_build(
    source: &Source,
    options: &LoadOptions,
    progress: &Arc<Progress>,
    orientation: Orientation,
    transforms: Vec<Transform>,
    time: &TimeSelection,
) -> Result<Loaded, LoadError> {
    build_loaded(
        || formats::load(source, options, progress),
        &source.display(),
        orientation,
        transforms,
        time,
    )
}

/// Runs `load`, builds the tree and applies the transforms; `name` names the
/// input in a transform error.
fn build_loaded(
    load: impl FnOnce() -> Result<Profile, LoadError>,
    name: &str,
    orientation: Orientation,
    transforms: Vec<Transform>,
    time: &TimeSelection,
) -> Result<Loaded, LoadError> {
    let started = Instant::now();
    let profile: Profile = load()?;
    let invalid = |format: &'static str, message: String| LoadError::Invalid {
        path: name.to_string(),
        format,
        line: 0,
        message,
    };
    let transforms = crate::model::timerange::with_selection(&transforms, time, &profile)
        .map_err(|e| invalid("time range", e.to_string()))?;
    let options = Loaded::default_options(&profile);
    let mut loaded = Loaded::build(profile, options, orientation, started)
        .with_transforms(transforms)
        .map_err(|e| invalid("transform", e.to_string()))?;
    loaded.load_time = started.elapsed();
    Ok(loaded)
}

fn spawn_loader(
    tx: Sender<Msg>,
    load: impl FnOnce() -> Result<Loaded, LoadError> + Send + 'static,
) -> Result<()> {
    std::thread::Builder::new()
        .name("ember-loader".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(load));
            let msg = match result {
                Ok(Ok(l)) => Msg::Loaded(Box::new(l)),
                Ok(Err(e)) => Msg::LoadFailed(e),
                Err(_) => Msg::WorkerPanicked(
                    runtime::terminal::take_worker_panic()
                        .unwrap_or_else(|| "unknown panic".into()),
                ),
            };
            let _ = tx.send(msg);
        })
        .context("starting the loader thread")?;
    Ok(())
}

fn spawn_input(tx: Sender<Msg>) -> Result<()> {
    std::thread::Builder::new()
        .name("ember-input".into())
        .spawn(move || {
            loop {
                match crossterm::event::read() {
                    Ok(ev) => {
                        if tx.send(Msg::Input(ev)).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Msg::InputClosed(e.to_string()));
                        return;
                    }
                }
            }
        })
        .context("starting the input thread")?;
    Ok(())
}

fn spawn_signals(tx: Sender<Msg>) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT, SIGQUIT])
        .context("installing signal handlers")?;
    std::thread::Builder::new()
        .name("ember-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let _ = tx.send(Msg::Signal(sig));
            }
        })
        .context("starting the signal thread")?;
    Ok(())
}

/// What every viewer start needs before it knows what it loads.
struct Setup {
    keymap: Keymap,
    theme: Theme,
    orientation: Orientation,
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
    transforms: Vec<Transform>,
    initial_search: Option<String>,
    options: LoadOptions,
    time: TimeSelection,
    marks: Vec<crate::model::timerange::Mark>,
}

/// Reads the keymap and the transforms (a bad pattern is an error now, not a
/// silently untransformed view), installs the panic hook and the signal thread.
fn setup(args: &ViewSettings) -> Result<Setup> {
    let keymap = Keymap::load_user().map_err(|e| anyhow::anyhow!("keymap: {e}"))?;
    let theme = Theme::new(ColorDepth::detect(args.color));
    let orientation = if args.flame {
        Orientation::Flame
    } else {
        Orientation::Icicle
    };
    let (tx, rx) = mpsc::channel();
    runtime::terminal::install_panic_hook();
    spawn_signals(tx.clone())?;
    let (transforms, initial_search) = args.transforms.clone().map_err(anyhow::Error::msg)?;
    crate::model::apply_all(&Profile::default(), &transforms)
        .map_err(|e| anyhow::anyhow!("transform: {e}"))?;
    args.time.check().map_err(|e| anyhow::anyhow!("{e}"))?;
    let marks = args.marks.clone().map_err(anyhow::Error::msg)?;
    let mut time = args.time.clone();
    if args.exclude_marks {
        time.exclude
            .extend(marks.iter().filter(|m| m.range).map(|m| m.time.clone()));
    }
    Ok(Setup {
        marks,
        keymap,
        theme,
        orientation,
        tx,
        rx,
        transforms,
        initial_search,
        options: args.load.clone(),
        time,
    })
}

/// Runs the interactive viewer until the user quits.
pub fn run(source: Source, args: &ViewSettings) -> Result<ExitCode> {
    let st = setup(args)?;
    let marks = st.marks.clone();
    let orientation = st.orientation;
    let progress = Progress::new();
    let settings = runtime::live::Settings {
        transforms: st.transforms.clone(),
        time: st.time.clone(),
        ..runtime::live::Settings::default()
    };
    let name = match &args.watch_dir {
        Some(dir) => format!("{}/", dir.display()),
        None => source.short_name(),
    };
    // A file read once can be read again at another granularity (`g`).
    let mut reread = None;
    let live = match (&args.watch_dir, &source) {
        (Some(dir), _) => Some(runtime::live::spawn_dir(
            live_report(st.tx.clone()),
            dir.clone(),
            st.options,
            progress.clone(),
            orientation,
            settings,
        )?),
        (None, Source::Stdin) if !stdin_is_file() => Some(runtime::live::spawn_stdin(
            live_report(st.tx.clone()),
            st.options,
            progress.clone(),
            orientation,
            settings,
        )?),
        (None, Source::Path(p)) if args.watch => Some(runtime::live::spawn_file(
            live_report(st.tx.clone()),
            p.clone(),
            st.options,
            progress.clone(),
            orientation,
            settings,
        )?),
        _ => {
            if let Source::Path(_) = &source {
                reread = Some((source.clone(), st.options.clone()));
            }
            let (source, progress) = (source.clone(), progress.clone());
            let (options, transforms, time) = (st.options, st.transforms, st.time);
            spawn_loader(st.tx.clone(), move || {
                load_and_build(&source, &options, &progress, orientation, transforms, &time)
            })?;
            None
        }
    };
    let phase = Phase::Loading {
        progress,
        started: Instant::now(),
    };
    let mut app = App::new(name, st.keymap, st.theme, phase, orientation);
    app.inputs = match (&args.watch_dir, &source) {
        (Some(dir), _) => vec![dir.clone()],
        (None, Source::Path(p)) => vec![p.clone()],
        (None, Source::Stdin) => Vec::new(),
    };
    app.inputs.extend(args.context.iter().cloned());
    app.initial_search = st.initial_search;
    app.live = live;
    app.granularity = args.load.granularity;
    app.reread = reread;
    app.source_options = args.source.clone();
    app.timeline.nudge_ns = args.align_ns.clone().map_err(anyhow::Error::msg)?;
    app.timeline.anchor_ns = args.time.anchor_ns;
    app.timeline.pending_marks = marks;
    spawn_contexts(st.tx.clone(), &args.context)?;
    drive(app, st.tx, st.rx, &source.display(), args)
}

/// Reads the `--context` logs on their own thread: the profile's load does
/// not wait for them, nor they for it.
fn spawn_contexts(tx: Sender<Msg>, paths: &[PathBuf]) -> Result<()> {
    if paths.is_empty() {
        return Ok(());
    }
    let paths = paths.to_vec();
    std::thread::Builder::new()
        .name("ember-context".into())
        .spawn(move || {
            let logs = paths
                .iter()
                .map(|p| crate::context::load(p).map_err(|e| e.to_string()))
                .collect();
            let _ = tx.send(Msg::Contexts(logs));
        })
        .context("starting the context reader")?;
    Ok(())
}

/// What a viewer takes from the command line (`cli` fills it in from its flags).
#[derive(Clone, Debug)]
pub struct ViewSettings {
    /// The recipe's and the flags' transforms and the recipe's search, or why
    /// they could not be read: reported when the viewer starts, after a bad
    /// keymap.
    pub transforms: Result<(Vec<Transform>, Option<String>), String>,
    pub load: LoadOptions,
    /// On exit, every warning instead of a count.
    pub verbose: bool,
    pub color: ColorChoice,
    /// Start in the flame orientation (root at the bottom) instead of icicle.
    pub flame: bool,
    /// Capture the mouse (clicks, drags, the wheel).
    pub mouse: bool,
    /// Follow a file as it changes (a stream is always followed).
    pub watch: bool,
    /// Follow the newest profile in this directory.
    pub watch_dir: Option<PathBuf>,
    /// `--from/--until/--exclude`, resolved against the profile once loaded.
    pub time: TimeSelection,
    /// `--marks`, read (or why not), and `--exclude-marks`.
    pub marks: Result<Vec<crate::model::timerange::Mark>, String>,
    pub exclude_marks: bool,
    /// `--context` logs and `--align` (nanoseconds, or why it is not one).
    pub context: Vec<PathBuf>,
    pub align_ns: Result<i64, String>,
    /// Where the source pane looks for files.
    pub source: crate::output::listing::SourceOptions,
}

/// How a comparison opens.
pub struct DiffStart {
    pub strip_hex: bool,
    pub norm: crate::model::diff::Norm,
    /// The side a watched file is on (0 before, 1 after) when watching.
    pub watch_side: usize,
}

/// Runs the viewer on a comparison of two profiles loaded side by side.
pub fn run_diff(sources: [Source; 2], args: &ViewSettings, start: DiffStart) -> Result<ExitCode> {
    let inputs: Vec<PathBuf> = sources
        .iter()
        .filter_map(|s| match s {
            Source::Path(p) => Some(p.clone()),
            Source::Stdin => None,
        })
        .collect();
    if !args.time.is_empty() {
        anyhow::bail!(
            "--from/--until/--exclude cut one profile; cut each side first (ember convert --from ... --until ...)"
        );
    }
    if !args.context.is_empty() || args.marks.as_ref().is_ok_and(|m| !m.is_empty()) {
        anyhow::bail!(
            "--context and --marks go with one profile: open each side with them, or compare two time ranges of one profile (C on its timeline)"
        );
    }
    let DiffStart {
        strip_hex,
        norm,
        watch_side,
    } = start;
    if matches!(sources, [Source::Stdin, Source::Stdin]) {
        anyhow::bail!("only one side can be - (stdin)");
    }
    let st = setup(args)?;
    let orientation = st.orientation;
    let name = format!("{} → {}", sources[0].short_name(), sources[1].short_name());
    let merge = crate::model::diff::MergeOptions {
        names: [sources[0].short_name(), sources[1].short_name()],
        strip_hex,
    };
    // A stream on either side, or a watched after file, is followed; the other
    // side is the baseline, read once now.
    let streaming = |s: &Source| matches!(s, Source::Stdin) && !stdin_is_file();
    let live_side = if streaming(&sources[1]) {
        Some(1)
    } else if streaming(&sources[0]) {
        Some(0)
    } else if matches!(sources[watch_side.min(1)], Source::Path(_)) && args.watch {
        Some(watch_side.min(1))
    } else {
        None
    };
    let mut live = None;
    let progress = match live_side {
        Some(side) => {
            let base_source = &sources[1 - side];
            eprintln!("ember: reading {}…", base_source.display());
            let profile = formats::load(base_source, &st.options, &Progress::new())?;
            let settings = runtime::live::Settings {
                transforms: st.transforms.clone(),
                baseline: Some(Arc::new(runtime::live::Baseline {
                    profile,
                    live_side: side,
                    merge,
                })),
                ..runtime::live::Settings::default()
            };
            let progress = Progress::new();
            live = Some(match &sources[side] {
                Source::Path(p) => runtime::live::spawn_file(
                    live_report(st.tx.clone()),
                    p.clone(),
                    st.options.clone(),
                    progress.clone(),
                    orientation,
                    settings,
                )?,
                Source::Stdin => runtime::live::spawn_stdin(
                    live_report(st.tx.clone()),
                    st.options.clone(),
                    progress.clone(),
                    orientation,
                    settings,
                )?,
            });
            progress
        }
        None => {
            let progress = Progress::several();
            let (shared, name) = (progress.clone(), name.clone());
            let (options, transforms) = (st.options.clone(), st.transforms.clone());
            spawn_loader(st.tx.clone(), move || {
                build_loaded(
                    || formats::load_diff([&sources[0], &sources[1]], &options, strip_hex, &shared),
                    &name,
                    orientation,
                    transforms,
                    &TimeSelection::default(),
                )
            })?;
            progress
        }
    };
    let phase = Phase::Loading {
        progress,
        started: Instant::now(),
    };
    let mut app = App::new(name.clone(), st.keymap, st.theme, phase, orientation);
    app.inputs = inputs;
    app.initial_search = st.initial_search;
    app.live = live;
    app.diff.norm = norm;
    app.granularity = args.load.granularity;
    app.source_options = args.source.clone();
    drive(app, st.tx, st.rx, &name, args)
}

/// Sets up the terminal, runs the event loop and restores the terminal.
fn drive(
    mut app: App,
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
    source_name: &str,
    args: &ViewSettings,
) -> Result<ExitCode> {
    app.jobs =
        Some(runtime::jobs::spawn(jobs_report(tx.clone())).context("starting the job thread")?);
    let outcome = {
        let mut guard =
            runtime::terminal::Guard::enter(args.mouse).context("setting up the terminal")?;
        spawn_input(tx)?;
        event_loop(&mut guard.terminal, &mut app, &rx)
    }; // the guard restores the terminal here, before anything is printed
    let outcome = outcome?;
    if let Some(l) = app.loaded() {
        report_warnings(&l.profile, &Source::Path(source_name.into()), args.verbose);
    }
    match outcome {
        Exit::Quit => Ok(ExitCode::SUCCESS),
        Exit::Signal(sig) => Ok(ExitCode::from(128 + sig as u8)),
    }
}

/// What [`trace::Trace`] calls a message.
fn msg_name(msg: &Msg) -> String {
    match msg {
        Msg::Input(crossterm::event::Event::Key(k)) => format!("key {:?}", k.code),
        Msg::Input(_) => "input".into(),
        Msg::Loaded(_) => "loaded".into(),
        Msg::Reloaded(_) => "reloaded".into(),
        Msg::Job(_) => "job done".into(),
        _ => "other".into(),
    }
}

/// Whether stdin is a regular file (`ember - < file`): then it is read once,
/// not followed as a stream.
fn stdin_is_file() -> bool {
    use std::os::fd::AsFd;
    std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.is_file())
}

/// Draws one frame of `app`: what the frame needs is made ready first
/// ([`App::prepare_frame`]), then the panels draw it. The one way to draw.
pub fn draw_frame<B: ratatui::backend::Backend>(
    term: &mut ratatui::Terminal<B>,
    app: &mut App,
) -> Result<(), B::Error> {
    app.prepare_frame();
    term.draw(|f| chrome::panels::draw(f, app)).map(|_| ())
}

enum Exit {
    Quit,
    Signal(i32),
}

fn event_loop(
    term: &mut runtime::terminal::Term,
    app: &mut App,
    rx: &Receiver<Msg>,
) -> Result<Exit> {
    let mut trace = runtime::trace::Trace::from_env(&app.inputs);
    loop {
        if app.dirty {
            draw_frame(term, app)?;
            app.dirty = false;
            let busy = app.busy.as_deref().unwrap_or("-");
            trace.line(format_args!("frame busy={busy}"));
        }
        // While loading, wake up to move the progress bar; otherwise sleep until told.
        // Live, wake each second so "+N samples 3 s ago" stays true.
        let timeout = match app.phase {
            Phase::Loading { .. } => Duration::from_millis(50),
            // A job under way: its seconds tick in the header.
            Phase::Ready(_) if app.busy.is_some() => Duration::from_millis(500),
            Phase::Ready(_) if app.live.is_some() => Duration::from_secs(1),
            Phase::Ready(_) => Duration::from_secs(3600),
        };
        let first = match rx.recv_timeout(timeout) {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return Ok(Exit::Quit),
        };
        if matches!(app.phase, Phase::Loading { .. })
            || (app.live.is_some() || app.busy.is_some()) && first.is_none()
        {
            app.dirty = true;
        }
        // Handle everything pending before drawing again.
        for msg in first
            .into_iter()
            .chain(std::iter::from_fn(|| rx.try_recv().ok()))
        {
            if trace.on() {
                trace.line(format_args!("msg {}", msg_name(&msg)));
            }
            match msg {
                Msg::Input(ev) => {
                    if app.handle_event(&ev) == Effect::Quit {
                        return Ok(Exit::Quit);
                    }
                }
                Msg::Loaded(l) => app.set_loaded(l),
                Msg::Reloaded(r) => app.reloaded(r),
                Msg::Job(done) => app.job_done(*done),
                Msg::Contexts(logs) => app.contexts_read(logs),
                Msg::LiveProblem(p) => app.live_problem(p),
                Msg::LiveEnded => app.live_ended(),
                Msg::LiveNoTime => app.live_no_time(),
                Msg::LoadFailed(LoadError::Cancelled) => return Ok(Exit::Quit),
                Msg::LoadFailed(e) => return Err(e.into()),
                Msg::WorkerPanicked(m) => anyhow::bail!("internal error while loading: {m}"),
                Msg::InputClosed(e) => anyhow::bail!("the terminal went away: {e}"),
                Msg::Signal(sig) => return Ok(Exit::Signal(sig)),
            }
        }
        app.sync_live();
        // The pane first: the job thread takes them in order.
        app.ensure_pair();
        app.ensure_lint();
        if let Some(seq) = app.clipboard.take() {
            use std::io::Write;
            let out = term.backend_mut();
            // A terminal that ignores OSC 52 drops it; a failed write is
            // said like any other.
            if out.write_all(&seq).and_then(|()| out.flush()).is_err() {
                app.prompt.message = Some(("could not write to the terminal".into(), true));
            }
        }
    }
}
