//! The linked before | after view of a comparison: the active side's pane and
//! the other side's (`Loaded::pair`), each a flame widget, with a placeholder
//! where the selected frame is missing on one side.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use crate::host::sanitize::sanitize;
use crate::model::{CallTree, NodeId, Profile};
use crate::ui::chrome::text::fit;
use crate::ui::chrome::theme::Theme;
use crate::ui::loaded::live_ancestor;

/// Before and after side by side (stacked when the screen is narrow), linked:
/// keys move the active side (the one the widths come from) and the other
/// follows by frame path. A selected frame missing on one side is drawn there
/// as a placeholder under its deepest ancestor that exists.
pub fn draw_split(
    frame: &mut ratatui::Frame,
    area: Rect,
    l: &mut crate::ui::loaded::Loaded,
    theme: &Theme,
    matches: Option<&crate::model::search::Matches>,
    paint: Option<crate::ui::views::flame::DiffPaint<'_>>,
) {
    use ratatui::layout::{Constraint, Layout};
    let Some(meta) = l.profile.meta.diff.clone() else {
        return;
    };
    let active = meta.side_of(l.tree.options.value).unwrap_or(1);
    // Without the other side's pane (the job thread is building it), this
    // side is drawn and the other says it is coming.
    if l.ensure_pair().is_none() && l.pair_asked.is_none() {
        return;
    }
    let [first, second] = if area.width >= 100 {
        Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(area)
    } else {
        Layout::vertical([Constraint::Fill(1), Constraint::Fill(1)]).areas(area)
    };
    let selected = l.flame.selected;
    let name = l
        .tree
        .frame(&l.profile, selected)
        .map(|f| sanitize(&l.profile.frames.name(f)).into_owned());
    for (side, rect) in [(0usize, first), (1usize, second)] {
        if rect.height < 2 {
            continue;
        }
        let [title, graph] =
            Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(rect);
        let PaneParts { tree, flame: state } = if side == active {
            PaneParts {
                tree: &l.tree,
                flame: &mut l.flame,
            }
        } else {
            match l.pair.as_deref_mut() {
                Some(p) => PaneParts {
                    tree: &p.tree,
                    flame: &mut p.flame,
                },
                None => {
                    let text = format!(
                        " {} · {} · building this side…",
                        if side == 0 { "before" } else { "after" },
                        sanitize(&meta.sides[side].name)
                    );
                    frame.render_widget(
                        ratatui::widgets::Paragraph::new(
                            fit(&text, usize::from(title.width)).into_owned(),
                        )
                        .style(theme.header),
                        title,
                    );
                    continue;
                }
            }
        };
        let missing = tree.total(selected) == 0 && selected != NodeId::ROOT;
        let pairs = (side != active).then_some(&*l.tree);
        let mut text = format!(
            " {} · {}",
            if side == 0 { "before" } else { "after" },
            sanitize(&meta.sides[side].name)
        );
        if side == active {
            text.push_str(" · keys move this side");
        }
        if missing && let Some(n) = &name {
            text.push_str(&format!(" · {n} is not here (∅)"));
        }
        let style = if side == active {
            theme.header_accent
        } else {
            theme.header
        };
        frame.render_widget(
            ratatui::widgets::Paragraph::new(fit(&text, usize::from(title.width)).into_owned())
                .style(style),
            title,
        );
        let widget = crate::ui::views::flame::FlameView {
            profile: &l.profile,
            tree,
            theme,
            matches,
            diff: paint.map(|d| crate::ui::views::flame::DiffPaint { pairs, ..d }),
        };
        frame.render_stateful_widget(widget, graph, state);
        if missing {
            placeholder(
                frame.buffer_mut(),
                graph,
                state,
                tree,
                &l.profile,
                selected,
                theme,
            );
        }
    }
}

/// Borrowed pane parts (the active side's live in `Loaded`, the other's in its
/// `PairPane`).
struct PaneParts<'a> {
    tree: &'a CallTree,
    flame: &'a mut crate::ui::views::flame_state::FlameState,
}

/// Marks where the missing node would be: a `∅` one row below its deepest
/// drawn ancestor, on the seam where it would sort among that ancestor's
/// children (by name, or last when heaviest come first).
fn placeholder(
    buf: &mut Buffer,
    area: Rect,
    state: &crate::ui::views::flame_state::FlameState,
    tree: &CallTree,
    profile: &Profile,
    missing: NodeId,
    theme: &Theme,
) {
    let anchor = live_ancestor(tree, profile, missing);
    let Some(hit) = state.layout.iter().find(|h| h.node == anchor) else {
        return;
    };
    let depth = hit.depth + 1;
    if depth < state.scroll || depth >= state.scroll + usize::from(area.height) {
        return;
    }
    // The missing path's node right below the anchor.
    let mut below = missing;
    while let Some(p) = tree.parent(profile, below)
        && p != anchor
    {
        below = p;
    }
    let name_of = |n: NodeId| tree.frame(profile, n).map(|f| profile.frames.raw(f));
    let mut kids: Vec<&crate::ui::views::flame_state::FlameHit> = state
        .layout
        .iter()
        .filter(|h| h.depth == depth && tree.parent(profile, h.node) == Some(anchor))
        .collect();
    kids.sort_by_key(|h| h.x0);
    let before_it = kids.iter().take_while(|h| match tree.options.order {
        crate::model::ChildOrder::Name => name_of(h.node) < name_of(below),
        crate::model::ChildOrder::Weight => true,
    });
    let x = before_it.last().map_or(hit.x0, |h| h.x1.saturating_sub(1));
    let row = (depth - state.scroll) as u16;
    let y = match state.orientation {
        crate::ui::views::flame_state::Orientation::Icicle => area.y + row,
        crate::ui::views::flame_state::Orientation::Flame => area.y + area.height - 1 - row,
    };
    if x < area.width {
        buf.set_stringn(
            area.x + x,
            y,
            "∅",
            1,
            theme.warning.add_modifier(Modifier::REVERSED),
        );
    }
}
