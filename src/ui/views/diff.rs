//! What the viewer adds for a comparison: the colours and marks of the
//! differential view, the delta table, and the phrases of the header, status
//! line and detail panel. A diff profile is an ordinary profile whose tree knows
//! both sides (`CallTree::pair`), so navigation, search and transforms need
//! nothing from here.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::StatefulWidget;

use crate::host::sanitize::sanitize;
use crate::model::diff::{Change, Compare, DeltaSort, DeltaTable, Norm, Verdict, tree_compare};
use crate::model::{CallTree, FrameId, NodeId, Profile, Unit};
use crate::output::diff::{change_cells, change_summary, relative_text};
use crate::ui::chrome::text::fit;
use crate::ui::chrome::theme::{ColorDepth, Theme};

/// The viewer's comparison settings (kept across reloads and views).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiffSettings {
    pub norm: Norm,
    /// Draw changes within sampling noise as unchanged, and leave them out of
    /// the delta table.
    pub hide_noise: bool,
    /// Before and after as two linked panes instead of one differential view.
    pub split: bool,
}

/// How a frame of the differential view is drawn: its style and the mark put
/// before its name (so colour is not the only signal).
pub fn shade(theme: &Theme, c: &Change, hide_noise: bool) -> (Style, &'static str) {
    let significant = c.verdict == Verdict::Significant;
    let up = c.delta() > 0.0;
    let mark = match () {
        _ if c.is_new() => "+",
        _ if c.is_gone() => "×",
        _ if significant && up => "▲",
        _ if significant && c.delta() < 0.0 => "▼",
        _ => "",
    };
    let neutral = c.delta() == 0.0 || (hide_noise && !significant);
    // Intensity: the relative change, new and gone at full strength; a change
    // within noise stays pale.
    let mut t = c.relative().map_or(1.0, |r| r.abs().min(1.0).sqrt());
    if !significant {
        t *= 0.35;
    }
    let text = theme.frame_text;
    let style = match theme.depth {
        ColorDepth::Mono => text,
        ColorDepth::C16 => text.bg(match () {
            _ if neutral || !significant => Color::Gray,
            _ if up && t > 0.5 => Color::Red,
            _ if up => Color::LightRed,
            _ if t > 0.5 => Color::Blue,
            _ => Color::LightBlue,
        }),
        _ => {
            let lerp = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t) as u8;
            let rgb = if neutral {
                Color::Rgb(215, 215, 215)
            } else if up {
                Color::Rgb(250, lerp(228, 60), lerp(228, 60))
            } else {
                Color::Rgb(lerp(228, 70), lerp(228, 110), 250)
            };
            let mut s = text.bg(theme.degrade(rgb).unwrap_or(Color::Reset));
            if !neutral && !up && t > 0.6 {
                s = s.fg(theme
                    .degrade(Color::Rgb(255, 255, 255))
                    .unwrap_or(Color::Reset));
            }
            s
        }
    };
    let style = if theme.depth == ColorDepth::C16 && !neutral && significant && t > 0.5 {
        style.fg(Color::White)
    } else {
        style
    };
    (style, mark)
}

/// The change of node `n` under `cmp` (`None` when the tree is no diff side).
pub fn node_change(tree: &CallTree, cmp: &Compare, n: NodeId) -> Option<Change> {
    let p = tree.pair(n)?;
    Some(cmp.change(p.total, p.samples))
}

/// The comparison the view draws with, falling back to shares when `norm`
/// cannot be made (per second without durations): the reason comes back too.
pub fn compare(
    profile: &Profile,
    tree: &CallTree,
    norm: Norm,
) -> Option<(Compare, Option<String>)> {
    match tree_compare(profile, tree, norm)? {
        Ok(c) => Some((c, None)),
        Err(why) => match tree_compare(profile, tree, Norm::Share)? {
            Ok(c) => Some((c, Some(why))),
            Err(_) => None,
        },
    }
}

/// The status line's numbers for node `n` of `tree`: total and self, before ->
/// after, with shares of `whole` (the whole profile's tree: a callers or
/// callees pane is rooted at one function, but "of all" means all). The
/// relative change is the one `norm` (the header's) gives, as the detail
/// panel and the delta table give it, and says so.
pub fn status_text(
    profile: &Profile,
    tree: &CallTree,
    n: NodeId,
    whole: &CallTree,
    norm: Norm,
) -> Option<String> {
    let meta = profile.meta.diff.as_deref()?;
    let vt = &profile.value_types[meta.sides[0].value];
    let raw = tree_compare(profile, whole, Norm::Raw)?.ok()?;
    let share = tree_compare(profile, whole, Norm::Share)?.ok()?;
    let (active, _) = compare(profile, whole, norm)?;
    let summary = |label: &str, total: [i64; 2], samples: [f64; 2]| {
        change_summary(
            label,
            [
                &raw.change(total, samples),
                &share.change(total, samples),
                &active.change(total, samples),
            ],
            active.norm,
            &vt.unit,
        )
    };
    let p = tree.pair(n)?;
    let total = summary("total", p.total, p.samples);
    let sp = tree.pair_self(n)?;
    let self_part = summary("self", sp.total, sp.samples);
    Some(format!("{total}  {self_part}"))
}

