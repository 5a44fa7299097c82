//! `ember top` on folded stacks without the profile: each line's weight goes
//! straight into per-function sums, so memory is the frame names and the
//! caller pairs, not the stacks (1M lines of deep stacks: a few MiB instead of
//! the call tree's hundreds).
//!
//! What it gives is what [`crate::model::TopTable::build`] gives on the loaded
//! profile (the tests compare the two): lines are read as [`super::Folder`]
//! reads them (the same count and prefix rules, the same warnings), and a
//! function's total counts a stack once however often it recurses. Where the
//! sums would leave that path (a two-count diff file, a count or sum that
//! overflows, no sample at all) it says [`Tallied::Fallback`] and the caller
//! loads the profile instead.

use std::collections::HashSet;
use std::io::Read;

use memchr::{memchr, memchr_iter};

use super::{rescale, shared_frames, split_count, trim_end};
use crate::formats::ParseError;
use crate::model::top::{FunctionRow, TopTable};
use crate::model::{FrameId, Profile, ValueType};
use crate::sources::input::Progress;

/// The outcome of a tally.
pub enum Tallied {
    /// The frames (and warnings) in a profile without samples, and the table.
    Done(Box<Profile>, TopTable),
    /// The input needs the full load (see the module's notes).
    Fallback,
}

