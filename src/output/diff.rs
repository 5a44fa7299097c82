//! Printers for comparisons: the delta table (text, JSON), the two-count folded
//! form, a gate's offenders, and the phrases the viewer shares with them.

use std::io::{self, Write};

use serde::Serialize;

use super::{human_real, value_text};
use crate::host::sanitize::sanitize;
use crate::model::diff::{
    Change, Compare, Coverage, DeltaTable, DiffMeta, Norm, Offender, Verdict,
};
use crate::model::{Profile, StackId, Unit, ValueType};

/// A normalised value: "21.54%" of its side, "1.44 s", "12 ms/s".
pub fn norm_text(x: f64, norm: Norm, unit: &Unit) -> String {
    match norm {
        Norm::Share => format!("{:.2}%", x * 100.0),
        Norm::Raw | Norm::Scaled => human_real(x, unit),
        Norm::PerSecond => format!("{}/s", human_real(x, unit)),
    }
}

/// A signed difference: "+1.25pp" (shares), "-140 ms".
pub fn delta_text(d: f64, norm: Norm, unit: &Unit) -> String {
    let sign = if d > 0.0 {
        "+"
    } else if d < 0.0 {
        "-"
    } else {
        "±"
    };
    match norm {
        Norm::Share => format!("{sign}{:.2}pp", d.abs() * 100.0),
        _ => format!("{sign}{}", norm_text(d.abs(), norm, unit)),
    }
}

/// A change as (before, after, delta) text under `norm`.
pub fn change_cells(c: &Change, norm: Norm, unit: &Unit) -> [String; 3] {
    [
        norm_text(c.value[0], norm, unit),
        norm_text(c.value[1], norm, unit),
        delta_text(c.delta(), norm, unit),
    ]
}

/// "+12.3%", "new", "gone", "0%".
pub fn relative_text(c: &Change) -> String {
    if c.is_new() {
        return "new".into();
    }
    if c.is_gone() {
        return "gone".into();
    }
    match c.relative() {
        Some(0.0) => "0%".into(),
        Some(r) => format!("{:+.1}%", r * 100.0),
        None => "-".into(),
    }
}

/// The verdict, with a mark for a side resting on fewer than 50 samples.
pub fn verdict_text(c: &Change) -> String {
    if c.value == [0.0, 0.0] {
        return "-".into();
    }
    match c.verdict {
        Verdict::Few => format!(
            "too few samples ({:.0} -> {:.0})",
            c.samples[0], c.samples[1]
        ),
        v => v.name().to_string(),
    }
}

/// `total 1.44 s -> 1.30 s (share -10.0%, 21.1% -> 18.9% of all, significant)`: `[raw, share, active]` changes, the values in the profile's
/// units, the shares of each side, the relative change under `norm` (the
/// `active` one), named.
pub fn change_summary(
    label: &str,
    [raw, share, active]: [&Change; 3],
    norm: Norm,
    unit: &Unit,
) -> String {
    let values = match unit {
        // Counts say their unit once: "200 -> 300 samples".
        Unit::Samples | Unit::Count => {
            let b = human_real(raw.value[0], unit);
            let a = human_real(raw.value[1], unit);
            let b = b
                .strip_suffix(unit.name())
                .unwrap_or(&b)
                .trim_end()
                .to_string();
            format!("{b} -> {a}")
        }
        _ => format!(
            "{} -> {}",
            human_real(raw.value[0], unit),
            human_real(raw.value[1], unit)
        ),
    };
    let basis = match norm {
        Norm::Raw => "raw",
        Norm::Share => "share",
        Norm::PerSecond => "per second",
        Norm::Scaled => "scaled",
    };
    format!(
        "{label} {values} ({basis} {}, {:.1}% -> {:.1}% of all, {})",
        relative_text(active),
        share.value[0] * 100.0,
        share.value[1] * 100.0,
        verdict_text(share),
    )
}

/// The unit both sides are in.
pub fn diff_unit(profile: &Profile, meta: &DiffMeta) -> Unit {
    profile.value_types[meta.sides[0].value].unit.clone()
}

/// "before: a.folded (folded), 1,234 samples, 2.5 s" per side.
pub fn side_lines(meta: &DiffMeta, cmp: &Compare, vt: &ValueType) -> [String; 2] {
    [0, 1].map(|i| {
        let s = &meta.sides[i];
        let label = if i == 0 { "before" } else { "after " };
        let duration = s
            .duration_ns
            .map(|d| format!(", {}", human_real(d as f64, &Unit::Nanoseconds)))
            .unwrap_or_default();
        let total = human_real(cmp.totals[i] as f64 / vt.scale(), &vt.unit);
        let samples = if vt.counts_samples() {
            String::new()
        } else {
            format!(
                " in {} samples{}",
                super::value_grouped(cmp.sample_totals[i] as i64, &ValueType::samples()),
                if s.rows_counted { " (rows)" } else { "" }
            )
        };
        format!(
            "{label}: {} ({}, {}): {total}{samples}{duration}",
            sanitize(&s.name),
            s.format,
            s.kind
        )
    })
}

