//! The view's side of a job: made from the [`Loaded`] view on screen, and its
//! result put back in place if that view is still the one shown.

use super::*;

impl Loaded {
    /// One more transform on top of the view.
    pub fn job_push(&self, t: Transform) -> Job {
        let label = format!("applying {}", t.describe());
        let mut all = self.transforms.clone();
        all.push(t.clone());
        Job::Transform {
            id: self.id,
            input: self.profile.clone(),
            apply: vec![t],
            all,
            options: self.tree.options.clone(),
            label,
        }
    }

    /// The view with `all` instead of the current transforms, from the
    /// untransformed profile.
    pub fn job_replace(&self, all: Vec<Transform>, label: String) -> Job {
        Job::Transform {
            id: self.id,
            input: self.base.as_ref().unwrap_or(&self.profile).clone(),
            apply: all.clone(),
            all,
            options: self.tree.options.clone(),
            label,
        }
    }

    /// Takes back the last transform; `None` when there is none.
    pub fn job_undo(&self) -> Option<Job> {
        let (last, rest) = self.transforms.split_last()?;
        let label = format!("undoing {}", last.describe());
        Some(self.job_replace(rest.to_vec(), label))
    }

    /// The min-width step cycles 0.5% -> 1% -> 2% -> off, replacing itself.
    pub fn job_min_width(&self) -> Job {
        let last = match self.transforms.last() {
            Some(Transform::MinWidth { percent }) => Some(*percent),
            _ => None,
        };
        let next = match last {
            None => Some(0.5),
            Some(p) if p < 1.0 => Some(1.0),
            Some(p) if p < 2.0 => Some(2.0),
            Some(_) => None,
        };
        let step = next.map(|percent| Transform::MinWidth { percent });
        match (last, step) {
            (None, Some(t)) => self.job_push(t),
            (_, step) => {
                let mut all = self.transforms.clone();
                all.pop();
                let label = match &step {
                    Some(t) => format!("applying {}", t.describe()),
                    None => "removing the minimum width".into(),
                };
                all.extend(step);
                self.job_replace(all, label)
            }
        }
    }

    /// The function table on the job thread, when the profile is big enough
    /// to make Tab wait and the table is not built (nor being built).
    pub fn job_table(&mut self) -> Option<Job> {
        const BIG: usize = 1 << 16;
        if self.profile.meta.diff.is_some()
            || self.profile.stacks.len() < BIG
            || !self.table.wants(&self.tree)
        {
            return None;
        }
        self.table.pending = Some(self.tree.options.value);
        Some(Job::Table {
            id: self.id,
            profile: self.profile.clone(),
            tree: self.tree.clone(),
        })
    }

    /// The inverted view, unless it is built already.
    pub fn job_invert(&self) -> Option<Job> {
        (self.alt.is_none() && !self.inverted).then(|| Job::Invert {
            id: self.id,
            profile: self.profile.clone(),
            options: self.tree.options.clone(),
        })
    }

    /// The callers and callees of `function`, from the top-down profile (also
    /// when the inverted view is on screen: frames are shared, so the id holds).
    pub fn job_sandwich(&self, function: FrameId) -> Job {
        let profile = match (&self.alt, self.inverted) {
            (Some(alt), true) => alt.0.clone(),
            _ => self.profile.clone(),
        };
        let options = match (&self.alt, self.inverted) {
            (Some(alt), true) => alt.1.options.clone(),
            _ => self.tree.options.clone(),
        };
        Job::Sandwich {
            id: self.id,
            profile,
            options,
            function,
            all: self.tree.total(crate::model::NodeId::ROOT),
        }
    }

    /// Puts a finished job's result in place, keeping the user's place. False
    /// when the view has changed since the job was asked for (the result is
    /// then stale and dropped).
    pub fn install(&mut self, done: Done) -> bool {
        match done {
            Done::Inverted { id, profile, tree } => {
                if id != self.id || self.alt.is_some() || self.inverted {
                    return false;
                }
                let flame = FlameState::new(self.flame.orientation);
                self.alt = Some(Box::new((profile, Arc::new(tree), flame)));
                true
            }
            Done::Sandwich { id, sandwich } => {
                if id != self.id {
                    return false;
                }
                self.set_inverted(false);
                self.sandwich = Some(sandwich);
                self.transform_error = None;
                true
            }
            // The App swaps the whole view for a comparison, and says what
            // an export wrote.
            Done::Compared { .. }
            | Done::Exported { .. }
            | Done::Regranulated { .. }
            | Done::Listed { .. } => false,
            Done::Linted {
                id,
                findings,
                delta,
            } => {
                if id != self.id {
                    return false;
                }
                self.lint = Some((id, findings));
                self.delta.offer(delta);
                true
            }
            Done::Paired { key, tree } => self.install_pair(key, tree),
            Done::Tabled {
                id,
                value,
                table,
                counts,
            } => {
                if id != self.id {
                    self.table.cancel();
                    return false;
                }
                self.table.offer(&self.profile, value, table, counts);
                true
            }
            Done::Transformed { id, all, result } => {
                if id != self.id {
                    return false;
                }
                // Shown while the job ran: the App asks for it again, of the
                // transformed profile.
                self.set_inverted(false);
                match result {
                    Err(e) => self.transform_error = Some(e.to_string()),
                    Ok((shown, mut tree)) => {
                        // The order may have been switched while the job ran.
                        let order = self.tree.options.order;
                        if tree.options.order != order {
                            tree.set_order(&shown, order);
                        }
                        let place = self.flame.save(&self.tree, &self.profile);
                        let old = std::mem::replace(&mut self.profile, shown);
                        if self.base.is_none() {
                            self.base = Some(old);
                        }
                        if all.is_empty() {
                            // Nothing left to undo to: no second copy.
                            self.base = None;
                        }
                        self.transforms = all;
                        self.transform_error = None;
                        self.set_tree(tree, Some(place));
                    }
                }
                true
            }
        }
    }

    /// Adds a transform on top of the current ones, here and now.
    pub fn push_transform(&mut self, t: Transform) {
        let job = self.job_push(t);
        self.install(run(job));
    }

    /// Takes back the last transform, here and now.
    pub fn undo_transform(&mut self) {
        if let Some(job) = self.job_undo() {
            self.install(run(job));
        }
    }
}
