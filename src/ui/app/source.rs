//! The source pane's keys, and opening it: from the profile on screen when it
//! is read at line granularity, else by reading the input again at line
//! granularity on the job thread (`Job::Listing`).

use super::{App, Effect, Phase, View};
use crate::model::granularity::{Granularity, frame_key};
use crate::model::listing::Routine;
use crate::model::{NodeId, ValueType};
use crate::output::listing::find_source;
use crate::ui::chrome::keymap::Action;
use crate::ui::runtime::jobs::Job;
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

    pub(super) fn open_source(&mut self) {
        let Some(function) = self.selected_function() else {
            self.prompt.message = Some(("source: select a function first".into(), true));
            return;
        };
        let Phase::Ready(l) = &self.phase else {
            return;
        };
        if let Some(meta) = l.profile.meta.diff.as_deref() {
            if self.granularity != Granularity::Line {
                self.prompt.message = Some((
                    "source: a comparison is read at one granularity: ember diff --granularity line A B"
                        .into(),
                    true,
                ));
                return;
            }
            let Some((cmp, _)) =
                crate::ui::views::diff::compare(&l.profile, &l.tree, self.diff.norm)
            else {
                return;
            };
            let columns = [
                meta.sides[0].value,
                meta.sides[1].value,
                meta.sides[0].count,
                meta.sides[1].count,
            ];
            let sides: Vec<Vec<Routine>> = columns
                .iter()
                .map(|&value| {
                    let tree = crate::model::CallTree::build(
                        &l.profile,
                        crate::model::TreeOptions {
                            value,
                            ..crate::model::TreeOptions::default()
                        },
                    );
                    crate::model::listing::routines(&l.profile, &tree, |n| n == function)
                })
                .collect();
            let paired = crate::model::listing::join_sides(&sides);
            let vt = l.profile.value_types[meta.sides[1].value].clone();
            if paired.is_empty() {
                self.show_source(function, Vec::new(), 0, vt);
                return;
            }
            let listed = paired
                .into_iter()
                .map(|r| {
                    let src = find_source(r.file.as_deref().unwrap_or(""), &self.source_options);
                    (r, src)
                })
                .collect();
            self.source = Some(Box::new(SourcePane::new_diff(function, listed, &cmp, vt)));
            return;
        }
        if self.granularity == Granularity::Line {
            let found = crate::model::listing::routines(&l.profile, &l.tree, |n| n == function);
            let vt = l.profile.value_types[l.tree.options.value].clone();
            let total = l.tree.total(NodeId::ROOT);
            self.show_source(function, found, total, vt);
            return;
        }
        let Some((source, options)) = &self.reread else {
            self.prompt.message = Some((
                "source: this input cannot be read again for its lines: start ember with --granularity line"
                    .into(),
                true,
            ));
            return;
        };
        let job = Job::Listing {
            source: source.clone(),
            options: crate::formats::LoadOptions {
                granularity: Granularity::Line,
                ..options.clone()
            },
            value: l.profile.value_types[l.tree.options.value].kind.clone(),
            function,
        };
        self.request(job);
    }

    /// The pane for `function`'s routines, or why there is none.
    pub(super) fn show_source(
        &mut self,
        function: String,
        found: Vec<Routine>,
        total: i64,
        vt: ValueType,
    ) {
        if found.is_empty() {
            self.prompt.message = Some((
                format!(
                    "source: the profile has no line numbers for {}",
                    crate::host::sanitize::sanitize(&function)
                ),
                true,
            ));
            return;
        }
        let listed = found
            .into_iter()
            .map(|r| {
                let src = find_source(r.file.as_deref().unwrap_or(""), &self.source_options);
                (r, src)
            })
            .collect();
        self.source = Some(Box::new(SourcePane::new(function, listed, total, vt)));
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
