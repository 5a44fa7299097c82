//! The application state and the one place it changes: `App::update`.
//!
//! How the App takes in what jobs, the live worker, the sandwich view and the
//! search box produce is here too, in `app/` (one file each): those modules
//! hand the App their results and never name it.

use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyEventKind, MouseButton, MouseEventKind};

use crate::model::search;
use crate::model::{CallTree, ChildOrder, NodeId, SortKey, Transform, TreeOptions};
use crate::sources::input::Progress;
use crate::ui::chrome::keymap::{Action, Keymap};
use crate::ui::chrome::theme::Theme;
use crate::ui::runtime::jobs::Job;
use crate::ui::views::flame_state::Orientation;

pub use super::loaded::{Loaded, Shown};
pub use crate::ui::chrome::search_box::SearchState;

mod granularity;
mod jobs;
mod live;
pub(super) mod prompt;
mod sandwich;
mod search_box;
mod table;
mod timeline;

/// Which view has the screen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    #[default]
    Flame,
    Table,
    /// The flame widget over the inverted (bottom-up) tree.
    Inverted,
    /// Callers above and callees below one function.
    Sandwich,
}

pub enum Phase {
    Loading {
        progress: Arc<Progress>,
        started: Instant,
    },
    Ready(Box<Loaded>),
}

/// What the event loop must do after an update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    None,
    Quit,
}

pub struct App {
    pub source_name: String,
    pub keymap: Keymap,
    pub theme: Theme,
    pub phase: Phase,
    pub orientation: Orientation,
    pub show_help: bool,
    /// First help row on screen.
    pub help_scroll: usize,
    pub show_detail: bool,
    pub view: View,
    /// Where Esc goes back to from the callers / callees view.
    pub return_view: View,
    pub search: SearchState,
    /// A search to run once the profile is loaded (from a recipe).
    pub initial_search: Option<String>,
    /// Something changed since the last draw.
    pub dirty: bool,
    /// The worker following a file, a stream or a directory, if any.
    pub live: Option<crate::ui::runtime::live::Live>,
    /// The job thread for slow work; `None` runs jobs inline (tests, benches).
    pub jobs: Option<Sender<Job>>,
    /// What the job thread is doing, for the header.
    pub busy: Option<String>,
    /// When the job now running was asked for.
    pub busy_since: Option<std::time::Instant>,
    /// Jobs sent and not back yet.
    pending_jobs: usize,
    /// The transforms a running job will bring (what a reload must have).
    wanted_transforms: Option<Vec<Transform>>,
    /// How a comparison is shown (normalisation, noise).
    pub diff: crate::ui::views::diff::DiffSettings,
    /// The timeline pane and the host-context logs on it.
    pub timeline: crate::ui::views::timeline::TimelineState,
    /// While two time ranges are compared: the view to go back to, and the
    /// source's name as it was.
    pub compare_from: Option<(Box<Loaded>, String)>,
    last_click: Option<(Instant, NodeId)>,
    /// The prompt row (export file name, overwrite?) and the last command's word.
    pub prompt: crate::ui::chrome::prompt::PromptState,
    /// The files (or watched directory) the view reads: never written to.
    pub inputs: Vec<std::path::PathBuf>,
    /// An OSC 52 sequence for the event loop to write to the terminal.
    pub clipboard: Option<Vec<u8>>,
    /// What makes the profile on screen mislead, for the header and detail.
    pub lint: crate::ui::chrome::lint::LintState,
    /// The view whose lint was asked of the job thread.
    lint_asked: Option<u64>,
    /// What the frames on screen stand for, and the input and options to read
    /// it again at another (`None`: it cannot be read again, as stdin).
    pub granularity: crate::model::granularity::Granularity,
    pub reread: Option<(crate::sources::input::Source, crate::formats::LoadOptions)>,
    /// Where the last granularity switch carried the transforms from, and
    /// the transforms it gave.
    pub granularity_anchor: Option<(
        std::sync::Arc<crate::model::granularity::Anchor>,
        Vec<crate::model::Transform>,
    )>,
}

const DOUBLE_CLICK: Duration = Duration::from_millis(400);

impl App {
    /// The header's word on the job under way, with its time once it has
    /// taken a second: "building the inverted view (3 s)" says it is moving.
    pub fn busy_text(&self) -> Option<String> {
        let busy = self.busy.as_deref()?;
        match self.busy_since.map(|t| t.elapsed().as_secs()) {
            Some(s) if s >= 1 => Some(format!("{busy} ({s} s)")),
            _ => Some(busy.to_string()),
        }
    }

