//! Everything around the graph: header, status, help, and the loading screen.

use crate::output::amount;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use crate::model::search::SearchMode;
use crate::model::{NOISE_SAMPLES, NodeId};
use crate::model::{Unit, ValueType};
use crate::output::{human, percent, value_grouped};
use crate::ui::app::{App, Loaded, SearchState, View};
use crate::ui::chrome::keymap::Action;
use crate::ui::chrome::text::{fit, fit_left};
use crate::ui::views::diff::{DeltaView, DiffSettings};
use crate::ui::views::flame::{DiffPaint, FlameView, ROOT_LABEL};
use crate::ui::views::table::TableView;

/// "17,728,380 samples", "281 samples" (a pprof count of samples), or
/// "1.44 s cpu" when the profile has several value types.
fn total_label(v: i64, vt: &ValueType, types: usize) -> String {
    let kind = sanitize(&vt.kind);
    match vt.unit {
        Unit::Samples if types == 1 || vt.kind == vt.unit.name() => {
            format!("{} samples", value_grouped(v, vt))
        }
        Unit::Samples => format!("{} samples {kind}", value_grouped(v, vt)),
        // A count says what it counts: "281 samples", "12,000 objects".
        Unit::Count => format!("{} {kind}", value_grouped(v, vt)),
        _ => format!("{} {kind}", human(v, vt)),
    }
}
use crate::host::sanitize::sanitize;

mod detail;
mod header;
mod screens;
mod split;
use detail::draw_detail;
use screens::{draw_help, draw_loading};

/// Draws the whole screen for the current phase.
/// What it draws was made ready by [`App::prepare_frame`]; use
/// [`crate::ui::draw_frame`], which calls both.
pub fn draw(frame: &mut Frame, app: &mut App) {
    let area = frame.area();
    let help_key = app
        .keymap
        .key_for(Action::Help)
        .unwrap_or_else(|| "?".into());
    let busy = app.busy_text();
    match &mut app.phase {
        crate::ui::app::Phase::Loading { progress, started } => {
            let waiting = app.live.as_ref().and_then(|l| l.status.problem.as_deref());
            draw_loading(
                frame,
                area,
                &app.source_name,
                progress,
                started.elapsed().as_secs_f64(),
                &app.theme,
                waiting,
            );
        }
        crate::ui::app::Phase::Ready(loaded) => {
            let flags = app.timeline.flags.clone();
            let cx = DrawContext {
                flags: &flags,
                source: &app.source_name,
                theme: &app.theme,
                help_key: &help_key,
                search: &app.search,
                view: app.view,
                show_detail: app.show_detail,
                live: app.live.as_ref(),
                busy: busy.as_deref(),
                diff: &app.diff,
                prompt: &app.prompt,
                lint: &app.lint,
            };
            draw_loaded(
                frame,
                area,
                loaded,
                &cx,
                &mut app.timeline,
                app.source.as_deref_mut(),
            );
        }
    }
    if app.show_help {
        draw_help(frame, area, app);
    }
}

/// Everything but the profile that a loaded screen shows.
struct DrawContext<'a> {
    source: &'a str,
    theme: &'a crate::ui::chrome::theme::Theme,
    help_key: &'a str,
    search: &'a SearchState,
    view: View,
    show_detail: bool,
    live: Option<&'a crate::ui::runtime::live::Live>,
    /// What the job thread is doing.
    busy: Option<&'a str>,
    diff: &'a DiffSettings,
    /// What the host logs say about the window on screen.
    flags: &'a [crate::timeline::flags::Flag],
    /// The prompt row: a question (export to?) or the last command's word.
    prompt: &'a crate::ui::chrome::prompt::PromptState,
    /// What makes the profile mislead.
    lint: &'a crate::ui::chrome::lint::LintState,
}

