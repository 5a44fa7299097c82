//! Work too slow for a keypress (transforms, the inverted view, the callers and
//! callees of a function) runs on a job
//! thread. The App sends a [`Job`] with a copy of its input and keeps answering
//! keys; the [`Done`] comes back through the event loop and is installed only if
//! the view it was made for is still the one on screen (`Loaded::id`).
//!
//! Without a job thread (tests, benchmarks) the App runs the same job inline and
//! installs it the same way, so there is one code path for the result.

use std::sync::Arc;
use std::sync::mpsc::{self, Sender};

use crate::model::granularity::{Anchor, Granularity};
use crate::model::{CallTree, FrameId, Profile, Transform, TransformError, TreeOptions};
use crate::ui::loaded::Loaded;
use crate::ui::views::flame_state::FlameState;
use crate::ui::views::sandwich::Sandwich;

pub mod listing;
mod view;

pub enum Job {
    /// `source` read again at `options.granularity`, its transforms carried
    /// over from `carry`, and its tree built.
    Regranulate {
        source: crate::sources::input::Source,
        options: crate::formats::LoadOptions,
        /// The granularity on screen.
        from: Granularity,
        carry: Carry,
        orientation: crate::ui::views::flame_state::Orientation,
    },
    /// The source pane of `function` ([`listing::pane`]).
    Listing {
        input: listing::ListingInput,
        function: String,
        sources: crate::output::listing::SourceOptions,
    },
    /// The bottom-up profile and its tree.
    Invert {
        id: u64,
        profile: Arc<Profile>,
        options: TreeOptions,
    },
    /// The callers and callees of `function` in the top-down `profile`.
    Sandwich {
        id: u64,
        profile: Arc<Profile>,
        options: TreeOptions,
        function: FrameId,
        /// What "% of all" divides by.
        all: i64,
    },
    /// `input` with `apply` applied becomes the view, with `all` as its
    /// transform list (`input` is the current view for one more transform, the
    /// untransformed profile to undo or replace some).
    Transform {
        id: u64,
        input: Arc<Profile>,
        apply: Vec<Transform>,
        all: Vec<Transform>,
        options: TreeOptions,
        /// What the header says while it runs.
        label: String,
    },
    /// Two time ranges of one profile as a comparison: `input` (uncut) with
    /// `before` and with `after` applied, merged into a diff profile.
    CompareRanges {
        id: u64,
        input: Arc<Profile>,
        before: Vec<Transform>,
        after: Vec<Transform>,
        names: [String; 2],
        orientation: crate::ui::views::flame_state::Orientation,
    },
    /// The lint of view `id` (the top-down profile with a tree of `options`),
    /// from the samples alone, and a comparison's delta table: asked for after
    /// the first frame.
    Lint {
        id: u64,
        profile: Arc<Profile>,
        options: TreeOptions,
    },
    /// The function table of the view's tree, shared with the view, so that
    /// Tab to the table on a big profile does not wait on it.
    Table {
        id: u64,
        profile: Arc<Profile>,
        tree: Arc<CallTree>,
    },
    /// The other side's tree of the linked before | after view (`key` as in
    /// `PairPane`), so that `|` and `t` draw at once and the pane follows.
    Pair {
        key: crate::ui::loaded::PairKey,
        profile: Arc<Profile>,
        options: TreeOptions,
    },
    /// The view written to a file: `profile`'s tree with `options` below
    /// `root`, into `path` (through a temporary name, renamed when complete).
    Export {
        profile: Arc<Profile>,
        options: TreeOptions,
        root: crate::model::NodeId,
        path: std::path::PathBuf,
        format: crate::output::export::ExportFormat,
        title: String,
        notes: Vec<String>,
        icicle: bool,
    },
}

