//! The callers / callees ("sandwich") view of one function: its callers as a
//! flame growing upward above it, its callees as an icicle hanging below it, both
//! merged across every place the function occurs. Each pane is an ordinary
//! profile, tree and flame state, so the flame widget and its navigation serve
//! both; this module only adds the seam between them.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::host::sanitize::sanitize;
use crate::model::search::Matches;
use crate::model::{CallTree, FrameId, NodeId, Profile, TreeOptions, sandwich};
use crate::ui::chrome::text::fit;
use crate::ui::chrome::theme::Theme;
use crate::ui::views::flame::FlameView;
use crate::ui::views::flame_state::{FlameState, Orientation};

/// One half of the sandwich.
pub struct SandwichPane {
    pub profile: Profile,
    pub tree: CallTree,
    pub flame: FlameState,
    /// The function's own node: the pane's home zoom.
    pub home: NodeId,
}

impl SandwichPane {
    fn new(profile: Profile, options: &TreeOptions, orientation: Orientation) -> SandwichPane {
        let tree = CallTree::build(
            &profile,
            TreeOptions {
                samples: None,
                ..options.clone()
            },
        );
        let home = tree.child_ids(NodeId::ROOT).next().unwrap_or(NodeId::ROOT);
        let mut flame = FlameState::new(orientation);
        flame.zoom = home;
        flame.select(&tree, &profile, home);
        SandwichPane {
            profile,
            tree,
            flame,
            home,
        }
    }

    /// Back to the function itself, zoom history cleared.
    pub fn reset(&mut self) {
        self.flame.history.clear();
        self.flame.zoom = self.home;
        self.flame.scroll = 0;
        self.flame.select(&self.tree, &self.profile, self.home);
    }

    /// One zoom step out, never above the function; false when already home.
    pub fn zoom_out(&mut self) -> bool {
        if self.flame.zoom == self.home {
            return false;
        }
        let prev = self.flame.history.pop().unwrap_or(self.home);
        self.flame.zoom = if self
            .tree
            .is_ancestor_or_self(&self.profile, self.home, prev)
        {
            prev
        } else {
            self.home
        };
        self.flame.scroll = 0;
        self.flame.ensure_visible(&self.tree, &self.profile);
        true
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Callers,
    Callees,
}

pub struct Sandwich {
    /// The function, as a frame of the top-down profile (frames are shared).
    pub function: FrameId,
    pub callers: SandwichPane,
    pub callees: SandwichPane,
    pub active: Side,
    /// Weight through the function, and of the whole profile.
    pub through: i64,
    pub all: i64,
}

impl Sandwich {
    /// Callers and callees of `f` in `profile`, weighted as `options` say.
    pub fn build(profile: &Profile, options: &TreeOptions, f: FrameId, all: i64) -> Sandwich {
        let callers = SandwichPane::new(sandwich::callers(profile, f), options, Orientation::Flame);
        let callees =
            SandwichPane::new(sandwich::callees(profile, f), options, Orientation::Icicle);
        let through = callees.tree.total(NodeId::ROOT);
        Sandwich {
            function: f,
            callers,
            callees,
            active: Side::Callees,
            through,
            all,
        }
    }

    pub fn pane(&self) -> &SandwichPane {
        match self.active {
            Side::Callers => &self.callers,
            Side::Callees => &self.callees,
        }
    }

    pub fn pane_mut(&mut self) -> &mut SandwichPane {
        match self.active {
            Side::Callers => &mut self.callers,
            Side::Callees => &mut self.callees,
        }
    }

    /// Up and down; from the function's own row, moving toward the other pane
    /// crosses over to it (down from the callers, up from the callees).
    pub fn move_vertical(&mut self, up: bool) {
        let toward_other = match self.active {
            Side::Callers => !up,
            Side::Callees => up,
        };
        let pane = self.pane_mut();
        if toward_other && pane.flame.selected == pane.flame.zoom {
            self.switch();
            return;
        }
        pane.flame.move_vertical(&pane.tree, &pane.profile, up);
    }

    /// The other pane takes the keys, at its function's row if it is in view.
    pub fn switch(&mut self) {
        self.active = match self.active {
            Side::Callers => Side::Callees,
            Side::Callees => Side::Callers,
        };
        let pane = self.pane_mut();
        let z = pane.flame.zoom;
        pane.flame.select(&pane.tree, &pane.profile, z);
    }

    /// The pane and node under a screen cell, from the last draw.
    pub fn hit(&self, col: u16, row: u16) -> Option<(Side, NodeId)> {
        let callers = self.callers.flame.hit(col, row).map(|n| (Side::Callers, n));
        callers.or_else(|| self.callees.flame.hit(col, row).map(|n| (Side::Callees, n)))
    }

    /// Draws both panes and the seam between them.
    pub fn draw(
        &mut self,
        frame: &mut Frame,
        area: Rect,
        theme: &Theme,
        matches: Option<&Matches>,
        diff: Option<crate::ui::views::flame::DiffPaint<'_>>,
    ) {
        let name = sanitize(&self.callees.profile.frames.name(self.function)).into_owned();
        if area.height < 3 {
            let pane = self.pane_mut();
            let widget = FlameView {
                profile: &pane.profile,
                tree: &pane.tree,
                theme,
                matches,
                diff,
            };
            frame.render_stateful_widget(widget, area, &mut pane.flame);
            return;
        }
        let [top, seam, bottom] = Layout::vertical([
            Constraint::Fill(1),
            Constraint::Length(1),
            Constraint::Fill(1),
        ])
        .areas(area);
        for (pane, rect) in [(&mut self.callers, top), (&mut self.callees, bottom)] {
            let widget = FlameView {
                profile: &pane.profile,
                tree: &pane.tree,
                theme,
                matches,
                diff,
            };
            frame.render_stateful_widget(widget, rect, &mut pane.flame);
        }
        let share = if self.all > 0 {
            100.0 * self.through as f64 / self.all as f64
        } else {
            0.0
        };
        let mark = |side: Side, text: &'static str| {
            let style = if self.active == side {
                theme.header_accent
            } else {
                theme.header
            };
            Span::styled(text, style)
        };
        let line = Line::from(vec![
            mark(Side::Callers, " ▲ callers "),
            Span::styled(format!(" {name} · {share:.1}% of all "), theme.header),
            mark(Side::Callees, " ▼ callees "),
        ]);
        let w = usize::from(seam.width);
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        if unicode_width::UnicodeWidthStr::width(text.as_str()) > w {
            // Too narrow for the spans: one fitted line, the active side first.
            let side = match self.active {
                Side::Callers => "▲ callers",
                Side::Callees => "▼ callees",
            };
            let short = format!("{side} · {name}");
            frame.render_widget(
                Paragraph::new(Line::styled(fit(&short, w).into_owned(), theme.header)),
                seam,
            );
        } else {
            frame.render_widget(Paragraph::new(line).style(theme.header), seam);
        }
    }
}
