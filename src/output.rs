//! Printers for the command line, generic over `io::Write`, and the warnings
//! report on stderr that the batch commands and the viewer share.

use std::io::{self, Write};

use serde::Serialize;

use crate::host::sanitize::sanitize;
use crate::model::{Profile, TopTable, ValueType};
use crate::sources::input::Source;

mod context;
pub mod diff;
pub mod export;
pub mod listing;
pub mod report;

pub use context::context_info;
pub use export::folded;

/// A stored integer value as text, honouring fractional decimals ("31.23").
pub fn value_text(v: i64, vt: &ValueType) -> String {
    if vt.decimals == 0 {
        return v.to_string();
    }
    let scale = 10i64.pow(u32::from(vt.decimals));
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    let (whole, frac) = (a / scale as u64, a % scale as u64);
    let frac = format!("{frac:0width$}", width = usize::from(vt.decimals));
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{frac}")
    }
}

/// `part` as a percentage of `whole` (0 when `whole` is 0).
pub fn percent(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The per-function table as aligned text.
pub fn top_text(
    out: &mut dyn Write,
    profile: &Profile,
    table: &TopTable,
    vt: &ValueType,
    limit: Option<usize>,
) -> io::Result<()> {
    let rows = &table.rows[..limit.unwrap_or(usize::MAX).min(table.rows.len())];
    let cells: Vec<[String; 2]> = rows
        .iter()
        .map(|r| [value_text(r.self_weight, vt), value_text(r.total, vt)])
        .collect();
    let w = cells
        .iter()
        .flat_map(|c| c.iter().map(String::len))
        .chain(["total".len(), vt.unit.name().len()])
        .max()
        .unwrap_or(5);
    let no_frames = if table.no_frames != 0 {
        format!(" ({} with no frames)", value_text(table.no_frames, vt))
    } else {
        String::new()
    };
    writeln!(
        out,
        "total: {} {} in {} functions{no_frames}",
        value_text(table.total, vt),
        vt.unit.name(),
        table.rows.len()
    )?;
    writeln!(
        out,
        "{:>w$} {:>7} {:>w$} {:>7}  name",
        "self", "self%", "total", "total%"
    )?;
    for (r, c) in rows.iter().zip(&cells) {
        writeln!(
            out,
            "{:>w$} {:>6.2}% {:>w$} {:>6.2}%  {}",
            c[0],
            percent(r.self_weight, table.total),
            c[1],
            percent(r.total, table.total),
            sanitize(&profile.frames.name(r.frame)),
        )?;
    }
    Ok(())
}

#[derive(Serialize)]
struct TopJson<'a> {
    unit: &'a str,
    total: serde_json::Number,
    /// Weight of samples with no frames, when there is any.
    #[serde(skip_serializing_if = "Option::is_none")]
    no_frames: Option<serde_json::Number>,
    functions: Vec<FunctionJson>,
}

#[derive(Serialize)]
struct FunctionJson {
    name: String,
    #[serde(rename = "self")]
    self_weight: serde_json::Number,
    total: serde_json::Number,
}

fn json_number(v: i64, vt: &ValueType) -> serde_json::Number {
    if vt.decimals == 0 {
        serde_json::Number::from(v)
    } else {
        serde_json::Number::from_f64(v as f64 / vt.scale()).unwrap_or_else(|| 0.into())
    }
}

