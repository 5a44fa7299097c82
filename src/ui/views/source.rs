//! The source pane: the selected function's routines (the function in each
//! file it was recorded in) with every listed line's flat and cum beside its
//! code, hot lines marked by a bar (glyphs, so 16 colours and NO_COLOR show
//! it too) and tinted where colour is on; the cursor starts on the hottest
//! line. The same figures as `ember list`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::widgets::StatefulWidget;

use crate::host::sanitize::sanitize;
use crate::model::ValueType;
use crate::model::listing::Routine;
use crate::output::amount;
use crate::output::listing::{Source, display_line};
use crate::ui::chrome::text::fit;
use crate::ui::chrome::theme::{ColorDepth, Theme};

/// One row of the pane.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `ROUTINE ...` headers, the "not found" words, or a line's code.
    pub text: String,
    pub line: Option<u32>,
    pub flat: i64,
    pub cum: i64,
    pub header: bool,
    /// In a comparison: the line's cum before -> after, normalised, with its verdict.
    pub change: Option<crate::model::diff::Change>,
}

impl Row {
    /// A routine's header row: `function in file`.
    fn header(function: &str, file: Option<&str>) -> Row {
        Row {
            text: format!(
                "{} in {}",
                sanitize(function),
                sanitize(file.unwrap_or("?"))
            ),
            line: None,
            flat: 0,
            cum: 0,
            header: true,
            change: None,
        }
    }
}

/// What the pane shows and where its cursor is.
pub struct SourcePane {
    pub function: String,
    pub rows: Vec<Row>,
    pub cursor: usize,
    pub offset: usize,
    /// Rows on screen at the last draw (a page).
    pub page: usize,
    pub total: i64,
    pub value_type: ValueType,
    max_cum: i64,
    /// In a comparison: how its figures are normalised.
    pub norm: Option<crate::model::diff::Norm>,
}

impl SourcePane {
    /// The pane of `function`'s `routines`, each with the source found for it.
    pub fn new(
        function: String,
        routines: Vec<(Routine, Source)>,
        total: i64,
        value_type: ValueType,
    ) -> SourcePane {
        let mut rows = Vec::new();
        for (r, src) in &routines {
            rows.push(Row {
                flat: r.flat,
                cum: r.cum,
                ..Row::header(&r.function, r.file.as_deref())
            });
            let weighted = r.lines.iter().filter(|l| l.flat != 0 || l.cum != 0);
            let lo = weighted.clone().map(|l| l.line).min().unwrap_or(1);
            let hi = weighted.map(|l| l.line).max().unwrap_or(1);
            let cost = |n: u32| {
                r.lines
                    .iter()
                    .find(|l| l.line == n)
                    .map_or((0, 0), |l| (l.flat, l.cum))
            };
            if src.path.is_some() {
                let end = u32::try_from(src.lines.len()).unwrap_or(u32::MAX);
                for n in lo.saturating_sub(5).max(1)..=(hi + 5).min(end.max(hi)) {
                    let (flat, cum) = cost(n);
                    let text = match src.lines.get(n as usize - 1) {
                        Some(t) => display_line(t),
                        None => "(past the end of the file: it changed since the profile)".into(),
                    };
                    rows.push(Row {
                        text,
                        line: Some(n),
                        flat,
                        cum,
                        header: false,
                        change: None,
                    });
                }
            } else {
                for l in &r.lines {
                    rows.push(Row {
                        text: String::new(),
                        line: Some(l.line),
                        flat: l.flat,
                        cum: l.cum,
                        header: false,
                        change: None,
                    });
                }
                rows.push(Row {
                    text: format!(
                        "source not found: looked at {} (--source-path DIR, --trim-path PREFIX)",
                        sanitize(&src.looked.join(", "))
                    ),
                    line: None,
                    flat: 0,
                    cum: 0,
                    header: true,
                    change: None,
                });
            }
        }
        SourcePane::finish(function, rows, total, value_type, None)
    }

    /// The pane of a comparison: per line, cum before -> after under `cmp`'s
    /// normalisation and the change's verdict; the bars and the cursor follow
    /// after's cum.
    pub fn new_diff(
        function: String,
        routines: Vec<(crate::model::listing::PairedRoutine, Source)>,
        cmp: &crate::model::diff::Compare,
        value_type: ValueType,
    ) -> SourcePane {
        let mut rows = Vec::new();
        for (r, src) in &routines {
            let shown = crate::output::listing::shown_lines(&r.weighted(), src);
            if shown.is_empty() {
                continue;
            }
            rows.push(Row::header(&r.function, r.file.as_deref()));
            for n in shown {
                let p = r
                    .lines
                    .iter()
                    .find(|l| l.line == n)
                    .copied()
                    .unwrap_or_default();
                let change = (p.cum != [0, 0])
                    .then(|| cmp.change(p.cum, [p.samples[0] as f64, p.samples[1] as f64]));
                rows.push(Row {
                    text: src
                        .lines
                        .get(n as usize - 1)
                        .map_or_else(String::new, |t| display_line(t)),
                    line: Some(n),
                    flat: p.flat[1],
                    cum: p.cum[1],
                    header: false,
                    change,
                });
            }
        }
        SourcePane::finish(function, rows, cmp.totals[1], value_type, Some(cmp.norm))
    }