/// The delta table as aligned text, after a header naming both sides, the
/// normalisation and the test.
pub fn delta_table_text(
    out: &mut dyn Write,
    profile: &Profile,
    table: &DeltaTable,
    cmp: &Compare,
    limit: Option<usize>,
) -> io::Result<()> {
    let Some(meta) = profile.meta.diff.as_deref() else {
        return Ok(());
    };
    let vt = &profile.value_types[meta.sides[0].value];
    let unit = &vt.unit;
    for line in side_lines(meta, cmp, vt) {
        writeln!(out, "{line}")?;
    }
    writeln!(
        out,
        "normalised: {}; significant: |z| >= {} in a two-proportion test on sample counts, at least {} samples on one side",
        cmp.norm.label(),
        crate::model::diff::SIGNIFICANT_Z,
        crate::model::diff::MIN_SAMPLES
    )?;
    for c in &meta.cautions {
        writeln!(out, "caution: {c}")?;
    }
    let rows = &table.rows[..limit.unwrap_or(usize::MAX).min(table.rows.len())];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let s = cmp.change(r.self_w, r.self_samples);
            let t = cmp.change(r.total, r.total_samples);
            let mut cells = change_cells(&s, cmp.norm, unit).to_vec();
            cells.extend(change_cells(&t, cmp.norm, unit));
            cells.extend([relative_text(&t), verdict_text(&s)]);
            cells
        })
        .collect();
    let heads = [
        "self before",
        "self after",
        "Δself",
        "total before",
        "total after",
        "Δtotal",
        "Δtotal%",
        "self verdict",
    ];
    let mut widths = heads.map(|h| h.chars().count());
    for c in &cells {
        for (w, cell) in widths.iter_mut().zip(c) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let pad = |s: &str, w: usize, left: bool| {
        let n = w.saturating_sub(s.chars().count());
        if left {
            format!("{s}{}", " ".repeat(n))
        } else {
            format!("{}{s}", " ".repeat(n))
        }
    };
    let row_text = |c: &[String]| {
        c.iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (s, w))| pad(s, w, i == 7))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let heads: Vec<String> = heads.iter().map(|h| h.to_string()).collect();
    writeln!(out, "{}  name", row_text(&heads))?;
    for (r, c) in rows.iter().zip(&cells) {
        writeln!(
            out,
            "{}  {}",
            row_text(c),
            sanitize(&profile.frames.name(r.frame))
        )?;
    }
    Ok(())
}

#[derive(Serialize)]
struct SideJson<'a> {
    name: &'a str,
    format: &'a str,
    value_type: &'a str,
    unit: &'a str,
    total: f64,
    samples: f64,
    samples_are_rows: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_ns: Option<u64>,
}

#[derive(Serialize)]
struct ChangeJson {
    before: f64,
    after: f64,
    delta: f64,
    /// After / before - 1; null when before is 0.
    relative: Option<f64>,
    z: Option<f64>,
    verdict: &'static str,
    samples: [f64; 2],
    /// The values as recorded, in the unit.
    raw: [f64; 2],
}

#[derive(Serialize)]
struct RowJson {
    name: String,
    /// "both", "new" (after only) or "gone" (before only).
    status: &'static str,
    #[serde(rename = "self")]
    self_change: ChangeJson,
    total: ChangeJson,
}

#[derive(Serialize)]
struct DeltaJson<'a> {
    before: SideJson<'a>,
    after: SideJson<'a>,
    normalisation: &'static str,
    cautions: &'a [String],
    significance: SignificanceJson,
    functions: Vec<RowJson>,
}

#[derive(Serialize)]
struct SignificanceJson {
    test: &'static str,
    min_abs_z: f64,
    min_samples: f64,
}

/// The delta table as one JSON object; names are the profile's own.
pub fn delta_table_json(
    out: &mut dyn Write,
    profile: &Profile,
    table: &DeltaTable,
    cmp: &Compare,
    limit: Option<usize>,
) -> io::Result<()> {
    let Some(meta) = profile.meta.diff.as_deref() else {
        return Ok(());
    };
    let vt = &profile.value_types[meta.sides[0].value];
    let scale = vt.scale();
    let side = |i: usize| {
        let s = &meta.sides[i];
        SideJson {
            name: &s.name,
            format: &s.format,
            value_type: &s.kind,
            unit: vt.unit.name(),
            total: cmp.totals[i] as f64 / scale,
            samples: cmp.sample_totals[i],
            samples_are_rows: s.rows_counted,
            duration_ns: s.duration_ns,
        }
    };
    let change = |v: [i64; 2], n: [f64; 2]| {
        let c = cmp.change(v, n);
        ChangeJson {
            before: c.value[0],
            after: c.value[1],
            delta: c.delta(),
            relative: c.relative(),
            z: c.z.filter(|z| z.is_finite()),
            verdict: match c.verdict {
                Verdict::Significant => "significant",
                Verdict::Noise => "noise",
                Verdict::Few => "few",
            },
            samples: n,
            raw: [v[0] as f64 / scale, v[1] as f64 / scale],
        }
    };
    let rows = &table.rows[..limit.unwrap_or(usize::MAX).min(table.rows.len())];
    let doc = DeltaJson {
        before: side(0),
        after: side(1),
        normalisation: cmp.norm.name(),
        cautions: &meta.cautions,
        significance: SignificanceJson {
            test: "two-proportion z-test on sample counts",
            min_abs_z: crate::model::diff::SIGNIFICANT_Z,
            min_samples: crate::model::diff::MIN_SAMPLES,
        },
        functions: rows
            .iter()
            .map(|r| RowJson {
                name: profile.frames.name(r.frame).into_owned(),
                status: match (r.total[0] != 0, r.total[1] != 0) {
                    (false, true) => "new",
                    (true, false) => "gone",
                    _ => "both",
                },
                self_change: change(r.self_w, r.self_samples),
                total: change(r.total, r.total_samples),
            })
            .collect(),
    };
    serde_json::to_writer(&mut *out, &doc)?;
    writeln!(out)
}