/// The per-function table as one JSON object. Names are the profile's own (JSON
/// escapes control characters itself).
pub fn top_json(
    out: &mut dyn Write,
    profile: &Profile,
    table: &TopTable,
    vt: &ValueType,
    limit: Option<usize>,
) -> io::Result<()> {
    let rows = &table.rows[..limit.unwrap_or(usize::MAX).min(table.rows.len())];
    let doc = TopJson {
        unit: vt.unit.name(),
        total: json_number(table.total, vt),
        no_frames: (table.no_frames != 0).then(|| json_number(table.no_frames, vt)),
        functions: rows
            .iter()
            .map(|r| FunctionJson {
                name: profile.frames.name(r.frame).into_owned(),
                self_weight: json_number(r.self_weight, vt),
                total: json_number(r.total, vt),
            })
            .collect(),
    };
    serde_json::to_writer(&mut *out, &doc)?;
    writeln!(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_fractional_values_exactly() {
        let vt = ValueType {
            decimals: 3,
            ..ValueType::samples()
        };
        assert_eq!(value_text(31230, &vt), "31.23");
        assert_eq!(value_text(2000, &vt), "2");
        assert_eq!(value_text(-1500, &vt), "-1.5");
        assert_eq!(value_text(42, &ValueType::samples()), "42");
    }
}

/// A value with thousands separators: "17,728,380" or "1,234.5".
pub fn value_grouped(v: i64, vt: &ValueType) -> String {
    let text = value_text(v, vt);
    let (sign, rest) = match text.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", text.as_str()),
    };
    let (int, frac) = match rest.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (rest, None),
    };
    let mut out = String::with_capacity(text.len() + int.len() / 3);
    out.push_str(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

#[cfg(test)]
mod group_tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        let s = ValueType::samples();
        assert_eq!(value_grouped(17_728_380, &s), "17,728,380");
        assert_eq!(value_grouped(999, &s), "999");
        assert_eq!(value_grouped(-1000, &s), "-1,000");
        let d = ValueType {
            decimals: 1,
            ..ValueType::samples()
        };
        assert_eq!(value_grouped(123_455, &d), "12,345.5");
    }
}

/// A value in human form: "1.44 s", "12.3 MiB", "17,728,380 samples".
/// A weight as ember shows it on screen and in listings: counts grouped,
/// times and bytes in human form.
pub fn amount(v: i64, vt: &ValueType) -> String {
    match vt.unit {
        crate::model::Unit::Samples | crate::model::Unit::Count => value_grouped(v, vt),
        _ => human(v, vt),
    }
}

pub fn human(v: i64, vt: &ValueType) -> String {
    match &vt.unit {
        u if u.nanos().is_some() || *u == crate::model::Unit::Bytes => {
            human_real(v as f64 / vt.scale(), u)
        }
        u => format!("{} {}", value_grouped(v, vt), u.name()),
    }
}

/// A real (already scaled, maybe fractional) value in human form.
pub fn human_real(x: f64, unit: &crate::model::Unit) -> String {
    if let Some(ns_per) = unit.nanos() {
        let ns = x * ns_per;
        let a = ns.abs();
        let (div, unit) = if a >= 60e9 {
            (60e9, "min")
        } else if a >= 1e9 {
            (1e9, "s")
        } else if a >= 1e6 {
            (1e6, "ms")
        } else if a >= 1e3 {
            (1e3, "µs")
        } else {
            (1.0, "ns")
        };
        return format!("{} {unit}", short_float(ns / div));
    }
    if *unit == crate::model::Unit::Bytes {
        let a = x.abs();
        let units = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut i = 0;
        let mut d = 1.0;
        while i + 1 < units.len() && a >= d * 1024.0 {
            d *= 1024.0;
            i += 1;
        }
        return format!("{} {}", short_float(x / d), units[i]);
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!(
            "{} {}",
            value_grouped(x as i64, &ValueType::samples()),
            unit.name()
        )
    } else {
        format!("{} {}", short_float(x), unit.name())
    }
}

