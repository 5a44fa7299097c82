//! `ember report`: the ticket-ready summary of a profile (markdown, text or
//! JSON), with the lint warnings it earns.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::InputArgs;
use crate::model::lint::lint;
use crate::model::{self, NodeId};
use crate::output::report::{Report, ReportInput, Style};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The profile to read; - reads stdin.
    #[arg(value_name = "PROFILE")]
    pub profile: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format [default: from -o's name (.md, .txt, .json), else markdown].
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Rows in each top table.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// The frame to report on, as its path from the root: `main;parse;lex`.
    #[arg(long, value_name = "PATH")]
    pub frame: Option<String>,
    /// Write here instead of stdout (never the input file).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Markdown,
    Text,
    Json,
}

pub fn run_report(args: &ReportArgs) -> Result<ExitCode> {
    if let Some(out) = &args.output {
        super::refuse_input(out, &args.profile)?;
    }
    let (source, profile, tree) = super::load_for_batch(&args.profile, &args.input)?;
    let selected = match &args.frame {
        None => None,
        Some(path) => {
            let ids: Option<Vec<_>> = path
                .split(';')
                .map(|n| profile.frames.get(n.as_bytes()))
                .collect();
            let found = ids.map(|ids| {
                let (n, depth) = tree.find_path(&profile, &ids);
                (depth == ids.len()).then_some(n)
            });
            match found.flatten() {
                Some(n) => Some(n),
                None => anyhow::bail!("--frame {path}: no such stack in the profile"),
            }
        }
    };
    let (transforms, _) = args.input.transforms()?;
    let findings = lint(&profile, &tree);
    let input = ReportInput {
        source: source.display(),
        view: transforms.iter().map(model::Transform::describe).collect(),
        selected: selected.filter(|&n| n != NodeId::ROOT),
        limit: args.limit,
        lint: &findings,
    };
    let report = Report::build(&profile, &tree, &input);
    let style = match (args.format, &args.output) {
        (Some(ReportFormat::Markdown), _) => Style::Markdown,
        (Some(ReportFormat::Text), _) => Style::Text,
        (Some(ReportFormat::Json), _) => Style::Json,
        (None, Some(path)) => Style::from_path(path),
        (None, None) => Style::Markdown,
    };
    let write = |out: &mut dyn Write| report.write(out, style);
    match &args.output {
        Some(path) => {
            let mut bytes = Vec::new();
            write(&mut bytes)?;
            std::fs::write(path, bytes)
                .map_err(|e| anyhow::anyhow!("{}: cannot write the report: {e}", path.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let stdout = io::stdout();
            let mut out = io::BufWriter::new(stdout.lock());
            super::finish_output(write(&mut out).and_then(|()| out.flush()))
        }
    }
}