fn draw_loaded(
    frame: &mut Frame,
    area: Rect,
    l: &mut Loaded,
    cx: &DrawContext,
    timeline: &mut crate::ui::views::timeline::TimelineState,
    source: Option<&mut crate::ui::views::source::SourcePane>,
) {
    let (theme, search, view, show_detail) = (cx.theme, cx.search, cx.view, cx.show_detail);
    let name = match view {
        View::Flame | View::Inverted | View::Sandwich => selected_name(l),
        View::Table if l.profile.meta.diff.is_some() => {
            l.delta.selected().map_or_else(String::new, |f| {
                sanitize(&l.profile.frames.name(f)).into_owned()
            })
        }
        View::Table => l.table.selected().map_or_else(String::new, |f| {
            sanitize(&l.profile.frames.name(f)).into_owned()
        }),
    };
    // The full name, wrapped over as many rows as the screen can spare.
    let max_rows = match area.height {
        0..=11 => 1,
        12..=19 => 2,
        _ => 4,
    };
    let needed = unicode_cols(&name)
        .div_ceil(usize::from(area.width.max(1)))
        .max(1);
    let name_rows = needed.min(max_rows) as u16;
    let search_h = u16::from(
        area.height >= 6
            && (search.editing || search.active() || search.error.is_some() || cx.prompt.shown()),
    );
    let mut head = header::header(l, cx);
    // A --context or --marks file that was refused leaves the timeline hidden,
    // and its pane would be the only place that says why: say it up here.
    if !timeline.shown {
        for note in &timeline.notes {
            head.warn(note);
        }
    }
    let (header_h, status_h) = match area.height {
        0..=3 => (0, 0),
        4..=7 => (0, 2 + search_h),
        8..=11 => (1, 2 + name_rows + search_h),
        _ => (head.rows(area.width), 2 + name_rows + search_h),
    };
    let [header, graph, search_area, status] = Layout::vertical([
        Constraint::Length(header_h),
        Constraint::Min(1),
        Constraint::Length(search_h),
        Constraint::Length(status_h - search_h.min(status_h)),
    ])
    .areas(area);
    if header_h > 0 {
        head.draw(frame, header);
    }
    // The timeline takes the bottom of the graph's room, up to two fifths.
    let graph = if timeline.shown && graph.height >= 8 {
        let room = if timeline.tall {
            graph.height * 2 / 3
        } else {
            graph.height * 2 / 5
        };
        let h = timeline.rows_wanted().min(room.max(3));
        let [g, t] = Layout::vertical([Constraint::Min(3), Constraint::Length(h)]).areas(graph);
        let value = l.tree.options.value;
        let range = l.time_window();
        let pane = crate::ui::views::timeline::TimelineData {
            profile: l.loaded_profile(),
            value,
            range,
            shown_samples: l.tree.samples(NodeId::ROOT),
            theme: cx.theme,
        };
        crate::ui::views::timeline::draw(frame.buffer_mut(), t, timeline, &pane);
        g
    } else {
        graph
    };
    // The detail panel takes the right side of a wide screen, else the bottom.
    let (graph, detail) = if show_detail && view != View::Table && graph.height >= 6 {
        if graph.width >= 100 {
            let w = detail::width(l, theme, cx, graph.width);
            let [g, d] =
                Layout::horizontal([Constraint::Min(40), Constraint::Length(w)]).areas(graph);
            (g, Some(d))
        } else {
            let [g, d] = Layout::vertical([Constraint::Min(3), Constraint::Length(9)]).areas(graph);
            (g, Some(d))
        }
    } else {
        (graph, None)
    };
    if let Some(d) = detail {
        draw_detail(frame, d, l, theme, cx);
    }
    // A comparison colours by change under the whole profile's comparison, in
    // every flame pane (the sandwich's too).
    let paint = crate::ui::views::diff::compare(&l.profile, &l.tree, cx.diff.norm).map(|c| c.0);
    if let Some(pane) = source {
        // The source pane (`L`) over the view while it is open.
        let widget = crate::ui::views::source::SourceView { theme };
        frame.render_stateful_widget(widget, graph, pane);
    } else {
        match view {
            View::Inverted if !l.inverted => {
                // Still being built on the job thread.
                let text = format!(
                    "{}…",
                    sanitize(cx.busy.unwrap_or("building the inverted view"))
                );
                frame.render_widget(Paragraph::new(text).style(theme.status_label), graph);
            }
            View::Flame | View::Inverted if cx.diff.split && l.profile.meta.diff.is_some() => {
                let paint = paint.as_ref().map(|c| DiffPaint {
                    compare: c,
                    hide_noise: cx.diff.hide_noise,
                    pairs: None,
                });
                split::draw_split(frame, graph, l, theme, search.matches.as_ref(), paint);
            }
            View::Flame | View::Inverted => {
                let widget = FlameView {
                    profile: &l.profile,
                    tree: &l.tree,
                    theme,
                    matches: search.matches.as_ref(),
                    diff: paint.as_ref().map(|c| DiffPaint {
                        compare: c,
                        hide_noise: cx.diff.hide_noise,
                        pairs: None,
                    }),
                };
                frame.render_stateful_widget(widget, graph, &mut l.flame);
            }
            View::Sandwich => match l.sandwich.as_deref_mut() {
                Some(sw) => sw.draw(
                    frame,
                    graph,
                    theme,
                    search.matches.as_ref(),
                    paint.as_ref().map(|c| DiffPaint {
                        compare: c,
                        hide_noise: cx.diff.hide_noise,
                        pairs: None,
                    }),
                ),
                None => frame.render_widget(Paragraph::new("no function chosen"), graph),
            },
            View::Table if l.profile.meta.diff.is_some() => {
                let widget = DeltaView {
                    profile: &l.profile,
                    tree: &l.tree,
                    theme,
                    view: cx.diff,
                };
                frame.render_stateful_widget(widget, graph, &mut l.delta);
            }
            View::Table => {
                let widget = TableView {
                    profile: &l.profile,
                    tree: &l.tree,
                    theme,
                };
                frame.render_stateful_widget(widget, graph, &mut l.table);
            }
        }
    }
    if search_h > 0 {
        match cx.prompt.text() {
            Some((text, bad)) => {
                let style = if bad { theme.warning } else { theme.search };
                let text = fit(&text, usize::from(search_area.width)).into_owned();
                frame.render_widget(Paragraph::new(Line::styled(text, style)), search_area);
            }
            None => draw_search(frame, search_area, l, theme, search),
        }
    }
    if status.height > 0 {
        let rows = name_rows.min(status.height.saturating_sub(1)).max(1);
        match view {
            View::Flame | View::Inverted | View::Sandwich => {
                draw_status(frame, status, l, theme, (&name, rows), cx.diff.norm)
            }
            View::Table => draw_table_status(frame, status, l, theme, &name, rows),
        }
    }
}