/// Three significant digits at most, no trailing zeros: 1.44, 12.3, 153.
fn short_float(x: f64) -> String {
    let a = x.abs();
    let decimals = if a >= 100.0 || a == 0.0 {
        0
    } else if a >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod human_tests {
    use super::*;
    use crate::model::Unit;

    #[test]
    fn prints_units_in_human_form() {
        let ns = ValueType::new("cpu", Unit::Nanoseconds);
        assert_eq!(human(1_440_000_000, &ns), "1.44 s");
        assert_eq!(human(12_500_000, &ns), "12.5 ms");
        assert_eq!(human(999, &ns), "999 ns");
        assert_eq!(human(90_000_000_000, &ns), "1.5 min");
        let b = ValueType::new("alloc_space", Unit::Bytes);
        assert_eq!(human(12_900_000, &b), "12.3 MiB");
        assert_eq!(human(512, &b), "512 B");
        assert_eq!(
            human(17_728_380, &ValueType::samples()),
            "17,728,380 samples"
        );
        let ms = ValueType::new("wall", Unit::Milliseconds);
        assert_eq!(human(2_500, &ms), "2.5 s");
    }
}

/// `ember info`: what the profile is.
pub fn info(
    out: &mut dyn Write,
    p: &Profile,
    tree: &crate::model::CallTree,
    path: &str,
) -> io::Result<()> {
    writeln!(out, "file:          {}", sanitize(path))?;
    writeln!(out, "format:        {}", p.format)?;
    writeln!(
        out,
        "records:       {} (samples or distinct stacks, as the format stores them)",
        value_grouped(p.samples.len() as i64, &ValueType::samples())
    )?;
    writeln!(out, "sample types:")?;
    for (i, vt) in p.value_types.iter().enumerate() {
        let mark = if i == tree.options.value {
            " (shown)"
        } else {
            ""
        };
        writeln!(
            out,
            "  {i}: {} [{}] total {}{mark}",
            sanitize(&vt.kind),
            vt.unit.name(),
            human(p.total(i), vt)
        )?;
    }
    writeln!(
        out,
        "frames:        {} distinct names, {} distinct stacks",
        p.frames.len(),
        p.stacks.len()
    )?;
    if !p.threads.is_empty() {
        writeln!(out, "threads:       {}", p.threads.len())?;
        if let Some(col) = &p.samples.thread {
            // Samples, not records: a pprof record holds many samples (its
            // count value), a folded line many; without a count, the shown value.
            let stride = p.value_types.len().max(1);
            let value = p
                .value_types
                .iter()
                .position(crate::model::ValueType::counts_samples)
                .unwrap_or(p.default_value)
                .min(stride - 1);
            let mut sums = vec![0i64; p.threads.len()];
            let mut records = vec![0u64; p.threads.len()];
            for (i, &t) in col.iter().enumerate() {
                let v = p.samples.values.get(i * stride + value).copied();
                if let (Some(s), Some(r)) = (sums.get_mut(t as usize), records.get_mut(t as usize))
                {
                    *s = s.saturating_add(v.unwrap_or(0));
                    *r += 1;
                }
            }
            let counts = sums;
            let mut order: Vec<usize> = (0..counts.len()).collect();
            order.sort_by(|a, b| counts[*b].cmp(&counts[*a]));
            for &t in order.iter().take(10) {
                let th = &p.threads[t];
                let ids = match (th.pid, th.tid) {
                    (Some(pid), Some(tid)) => format!(" pid {pid} tid {tid}"),
                    (Some(pid), None) => format!(" pid {pid}"),
                    _ => String::new(),
                };
                let vt = &p.value_types[value];
                let amount = if vt.counts_samples() {
                    format!("{} samples", value_grouped(counts[t], vt))
                } else {
                    human(counts[t], vt)
                };
                let recs = match records[t] {
                    r if vt.counts_samples() && r as f64 == counts[t] as f64 / vt.scale() => {
                        String::new()
                    }
                    1 => " (1 record)".to_string(),
                    r => format!(
                        " ({} records)",
                        value_grouped(r as i64, &ValueType::samples())
                    ),
                };
                writeln!(out, "  {}{ids}: {amount}{recs}", sanitize(&th.name))?;
            }
            if order.len() > 10 {
                writeln!(out, "  … and {} more", order.len() - 10)?;
            }
        }
    }
    let ns = ValueType::new("time", crate::model::Unit::Nanoseconds);
    if let Some((Some(a), Some(b))) = p
        .samples
        .time
        .as_ref()
        .map(|t| (t.iter().min(), t.iter().max()))
    {
        writeln!(out, "sample times:  span {}", human((b - a) as i64, &ns))?;
    }
    if let Some(d) = p.meta.duration_ns {
        writeln!(out, "duration:      {}", human(d as i64, &ns))?;
    }
    if let Some(start) = p.meta.start_unix_ns {
        let zone = if p.meta.wall_is_local {
            "local time of the recording host"
        } else {
            "UTC"
        };
        writeln!(
            out,
            "started:       {} ({zone}; {start} ns since the Unix epoch)",
            crate::timeline::format_clock(start as i64, true)
        )?;
    }
    if let Some((period, vt)) = &p.meta.period {
        writeln!(
            out,
            "period:        {} ({})",
            human(*period, vt),
            sanitize(&vt.kind)
        )?;
    }
    for (k, v) in &p.meta.extra {
        writeln!(out, "{}: {}", sanitize(k), sanitize(v))?;
    }
    for n in &p.notes {
        writeln!(out, "note:          {}", sanitize(n))?;
    }
    if !p.warnings.is_empty() {
        writeln!(out, "warnings:      {}", p.warnings.summary())?;
    }
    Ok(())
}
