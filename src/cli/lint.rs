//! `ember lint`: the warnings a profile earns before anyone draws a conclusion
//! from it, as text or JSON; exit 1 when one fires, for CI.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::InputArgs;
use crate::context::{Entity, Metric};
use crate::model::Profile;
use crate::model::lint::{Finding, LintOptions, base_format, lint};
use crate::sanitize::sanitize;

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
    let opts = LintOptions {
        iowait_share: iowait_share(&args.input, &profile),
    };
    let findings = lint(&profile, &tree, &opts);
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

/// The host's mean iowait (0..1) over the profile's window, from the first
/// `--context` log that has it and lines up with the profile.
fn iowait_share(input: &InputArgs, profile: &Profile) -> Option<f64> {
    let (lo, hi) = crate::timeline::profile_window(profile)?;
    let nudge = input.time.align_ns().unwrap_or(0);
    input.time.context.iter().find_map(|path| {
        let log = crate::context::load(path).ok()?;
        let a = crate::timeline::align_anchored(log, profile, nudge, input.time.anchor_ns).ok()?;
        let series = a.source.series(Metric::CpuIowait, &Entity::System)?;
        let (mut sum, mut n) = (0.0, 0u32);
        for (i, iv) in a.source.reports() {
            let end = iv.end_ns + a.shift_ns;
            let start = end - iv.len_ns;
            match series.values.get(i) {
                Some(v) if v.is_finite() && end > lo as i64 && start <= hi as i64 => {
                    sum += f64::from(*v);
                    n += 1;
                }
                _ => {}
            }
        }
        (n > 0).then(|| sum / f64::from(n) / 100.0)
    })
}

/// `ember info`'s lines: `lint:          <code>: <saw>` per finding, or
/// `lint:          no warnings`.
pub(super) fn info_lines(
    out: &mut dyn Write,
    profile: &Profile,
    tree: &crate::model::CallTree,
) -> io::Result<()> {
    let findings = lint(profile, tree, &LintOptions::default());
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
