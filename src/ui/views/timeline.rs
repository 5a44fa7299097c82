//! The timeline pane under the flame view: samples per time slice and the
//! host-context strips (CPU, run queue, swapping, memory, disks) on the
//! profile's clock, a cursor that reads every strip at one moment, and the
//! time range the views are cut to.
//!
//! One row per strip: a label, block characters (`▁▂▃▄▅▆▇█`, readable in 16
//! colours and without colour), the value at the cursor. The cursor column is
//! drawn reversed; columns outside the active time range are dimmed.

pub mod heatmap;

use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use crate::context::{ContextSource, Unit};
use crate::host::sanitize::sanitize;
use crate::model::Profile;
use crate::model::timerange::Window;
use crate::timeline::flags::{Flag, Severity, flags};
use crate::timeline::{
    AlignHow, Aligned, Histogram, Strip, align_anchored, format_clock, profile_window, strip_value,
    strips,
};
use crate::ui::chrome::text::fit;
use crate::ui::chrome::theme::Theme;
use crate::ui::loaded::Loaded;

const LABEL_W: u16 = 10;
const VALUE_W: u16 = 9;
/// Which profile a cache was built for: its address and sample count (a
/// live reload may reuse a freed address, never with the same samples
/// unless nothing changed).
pub fn identity(p: &Arc<Profile>) -> (usize, usize) {
    (Arc::as_ptr(p) as usize, p.samples.len())
}

/// A profile's window (first and last sample) and its offset to wall clock.
type ProfileClock = (Option<(u64, u64)>, Option<i64>);

/// What a cached row was built for: the profile (by address), value, width.
type CacheKey = ((usize, usize), usize, usize);

/// How many threads get a row of their own.
const THREAD_ROWS: usize = 5;
const BLOCKS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// What the timeline shows and where its cursor is.
#[derive(Default)]
pub struct TimelineState {
    pub shown: bool,
    /// Give the pane two thirds of the room instead of two fifths.
    pub tall: bool,
    /// The time cursor in the profile's clock; `None`: the window's start.
    pub cursor: Option<u64>,
    /// Where the range-start key put the start of a range.
    pub mark: Option<u64>,
    /// The range the last one replaced: the "before" of a comparison.
    pub prev_range: Option<Window>,
    /// Context logs read but not lined up yet (the profile was not loaded).
    pub pending: Vec<Result<ContextSource, String>>,
    /// `--marks` not placed yet, and placed: where, and what happened.
    pub pending_marks: Vec<crate::model::timerange::Mark>,
    pub marks: Vec<(Window, String)>,
    pub logs: Vec<Aligned>,
    pub strips: Vec<Strip>,
    /// Why a log is not drawn, and how the drawn ones were aligned.
    pub notes: Vec<String>,
    /// First strip row on screen (the rest scroll).
    pub first_strip: usize,
    /// `--align`, kept for logs that arrive after the profile.
    pub nudge_ns: i64,
    /// A capture bundle's clock anchor, for a profile without its own.
    pub anchor_ns: Option<i64>,
    /// The last drawn histogram: for which profile, value and width.
    hist: Option<((usize, usize), usize, usize, Histogram)>,
    /// Nanoseconds per column at the last draw.
    pub col_ns: u64,
    /// What the small and big cursor steps move by, as last drawn.
    pub step_small_ns: u64,
    pub step_big_ns: u64,
    /// Show the subsecond heat map instead of the strips.
    pub show_heat: bool,
    /// Where the last draw put the time axis, for the mouse.
    pub hit: Option<TimeHit>,
    /// A samples row per thread (the busiest few) under the total.
    pub per_thread: bool,
    /// The last per-thread rows, for which profile, value and width.
    threads: Option<(CacheKey, Vec<(String, Histogram)>)>,
    /// The last heat map grid: for which profile, value and rows.
    pub heat: Option<(CacheKey, heatmap::Grid)>,
    /// The profile window at the last draw.
    pub window: Option<(u64, u64)>,
    /// The window and wall-clock offset of one profile (by address): a scan
    /// of every sample time, done once per profile, not per draw.
    clock: Option<((usize, usize), ProfileClock)>,
    /// What the logs say about the window on screen, and for which window
    /// and sample count (recomputed when either changes).
    pub flags: Vec<Flag>,
    flags_key: Option<(u64, u64, usize, usize)>,
}

