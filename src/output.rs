//! Printers for the command line, generic over `io::Write`.

use std::io::{self, Write};

use serde::Serialize;

use crate::model::{Profile, TopTable, ValueType};
use crate::sanitize::sanitize;

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
