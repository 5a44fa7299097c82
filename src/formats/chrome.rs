//! Chrome / V8 / Node `.cpuprofile` and Chrome trace-event JSON.
//!
//! A `.cpuprofile` is a node table (`id`, `callFrame`, `children` or `parent`) plus
//! `samples` (node ids) and `timeDeltas` (µs between samples). The old format
//! (Node < 10) nests the nodes under `head` and gives absolute `timestamps`; JSON
//! nesting is read to 128 levels, so its trees are limited to about 60 frames.
//!
//! Trace-event JSON is an array of events or `{"traceEvents": [...]}`. DevTools
//! exports carry CPU profiles in `Profile` + `ProfileChunk` events (one profile per
//! id) or one `CpuProfile` event; each is read like a `.cpuprofile` and becomes a
//! thread. Traces without them are read from their duration events (`B`/`E`/`X`),
//! one thread per (pid, tid), or from their `samples` + `stackFrames`.
//!
//! Weights follow speedscope's importers, so totals agree with it: a CPU sample
//! weighs the time to the next sample (the last weighs 0), `(program)` and
//! `(garbage collector)` samples sit on top of the previous sample's stack, and a
//! duration event's time is split between it and the events nested in it. Unlike
//! speedscope, `(idle)` samples are kept, as a root frame `(idle)`.

mod cpuprofile;
mod trace;

use std::collections::HashMap;
use std::io::Read;

use super::json::{self, Decimals};
use super::{Granularity, ParseError};
use crate::model::{FrameId, FrameKind, FrameMeta, Profile, StackId, ThreadInfo, Unit, ValueType};
use crate::sources::input::Progress;

/// Whether `head` is a `.cpuprofile`: a top-level object with `nodes` and the
/// sample keys, or the old format's `head` node with `hitCount`/`callUID`.
pub fn probe_cpuprofile(head: &[u8], complete: bool) -> Option<bool> {
    let scan = json::scan(head);
    if scan.first != b'{'
        || ["$schema", "traceEvents", "threads", "meta"]
            .iter()
            .any(|k| scan.has_key(1, k))
    {
        return Some(false);
    }
    let sample_keys = ["samples", "timeDeltas", "startTime", "endTime"];
    let nodes = scan.has_key(1, "nodes");
    // A node table's entries have a `callFrame` (depth 3: object, array, object).
    if nodes && (sample_keys.iter().any(|k| scan.has_key(1, k)) || scan.has_key(3, "callFrame")) {
        return Some(true);
    }
    if scan.has_key(1, "head") {
        if scan.has_key(2, "selfSize") {
            return Some(false); // a V8 heap profile
        }
        if ["hitCount", "callUID", "functionName"]
            .iter()
            .any(|k| scan.has_key(2, k))
            && (scan.has_key(1, "timestamps") || scan.has_key(1, "startTime") || scan.truncated)
        {
            return Some(true);
        }
    }
    if !complete && scan.truncated && nodes {
        return None; // a node table without call frames yet: unsure
    }
    Some(false)
}

/// Reads a whole `.cpuprofile`.
pub fn parse_cpuprofile(reader: impl Read, progress: &Progress) -> Result<Profile, ParseError> {
    parse_cpuprofile_with(reader, progress, Granularity::Function)
}

/// [`parse_cpuprofile`] with frames at `granularity` (a call frame's line is
/// where its function starts: V8 records no line per sample in the tree).
pub fn parse_cpuprofile_with(
    reader: impl Read,
    progress: &Progress,
    granularity: Granularity,
) -> Result<Profile, ParseError> {
    let bytes = json::read_all(reader, progress)?;
    let raw: cpuprofile::RawProfile = json::from_slice(&bytes)?;
    drop(bytes);
    let data = cpuprofile::CpuData::from_raw(raw).ok_or_else(|| ParseError::Invalid {
        line: 0,
        message: "not a .cpuprofile: no `nodes` (or `head`) and `samples`".into(),
    })?;
    let mut out = Out::new("cpuprofile", &[&data]);
    out.granularity = granularity;
    out.profile.meta.duration_ns = data.duration_ns();
    let thread = out.thread(ThreadInfo {
        name: "main".into(),
        pid: None,
        tid: None,
    });
    cpuprofile::import(&mut out, &data, thread, progress)?;
    Ok(out.finish())
}

/// Whether `head` is trace-event JSON: an array whose first element has `ph`, or
/// an object with `traceEvents`.
pub fn probe_trace(head: &[u8], complete: bool) -> Option<bool> {
    let scan = json::scan(head);
    match scan.first {
        b'[' => {
            if scan.has_key(2, "ph") {
                Some(true)
            } else if scan.truncated && !complete && scan.keys.iter().all(|(d, _)| *d >= 2) {
                // The first event is cut before its `ph`.
                let first_key = scan.keys.first().map(|(_, k)| k.as_str());
                match first_key {
                    None => None,
                    Some(k) if ["pid", "tid", "ts", "name", "cat", "args", "dur"].contains(&k) => {
                        None
                    }
                    Some(_) => Some(false),
                }
            } else {
                Some(false)
            }
        }
        b'{' if scan.has_key(1, "traceEvents") => Some(true),
        b'{' if scan.has_key(1, "metadata") && !scan.has_key(1, "$schema") => {
            // DevTools exports start with a `metadata` object before `traceEvents`.
            let others = scan.keys.iter().filter(|(d, _)| *d == 1).count();
            let said = |s: &[u8]| memchr::memmem::find(head, s).is_some();
            if others == 1 && (said(b"\"traceEvents\"") || said(b"\"dataOrigin\"")) {
                Some(true)
            } else if others == 1 && scan.truncated && !complete {
                None
            } else {
                Some(false)
            }
        }
        _ => Some(false),
    }
}

