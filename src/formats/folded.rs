//! Folded ("collapsed") stacks: `root;caller;leaf COUNT` per line.
//!
//! Streams the input in large chunks and splits lines with memchr. Consecutive
//! lines usually share a long prefix (collapsers sort their output), so each line
//! is first compared with the previous one and only the frames after the shared
//! prefix are hashed and interned: the cost of a line is mostly one memcmp.

use std::io::Read;
use std::sync::Arc;

use memchr::{memchr, memchr_iter, memrchr};

use super::ParseError;
use crate::model::stacks::StackBuilder;
use crate::model::{Profile, StackId, ValueType};
use crate::sources::input::Progress;

/// Most decimals kept for fractional counts; further digits are truncated.
const MAX_DECIMALS: u8 = 6;

/// Whether `head` looks like folded stacks: `Some(true)` sure, `Some(false)` surely
/// not, `None` unsure (no complete line to judge). `complete` says whether `head` is
/// the whole input; if not, its last, cut-off line is not judged.
pub fn probe(head: &[u8], complete: bool) -> Option<bool> {
    let mut good = 0;
    let mut bad = 0;
    let mut lines: Vec<&[u8]> = head.split(|&b| b == b'\n').collect();
    if !complete {
        lines.pop();
    }
    for line in lines.into_iter().take(50) {
        let line = trim_end(line);
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        match split_count(line) {
            Some((stack, _)) if !stack.is_empty() => good += 1,
            _ => bad += 1,
        }
    }
    match (good, bad) {
        (0, 0) => None,
        (0, _) => Some(false),
        (g, b) if g >= b => Some(true),
        // Mostly bad lines: detection then asks whether the input is text at all.
        _ => None,
    }
}

/// The line without trailing blanks, tabs or `\r`.
fn trim_end(line: &[u8]) -> &[u8] {
    let n = line
        .iter()
        .rposition(|&b| !matches!(b, b' ' | b'\t' | b'\r'))
        .map_or(0, |i| i + 1);
    &line[..n]
}

/// A decimal count: (value scaled by 10^decimals, decimals).
fn parse_count(tok: &[u8]) -> Option<(i64, u8)> {
    if tok.is_empty() {
        return None;
    }
    let mut value: i64 = 0;
    let mut decimals: u8 = 0;
    let mut dot = false;
    let mut digits = 0;
    for &b in tok {
        match b {
            b'0'..=b'9' => {
                digits += 1;
                if dot {
                    if decimals >= MAX_DECIMALS {
                        continue;
                    }
                    decimals += 1;
                }
                value = value.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
            }
            b'.' if !dot => dot = true,
            _ => return None,
        }
    }
    (digits > 0).then_some((value, decimals))
}

/// Splits `stack COUNT` at the last space; the stack keeps no trailing blanks.
fn split_count(line: &[u8]) -> Option<(&[u8], (i64, u8))> {
    let sp = memrchr(b' ', line)?;
    let count = parse_count(&line[sp + 1..])?;
    let stack = line[..sp].trim_ascii_end();
    Some((stack, count))
}

/// Rescales `v` from `from` decimals to `to` (>= from).
fn rescale(v: i64, from: u8, to: u8) -> Option<i64> {
    v.checked_mul(10i64.checked_pow(u32::from(to - from))?)
}