/// The two-count folded form `a;b;c BEFORE AFTER`, one line per stack with self
/// weight on either side, sorted (what `inferno-diff-folded` writes, in a fixed
/// order). `normalize` scales before to after's total and truncates, as
/// `inferno-diff-folded --normalize` does.
pub fn two_count_folded(out: &mut dyn Write, profile: &Profile, normalize: bool) -> io::Result<()> {
    let Some(meta) = profile.meta.diff.as_deref() else {
        return Ok(());
    };
    let cols = [meta.sides[0].value, meta.sides[1].value];
    let stride = profile.value_types.len().max(1);
    let n = profile.stacks.len();
    let mut self_w = vec![[0i64; 2]; n];
    let mut totals = [0i64; 2];
    for i in 0..profile.samples.len() {
        let vals = &profile.samples.values[i * stride..(i + 1) * stride];
        for side in 0..2 {
            totals[side] += vals[cols[side]];
        }
        if let Some(s) = profile.samples.stack_of(i) {
            for side in 0..2 {
                self_w[s.0 as usize][side] += vals[cols[side]];
            }
        }
    }
    let vt = &profile.value_types[cols[0]];
    let scale = if normalize && totals[0] != 0 && totals[0] != totals[1] {
        Some(totals[1] as f64 / totals[0] as f64)
    } else {
        None
    };
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for (s, w) in self_w.iter().enumerate() {
        if w[0] == 0 && w[1] == 0 {
            continue;
        }
        let mut line = Vec::new();
        for (k, f) in profile.stacks.path(StackId(s as u32)).iter().enumerate() {
            if k > 0 {
                line.push(b';');
            }
            line.extend_from_slice(profile.frames.raw(*f));
        }
        let before = match scale {
            // Truncated in the stored unit (whole samples for integer counts).
            Some(k) => {
                ((w[0] as f64 * k / vt.scale()).trunc() as i64).saturating_mul(vt.scale() as i64)
            }
            None => w[0],
        };
        line.extend_from_slice(
            format!(" {} {}", value_text(before, vt), value_text(w[1], vt)).as_bytes(),
        );
        lines.push(line);
    }
    lines.sort_unstable();
    for l in lines {
        out.write_all(&l)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// A gate's verdict: the offenders with their figures, or that all is well.
pub fn offenders_text(
    out: &mut dyn Write,
    profile: &Profile,
    offenders: &[Offender],
    cmp: &Compare,
    (covered, min_samples): (Coverage, f64),
) -> io::Result<()> {
    let Some(meta) = profile.meta.diff.as_deref() else {
        return Ok(());
    };
    let unit = diff_unit(profile, meta);
    let plural = |n: usize| if n == 1 { "function" } else { "functions" };
    let mut weighed = format!("{} {} checked", covered.checked, plural(covered.checked));
    if covered.skipped > 0 {
        weighed.push_str(&format!(
            ", {} skipped with fewer than {min_samples} samples on both sides (--min-samples)",
            covered.skipped
        ));
    }
    if covered.unmatched > 0 {
        weighed.push_str(&format!(
            ", {} matched by no budget's pattern",
            covered.unmatched
        ));
    }
    if offenders.is_empty() {
        return writeln!(
            out,
            "ok: no function grew past its budget ({weighed}; {})",
            cmp.norm.label()
        );
    }
    writeln!(
        out,
        "FAIL: {} function{} grew past the budget ({weighed}; {})",
        offenders.len(),
        if offenders.len() == 1 { "" } else { "s" },
        cmp.norm.label()
    )?;
    for o in offenders {
        let c = &o.change;
        writeln!(
            out,
            "  {}  {} {} -> {} ({}, {}; {:.1}% -> {:.1}% of all; budget {}; z {}; samples {:.0} -> {:.0})",
            sanitize(&profile.frames.name(o.frame)),
            o.metric.name(),
            norm_text(c.value[0], cmp.norm, &unit),
            norm_text(c.value[1], cmp.norm, &unit),
            relative_text(c),
            verdict_text(c),
            o.share[0] * 100.0,
            o.share[1] * 100.0,
            o.threshold,
            c.z.map_or("-".to_string(), |z| format!("{z:+.1}")),
            c.samples[0],
            c.samples[1],
        )?;
    }
    Ok(())
}
