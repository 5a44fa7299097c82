//! Command-line definitions and one `run` per subcommand.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::formats::{self, Format, LoadOptions};
use crate::input::{Progress, Source};
use crate::model::{self, CallTree, Profile, Recipe, SortKey, TopTable, Transform, TreeOptions};
use crate::output;
use crate::output::report_warnings;
use crate::ui;
use crate::ui::theme::ColorChoice;

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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the per-function table (self and total weight) and exit.
    Top(TopArgs),
    /// Say what a profile is: format, sample types, totals, threads, time span.
    Info(InfoArgs),
    /// Write a profile in another format (normalised folded stacks).
    Convert(ConvertArgs),
    /// Compare two profiles: the diff view, or the delta table with --format.
    Diff(DiffArgs),
    /// A regression gate for CI: exit 1 when a function grew past its budget.
    Check(CheckArgs),
    /// Record host context (vmstat, iostat, mpstat) next to a profiler run into a bundle directory.
    Capture(crate::capture::CaptureArgs),
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The baseline profile; - reads stdin.
    #[arg(value_name = "BEFORE")]
    pub before: PathBuf,
    /// The profile to compare with it; - reads stdin.
    #[arg(value_name = "AFTER")]
    pub after: PathBuf,
    #[command(flatten)]
    pub compare: CompareArgs,
    /// Print the delta table instead of opening the viewer.
    #[arg(long, value_enum, conflicts_with = "to")]
    pub format: Option<TopFormat>,
    /// Write the comparison in this form instead of opening the viewer.
    #[arg(long, value_enum)]
    pub to: Option<DiffTo>,
    /// With --to folded: scale before's counts to after's total, as
    /// inferno-diff-folded --normalize does.
    #[arg(long, requires = "to")]
    pub normalize: bool,
    /// With --to: write here instead of stdout (never an input file).
    #[arg(long, short, value_name = "FILE", requires = "to")]
    pub output: Option<PathBuf>,
    /// Delta table order, largest change first.
    #[arg(long, value_enum, default_value_t = DiffSort::SelfDelta)]
    pub sort: DiffSort,
    /// Print at most N functions (all by default).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Viewer: follow the after file (or, with =before, the before file) as a
    /// profiler rewrites or appends to it, re-comparing each time; a stream on
    /// either side (`-`) is always followed. Off by default: it holds the other
    /// side and the reader's state as well (see BENCHMARKS.md).
    #[arg(long, value_enum, value_name = "SIDE", num_args = 0..=1, default_missing_value = "after")]
    pub watch: Option<WatchSide>,
    #[command(flatten)]
    pub display: DisplayArgs,
}

/// What `diff` and `check` share: how the inputs are read and compared.
#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// How the sides are made comparable: share of each side's total, raw values,
    /// per second of each profile, or before scaled to after's total.
    #[arg(long, value_enum, default_value_t = NormArg::Share)]
    pub norm: NormArg,
    /// Replace hex numbers in frame names (0x45ef2173) with 0x... on both sides,
    /// so addresses that moved between builds match.
    #[arg(long)]
    pub strip_hex: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NormArg {
    Share,
    Raw,
    PerSecond,
    Scaled,
}