/// Length of the common prefix of `a` and `b`.
#[inline]
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 16 <= n {
        let x = u128::from_le_bytes(a[i..i + 16].try_into().unwrap_or([0; 16]));
        let y = u128::from_le_bytes(b[i..i + 16].try_into().unwrap_or([0; 16]));
        if x != y {
            return i + ((x ^ y).trailing_zeros() / 8) as usize;
        }
        i += 16;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// How many frames of the previous line (`prev`, its frames ending at `ends`)
/// the line `cur` shares: those that end inside the bytes both begin with, and
/// one ending exactly there if `cur` has a frame boundary at that point.
fn shared_frames(ends: &[usize], cur: &[u8], prev: &[u8]) -> usize {
    let l = common_prefix(cur, prev);
    let k = ends.partition_point(|&e| e < l);
    if k < ends.len() && ends[k] == l && (cur.len() == l || cur[l] == b';') {
        k + 1
    } else {
        k
    }
}

/// Parser state carried from line to line (and from feed to feed: see
/// [`super::stream::LineStream`]).
pub(crate) struct Folder {
    profile: Profile,
    builder: StackBuilder,
    /// The profile, handed over without a copy ([`Folder::share`]): while it
    /// is here, `profile` and `builder` are empty, and the next line takes it
    /// back (a copy only if someone still holds it).
    shared: Option<Arc<Profile>>,
    /// The profile's own notes, without the ones `add_notes` put on the share.
    notes: Vec<String>,
    /// Lines came after a share: the input grows, so the builder is kept from
    /// then on (appends stay cheap) instead of rebuilt at every one.
    growing: bool,
    /// Stack after each frame of the previous line (`u32::MAX` before any frame).
    path: Vec<u32>,
    /// End offset of each frame of the previous line.
    ends: Vec<usize>,
    /// The previous line's stack bytes when it no longer lives in the read buffer.
    prev_owned: Vec<u8>,
    diff: Option<bool>,
    decimals: u8,
    line_no: u64,
    empty_frames: u64,
}

impl Folder {
    pub(crate) fn new() -> Self {
        Folder {
            profile: Profile::new("folded", vec![ValueType::samples()]),
            builder: StackBuilder::default(),
            shared: None,
            notes: Vec::new(),
            growing: false,
            path: Vec::with_capacity(256),
            ends: Vec::with_capacity(256),
            prev_owned: Vec::new(),
            diff: None,
            decimals: 0,
            line_no: 0,
            empty_frames: 0,
        }
    }

    /// Handles one line (without its `\n`); for a sample line, returns the length
    /// of its stack part, which becomes the "previous" stack.
    fn line(&mut self, line: &[u8], prev: &[u8]) -> Option<usize> {
        self.line_no += 1;
        let line = trim_end(line);
        if line.is_empty() || line.starts_with(b"#") {
            return None;
        }
        let Some((stack, c1)) = split_count(line) else {
            self.profile
                .warnings
                .push(self.line_no, "no count at the end of the line");
            return None;
        };
        if self.diff.is_none() {
            let two = split_count(stack).is_some_and(|(s, _)| !s.is_empty());
            self.diff = Some(two);
            if two {
                self.profile.value_types = vec![
                    ValueType {
                        kind: "before".into(),
                        ..ValueType::samples()
                    },
                    ValueType {
                        kind: "after".into(),
                        ..ValueType::samples()
                    },
                ];
                self.profile.default_value = 1;
                self.profile.meta.diff =
                    Some(Box::new(crate::model::diff::DiffMeta::two_count("folded")));
                self.profile
                    .notes
                    .push("differential folded (two counts per line): before -> after".into());
            }
        }
        let (stack, counts) = if self.diff == Some(true) {
            match split_count(stack) {
                Some((s, c0)) => (s, [c0, c1]),
                None => {
                    self.profile
                        .warnings
                        .push(self.line_no, "expected two counts (differential folded)");
                    return None;
                }
            }
        } else {
            (stack, [c1, (0, 0)])
        };
        let mut vals = [0i64; 2];
        let nvals = self.profile.value_types.len();
        for (i, &(v, d)) in counts.iter().take(nvals).enumerate() {
            match self.scaled(v, d) {
                Some(x) => vals[i] = x,
                None => {
                    self.profile.warnings.push(self.line_no, "count too large");
                    return None;
                }
            }
        }
        let leaf = self.stack(stack, prev);
        self.profile.push_sample(leaf, &vals[..nvals]);
        Some(stack.len())
    }

    /// A count in the profile's current decimals, widening them if needed. Nothing
    /// changes when widening would overflow a stored value.
    fn scaled(&mut self, v: i64, d: u8) -> Option<i64> {
        if d > self.decimals && !self.widen(d) {
            return None;
        }
        rescale(v, d, self.decimals)
    }

    /// Stores values with `d` decimals from now on (`d` at least the current
    /// ones); false, and nothing changed, when a stored value would overflow.
    fn widen(&mut self, d: u8) -> bool {
        if d <= self.decimals {
            return true;
        }
        let Some(factor) = 10i64.checked_pow(u32::from(d - self.decimals)) else {
            return false;
        };
        let values = &mut self.profile.samples.values;
        if values.iter().any(|x| x.checked_mul(factor).is_none()) {
            return false;
        }
        values.iter_mut().for_each(|x| *x *= factor);
        self.decimals = d;
        for vt in &mut self.profile.value_types {
            vt.decimals = d;
        }
        true
    }

    /// Interns the stack, reusing the frames it shares with the previous line.
    fn stack(&mut self, cur: &[u8], prev: &[u8]) -> Option<StackId> {
        let mut k = shared_frames(&self.ends, cur, prev);
        self.path.truncate(k);
        self.ends.truncate(k);
        let mut start = if k == 0 { 0 } else { self.ends[k - 1] + 1 };
        let mut leaf = self.path.last().copied().unwrap_or(u32::MAX);
        loop {
            if start > cur.len() {
                break;
            }
            if start == cur.len() && k > 0 {
                // A trailing `;`: one more empty frame.
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
                let f = self.profile.frames.intern(name);
                let prefix = (leaf != u32::MAX).then_some(StackId(leaf));
                let p = &mut self.profile;
                leaf = self.builder.child(&mut p.stacks, &p.frames, prefix, f).0;
            }
            self.path.push(leaf);
            self.ends.push(end);
            k += 1;
            start = end + 1;
        }
        (leaf != u32::MAX).then_some(StackId(leaf))
    }

    /// Parses a run of whole lines, each ending in `\n`; at the end of input
    /// (`eof`) the last one may lack it.
    pub(crate) fn chunk(&mut self, lines: &[u8], eof: bool) {
        if !lines.is_empty() {
            self.attach();
        }
        let mut start = 0;
        // Where the previous sample line's stack lives while it is still in `lines`.
        let mut prev: Option<(usize, usize)> = None;
        for nl in memchr_iter(b'\n', lines) {
            self.process(lines, start, nl, &mut prev);
            start = nl + 1;
        }
        if eof && start < lines.len() {
            self.process(lines, start, lines.len(), &mut prev);
        }
        // The chunk's memory is reused next: keep the previous stack's bytes.
        if let Some((a, b)) = prev {
            self.prev_owned.clear();
            self.prev_owned.extend_from_slice(&lines[a..b]);
        }
    }

    /// Feeds line `buf[s..e]`, tracking where the last sample's stack is.
    fn process(&mut self, buf: &[u8], s: usize, e: usize, prev: &mut Option<(usize, usize)>) {
        let owned = std::mem::take(&mut self.prev_owned);
        let p: &[u8] = match *prev {
            Some((a, b)) => &buf[a..b],
            None => &owned,
        };
        let stack_len = self.line(&buf[s..e], p);
        self.prev_owned = owned;
        if let Some(len) = stack_len {
            *prev = Some((s, s + len));
        }
    }

    pub(crate) fn samples(&self) -> usize {
        match &self.shared {
            Some(p) => p.samples.len(),
            None => self.profile.samples.len(),
        }
    }

    /// The profile as [`Folder::snapshot`] gives it, but shared instead of
    /// copied: a watched file then costs one profile, not two plus the
    /// builder's child lists (rebuilt, one pass, when the first lines are
    /// appended, and kept from then on).
    pub(crate) fn share(&mut self) -> Arc<Profile> {
        if let Some(p) = &self.shared {
            return p.clone();
        }
        let mut p = std::mem::take(&mut self.profile);
        if !self.growing {
            self.builder = StackBuilder::default();
        }
        self.notes = p.notes.clone();
        self.add_notes(&mut p);
        let p = Arc::new(p);
        self.shared = Some(p.clone());
        p
    }

    /// Takes the shared profile back to go on parsing.
    fn attach(&mut self) {
        if let Some(shared) = self.shared.take() {
            let mut p = Arc::try_unwrap(shared).unwrap_or_else(|p| (*p).clone());
            p.notes = std::mem::take(&mut self.notes);
            if !self.growing {
                self.builder = StackBuilder::resume(&p.stacks, &p.frames);
                self.growing = true;
            }
            self.profile = p;
        }
    }

    /// What [`Folder::finish`] would return now, leaving the state as it is.
    pub(crate) fn snapshot(&self) -> Profile {
        if let Some(p) = &self.shared {
            return (**p).clone();
        }
        let mut p = self.profile.clone();
        self.add_notes(&mut p);
        p
    }

    pub(crate) fn finish(mut self) -> Profile {
        if let Some(p) = self.shared.take() {
            return Arc::unwrap_or_clone(p);
        }
        let mut p = std::mem::take(&mut self.profile);
        self.add_notes(&mut p);
        p
    }

    /// The notes that only the end of input settles.
    fn add_notes(&self, p: &mut Profile) {
        if self.empty_frames > 0 {
            p.notes.push(format!(
                "{} empty frame names (`;;`) were dropped",
                self.empty_frames
            ));
        }
    }
}

mod parallel;
mod tally;
pub(crate) use parallel::parse_parallel;
pub use parallel::set_parallel_min;
pub use tally::{Tallied, tally};

/// Parses folded stacks from `reader`.
pub fn parse(reader: impl Read, progress: &Progress) -> Result<Profile, ParseError> {
    let mut folder = Folder::new();
    super::for_each_line_chunk(reader, progress, |lines, eof| folder.chunk(lines, eof))?;
    Ok(folder.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &[u8]) -> Profile {
        let p = Progress::default();
        parse(text, &p).unwrap_or_default()
    }

    #[test]
    fn parses_counts() {
        assert_eq!(parse_count(b"42"), Some((42, 0)));
        assert_eq!(parse_count(b"1.25"), Some((125, 2)));
        assert_eq!(parse_count(b"1."), Some((1, 0)));
        assert_eq!(parse_count(b"12V.43"), None);
        assert_eq!(parse_count(b"-3"), None);
        assert_eq!(parse_count(b"99999999999999999999"), None);
    }

    #[test]
    fn finds_common_prefix_across_word_boundaries() {
        let a = b"0123456789abcdef0123456789abcdefXYZ";
        let b = b"0123456789abcdef0123456789abcdefXYQ";
        assert_eq!(common_prefix(a, b), 34);
        assert_eq!(common_prefix(b"abc", b"abd"), 2);
        assert_eq!(common_prefix(b"", b"abd"), 0);
    }

    #[test]
    fn shares_prefixes_between_lines_and_not_across_partial_frames() {
        let p = load(b"a;bc;d 1\na;bc;e 2\na;b;e 3\na;bc 4\na;bcx 5\n");
        let paths: Vec<String> = (0..p.samples.len())
            .map(|i| {
                let s = p.samples.stack_of(i).unwrap_or(StackId(0));
                p.stacks
                    .path(s)
                    .iter()
                    .map(|f| p.frames.name(*f).into_owned())
                    .collect::<Vec<_>>()
                    .join(";")
            })
            .collect();
        assert_eq!(paths, ["a;bc;d", "a;bc;e", "a;b;e", "a;bc", "a;bcx"]);
        assert_eq!(p.total(0), 15);
        // a, a;bc, a;bc;d, a;bc;e, a;b, a;b;e, a;bcx
        assert_eq!(p.stacks.len(), 7);
    }

    #[test]
    fn tolerates_blanks_after_the_count_and_counts_trailing_empty_frames() {
        let p = load(b"a;b 1 \na;c 2\t\n   \na;b; 5\n");
        assert_eq!(p.total(0), 8);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert!(
            p.notes.iter().any(|n| n.starts_with("1 empty frame")),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn probe_judges_only_complete_lines() {
        assert_eq!(probe(b"a;b 1\nc;d 2\nhalf a li", false), Some(true));
        assert_eq!(probe(b"a;b;c;d;e;f", false), None);
        assert_eq!(probe(b"no counts here\nnor here\n", true), Some(false));
    }
}
