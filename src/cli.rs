//! Command-line definitions and one `run` per subcommand.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::formats::{self, Format, LoadOptions};
use crate::input::{Progress, Source};
use crate::model::{CallTree, Profile, SortKey, TopTable, TreeOptions};
use crate::output;
use crate::ui;

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
}

#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Read the input as this format instead of detecting it.
    #[arg(long, value_enum, value_name = "NAME")]
    pub input_format: Option<Format>,
    /// Report every warning (bad lines skipped) on stderr.
    #[arg(long, short)]
    pub verbose: bool,
}

impl InputArgs {
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            format: self.input_format,
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
    /// Colours: auto detects from COLORTERM/TERM and honours NO_COLOR.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Start in the flame orientation (root at the bottom) instead of icicle.
    #[arg(long)]
    pub flame: bool,
    /// Leave the mouse to the terminal (text selection) instead of capturing it.
    #[arg(long)]
    pub no_mouse: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Truecolor,
    #[value(name = "256")]
    C256,
    #[value(name = "16")]
    C16,
    Never,
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

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Some(Command::Top(args)) => run_top(&args),
        None => {
            let Some(path) = cli.view.profile.clone() else {
                use clap::CommandFactory;
                Cli::command()
                    .error(
                        clap::error::ErrorKind::MissingRequiredArgument,
                        "no PROFILE given (a file, or - for stdin)",
                    )
                    .exit();
            };
            ui::run(Source::from_arg(&path), &cli.view)
        }
    }
}

/// Prints warnings as `--verbose` asks, or a one-line count otherwise.
pub fn report_warnings(profile: &Profile, source: &Source, verbose: bool) {
    let w = &profile.warnings;
    if w.is_empty() {
        return;
    }
    let mut err = io::stderr().lock();
    if verbose {
        for warning in &w.first {
            let _ = writeln!(
                err,
                "ember: {}:{}: {}",
                source.display(),
                warning.line,
                warning.message
            );
        }
        if w.count > w.first.len() as u64 {
            let _ = writeln!(err, "ember: … and {} more", w.count - w.first.len() as u64);
        }
    } else {
        let _ = writeln!(
            err,
            "ember: {}: {} (--verbose lists them)",
            source.display(),
            w.summary()
        );
    }
}

fn run_top(args: &TopArgs) -> Result<ExitCode> {
    let source = Source::from_arg(&args.profile);
    let profile = formats::load(&source, &args.input.load_options(), &Progress::new())?;
    report_warnings(&profile, &source, args.input.verbose);
    let tree = CallTree::build(
        &profile,
        TreeOptions {
            value: profile.default_value,
            ..TreeOptions::default()
        },
    );
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
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.into()),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}