impl TimelineState {
    /// Lines up the logs read so far with `profile` (as loaded: uncut).
    pub fn align_pending(&mut self, profile: &Profile) {
        if !self.pending_marks.is_empty() {
            let sel = crate::model::timerange::TimeSelection {
                anchor_ns: self.anchor_ns,
                ..Default::default()
            };
            match sel.place_marks(&std::mem::take(&mut self.pending_marks), profile) {
                Ok(m) => {
                    self.marks = m;
                    self.shown = true;
                }
                Err(e) => self.notes.push(format!("--marks: {e}")),
            }
        }
        if self.pending.is_empty() {
            return;
        }
        for log in std::mem::take(&mut self.pending) {
            match log.and_then(|src| align_anchored(src, profile, self.nudge_ns, self.anchor_ns)) {
                Ok(a) => {
                    if a.how == AlignHow::StartTime {
                        self.notes.push(format!(
                            "{}: no common clock, aligned by start time (--align to shift it)",
                            a.source.name
                        ));
                    }
                    if !a.source.warnings.is_empty() {
                        self.notes.push(format!(
                            "{}: {} lines skipped",
                            a.source.name,
                            a.source.warnings.len()
                        ));
                    }
                    self.logs.push(a);
                }
                Err(e) => self.notes.push(e),
            }
        }
        self.strips = strips(&self.logs);
        if !self.logs.is_empty() {
            self.shown = true;
        }
    }

    /// How many rows the pane wants: a title, the flags, the samples row, the
    /// strips; or the heat map's title and ten rows a second.
    pub fn rows_wanted(&self) -> u16 {
        if self.show_heat {
            return 11;
        }
        let threads = if self.per_thread { THREAD_ROWS } else { 0 };
        let extra =
            usize::from(!self.flags.is_empty()) + usize::from(!self.marks.is_empty()) + threads;
        (2 + extra + self.strips.len()) as u16
    }

    /// The flags of the window on screen: the time range within the profile's
    /// window, with the samples the view holds.
    pub fn refresh_flags(&mut self, l: &Loaded) {
        if self.logs.is_empty() {
            self.flags.clear();
            return;
        }
        let Some((lo, hi)) = self.clock_of(l.loaded_profile()).0 else {
            return;
        };
        let (lo, hi) = match l.time_window() {
            Some(w) => (w.start.max(lo), w.end.min(hi + 1)),
            None => (lo, hi + 1),
        };
        let samples = l
            .tree
            .samples(crate::model::NodeId::ROOT)
            .map_or(l.profile.samples.len(), |s| s as usize);
        let key = (lo, hi, samples, self.logs.len());
        if self.flags_key != Some(key) {
            self.flags = flags(
                &self.logs,
                l.loaded_profile(),
                lo as i64,
                hi as i64,
                samples,
            );
            self.flags_key = Some(key);
        }
    }

    /// Moves the cursor one small or big step (`dir` -1 or 1), within the window.
    pub fn step(&mut self, dir: i64, big: bool) {
        let Some((lo, hi)) = self.window else {
            return;
        };
        let by = if big {
            self.step_big_ns
        } else {
            self.step_small_ns
        };
        let at = self.cursor.unwrap_or(lo) as i64 + dir * by.max(1) as i64;
        self.cursor = Some(at.clamp(lo as i64, hi as i64) as u64);
    }

    fn histogram(
        &mut self,
        p: &Arc<Profile>,
        value: usize,
        cols: usize,
        lo: u64,
        hi: u64,
    ) -> Option<&Histogram> {
        let key = (identity(p), value, cols);
        let stale = self
            .hist
            .as_ref()
            .is_none_or(|(a, b, c, h)| (*a, *b, *c) != key || h.lo != lo || h.hi != hi);
        if stale {
            let h = Histogram::build(p, value, cols, lo, hi);
            self.hist = Some((key.0, key.1, key.2, h));
        }
        self.hist.as_ref().map(|(_, _, _, h)| h)
    }
}

