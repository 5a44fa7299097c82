//! [`App::update`]: one action, offered to each layer of the viewer in turn,
//! from the outermost (quit, the help over everything, the live keys that work
//! while loading) to the view on screen. The first layer that takes the action
//! says what it did (`Some(effect)`); a layer that does not apply lets it pass
//! (`None`). An action no layer takes does nothing: the flame view's keys act
//! only while a flame view (top-down, inverted, callers/callees) is on screen.

use std::sync::Arc;

use super::{App, Effect, Loaded, Phase, View};
use crate::model::search;
use crate::model::{CallTree, ChildOrder, TreeOptions};
use crate::ui::chrome::keymap::Action;
use crate::ui::views::flame_state::Orientation;

/// A layer: takes the action (`Some`) or lets it pass to the next.
type Layer = fn(&mut App, Action) -> Option<Effect>;

/// The layers, outermost first.
const LAYERS: [Layer; 15] = [
    App::quit_and_help,
    App::help_shown,
    App::source_keys,
    App::live_keys,
    App::still_loading,
    App::prompt_keys,
    App::panel_keys,
    App::timeline_keys,
    App::comparison_keys,
    App::view_switch,
    App::busy_or_building,
    App::view_openers,
    App::view_keys,
    App::value_keys,
    App::flame_keys,
];

/// What a layer returns when it took the action and nothing more is to be done.
const TAKEN: Option<Effect> = Some(Effect::None);

impl App {
    /// Applies one action. Only this changes the view.
    pub fn update(&mut self, action: Action) -> Effect {
        self.dirty = true;
        LAYERS
            .iter()
            .find_map(|layer| layer(self, action))
            .unwrap_or(Effect::None)
    }

    fn quit_and_help(&mut self, action: Action) -> Option<Effect> {
        match action {
            Action::Quit => {
                if let Phase::Loading { progress, .. } = &self.phase {
                    progress.cancel();
                }
                Some(Effect::Quit)
            }
            Action::Help => {
                self.show_help = !self.show_help;
                self.help_scroll = 0;
                TAKEN
            }
            _ => None,
        }
    }

    /// Up and down scroll a help taller than the screen; any other key closes it.
    fn help_shown(&mut self, action: Action) -> Option<Effect> {
        if !self.show_help {
            return None;
        }
        match action {
            Action::MoveDown => self.help_scroll += 1,
            Action::MoveUp => self.help_scroll = self.help_scroll.saturating_sub(1),
            Action::PageDown => self.help_scroll += 10,
            Action::PageUp => self.help_scroll = self.help_scroll.saturating_sub(10),
            _ => self.show_help = false,
        }
        TAKEN
    }

    /// Live keys work while loading too: a --watch-dir whose newest file is
    /// unreadable can be stepped back from before anything is shown.
    fn live_keys(&mut self, action: Action) -> Option<Effect> {
        match action {
            Action::Freeze => self.toggle_freeze(),
            Action::LiveMode => self.next_live_mode(),
            Action::OlderProfile => self.step_profile(-1),
            Action::NewerProfile => self.step_profile(1),
            _ => return None,
        }
        TAKEN
    }

    fn still_loading(&mut self, _: Action) -> Option<Effect> {
        matches!(self.phase, Phase::Loading { .. }).then_some(Effect::None)
    }

    fn prompt_keys(&mut self, action: Action) -> Option<Effect> {
        self.prompt_action(action).then_some(Effect::None)
    }

    fn panel_keys(&mut self, action: Action) -> Option<Effect> {
        if action != Action::ToggleDetail {
            return None;
        }
        self.show_detail = !self.show_detail;
        TAKEN
    }

    fn timeline_keys(&mut self, action: Action) -> Option<Effect> {
        self.timeline_action(action).then_some(Effect::None)
    }

    /// `=`, `x` and `|`: a comparison's settings; elsewhere they say why not.
    fn comparison_keys(&mut self, action: Action) -> Option<Effect> {
        match action {
            Action::DiffNorm => self.diff.norm = self.diff.norm.next(),
            Action::HideNoise => self.diff.hide_noise = !self.diff.hide_noise,
            Action::SplitPanes => self.diff.split = !self.diff.split,
            _ => return None,
        }
        if let Phase::Ready(l) = &mut self.phase
            && l.profile.meta.diff.is_none()
        {
            l.transform_error = Some("not a comparison: open two profiles with ember diff".into());
        }
        TAKEN
    }

    /// Tab: flame, function table, inverted tree, and back.
    fn view_switch(&mut self, action: Action) -> Option<Effect> {
        if action != Action::ToggleView {
            return None;
        }
        self.view = match self.view {
            View::Flame => View::Table,
            View::Table => View::Inverted,
            View::Inverted | View::Sandwich => View::Flame,
        };
        let mut job = None;
        if let Phase::Ready(l) = &mut self.phase {
            l.sandwich = None;
            // The linked pane is rebuilt when the flame view is back.
            l.pair = None;
            if self.view != View::Inverted {
                l.set_inverted(false);
                if self.view == View::Table {
                    job = l.job_table();
                }
            } else {
                // Built on the job thread the first time; shown when done.
                job = l.job_invert();
                if job.is_none() {
                    l.set_inverted(true);
                }
            }
        }
        if let Some(job) = job {
            self.request(job);
        }
        self.search.coverage_zoom = None;
        TAKEN
    }

