//! `ember lint`: the warnings a profile earns before anyone draws a conclusion
//! from it, as text or JSON; exit 1 when one fires, for CI.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::InputArgs;
use crate::host::sanitize::sanitize;
use crate::model::Profile;
use crate::model::lint::{Finding, LintKind, base_format, lint};

#[derive(Debug, Args)]
pub struct LintArgs {
    /// The profile to read; - reads stdin.
    #[arg(value_name = "PROFILE")]
    pub profile: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = LintFormat::Text)]
    pub format: LintFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    Text,
    Json,
}

/// Exit 0 without warnings, 1 with, 2 when the profile cannot be read.
pub fn run_lint(args: &LintArgs) -> Result<ExitCode> {
    let (source, profile, tree) = match super::load_for_batch(&args.profile, &args.input) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("ember lint: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut findings = lint(&profile, &tree);
    findings.extend(host_findings(&args.input, &profile, &tree));
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let name = source.display();
    let written = match args.format {
        LintFormat::Text => text(&mut out, &findings),
        LintFormat::Json => json(&mut out, &name, base_format(&profile.format), &findings),
    }
    .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            eprintln!("ember lint: {e}");
            Ok(ExitCode::from(2))
        }
        _ if findings.is_empty() => Ok(ExitCode::SUCCESS),
        _ => Ok(ExitCode::from(1)),
    }
}

/// `warning[code]: saw` and `  help: advice` per finding, then a summary.
pub fn text(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    for f in findings {
        writeln!(out, "warning[{}]: {}", f.kind.code(), sanitize(&f.saw))?;
        writeln!(out, "  help: {}", sanitize(&f.advice))?;
    }
    match findings.len() {
        0 => writeln!(out, "no warnings"),
        1 => writeln!(out, "1 warning"),
        n => writeln!(out, "{n} warnings"),
    }
}

/// `{"file", "format", "findings": [{"code", "saw", "advice"}]}`, keys in
/// that order.
pub fn json(out: &mut dyn Write, file: &str, format: &str, findings: &[Finding]) -> io::Result<()> {
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        file: &'a str,
        format: &'a str,
        findings: Vec<Item<'a>>,
    }
    #[derive(serde::Serialize)]
    struct Item<'a> {
        code: &'a str,
        saw: &'a str,
        advice: &'a str,
    }
    let doc = Doc {
        file,
        format,
        findings: findings
            .iter()
            .map(|f| Item {
                code: f.kind.code(),
                saw: &f.saw,
                advice: &f.advice,
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// The host flags of the `--context` logs over the profile's window, the
/// ones `ember info --context` and the timeline show, as findings with the
/// flags' codes (the window's few-samples flag is lint's own `few-samples`).
/// A log that cannot be read or lined up is said on stderr.
fn host_findings(
    input: &InputArgs,
    profile: &Profile,
    tree: &crate::model::CallTree,
) -> Vec<Finding> {
    use crate::timeline::flags::flags;
    let Some((lo, hi)) = crate::timeline::profile_window(profile) else {
        if !input.time.context.is_empty() {
            eprintln!("ember lint: --context: the profile has no time to line the logs up with");
        }
        return Vec::new();
    };
    let nudge = input.time.align_ns().unwrap_or(0);
    let mut aligned = Vec::new();
    for path in &input.time.context {
        let said = sanitize(&path.display().to_string()).into_owned();
        match crate::context::load(path) {
            Ok(log) => {
                match crate::timeline::align_anchored(log, profile, nudge, input.time.anchor_ns) {
                    Ok(a) => aligned.push(a),
                    Err(e) => eprintln!("ember lint: {said}: not aligned: {}", sanitize(&e)),
                }
            }
            Err(e) => eprintln!("ember lint: {said}: {}", sanitize(&e.to_string())),
        }
    }
    let samples = tree
        .samples(crate::model::NodeId::ROOT)
        .map_or(usize::MAX, |n| n.round() as usize);
    flags(&aligned, profile, lo as i64, hi as i64 + 1, samples)
        .into_iter()
        .filter(|f| f.code != "few-samples")
        .map(|f| Finding {
            kind: LintKind::Host(f.code),
            saw: f.saw,
            advice: f.advice,
        })
        .collect()
}

/// `ember info`'s lines: `lint:          <code>: <saw>` per finding, or
/// `lint:          no warnings`.
pub(super) fn info_lines(
    out: &mut dyn Write,
    profile: &Profile,
    tree: &crate::model::CallTree,
) -> io::Result<()> {
    let findings = lint(profile, tree);
    if findings.is_empty() {
        writeln!(out, "lint:          no warnings")?;
    }
    for f in &findings {
        writeln!(
            out,
            "lint:          {}: {}",
            f.kind.code(),
            sanitize(&f.saw)
        )?;
    }
    Ok(())
}