/// Sums per frame, carried from line to line.
struct Tally {
    /// Frame names, the value type's decimals, warnings and notes.
    profile: Profile,
    self_w: Vec<i64>,
    total: Vec<i64>,
    sites: Vec<u32>,
    /// The last line that stamped a frame's total (a stack counts once).
    stamp: Vec<u64>,
    /// (frame, caller) pairs seen; the root caller is `u32::MAX`.
    callers: HashSet<(u32, u32), foldhash::fast::FixedState>,
    /// Frame at each depth of the last sample line (the leaf so far, for an
    /// empty name), where it ends, and whether it has a name.
    path: Vec<u32>,
    ends: Vec<usize>,
    named: Vec<bool>,
    /// Leading `path` entries whose caller pairs are recorded (a zero-weight
    /// line's own frames are not).
    recorded: usize,
    /// The last sample line's stack bytes.
    prev: Vec<u8>,
    grand: i64,
    no_frames: i64,
    samples: u64,
    decimals: u8,
    line_no: u64,
    empty_frames: u64,
    /// The first sample line was seen (and had one count).
    settled: bool,
    fallback: bool,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            profile: Profile::new("folded", vec![ValueType::samples()]),
            self_w: Vec::new(),
            total: Vec::new(),
            sites: Vec::new(),
            stamp: Vec::new(),
            callers: HashSet::default(),
            path: Vec::with_capacity(256),
            ends: Vec::with_capacity(256),
            named: Vec::with_capacity(256),
            recorded: 0,
            prev: Vec::new(),
            grand: 0,
            no_frames: 0,
            samples: 0,
            decimals: 0,
            line_no: 0,
            empty_frames: 0,
            settled: false,
            fallback: false,
        }
    }

    fn chunk(&mut self, lines: &[u8], eof: bool) {
        let mut start = 0;
        for nl in memchr_iter(b'\n', lines) {
            if self.fallback {
                return;
            }
            self.line(&lines[start..nl]);
            start = nl + 1;
        }
        if eof && start < lines.len() && !self.fallback {
            self.line(&lines[start..]);
        }
    }

    /// One line, as `Folder::line` reads it.
    fn line(&mut self, line: &[u8]) {
        self.line_no += 1;
        let line = trim_end(line);
        if line.is_empty() || line.starts_with(b"#") {
            return;
        }
        let Some((stack, (v, d))) = split_count(line) else {
            self.profile
                .warnings
                .push(self.line_no, "no count at the end of the line");
            return;
        };
        if !self.settled {
            self.settled = true;
            if split_count(stack).is_some_and(|(s, _)| !s.is_empty()) {
                self.fallback = true;
                return;
            }
        }
        if d > self.decimals && !self.widen(d) {
            return;
        }
        let Some(w) = rescale(v, d, self.decimals) else {
            self.profile.warnings.push(self.line_no, "count too large");
            return;
        };
        self.samples += 1;
        let (leaf, shared) = self.walk(stack);
        self.prev.clear();
        self.prev.extend_from_slice(stack);
        self.recorded = self.recorded.min(shared);
        if w == 0 {
            // No weight: no node in the call tree, so no row and no caller pair.
            return;
        }
        let Some(grand) = self.grand.checked_add(w) else {
            self.fallback = true;
            return;
        };
        self.grand = grand;
        for i in self.recorded..self.path.len() {
            if self.named[i] {
                let caller = if i == 0 { u32::MAX } else { self.path[i - 1] };
                let f = self.path[i];
                if self.callers.insert((f, caller)) {
                    self.sites[f as usize] += 1;
                }
            }
        }
        self.recorded = self.path.len();
        let Some(leaf) = leaf else {
            self.no_frames += w;
            return;
        };
        self.self_w[leaf as usize] += w;
        for &f in &self.path {
            if f == u32::MAX {
                continue;
            }
            let i = f as usize;
            if self.stamp[i] != self.line_no {
                self.stamp[i] = self.line_no;
                self.total[i] += w;
            }
        }
    }

    /// Widens stored sums to `d` decimals; a sum that would overflow sends the
    /// input to the full load (whose own rule then decides).
    fn widen(&mut self, d: u8) -> bool {
        let Some(factor) = 10i64.checked_pow(u32::from(d - self.decimals)) else {
            self.fallback = true;
            return false;
        };
        let sums = [&mut self.self_w, &mut self.total];
        let fits = sums
            .iter()
            .all(|v| v.iter().all(|x| x.checked_mul(factor).is_some()))
            && self.grand.checked_mul(factor).is_some();
        if !fits {
            self.fallback = true;
            return false;
        }
        for v in sums {
            v.iter_mut().for_each(|x| *x *= factor);
        }
        self.grand *= factor;
        self.no_frames *= factor;
        self.decimals = d;
        for vt in &mut self.profile.value_types {
            vt.decimals = d;
        }
        true
    }

    fn intern(&mut self, name: &[u8]) -> u32 {
        let f = self.profile.frames.intern(name).0;
        let n = f as usize + 1;
        if self.self_w.len() < n {
            self.self_w.resize(n, 0);
            self.total.resize(n, 0);
            self.sites.resize(n, 0);
            self.stamp.resize(n, 0);
        }
        f
    }

    /// Sets `path` to the frames of `cur`, reusing those it shares with the
    /// previous sample line (as `Folder::stack` does, so empty frames are
    /// counted alike). Returns the leaf frame and how many entries were shared.
    fn walk(&mut self, cur: &[u8]) -> (Option<u32>, usize) {
        let mut k = shared_frames(&self.ends, cur, &self.prev);
        self.path.truncate(k);
        self.ends.truncate(k);
        self.named.truncate(k);
        let shared = k;
        let mut start = if k == 0 { 0 } else { self.ends[k - 1] + 1 };
        let mut leaf = self.path.last().copied().unwrap_or(u32::MAX);
        loop {
            if start > cur.len() {
                break;
            }
            if start == cur.len() && k > 0 {
                self.empty_frames += 1;
                break;
            }
            let end = memchr(b';', &cur[start..]).map_or(cur.len(), |i| start + i);
            let name = &cur[start..end];
            if name.is_empty() {
                if !cur.is_empty() {
                    self.empty_frames += 1;
                }
            } else {
                leaf = self.intern(name);
            }
            self.named.push(!name.is_empty());
            self.path.push(leaf);
            self.ends.push(end);
            k += 1;
            start = end + 1;
        }
        ((leaf != u32::MAX).then_some(leaf), shared)
    }

    fn finish(mut self) -> Tallied {
        if self.fallback || self.samples == 0 {
            return Tallied::Fallback;
        }
        let rows = (0..self.self_w.len())
            .filter(|&i| self.total[i] != 0)
            .map(|i| FunctionRow {
                frame: FrameId(i as u32),
                self_weight: self.self_w[i],
                total: self.total[i],
                sites: self.sites[i],
            })
            .collect();
        if self.empty_frames > 0 {
            self.profile.notes.push(format!(
                "{} empty frame names (`;;`) were dropped",
                self.empty_frames
            ));
        }
        let table = TopTable {
            rows,
            total: self.grand,
            no_frames: self.no_frames,
        };
        Tallied::Done(Box::new(self.profile), table)
    }
}

