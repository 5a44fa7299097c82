//! `perf script` text: per sample an event line (`comm pid/tid [cpu] time: period
//! event:`), then its call chain leaf first, one `address symbol+offset (dso)` line per
//! frame, then a blank line.
//!
//! Stacks are named the way `inferno-collapse-perf` (0.12.8, default options) names
//! them, so ember's `period` view equals its folded output: the root frame is the comm
//! (blanks become `_`), symbol offsets are stripped, argument lists are cut
//! (`tidy_generic`), Java's `L...;` class prefix is tidied for `java*` comms, partly
//! demangled Rust symbols are finished, `[unknown]` symbols in a known dso become
//! `[dso basename]`, and Java inlining (`a->b->c`) gives `b_[i]`, `c_[i]` frames.
//! Kernel, JIT and inlined frames are marked in [`Profile::frame_meta`] instead of
//! being renamed (inferno's `--annotate-kernel` / `--annotate-jit` add `_[k]` / `_[j]`).
//! A sample weighs its period where the event line has one, else 1.
//!
//! Where ember reads more than inferno: every event type is kept (inferno keeps the
//! first): `samples` and `period` count them all, and a file with several events gets
//! a `<event> samples` / `<event> period` pair per event. TABs count as blanks
//! (simpleperf-style output, which makes inferno panic), event lines need no
//! timestamp, `-1` ids are read as unknown, frame lines may lack the dso (`perf script
//! -F ip,sym`; kernel frames are then told by their address), C++ `(anonymous
//! namespace)::f` frames are kept (inferno skips every symbol starting with `(`),
//! `--srcline` lines give frames a source location, trace-event fields after the event
//! name are skipped, and an event line where a frame line was expected starts a new
//! sample. `-F +tod` wall-clock times, or perf's `--header` reference time, give
//! `meta.time_to_unix_ns`; other `--header` comments go to `meta.extra`.
//!
//! Streams the input in large chunks split with memchr; an event's frames are interned
//! as their lines are read, and the finished stack shares its prefix with the previous
//! sample's (consecutive samples of a thread mostly differ near the leaf).

mod finish;
mod lines;
mod names;
mod samples;

pub use self::samples::NO_STACK;

use std::collections::HashMap;
use std::io::Read;

use self::lines::{
    is_header_rule, is_hex, parse_event_line, split_frame, split_frame_without_dso, trim_end,
};
use super::ParseError;
use crate::model::stacks::StackBuilder;
use crate::model::{FrameId, Profile, StackId, Unit, ValueType};
use crate::sources::input::Progress;

// ---------------------------------------------------------------------------
// Detection

/// Whether `head` is `perf script` output (see [`super::folded::probe`] for the
/// contract): sure when an event line is followed by a frame line (or carries its
/// single frame itself), surely not when the first line that is not a comment is no
/// event line, unsure otherwise.
pub fn probe(head: &[u8], complete: bool) -> Option<bool> {
    let mut lines: Vec<&[u8]> = head.split(|&b| b == b'\n').collect();
    if !complete {
        lines.pop();
    }
    let mut header_block = false;
    let mut after_event = false;
    // After an event line with an event name: frame lines may lack the dso.
    let mut after_named_event = false;
    let mut timed_events = 0;
    for line in lines.into_iter().take(5000) {
        if line.first() == Some(&b'#') {
            if is_header_rule(line) {
                header_block = !header_block;
            }
            continue;
        }
        if header_block {
            // A header value that went on over several lines (`# cmdline` with newlines).
            continue;
        }
        let t = trim_end(line);
        if t.is_empty() {
            after_event = false;
            after_named_event = false;
            continue;
        }
        if after_event && split_frame(t).is_some_and(|f| is_hex(f.pc)) {
            return Some(true);
        }
        if after_named_event && split_frame_without_dso(t).is_some() {
            return Some(true);
        }
        match parse_event_line(t) {
            Some(ev) => {
                if split_frame(ev.rest).is_some_and(|f| is_hex(f.pc)) {
                    return Some(true);
                }
                if ev.time_ns.is_some() && !ev.event.is_empty() {
                    timed_events += 1;
                    if timed_events >= 3 {
                        // Events without call chains (`perf record` without -g).
                        return Some(true);
                    }
                }
                after_event = true;
                after_named_event = !ev.event.is_empty() && ev.rest.is_empty();
            }
            None => return Some(false),
        }
    }
    None
}

// ---------------------------------------------------------------------------
// The parser: its state here; it reads lines in `samples` and ends in `finish`.

#[derive(Clone, Copy, Debug, Default)]
struct Current {
    thread: u32,
    root: FrameId,
    /// The comm starts with `java` (inferno then tidies `Lpkg/Class;` names).
    java: bool,
    event: u32,
    period: Option<u64>,
    time: Option<u64>,
    cpu: Option<u32>,
}