/// Reads a whole trace-event file.
pub fn parse_trace(reader: impl Read, progress: &Progress) -> Result<Profile, ParseError> {
    parse_trace_with(reader, progress, Granularity::Function)
}

/// [`parse_trace`] with the CPU profile chunks' frames at `granularity`.
pub fn parse_trace_with(
    reader: impl Read,
    progress: &Progress,
    granularity: Granularity,
) -> Result<Profile, ParseError> {
    let bytes = json::read_all(reader, progress)?;
    trace::parse(&bytes, progress, granularity)
}

/// The profile being built, with its thread and time columns.
struct Out {
    profile: Profile,
    threads: Vec<u32>,
    times: Vec<u64>,
    /// Time values (µs) are stored scaled by these decimals.
    decimals: Decimals,
    /// A second value, the sample count (CPU profiles).
    counts: bool,
    /// Frames named once per (name, file, line): speedscope keys frames so.
    frame_cache: HashMap<(String, String, i64), FrameId>,
    /// How frames are named.
    granularity: Granularity,
    /// The time total, kept from overflowing; samples that would are counted.
    total: i64,
    too_large: u64,
}

impl Out {
    /// A profile for CPU profiles, with µs decimals that fit all their deltas.
    fn new(format: &str, data: &[&cpuprofile::CpuData]) -> Out {
        let mut decimals = Decimals::default();
        for d in data {
            d.deltas.iter().for_each(|&x| decimals.observe(x));
        }
        let mut decimals = decimals.at_most(3);
        // Keep the largest elapsed time representable.
        for d in data {
            decimals.observe_magnitude(d.deltas.iter().map(|x| x.abs()).sum::<f64>());
        }
        Self::with(format, decimals, true)
    }

    fn with(format: &str, decimals: Decimals, counts: bool) -> Out {
        let mut value_types = vec![ValueType {
            decimals: decimals.get(),
            ..ValueType::new("time", Unit::Microseconds)
        }];
        if counts {
            value_types.push(ValueType::samples());
        }
        Out {
            profile: Profile::new(format, value_types),
            threads: Vec::new(),
            times: Vec::new(),
            decimals,
            counts,
            frame_cache: HashMap::new(),
            granularity: Granularity::Function,
            total: 0,
            too_large: 0,
        }
    }

    fn thread(&mut self, info: ThreadInfo) -> u32 {
        self.profile.threads.push(info);
        (self.profile.threads.len() - 1) as u32
    }

    /// A frame named `name` with its source location, interned once.
    fn frame(&mut self, name: &str, file: &str, line: Option<u32>, kind: FrameKind) -> FrameId {
        let key = (
            name.to_string(),
            file.to_string(),
            line.map_or(-1, i64::from),
        );
        if let Some(&f) = self.frame_cache.get(&key) {
            return f;
        }
        let named = self
            .granularity
            .frame_name(name.as_bytes(), file.as_bytes(), line);
        let f = self.profile.frames.intern(&named);
        if !file.is_empty() || line.is_some() || kind != FrameKind::Normal {
            self.profile
                .frame_meta
                .entry(f)
                .or_insert_with(|| FrameMeta {
                    file: (!file.is_empty()).then(|| file.to_string()),
                    line,
                    kind,
                    system_name: None,
                    object: None,
                });
        }
        self.frame_cache.insert(key, f);
        f
    }

    /// Room for `n` more samples.
    fn reserve(&mut self, n: usize) {
        let samples = &mut self.profile.samples;
        samples.stack.reserve(n);
        samples.values.reserve(n * self.profile.value_types.len());
        self.threads.reserve(n);
        self.times.reserve(n);
    }

    fn push(&mut self, stack: Option<StackId>, value: i64, time_ns: u64, thread: u32) {
        if !json::add_to_total(&mut self.total, value, &mut self.too_large) {
            return;
        }
        if self.counts {
            self.profile.push_sample(stack, &[value, 1]);
        } else {
            self.profile.push_sample(stack, &[value]);
        }
        self.threads.push(thread);
        self.times.push(time_ns);
    }

    fn finish(mut self) -> Profile {
        json::warn_too_large(&mut self.profile, self.too_large);
        let n = self.profile.threads.len();
        if n > 1 {
            self.profile.notes.push(format!(
                "{n} profiles (threads) merged into one; the thread column tells them apart"
            ));
        }
        self.profile.samples.thread = Some(self.threads);
        if !self.times.is_empty() {
            self.profile.samples.time = Some(self.times);
        }
        self.profile
    }
}

/// µs (possibly fractional, possibly huge) as nanoseconds, clamped to u64.
fn us_to_ns(us: f64) -> u64 {
    json::to_ns(us, 1e3)
}

#[cfg(test)]
mod tests;