pub enum Done {
    /// The profile at another granularity, or why it could not be read.
    Regranulated {
        result: Result<Box<Regranulated>, String>,
    },
    Inverted {
        id: u64,
        profile: Arc<Profile>,
        tree: CallTree,
    },
    Sandwich {
        id: u64,
        sandwich: Box<Sandwich>,
    },
    Transformed {
        id: u64,
        all: Vec<Transform>,
        result: Result<(Arc<Profile>, CallTree), TransformError>,
    },
    /// The comparison's view, or why it could not be made.
    Compared {
        id: u64,
        result: Result<Box<Loaded>, String>,
        names: [String; 2],
    },
    Linted {
        id: u64,
        findings: Vec<crate::model::lint::Finding>,
        /// A comparison's delta table, so that Tab finds it built.
        delta: Option<crate::model::diff::DeltaTable>,
    },
    Paired {
        key: crate::ui::loaded::PairKey,
        tree: CallTree,
    },
    Tabled {
        id: u64,
        /// The value the table sums.
        value: usize,
        table: crate::model::TopTable,
        counts: Option<Vec<(i64, i64)>>,
    },
    /// The source pane of `function`, or why there is none.
    Listed {
        result: Result<Box<crate::ui::views::source::SourcePane>, String>,
    },
    /// What an export wrote (the path, its size, caveats) or why it could not.
    Exported {
        result: Result<Exported, String>,
    },
}

/// Reads `source` again at `options.granularity` for [`Job::Regranulate`].
fn regranulate(
    source: &crate::sources::input::Source,
    options: &crate::formats::LoadOptions,
    from: Granularity,
    carry: Carry,
    orientation: crate::ui::views::flame_state::Orientation,
) -> Result<Regranulated, String> {
    let started = std::time::Instant::now();
    let progress = crate::sources::input::Progress::new();
    let profile = crate::formats::load(source, options, &progress).map_err(|e| e.to_string())?;
    let to = options.granularity;
    let anchor = match carry {
        Carry::Anchor(anchor) => anchor,
        Carry::Make { old, transforms } => Arc::new(Anchor::new(&transforms, &old, from)),
    };
    let carried = anchor.translate(&profile, to);
    let options = Loaded::default_options(&profile);
    let mut loaded = Loaded::build(profile, options, orientation, started);
    loaded
        .apply_transforms(carried.transforms)
        .map_err(|e| format!("transform: {e}"))?;
    loaded.load_time = started.elapsed();
    Ok(Regranulated {
        loaded: Box::new(loaded),
        from,
        to,
        dropped: carried.dropped,
        anchor,
    })
}

/// Where [`Job::Regranulate`] takes the transforms from.
pub enum Carry {
    /// The anchor of an earlier switch, when the transforms are still the
    /// ones it gave.
    Anchor(Arc<Anchor>),
    /// The transforms on screen, made on `old` (as loaded) at the job's
    /// `from`: a new anchor.
    Make {
        old: Arc<Profile>,
        transforms: Vec<Transform>,
    },
}

/// A view at another granularity.
pub struct Regranulated {
    pub loaded: Box<Loaded>,
    pub from: Granularity,
    pub to: Granularity,
    /// The transforms that could not be carried over, described.
    pub dropped: Vec<String>,
    /// What they were carried from, for the next switch.
    pub anchor: Arc<Anchor>,
}

/// A finished export.
#[derive(Clone, Debug)]
pub struct Exported {
    pub path: std::path::PathBuf,
    pub format: crate::output::export::ExportFormat,
    pub bytes: u64,
    pub caveats: Vec<String>,
}

impl Job {
    /// What the header says while it runs.
    pub fn label(&self) -> String {
        match self {
            Job::Invert { .. } => "building the inverted view".into(),
            Job::Regranulate { options, .. } => {
                format!("reading at {} granularity", options.granularity.name())
            }
            Job::Sandwich { .. } => "finding the callers and callees".into(),
            Job::Transform { label, .. } => label.clone(),
            Job::CompareRanges { .. } => "comparing the two time ranges".into(),
            Job::Export { format, .. } => format!("exporting the view as {}", format.name()),
            Job::Lint { .. } => "checking the profile (lint)".into(),
            Job::Pair { .. } => "building the other side's pane".into(),
            Job::Table { .. } => "building the function table".into(),
            Job::Listing { .. } => "reading the source lines".into(),
        }
    }
}