impl NormArg {
    pub fn norm(self) -> model::diff::Norm {
        use model::diff::Norm;
        match self {
            NormArg::Share => Norm::Share,
            NormArg::Raw => Norm::Raw,
            NormArg::PerSecond => Norm::PerSecond,
            NormArg::Scaled => Norm::Scaled,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WatchSide {
    Before,
    After,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffTo {
    /// `a;b;c BEFORE AFTER` per stack, sorted (inferno-diff-folded's form).
    Folded,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffSort {
    /// Absolute change of self.
    #[value(name = "self")]
    SelfDelta,
    /// Absolute change of total.
    Total,
    /// Relative change of total (new and gone first).
    Relative,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The baseline profile.
    #[arg(value_name = "BASE")]
    pub base: PathBuf,
    /// The new profile; - reads stdin.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    #[command(flatten)]
    pub compare: CompareArgs,
    /// How much a function may grow: relative (10%) or in percentage points of
    /// the total (2pp). Default 10% unless the recipe holds budgets.
    #[arg(long, value_name = "THRESHOLD")]
    pub max_increase: Option<String>,
    /// Only gate functions matching REGEX (repeatable; all by default).
    #[arg(long, value_name = "REGEX")]
    pub function: Vec<String>,
    /// Gate on self (time in the function) or total (with its callees).
    #[arg(long, value_enum, default_value_t = MetricArg::SelfWeight)]
    pub metric: MetricArg,
    /// Ignore functions with fewer samples than this on both sides.
    #[arg(long, value_name = "N", default_value_t = 50.0)]
    pub min_samples: f64,
    /// Also fail on growth that is within sampling noise.
    #[arg(long)]
    pub include_noise: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetricArg {
    #[value(name = "self")]
    SelfWeight,
    Total,
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
    /// The output format.
    #[arg(long, value_enum, default_value_t = ConvertTo::Folded)]
    pub to: ConvertTo,
    /// Write here instead of stdout (never the input file).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConvertTo {
    /// `a;b;c SELF` per stack, sorted.
    Folded,
}

#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Read the input as this format instead of detecting it.
    #[arg(long, value_enum, value_name = "NAME")]
    pub input_format: Option<Format>,
    /// Show this sample type (pprof: cpu, alloc_space, ...; by name or index).
    #[arg(long, value_name = "TYPE", conflicts_with = "weight")]
    pub sample_type: Option<String>,
    /// perf script: weight stacks by sample count or by the event period.
    #[arg(long, value_enum)]
    pub weight: Option<Weight>,
    /// Put each sample's thread at the root of its stack.
    #[arg(long)]
    pub thread: bool,
    /// Keep only threads / sub-profiles (speedscope profiles, Gecko threads, perf
    /// comms) whose name matches REGEX.
    #[arg(long, value_name = "REGEX")]
    pub only_thread: Option<String>,
    /// Put each sample's process at the root of its stack.
    #[arg(long)]
    pub process: bool,
    /// Apply a recipe: a saved stack of transforms and a search (TOML).
    #[arg(long, value_name = "FILE")]
    pub recipe: Option<PathBuf>,
    /// Keep only stacks through a function matching REGEX, re-rooted at it.
    #[arg(long, value_name = "REGEX")]
    pub focus: Vec<String>,
    /// Drop stacks through a function matching REGEX.
    #[arg(long, value_name = "REGEX")]
    pub ignore: Vec<String>,
    /// Hide functions matching REGEX: their time goes to their callers.
    #[arg(long, value_name = "REGEX")]
    pub hide: Vec<String>,
    /// Collapse direct recursion (a;a;a;b becomes a;b).
    #[arg(long)]
    pub collapse_recursion: bool,
    /// Report every warning (bad lines skipped) on stderr.
    #[arg(long, short)]
    pub verbose: bool,
    #[command(flatten)]
    pub time: TimeArgs,
}

/// Which samples of the profile's time to keep, and the host's context.
#[derive(Debug, Args, Clone, Default)]
pub struct TimeArgs {
    /// Keep the samples from TIME on: seconds from the first sample (12.5,
    /// 1m30s, 250ms) or a wall-clock time (11:56:28, 2026-12-02T11:56:28Z).
    #[arg(long, value_name = "TIME")]
    pub from: Option<String>,
    /// Keep the samples before TIME (as for --from). Not `--to`: that names
    /// the output format of `convert` and `diff`.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Drop the samples in START-END (repeatable): 09:58-10:06, 12-15.5.
    #[arg(long, value_name = "RANGE")]
    pub exclude: Vec<String>,
    /// A host-context log captured during the profile (vmstat, iostat, sar,
    /// mpstat, dool; repeatable): drawn on the timeline, listed by `info`.
    #[arg(long = "context", value_name = "FILE")]
    pub context: Vec<PathBuf>,
    /// Shift the context logs by OFFSET (e.g. -1.5s) against the profile.
    #[arg(long, value_name = "OFFSET", allow_hyphen_values = true)]
    pub align: Option<String>,
    /// Marks to draw on the timeline: one `TIME label` or `START-END label`
    /// a line (deploys, restarts, incidents).
    #[arg(long, value_name = "FILE")]
    pub marks: Option<PathBuf>,
    /// Drop the samples inside every START-END mark of --marks.
    #[arg(long, requires = "marks")]
    pub exclude_marks: bool,
    /// A capture bundle's clock anchor (set when PROFILE is one).
    #[arg(skip)]
    pub anchor_ns: Option<i64>,
}

impl TimeArgs {
    /// The --marks file, read (none without the flag).
    pub fn marks(&self) -> Result<Vec<model::timerange::Mark>> {
        let Some(path) = &self.marks else {
            return Ok(Vec::new());
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--marks {}: cannot read", path.display()))?;
        model::timerange::parse_marks(&text, &path.display().to_string())
            .map_err(anyhow::Error::msg)
    }

    /// The selection with the range marks excluded when --exclude-marks says so.
    pub fn selection_with_marks(&self) -> Result<model::timerange::TimeSelection> {
        let mut sel = self.selection();
        if self.exclude_marks {
            sel.exclude.extend(
                self.marks()?
                    .into_iter()
                    .filter(|m| m.range)
                    .map(|m| m.time),
            );
        }
        Ok(sel)
    }

    pub fn selection(&self) -> model::timerange::TimeSelection {
        model::timerange::TimeSelection {
            from: self.from.clone(),
            to: self.until.clone(),
            exclude: self.exclude.clone(),
            anchor_ns: self.anchor_ns,
        }
    }

    /// `--align` in nanoseconds.
    pub fn align_ns(&self) -> Result<i64> {
        match &self.align {
            None => Ok(0),
            Some(a) => model::timerange::parse_offset(a).ok_or_else(|| {
                anyhow::anyhow!("--align {a:?}: expected an offset like -1.5s, 250ms")
            }),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Weight {
    Samples,
    Period,
}

impl InputArgs {
    /// The recipe's transforms, then the flags' (focus, ignore, hide, collapse), and
    /// the recipe's search.
    pub fn transforms(&self) -> Result<(Vec<Transform>, Option<String>)> {
        let mut out = Vec::new();
        let mut search = None;
        if let Some(path) = &self.recipe {
            let r = Recipe::load(path)?;
            out.extend(r.transforms);
            search = r.search;
        }
        out.extend(
            self.focus
                .iter()
                .map(|p| Transform::Focus { pattern: p.clone() }),
        );
        out.extend(
            self.ignore
                .iter()
                .map(|p| Transform::Drop { pattern: p.clone() }),
        );
        out.extend(
            self.hide
                .iter()
                .map(|p| Transform::Merge { pattern: p.clone() }),
        );
        if self.collapse_recursion {
            out.push(Transform::CollapseRecursion { indirect: false });
        }
        for t in &out {
            t.check()?;
        }
        Ok((out, search))
    }

    pub fn load_options(&self) -> LoadOptions {
        let weight = self.weight.map(|w| match w {
            Weight::Samples => "samples".to_string(),
            Weight::Period => "period".to_string(),
        });
        LoadOptions {
            format: self.input_format,
            sample_type: self.sample_type.clone().or(weight),
            only_thread: self.only_thread.clone(),
            process_roots: self.process,
            thread_roots: self.thread,
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

/// A capture bundle named as PROFILE becomes its profile, its logs as
/// `--context` and its clock anchor; the bundle is kept (and its temporary
/// perf script text) for as long as the command runs.
fn open_bundle(path: &mut PathBuf, input: &mut InputArgs) -> Result<Option<crate::bundle::Bundle>> {
    if !crate::bundle::is_bundle(path) {
        return Ok(None);
    }
    let b = crate::bundle::open(path)?;
    *path = b.profile.clone();
    input.time.context.extend(b.contexts.iter().cloned());
    input.time.anchor_ns = Some(b.anchor_ns);
    Ok(Some(b))
}

/// Runs the parsed command line.
pub fn run(mut cli: Cli) -> Result<ExitCode> {
    let _bundle = match &mut cli.command {
        Some(Command::Top(a)) => open_bundle(&mut a.profile, &mut a.input)?,
        Some(Command::Info(a)) => open_bundle(&mut a.profile, &mut a.input)?,
        Some(Command::Convert(a)) => open_bundle(&mut a.profile, &mut a.input)?,
        None => match &mut cli.view.profile {
            Some(p) => open_bundle(p, &mut cli.view.input)?,
            None => None,
        },
        Some(_) => None,
    };
    match cli.command {
        Some(Command::Top(args)) => run_top(&args),
        Some(Command::Info(args)) => run_info(&args),
        Some(Command::Convert(args)) => run_convert(&args),
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

fn run_info(args: &InfoArgs) -> Result<ExitCode> {
    let (source, profile, tree) = load_for_batch(&args.profile, &args.input)?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let logs: Vec<_> = args
        .input
        .time
        .context
        .iter()
        .map(|p| context_for_batch(p))
        .collect();
    let nudge = args.input.time.align_ns()?;
    let samples = tree
        .samples(model::NodeId::ROOT)
        .map_or(profile.samples.len(), |s| s as usize);
    let written = output::info(&mut out, &profile, &tree, &source.display())
        .and_then(|()| {
            let anchor = args.input.time.anchor_ns;
            output::context_info(&mut out, &profile, samples, logs, nudge, anchor)
        })
        .and_then(|()| out.flush());
    finish_output(written)
}

fn run_convert(args: &ConvertArgs) -> Result<ExitCode> {
    if let (Some(out), Source::Path(input)) = (&args.output, Source::from_arg(&args.profile)) {
        let same = match (std::fs::canonicalize(out), std::fs::canonicalize(&input)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if same {
            anyhow::bail!("{}: refusing to overwrite the input file", out.display());
        }
    }
    let (_, profile, tree) = load_for_batch(&args.profile, &args.input)?;
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("{}: cannot create", path.display()))?;
            let mut out = io::BufWriter::new(file);
            output::folded(&mut out, &profile, &tree)
                .and_then(|()| out.flush())
                .with_context(|| format!("{}: cannot write", path.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let stdout = io::stdout();
            let mut out = io::BufWriter::new(stdout.lock());
            let written = output::folded(&mut out, &profile, &tree).and_then(|()| out.flush());
            finish_output(written)
        }
    }
}

fn run_top(args: &TopArgs) -> Result<ExitCode> {
    let (_, profile, tree) = load_for_batch(&args.profile, &args.input)?;
    let mut table = TopTable::build(&profile, &tree);
    let key = match args.sort {
        TopSort::SelfWeight => SortKey::SelfWeight,
        TopSort::Total => SortKey::Total,
    };
    table.sort(&profile, key, true);
    let vt = &profile.value_types[tree.options.value];
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let written = match args.format {
        TopFormat::Text => output::top_text(&mut out, &profile, &table, vt, args.limit),
        TopFormat::Json => output::top_json(&mut out, &profile, &table, vt, args.limit),
    }
    .and_then(|()| out.flush());
    finish_output(written)
}

/// Refuses an output path that is one of the inputs.
fn refuse_overwrite(out: &std::path::Path, inputs: &[&std::path::Path]) -> Result<()> {
    for input in inputs {
        if let Source::Path(p) = Source::from_arg(input)
            && let (Ok(a), Ok(b)) = (std::fs::canonicalize(out), std::fs::canonicalize(&p))
            && a == b
        {
            anyhow::bail!("{}: refusing to overwrite an input file", out.display());
        }
    }
    Ok(())
}

/// Loads both sides in parallel, merges them and applies the transforms to the
/// comparison (so they act on both sides alike).
pub fn load_diff_for_batch(
    before: &std::path::Path,
    after: &std::path::Path,
    args: &CompareArgs,
) -> Result<Profile> {
    let (transforms, _) = args.input.transforms()?;
    if !args.input.time.context.is_empty() || args.input.time.marks.is_some() {
        anyhow::bail!(
            "--context and --marks go with one profile: open each side with them, or compare two time ranges of one profile (C on its timeline)"
        );
    }
    if !args.input.time.selection().is_empty() {
        anyhow::bail!(
            "--from/--until/--exclude cut one profile; cut each side first (ember convert --from ... --until ...)"
        );
    }
    let sources = [Source::from_arg(before), Source::from_arg(after)];
    if matches!(sources, [Source::Stdin, Source::Stdin]) {
        anyhow::bail!("only one side can be - (stdin)");
    }
    let profile = formats::load_diff(
        [&sources[0], &sources[1]],
        &args.input.load_options(),
        args.strip_hex,
        &Progress::several(),
    )?;
    report_warnings(
        &profile,
        &Source::Path(PathBuf::from(format!(
            "{} vs {}",
            sources[0].display(),
            sources[1].display()
        ))),
        args.input.verbose,
    );
    Ok(if transforms.is_empty() {
        profile
    } else {
        model::apply_all(&profile, &transforms)?
    })
}

/// The delta table of `profile` sorted by `sort`, and its comparison.
fn delta_table(
    profile: &Profile,
    norm: model::diff::Norm,
) -> Result<(model::diff::DeltaTable, model::diff::Compare)> {
    let table = model::diff::DeltaTable::build(profile, None)
        .ok_or_else(|| anyhow::anyhow!("not a comparison"))?;
    let cmp = table
        .compare(profile, norm)
        .map_err(|e| anyhow::anyhow!("--norm {}: {e}", norm.name()))?;
    Ok((table, cmp))
}

fn run_diff(args: &DiffArgs) -> Result<ExitCode> {
    if args.format.is_none() && args.to.is_none() {
        let view = view_settings(
            &args.compare.input,
            &args.display,
            args.watch.is_some(),
            None,
        );
        return ui::run_diff(
            [
                Source::from_arg(&args.before),
                Source::from_arg(&args.after),
            ],
            &view,
            ui::DiffStart {
                strip_hex: args.compare.strip_hex,
                norm: args.compare.norm.norm(),
                watch_side: usize::from(args.watch != Some(WatchSide::Before)),
            },
        );
    }
    if let Some(out) = &args.output {
        refuse_overwrite(out, &[&args.before, &args.after])?;
    }
    let profile = load_diff_for_batch(&args.before, &args.after, &args.compare)?;
    let stdout = io::stdout();
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(io::BufWriter::new(
            std::fs::File::create(path)
                .with_context(|| format!("{}: cannot create", path.display()))?,
        )),
        None => Box::new(io::BufWriter::new(stdout.lock())),
    };
    let written = match (args.to, args.format) {
        (Some(DiffTo::Folded), _) => output::diff::two_count_folded(
            &mut out,
            &profile,
            args.normalize || args.compare.norm == NormArg::Scaled,
        ),
        (None, format) => {
            let (mut table, cmp) = delta_table(&profile, args.compare.norm.norm())?;
            let key = match args.sort {
                DiffSort::SelfDelta => model::diff::DeltaSort::SelfDelta,
                DiffSort::Total => model::diff::DeltaSort::TotalDelta,
                DiffSort::Relative => model::diff::DeltaSort::Relative,
            };
            table.sort(&profile, &cmp, key);
            match format {
                Some(TopFormat::Json) => {
                    output::diff::delta_table_json(&mut out, &profile, &table, &cmp, args.limit)
                }
                _ => output::diff::delta_table_text(&mut out, &profile, &table, &cmp, args.limit),
            }
        }
    }
    .and_then(|()| out.flush());
    if args.output.is_some() {
        written.context("cannot write the output")?;
        return Ok(ExitCode::SUCCESS);
    }
    finish_output(written)
}

/// `ember check`: 0 nothing grew past its budget, 1 something did, 2 bad usage
/// or an unreadable input.
fn run_check(args: &CheckArgs) -> ExitCode {
    match check(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("ember check: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn check(args: &CheckArgs) -> Result<bool> {
    use model::diff::{Gate, GateOptions, Metric, Norm};
    let metric = match args.metric {
        MetricArg::SelfWeight => Metric::SelfWeight,
        MetricArg::Total => Metric::Total,
    };
    let mut gates = Vec::new();
    if let Some(path) = &args.compare.input.recipe {
        for (i, b) in Recipe::load(path)?.budgets.iter().enumerate() {
            gates.push(
                b.gate()
                    .map_err(|e| anyhow::anyhow!("{}: budget {}: {e}", path.display(), i + 1))?,
            );
        }
    }
    if gates.is_empty() || args.max_increase.is_some() || !args.function.is_empty() {
        let threshold: model::diff::Threshold = args
            .max_increase
            .as_deref()
            .unwrap_or("10%")
            .parse()
            .map_err(|e: String| anyhow::anyhow!("--max-increase: {e}"))?;
        let patterns: Vec<Option<regex::Regex>> = if args.function.is_empty() {
            vec![None]
        } else {
            args.function
                .iter()
                .map(|p| {
                    regex::Regex::new(p)
                        .map(Some)
                        .map_err(|e| anyhow::anyhow!("--function {p:?}: {e}"))
                })
                .collect::<Result<_>>()?
        };
        gates.extend(patterns.into_iter().map(|pattern| Gate {
            pattern,
            threshold,
            metric,
        }));
    }
    let profile = load_diff_for_batch(&args.base, &args.new, &args.compare)?;
    let (table, cmp) = delta_table(&profile, args.compare.norm.norm())?;
    let share = table
        .compare(&profile, Norm::Share)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let offenders = model::diff::offenders(
        &profile,
        &table,
        &cmp,
        &share,
        &gates,
        &GateOptions {
            min_samples: args.min_samples,
            include_noise: args.include_noise,
        },
    );
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let _ = output::diff::offenders_text(&mut out, &profile, &offenders, &cmp, table.rows.len());
    Ok(offenders.is_empty())
}