/// The per-function table of the folded stacks in `reader`.
pub fn tally(reader: impl Read, progress: &Progress) -> Result<Tallied, ParseError> {
    let mut t = Tally::new();
    super::super::for_each_line_chunk(reader, progress, |lines, eof| t.chunk(lines, eof))?;
    Ok(t.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CallTree, TreeOptions};

    type Named = Vec<(String, FunctionRow)>;

    /// The tally and the loaded profile's table, both sorted by self.
    fn both(text: &[u8]) -> Option<(Named, Named)> {
        let progress = Progress::default();
        let loaded = super::super::parse(text, &progress).unwrap_or_else(|e| panic!("{e:?}"));
        let tree = CallTree::build(&loaded, TreeOptions::default());
        let mut full = TopTable::build(&loaded, &tree);
        full.sort(&loaded, crate::model::top::SortKey::SelfWeight, true);
        let Tallied::Done(p, mut t) = tally(text, &progress).unwrap_or_else(|e| panic!("{e:?}"))
        else {
            return None;
        };
        t.sort(&p, crate::model::top::SortKey::SelfWeight, true);
        assert_eq!(t.total, full.total, "total of {text:?}");
        assert_eq!(t.no_frames, full.no_frames);
        assert_eq!(p.warnings.count, loaded.warnings.count);
        assert_eq!(p.notes, loaded.notes);
        assert_eq!(p.value_types, loaded.value_types);
        let named = |prof: &Profile, tab: &TopTable| {
            tab.rows
                .iter()
                .map(|r| (prof.frames.raw(r.frame).to_vec(), r.clone()))
                .map(|(n, r)| (String::from_utf8_lossy(&n).into_owned(), r))
                .map(|(n, mut r)| {
                    r.frame = FrameId(0);
                    (n, r)
                })
                .collect::<Vec<_>>()
        };
        Some((named(&p, &t), named(&loaded, &full)))
    }

    #[test]
    fn the_tally_equals_the_loaded_table_on_awkward_lines() {
        let cases: &[&[u8]] = &[
            b"a;b;c 3\na;b;d 2\na;b 1\nx 4\n",
            // Recursion counts once in total; shared prefixes that end
            // mid-frame; trailing and doubled `;`.
            b"a;b;a;b 5\na;bc;d 1\na;b;;e 2\na;b; 3\n;a 1\n",
            // Zero counts make no row and no caller pair.
            b"a;b 0\nq;r 0\na;c 2\nz;b 0\nz;y 1\n",
            // Fractions widen the earlier sums.
            b"a;b 1\na;c 2.5\nd 0.125\n",
            // Empty stacks, bad lines, comments, blanks and CRLF.
            b"# comment\n 8\na;b 1\r\nno count here\n\n  \na;b x\nb;a 2",
            // A count too large for its decimals.
            b"a 1\nb 99999999999999999.5\n",
        ];
        for text in cases {
            let (t, full) = both(text).unwrap_or_else(|| panic!("fell back on {text:?}"));
            assert_eq!(t, full, "on {:?}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn two_counts_and_no_samples_go_to_the_full_load() {
        assert!(both(b"a;b 1 2\na;c 3 4\n").is_none());
        let progress = Progress::default();
        let none = tally(&b"# nothing\n"[..], &progress).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(matches!(none, Tallied::Fallback));
    }

    #[test]
    fn a_sum_that_would_overflow_goes_to_the_full_load() {
        let text = format!("a {}\nb {}\n", i64::MAX - 1, 5);
        let progress = Progress::default();
        let t = tally(text.as_bytes(), &progress).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(matches!(t, Tallied::Fallback));
    }
}
