//! A ticket-ready report of a profile as it is viewed: where it came from, how
//! much it can say (duration, samples, rate), the top functions by self and by
//! total with a mark on figures resting on few samples, the selected frame with
//! Amdahl's limit, the view's transforms and range, and the lint warnings.
//! Built once ([`Report::build`]), printed as markdown, text or JSON.

use std::io::{self, Write};

use serde::Serialize;

use super::{human, percent};
use crate::host::sanitize::sanitize;
use crate::model::lint::Finding;
use crate::model::{CallTree, NOISE_SAMPLES, NodeId, Profile, TopTable, Unit, ValueType};

/// What the report is of, beyond the profile and tree.
pub struct ReportInput<'a> {
    /// The file's name as the user gave it.
    pub source: String,
    /// What the view does to the file: transforms, range, zoom, inversion.
    pub view: Vec<String>,
    /// The frame the user points at, if any.
    pub selected: Option<NodeId>,
    /// Rows per top table.
    pub limit: usize,
    pub lint: &'a [Finding],
}

/// How a report is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Markdown,
    Text,
    Json,
}

impl Style {
    /// The style a file name asks for: `.json`, `.txt`, else markdown.
    pub fn from_path(path: &std::path::Path) -> Style {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => Style::Json,
            Some("txt" | "text") => Style::Text,
            _ => Style::Markdown,
        }
    }
}

#[derive(Serialize, Debug)]
pub struct Report {
    pub source: String,
    pub format: String,
    pub duration_s: Option<f64>,
    /// Samples behind the view, when the profile says.
    pub samples: Option<f64>,
    pub rate_hz: Option<f64>,
    /// What the numbers measure: "cpu [nanoseconds]".
    pub value: String,
    pub total: String,
    pub view: Vec<String>,
    pub top_self: Vec<Row>,
    pub top_total: Vec<Row>,
    pub selected: Option<Selected>,
    pub lint: Vec<Lint>,
    pub exporter: String,
}

#[derive(Serialize, Debug)]
pub struct Row {
    pub name: String,
    #[serde(rename = "self")]
    pub self_text: String,
    pub self_percent: f64,
    pub total: String,
    pub total_percent: f64,
    /// Samples behind the row's figure (self in the self table, total in the
    /// total table), when known.
    pub samples: Option<f64>,
    /// Fewer than [`NOISE_SAMPLES`] samples: not enough to act on.
    pub few_samples: bool,
}

#[derive(Serialize, Debug)]
pub struct Selected {
    /// Frame names from the root down.
    pub path: Vec<String>,
    #[serde(rename = "self")]
    pub self_text: String,
    pub self_percent: f64,
    pub total: String,
    pub total_percent: f64,
    pub samples: Option<f64>,
    /// The whole at most this many times faster were the frame's total gone
    /// (Amdahl's law: 1 / (1 - share)).
    pub amdahl_limit: Option<f64>,
    /// ... and were it twice as fast.
    pub amdahl_halved: f64,
}

#[derive(Serialize, Debug)]
pub struct Lint {
    pub code: String,
    pub saw: String,
    pub advice: String,
}

/// Rows of the table of the samples value (counts per function), when the
/// shown value is no sample count but the profile has one.
fn sample_table(profile: &Profile, tree: &CallTree) -> Option<TopTable> {
    let shown = &profile.value_types[tree.options.value];
    if shown.counts_samples() {
        return None;
    }
    let v = profile
        .value_types
        .iter()
        .position(ValueType::counts_samples)?;
    let t = CallTree::build(
        profile,
        crate::model::TreeOptions {
            value: v,
            ..tree.options.clone()
        },
    );
    Some(TopTable::build(profile, &t))
}