/// What is known about one event (by its base name).
#[derive(Clone, Debug, Default)]
struct EventStats {
    base: String,
    /// Names as printed (`cycles:u`, `cycles:ppp`), in order of appearance.
    printed: Vec<String>,
    samples: u64,
    any_period: bool,
    first_period: Option<u64>,
    constant_period: bool,
}

type ThreadKey = (Vec<u8>, Option<u64>, Option<u64>);

/// Parser state carried from line to line (and from feed to feed: see
/// [`super::stream::LineStream`]). Cloned for a snapshot, which ends the clone's
/// input, not this one's.
#[derive(Clone)]
pub(crate) struct Parser {
    profile: Profile,
    builder: StackBuilder,
    line_no: u64,
    in_event: bool,
    header_block: bool,
    saw_event: bool,
    /// The first line that was neither a comment nor perf text.
    first_bad: Option<(u64, String)>,
    cur: Current,
    /// The event's frames so far, leaf first.
    frames: Vec<FrameId>,
    /// Root-first frames of the previous sample and the stack after each.
    path_frames: Vec<FrameId>,
    path_stacks: Vec<StackId>,
    cur_path: Vec<FrameId>,
    name_buf: Vec<u8>,
    parts: Vec<(usize, usize)>,
    thread_ids: HashMap<ThreadKey, u32>,
    thread_roots: Vec<(FrameId, bool)>,
    last_thread: Option<(ThreadKey, u32)>,
    events: Vec<EventStats>,
    event_ids: HashMap<Vec<u8>, u32>,
    last_event: Option<(Vec<u8>, u32)>,
    col_thread: Vec<u32>,
    col_time: Vec<u64>,
    col_cpu: Vec<u32>,
    col_event: Vec<u32>,
    /// Earliest and latest timestamp read.
    time_span: Option<(u64, u64)>,
    any_cpu: bool,
    /// A sample without a timestamp gets the one before it (0 before any).
    last_time: u64,
    tod_offset: Option<i64>,
    ref_offset: Option<i64>,
    stackless: u64,
    /// The input ended in the middle of a line.
    cut: bool,
    /// How frames are named once a `--srcline` line gives their location.
    granularity: super::Granularity,
}

impl Parser {
    pub(crate) fn new() -> Self {
        Parser {
            // Two columns while reading; `finish` names them and adds per-event pairs.
            profile: Profile::new(
                "perf",
                vec![ValueType::samples(), ValueType::new("period", Unit::Count)],
            ),
            builder: StackBuilder::default(),
            line_no: 0,
            in_event: false,
            header_block: false,
            saw_event: false,
            first_bad: None,
            cur: Current::default(),
            frames: Vec::with_capacity(256),
            path_frames: Vec::with_capacity(256),
            path_stacks: Vec::with_capacity(256),
            cur_path: Vec::with_capacity(256),
            name_buf: Vec::with_capacity(256),
            parts: Vec::new(),
            thread_ids: HashMap::new(),
            thread_roots: Vec::new(),
            last_thread: None,
            events: Vec::new(),
            event_ids: HashMap::new(),
            last_event: None,
            col_thread: Vec::new(),
            col_time: Vec::new(),
            col_cpu: Vec::new(),
            col_event: Vec::new(),
            time_span: None,
            any_cpu: false,
            last_time: 0,
            tod_offset: None,
            ref_offset: None,
            stackless: 0,
            cut: false,
            granularity: super::Granularity::Function,
        }
    }

    /// A parser naming frames at `granularity`.
    pub(crate) fn with_granularity(granularity: super::Granularity) -> Self {
        Parser {
            granularity,
            ..Self::new()
        }
    }

    /// Samples so far; an event whose stack is still being read is not one yet.
    pub(crate) fn samples(&self) -> usize {
        self.profile.samples.len()
    }

    /// What [`Parser::finish`] would return if the input ended here.
    pub(crate) fn snapshot(&self) -> Result<Profile, ParseError> {
        self.clone().finish()
    }

    fn warn(&mut self, line: u64, message: impl Into<String>) {
        self.profile.warnings.push(line, message);
    }
}

/// Parses `perf script` output from `reader`.
pub fn parse(reader: impl Read, progress: &Progress) -> Result<Profile, ParseError> {
    parse_with(reader, progress, super::Granularity::Function)
}

/// [`parse`] with frames at `granularity`: a frame followed by a `--srcline`
/// line is named by its line or file (frames without one keep their name).
pub fn parse_with(
    reader: impl Read,
    progress: &Progress,
    granularity: super::Granularity,
) -> Result<Profile, ParseError> {
    let mut parser = Parser::with_granularity(granularity);
    super::for_each_line_chunk(reader, progress, |lines, eof| parser.chunk(lines, eof))?;
    parser.finish()
}

#[cfg(test)]
mod tests;
