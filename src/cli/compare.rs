//! `ember diff` and `ember check`: their flags, loading both sides, the delta
//! table and the gate.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::{DisplayArgs, InputArgs, TopFormat, finish_output, view_settings};
use crate::model::{self, Profile, Recipe};
use crate::output::{self, report_warnings};
use crate::sources::input::{Progress, Source};
use crate::{formats, ui};

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
    /// Per source line instead of per function: the functions REGEX names,
    /// each line before and after with its change and verdict, beside the
    /// source (--source-path, --trim-path); text, or JSON with --format json.
    #[arg(long, value_name = "REGEX", conflicts_with = "to")]
    pub list: Option<String>,
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
        .map_err(|e| crate::error::Usage(format!("--norm {}: {e}", norm.name())))?;
    Ok((table, cmp))
}

pub(super) fn run_diff(args: &DiffArgs) -> Result<ExitCode> {
    // clap's `requires = "to"` does not hold against `--format` (which
    // conflicts with `--to`): say it here rather than ignore the flag.
    if args.normalize && args.to != Some(DiffTo::Folded) {
        return Err(crate::error::Usage(
            "--normalize applies to --to folded only; the table and the viewer take \
             --norm scaled"
                .into(),
        )
        .into());
    }
    if let Some(pattern) = &args.list {
        return super::list::run_diff_list(args, pattern);
    }
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
pub(super) fn run_check(args: &CheckArgs) -> ExitCode {
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
    let opts = GateOptions {
        min_samples: args.min_samples,
        include_noise: args.include_noise,
    };
    let offenders = model::diff::offenders(&profile, &table, &cmp, &share, &gates, &opts);
    let covered = model::diff::coverage(&profile, &table, &gates, &opts);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let _ = output::diff::offenders_text(
        &mut out,
        &profile,
        &offenders,
        &cmp,
        (covered, args.min_samples),
    );
    Ok(offenders.is_empty())
}
