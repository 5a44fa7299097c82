//! Keys on the function table and on a comparison's delta table.

use super::*;

impl App {
    /// Keys the table handles itself; returns false for the rest.
    pub(super) fn table_action(&mut self, action: Action) -> bool {
        let Phase::Ready(l) = &mut self.phase else {
            return false;
        };
        if l.profile.meta.diff.is_some() {
            return self.delta_action(action);
        }
        let Loaded {
            profile,
            tree,
            table,
            ..
        } = &mut **l;
        table.ensure(profile, tree);
        let page = table.rows.max(2) as isize - 1;
        match action {
            Action::MoveUp => table.move_by(-1),
            Action::MoveDown => table.move_by(1),
            Action::PageUp => table.move_by(-page),
            Action::PageDown => table.move_by(page),
            Action::Reset => table.cursor = 0,
            Action::SortSelf => table.sort_by(profile, SortKey::SelfWeight),
            Action::SortTotal => table.sort_by(profile, SortKey::Total),
            Action::SortName => table.sort_by(profile, SortKey::Name),
            Action::Zoom => {
                if let Some(f) = table.selected() {
                    let name = profile.frames.name(f).into_owned();
                    self.focus_function(&name);
                }
            }
            _ => return false,
        }
        true
    }

    /// Keys the delta table of a comparison handles; false for the rest.
    pub(super) fn delta_action(&mut self, action: Action) -> bool {
        use crate::model::diff::DeltaSort;
        let view = self.diff;
        let Phase::Ready(l) = &mut self.phase else {
            return false;
        };
        let delta = &mut l.delta;
        delta.ensure(&l.profile, &l.tree, &view);
        let page = delta.rows.max(2) as isize - 1;
        match action {
            Action::MoveUp => delta.move_by(-1),
            Action::MoveDown => delta.move_by(1),
            Action::PageUp => delta.move_by(-page),
            Action::PageDown => delta.move_by(page),
            Action::Reset => delta.cursor = 0,
            Action::SortSelf => delta.sort_by(DeltaSort::SelfDelta),
            Action::SortTotal => delta.sort_by(DeltaSort::TotalDelta),
            Action::SortName => delta.sort_by(DeltaSort::Relative),
            Action::Zoom => {
                if let Some(f) = delta.selected() {
                    let name = l.profile.frames.name(f).into_owned();
                    self.focus_function(&name);
                }
            }
            _ => return false,
        }
        true
    }
}
