//! The subsecond heat map (FlameScope's idea, in the terminal): one column per
//! second of the profile, one row per slice of a second, each cell shaded by
//! the samples taken then. A 200 ms stall that a whole-profile flame graph
//! averages away shows as a dark (or empty) run of cells.
//!
//! The time cursor is a cell: the small steps move a row (down the second,
//! then on to the next), the big ones a column. Shades are characters
//! (` ·░▒▓█`), so they read in 16 colours and without colour.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::{TimelineData, TimelineState};
use crate::model::Profile;
use crate::ui::chrome::text::fit;

const SHADES: [char; 6] = [' ', '·', '░', '▒', '▓', '█'];
const LABEL_W: u16 = 7;
const NS: u64 = 1_000_000_000;

/// Samples per (second, row) cell of `[lo, hi]`, `rows` rows a second.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    pub lo: u64,
    pub rows: usize,
    pub seconds: usize,
    /// Column-major: `counts[second * rows + row]`.
    pub counts: Vec<f64>,
}

impl Grid {
    pub fn build(p: &Profile, value: usize, rows: usize, lo: u64, hi: u64) -> Grid {
        let rows = rows.max(1);
        let seconds = ((hi - lo) / NS + 1) as usize;
        let mut counts = vec![0.0; seconds * rows];
        for (t, v) in crate::timeline::timed_values(p, value, lo, hi) {
            let (s, frac) = ((t - lo) / NS, (t - lo) % NS);
            let r = (frac as u128 * rows as u128 / NS as u128) as usize;
            counts[s as usize * rows + r.min(rows - 1)] += v;
        }
        Grid {
            lo,
            rows,
            seconds,
            counts,
        }
    }

    /// The cell (second, row) holding time `t`.
    pub fn cell_of(&self, t: u64) -> (usize, usize) {
        let d = t.saturating_sub(self.lo);
        let s = ((d / NS) as usize).min(self.seconds - 1);
        let r = ((d % NS) as u128 * self.rows as u128 / NS as u128) as usize;
        (s, r.min(self.rows - 1))
    }

    /// When cell (second, row) starts.
    pub fn cell_start(&self, s: usize, r: usize) -> u64 {
        self.lo + s as u64 * NS + (r as u64 * NS) / self.rows as u64
    }
}

/// Draws the heat map in `area` (a title row, then the grid).
pub fn draw(buf: &mut Buffer, area: Rect, st: &mut TimelineState, pane: &TimelineData) {
    let TimelineData {
        profile,
        value,
        range,
        theme,
        ..
    } = *pane;
    let Some((lo, hi)) = st.window else {
        return;
    };
    // Rows that divide a second evenly: 50, 100, 200, 250 or 500 ms each.
    let room = usize::from(area.height.saturating_sub(1));
    let rows = [20, 10, 5, 4, 2]
        .into_iter()
        .find(|&r| r <= room)
        .unwrap_or(1);
    let key = (super::identity(profile), value, rows);
    if st
        .heat
        .as_ref()
        .is_none_or(|(k, g)| *k != key || g.lo != lo)
    {
        st.heat = Some((key, Grid::build(profile, value, rows, lo, hi)));
    }
    let Some((_, grid)) = &st.heat else {
        return;
    };
    st.step_small_ns = (NS / rows as u64).max(1);
    st.step_big_ns = NS;
    let cursor = st.cursor.unwrap_or(lo).clamp(lo, hi);
    let (cs, cr) = grid.cell_of(cursor);
    let cols = usize::from(area.width.saturating_sub(LABEL_W)).max(1);
    // Scroll so the cursor's second is on screen.
    let first = cs
        .saturating_sub(cols / 2)
        .min(grid.seconds.saturating_sub(cols));
    st.hit = Some(super::TimeHit {
        x0: area.x + LABEL_W,
        y0: area.y + 1,
        cols: cols as u16,
        rows: rows as u16,
        lo,
        hi,
        heat: Some((first, grid.rows)),
    });
    let max = grid.counts.iter().copied().fold(0.0, f64::max);
    let here = grid.counts[cs * grid.rows + cr];
    let title = format!(
        "heat map · 1 col = 1 s · 1 row = {} ms · cursor +{:.2} s: {here:.0} samples · seconds {}-{} of {}",
        1000 / rows,
        (cursor - lo) as f64 / 1e9,
        first,
        (first + cols).min(grid.seconds),
        grid.seconds
    );
    buf.set_string(
        area.x,
        area.y,
        fit(&title, area.width as usize),
        theme.header,
    );
    let dim = theme.status_label.add_modifier(Modifier::DIM);
    for r in 0..rows.min(usize::from(area.height) - 1) {
        let y = area.y + 1 + r as u16;
        let label = format!("{:>4}ms", r * 1000 / rows);
        buf.set_string(
            area.x,
            y,
            fit(&label, LABEL_W as usize - 1),
            theme.status_label,
        );
        for (i, s) in (first..grid.seconds.min(first + cols)).enumerate() {
            let c = grid.counts[s * grid.rows + r];
            let level = if c <= 0.0 || max <= 0.0 {
                0
            } else {
                (((c / max) * 5.0).ceil() as usize).clamp(1, 5)
            };
            let start = grid.cell_start(s, r);
            let inside = range.is_none_or(|w| start + st.step_small_ns > w.start && start < w.end);
            let mut style = if inside { theme.header_accent } else { dim };
            if (s, r) == (cs, cr) {
                style = style.add_modifier(Modifier::REVERSED);
            }
            let ch = if (s, r) == (cs, cr) && level == 0 {
                '+'
            } else {
                SHADES[level]
            };
            buf.set_string(area.x + LABEL_W + i as u16, y, ch.to_string(), style);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_land_in_their_second_and_slice() {
        let mut p = crate::model::testing::profile_from_lines(&["a 1", "a 1", "a 1", "a 1"]);
        let lo = 10 * NS;
        // 0.05 s, 0.95 s, 1.5 s and 1.55 s after the first... and the first.
        p.samples.time = Some(vec![
            lo,
            lo + NS / 20 * 19,
            lo + NS + NS / 2,
            lo + NS + NS / 2 + NS / 20,
        ]);
        let g = Grid::build(&p, 0, 10, lo, lo + 2 * NS);
        assert_eq!(g.seconds, 3);
        assert_eq!(g.counts[0], 1.0);
        assert_eq!(g.counts[9], 1.0);
        assert_eq!(g.counts[10 + 5], 2.0);
        assert_eq!(g.counts.iter().sum::<f64>(), 4.0);
        assert_eq!(g.cell_of(lo + NS + NS / 2), (1, 5));
        assert_eq!(g.cell_start(1, 5), lo + NS + NS / 2);
    }
}
