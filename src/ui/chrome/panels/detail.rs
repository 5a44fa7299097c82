//! The detail panel: the selected frame's full name, its place, weights and
//! what the lint or the host context says about it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use super::{DrawContext, amount, breadcrumb, selected_name};
use crate::host::sanitize::sanitize;
use crate::model::{NOISE_SAMPLES, NodeId};
use crate::output::percent;
use crate::ui::app::Loaded;
use crate::ui::chrome::text::fit_left;

/// The narrowest the panel gets beside the graph, and the share of the
/// screen it may take there.
pub(super) const MIN_WIDTH: u16 = 44;
const MAX_SHARE: u16 = 45;

/// How wide the detail panel beside a `room`-column graph area should be: as
/// wide as its longest line (the numbers, the verdict, a flag) needs, between
/// [`MIN_WIDTH`] and 45% of the room. Lines longer than that wrap at words.
pub(super) fn width(
    l: &Loaded,
    theme: &crate::ui::chrome::theme::Theme,
    cx: &DrawContext,
    room: u16,
) -> u16 {
    let natural = lines(l, theme, cx)
        .iter()
        .map(|(line, _)| line.width())
        .max()
        .unwrap_or(0);
    let most = (u32::from(room) * u32::from(MAX_SHARE) / 100) as u16;
    let natural = u16::try_from(natural + 2).unwrap_or(u16::MAX);
    natural.clamp(MIN_WIDTH, most.max(MIN_WIDTH))
}

/// How a line meets the panel's width.
#[derive(Clone, Copy, PartialEq)]
enum Fit {
    /// Wrap at word boundaries.
    Wrap,
    /// One row that keeps its end (a path, the breadcrumb).
    Tail,
}

/// The detail panel: where the selected frame comes from and what its numbers mean.
pub(super) fn draw_detail(
    frame: &mut Frame,
    area: Rect,
    l: &Loaded,
    theme: &crate::ui::chrome::theme::Theme,
    cx: &DrawContext,
) {
    let inner_w = usize::from(area.width.saturating_sub(2)).max(1);
    let rows: Vec<Line> = lines(l, theme, cx)
        .into_iter()
        .map(|(line, fit)| match fit {
            Fit::Tail => {
                let style = line.style;
                let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
                Line::styled(fit_left(&text, inner_w), style)
            }
            Fit::Wrap => line,
        })
        .collect();
    let block = Block::bordered()
        .title(" detail ")
        .border_style(theme.help_border);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(rows).block(block).wrap(Wrap { trim: false }),
        area,
    );
}

/// The panel's lines, whole, each with how it meets the width.
fn lines(
    l: &Loaded,
    theme: &crate::ui::chrome::theme::Theme,
    cx: &DrawContext,
) -> Vec<(Line<'static>, Fit)> {
    let diff = cx.diff;
    let v = l.shown();
    let (p, tree, st) = (v.profile, v.tree, v.flame);
    let n = st.selected;
    let mut lines = vec![(Line::styled(selected_name(l), theme.status_name), Fit::Wrap)];
    if let Some(m) = tree.frame(p, n).and_then(|f| p.frame_meta.get(&f)) {
        if let Some(file) = &m.file {
            let loc = match m.line {
                Some(line) => format!("{}:{line}", sanitize(file)),
                None => sanitize(file).into_owned(),
            };
            lines.push((Line::raw(loc), Fit::Tail));
        }
        if let Some(object) = &m.object {
            // The binary's path is its tail that matters: keep the end.
            let text = format!("in {}", sanitize(object));
            lines.push((Line::styled(text, theme.status_label), Fit::Tail));
        }
        let kind = match m.kind {
            crate::model::FrameKind::Kernel => Some("kernel code"),
            crate::model::FrameKind::Inlined => Some("inlined"),
            crate::model::FrameKind::Jit => Some("JIT-compiled"),
            crate::model::FrameKind::Normal => None,
        };
        if let Some(k) = kind {
            lines.push((Line::styled(k, theme.status_label), Fit::Wrap));
        }
    }
    if p.meta.diff.is_some() {
        for text in crate::ui::views::diff::detail_lines(p, tree, n, diff.norm, &l.tree) {
            lines.push((Line::raw(text), Fit::Wrap));
        }
    } else {
        lines.extend(single_detail(l, theme).into_iter().map(|x| (x, Fit::Wrap)));
    }
    lines.push((Line::styled(breadcrumb(l), theme.breadcrumb), Fit::Tail));
    // The host logs' findings, whole: the timeline only has room for a word.
    for f in cx.flags {
        let style = match f.severity {
            crate::timeline::flags::Severity::Warn => theme.warning,
            crate::timeline::flags::Severity::Note => theme.status_label,
        };
        lines.push((
            Line::styled(format!("host: {}", f.message()), style),
            Fit::Wrap,
        ));
    }
    // The profile's own warnings, with what to do.
    for f in &cx.lint.findings {
        let text = format!("lint {}: {}", f.kind.code(), f.saw);
        lines.push((
            Line::styled(sanitize(&text).into_owned(), theme.warning),
            Fit::Wrap,
        ));
        lines.push((
            Line::styled(sanitize(&f.advice).into_owned(), theme.status_label),
            Fit::Wrap,
        ));
    }
    lines
}

/// The detail panel's numbers for one profile: total, self, noise, Amdahl.
fn single_detail(l: &Loaded, theme: &crate::ui::chrome::theme::Theme) -> Vec<Line<'static>> {
    let v = l.shown();
    let (tree, st) = (v.tree, v.flame);
    let vt = &v.profile.value_types[tree.options.value];
    let n = st.selected;
    let all = v.all;
    let zoom = tree.total(st.zoom);
    let mut lines = Vec::new();
    let row = |label: &str, v: i64| {
        let mut t = format!("{label} {} · {:.2}% of all", amount(v, vt), percent(v, all));
        if st.zoom != NodeId::ROOT {
            t.push_str(&format!(" · {:.2}% of zoom", percent(v, zoom)));
        }
        t
    };
    lines.push(Line::raw(row("total", tree.total(n))));
    lines.push(Line::raw(row("self ", tree.self_weight(n))));
    let share = percent(tree.total(n), all);
    if let Some(samples) = tree.samples(n) {
        if samples < NOISE_SAMPLES as f64 {
            lines.push(Line::styled(
                format!("noise: {samples} samples cannot be told apart from chance"),
                theme.warning,
            ));
        } else if share >= crate::ui::views::table::HOTSPOT_PERCENT {
            lines.push(Line::styled(
                "hotspot: enough samples and share to act on",
                theme.status_name,
            ));
        }
    }
    if n != NodeId::ROOT && share > 0.0 && share < 100.0 {
        let speedup = 100.0 / (100.0 - share);
        lines.push(Line::raw(format!(
            "Amdahl: making it free saves at most {share:.1}% ({speedup:.2}x)"
        )));
    }
    lines
}