    /// While the inverted view is being built only Tab, help and q act; while
    /// a job runs, what would change the profile says to wait.
    fn busy_or_building(&mut self, action: Action) -> Option<Effect> {
        if self.view == View::Inverted && self.loaded().is_some_and(|l| !l.inverted) {
            return TAKEN;
        }
        let busy = self.busy.as_ref()?;
        if !(action.changes_profile() || matches!(action, Action::Sandwich | Action::Granularity)) {
            return None;
        }
        let text = format!("still {busy}: try again when it is done");
        if let Phase::Ready(l) = &mut self.phase {
            l.transform_error = Some(text);
        }
        TAKEN
    }

    /// `g` (granularity), `c` (callers/callees) and `L` (source), from any view.
    fn view_openers(&mut self, action: Action) -> Option<Effect> {
        match action {
            Action::Granularity => self.switch_granularity(),
            Action::Source => self.open_source(),
            Action::Sandwich => {
                self.open_sandwich();
                self.search.coverage_zoom = None;
            }
            _ => return None,
        }
        TAKEN
    }

    /// The view on screen's own keys: the callers/callees panes, the tables;
    /// transforms apply to the top-down profile only.
    fn view_keys(&mut self, action: Action) -> Option<Effect> {
        let view = self.view;
        match view {
            View::Sandwich if self.sandwich_action(action) => {
                self.search.coverage_zoom = None;
                return TAKEN;
            }
            View::Inverted if action.changes_profile() => {
                if let Phase::Ready(l) = &mut self.phase {
                    l.transform_error =
                        Some("switch back to the flame view (Tab) to transform".into());
                }
                return TAKEN;
            }
            View::Table if self.table_action(action) => return TAKEN,
            _ => {}
        }
        if self.transform_action(action) {
            self.search.coverage_zoom = None;
            return TAKEN;
        }
        None
    }

    /// `t`: the next sample type; in a comparison, the widths: after, before,
    /// the larger of the two (not in the linked panes, which show one side each).
    fn value_keys(&mut self, action: Action) -> Option<Effect> {
        if action != Action::NextValue {
            return None;
        }
        let Phase::Ready(l) = &mut self.phase else {
            return TAKEN;
        };
        let Some(meta) = l.profile.meta.diff.as_deref() else {
            let n = l.profile.value_types.len();
            if n > 1 {
                let options = TreeOptions {
                    value: (l.tree.options.value + 1) % n,
                    ..l.tree.options.clone()
                };
                let tree = CallTree::build(&l.profile, options);
                l.set_tree(tree, None);
            }
            return TAKEN;
        };
        let side = meta.side_of(l.tree.options.value).unwrap_or(0);
        let larger = l.tree.options.larger;
        let (value, want_larger) = match (larger, side) {
            (true, _) => (meta.sides[1].value, false),
            (false, 1) => (meta.sides[0].value, false),
            (false, _) => (meta.sides[1].value, !self.diff.split),
        };
        let options = TreeOptions {
            value,
            larger: want_larger,
            ..l.tree.options.clone()
        };
        let place = l.flame.save(&l.tree, &l.profile);
        // Swapped in place when going from one side to the other; else
        // rebuilt, the old tree dropped first so two are never held at once.
        let mut tree = Arc::unwrap_or_clone(std::mem::take(&mut l.tree));
        l.pair = None;
        if larger || want_larger || !tree.swap_sides(&l.profile) {
            drop(tree);
            tree = CallTree::build(&l.profile, options);
        }
        l.set_tree(tree, Some(place));
        TAKEN
    }

    /// The flame view's keys: moving, zooming, the search's matches, the
    /// orientation and the sibling order. Only while a flame view is shown.
    fn flame_keys(&mut self, action: Action) -> Option<Effect> {
        if self.view == View::Table {
            return None;
        }
        let Phase::Ready(l) = &mut self.phase else {
            return None;
        };
        let Loaded {
            profile,
            tree,
            flame,
            ..
        } = &mut **l;
        match action {
            Action::MoveUp => flame.move_vertical(tree, profile, true),
            Action::MoveDown => flame.move_vertical(tree, profile, false),
            Action::MoveLeft => flame.move_horizontal(tree, profile, false),
            Action::MoveRight => flame.move_horizontal(tree, profile, true),
            Action::Zoom => flame.zoom_in(tree, profile),
            Action::Unzoom if self.search.active() => {
                self.search.query.text.clear();
                self.search.matches = None;
                self.search.error = None;
            }
            Action::Unzoom => flame.zoom_out(tree, profile),
            Action::Search => {
                // A fresh query, as in vi and less; the options stay.
                self.search.editing = true;
                self.search.query.text.clear();
                self.search.matches = None;
                self.search.error = None;
            }
            Action::NextMatch | Action::PrevMatch => {
                if let Some(m) = &self.search.matches {
                    let forward = action == Action::NextMatch;
                    if let Some(n) =
                        search::step_match(profile, tree, m, flame.zoom, flame.selected, forward)
                    {
                        flame.select(tree, profile, n);
                    }
                }
            }
            Action::Reset => flame.reset(tree, profile),
            Action::Widest => flame.widest(tree, profile, true),
            Action::WidestPrev => flame.widest(tree, profile, false),
            Action::PageUp => flame.page(tree, profile, false),
            Action::PageDown => flame.page(tree, profile, true),
            Action::ToggleOrientation => {
                self.orientation = match flame.orientation {
                    Orientation::Icicle => Orientation::Flame,
                    Orientation::Flame => Orientation::Icicle,
                };
                flame.orientation = self.orientation;
            }
            Action::ToggleOrder => {
                let order = match tree.options.order {
                    ChildOrder::Name => ChildOrder::Weight,
                    ChildOrder::Weight => ChildOrder::Name,
                };
                Arc::make_mut(tree).set_order(profile, order);
            }
            _ => return None,
        }
        TAKEN
    }
}
