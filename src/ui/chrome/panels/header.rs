//! The header row: the source, what the view shows, and its notices (a
//! refused time range, the format's notes). Notices that do not fit beside
//! the rest get a row of their own rather than being cut off the right edge.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{DrawContext, total_label, unicode_cols};
use crate::host::sanitize::sanitize;
use crate::model::{ChildOrder, NodeId, Unit, ValueType};
use crate::output::human;
use crate::ui::app::{Loaded, View};
use crate::ui::chrome::text::fit;
use crate::ui::views::flame_state::Orientation;

pub(super) struct Header<'a> {
    main: Vec<Span<'a>>,
    notices: Vec<Span<'a>>,
    help: Span<'a>,
    /// `· ? `: what a tight row keeps of the help key.
    short_help: Span<'a>,
    style: Style,
    warn_style: Style,
}

fn width(spans: &[Span]) -> usize {
    spans.iter().map(|s| unicode_cols(&s.content)).sum()
}

/// `spans` cut to `cols` columns, the span that crosses the edge ending in `…`.
fn cut(spans: Vec<Span<'_>>, cols: usize) -> Vec<Span<'_>> {
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let w = unicode_cols(&span.content);
        if used + w <= cols {
            used += w;
            out.push(span);
            continue;
        }
        let room = cols - used;
        if room > 0 {
            out.push(Span::styled(
                fit(&span.content, room).into_owned(),
                span.style,
            ));
        }
        break;
    }
    out
}