    pub fn new(
        source_name: String,
        keymap: Keymap,
        theme: Theme,
        phase: Phase,
        orientation: Orientation,
    ) -> App {
        App {
            source_name,
            keymap,
            theme,
            phase,
            orientation,
            show_help: false,
            help_scroll: 0,
            show_detail: false,
            view: View::Flame,
            return_view: View::Flame,
            search: SearchState::default(),
            initial_search: None,
            dirty: true,
            live: None,
            jobs: None,
            busy: None,
            busy_since: None,
            pending_jobs: 0,
            wanted_transforms: None,
            diff: crate::ui::views::diff::DiffSettings::default(),
            timeline: Default::default(),
            compare_from: None,
            last_click: None,
            prompt: Default::default(),
            inputs: Vec::new(),
            clipboard: None,
            lint: Default::default(),
            lint_asked: None,
            granularity: Default::default(),
            reread: None,
            granularity_anchor: None,
        }
    }

    pub fn loaded(&self) -> Option<&Loaded> {
        match &self.phase {
            Phase::Ready(l) => Some(l),
            Phase::Loading { .. } => None,
        }
    }

    /// A finished load replaces the progress screen.
    pub fn set_loaded(&mut self, mut loaded: Box<Loaded>) {
        loaded.flame.orientation = self.orientation;
        self.timeline.align_pending(loaded.loaded_profile());
        self.phase = Phase::Ready(loaded);
        self.dirty = true;
        if let Some(text) = self.initial_search.take() {
            self.search.query.text = text;
            self.refresh_search();
        }
    }

