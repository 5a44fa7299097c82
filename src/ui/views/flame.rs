//! The icicle / flame widget. Draws only what is visible: a frame narrower than
//! one cell is not visited, so a redraw costs at most a screenful of frames.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::StatefulWidget;

use crate::model::search::Matches;
use crate::model::{CallTree, NOISE_SAMPLES, NodeId, Profile};
use crate::ui::chrome::text::fit;
use crate::ui::chrome::theme::{ColorDepth, Theme};
use crate::ui::views::flame_state::{FlameHit, FlameState, Orientation};

/// The label of the synthetic root.
pub const ROOT_LABEL: &str = "all";

pub struct FlameView<'a> {
    pub profile: &'a Profile,
    pub tree: &'a CallTree,
    pub theme: &'a Theme,
    /// Frames to highlight (an active search).
    pub matches: Option<&'a Matches>,
    /// A comparison: frames coloured by their change under this comparison
    /// (and drawn neutral when within noise and `hide_noise`).
    pub diff: Option<DiffPaint<'a>>,
}

/// How the differential view colours frames.
#[derive(Clone, Copy)]
pub struct DiffPaint<'a> {
    pub compare: &'a crate::model::diff::Compare,
    pub hide_noise: bool,
    /// The tree that knows both sides of each node, when not the drawn one (the
    /// second pane of the linked view: same stack table, same node ids).
    pub pairs: Option<&'a CallTree>,
}

impl StatefulWidget for FlameView<'_> {
    type State = FlameState;

    fn render(self, area: Rect, buf: &mut Buffer, state: &mut FlameState) {
        state.rows = usize::from(area.height);
        state.origin = (area.x, area.y);
        state.layout.clear();
        state.more_below = false;
        if area.width == 0 || area.height == 0 {
            return;
        }
        let (tree, profile) = (self.tree, self.profile);
        let total = tree.total(state.zoom);
        if total <= 0 {
            buf.set_stringn(
                area.x,
                area.y,
                "no samples here",
                usize::from(area.width),
                Style::default(),
            );
            return;
        }
        // The selection's ancestors, root first; ids ascend along a path.
        let ancestry = tree.ancestry(profile, state.selected);
        let rows = usize::from(area.height);
        let width = f64::from(area.width);
        let scale = width / total as f64;
        let mut stack: Vec<(NodeId, f64, usize)> = vec![(state.zoom, 0.0, 0)];
        while let Some((node, x, depth)) = stack.pop() {
            let w = tree.total(node) as f64 * scale;
            let c0 = x.round().clamp(0.0, width) as u16;
            let c1 = (x + w).round().clamp(0.0, width) as u16;
            if c1 <= c0 {
                continue;
            }
            if depth >= state.scroll + rows {
                state.more_below = true;
                continue;
            }
            if depth >= state.scroll {
                let row = depth - state.scroll;
                let y = match state.orientation {
                    Orientation::Icicle => area.y + row as u16,
                    Orientation::Flame => area.y + (rows - 1 - row) as u16,
                };
                let role = if node == state.selected {
                    Role::Selected
                } else if ancestry.binary_search(&node).is_ok() {
                    Role::Ancestor
                } else {
                    Role::Plain
                };
                self.draw_frame(buf, node, area.x + c0, area.x + c1, y, role);
                state.layout.push(FlameHit {
                    node,
                    depth,
                    x0: c0,
                    x1: c1,
                });
            }
            let mut cx = x;
            for c in tree.child_ids(node) {
                let cw = tree.total(c) as f64 * scale;
                if cw > 0.0 {
                    stack.push((c, cx, depth + 1));
                    cx += cw;
                }
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Plain,
    Ancestor,
    Selected,
}

impl FlameView<'_> {
    fn draw_frame(&self, buf: &mut Buffer, node: NodeId, x0: u16, x1: u16, y: u16, role: Role) {
        let theme = self.theme;
        let frame = self.tree.frame(self.profile, node);
        let matched = frame.is_some_and(|f| self.matches.is_some_and(|m| m.is_match(f)));
        let (mut label, mut base) = match frame {
            None => (std::borrow::Cow::Borrowed(ROOT_LABEL), theme.root),
            Some(f) => (
                self.profile.frames.name(f),
                theme.frame(self.profile.frames.raw(f)),
            ),
        };
        if let Some(d) = self.diff
            && let Some(c) =
                crate::ui::views::diff::node_change(d.pairs.unwrap_or(self.tree), d.compare, node)
            && frame.is_some()
        {
            let (style, mark) = crate::ui::views::diff::shade(theme, &c, d.hide_noise);
            base = style;
            if !mark.is_empty() {
                label = std::borrow::Cow::Owned(format!("{mark}{label}"));
            }
        }
        if matched {
            base = base.patch(theme.matched);
            if theme.depth == ColorDepth::Mono {
                // Without colour, a mark in the text says "match".
                label = std::borrow::Cow::Owned(format!("*{label}"));
            }
        }
        // A frame resting on fewer samples than chance can explain is drawn dim.
        if self
            .tree
            .samples(node)
            .is_some_and(|n| n < NOISE_SAMPLES as f64)
        {
            base = base.add_modifier(ratatui::style::Modifier::DIM);
        }
        let style = match role {
            Role::Plain => base,
            Role::Ancestor => base.patch(theme.ancestor),
            Role::Selected => base.patch(theme.selected),
        };
        let w = x1 - x0;
        buf.set_style(Rect::new(x0, y, w, 1), style);
        // The last cell is left blank as a separator between neighbours; without
        // colour it gets a bar so frames stay apart.
        // Labels need a few cells to say anything; narrower frames are colour only.
        let text_w = usize::from(w.saturating_sub(1));
        if text_w >= 3 {
            buf.set_stringn(x0, y, fit(&label, text_w), text_w, style);
        }
        if theme.depth == ColorDepth::Mono && w > 1 {
            buf.set_stringn(x1 - 1, y, "|", 1, style);
        }
    }
}
