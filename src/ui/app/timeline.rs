//! The App's timeline keys: show the pane, move its cursor, cut every view to
//! a time range (a job, like a transform) and back to the whole profile.

use super::{App, Loaded, Phase, View};
use crate::context::ContextSource;
use crate::model::Transform;
use crate::model::timerange::{TimeFilter, Window, describe};
use crate::ui::chrome::keymap::Action;

impl App {
    /// The `--context` logs arrived: line them up once the profile is here.
    pub fn contexts_read(&mut self, logs: Vec<Result<ContextSource, String>>) {
        self.timeline.pending.extend(logs);
        if let Phase::Ready(l) = &self.phase {
            self.timeline.align_pending(l.loaded_profile());
        }
        self.dirty = true;
    }

    /// Timeline keys; false for the rest.
    pub(super) fn timeline_action(&mut self, action: Action) -> bool {
        let step: i64 = match action {
            Action::ToggleTimeline => {
                // Hidden, shown, tall (two thirds of the room), hidden.
                let t = &mut self.timeline;
                (t.shown, t.tall) = match (t.shown, t.tall) {
                    (false, _) => (true, false),
                    (true, false) => (true, true),
                    (true, true) => (false, false),
                };
                return true;
            }
            Action::ThreadRows => {
                self.timeline.per_thread = !self.timeline.per_thread;
                self.timeline.shown = true;
                return true;
            }
            Action::ToggleHeatMap => {
                // The heat map is the timeline's other face: showing it shows the pane.
                let t = &mut self.timeline;
                t.show_heat = !t.show_heat || !t.shown;
                t.shown = true;
                return true;
            }
            Action::TimeLeft => -1,
            Action::TimeRight => 1,
            Action::TimeLeftFast => -2,
            Action::TimeRightFast => 2,
            Action::RangeStart | Action::RangeEnd | Action::RangeClear => 0,
            Action::CompareRanges => {
                self.compare_ranges();
                return true;
            }
            _ => return false,
        };
        let Phase::Ready(l) = &mut self.phase else {
            return true;
        };
        if !self.timeline.shown {
            l.transform_error = Some("the timeline is hidden: T shows it".into());
            return true;
        }
        if l.loaded_profile().samples.time.is_none() {
            l.transform_error = Some("this profile records no sample times".into());
            return true;
        }
        if step != 0 {
            self.timeline.step(step.signum(), step.abs() > 1);
            return true;
        }
        let cursor = self
            .timeline
            .cursor
            .or(self.timeline.window.map(|w| w.0))
            .unwrap_or(0);
        if action == Action::RangeStart {
            self.timeline.mark = Some(cursor);
            return true;
        }
        if self.busy.is_some() {
            let busy = self.busy.clone().unwrap_or_default();
            l.transform_error = Some(format!("still {busy}: try again when it is done"));
            return true;
        }
        if self.view == View::Sandwich {
            l.transform_error = Some("leave the callers/callees view (Esc) to cut by time".into());
            return true;
        }
        let keep = match action {
            Action::RangeClear => None,
            _ => {
                // From the mark (or the start) to the end of the cursor's column.
                let lo = self.timeline.window.map_or(0, |w| w.0);
                let start = self.timeline.mark.take().unwrap_or(lo);
                let (a, b) = (start.min(cursor), start.max(cursor));
                Some(Window {
                    start: a,
                    end: b + self.timeline.step_small_ns.max(1),
                })
            }
        };
        let mut all: Vec<Transform> = l
            .transforms
            .iter()
            .filter(|t| !matches!(t, Transform::TimeRange { .. }))
            .cloned()
            .collect();
        let old = l.transforms.iter().find_map(|t| match t {
            Transform::TimeRange { exclude, .. } => Some(exclude.clone()),
            _ => None,
        });
        let filter = TimeFilter {
            keep,
            exclude: old.unwrap_or_default(),
        };
        let label = match keep {
            None if filter.exclude.is_empty() => "back to the whole profile".to_string(),
            _ => {
                let first = self.timeline.window.map_or(0, |w| w.0);
                format!("cutting to {}", describe(&filter, first))
            }
        };
        if !filter.is_all() {
            all.insert(0, Transform::time_range(filter));
        }
        if all == l.transforms {
            return true;
        }
        if let (Some(old), Some(new)) = (l.time_window(), keep)
            && old != new
        {
            self.timeline.prev_range = Some(old);
        }
        // The top-down profile is the one cut; the inverted view is rebuilt
        // from it after.
        l.set_inverted(false);
        let job = l.job_replace(all, label);
        self.request(job);
        true
    }
}