/// A value as a strip's last column shows it.
fn value_text(v: f32, unit: Unit) -> String {
    match unit {
        Unit::Percent => format!("{v:.0}%"),
        Unit::Ms => format!("{v:.1}ms"),
        Unit::Kib => kib(v),
        Unit::KibPerSec => format!("{}/s", kib(v)),
        Unit::Tasks if v.fract() != 0.0 => format!("{v:.1}"),
        Unit::Tasks | Unit::PerSec => format!("{v:.0}"),
    }
}

/// KiB in binary units: `512K`, `87M`, `15.1G`.
fn kib(v: f32) -> String {
    match v {
        v if v >= 1024.0 * 1024.0 => format!("{:.1}G", v / (1024.0 * 1024.0)),
        v if v >= 1024.0 => format!("{:.0}M", v / 1024.0),
        v => format!("{v:.0}K"),
    }
}

fn block(v: f64, scale: f64) -> char {
    if v.is_nan() || v <= 0.0 || scale <= 0.0 {
        return BLOCKS[0];
    }
    let level = ((v / scale).min(1.0) * 8.0).ceil() as usize;
    BLOCKS[level.clamp(1, 8)]
}

/// The last drawn time axis: which cells map to which times.
#[derive(Clone, Copy, Debug)]
pub struct TimeHit {
    /// The axis's first column and the grid's first row.
    pub x0: u16,
    pub y0: u16,
    pub cols: u16,
    pub rows: u16,
    /// Strips: the window, `cols` equal slices of it. Heat map: the second
    /// of the first column and the rows a second.
    pub lo: u64,
    pub hi: u64,
    pub heat: Option<(usize, usize)>,
}

impl TimeHit {
    /// The time under the cell (col, row), if it is on the axis.
    pub fn time_at(&self, col: u16, row: u16) -> Option<u64> {
        if col < self.x0 || col >= self.x0 + self.cols || row < self.y0.saturating_sub(1) {
            return None;
        }
        let c = u64::from(col - self.x0);
        match self.heat {
            None => Some(self.lo + (self.hi - self.lo) * c / u64::from(self.cols.max(1))),
            Some((first, rows)) => {
                let r = u64::from(row.checked_sub(self.y0)?).min(rows as u64 - 1);
                let ns = 1_000_000_000u64;
                let t = self.lo + (first as u64 + c) * ns + r * ns / rows as u64;
                Some(t.min(self.hi))
            }
        }
    }
}

impl TimelineState {
    /// The window and wall-clock offset of `p`, computed once per profile.
    fn clock_of(&mut self, p: &Arc<Profile>) -> ProfileClock {
        let key = identity(p);
        match self.clock {
            Some((k, c)) if k == key => c,
            _ => {
                let w = profile_window(p);
                let o = crate::model::timerange::wall_offset_with(p, self.anchor_ns)
                    .map(|(o, _)| o)
                    .filter(|_| p.samples.time.is_some());
                self.clock = Some((key, (w, o)));
                (w, o)
            }
        }
    }

    /// The time under a mouse cell in the pane, if any.
    pub fn time_at(&self, col: u16, row: u16) -> Option<u64> {
        let hit = self.hit?;
        (row < hit.y0 + hit.rows)
            .then(|| hit.time_at(col, row))
            .flatten()
    }
}

/// What the pane draws from: the profile as loaded (uncut), the value
/// column shown, the active time range, the theme.
#[derive(Clone, Copy)]
pub struct TimelineData<'a> {
    pub profile: &'a Arc<Profile>,
    pub value: usize,
    pub range: Option<Window>,
    /// The samples the view holds (of the range, when there is one).
    pub shown_samples: Option<f64>,
    pub theme: &'a Theme,
}

