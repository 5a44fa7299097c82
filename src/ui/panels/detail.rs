//! The detail panel: the selected frame's full name, its place, weights and
//! what the lint or the host context says about it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph};

use super::{Context, amount, breadcrumb, selected_name, wrap};
use crate::model::{NOISE_SAMPLES, NodeId};
use crate::output::percent;
use crate::sanitize::sanitize;
use crate::ui::app::Loaded;
use crate::ui::text::{fit, fit_left};

/// The detail panel: where the selected frame comes from and what its numbers mean.
pub(super) fn draw_detail(
    frame: &mut Frame,
    area: Rect,
    l: &Loaded,
    theme: &crate::ui::theme::Theme,
    cx: &Context,
) {
    let diff = cx.diff;
    let v = l.shown();
    let (p, tree, st) = (v.profile, v.tree, v.flame);
    let inner_w = usize::from(area.width.saturating_sub(2)).max(1);
    let n = st.selected;
    let mut lines: Vec<Line> = wrap(&selected_name(l), inner_w, 3)
        .into_iter()
        .map(|x| Line::styled(x, theme.status_name))
        .collect();
    if let Some(m) = tree.frame(p, n).and_then(|f| p.frame_meta.get(&f)) {
        if let Some(file) = &m.file {
            let loc = match m.line {
                Some(line) => format!("{}:{line}", sanitize(file)),
                None => sanitize(file).into_owned(),
            };
            lines.push(Line::raw(fit(&loc, inner_w).into_owned()));
        }
        if let Some(object) = &m.object {
            // The binary's path is its tail that matters: keep the end.
            let text = format!("in {}", sanitize(object));
            lines.push(Line::styled(fit_left(&text, inner_w), theme.status_label));
        }
        let kind = match m.kind {
            crate::model::FrameKind::Kernel => Some("kernel code"),
            crate::model::FrameKind::Inlined => Some("inlined"),
            crate::model::FrameKind::Jit => Some("JIT-compiled"),
            crate::model::FrameKind::Normal => None,
        };
        if let Some(k) = kind {
            lines.push(Line::styled(k, theme.status_label));
        }
    }
    if p.meta.diff.is_some() {
        for text in crate::ui::diff::detail_lines(p, tree, n, diff.norm, &l.tree) {
            lines.push(Line::raw(fit(&text, inner_w).into_owned()));
        }
    } else {
        lines.extend(single_detail(l, theme, inner_w));
    }
    lines.push(Line::styled(
        fit_left(&breadcrumb(l), inner_w),
        theme.breadcrumb,
    ));
    // The host logs' findings, whole: the timeline only has room for a word.
    for f in cx.flags {
        let style = match f.severity {
            crate::timeline::flags::Severity::Warn => theme.warning,
            crate::timeline::flags::Severity::Note => theme.status_label,
        };
        for row in wrap(&format!("host: {}", f.message()), inner_w, 4) {
            lines.push(Line::styled(row, style));
        }
    }
    // The profile's own warnings, with what to do.
    for f in &cx.lint.findings {
        let text = format!("lint {}: {}", f.kind.code(), f.saw);
        for row in wrap(&sanitize(&text), inner_w, 3) {
            lines.push(Line::styled(row, theme.warning));
        }
        for row in wrap(&sanitize(&f.advice), inner_w, 3) {
            lines.push(Line::styled(row, theme.status_label));
        }
    }
    let block = Block::bordered()
        .title(" detail ")
        .border_style(theme.help_border);
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The detail panel's numbers for one profile: total, self, noise, Amdahl.
fn single_detail(
    l: &Loaded,
    theme: &crate::ui::theme::Theme,
    inner_w: usize,
) -> Vec<Line<'static>> {
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
    lines.push(Line::raw(
        fit(&row("total", tree.total(n)), inner_w).into_owned(),
    ));
    lines.push(Line::raw(
        fit(&row("self ", tree.self_weight(n)), inner_w).into_owned(),
    ));
    let share = percent(tree.total(n), all);
    if let Some(samples) = tree.samples(n) {
        if samples < NOISE_SAMPLES as f64 {
            lines.push(Line::styled(
                fit(
                    &format!("noise: {samples} samples cannot be told apart from chance"),
                    inner_w,
                )
                .into_owned(),
                theme.warning,
            ));
        } else if share >= crate::ui::table::HOTSPOT_PERCENT {
            lines.push(Line::styled(
                fit("hotspot: enough samples and share to act on", inner_w).into_owned(),
                theme.status_name,
            ));
        }
    }
    if n != NodeId::ROOT && share > 0.0 && share < 100.0 {
        let speedup = 100.0 / (100.0 - share);
        lines.push(Line::raw(
            fit(
                &format!("Amdahl: making it free saves at most {share:.1}% ({speedup:.2}x)"),
                inner_w,
            )
            .into_owned(),
        ));
    }
    lines
}
