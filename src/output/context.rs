//! `ember info --context`: each host-context log, its columns, span and
//! interval and how it lines up with the profile, then the flags.

use std::io::{self, Write};

use crate::context::ContextSource;
use crate::host::sanitize::sanitize;
use crate::model::Profile;
use crate::timeline::flags::{Severity, flags};
use crate::timeline::{AlignHow, Aligned, align_anchored, format_clock, profile_window};

/// Writes one block per log (read or refused) and the flags of the whole
/// profile window.
pub fn context_info(
    out: &mut dyn Write,
    profile: &Profile,
    samples: usize,
    logs: Vec<Result<ContextSource, String>>,
    nudge_ns: i64,
    anchor_ns: Option<i64>,
) -> io::Result<()> {
    let mut aligned: Vec<Aligned> = Vec::new();
    for log in logs {
        let log = match log {
            Ok(src) => src,
            Err(e) => {
                writeln!(out, "context:       {}", sanitize(&e))?;
                continue;
            }
        };
        let name = sanitize(&log.name).into_owned();
        let reports = log.reports().count();
        let interval = log
            .interval_ns()
            .map_or("?".into(), |i| format!("{:.3} s", i as f64 / 1e9));
        let wall = matches!(log.clock, crate::context::Clock::Wall { .. });
        // Arrival times are monotonic; the span reads best as wall time.
        let to_wall = match log.clock {
            crate::context::Clock::Monotonic {
                realtime_offset_ns,
                utc_offset_s,
            } => Some(realtime_offset_ns + i64::from(utc_offset_s) * 1_000_000_000),
            _ => None,
        };
        let span = log
            .span_ns()
            .map_or("no reports".into(), |(a, b)| match to_wall {
                Some(o) => format!(
                    "{} to {}",
                    format_clock(a + o, true),
                    format_clock(b + o, true)
                ),
                None => format!("{} to {}", format_clock(a, wall), format_clock(b, wall)),
            });
        writeln!(
            out,
            "context:       {name} ({}, {reports} reports every {interval}, {span})",
            log.kind.name()
        )?;
        let zone = match log.clock {
            crate::context::Clock::Wall {
                utc_offset_s: Some(z),
            } => format!(
                "wall clock, UTC{:+03}:{:02}",
                z / 3600,
                (z.abs() % 3600) / 60
            ),
            crate::context::Clock::Wall { utc_offset_s: None } => {
                "wall clock, zone not stated".into()
            }
            crate::context::Clock::Relative => "no timestamps".into(),
            crate::context::Clock::Monotonic {
                utc_offset_s: z, ..
            } => format!(
                "CLOCK_MONOTONIC arrival times from ember capture (local UTC{:+03}:{:02})",
                z / 3600,
                (z.abs() % 3600) / 60
            ),
        };
        let host = log
            .host
            .as_deref()
            .map(|h| format!(", host {}", sanitize(h)))
            .unwrap_or_default();
        let cpus = log
            .n_cpus
            .map(|n| format!(", {n} CPUs"))
            .unwrap_or_default();
        writeln!(out, "  clock:       {zone}{host}{cpus}")?;
        let mut columns: Vec<String> = Vec::new();
        for s in &log.series {
            let label = match &s.entity {
                crate::context::Entity::System => s.metric.label().to_string(),
                crate::context::Entity::Cpu(c) => format!("cpu{c} {}", s.metric.label()),
                crate::context::Entity::Device(d) => {
                    format!("{} {}", sanitize(d), s.metric.label())
                }
            };
            if !columns.contains(&label) {
                columns.push(label);
            }
        }
        writeln!(out, "  columns:     {}", columns.join(", "))?;
        if !log.warnings.is_empty() {
            let first = &log.warnings[0];
            writeln!(
                out,
                "  skipped:     {} lines (first: line {}: {})",
                log.warnings.len(),
                first.line,
                sanitize(&first.message)
            )?;
        }
        match align_anchored(log, profile, nudge_ns, anchor_ns) {
            Ok(a) => {
                let how = match a.how {
                    AlignHow::WallClock => "by wall clock",
                    AlignHow::Clock => {
                        "by clock, error < 10 ms (ember capture's CLOCK_MONOTONIC arrival times)"
                    }
                    AlignHow::StartTime => "by start time (no common clock; --align shifts it)",
                };
                let lo = profile_window(profile).map_or(0, |w| w.0 as i64);
                let starts = a.span().map_or(0, |s| s.0) - lo;
                writeln!(
                    out,
                    "  aligned:     {how}; the log starts {:+.3} s from the profile's first sample",
                    starts as f64 / 1e9
                )?;
                aligned.push(a);
            }
            Err(e) => writeln!(out, "  not aligned: {}", sanitize(&e))?,
        }
    }
    if aligned.is_empty() {
        return Ok(());
    }
    let Some((lo, hi)) = profile_window(profile) else {
        return Ok(());
    };
    let found = flags(&aligned, profile, lo as i64, hi as i64 + 1, samples);
    if found.is_empty() {
        writeln!(
            out,
            "host flags:    none (nothing sustained over the profile's window)"
        )?;
    }
    for f in found {
        let mark = match f.severity {
            Severity::Warn => "warn",
            Severity::Note => "note",
        };
        writeln!(out, "host flag:     [{mark}] {}", f.message())?;
    }
    Ok(())
}