    /// Applies one action. Only this changes the view.
    pub fn update(&mut self, action: Action) -> Effect {
        self.dirty = true;
        if action == Action::Quit {
            if let Phase::Loading { progress, .. } = &self.phase {
                progress.cancel();
            }
            return Effect::Quit;
        }
        if action == Action::Help {
            self.show_help = !self.show_help;
            self.help_scroll = 0;
            return Effect::None;
        }
        if self.show_help {
            // Up and down scroll a help taller than the screen; any other key closes it.
            match action {
                Action::MoveDown => self.help_scroll += 1,
                Action::MoveUp => self.help_scroll = self.help_scroll.saturating_sub(1),
                Action::PageDown => self.help_scroll += 10,
                Action::PageUp => self.help_scroll = self.help_scroll.saturating_sub(10),
                _ => self.show_help = false,
            }
            return Effect::None;
        }
        // Live keys work while loading too: a --watch-dir whose newest file is
        // unreadable can be stepped back from before anything is shown.
        match action {
            Action::Freeze => self.toggle_freeze(),
            Action::LiveMode => self.next_live_mode(),
            Action::OlderProfile => self.step_profile(-1),
            Action::NewerProfile => self.step_profile(1),
            _ => {}
        }
        if matches!(
            action,
            Action::Freeze | Action::LiveMode | Action::OlderProfile | Action::NewerProfile
        ) {
            return Effect::None;
        }
        if matches!(self.phase, Phase::Loading { .. }) {
            return Effect::None;
        }
        if self.prompt_action(action) {
            return Effect::None;
        }
        if action == Action::ToggleDetail {
            self.show_detail = !self.show_detail;
            return Effect::None;
        }
        if self.timeline_action(action) {
            return Effect::None;
        }
        if matches!(
            action,
            Action::DiffNorm | Action::HideNoise | Action::SplitPanes
        ) {
            match action {
                Action::DiffNorm => self.diff.norm = self.diff.norm.next(),
                Action::HideNoise => self.diff.hide_noise = !self.diff.hide_noise,
                _ => self.diff.split = !self.diff.split,
            }
            if let Phase::Ready(l) = &mut self.phase
                && l.profile.meta.diff.is_none()
            {
                l.transform_error =
                    Some("not a comparison: open two profiles with ember diff".into());
            }
            return Effect::None;
        }
        if action == Action::ToggleView {
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
            return Effect::None;
        }
        if self.view == View::Inverted && self.loaded().is_some_and(|l| !l.inverted) {
            // The inverted view is still being built: Tab, help and q only.
            return Effect::None;
        }
        if let Some(busy) = &self.busy
            && (action.changes_profile()
                || matches!(action, Action::Sandwich | Action::Granularity))
        {
            let text = format!("still {busy}: try again when it is done");
            if let Phase::Ready(l) = &mut self.phase {
                l.transform_error = Some(text);
            }
            return Effect::None;
        }
        if action == Action::Granularity {
            self.switch_granularity();
            return Effect::None;
        }
        if action == Action::Sandwich {
            self.open_sandwich();
            self.search.coverage_zoom = None;
            return Effect::None;
        }
        if self.view == View::Sandwich && self.sandwich_action(action) {
            self.search.coverage_zoom = None;
            return Effect::None;
        }
        if self.view == View::Inverted && action.changes_profile() {
            // Transforms and value changes apply to the top-down profile.
            if let Phase::Ready(l) = &mut self.phase {
                l.transform_error = Some("switch back to the flame view (Tab) to transform".into());
            }
            return Effect::None;
        }
        if self.view == View::Table && self.table_action(action) {
            return Effect::None;
        }
        if self.transform_action(action) {
            self.search.coverage_zoom = None;
            return Effect::None;
        }
        let Phase::Ready(l) = &mut self.phase else {
            return Effect::None;
        };
        if action == Action::NextValue
            && let Some(meta) = l.profile.meta.diff.as_deref()
        {
            // A comparison cycles its widths: after, before, the larger of the
            // two (not in the linked panes, which show one side each).
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
            return Effect::None;
        }
        if action == Action::NextValue {
            let n = l.profile.value_types.len();
            if n > 1 {
                let options = TreeOptions {
                    value: (l.tree.options.value + 1) % n,
                    ..l.tree.options.clone()
                };
                let tree = CallTree::build(&l.profile, options);
                l.set_tree(tree, None);
            }
            return Effect::None;
        }
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
            Action::Help
            | Action::Quit
            | Action::Focus
            | Action::DropFunction
            | Action::HideFrame
            | Action::MergeFunction
            | Action::CollapseRecursion
            | Action::MinWidth
            | Action::Undo
            | Action::Granularity
            | Action::NextValue
            | Action::ToggleView
            | Action::Sandwich
            | Action::Freeze
            | Action::LiveMode
            | Action::OlderProfile
            | Action::NewerProfile
            | Action::ToggleDetail
            | Action::SortSelf
            | Action::SortTotal
            | Action::SortName
            | Action::DiffNorm
            | Action::HideNoise
            | Action::SplitPanes
            | Action::ToggleTimeline
            | Action::ToggleHeatMap
            | Action::ThreadRows
            | Action::CompareRanges
            | Action::Export
            | Action::Report
            | Action::CopyName
            | Action::CopyPath
            | Action::CopyReport
            | Action::TimeLeft
            | Action::TimeRight
            | Action::TimeLeftFast
            | Action::TimeRightFast
            | Action::RangeStart
            | Action::RangeEnd
            | Action::RangeClear => {}
        }
        Effect::None
    }

    /// Turns a terminal event into updates.
    pub fn handle_event(&mut self, ev: &Event) -> Effect {
        if let Event::Key(k) = ev
            && k.kind != KeyEventKind::Release
        {
            if self.prompt.prompt.is_some() {
                return self.prompt_key(k);
            }
            // The last command's word stays until the next key.
            if self.prompt.message.take().is_some() {
                self.dirty = true;
            }
        }
        if let Event::Key(k) = ev
            && self.search.editing
            && k.kind != KeyEventKind::Release
        {
            return self.search_key(k);
        }
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => match self.keymap.action(k) {
                Some(a) => self.update(a),
                None if self.show_help => self.update(Action::Help),
                None => Effect::None,
            },
            Event::Mouse(m) => {
                self.mouse(m.kind, m.column, m.row);
                Effect::None
            }
            Event::Resize(..) => {
                self.dirty = true;
                Effect::None
            }
            _ => Effect::None,
        }
    }

    fn mouse(&mut self, kind: MouseEventKind, col: u16, row: u16) {
        if self.timeline_mouse(kind, col, row) {
            return;
        }
        let Phase::Ready(l) = &mut self.phase else {
            return;
        };
        if let Some(sw) = l.sandwich.as_deref_mut() {
            // A click picks the pane as well as the frame.
            if let MouseEventKind::Down(MouseButton::Left) = kind
                && let Some((side, _)) = sw.hit(col, row)
            {
                sw.active = side;
                self.search.coverage_zoom = None;
            }
        }
        // A click in the other side's pane of the linked view picks the same frame.
        let other_hit = if self.diff.split && l.sandwich.is_none() {
            l.pair.as_deref().and_then(|p| p.flame.hit(col, row))
        } else {
            None
        };
        let (profile, tree, flame) = match l.sandwich.as_deref_mut() {
            Some(sw) => {
                let p = sw.pane_mut();
                (&p.profile, &p.tree, &mut p.flame)
            }
            None => (&*l.profile, &*l.tree, &mut l.flame),
        };
        match kind {
            MouseEventKind::Down(MouseButton::Left) => {
                let Some(node) = flame
                    .hit(col, row)
                    .or_else(|| other_hit.map(|n| super::loaded::live_ancestor(tree, profile, n)))
                else {
                    return;
                };
                let now = Instant::now();
                let double = self
                    .last_click
                    .is_some_and(|(t, n)| n == node && now.duration_since(t) < DOUBLE_CLICK);
                flame.select(tree, profile, node);
                if double {
                    flame.zoom_in(tree, profile);
                    self.last_click = None;
                } else {
                    self.last_click = Some((now, node));
                }
                self.dirty = true;
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let toward_leaves = (kind == MouseEventKind::ScrollDown)
                    == (flame.orientation == Orientation::Icicle);
                flame.scroll_by(if toward_leaves { 3 } else { -3 });
                self.dirty = true;
            }
            _ => {}
        }
    }
}