    fn finish(
        function: String,
        rows: Vec<Row>,
        total: i64,
        value_type: ValueType,
        norm: Option<crate::model::diff::Norm>,
    ) -> SourcePane {
        let max_cum = rows
            .iter()
            .filter(|r| !r.header)
            .map(|r| r.cum)
            .max()
            .unwrap_or(0);
        // The cursor on the hottest line (the first of equals).
        let cursor = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.header && r.cum > 0)
            .max_by(|a, b| a.1.cum.cmp(&b.1.cum).then(b.0.cmp(&a.0)))
            .map_or(0, |(i, _)| i);
        SourcePane {
            function,
            rows,
            cursor,
            offset: 0,
            page: 10,
            total,
            value_type,
            max_cum,
            norm,
        }
    }

    pub fn move_by(&mut self, delta: isize) {
        let last = self.rows.len().saturating_sub(1) as isize;
        self.cursor = (self.cursor as isize + delta).clamp(0, last.max(0)) as usize;
    }

    /// The next (or previous) line that carries weight, wrapping around.
    pub fn step_hot(&mut self, forward: bool) {
        let n = self.rows.len();
        for k in 1..=n {
            let i = if forward {
                (self.cursor + k) % n
            } else {
                (self.cursor + n - k % n) % n
            };
            let r = &self.rows[i];
            if !r.header && (r.flat != 0 || r.cum != 0) {
                self.cursor = i;
                return;
            }
        }
    }

    /// The line under the cursor, if it is one.
    pub fn line(&self) -> Option<u32> {
        self.rows.get(self.cursor).and_then(|r| r.line)
    }
}

/// Draws a [`SourcePane`].
pub struct SourceView<'a> {
    pub theme: &'a Theme,
}

impl StatefulWidget for SourceView<'_> {
    type State = SourcePane;

    fn render(self, area: Rect, buf: &mut Buffer, st: &mut SourcePane) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let w = usize::from(area.width);
        let rows = usize::from(area.height);
        st.page = rows.max(1);
        if st.cursor < st.offset {
            st.offset = st.cursor;
        } else if st.cursor >= st.offset + rows {
            st.offset = st.cursor + 1 - rows;
        }
        const BARS: [&str; 9] = [" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"];
        for (k, (i, row)) in st
            .rows
            .iter()
            .enumerate()
            .skip(st.offset)
            .take(rows)
            .enumerate()
        {
            let y = area.y + k as u16;
            let vt = &st.value_type;
            let cell = |v: i64| {
                if v == 0 {
                    ".".to_string()
                } else {
                    amount(v, vt)
                }
            };
            let text = if row.header && row.line.is_none() && row.cum == 0 && row.flat == 0 {
                format!("  {}", row.text)
            } else if row.header {
                let head = |v: i64| {
                    if v == 0 {
                        "0".to_string()
                    } else {
                        amount(v, vt)
                    }
                };
                format!(
                    "{} · flat {}, cum {} ({:.2}% of all)",
                    row.text,
                    head(row.flat),
                    head(row.cum),
                    crate::output::percent(row.cum, st.total)
                )
            } else if let (Some(c), Some(norm)) = (&row.change, st.norm) {
                let [b, a, d] = crate::output::diff::change_cells(c, norm, &vt.unit);
                let (_, mark) = crate::ui::views::diff::shade(self.theme, c, false);
                format!(
                    "{b:>9} {a:>9} {d:>10} {mark:<1} {:>6} {}",
                    row.line.map_or(String::new(), |n| n.to_string()),
                    row.text
                )
            } else if st.norm.is_some() {
                format!(
                    "{:>9} {:>9} {:>10}   {:>6} {}",
                    ".",
                    ".",
                    "",
                    row.line.map_or(String::new(), |n| n.to_string()),
                    row.text
                )
            } else {
                let level = if st.max_cum > 0 && row.cum > 0 {
                    ((row.cum as f64 / st.max_cum as f64) * 8.0)
                        .ceil()
                        .clamp(1.0, 8.0) as usize
                } else {
                    0
                };
                format!(
                    "{:>9} {:>9} {:>6} {} {}",
                    cell(row.flat),
                    cell(row.cum),
                    row.line.map_or(String::new(), |n| n.to_string()),
                    BARS[level],
                    row.text
                )
            };
            let mut style = if row.header {
                self.theme.status_name.add_modifier(Modifier::BOLD)
            } else if row.cum == 0 {
                self.theme.status_label
            } else {
                ratatui::style::Style::default()
            };
            if let Some(c) = &row.change {
                style = style.patch(crate::ui::views::diff::shade(self.theme, c, false).0);
            } else if !row.header && row.cum > 0 && self.theme.depth != ColorDepth::Mono {
                style = style.patch(
                    self.theme
                        .hot_line(row.cum as f64 / st.max_cum.max(1) as f64),
                );
            }
            if i == st.cursor {
                style = style.patch(self.theme.selected);
            }
            buf.set_style(Rect::new(area.x, y, area.width, 1), style);
            buf.set_stringn(area.x, y, fit(&text, w), w, style);
        }
    }
}