/// `spans` word-wrapped over rows of `cols` columns, each word keeping its
/// span's style; the last row is cut.
fn flow(spans: Vec<Span<'_>>, cols: usize, rows: usize) -> Vec<Line<'static>> {
    let mut lines: Vec<Vec<Span<'static>>> = vec![Vec::new()];
    let mut used = 0;
    for span in &spans {
        for word in span.content.split_inclusive(' ') {
            let w = unicode_cols(word);
            if used > 0 && used + w.min(cols) > cols && lines.len() < rows {
                lines.push(Vec::new());
                used = 0;
            }
            used += w;
            if let Some(last) = lines.last_mut() {
                last.push(Span::styled(word.to_string(), span.style));
            }
        }
    }
    lines
        .into_iter()
        .map(|l| Line::from(cut(l, cols)))
        .collect()
}

impl<'a> Header<'a> {
    /// One more notice, in the warning style (frame-name free text only).
    pub(super) fn warn(&mut self, text: &str) {
        let span = Span::styled(format!("· {} ", sanitize(text)), self.warn_style);
        self.notices.push(span);
    }

    /// Rows the header wants at `cols` columns: up to two more for the
    /// notices when they do not fit on the first.
    pub(super) fn rows(&self, cols: u16) -> u16 {
        let cols = usize::from(cols.max(1));
        let help = unicode_cols(&self.help.content);
        let all = width(&self.main) + width(&self.notices) + help;
        if self.notices.is_empty() || all <= cols {
            1
        } else {
            1 + (width(&self.notices) + 1).div_ceil(cols).min(2) as u16
        }
    }

    pub(super) fn draw(self, frame: &mut Frame, area: Rect) {
        let style = self.style;
        let cols = usize::from(area.width);
        let rows = usize::from(self.rows(area.width).min(area.height.max(1)));
        // The help key stays on the first row, whatever is cut before it; a
        // tight row first gives up the brand, then the word "help".
        let mut first = self.main;
        let fits = |spans: &[Span], help: &Span| width(spans) + unicode_cols(&help.content) <= cols;
        if !fits(&first, &self.help) && first.len() > 1 {
            first.remove(0);
        }
        let help = if fits(&first, &self.help) {
            self.help
        } else {
            self.short_help
        };
        let help_w = unicode_cols(&help.content);
        let mut lines = if rows >= 2 {
            let mut rest = vec![Span::styled(" ", style)];
            rest.extend(self.notices);
            flow(rest, cols, rows - 1)
        } else {
            first.extend(self.notices);
            Vec::new()
        };
        let mut head = cut(first, cols.saturating_sub(help_w));
        head.push(help);
        lines.insert(0, Line::from(cut(head, cols)));
        let lines: Vec<Line> = lines.into_iter().map(|l| l.style(style)).collect();
        frame.render_widget(Paragraph::new(lines).style(style), area);
    }
}

/// The header's spans of `l`: what the view is, then its notices.
pub(super) fn header<'a>(l: &'a Loaded, cx: &DrawContext<'a>) -> Header<'a> {
    let (source, theme, help_key, live) = (cx.source, cx.theme, cx.help_key, cx.live);
    let p = &l.profile;
    let vt = &p.value_types[l.tree.options.value];
    let mut parts = vec![
        Span::styled(" ember ", theme.header_accent),
        Span::styled(format!(" {} ", sanitize(source)), theme.header),
    ];
    if let Some(live) = live {
        // What the profiler did lately comes first: it is why the user is here.
        let (text, warn) = live.label();
        let style = if warn {
            theme.header.patch(theme.warning)
        } else {
            theme.header_accent
        };
        parts.push(Span::styled(format!(" {} ", sanitize(&text)), style));
        parts.push(Span::styled(" ", theme.header));
    }
    if let Some(busy) = cx.busy {
        // A transform's label carries a pattern made of frame names.
        parts.push(Span::styled(
            format!(" {}… ", sanitize(busy)),
            theme.header_accent,
        ));
        parts.push(Span::styled(" ", theme.header));
    }
    match crate::ui::views::diff::header_text(p, &l.tree, cx.diff, cx.view == View::Table) {
        Some(text) => parts.push(Span::styled(format!("· {text} "), theme.header_accent)),
        None => parts.extend([
            Span::styled(format!("· {} ", p.format), theme.header),
            Span::styled(
                format!(
                    "· {} ",
                    total_label(l.tree.total(NodeId::ROOT), vt, p.value_types.len())
                ),
                theme.header,
            ),
        ]),
    }
    parts.extend([
        Span::styled(
            match (l.sandwich.is_some(), l.inverted, l.flame.orientation) {
                (true, ..) => "· callers / callees ",
                (false, false, Orientation::Icicle) => "· icicle ",
                (false, false, Orientation::Flame) => "· flame ",
                (false, true, Orientation::Icicle) => "· inverted (callers below) ",
                (false, true, Orientation::Flame) => "· inverted (callers above) ",
            },
            if l.inverted || l.sandwich.is_some() {
                theme.header_accent
            } else {
                theme.header
            },
        ),
        Span::styled(
            match l.tree.options.order {
                ChildOrder::Name => "· by name ",
                ChildOrder::Weight => "· heaviest first ",
            },
            theme.header,
        ),
    ]);
    if !p.warnings.is_empty() {
        parts.push(Span::styled(
            format!("· {} ", p.warnings.summary()),
            theme.header.patch(theme.warning),
        ));
    }
    // How much the samples can say: the span they cover and how often they came.
    let ns = ValueType::new("time", Unit::Nanoseconds);
    if let Some(d) = p.meta.duration_ns {
        parts.push(Span::styled(
            format!("· {} ", human(d as i64, &ns)),
            theme.header,
        ));
    }
    if let Some((period, vt)) = &p.meta.period
        && let Some(per) = vt.unit.nanos()
        && *period > 0
    {
        let hz = 1e9 / (*period as f64 * per);
        parts.push(Span::styled(format!("· {hz:.0} Hz "), theme.header));
    }
    if !l.transforms.is_empty() {
        parts.push(Span::styled(
            format!("· {} (u undo) ", sanitize(&l.transform_breadcrumb())),
            theme.header_accent,
        ));
    }
    // Verdicts and refusals: a row of their own when they do not fit here.
    let mut notices = Vec::new();
    if let Some(word) = cx.lint.header() {
        let key = if cx.show_detail { "" } else { " (i)" };
        notices.push(Span::styled(
            format!("· {word}{key} "),
            theme.header.patch(theme.warning),
        ));
    }
    if let Some(e) = &l.transform_error {
        notices.push(Span::styled(
            format!("· {} ", sanitize(e)),
            theme.header.patch(theme.warning),
        ));
    }
    for note in &p.notes {
        notices.push(Span::styled(format!("· {} ", sanitize(note)), theme.header));
    }
    Header {
        main: parts,
        notices,
        help: Span::styled(format!("· {help_key} help "), theme.header),
        short_help: Span::styled(format!("· {help_key} "), theme.header),
        warn_style: theme.header.patch(theme.warning),
        style: theme.header,
    }
}