/// The table's status: the row's full name and what its numbers mean.
fn draw_table_status(
    frame: &mut Frame,
    area: Rect,
    l: &Loaded,
    theme: &crate::ui::chrome::theme::Theme,
    name: &str,
    name_rows: u16,
) {
    let w = usize::from(area.width);
    let mut lines: Vec<Line> = wrap(name, w, usize::from(name_rows.max(1)))
        .into_iter()
        .map(|x| Line::styled(x, theme.status_name))
        .collect();
    let help = if l.profile.meta.diff.is_some() {
        format!(
            "{} functions · before -> after · ▲▼ significant (|z| ≥ 3, two-proportion test on samples), dim: within noise · 1 Δself 2 Δtotal 3 relative · x hide noise · = normalisation",
            l.delta.len()
        )
    } else {
        format!(
            "{} functions · total counts a function once per stack · ● hotspot (≥{} samples, ≥{}% of all) · dim: under {} samples, noise",
            l.table.len(),
            NOISE_SAMPLES,
            crate::ui::views::table::HOTSPOT_PERCENT,
            NOISE_SAMPLES
        )
    };
    lines.push(Line::styled(fit(&help, w).into_owned(), theme.status_label));
    frame.render_widget(Paragraph::new(lines), area);
}

/// "/query▏ fuzzy · 12 frames · 34.50% of samples · 56.70% of zoom".
fn draw_search(
    frame: &mut Frame,
    area: Rect,
    l: &Loaded,
    theme: &crate::ui::chrome::theme::Theme,
    s: &SearchState,
) {
    let w = usize::from(area.width);
    let mode = match (s.query.mode, s.query.case_sensitive) {
        (SearchMode::Fuzzy, false) => "fuzzy",
        (SearchMode::Fuzzy, true) => "fuzzy, exact case",
        (SearchMode::Regex, false) => "regex",
        (SearchMode::Regex, true) => "regex, exact case",
    };
    let cursor = if s.editing { "▏" } else { "" };
    let mut text = format!("/{}{cursor}  [{mode}]", sanitize(&s.query.text));
    let style = if let Some(e) = &s.error {
        text.push_str(&format!("  {}", sanitize(e.lines().last().unwrap_or(e))));
        theme.warning
    } else if let Some(m) = &s.matches {
        let v = l.shown();
        let all = v.tree.total(NodeId::ROOT);
        let zoom = v.tree.total(v.flame.zoom);
        match &l.sandwich {
            // A callers or callees pane holds only the samples through its
            // function: say the share is of those, then of the whole profile.
            Some(sw) => {
                let name = sanitize(&l.profile.frames.name(sw.function)).into_owned();
                text.push_str(&format!(
                    "  {} frames · {:.2}% of the samples through {} · {:.2}% of all",
                    m.count,
                    percent(s.coverage.0, all),
                    crate::ui::chrome::text::fit(&name, 40),
                    percent(s.coverage.0, v.all)
                ));
            }
            None => text.push_str(&format!(
                "  {} frames · {:.2}% of samples",
                m.count,
                percent(s.coverage.0, all)
            )),
        }
        if v.flame.zoom != NodeId::ROOT {
            text.push_str(&format!(" · {:.2}% of zoom", percent(s.coverage.1, zoom)));
        }
        theme.search
    } else {
        theme.search
    };
    frame.render_widget(
        Paragraph::new(Line::styled(fit(&text, w).into_owned(), style)),
        area,
    );
}

