//! The application state and the one place it changes: `App::update`.
//!
//! How the App takes in what jobs, the live worker, the sandwich view and the
//! search box produce is here too, in `app/` (one file each): those modules
//! hand the App their results and never name it.

use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyEventKind, MouseButton, MouseEventKind};

use crate::model::{NodeId, SortKey, Transform};
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
mod source;
mod table;
mod timeline;
mod update;

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
    /// The source pane (`L`), over the view while it is open.
    pub source: Option<Box<crate::ui::views::source::SourcePane>>,
    /// Where the source pane looks for files (`--source-path`, `--trim-path`).
    pub source_options: crate::output::listing::SourceOptions,
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
            source: None,
            source_options: crate::output::listing::SourceOptions::default(),
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
