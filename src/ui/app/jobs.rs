//! The App's side of [`crate::ui::runtime::jobs`]: the keys that start a transform,
//! sending a job (or running it here without a job thread) and taking its
//! result in.

use super::{App, Loaded, Phase, View};
use crate::model::Transform;
use crate::ui::chrome::keymap::Action;
use crate::ui::runtime::jobs::{Done, Job, run};

impl App {
    /// Transform keys; returns false for the rest. They act on the flame view's
    /// selection (or the table's row in the table).
    pub(super) fn transform_action(&mut self, action: Action) -> bool {
        let view = self.view;
        let Phase::Ready(l) = &mut self.phase else {
            return false;
        };
        let frame = match view {
            View::Table => l.table.selected(),
            View::Flame | View::Inverted | View::Sandwich => {
                l.tree.frame(&l.profile, l.flame.selected)
            }
        };
        let exact = |f| format!("^{}$", regex::escape(&l.profile.frames.name(f)));
        let job = match (action, frame) {
            (Action::Undo, _) => match l.job_undo() {
                Some(job) => job,
                None => return true,
            },
            (Action::CollapseRecursion, _) => {
                l.job_push(Transform::CollapseRecursion { indirect: false })
            }
            (Action::MinWidth, _) => l.job_min_width(),
            (Action::Focus, Some(f)) => l.job_push(Transform::Focus { pattern: exact(f) }),
            (Action::DropFunction, Some(f)) => l.job_push(Transform::Drop { pattern: exact(f) }),
            (Action::MergeFunction, Some(f)) => l.job_push(Transform::Merge { pattern: exact(f) }),
            (Action::HideFrame, Some(_)) if view == View::Flame => l.job_push(Transform::Hide {
                path: l
                    .tree
                    .frame_path(&l.profile, l.flame.selected)
                    .iter()
                    .map(|&f| l.profile.frames.name(f).into_owned())
                    .collect(),
            }),
            (
                Action::Focus | Action::DropFunction | Action::MergeFunction | Action::HideFrame,
                _,
            ) => return true,
            _ => return false,
        };
        self.request(job);
        true
    }

    /// Runs a job on the job thread (the header says what is under way), or
    /// here and now without one.
    pub fn request(&mut self, job: Job) {
        match &self.jobs {
            Some(tx) => {
                let label = job.label();
                let all = match &job {
                    Job::Transform { all, .. } => Some(all.clone()),
                    Job::Invert { .. }
                    | Job::Listing { .. }
                    | Job::Regranulate { .. }
                    | Job::Sandwich { .. }
                    | Job::CompareRanges { .. }
                    | Job::Export { .. }
                    | Job::Lint { .. }
                    | Job::Pair { .. }
                    | Job::Table { .. } => None,
                };
                // The lint is quiet: asked after every load and reload, it
                // would make a live view's header flicker. The other side's
                // pane says itself that it is being built.
                let quiet = matches!(job, Job::Lint { .. } | Job::Pair { .. });
                if tx.send(job).is_ok() && !quiet {
                    if all.is_some() {
                        self.wanted_transforms = all;
                    }
                    self.busy = Some(label);
                    self.busy_since = Some(std::time::Instant::now());
                    self.pending_jobs += 1;
                }
            }
            None => self.job_done(run(job)),
        }
    }

    /// A job finished: its result goes in if its view is still on screen.
    pub fn job_done(&mut self, done: Done) {
        if !matches!(done, Done::Linted { .. } | Done::Paired { .. }) {
            self.pending_jobs = self.pending_jobs.saturating_sub(1);
        }
        if self.pending_jobs == 0 {
            self.busy = None;
            self.busy_since = None;
        }
        self.dirty = true;
        self.search.coverage_zoom = None;
        let done = match done {
            Done::Compared { id, result, names } => return self.compared(id, result, names),
            Done::Exported { result } => return self.exported(result),
            Done::Regranulated { result } => return self.regranulated(result),
            Done::Listed { result } => return self.show_source(result),
            other => other,
        };
        let Phase::Ready(l) = &mut self.phase else {
            return;
        };
        let inverted = matches!(done, Done::Inverted { .. });
        let sandwich = matches!(done, Done::Sandwich { .. });
        let transformed = match &done {
            Done::Transformed { all, .. } => Some(all.clone()),
            Done::Inverted { .. }
            | Done::Sandwich { .. }
            | Done::Regranulated { .. }
            | Done::Compared { .. }
            | Done::Exported { .. }
            | Done::Linted { .. }
            | Done::Paired { .. }
            | Done::Listed { .. }
            | Done::Tabled { .. } => None,
        };
        let installed = l.install(done);
        if installed && inverted && self.view == View::Inverted {
            l.set_inverted(true);
        }
        if installed && sandwich {
            if self.view != View::Sandwich {
                self.return_view = self.view;
            }
            self.view = View::Sandwich;
        }
        if let Some(all) = transformed {
            self.wanted_transforms = None;
            if !installed && l.transforms != all {
                // A reload replaced the view first, without them: apply them to it.
                let job = l.job_replace(all, "re-applying the transforms".into());
                self.request(job);
                return;
            }
        }
        self.ensure_inverted();
    }

    /// The linked before | after view is on screen without the other side's
    /// pane for this view: ask the job thread to build it (at once, here,
    /// without one).
    pub fn ensure_pair(&mut self) {
        if !self.diff.split || !matches!(self.view, View::Flame | View::Inverted) {
            return;
        }
        let job = match &mut self.phase {
            Phase::Ready(l) => pair_job(l),
            Phase::Loading { .. } => None,
        };
        if let Some(job) = job {
            self.request(job);
        }
    }

    /// The top-down view has no lint yet (a new profile, another value, a
    /// reload): ask the job thread, once per view.
    pub fn ensure_lint(&mut self) {
        let job = match &self.phase {
            Phase::Ready(l)
                if !l.inverted
                    && l.lint.as_ref().is_none_or(|(id, _)| *id != l.id)
                    && self.lint_asked != Some(l.id) =>
            {
                self.lint_asked = Some(l.id);
                Job::Lint {
                    id: l.id,
                    profile: l.profile.clone(),
                    options: l.tree.options.clone(),
                }
            }
            _ => return,
        };
        self.request(job);
    }

    /// The inverted view is asked for but not built (its job's result went
    /// stale: a transform or a reload came first): ask again.
    pub(super) fn ensure_inverted(&mut self) {
        if self.view != View::Inverted || self.pending_jobs > 0 {
            return;
        }
        let job = match &self.phase {
            Phase::Ready(l) if !l.inverted => l.job_invert(),
            _ => None,
        };
        match job {
            Some(job) => self.request(job),
            None => {
                if let Phase::Ready(l) = &mut self.phase {
                    // Built already (kept aside): just show it.
                    l.set_inverted(true);
                }
            }
        }
    }
}

/// The job that builds the other side's pane of `l`, unless it is built or
/// asked for already. Here, not in `loaded`: jobs use the view, never the
/// other way round.
fn pair_job(l: &mut Loaded) -> Option<Job> {
    let (key, options) = l.pair_wanted()?;
    if l.pair.as_ref().is_some_and(|p| p.key == key) || l.pair_asked == Some(key) {
        return None;
    }
    l.pair_asked = Some(key);
    // The stale pane goes now: two are never held at once.
    l.pair = None;
    Some(Job::Pair {
        key,
        profile: l.profile.clone(),
        options,
    })
}