/// The header's words for a comparison: sides, widths, normalisation, cautions.
/// `table`: the delta table is shown, which hides noise rows (the graphs grey them).
pub fn header_text(
    profile: &Profile,
    tree: &CallTree,
    view: &DiffSettings,
    table: bool,
) -> Option<String> {
    let meta = profile.meta.diff.as_deref()?;
    let side = meta.side_of(tree.options.value);
    let widths = match side {
        _ if tree.options.larger => "widths: larger of the two",
        Some(0) => "widths: before",
        Some(_) => "widths: after",
        None => "widths: samples",
    };
    let (cmp, fallback) = compare(profile, tree, view.norm)?;
    let mut t = format!("{widths} · {}", cmp.norm.short());
    if let Some(why) = fallback {
        t.push_str(&format!(" ({})", sanitize(&why)));
    }
    if view.hide_noise {
        t.push_str(if table {
            " · noise rows hidden"
        } else {
            " · noise greyed"
        });
    }
    for c in &meta.cautions {
        t.push_str(&format!(" · {}", sanitize(c)));
    }
    Some(t)
}

/// The detail panel's lines for node `n` of a comparison (`whole` as in
/// [`status_text`]).
pub fn detail_lines(
    profile: &Profile,
    tree: &CallTree,
    n: NodeId,
    norm: Norm,
    whole: &CallTree,
) -> Vec<String> {
    let mut out = Vec::new();
    let Some(meta) = profile.meta.diff.as_deref() else {
        return out;
    };
    let vt = &profile.value_types[meta.sides[0].value];
    let Some((cmp, _)) = compare(profile, whole, norm) else {
        return out;
    };
    let Some(p) = tree.pair(n) else {
        return out;
    };
    let c = cmp.change(p.total, p.samples);
    let line = |label: &str, c: &Change| {
        let [b, a, d] = change_cells(c, cmp.norm, &vt.unit);
        format!("{label} {b} -> {a} ({d}, {})", relative_text(c))
    };
    out.push(line("total", &c));
    if let Some(sp) = tree.pair_self(n) {
        out.push(line("self ", &cmp.change(sp.total, sp.samples)));
    }
    out.push(format!(
        "samples {:.0} -> {:.0} · z {}",
        c.samples[0],
        c.samples[1],
        c.z.map_or("-".into(), |z| format!("{z:+.1}"))
    ));
    out.push(match c.verdict {
        Verdict::Significant => "significant: beyond sampling noise (|z| >= 3)".into(),
        Verdict::Noise => "within noise: sampling alone could give this".into(),
        Verdict::Few => "too few samples on both sides (< 50) to tell".into(),
    });
    for (i, name) in ["before", "after"].iter().enumerate() {
        if c.thin(i) && c.verdict != Verdict::Few {
            out.push(format!(
                "{name} rests on {:.0} samples (< 50)",
                c.samples[i]
            ));
        }
    }
    out
}

/// The delta table's state: built on first show, sorted by `sort`.
#[derive(Clone, Debug, Default)]
pub struct DeltaState {
    pub cursor: usize,
    pub offset: usize,
    pub sort: DeltaSort,
    pub rows: usize,
    table: Option<DeltaTable>,
    /// Rows shown (indices into the table), after hiding noise.
    shown: Vec<usize>,
    built: Option<(Norm, bool, DeltaSort)>,
}

impl DeltaState {
    /// A table built elsewhere (the job thread) for this view, unless one is
    /// here already.
    pub fn offer(&mut self, table: Option<DeltaTable>) {
        if self.table.is_none() && table.is_some() {
            self.table = table;
            self.built = None;
        }
    }

    /// Builds the table from `tree` (a diff side of `profile`), sorted and
    /// filtered as `view` says.
    pub fn ensure(&mut self, profile: &Profile, tree: &CallTree, view: &DiffSettings) {
        if self.table.is_none() {
            // Usually here already: the view's lint job builds it after the
            // first frame ([`DeltaState::offer`]).
            self.table = DeltaTable::from_samples(profile, tree.options.samples.clone());
            self.built = None;
        }
        let selected = self.selected();
        let Some(table) = &mut self.table else {
            return;
        };
        let key = (view.norm, view.hide_noise, self.sort);
        if self.built == Some(key) {
            return;
        }
        let cmp = table
            .compare(profile, view.norm)
            .or_else(|_| table.compare(profile, Norm::Share));
        let Ok(cmp) = cmp else {
            return;
        };
        table.sort(profile, &cmp, self.sort);
        self.shown = (0..table.rows.len())
            .filter(|&i| {
                let r = &table.rows[i];
                !view.hide_noise
                    || cmp.change(r.self_w, r.self_samples).verdict == Verdict::Significant
                    || cmp.change(r.total, r.total_samples).verdict == Verdict::Significant
            })
            .collect();
        self.built = Some(key);
        self.cursor = selected
            .and_then(|f| self.shown.iter().position(|&i| table.rows[i].frame == f))
            .unwrap_or(0);
    }

