//! The source pane's keys, and opening it: the pane is built on the job
//! thread (`Job::Listing`), from the profile on screen when it is read at line
//! granularity, else from the input read again at line granularity.

use super::{App, Effect, Phase, View};
use crate::model::NodeId;
use crate::model::granularity::{Granularity, frame_key};
use crate::ui::chrome::keymap::Action;
use crate::ui::runtime::jobs::Job;
use crate::ui::runtime::jobs::listing::ListingInput;
use crate::ui::views::source::SourcePane;

impl App {
    /// While the pane is open it takes the moving keys; Esc, `L` or Enter close it.
    pub(super) fn source_keys(&mut self, action: Action) -> Option<Effect> {
        let pane = self.source.as_deref_mut()?;
        match action {
            Action::MoveDown => pane.move_by(1),
            Action::MoveUp => pane.move_by(-1),
            Action::PageDown => pane.move_by(pane.page as isize),
            Action::PageUp => pane.move_by(-(pane.page as isize)),
            Action::Widest => pane.step_hot(true),
            Action::WidestPrev => pane.step_hot(false),
            Action::Unzoom | Action::Source => self.source = None,
            Action::Zoom => {
                let function = pane.function.clone();
                self.source = None;
                self.select_function(&function);
            }
            // Quit and help were taken before; the rest waits for the pane to close.
            _ => {}
        }
        Some(Effect::None)
    }

    /// The selected function's name, at function granularity.
    fn selected_function(&self) -> Option<String> {
        let Phase::Ready(l) = &self.phase else {
            return None;
        };
        let frame = if self.view == View::Table {
            if l.profile.meta.diff.is_some() {
                l.delta.selected()
            } else {
                l.table.selected()
            }
        } else {
            let v = l.shown();
            v.tree.frame(v.profile, v.flame.selected)
        }?;
        let key = frame_key(&l.profile, frame, self.granularity, Granularity::Function);
        Some(String::from_utf8_lossy(&key).into_owned())
    }

    /// Asks the job thread for the pane of the selected function: from the
    /// profile on screen when it is at line granularity, else from the input
    /// read again at line granularity.
    pub(super) fn open_source(&mut self) {
        let Some(function) = self.selected_function() else {
            self.prompt.message = Some(("source: select a function first".into(), true));
            return;
        };
        let Phase::Ready(l) = &self.phase else {
            return;
        };
        let line = self.granularity == Granularity::Line;
        let input = if l.profile.meta.diff.is_some() {
            if !line {
                self.prompt.message = Some((
                    "source: a comparison is read at one granularity: ember diff --granularity line A B"
                        .into(),
                    true,
                ));
                return;
            }
            ListingInput::Compared {
                profile: l.profile.clone(),
                norm: self.diff.norm,
            }
        } else if line {
            ListingInput::Loaded {
                profile: l.profile.clone(),
                value: l.tree.options.value,
            }
        } else if let Some((source, options)) = &self.reread {
            ListingInput::Read {
                source: source.clone(),
                options: crate::formats::LoadOptions {
                    granularity: Granularity::Line,
                    ..options.clone()
                },
                value: l.profile.value_types[l.tree.options.value].kind.clone(),
            }
        } else {
            self.prompt.message = Some((
                "source: this input cannot be read again for its lines: start ember with --granularity line"
                    .into(),
                true,
            ));
            return;
        };
        self.request(Job::Listing {
            input,
            function,
            sources: self.source_options.clone(),
        });
    }

    /// The job's pane, or why there is none.
    pub(super) fn show_source(&mut self, result: Result<Box<SourcePane>, String>) {
        match result {
            Ok(pane) => self.source = Some(pane),
            Err(e) => self.prompt.message = Some((format!("source: {e}"), true)),
        }
    }

    /// Selects the heaviest node of `function` in the top-down flame view.
    fn select_function(&mut self, function: &str) {
        let granularity = self.granularity;
        let Phase::Ready(l) = &mut self.phase else {
            return;
        };
        if self.view == View::Table {
            self.view = View::Flame;
        }
        let v = l.shown();
        let (p, tree) = (v.profile, v.tree);
        let best = (1..tree.len() as u32)
            .map(NodeId)
            .filter(|&n| {
                tree.frame(p, n).is_some_and(|f| {
                    frame_key(p, f, granularity, Granularity::Function).as_ref()
                        == function.as_bytes()
                })
            })
            .max_by_key(|&n| tree.total(n));
        if let Some(n) = best {
            match l.sandwich.as_deref_mut() {
                Some(sw) => {
                    let pane = sw.pane_mut();
                    pane.flame.select(&pane.tree, &pane.profile, n);
                }
                None => l.flame.select(&l.tree, &l.profile, n),
            }
        }
    }
}