fn selected_name(l: &Loaded) -> String {
    let v = l.shown();
    match v.tree.frame(v.profile, v.flame.selected) {
        Some(f) => sanitize(&v.profile.frames.name(f)).into_owned(),
        None => ROOT_LABEL.to_string(),
    }
}

fn unicode_cols(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

fn draw_status(
    frame: &mut Frame,
    area: Rect,
    l: &Loaded,
    theme: &crate::ui::chrome::theme::Theme,
    (name, name_rows): (&str, u16),
    norm: crate::model::diff::Norm,
) {
    let v = l.shown();
    let (p, tree, st) = (v.profile, v.tree, v.flame);
    let vt = &p.value_types[tree.options.value];
    let w = usize::from(area.width);
    let all = v.all;
    let zoom_total = tree.total(st.zoom);
    let n = st.selected;
    let stat = |label: &str, v: i64| {
        let mut s = format!("{label} {} ({:.2}% of all", amount(v, vt), percent(v, all));
        if st.zoom != NodeId::ROOT {
            s.push_str(&format!(", {:.2}% of zoom", percent(v, zoom_total)));
        }
        s.push(')');
        s
    };
    let stats =
        crate::ui::views::diff::status_text(p, tree, n, &l.tree, norm).unwrap_or_else(|| {
            format!(
                "{}  {}  · {}",
                stat("total", tree.total(n)),
                stat("self", tree.self_weight(n)),
                total_label(all, vt, p.value_types.len()),
            )
        });
    let mut lines: Vec<Line> = wrap(name, w, usize::from(name_rows.max(1)))
        .into_iter()
        .map(|l| Line::styled(l, theme.status_name))
        .collect();
    lines.push(Line::styled(
        fit(&stats, w).into_owned(),
        theme.status_label,
    ));
    if area.height as usize > lines.len() {
        lines.push(Line::styled(fit_left(&breadcrumb(l), w), theme.breadcrumb));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// `s` in rows of `width` columns, at most `rows` of them, the last cut with `…`.
fn wrap(s: &str, width: usize, rows: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthChar;
    let mut out = Vec::new();
    let mut rest = s;
    while out.len() + 1 < rows && unicode_cols(rest) > width && width > 0 {
        let mut used = 0;
        let mut cut = rest.len();
        for (i, c) in rest.char_indices() {
            let cw = c.width().unwrap_or(0);
            if used + cw > width {
                cut = i;
                break;
            }
            used += cw;
        }
        if cut == 0 {
            break;
        }
        out.push(rest[..cut].to_string());
        rest = &rest[cut..];
    }
    out.push(fit(rest, width).into_owned());
    out
}

/// "all › main › run › leaf", the path from the root to the selection.
pub fn breadcrumb(l: &Loaded) -> String {
    let v = l.shown();
    let names: Vec<String> = v
        .tree
        .ancestry(v.profile, v.flame.selected)
        .iter()
        .map(|&n| match v.tree.frame(v.profile, n) {
            Some(f) => sanitize(&v.profile.frames.name(f)).into_owned(),
            None => ROOT_LABEL.to_string(),
        })
        .collect();
    names.join(" › ")
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wraps_long_names_and_cuts_the_last_row() {
        assert_eq!(wrap("abcdefgh", 3, 4), ["abc", "def", "gh"]);
        assert_eq!(wrap("abcdefgh", 3, 2), ["abc", "de…"]);
        assert_eq!(wrap("abc", 10, 3), ["abc"]);
        assert_eq!(wrap("abc", 0, 3), [""]);
    }
}
