//! Command-line definitions and one `run` per subcommand.

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::formats;
use crate::model::{self, CallTree, Profile, SortKey, TopTable, TreeOptions};
use crate::output;
use crate::output::report_warnings;
use crate::sources::input::{Progress, Source};
use crate::ui;
use crate::ui::chrome::theme::ColorChoice;

mod commands;
mod compare;
mod input;
mod lint;
mod list;
mod report;

use commands::{run_convert, run_info, run_top, top_streams};

pub use compare::*;
pub use input::*;
pub use lint::*;
pub use report::*;

#[derive(Debug, Parser)]
#[command(
    name = "ember",
    version,
    about = "A terminal flamegraph explorer",
    long_about = "A terminal flamegraph explorer.\n\nOpens PROFILE (a file, or - for stdin; gzip is read transparently) in a full-screen icicle/flame view. Press ? inside for the keys.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub view: ViewArgs,
}

impl Cli {
    /// What this run does, for a message about it: `loading big.folded`.
    pub fn doing(&self) -> String {
        let one = |p: &std::path::Path| format!("loading {}", p.display());
        match &self.command {
            Some(Command::Top(a)) => one(&a.profile),
            Some(Command::Info(a)) => one(&a.profile),
            Some(Command::Lint(a)) => one(&a.profile),
            Some(Command::List(a)) => one(&a.profile),
            Some(Command::Report(a)) => one(&a.profile),
            Some(Command::Convert(a)) => one(&a.profile),
            Some(Command::Diff(a)) => {
                format!("comparing {} and {}", a.before.display(), a.after.display())
            }
            Some(Command::Check(a)) => {
                format!("comparing {} and {}", a.base.display(), a.new.display())
            }
            Some(Command::Capture(_)) => "capturing".into(),
            None => match (&self.view.profile, &self.view.watch_dir) {
                (Some(p), _) => one(p),
                (None, Some(d)) => format!("watching {}", d.display()),
                (None, None) => "starting".into(),
            },
        }
    }

    /// The message that refuses this run before it loads anything, when the
    /// memory its loads are estimated to need is more than the limits leave
    /// ([`crate::host::budget`]), with the exit code it ends with (2 where the
    /// command's 1 means something else: `lint`, `check`).
    pub fn budget_refusal(&self) -> Option<(String, u8)> {
        let (paths, input, code): (Vec<&std::path::Path>, &InputArgs, u8) = match &self.command {
            Some(Command::Top(a)) => (vec![&a.profile], &a.input, 1),
            Some(Command::Info(a)) => (vec![&a.profile], &a.input, 1),
            Some(Command::Lint(a)) => (vec![&a.profile], &a.input, 2),
            Some(Command::List(a)) => (vec![&a.profile], &a.input, 1),
            Some(Command::Report(a)) => (vec![&a.profile], &a.input, 1),
            Some(Command::Convert(a)) => (vec![&a.profile], &a.input, 1),
            Some(Command::Diff(a)) => (vec![&a.before, &a.after], &a.compare.input, 1),
            Some(Command::Check(a)) => (vec![&a.base, &a.new], &a.compare.input, 2),
            Some(Command::Capture(_)) => return None,
            None => (
                self.view.profile.iter().map(|p| p.as_path()).collect(),
                &self.view.input,
                1,
            ),
        };
        if input.force_load || paths.is_empty() {
            return None;
        }
        let options = input.load_options();
        let estimates: Vec<_> = paths
            .iter()
            .filter_map(|p| crate::host::budget::estimate(p, &options))
            .collect();
        if estimates.is_empty() {
            return None;
        }
        let extra = if self.opens_viewer() {
            crate::host::budget::VIEWER_EXTRA
        } else {
            0
        };
        let folded = estimates
            .iter()
            .all(|e| e.format == formats::Format::Folded);
        let top = matches!(self.command, Some(Command::Top(_)));
        if top && folded && top_streams(input) {
            // Summed while reading: the stacks are never held.
            return None;
        }
        let room = crate::host::budget::room(&crate::host::limits::Limits::read());
        let mut message = crate::host::budget::refusal(&estimates, extra, &room)?;
        if folded
            && !top
            && let [path] = paths[..]
        {
            message.push_str(&format!(
                "  or: `ember top {}` sums folded stacks as it reads them, in about the memory of \
                 the frame names\n",
                path.display()
            ));
        }
        Some((message, code))
    }

