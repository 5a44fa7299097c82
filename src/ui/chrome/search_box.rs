//! The search box: what was typed and what it matched (the keys it takes are
//! the App's, in `app/search_box.rs`).

use crate::model::search::{Matches, Query, Searcher};
use crate::model::{Frames, NodeId};

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

    /// Runs the query over `frames` again (its text or options changed, or the
    /// profile did): an empty query matches nothing, a bad one says why.
    pub fn rerun(&mut self, frames: &Frames) {
        match self.searcher.run(frames, &self.query) {
            Ok(m) if !self.query.text.trim().is_empty() => {
                self.matches = Some(m);
                self.error = None;
            }
            Ok(_) => {
                self.matches = None;
                self.error = None;
            }
            Err(e) => {
                self.matches = None;
                self.error = Some(e);
            }
        }
    }
}
