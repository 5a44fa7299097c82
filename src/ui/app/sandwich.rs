//! The App's side of [`crate::ui::views::sandwich`]: opening the callers / callees
//! view, its keys, and leaving it.

use super::{App, Phase, View};
use crate::model::ChildOrder;
use crate::model::search;
use crate::ui::chrome::keymap::Action;

impl App {
    /// Opens the callers / callees of the selected function (the table's row, the
    /// flame's frame, or a frame in one of the panes, which re-centres).
    pub(super) fn open_sandwich(&mut self) {
        let view = self.view;
        let Phase::Ready(l) = &mut self.phase else {
            return;
        };
        let frame = match view {
            View::Table => {
                l.table.ensure(&l.profile, &l.tree);
                l.table.selected()
            }
            View::Flame | View::Inverted | View::Sandwich => {
                let v = l.shown();
                v.tree.frame(v.profile, v.flame.selected)
            }
        };
        let Some(f) = frame else {
            l.transform_error = Some("select a function to see its callers and callees".into());
            return;
        };
        // Built on the job thread (54-150 ms on a 6.5M-stack profile): keys
        // keep working on this view, and the sandwich replaces it when done.
        let job = l.job_sandwich(f);
        self.request(job);
    }

    /// Leaves the callers / callees view for the view it was opened from.
    fn close_sandwich(&mut self) {
        self.view = self.return_view;
        if let Phase::Ready(l) = &mut self.phase {
            l.sandwich = None;
        }
        // Back to the inverted view: kept aside, or built on the job thread.
        self.ensure_inverted();
    }

    /// Keys in the callers / callees view; false for those handled elsewhere
    /// (search, help, detail, view switching, quit).
    pub(super) fn sandwich_action(&mut self, action: Action) -> bool {
        let searching = self.search.active();
        let Phase::Ready(l) = &mut self.phase else {
            return false;
        };
        let Some(sw) = l.sandwich.as_deref_mut() else {
            self.view = View::Flame;
            return false;
        };
        match action {
            Action::MoveUp => sw.move_vertical(true),
            Action::MoveDown => sw.move_vertical(false),
            Action::Unzoom if searching => return false,
            Action::Unzoom => {
                if !sw.pane_mut().zoom_out() {
                    self.close_sandwich();
                }
            }
            Action::Reset => sw.pane_mut().reset(),
            Action::ToggleOrder => {
                let order = match sw.callees.tree.options.order {
                    ChildOrder::Name => ChildOrder::Weight,
                    ChildOrder::Weight => ChildOrder::Name,
                };
                for p in [&mut sw.callers, &mut sw.callees] {
                    p.tree.set_order(&p.profile, order);
                }
            }
            Action::NextMatch | Action::PrevMatch => {
                let p = sw.pane_mut();
                if let Some(m) = &self.search.matches {
                    let forward = action == Action::NextMatch;
                    let (z, s) = (p.flame.zoom, p.flame.selected);
                    if let Some(n) = search::step_match(&p.profile, &p.tree, m, z, s, forward) {
                        p.flame.select(&p.tree, &p.profile, n);
                    }
                }
            }
            Action::MoveLeft
            | Action::MoveRight
            | Action::Zoom
            | Action::Widest
            | Action::WidestPrev
            | Action::PageUp
            | Action::PageDown => {
                let p = sw.pane_mut();
                let (tree, profile, flame) = (&p.tree, &p.profile, &mut p.flame);
                match action {
                    Action::MoveLeft => flame.move_horizontal(tree, profile, false),
                    Action::MoveRight => flame.move_horizontal(tree, profile, true),
                    Action::Zoom => flame.zoom_in(tree, profile),
                    Action::Widest => flame.widest(tree, profile, true),
                    Action::WidestPrev => flame.widest(tree, profile, false),
                    Action::PageUp => flame.page(tree, profile, false),
                    _ => flame.page(tree, profile, true),
                }
            }
            a if a.changes_profile() || a == Action::ToggleOrientation => {
                l.transform_error =
                    Some("not in the callers/callees view: Esc goes back, c re-centres".into());
            }
            Action::SortSelf | Action::SortTotal | Action::SortName => {}
            // Search, help, quit, view switching and the live keys.
            _ => return false,
        }
        true
    }
}