/// Draws the pane into `area` of `buf`: the strips, or the heat map.
pub fn draw(buf: &mut Buffer, area: Rect, st: &mut TimelineState, pane: &TimelineData) {
    let TimelineData {
        profile,
        value,
        range,
        theme,
        ..
    } = *pane;
    if area.height == 0 || area.width < LABEL_W + VALUE_W + 4 {
        return;
    }
    let (window, wall) = st.clock_of(profile);
    let Some((lo, hi)) = window else {
        let text = "timeline: this profile records no sample times";
        buf.set_string(
            area.x,
            area.y,
            fit(text, area.width as usize),
            theme.status_label,
        );
        return;
    };
    let cols = (area.width - LABEL_W - VALUE_W) as usize;
    st.window = Some((lo, hi));
    st.col_ns = ((hi - lo) / cols as u64).max(1);
    if st.show_heat {
        heatmap::draw(buf, area, st, pane);
        return;
    }
    st.step_small_ns = st.col_ns;
    st.step_big_ns = st.col_ns * 10;
    let cursor = st.cursor.unwrap_or(lo).clamp(lo, hi);
    let Some(hist) = st.histogram(profile, value, cols, lo, hi).cloned() else {
        return;
    };
    let cur_col = hist.bucket_of(cursor);
    let x0 = area.x + LABEL_W;
    st.hit = Some(TimeHit {
        x0,
        y0: area.y + 1,
        cols: cols as u16,
        rows: area.height.saturating_sub(1),
        lo,
        hi,
        heat: None,
    });
    let at = |t: u64| -> String {
        let rel = format!("+{:.2} s", (t - lo) as f64 / 1e9);
        match wall {
            Some(off) => format!("{rel} {}", &format_clock(t as i64 + off, true)[11..]),
            None => rel,
        }
    };
    // Title: span, column width, cursor, range, mark.
    let mut title = format!(
        "timeline {:.1} s · {:.2} s/col · cursor {}",
        (hi - lo) as f64 / 1e9,
        st.col_ns as f64 / 1e9,
        at(cursor)
    );
    if let Some(w) = range {
        let end = if w.end == u64::MAX {
            "end".to_string()
        } else {
            at(w.end.min(hi))
        };
        title.push_str(&format!(" · range {}..{}", at(w.start.max(lo)), end));
        if let Some(n) = pane.shown_samples {
            let secs = (w.end.min(hi + 1) - w.start.max(lo)) as f64 / 1e9;
            let rate = if secs > 0.0 { n / secs } else { 0.0 };
            let noise = if n < crate::timeline::flags::FEW_SAMPLES as f64 {
                ", noise"
            } else {
                ""
            };
            title.push_str(&format!(" ({n:.0} samples, {rate:.0}/s{noise})"));
        }
    }
    if let Some(m) = st.mark {
        title.push_str(&format!(" · start marked at {}", at(m)));
    }
    let (c0, c1) = (hist.bucket_start(cur_col), hist.bucket_start(cur_col + 1));
    if let Some((_, label)) = st
        .marks
        .iter()
        .find(|(w, _)| w.start < c1.max(c0 + 1) && w.end > c0)
    {
        title.push_str(&format!(" · mark: {}", sanitize(label)));
    }
    let strip_rows = usize::from(area.height).saturating_sub(2 + usize::from(!st.flags.is_empty()));
    if st.strips.len() > strip_rows {
        let more = st.strips.len() - strip_rows;
        let hint = if st.tall { "" } else { ", T: taller" };
        title.push_str(&format!(" · +{more} strips{hint}"));
    }
    if let Some(note) = st.notes.first() {
        title.push_str(" · ");
        title.push_str(&sanitize(note));
    }
    buf.set_string(
        area.x,
        area.y,
        fit(&title, area.width as usize),
        theme.header,
    );
    let mut y = area.y + 1;
    if !st.flags.is_empty() && y < area.bottom() {
        let shorts: Vec<&str> = st.flags.iter().map(|f| f.short.as_str()).collect();
        let style = match st.flags[0].severity {
            Severity::Warn => theme.warning,
            Severity::Note => theme.status_label,
        };
        let text = format!("! {} (i: details)", shorts.join(" · "));
        buf.set_string(area.x, y, fit(&text, area.width as usize), style);
        y += 1;
    }
    let inside = |b: usize| {
        range.is_none_or(|w| {
            let t = hist.bucket_start(b);
            let next = hist.bucket_start(b + 1);
            next > w.start && t < w.end
        })
    };
    let dim = theme.status_label.add_modifier(Modifier::DIM);
    let cursor_style = |s: Style| s.add_modifier(Modifier::REVERSED);
    // The samples row.
    let row = |buf: &mut Buffer, y: u16, label: &str, h: &Histogram, bright: Style| {
        let max = h.counts.iter().copied().fold(0.0, f64::max);
        buf.set_string(
            area.x,
            y,
            fit(label, LABEL_W as usize - 1),
            theme.status_label,
        );
        for (b, &c) in h.counts.iter().enumerate() {
            let mut style = if inside(b) { bright } else { dim };
            if b == cur_col {
                style = cursor_style(style);
            }
            buf.set_string(x0 + b as u16, y, block(c, max).to_string(), style);
        }
        let here = h.counts.get(cur_col).copied().unwrap_or(0.0);
        buf.set_string(
            x0 + cols as u16 + 1,
            y,
            fit(&format!("{here:.0}"), VALUE_W as usize - 1),
            theme.status_name,
        );
    };
    if y < area.bottom() {
        row(buf, y, "samples", &hist, theme.header_accent);
        y += 1;
    }
    // A row per busy thread, when asked.
    if st.per_thread {
        let key = (identity(profile), value, cols);
        if st.threads.as_ref().is_none_or(|(k, _)| *k != key) {
            let rows = Histogram::per_thread(profile, value, cols, lo, hi, THREAD_ROWS);
            st.threads = Some((key, rows));
        }
        let rows = st.threads.as_ref().map_or(&[][..], |(_, r)| r.as_slice());
        for (name, h) in rows {
            if y >= area.bottom() {
                break;
            }
            row(buf, y, &sanitize(name), h, theme.frame_text);
            y += 1;
        }
    }
    // The marks: a bar under a range, a tick at a moment; the label of the
    // one at the cursor (or the last one before it) on the right.
    if !st.marks.is_empty() && y < area.bottom() {
        buf.set_string(
            area.x,
            y,
            fit("marks", LABEL_W as usize),
            theme.status_label,
        );
        for b in 0..cols {
            let (t0, t1) = (
                hist.bucket_start(b),
                hist.bucket_start(b + 1).max(hist.bucket_start(b) + 1),
            );
            let here = st.marks.iter().find(|(w, _)| w.start < t1 && w.end > t0);
            let ch = match here {
                Some((w, _)) if w.len_ns() <= 1 => '|',
                Some(_) => '━',
                None => ' ',
            };
            let mut style = theme.warning;
            if b == cur_col {
                style = cursor_style(style);
            }
            buf.set_string(x0 + b as u16, y, ch.to_string(), style);
        }
        let label = st
            .marks
            .iter()
            .filter(|(w, _)| w.start <= cursor.max(hist.bucket_start(cur_col + 1)))
            .max_by_key(|(w, _)| w.start)
            .map_or("", |(_, l)| l.as_str());
        buf.set_string(
            x0 + cols as u16 + 1,
            y,
            fit(&sanitize(label), VALUE_W as usize - 1),
            theme.status_name,
        );
        y += 1;
    }
    // The strips, from `first_strip` on, as many as fit.
    let rows = area.bottom().saturating_sub(y) as usize;
    st.first_strip = st.first_strip.min(st.strips.len().saturating_sub(rows));
    for strip in st.strips.iter().skip(st.first_strip).take(rows) {
        buf.set_string(
            area.x,
            y,
            fit(&sanitize(&strip.label), LABEL_W as usize - 1),
            theme.status_label,
        );
        let unit = st.logs[strip.log].source.series[strip.series].metric.unit();
        for b in 0..cols {
            let mid = (hist.bucket_start(b) + hist.bucket_start(b + 1)) / 2;
            let v = strip_value(&st.logs, strip, mid);
            let mut style = if inside(b) { theme.frame_text } else { dim };
            if b == cur_col {
                style = cursor_style(style);
            }
            let ch = match v {
                Some(v) => block(f64::from(v), f64::from(strip.scale)),
                None => '·',
            };
            buf.set_string(x0 + b as u16, y, ch.to_string(), style);
        }
        let here = strip_value(&st.logs, strip, cursor)
            .map_or_else(|| "-".into(), |v| value_text(v, unit));
        buf.set_string(
            x0 + cols as u16 + 1,
            y,
            fit(&here, VALUE_W as usize - 1),
            theme.status_name,
        );
        y += 1;
    }
}
