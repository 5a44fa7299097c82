//! The function table: one row per function with self, total and call sites,
//! sortable, with noise-level rows dimmed and hotspots marked.

use crate::output::amount;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::StatefulWidget;

use crate::model::{
    CallTree, FrameId, NOISE_SAMPLES, Profile, SortKey, TopTable, TreeOptions, ValueType,
};
use crate::output::percent;
use crate::ui::chrome::text::fit;
use crate::ui::chrome::theme::Theme;

/// A hotspot: at least this share of all samples (and not noise).
pub const HOTSPOT_PERCENT: f64 = 5.0;

#[derive(Clone, Debug, Default)]
pub struct TableState {
    pub cursor: usize,
    pub offset: usize,
    pub sort: SortKey,
    pub descending: bool,
    /// Rows shown last time, for paging.
    pub rows: usize,
    table: Option<TopTable>,
    /// Sample counts per frame (self, total), when the shown value is not samples.
    counts: Option<Vec<(i64, i64)>>,
    /// Which tree the table was built from (its value index).
    built_for: Option<usize>,
    /// The value whose table the job thread is building ([`Self::offer`]);
    /// until it comes the table is left empty rather than built here.
    pub pending: Option<usize>,
}

impl TableState {
    pub fn new() -> Self {
        TableState {
            descending: true,
            ..TableState::default()
        }
    }

    /// Whether the table for `tree` is still to be built (and is not being
    /// built on the job thread).
    pub fn wants(&self, tree: &CallTree) -> bool {
        let value = Some(tree.options.value);
        (self.built_for != value || self.table.is_none()) && self.pending != value
    }

    /// Builds the table for `tree` when it changed, unless the job thread
    /// is building it.
    pub fn ensure(&mut self, profile: &Profile, tree: &CallTree) {
        if self.wants(tree) {
            let t = TopTable::build(profile, tree);
            let counts = sample_counts(profile, tree);
            self.offer(profile, tree.options.value, t, counts);
        }
    }

    /// Takes a table built elsewhere (the job thread) for value `value`.
    pub fn offer(
        &mut self,
        profile: &Profile,
        value: usize,
        mut table: TopTable,
        counts: Option<Vec<(i64, i64)>>,
    ) {
        table.sort(profile, self.sort, self.descending);
        self.table = Some(table);
        self.counts = counts;
        self.built_for = Some(value);
        self.pending = None;
        self.cursor = 0;
        self.offset = 0;
    }

    /// The job's table will not come (its view went stale): build it here
    /// when next needed.
    pub fn cancel(&mut self) {
        self.pending = None;
    }

    /// Sorts by `key`; the same key again flips the direction.
    pub fn sort_by(&mut self, profile: &Profile, key: SortKey) {
        if self.sort == key {
            self.descending = !self.descending;
        } else {
            self.sort = key;
            self.descending = key != SortKey::Name;
        }
        if let Some(t) = &mut self.table {
            t.sort(profile, self.sort, self.descending);
        }
        self.cursor = 0;
        self.offset = 0;
    }