impl Report {
    pub fn build(profile: &Profile, tree: &CallTree, input: &ReportInput) -> Report {
        let vt = &profile.value_types[tree.options.value];
        let table = TopTable::build(profile, tree);
        let counts = sample_table(profile, tree);
        let count_of = |frame, total: bool| -> Option<f64> {
            if vt.counts_samples() {
                let r = table.rows.iter().find(|r| r.frame == frame)?;
                let w = if total { r.total } else { r.self_weight };
                return Some(w as f64 / vt.scale());
            }
            let c = counts.as_ref()?;
            let r = c.rows.iter().find(|r| r.frame == frame)?;
            Some(if total { r.total } else { r.self_weight } as f64)
        };
        let all = table.total;
        let rows = |by_total: bool| -> Vec<Row> {
            let mut order: Vec<_> = table.rows.iter().collect();
            order
                .sort_by_key(|r| std::cmp::Reverse(if by_total { r.total } else { r.self_weight }));
            order
                .into_iter()
                .filter(|r| if by_total { r.total } else { r.self_weight } != 0)
                .take(input.limit)
                .map(|r| {
                    let samples = count_of(r.frame, by_total);
                    Row {
                        name: profile.frames.name(r.frame).into_owned(),
                        self_text: human(r.self_weight, vt),
                        self_percent: round2(percent(r.self_weight, all)),
                        total: human(r.total, vt),
                        total_percent: round2(percent(r.total, all)),
                        samples,
                        few_samples: samples.is_some_and(|s| s < NOISE_SAMPLES as f64),
                    }
                })
                .collect()
        };
        let samples = tree.samples(NodeId::ROOT);
        let duration_s = profile.meta.duration_ns.map(|d| d as f64 / 1e9);
        let rate_hz = match (&profile.meta.period, samples, duration_s) {
            (Some((period, pvt)), _, _) if *period > 0 && pvt.unit.nanos().is_some() => {
                pvt.unit.nanos().map(|per| 1e9 / (*period as f64 * per))
            }
            (_, Some(n), Some(d)) if d > 0.0 => Some(n / d),
            _ => None,
        };
        let selected = input.selected.filter(|&n| n != NodeId::ROOT).map(|n| {
            let share = percent(tree.total(n), all) / 100.0;
            Selected {
                path: tree
                    .frame_path(profile, n)
                    .iter()
                    .map(|&f| profile.frames.name(f).into_owned())
                    .collect(),
                self_text: human(tree.self_weight(n), vt),
                self_percent: round2(percent(tree.self_weight(n), all)),
                total: human(tree.total(n), vt),
                total_percent: round2(percent(tree.total(n), all)),
                samples: tree.samples(n),
                amdahl_limit: (share < 1.0).then(|| round2(1.0 / (1.0 - share))),
                amdahl_halved: round2(1.0 / (1.0 - share / 2.0)),
            }
        });
        Report {
            source: input.source.clone(),
            format: profile.format.clone(),
            duration_s,
            samples,
            rate_hz,
            value: format!("{} [{}]", vt.kind, vt.unit.name()),
            total: human(all, vt),
            view: input.view.clone(),
            top_self: rows(false),
            top_total: rows(true),
            selected,
            lint: input
                .lint
                .iter()
                .map(|f| Lint {
                    code: f.kind.code().to_string(),
                    saw: f.saw.clone(),
                    advice: f.advice.clone(),
                })
                .collect(),
            exporter: format!("ember {}", env!("CARGO_PKG_VERSION")),
        }
    }

    /// Markdown for GitHub and GitLab: tables, frame names as code spans with
    /// pipes escaped, no raw control characters.
    pub fn markdown(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "### Profile: {}", code(&self.source))?;
        writeln!(out)?;
        writeln!(out, "| | |")?;
        writeln!(out, "|---|---|")?;
        for (k, v) in self.facts() {
            writeln!(out, "| {k} | {} |", cell(&v))?;
        }
        for (title, rows, by_total) in [
            ("Top functions by self", &self.top_self, false),
            ("Top functions by total", &self.top_total, true),
        ] {
            writeln!(out)?;
            writeln!(out, "#### {title}")?;
            writeln!(out)?;
            writeln!(out, "| # | self | self % | total | total % | function |")?;
            writeln!(out, "|--:|--:|--:|--:|--:|---|")?;
            for (i, r) in rows.iter().enumerate() {
                let mark = if r.few_samples { " ⚠" } else { "" };
                let (s, t) = if by_total {
                    (String::new(), mark)
                } else {
                    (mark.to_string(), "")
                };
                writeln!(
                    out,
                    "| {} | {}{s} | {:.2}% | {}{t} | {:.2}% | {} |",
                    i + 1,
                    r.self_text,
                    r.self_percent,
                    r.total,
                    r.total_percent,
                    cell(&code(&r.name))
                )?;
            }
        }
        if self
            .top_self
            .iter()
            .chain(&self.top_total)
            .any(|r| r.few_samples)
        {
            writeln!(out)?;
            writeln!(
                out,
                "⚠ rests on fewer than {NOISE_SAMPLES} samples: too few to act on."
            )?;
        }
        if let Some(s) = &self.selected {
            writeln!(out)?;
            writeln!(out, "#### Selected frame")?;
            writeln!(out)?;
            writeln!(out, "```")?;
            for (depth, name) in s.path.iter().enumerate() {
                writeln!(out, "{}{}", "  ".repeat(depth), fence_safe(name))?;
            }
            writeln!(out, "```")?;
            writeln!(out)?;
            for line in s.lines() {
                writeln!(out, "- {line}")?;
            }
        }
        if !self.lint.is_empty() {
            writeln!(out)?;
            writeln!(out, "#### Warnings about the profile itself")?;
            writeln!(out)?;
            for l in &self.lint {
                writeln!(
                    out,
                    "- **{}**: {} — {}",
                    l.code,
                    inline(&l.saw),
                    inline(&l.advice)
                )?;
            }
        }
        writeln!(out)?;
        writeln!(out, "<sub>{}</sub>", inline(&self.exporter))?;
        Ok(())
    }

    /// Plain text for a terminal or an e-mail.
    pub fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "Profile: {}", sanitize(&self.source))?;
        for (k, v) in self.facts() {
            writeln!(out, "  {:<10} {}", format!("{k}:"), sanitize(&v))?;
        }
        for (title, rows) in [("by self", &self.top_self), ("by total", &self.top_total)] {
            writeln!(out)?;
            writeln!(out, "Top functions {title}:")?;
            let w = rows
                .iter()
                .flat_map(|r| [r.self_text.len(), r.total.len()])
                .chain([5])
                .max()
                .unwrap_or(5);
            writeln!(
                out,
                "  {:>w$} {:>7} {:>w$} {:>7}  function",
                "self", "self%", "total", "total%"
            )?;
            for r in rows {
                writeln!(
                    out,
                    "  {:>w$} {:>6.2}% {:>w$} {:>6.2}%  {}{}",
                    r.self_text,
                    r.self_percent,
                    r.total,
                    r.total_percent,
                    sanitize(&r.name),
                    if r.few_samples { "  (few samples)" } else { "" }
                )?;
            }
        }
        if let Some(s) = &self.selected {
            writeln!(out)?;
            writeln!(out, "Selected frame:")?;
            for (depth, name) in s.path.iter().enumerate() {
                writeln!(out, "  {}{}", "  ".repeat(depth), sanitize(name))?;
            }
            for line in s.lines() {
                writeln!(out, "  {}", sanitize(&line))?;
            }
        }
        if !self.lint.is_empty() {
            writeln!(out)?;
            writeln!(out, "Warnings about the profile itself:")?;
            for l in &self.lint {
                writeln!(out, "  {}: {}", l.code, sanitize(&l.saw))?;
                writeln!(out, "    {}", sanitize(&l.advice))?;
            }
        }
        Ok(())
    }

    pub fn write(&self, out: &mut dyn Write, style: Style) -> io::Result<()> {
        match style {
            Style::Markdown => self.markdown(out),
            Style::Text => self.text(out),
            Style::Json => self.json(out),
        }
    }

    pub fn json(&self, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, self)?;
        writeln!(out)
    }

    /// The table of facts: (label, value).
    fn facts(&self) -> Vec<(&'static str, String)> {
        let mut f = vec![("format", self.format.clone())];
        if let Some(d) = self.duration_s {
            f.push(("duration", seconds(d)));
        }
        if let Some(n) = self.samples {
            let mut s = format!("{}", n.round() as i64);
            if let Some(hz) = self.rate_hz {
                s.push_str(&format!(" at {hz:.0} Hz"));
            }
            f.push(("samples", s));
        }
        f.push(("value", format!("{} (total {})", self.value, self.total)));
        if !self.view.is_empty() {
            f.push(("view", self.view.join(" · ")));
        }
        f
    }
}