    /// Whether this run opens the full-screen viewer (which a supervising
    /// parent then guards).
    pub fn opens_viewer(&self) -> bool {
        match &self.command {
            None => self.view.profile.is_some() || self.view.watch_dir.is_some(),
            Some(Command::Diff(a)) => a.format.is_none() && a.to.is_none(),
            Some(_) => false,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the per-function table (self and total weight) and exit.
    Top(TopArgs),
    /// Say what a profile is: format, sample types, totals, threads, time span.
    Info(InfoArgs),
    /// Warn about a profile that misleads (debug build, broken stacks, too few
    /// samples, idle, ...): exit 1 when a warning fires, 2 when unreadable.
    Lint(LintArgs),
    /// The per-line cost of the functions REGEX names, beside their source
    /// (as `go tool pprof -list`), text or JSON.
    List(list::ListArgs),
    /// A ticket-ready summary: source, duration, rate, top functions, the frame,
    /// the lint warnings (markdown, text or JSON).
    Report(ReportArgs),
    /// Write a profile in another format: folded, SVG, speedscope or pprof.
    Convert(ConvertArgs),
    /// Compare two profiles: the diff view, or the delta table with --format.
    Diff(DiffArgs),
    /// A regression gate for CI: exit 1 when a function grew past its budget.
    Check(CheckArgs),
    /// Record host context (vmstat, iostat, mpstat) next to a profiler run into a bundle directory.
    Capture(crate::capture::CaptureArgs),
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The profile to read; - reads stdin.
    #[arg(value_name = "PROFILE")]
    pub profile: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The profile to read; - reads stdin.
    #[arg(value_name = "PROFILE")]
    pub profile: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// The output format [default: from -o's name (.svg, .json, .pb.gz), else folded].
    #[arg(long, value_enum)]
    pub to: Option<ConvertTo>,
    /// Write here instead of stdout (never the input file).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConvertTo {
    /// `a;b;c SELF` per stack, sorted.
    Folded,
    /// An SVG flame graph (inferno's writer), for a browser or a ticket.
    Svg,
    /// speedscope's JSON file format, every value type a profile.
    Speedscope,
    /// pprof protobuf, gzipped, every value type kept (`go tool pprof` reads it).
    Pprof,
}

impl ConvertTo {
    fn export(self) -> output::export::ExportFormat {
        use output::export::ExportFormat;
        match self {
            ConvertTo::Folded => ExportFormat::Folded,
            ConvertTo::Svg => ExportFormat::Svg,
            ConvertTo::Speedscope => ExportFormat::Speedscope,
            ConvertTo::Pprof => ExportFormat::Pprof,
        }
    }
}

#[derive(Debug, Args)]
pub struct ViewArgs {
    /// The profile to open; - reads stdin.
    #[arg(value_name = "PROFILE")]
    pub profile: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub display: DisplayArgs,
    /// Do not watch the file: load it once.
    #[arg(long)]
    pub no_watch: bool,
    /// Follow the newest profile in DIR (a collector writing one file a minute);
    /// the bracket keys step to older and newer ones.
    #[arg(long, value_name = "DIR", conflicts_with = "profile")]
    pub watch_dir: Option<PathBuf>,
}

/// How the viewer draws (every command that opens it).
#[derive(Debug, Args, Clone)]
pub struct DisplayArgs {
    /// Where the source pane (L) looks for files, as pprof's -source_path (again for more).
    #[arg(long, value_name = "DIR")]
    pub source_path: Vec<PathBuf>,
    /// A prefix the source pane takes off recorded paths before --source-path (again for more).
    #[arg(long, value_name = "PREFIX")]
    pub trim_path: Vec<String>,
    /// Colours: auto detects from COLORTERM/TERM and honours NO_COLOR.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
    /// Start in the flame orientation (root at the bottom) instead of icicle.
    #[arg(long)]
    pub flame: bool,
    /// Leave the mouse to the terminal (text selection) instead of capturing it.
    #[arg(long)]
    pub no_mouse: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    Auto,
    Truecolor,
    #[value(name = "256")]
    C256,
    #[value(name = "16")]
    C16,
    Never,
}

impl From<ColorArg> for ColorChoice {
    fn from(c: ColorArg) -> ColorChoice {
        match c {
            ColorArg::Auto => ColorChoice::Auto,
            ColorArg::Truecolor => ColorChoice::Truecolor,
            ColorArg::C256 => ColorChoice::C256,
            ColorArg::C16 => ColorChoice::C16,
            ColorArg::Never => ColorChoice::Never,
        }
    }
}

impl ViewArgs {
    /// What the viewer takes of these arguments.
    pub fn settings(&self) -> ui::ViewSettings {
        view_settings(
            &self.input,
            &self.display,
            !self.no_watch,
            self.watch_dir.clone(),
        )
    }
}

/// The viewer's settings from the input and display flags. The transforms are
/// read here; an error in them is the viewer's to report when it starts (after
/// a bad keymap's), as it was when the viewer read them itself.
fn view_settings(
    input: &InputArgs,
    display: &DisplayArgs,
    watch: bool,
    watch_dir: Option<PathBuf>,
) -> ui::ViewSettings {
    ui::ViewSettings {
        transforms: input.transforms().map_err(|e| format!("{e:#}")),
        load: input.load_options(),
        verbose: input.verbose,
        color: display.color.into(),
        flame: display.flame,
        mouse: !display.no_mouse,
        watch,
        watch_dir,
        time: input.time.selection(),
        marks: input.time.marks().map_err(|e| format!("{e:#}")),
        exclude_marks: input.time.exclude_marks,
        context: input.time.context.clone(),
        align_ns: input.time.align_ns().map_err(|e| format!("{e:#}")),
        source: crate::output::listing::SourceOptions {
            source_paths: display.source_path.clone(),
            trim_paths: display.trim_path.clone(),
        },
    }
}

#[derive(Debug, Args)]
pub struct TopArgs {
    /// The profile to read; - reads stdin.
    #[arg(value_name = "PROFILE")]
    pub profile: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// Column to sort by, largest first.
    #[arg(long, value_enum, default_value_t = TopSort::SelfWeight)]
    pub sort: TopSort,
    /// Print at most N functions (all by default).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TopFormat::Text)]
    pub format: TopFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TopSort {
    #[value(name = "self")]
    SelfWeight,
    Total,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TopFormat {
    Text,
    Json,
}

/// What a PROFILE argument had to become to be read, kept for as long as
/// the command runs (the temporary files go with it).
enum Kept {
    Bundle(#[allow(dead_code)] crate::sources::bundle::Bundle),
    File(#[allow(dead_code)] crate::sources::Prepared),
}

/// A capture bundle named as PROFILE becomes its profile, its logs as
/// `--context` and its clock anchor; a perf.data becomes `perf script`'s text
/// and a URL the profile it answers with (see [`crate::sources`]). `path` is
/// then the file to read.
fn open_input(path: &mut PathBuf, input: &mut InputArgs) -> Result<Option<Kept>> {
    if crate::sources::bundle::is_bundle(path) {
        let b = crate::sources::bundle::open(path)?;
        *path = b.profile.clone();
        input.time.context.extend(b.contexts.iter().cloned());
        input.time.anchor_ns = Some(b.anchor_ns);
        return Ok(Some(Kept::Bundle(b)));
    }
    let extra = input.perf_script_args();
    match crate::sources::prepare(path, &input.fetch_options(), &extra)? {
        Some(p) => {
            *path = p.path.clone();
            Ok(Some(Kept::File(p)))
        }
        None => Ok(None),
    }
}

/// [`open_input`] for both sides of a comparison.
fn open_inputs(
    before: &mut PathBuf,
    after: &mut PathBuf,
    input: &mut InputArgs,
) -> Result<Vec<Kept>> {
    let mut kept = Vec::new();
    kept.extend(open_input(before, input)?);
    kept.extend(open_input(after, input)?);
    Ok(kept)
}

/// Refuses an output that is one of the inputs before any input is turned
/// into a temporary file (after that the paths name the copies).
fn refuse_outputs_over_inputs(command: &Option<Command>) -> Result<()> {
    match command {
        Some(Command::Convert(a)) => match &a.output {
            Some(out) => refuse_input(out, &a.profile),
            None => Ok(()),
        },
        Some(Command::Diff(a)) => match &a.output {
            Some(out) => {
                refuse_input(out, &a.before)?;
                refuse_input(out, &a.after)
            }
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Runs the parsed command line.
pub fn run(mut cli: Cli) -> Result<ExitCode> {
    refuse_outputs_over_inputs(&cli.command)?;
    let _kept: Vec<Kept> = match &mut cli.command {
        Some(Command::Top(a)) => open_input(&mut a.profile, &mut a.input)?
            .into_iter()
            .collect(),
        Some(Command::Info(a)) => open_input(&mut a.profile, &mut a.input)?
            .into_iter()
            .collect(),
        Some(Command::Lint(a)) => match open_input(&mut a.profile, &mut a.input) {
            Ok(b) => b.into_iter().collect(),
            Err(e) => {
                eprintln!("ember lint: {e:#}");
                return Ok(ExitCode::from(2));
            }
        },
        Some(Command::Convert(a)) => open_input(&mut a.profile, &mut a.input)?
            .into_iter()
            .collect(),
        Some(Command::List(a)) => open_input(&mut a.profile, &mut a.input)?
            .into_iter()
            .collect(),
        Some(Command::Report(a)) => open_input(&mut a.profile, &mut a.input)?
            .into_iter()
            .collect(),
        Some(Command::Diff(a)) => open_inputs(&mut a.before, &mut a.after, &mut a.compare.input)?,
        Some(Command::Check(a)) => {
            match open_inputs(&mut a.base, &mut a.new, &mut a.compare.input) {
                Ok(k) => k,
                Err(e) => {
                    eprintln!("ember check: {e:#}");
                    return Ok(ExitCode::from(2));
                }
            }
        }
        None => match &mut cli.view.profile {
            Some(p) => {
                let kept = open_input(p, &mut cli.view.input)?;
                // A fetched profile or perf script's text never changes.
                if matches!(kept, Some(Kept::File(_))) {
                    cli.view.no_watch = true;
                }
                kept.into_iter().collect()
            }
            None => Vec::new(),
        },
        Some(Command::Capture(_)) => Vec::new(),
    };
    match cli.command {
        Some(Command::Top(args)) => run_top(&args),
        Some(Command::Info(args)) => run_info(&args),
        Some(Command::Lint(args)) => run_lint(&args),
        Some(Command::List(mut args)) => list::run_list(&mut args),
        Some(Command::Convert(args)) => run_convert(&args),
        Some(Command::Report(args)) => run_report(&args),
        Some(Command::Diff(args)) => run_diff(&args),
        Some(Command::Check(args)) => Ok(run_check(&args)),
        Some(Command::Capture(args)) => {
            crate::capture::run(&args).map(|code| ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
        None => {
            if let Some(dir) = &cli.view.watch_dir {
                if !dir.is_dir() {
                    anyhow::bail!("--watch-dir {}: not a directory", dir.display());
                }
                return ui::run(Source::Path(dir.clone()), &cli.view.settings());
            }
            let Some(path) = cli.view.profile.clone() else {
                use clap::CommandFactory;
                Cli::command()
                    .error(
                        clap::error::ErrorKind::MissingRequiredArgument,
                        "no PROFILE given (a file, or - for stdin)",
                    )
                    .exit();
            };
            ui::run(Source::from_arg(&path), &cli.view.settings())
        }
    }
}

/// Loads a profile for a batch command and builds its tree for the chosen value.
fn load_for_batch(
    path: &std::path::Path,
    input: &InputArgs,
) -> Result<(Source, Profile, CallTree)> {
    let source = Source::from_arg(path);
    let (transforms, _) = input.transforms()?;
    let profile = formats::load(&source, &input.load_options(), &Progress::new())?;
    report_warnings(&profile, &source, input.verbose);
    let profile = model::timerange::cut(profile, &input.time.selection_with_marks()?)
        .with_context(|| format!("{}: --from/--until/--exclude", source.display()))?;
    let profile = if transforms.is_empty() {
        profile
    } else {
        model::apply_all(&profile, &transforms)?
    };
    let tree = CallTree::build(
        &profile,
        TreeOptions {
            value: profile.default_value,
            ..TreeOptions::default()
        },
    );
    Ok((source, profile, tree))
}

/// A context log read for a batch command, or why it could not be.
fn context_for_batch(
    path: &std::path::Path,
) -> std::result::Result<crate::context::ContextSource, String> {
    crate::context::load(path).map_err(|e| e.to_string())
}

/// Maps a closed stdout to success, as `| head` expects.
fn finish_output(written: io::Result<()>) -> Result<ExitCode> {
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.into()),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}

/// An error when `out` is the input `profile` (ember never writes over what it reads).
fn refuse_input(out: &std::path::Path, profile: &std::path::Path) -> Result<()> {
    if let Source::Path(input) = Source::from_arg(profile)
        && let (Ok(a), Ok(b)) = (std::fs::canonicalize(out), std::fs::canonicalize(&input))
        && a == b
    {
        anyhow::bail!("{}: refusing to overwrite the input file", out.display());
    }
    Ok(())
}

/// Whether `e` is a usage error ([`crate::error::Usage`], or a time range that is backwards
/// or unreadable): exit status 2 rather than 1.
pub fn is_usage(e: &anyhow::Error) -> bool {
    use crate::model::timerange::RangeError;
    e.chain().any(|c| {
        c.is::<crate::error::Usage>()
            || matches!(
                c.downcast_ref::<RangeError>(),
                Some(RangeError::Backwards { .. } | RangeError::BadTime { .. })
            )
    })
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}
