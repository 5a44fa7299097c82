//! The application state and the one place it changes: `App::update`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};

use super::flame_state::{FlameState, Orientation};
use super::keymap::{Action, Keymap};
use super::theme::Theme;
use crate::input::Progress;
use crate::model::search::{self, Matches, Query, SearchMode, Searcher};
use crate::model::{CallTree, ChildOrder, NodeId, Profile, TreeOptions};

/// The search box and what it found.
#[derive(Default)]
pub struct SearchState {
    pub query: Query,
    /// The box has the keyboard.
    pub editing: bool,
    /// Frames matching the query; `None` while the query is empty or invalid.
    pub matches: Option<Matches>,
    /// A regex the user is still typing may not compile yet.
    pub error: Option<String>,
    /// Weight of samples with a matching frame: over all, and in `coverage_zoom`.
    pub coverage: (i64, i64),
    pub coverage_zoom: Option<NodeId>,
    searcher: Searcher,
}

impl SearchState {
    /// Whether highlights are showing.
    pub fn active(&self) -> bool {
        self.matches.is_some()
    }
}

/// A profile ready to explore.
pub struct Loaded {
    pub profile: Profile,
    pub tree: CallTree,
    pub flame: FlameState,
    pub load_time: Duration,
}

impl Loaded {
    pub fn new(
        profile: Profile,
        tree: CallTree,
        orientation: Orientation,
        load_time: Duration,
    ) -> Loaded {
        Loaded {
            profile,
            tree,
            flame: FlameState::new(orientation),
            load_time,
        }
    }
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
    pub search: SearchState,
    /// Something changed since the last draw.
    pub dirty: bool,
    last_click: Option<(Instant, NodeId)>,
}

const DOUBLE_CLICK: Duration = Duration::from_millis(400);

impl App {
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
            search: SearchState::default(),
            dirty: true,
            last_click: None,
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
        self.phase = Phase::Ready(loaded);
        self.dirty = true;
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
            return Effect::None;
        }
        if self.show_help {
            // Any other key closes the help first.
            self.show_help = false;
            return Effect::None;
        }
        let Phase::Ready(l) = &mut self.phase else {
            return Effect::None;
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
                tree.set_order(profile, order);
            }
            Action::NextValue => {
                let n = profile.value_types.len();
                if n > 1 {
                    let options = TreeOptions {
                        value: (tree.options.value + 1) % n,
                        ..tree.options.clone()
                    };
                    *tree = CallTree::build(profile, options);
                    flame.after_rebuild(tree, profile);
                }
            }
            Action::Help | Action::Quit => {}
        }
        Effect::None
    }

    /// Re-runs the search after its text or options changed.
    fn refresh_search(&mut self) {
        self.search.coverage_zoom = None;
        let Phase::Ready(l) = &self.phase else {
            return;
        };
        let s = &mut self.search;
        match s.searcher.run(&l.profile.frames, &s.query) {
            Ok(m) if !s.query.text.trim().is_empty() => {
                s.matches = Some(m);
                s.error = None;
            }
            Ok(_) => {
                s.matches = None;
                s.error = None;
            }
            Err(e) => {
                s.matches = None;
                s.error = Some(e);
            }
        }
    }

    /// Brings the search coverage up to date with the zoom; cheap when it is.
    pub fn refresh_coverage(&mut self) {
        let Phase::Ready(l) = &self.phase else {
            return;
        };
        let s = &mut self.search;
        if let Some(m) = &s.matches
            && s.coverage_zoom != Some(l.flame.zoom)
        {
            s.coverage = search::coverage(&l.profile, &l.tree, m, l.flame.zoom);
            s.coverage_zoom = Some(l.flame.zoom);
        }
    }

    /// Keys while the search box has the keyboard.
    fn search_key(&mut self, k: &KeyEvent) -> Effect {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let q = &mut self.search.query;
        match k.code {
            KeyCode::Char('c') if ctrl => return Effect::Quit,
            KeyCode::Char('r') if ctrl => {
                q.mode = match q.mode {
                    SearchMode::Fuzzy => SearchMode::Regex,
                    SearchMode::Regex => SearchMode::Fuzzy,
                };
            }
            KeyCode::Char('e') if ctrl => q.case_sensitive = !q.case_sensitive,
            KeyCode::Char(c) if !ctrl => q.text.push(c),
            KeyCode::Backspace => {
                if q.text.pop().is_none() {
                    self.search.editing = false;
                }
            }
            KeyCode::Enter => self.search.editing = false,
            KeyCode::Esc => {
                q.text.clear();
                self.search.editing = false;
            }
            _ => return Effect::None,
        }
        self.refresh_search();
        self.dirty = true;
        Effect::None
    }

    /// Turns a terminal event into updates.
    pub fn handle_event(&mut self, ev: &Event) -> Effect {
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
        let Phase::Ready(l) = &mut self.phase else {
            return;
        };
        let Loaded {
            profile,
            tree,
            flame,
            ..
        } = &mut **l;
        match kind {
            MouseEventKind::Down(MouseButton::Left) => {
                let Some(node) = flame.hit(col, row) else {
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