    pub fn sort_by(&mut self, key: DeltaSort) {
        self.sort = key;
        self.offset = 0;
    }

    pub fn len(&self) -> usize {
        self.shown.len()
    }

    pub fn is_empty(&self) -> bool {
        self.shown.is_empty()
    }

    pub fn move_by(&mut self, delta: isize) {
        let n = self.len();
        if n > 0 {
            self.cursor = self.cursor.saturating_add_signed(delta).min(n - 1);
        }
    }

    pub fn selected(&self) -> Option<FrameId> {
        let t = self.table.as_ref()?;
        self.shown.get(self.cursor).map(|&i| t.rows[i].frame)
    }
}

/// The delta table: per function self and total before -> after, the change
/// and its verdict.
pub struct DeltaView<'a> {
    pub profile: &'a Profile,
    /// The tree shown in the flame view (a diff side).
    pub tree: &'a CallTree,
    pub theme: &'a Theme,
    pub view: &'a DiffSettings,
}

impl StatefulWidget for DeltaView<'_> {
    type State = DeltaState;

    fn render(self, area: Rect, buf: &mut Buffer, state: &mut DeltaState) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let Some(meta) = self.profile.meta.diff.as_deref() else {
            return;
        };
        let unit = &self.profile.value_types[meta.sides[0].value].unit;
        let Some(table) = &state.table else {
            return;
        };
        let Ok(cmp) = table
            .compare(self.profile, self.view.norm)
            .or_else(|_| table.compare(self.profile, Norm::Share))
        else {
            return;
        };
        let w = usize::from(area.width);
        let rows = usize::from(area.height.saturating_sub(1));
        state.rows = rows;
        state.offset = crate::ui::views::table::keep_in_view(state.cursor, state.offset, rows);
        let arrow = |k: DeltaSort| if state.sort == k { "▼" } else { "" };
        // Counts say their unit once, in the header: "938 samples" in each
        // of six cells leaves no room for the name at 80 columns.
        let counted = matches!(unit, Unit::Samples | Unit::Count) && cmp.norm != Norm::Share;
        let suffix = format!(" {}", unit.name());
        let cells = |c: &Change| {
            change_cells(c, cmp.norm, unit).map(|x| match x.strip_suffix(suffix.as_str()) {
                Some(bare) if counted => bare.to_string(),
                _ => x,
            })
        };
        let name_head = if counted {
            format!("name ({})", unit.name())
        } else {
            "name".to_string()
        };
        let header = format!(
            "  {:>9} {:>9} {:>10} {:>9} {:>9} {:>10} {:>8}  {name_head}",
            "self bef",
            "self aft",
            format!("Δself{}", arrow(DeltaSort::SelfDelta)),
            "total bef",
            "total aft",
            format!("Δtotal{}", arrow(DeltaSort::TotalDelta)),
            format!("rel{}", arrow(DeltaSort::Relative)),
        );
        buf.set_stringn(
            area.x,
            area.y,
            fit(&header, w),
            w,
            self.theme.status_label.add_modifier(Modifier::BOLD),
        );
        let shown: Vec<usize> = state
            .shown
            .iter()
            .copied()
            .skip(state.offset)
            .take(rows)
            .collect();
        for (k, i) in shown.into_iter().enumerate() {
            let r = &table.rows[i];
            let y = area.y + 1 + k as u16;
            let s = cmp.change(r.self_w, r.self_samples);
            let t = cmp.change(r.total, r.total_samples);
            let lead = if s.verdict == Verdict::Significant {
                &s
            } else {
                &t
            };
            let (paint, mark) = shade(self.theme, lead, self.view.hide_noise);
            let mark = if mark.is_empty() { " " } else { mark };
            let name = sanitize(&self.profile.frames.name(r.frame)).into_owned();
            let [sb, sa, sd] = cells(&s);
            let [tb, ta, td] = cells(&t);
            let line = format!(
                "{mark} {sb:>9} {sa:>9} {sd:>10} {tb:>9} {ta:>9} {td:>10} {:>8}  {name}",
                relative_text(&t),
            );
            let mut style = Style::default();
            if lead.verdict != Verdict::Significant {
                style = style.add_modifier(Modifier::DIM);
            }
            if k + state.offset == state.cursor {
                style = style.patch(self.theme.selected);
            }
            buf.set_style(Rect::new(area.x, y, area.width, 1), style);
            buf.set_stringn(area.x, y, fit(&line, w), w, style);
            // The mark cell carries the change's colour.
            if self.theme.depth != ColorDepth::Mono {
                buf.set_style(Rect::new(area.x, y, 1, 1), paint);
            }
        }
    }
}