/// Does the work.
pub fn run(job: Job) -> Done {
    match job {
        Job::Regranulate {
            source,
            options,
            from,
            carry,
            orientation,
        } => Done::Regranulated {
            result: regranulate(&source, &options, from, carry, orientation).map(Box::new),
        },
        Job::Invert {
            id,
            profile,
            options,
        } => {
            let profile = Arc::new(crate::model::invert::invert(&profile));
            let tree = CallTree::build(&profile, options);
            Done::Inverted { id, profile, tree }
        }
        Job::Sandwich {
            id,
            profile,
            options,
            function,
            all,
        } => Done::Sandwich {
            id,
            sandwich: Box::new(Sandwich::build(&profile, &options, function, all)),
        },
        Job::Transform {
            id,
            input,
            apply,
            all,
            options,
            ..
        } => {
            let result = if apply.is_empty() {
                Ok(input)
            } else {
                crate::model::apply_all(&input, &apply).map(Arc::new)
            };
            let result = result.map(|shown| {
                let options = TreeOptions {
                    value: options.value.min(shown.value_types.len().saturating_sub(1)),
                    ..options
                };
                let tree = CallTree::build(&shown, options);
                (shown, tree)
            });
            // Its lint is asked for once it is installed (App::ensure_lint),
            // so the transformed view is not held back by it.
            Done::Transformed { id, all, result }
        }
        Job::CompareRanges {
            id,
            input,
            before,
            after,
            names,
            orientation,
        } => {
            let side =
                |t: &[Transform]| crate::model::apply_all(&input, t).map_err(|e| e.to_string());
            let result = side(&before).and_then(|b| {
                let a = side(&after)?;
                let opts = crate::model::diff::MergeOptions {
                    names: names.clone(),
                    strip_hex: false,
                };
                let merged = crate::model::diff::merge(b, a, &opts).map_err(|e| e.to_string())?;
                let options = Loaded::default_options(&merged);
                let started = std::time::Instant::now();
                Ok(Box::new(Loaded::build(
                    merged,
                    options,
                    orientation,
                    started,
                )))
            });
            Done::Compared { id, result, names }
        }
        Job::Lint {
            id,
            profile,
            options,
        } => Done::Linted {
            id,
            findings: crate::model::lint::lint_view(&profile, &options),
            delta: crate::model::diff::DeltaTable::from_samples(&profile, options.samples.clone()),
        },
        Job::Listing {
            input,
            function,
            sources,
        } => Done::Listed {
            result: listing::pane(input, &function, &sources),
        },
        Job::Table { id, profile, tree } => Done::Tabled {
            id,
            value: tree.options.value,
            table: crate::model::TopTable::build(&profile, &tree),
            counts: crate::ui::views::table::sample_counts(&profile, &tree),
        },
        Job::Pair {
            key,
            profile,
            options,
        } => Done::Paired {
            key,
            tree: CallTree::build(&profile, options),
        },
        Job::Export {
            profile,
            options,
            root,
            path,
            format,
            title,
            notes,
            icicle,
        } => {
            let tree = CallTree::build(&profile, options);
            let scope = crate::output::export::Scope {
                profile: &profile,
                tree: &tree,
                root,
                title,
                notes,
                icicle,
            };
            Done::Exported {
                result: export_to(&path, format, &scope),
            }
        }
    }
}

fn export_to(
    path: &std::path::Path,
    format: crate::output::export::ExportFormat,
    scope: &crate::output::export::Scope,
) -> Result<Exported, String> {
    match crate::output::export::write_file(path, format, scope) {
        Ok((bytes, caveats)) => Ok(Exported {
            path: path.to_path_buf(),
            format,
            bytes,
            caveats,
        }),
        Err(e) => Err(format!("{e:#}")),
    }
}

/// What the job thread hands back: a finished job, or the panic that ended one.
pub type JobResult = Result<Box<Done>, String>;

/// Starts the job thread; jobs run one at a time, in order. Each result goes
/// to `report` (false: the viewer is gone, the thread ends); the viewer maps
/// it into its own event type, which the jobs do not know.
pub fn spawn(report: impl Fn(JobResult) -> bool + Send + 'static) -> std::io::Result<Sender<Job>> {
    let (job_tx, job_rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("ember-jobs".into())
        .spawn(move || {
            for job in job_rx {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(job)));
                let result = match result {
                    Ok(done) => Ok(Box::new(done)),
                    Err(_) => Err(crate::ui::runtime::terminal::take_worker_panic()
                        .unwrap_or_else(|| "unknown panic".into())),
                };
                if !report(result) {
                    return;
                }
            }
        })?;
    Ok(job_tx)
}