impl Selected {
    fn lines(&self) -> Vec<String> {
        let mut out = vec![
            format!("total {} ({:.2}% of all)", self.total, self.total_percent),
            format!("self {} ({:.2}% of all)", self.self_text, self.self_percent),
        ];
        if let Some(n) = self.samples {
            let few = if n < NOISE_SAMPLES as f64 {
                " — too few to act on"
            } else {
                ""
            };
            out.push(format!("{} samples{few}", n.round() as i64));
        }
        match self.amdahl_limit {
            Some(limit) => out.push(format!(
                "Amdahl's limit: were it free, the whole would run at most {limit:.2}x faster; twice as fast, {:.2}x",
                self.amdahl_halved
            )),
            None => out.push("it is all of the time on screen".to_string()),
        }
        out
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn seconds(s: f64) -> String {
    human((s * 1e9) as i64, &ValueType::new("time", Unit::Nanoseconds))
}

/// `s` as a markdown code span, whatever backticks it holds: the fence is
/// one backtick longer than the longest run inside.
fn code(s: &str) -> String {
    let s = sanitize(s);
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// A table cell: pipes escaped (GitHub and GitLab honour `\|` in code spans
/// inside tables too), newlines never.
fn cell(s: &str) -> String {
    sanitize(s).replace('|', "\\|")
}

/// Running text: markdown's active characters escaped.
fn inline(s: &str) -> String {
    let mut out = String::new();
    for c in sanitize(s).chars() {
        if "\\`*_[]<>|#".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A line inside a ``` block: a line of backticks would close it early.
fn fence_safe(s: &str) -> String {
    let s = sanitize(s);
    if s.trim_start().starts_with("```") {
        format!(" {s}")
    } else {
        s.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_survive_backticks_and_pipes() {
        assert_eq!(code("a"), "`a`");
        assert_eq!(code("x`y"), "``x`y``");
        assert_eq!(code("`q`"), "`` `q` ``");
        assert_eq!(cell(&code("a|b")), "`a\\|b`");
        assert_eq!(code("\x1b[2J"), "`\\x1b[2J`");
    }

    #[test]
    fn running_text_is_escaped() {
        assert_eq!(inline("a_b *c* <d>"), "a\\_b \\*c\\* \\<d\\>");
    }
}