    pub fn len(&self) -> usize {
        self.table.as_ref().map_or(0, |t| t.rows.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Puts the cursor on `f`'s row, if it has one.
    pub fn select_frame(&mut self, f: FrameId) {
        let row = self
            .table
            .as_ref()
            .and_then(|t| t.rows.iter().position(|r| r.frame == f));
        if let Some(i) = row {
            self.cursor = i;
        }
    }

    pub fn move_by(&mut self, delta: isize) {
        let n = self.len();
        if n == 0 {
            return;
        }
        self.cursor = self.cursor.saturating_add_signed(delta).min(n - 1);
    }

    /// The function under the cursor.
    /// The first row, in the table's order, whose frame `keep` accepts.
    pub fn first_where(&self, mut keep: impl FnMut(FrameId) -> bool) -> Option<FrameId> {
        let rows = &self.table.as_ref()?.rows;
        rows.iter().map(|r| r.frame).find(|&f| keep(f))
    }

    pub fn selected(&self) -> Option<FrameId> {
        self.table.as_ref()?.rows.get(self.cursor).map(|r| r.frame)
    }

    /// Samples behind a row (self, total): the row's own values when the shown
    /// value counts samples, else from the profile's sample-count value type.
    pub fn samples_of(
        &self,
        frame: FrameId,
        row_self: i64,
        row_total: i64,
        shown: &ValueType,
    ) -> Option<(i64, i64)> {
        match &self.counts {
            _ if shown.counts_samples() => Some((row_self, row_total)),
            Some(c) => c.get(frame.0 as usize).copied(),
            None => None,
        }
    }
}

/// Per frame (self, total) sample counts from a `samples` value type, when the
/// shown one is something else (pprof's cpu nanoseconds next to samples/count).
pub(crate) fn sample_counts(profile: &Profile, tree: &CallTree) -> Option<Vec<(i64, i64)>> {
    let shown = &profile.value_types[tree.options.value];
    if shown.counts_samples() {
        return None;
    }
    let idx = profile
        .value_types
        .iter()
        .position(ValueType::counts_samples)?;
    let t = CallTree::build(
        profile,
        TreeOptions {
            value: idx,
            ..TreeOptions::default()
        },
    );
    let table = TopTable::build(profile, &t);
    let mut out = vec![(0, 0); profile.frames.len()];
    for r in &table.rows {
        out[r.frame.0 as usize] = (r.self_weight, r.total);
    }
    Some(out)
}

/// The first row to show so that `cursor` is among `rows` rows from `offset`.
pub fn keep_in_view(cursor: usize, offset: usize, rows: usize) -> usize {
    if cursor < offset {
        cursor
    } else if rows > 0 && cursor >= offset + rows {
        cursor + 1 - rows
    } else {
        offset
    }
}

pub struct TableView<'a> {
    pub profile: &'a Profile,
    pub tree: &'a CallTree,
    pub theme: &'a Theme,
}

impl StatefulWidget for TableView<'_> {
    type State = TableState;

    fn render(self, area: Rect, buf: &mut Buffer, state: &mut TableState) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let vt = &self.profile.value_types[self.tree.options.value];
        let all = self.tree.total(self.tree.root());
        let w = usize::from(area.width);
        let rows = usize::from(area.height.saturating_sub(1));
        state.rows = rows;
        state.offset = keep_in_view(state.cursor, state.offset, rows);
        let arrow = |k: SortKey| {
            if state.sort == k {
                if state.descending { "▼" } else { "▲" }
            } else {
                ""
            }
        };
        let header = format!(
            "  {:>12} {:>7} {:>12} {:>7} {:>5}  name{}",
            format!("self{}", arrow(SortKey::SelfWeight)),
            "self%",
            format!("total{}", arrow(SortKey::Total)),
            "total%",
            "sites",
            arrow(SortKey::Name)
        );
        buf.set_stringn(
            area.x,
            area.y,
            fit(&header, w),
            w,
            self.theme.status_label.add_modifier(Modifier::BOLD),
        );
        let Some(table) = state.table.as_ref().filter(|_| state.pending.is_none()) else {
            if state.pending.is_some() && area.height > 1 {
                buf.set_stringn(
                    area.x + 2,
                    area.y + 1,
                    fit("building the function table…", w.saturating_sub(2)),
                    w.saturating_sub(2),
                    self.theme.status_label,
                );
            }
            return;
        };
        for (i, r) in table.rows.iter().enumerate().skip(state.offset).take(rows) {
            let y = area.y + 1 + (i - state.offset) as u16;
            let counts = state.samples_of(r.frame, r.self_weight, r.total, vt);
            let noise = counts.is_some_and(|(_, t)| t < NOISE_SAMPLES);
            let hot = counts.is_some_and(|(_, t)| t >= NOISE_SAMPLES)
                && percent(r.total, all) >= HOTSPOT_PERCENT;
            let mark = if hot { "● " } else { "  " };
            let name = self.profile.frames.name(r.frame);
            let line = format!(
                "{mark}{:>12} {:>6.2}% {:>12} {:>6.2}% {:>5}  {}",
                amount(r.self_weight, vt),
                percent(r.self_weight, all),
                amount(r.total, vt),
                percent(r.total, all),
                r.sites,
                name
            );
            let mut style = Style::default();
            if noise {
                style = style.add_modifier(Modifier::DIM);
            }
            if hot {
                style = style.patch(self.theme.status_name);
            }
            if i == state.cursor {
                style = style.patch(self.theme.selected);
            }
            buf.set_style(Rect::new(area.x, y, area.width, 1), style);
            buf.set_stringn(area.x, y, fit(&line, w), w, style);
        }
    }
}
