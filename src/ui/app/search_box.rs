//! The App's side of [`crate::ui::chrome::search_box`]: the keys the box takes while it
//! has the keyboard, re-running the search, and jumping to a function.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{App, Effect, Loaded, Phase, View};
use crate::model::NodeId;
use crate::model::search::{self, Query, SearchMode};

impl App {
    /// Shows every occurrence of a function in the flame view: an exact search
    /// for it, the zoom reset and its heaviest occurrence selected.
    pub fn focus_function(&mut self, name: &str) {
        self.search.query = Query {
            text: format!("^{}$", regex::escape(name)),
            mode: SearchMode::Regex,
            case_sensitive: true,
        };
        self.search.editing = false;
        self.refresh_search();
        self.view = View::Flame;
        let Phase::Ready(l) = &mut self.phase else {
            return;
        };
        l.sandwich = None;
        l.set_inverted(false);
        let Loaded {
            profile,
            tree,
            flame,
            ..
        } = &mut **l;
        flame.reset(tree, profile);
        if let Some(m) = &self.search.matches {
            let nodes = search::matching_nodes(profile, tree, m, NodeId::ROOT);
            if let Some(&best) = nodes
                .iter()
                .max_by_key(|&&n| (tree.total(n), std::cmp::Reverse(n)))
            {
                flame.select(tree, profile, best);
            }
        }
    }

    /// Re-runs the search after its text or options changed.
    pub(super) fn refresh_search(&mut self) {
        self.search.coverage_zoom = None;
        let Phase::Ready(l) = &self.phase else {
            return;
        };
        self.search.rerun(&l.profile.frames);
    }

    /// Makes ready what the next frame draws, so drawing only reads state:
    /// the search coverage, the host flags of the range, the lint's words,
    /// and the function or delta table when it is the view. Cheap when all is
    /// up to date. [`crate::ui::draw_frame`] calls it before every draw.
    pub fn prepare_frame(&mut self) {
        self.refresh_coverage();
        let Phase::Ready(l) = &mut self.phase else {
            return;
        };
        self.timeline.refresh_flags(l);
        self.lint.refresh(l);
        if self.view == View::Table {
            let l = &mut **l;
            if l.profile.meta.diff.is_some() {
                l.delta.ensure(&l.profile, &l.tree, &self.diff);
            } else {
                l.table.ensure(&l.profile, &l.tree);
            }
        }
    }

    /// Brings the search coverage up to date with the zoom; cheap when it is.
    pub fn refresh_coverage(&mut self) {
        let Phase::Ready(l) = &self.phase else {
            return;
        };
        let s = &mut self.search;
        let v = l.shown();
        if let Some(m) = &s.matches
            && s.coverage_zoom != Some(v.flame.zoom)
        {
            s.coverage = search::coverage(v.profile, v.tree, m, v.flame.zoom);
            s.coverage_zoom = Some(v.flame.zoom);
        }
    }

    /// Keys while the search box has the keyboard.
    pub(super) fn search_key(&mut self, k: &KeyEvent) -> Effect {
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
}