impl App {
    /// A click on the timeline moves the cursor there; a drag selects the
    /// range it covers (every view is cut to it on release). False when the
    /// event is not on the timeline.
    pub(super) fn timeline_mouse(
        &mut self,
        kind: crossterm::event::MouseEventKind,
        col: u16,
        row: u16,
    ) -> bool {
        use crossterm::event::{MouseButton, MouseEventKind};
        if !self.timeline.shown {
            return false;
        }
        let Some(t) = self.timeline.time_at(col, row) else {
            return false;
        };
        self.dirty = true;
        match kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.timeline.cursor = Some(t);
                self.timeline.mark = Some(t);
            }
            MouseEventKind::Drag(MouseButton::Left) => self.timeline.cursor = Some(t),
            MouseEventKind::Up(MouseButton::Left) => {
                self.timeline.cursor = Some(t);
                if self.timeline.mark.is_some_and(|m| m != t) {
                    self.timeline_action(Action::RangeEnd);
                } else {
                    self.timeline.mark = None;
                }
            }
            _ => {}
        }
        true
    }

    /// `C`: the range before the last one against the last one, as a diff
    /// view; again, back to the view it came from.
    fn compare_ranges(&mut self) {
        if let Some((back, name)) = self.compare_from.take() {
            self.phase = Phase::Ready(back);
            self.source_name = name;
            self.view = View::Flame;
            return;
        }
        let Phase::Ready(l) = &mut self.phase else {
            return;
        };
        let (Some(before), Some(after)) = (self.timeline.prev_range, l.time_window()) else {
            l.transform_error = Some(
                "cut to a time range ({ }), then to another: C compares the first with the second"
                    .into(),
            );
            return;
        };
        if self.busy.is_some() {
            l.transform_error = Some("still busy: try again when it is done".into());
            return;
        }
        let others: Vec<Transform> = l
            .transforms
            .iter()
            .filter(|t| !matches!(t, Transform::TimeRange { .. }))
            .cloned()
            .collect();
        let first = self.timeline.window.map_or(0, |w| w.0);
        let side = |w: Window| {
            let mut all = vec![Transform::time_range(TimeFilter {
                keep: Some(w),
                exclude: Vec::new(),
            })];
            all.extend(others.iter().cloned());
            all
        };
        let name = |w: Window| {
            describe(
                &TimeFilter {
                    keep: Some(w),
                    exclude: Vec::new(),
                },
                first,
            )
        };
        let job = crate::ui::runtime::jobs::Job::CompareRanges {
            id: l.id,
            input: l.loaded_profile().clone(),
            before: side(before),
            after: side(after),
            names: [name(before), name(after)],
            orientation: l.flame.orientation,
        };
        self.request(job);
    }

    /// A comparison of two ranges is ready: it replaces the view it was made
    /// from, which is kept to come back to.
    pub(super) fn compared(
        &mut self,
        id: u64,
        result: Result<Box<Loaded>, String>,
        names: [String; 2],
    ) {
        let Phase::Ready(l) = &mut self.phase else {
            return;
        };
        if l.id != id {
            return;
        }
        match result {
            Err(e) => l.transform_error = Some(format!("comparing the ranges: {e}")),
            Ok(diff) => {
                let old = std::mem::replace(&mut self.phase, Phase::Ready(diff));
                let title = format!("{}: {} → {}", self.source_name, names[0], names[1]);
                let name = std::mem::replace(&mut self.source_name, title);
                if let Phase::Ready(old) = old {
                    self.compare_from = Some((old, name));
                }
                self.view = View::Flame;
            }
        }
    }
}
