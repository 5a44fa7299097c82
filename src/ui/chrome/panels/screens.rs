//! Screens over or instead of the profile: the loading progress and the help.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use crate::host::sanitize::sanitize;
use crate::sources::input::Progress;
use crate::ui::app::App;
use crate::ui::chrome::text::{fit, wrap_words};

pub(super) fn draw_loading(
    frame: &mut Frame,
    area: Rect,
    source: &str,
    progress: &Progress,
    secs: f64,
    theme: &crate::ui::chrome::theme::Theme,
    waiting: Option<&str>,
) {
    let w = usize::from(area.width);
    let (read, total) = (progress.read(), progress.total());
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let amount = if total > 0 {
        format!("{:.0} of {:.0} MiB", mib(read.min(total)), mib(total))
    } else {
        format!("{:.0} MiB", mib(read))
    };
    let mut lines = vec![Line::raw(
        fit(&format!("Loading {}", sanitize(source)), w).into_owned(),
    )];
    if let Some(text) = waiting {
        lines.push(Line::styled(
            fit(&sanitize(text), w).into_owned(),
            theme.warning,
        ));
    }
    if total > 0 {
        let frac = (read as f64 / total as f64).clamp(0.0, 1.0);
        let bar_w = w.saturating_sub(8).min(50);
        let done = (frac * bar_w as f64).round() as usize;
        lines.push(Line::styled(
            format!(
                "[{}{}] {:>3.0}%",
                "#".repeat(done),
                ".".repeat(bar_w - done),
                frac * 100.0
            ),
            theme.progress,
        ));
    }
    lines.push(Line::raw(
        fit(&format!("{amount} · {secs:.1} s · q to cancel"), w).into_owned(),
    ));
    let h = lines.len() as u16;
    let y = area.y + area.height.saturating_sub(h) / 2;
    let rect = Rect::new(area.x, y, area.width, h.min(area.height));
    frame.render_widget(
        Paragraph::new(lines).alignment(ratatui::layout::Alignment::Center),
        rect,
    );
}

pub(super) fn draw_help(frame: &mut Frame, area: Rect, app: &mut App) {
    let entries = app.keymap.entries();
    let key_w = entries
        .iter()
        .map(|e| {
            e.keys
                .iter()
                .map(|k| k.label())
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .count()
        })
        .max()
        .unwrap_or(4);
    let help_w = entries
        .iter()
        .map(|e| e.help.chars().count())
        .max()
        .unwrap_or(10);
    let w = (key_w + help_w + 6).min(usize::from(area.width)) as u16;
    // Help wider than the screen wraps at words under its own column.
    let text_w = usize::from(w.saturating_sub(2))
        .saturating_sub(key_w + 2)
        .max(8);
    let wrapped: Vec<Vec<String>> = entries
        .iter()
        .map(|e| wrap_words(&e.help, text_w))
        .collect();
    let rows: usize = wrapped.iter().map(Vec::len).sum();
    let h = (rows + 4).min(usize::from(area.height)) as u16;
    if w < 4 || h < 3 {
        return;
    }
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let mut lines: Vec<Line> = Vec::with_capacity(rows + 2);
    for (e, help) in entries.iter().zip(wrapped) {
        let keys = e
            .keys
            .iter()
            .map(|k| k.label())
            .collect::<Vec<_>>()
            .join(" ");
        for (i, row) in help.into_iter().enumerate() {
            let lead = if i == 0 { keys.as_str() } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!("{lead:<key_w$}  "), app.theme.help_key),
                Span::raw(row),
            ]));
        }
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "Mouse: click selects, double-click zooms, wheel scrolls",
        Style::default(),
    ));
    let visible = usize::from(h.saturating_sub(2));
    let max_scroll = lines.len().saturating_sub(visible);
    app.help_scroll = app.help_scroll.min(max_scroll);
    let title = if max_scroll > 0 {
        " ember keys (↑↓ scroll) "
    } else {
        " ember keys "
    };
    frame.render_widget(Clear, rect);
    let block = Block::bordered()
        .title(title)
        .border_style(app.theme.help_border);
    let scroll = u16::try_from(app.help_scroll).unwrap_or(u16::MAX);
    frame.render_widget(Paragraph::new(lines).block(block).scroll((scroll, 0)), rect);
}
