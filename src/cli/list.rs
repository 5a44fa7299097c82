//! `ember list REGEX PROFILE`: the per-line cost of the functions REGEX
//! names, beside their source, as `go tool pprof -list` prints it (text) or
//! as JSON. The profile is read at line granularity whatever `--granularity`
//! says.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::InputArgs;
use crate::model::granularity::Granularity;
use crate::model::listing::routines;
use crate::output::listing::{SourceOptions, find_source, json, text};

#[derive(Debug, Args)]
pub struct ListArgs {
    /// A regular expression; every function whose name it matches is listed.
    #[arg(value_name = "REGEX")]
    pub pattern: String,
    /// The profile to read; - reads stdin.
    #[arg(value_name = "PROFILE")]
    pub profile: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// A directory to look for source files in (again for more), as pprof's -source_path.
    #[arg(long, value_name = "DIR")]
    pub source_path: Vec<PathBuf>,
    /// A prefix to take off recorded paths before looking under --source-path (again for more).
    #[arg(long, value_name = "PREFIX")]
    pub trim_path: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub format: ListFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Text,
    Json,
}

/// Exit 0 with a listing, 1 when no function matches.
pub fn run_list(args: &mut ListArgs) -> Result<ExitCode> {
    let pattern = regex::Regex::new(&args.pattern)
        .map_err(|e| crate::error::Usage(format!("REGEX {}: {e}", args.pattern)))
        .context("ember list")?;
    args.input.granularity = Granularity::Line;
    let (source, profile, tree) = super::load_for_batch(&args.profile, &args.input)?;
    let found = routines(&profile, &tree, |name| pattern.is_match(name));
    if found.is_empty() {
        eprintln!(
            "ember list: no function of {} matches {}",
            source.display(),
            crate::host::sanitize::sanitize(&args.pattern)
        );
        return Ok(ExitCode::from(1));
    }
    let opts = SourceOptions {
        source_paths: args.source_path.clone(),
        trim_paths: args.trim_path.clone(),
    };
    let listed: Vec<_> = found
        .into_iter()
        .map(|r| {
            let src = find_source(r.file.as_deref().unwrap_or(""), &opts);
            (r, src)
        })
        .collect();
    let vt = &profile.value_types[tree.options.value];
    let total = tree.total(crate::model::NodeId::ROOT);
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let written = match args.format {
        ListFormat::Text => text(&mut out, &listed, total, vt),
        ListFormat::Json => json(&mut out, &listed, total, vt),
    }
    .and_then(|()| out.flush());
    super::finish_output(written)
}

/// `ember diff BEFORE AFTER --list REGEX`: per line, before and after under
/// the comparison's normalisation, the change and its verdict (the
/// differential view's test), beside the source.
pub fn run_diff_list(args: &super::compare::DiffArgs, pattern: &str) -> Result<ExitCode> {
    use crate::model::TreeOptions;
    use crate::model::diff::tree_compare;
    let re = regex::Regex::new(pattern)
        .map_err(|e| crate::error::Usage(format!("--list {pattern}: {e}")))
        .context("ember diff")?;
    let mut compare = args.compare.clone();
    compare.input.granularity = Granularity::Line;
    let profile = super::compare::load_diff_for_batch(&args.before, &args.after, &compare)?;
    let Some(meta) = profile.meta.diff.as_deref() else {
        anyhow::bail!("ember diff: not a comparison");
    };
    let after = crate::model::CallTree::build(
        &profile,
        TreeOptions {
            value: meta.sides[1].value,
            ..TreeOptions::default()
        },
    );
    let cmp = tree_compare(&profile, &after, args.compare.norm.norm())
        .context("ember diff: not a comparison")?
        .map_err(crate::error::Usage)?;
    let joined = crate::model::listing::paired_routines(&profile, |n| re.is_match(n));
    if joined.is_empty() {
        eprintln!(
            "ember diff: no function matches {}",
            crate::host::sanitize::sanitize(pattern)
        );
        return Ok(ExitCode::from(1));
    }
    let opts = SourceOptions {
        source_paths: args.display.source_path.clone(),
        trim_paths: args.display.trim_path.clone(),
    };
    let listed: Vec<_> = joined
        .into_iter()
        .map(|r| {
            let src = find_source(r.file.as_deref().unwrap_or(""), &opts);
            (r, src)
        })
        .collect();
    let unit = profile.value_types[meta.sides[1].value].unit.clone();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let json = matches!(args.format, Some(crate::cli::TopFormat::Json));
    let written = crate::output::listing::diff(&mut out, &listed, &cmp, &unit, json)
        .and_then(|()| out.flush());
    super::finish_output(written)
}
