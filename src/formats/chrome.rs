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

use std::collections::HashMap;
use std::io::Read;

use super::ParseError;
use super::json::{self, Decimals};
use crate::input::Progress;
use crate::model::{FrameId, FrameKind, FrameMeta, Profile, StackId, ThreadInfo, Unit, ValueType};

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
    let bytes = json::read_all(reader, progress)?;
    let raw: cpu::RawProfile = json::from_slice(&bytes)?;
    drop(bytes);
    let data = cpu::CpuData::from_raw(raw).ok_or_else(|| ParseError::Invalid {
        line: 0,
        message: "not a .cpuprofile: no `nodes` (or `head`) and `samples`".into(),
    })?;
    let mut out = Out::new("cpuprofile", &[&data]);
    out.profile.meta.duration_ns = data.duration_ns();
    let thread = out.thread(ThreadInfo {
        name: "main".into(),
        pid: None,
        tid: None,
    });
    cpu::import(&mut out, &data, thread, progress)?;
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
    let bytes = json::read_all(reader, progress)?;
    trace::parse(&bytes, progress)
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
    /// The time total, kept from overflowing; samples that would are counted.
    total: i64,
    too_large: u64,
}

impl Out {
    /// A profile for CPU profiles, with µs decimals that fit all their deltas.
    fn new(format: &str, data: &[&cpu::CpuData]) -> Out {
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
        let f = self.profile.frames.intern(name.as_bytes());
        if !file.is_empty() || line.is_some() || kind != FrameKind::Normal {
            self.profile
                .frame_meta
                .entry(f)
                .or_insert_with(|| FrameMeta {
                    file: (!file.is_empty()).then(|| file.to_string()),
                    line,
                    kind,
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

/// The `.cpuprofile` node table and speedscope's way of turning samples into stacks.
mod cpu {
    use serde::Deserialize;

    use super::{Out, us_to_ns};
    use crate::formats::ParseError;
    use crate::formats::json::Index;
    use crate::input::Progress;
    use crate::model::{FrameId, FrameKind, StackId};

    const NONE: u32 = u32::MAX;

    #[derive(Deserialize, Default)]
    pub struct RawProfile {
        #[serde(default)]
        nodes: Option<Vec<Node>>,
        #[serde(default, rename = "startTime")]
        start_time: Option<f64>,
        #[serde(default, rename = "endTime")]
        end_time: Option<f64>,
        #[serde(default)]
        samples: Option<Vec<Index>>,
        #[serde(default, rename = "timeDeltas")]
        time_deltas: Vec<f64>,
        #[serde(default)]
        head: Option<OldNode>,
        #[serde(default)]
        timestamps: Vec<f64>,
    }

    #[derive(Deserialize, Clone, Default)]
    pub struct Node {
        #[serde(default)]
        pub id: Index,
        #[serde(default, rename = "callFrame")]
        pub call_frame: CallFrame,
        #[serde(default)]
        pub children: Vec<Index>,
        #[serde(default)]
        pub parent: Option<Index>,
    }

    #[derive(Deserialize, Clone, Default)]
    pub struct CallFrame {
        #[serde(default, rename = "functionName")]
        pub function_name: String,
        #[serde(default)]
        pub url: String,
        #[serde(default, rename = "lineNumber")]
        pub line_number: Option<f64>,
    }

    /// A node of the old, nested format.
    #[derive(Deserialize, Default)]
    pub struct OldNode {
        #[serde(default)]
        id: Index,
        #[serde(default, rename = "functionName")]
        function_name: String,
        #[serde(default)]
        url: String,
        #[serde(default, rename = "lineNumber")]
        line_number: Option<f64>,
        #[serde(default)]
        children: Vec<OldNode>,
    }

    /// One CPU profile, whatever it was read from.
    #[derive(Default)]
    pub struct CpuData {
        pub nodes: Vec<Node>,
        pub samples: Vec<Index>,
        pub deltas: Vec<f64>,
        /// µs on the trace clock.
        pub start_us: f64,
        pub end_us: Option<f64>,
    }

    impl CpuData {
        /// `None` when `raw` is neither format.
        pub fn from_raw(raw: RawProfile) -> Option<CpuData> {
            if let (Some(nodes), Some(samples)) = (raw.nodes, raw.samples.as_ref()) {
                return Some(CpuData {
                    nodes,
                    samples: samples.clone(),
                    deltas: raw.time_deltas,
                    start_us: raw.start_time.unwrap_or(0.0),
                    end_us: raw.end_time,
                });
            }
            let head = raw.head?;
            let samples = raw.samples?;
            // The old format: seconds for start/end, absolute µs timestamps.
            let start_us = raw.start_time.unwrap_or(0.0) * 1e6;
            let mut deltas = Vec::with_capacity(raw.timestamps.len());
            let mut last = start_us;
            for &t in &raw.timestamps {
                deltas.push(t - last);
                last = t;
            }
            let mut nodes = Vec::new();
            let mut todo = vec![head];
            while let Some(mut n) = todo.pop() {
                let children = std::mem::take(&mut n.children);
                nodes.push(Node {
                    id: n.id,
                    call_frame: CallFrame {
                        function_name: n.function_name,
                        url: n.url,
                        line_number: n.line_number,
                    },
                    children: children.iter().map(|c| c.id).collect(),
                    parent: None,
                });
                todo.extend(children.into_iter().rev());
            }
            Some(CpuData {
                nodes,
                samples,
                deltas,
                start_us,
                end_us: raw.end_time.map(|e| e * 1e6),
            })
        }

        pub fn duration_ns(&self) -> Option<u64> {
            let end = self.end_us?;
            (end > self.start_us).then(|| us_to_ns(end - self.start_us))
        }
    }

    /// How speedscope treats a node.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Role {
        Normal,
        /// `(root)`, or V8's `native dummy.js`: never opened.
        Ignored,
        /// `(idle)`: speedscope drops it; ember keeps it as a root frame.
        Idle,
        /// `(program)`, `(garbage collector)`: placed on top of the previous stack.
        OnTop,
    }

    /// The node table resolved: parents by index, frames, roles.
    struct Table {
        parent: Vec<u32>,
        frame: Vec<FrameId>,
        role: Vec<Role>,
        /// Normal nodes whose ancestors are all normal up to the root (an ignored
        /// `(root)` at the top is fine). Whatever was open before, sampling such a
        /// node leaves exactly its ancestry open, so its stack needs no walk.
        plain: Vec<bool>,
        by_id: Ids,
    }

    fn table(out: &mut Out, nodes: &[Node]) -> Table {
        let n = nodes.len();
        let mut by_id = std::collections::HashMap::with_capacity(n);
        let mut duplicates = 0u64;
        for (i, node) in nodes.iter().enumerate() {
            if by_id.insert(node.id.0, i as u32).is_some() {
                duplicates += 1;
            }
        }
        let mut parent = vec![NONE; n];
        let mut unknown = 0u64;
        for (i, node) in nodes.iter().enumerate() {
            if let Some(p) = node.parent {
                match by_id.get(&p.0) {
                    Some(&p) => parent[i] = p,
                    None => unknown += 1,
                }
            }
            for c in &node.children {
                match by_id.get(&c.0) {
                    Some(&c) => parent[c as usize] = i as u32,
                    None => unknown += 1,
                }
            }
        }
        let cycles = break_cycles(&mut parent);
        let warnings = &mut out.profile.warnings;
        if duplicates > 0 {
            warnings.push(
                0,
                format!("{duplicates} nodes reuse an id; the last one counts"),
            );
        }
        if unknown > 0 {
            warnings.push(
                0,
                format!("{unknown} parent or child links name no node; ignored"),
            );
        }
        if cycles > 0 {
            warnings.push(0, format!("{cycles} cycles in the node tree were cut"));
        }
        let mut frame = Vec::with_capacity(n);
        let mut role = Vec::with_capacity(n);
        for node in nodes {
            let cf = &node.call_frame;
            // 1-based, as speedscope shows them (V8's -1 "no line" becomes 0).
            let shown_line = cf
                .line_number
                .filter(|l| l.is_finite() && l.abs() < 1e12)
                .map(|l| l as i64 + 1);
            let line = shown_line
                .and_then(|l| u32::try_from(l).ok())
                .filter(|&l| l > 0);
            let name = match cf.function_name.as_str() {
                "" if cf.url.is_empty() => "(anonymous)".to_string(),
                "" => {
                    let base = cf.url.rsplit('/').next().unwrap_or_default();
                    match shown_line {
                        Some(l) => format!("(anonymous {base}:{l})"),
                        None => format!("(anonymous {base})"),
                    }
                }
                f => f.to_string(),
            };
            role.push(match name.as_str() {
                "(root)" => Role::Ignored,
                _ if cf.url == "native dummy.js" => Role::Ignored,
                "(idle)" => Role::Idle,
                "(program)" | "(garbage collector)" => Role::OnTop,
                _ => Role::Normal,
            });
            let kind = if cf.url.is_empty() && name.starts_with('(') {
                FrameKind::Normal
            } else {
                FrameKind::Jit
            };
            frame.push(out.frame(&name, &cf.url, line, kind));
        }
        let plain = plain_nodes(&parent, &role);
        Table {
            parent,
            frame,
            role,
            plain,
            by_id: Ids::new(by_id),
        }
    }

    /// Which nodes are plain (see [`Table::plain`]), walking chains with a list.
    fn plain_nodes(parent: &[u32], role: &[Role]) -> Vec<bool> {
        // 0 = unknown, 1 = plain, 2 = not.
        let mut state = vec![0u8; parent.len()];
        let mut chain = Vec::new();
        for start in 0..parent.len() {
            let mut n = start as u32;
            let mut known = 0;
            while known == 0 {
                let i = n as usize;
                if state[i] != 0 {
                    known = state[i];
                    break;
                }
                if role[i] != Role::Normal {
                    state[i] = 2;
                    known = 2;
                    break;
                }
                chain.push(n);
                let p = parent[i];
                let top =
                    p == NONE || (role[p as usize] == Role::Ignored && parent[p as usize] == NONE);
                if top {
                    known = 1;
                } else {
                    n = p;
                }
            }
            for &c in &chain {
                state[c as usize] = known;
            }
            chain.clear();
        }
        state.into_iter().map(|s| s == 1).collect()
    }

    /// Node id -> node index: a plain vector when the ids are small (they
    /// usually count from 1), else the hash map.
    enum Ids {
        Dense(Vec<u32>),
        Sparse(std::collections::HashMap<i64, u32>),
    }

    impl Ids {
        fn new(map: std::collections::HashMap<i64, u32>) -> Ids {
            let max = map.keys().copied().max().unwrap_or(0);
            let dense_ok = map.keys().all(|&k| k >= 0) && max < (map.len() as i64) * 4 + 1024;
            if !dense_ok {
                return Ids::Sparse(map);
            }
            let mut v = vec![NONE; max as usize + 1];
            for (k, i) in map {
                v[k as usize] = i;
            }
            Ids::Dense(v)
        }

        fn get(&self, id: i64) -> Option<u32> {
            match self {
                Ids::Dense(v) => usize::try_from(id)
                    .ok()
                    .and_then(|i| v.get(i))
                    .copied()
                    .filter(|&i| i != NONE),
                Ids::Sparse(m) => m.get(&id).copied(),
            }
        }
    }

    /// Cuts parent links that close a cycle; returns how many were cut.
    fn break_cycles(parent: &mut [u32]) -> u64 {
        // 0 = not seen, 1 = on the current walk, 2 = done.
        let mut state = vec![0u8; parent.len()];
        let mut path = Vec::new();
        let mut cut = 0;
        for start in 0..parent.len() {
            let mut cur = start as u32;
            while cur != NONE && state[cur as usize] == 0 {
                state[cur as usize] = 1;
                path.push(cur);
                let p = parent[cur as usize];
                if p != NONE && state[p as usize] == 1 {
                    parent[cur as usize] = NONE;
                    cut += 1;
                    break;
                }
                cur = p;
            }
            for &n in &path {
                state[n as usize] = 2;
            }
            path.clear();
        }
        cut
    }

    /// Imports one CPU profile as thread `thread`.
    pub fn import(
        out: &mut Out,
        data: &CpuData,
        thread: u32,
        progress: &Progress,
    ) -> Result<(), ParseError> {
        let t = table(out, &data.nodes);
        let n = data.samples.len();
        if data.deltas.len() < n {
            out.profile.warnings.push(
                0,
                format!(
                    "{n} samples but {} time deltas; the missing ones count 0",
                    data.deltas.len()
                ),
            );
        }
        let dec = out.decimals;
        let delta = |i: usize| data.deltas.get(i).and_then(|&d| dec.scale(d)).unwrap_or(0);
        let (times, end, backwards) = sample_times(&data.samples, delta);
        if backwards > 0 {
            out.profile.warnings.push(
                0,
                format!(
                    "{backwards} time deltas are negative; the clock is held until it catches up"
                ),
            );
        }
        let idle = out.frame("(idle)", "", None, FrameKind::Normal);
        let idle_stack = out.profile.stacks.intern(None, idle);
        let mut walk = Walk {
            open: Vec::new(),
            pos: vec![0; t.parent.len()],
            to_open: Vec::new(),
            last: vec![(u32::MAX, StackId(u32::MAX)); t.parent.len()],
            lazy: None,
            plain_stack: vec![NONE; t.parent.len()],
            chain: Vec::new(),
        };
        out.reserve(n);
        // Sample times in ns: integer steps from the start when µs are whole.
        let start_ns = us_to_ns(data.start_us);
        let to_ns = |t: i64| -> u64 {
            if dec.get() == 0 {
                (start_ns as i64)
                    .saturating_add(t.saturating_mul(1000))
                    .max(0) as u64
            } else {
                us_to_ns(data.start_us + t as f64 / dec.factor())
            }
        };
        let mut unknown = 0u64;
        let mut stack: Option<StackId> = None;
        let mut prev = NONE;
        for i in 0..n {
            if i % 65536 == 0 && progress.is_cancelled() {
                return Err(ParseError::Cancelled);
            }
            match t.by_id.get(data.samples[i].0) {
                // speedscope skips the sample: the previous stack runs on.
                None => unknown += 1,
                // The same node again changes nothing (runs are common).
                Some(node) if node == prev => {}
                Some(node) if t.plain[node as usize] => {
                    prev = node;
                    stack = Some(walk.open_plain(out, &t, node));
                }
                Some(node) => {
                    prev = node;
                    walk.materialize(out, &t);
                    walk.step(out, &t, node);
                    stack = if t.role[node as usize] == Role::Idle {
                        Some(idle_stack)
                    } else {
                        walk.top()
                    };
                }
            }
            let weight = times
                .get(i + 1)
                .copied()
                .unwrap_or(end)
                .saturating_sub(times[i]);
            out.push(stack, weight, to_ns(times[i]), thread);
        }
        if unknown > 0 {
            out.profile.warnings.push(
                0,
                format!("{unknown} samples name no node; they count for the previous stack"),
            );
        }
        Ok(())
    }

    /// Each sample's time (scaled µs since the start) and the end of the last one,
    /// as speedscope times them: a run of samples of one node starts at the running
    /// maximum of the elapsed time, so negative deltas cannot move time backwards.
    /// Inside a run, samples keep their own times, held between the run's start
    /// and the next run's. Also returns how many deltas were negative.
    fn sample_times(samples: &[Index], delta: impl Fn(usize) -> i64) -> (Vec<i64>, i64, u64) {
        let n = samples.len();
        let starts_run = |i: usize| i == 0 || samples[i] != samples[i - 1];
        // One vector: the elapsed time, then run starts clamped to the running
        // maximum, then the samples inside runs clamped between their neighbours.
        let mut times = Vec::with_capacity(n);
        let mut acc = 0i64;
        let mut backwards = 0;
        let mut valid = i64::MIN;
        for i in 0..n {
            let d = delta(i);
            if i > 0 && d < 0 {
                backwards += 1;
            }
            acc = acc.saturating_add(d);
            if starts_run(i) {
                valid = valid.max(acc);
                times.push(valid);
            } else {
                times.push(acc);
            }
        }
        let end = if n == 0 { 0 } else { valid.max(acc) };
        // Inside a run: no later than the next run's start (min(max(e, p), n) =
        // max(min(e, n), p) when p <= n, so the two clamps can run apart).
        let mut next_start = end;
        for i in (0..n).rev() {
            if starts_run(i) {
                next_start = times[i];
            } else {
                times[i] = times[i].min(next_start);
            }
        }
        for i in 1..n {
            if !starts_run(i) {
                times[i] = times[i].max(times[i - 1]);
            }
        }
        (times, end, backwards)
    }

    /// speedscope's stack state: the nodes open, and their ember stacks.
    struct Walk {
        open: Vec<(u32, StackId)>,
        /// Position + 1 of a node in `open`, 0 if not open.
        pos: Vec<u32>,
        to_open: Vec<u32>,
        /// The (prefix, stack) a node was last opened with: a node nearly always
        /// opens on the same prefix, so this spares the stack table's hash probe.
        last: Vec<(u32, StackId)>,
        /// `Some(x)`: what is open is plain node `x` and its ancestry, not written
        /// out in `open` (which is then empty).
        lazy: Option<u32>,
        /// The stack of each plain node, once asked for.
        plain_stack: Vec<u32>,
        chain: Vec<u32>,
    }

    impl Walk {
        /// The stack of plain node `x`: its ancestry, interned once per node.
        fn plain(&mut self, out: &mut Out, t: &Table, x: u32) -> StackId {
            if self.plain_stack[x as usize] != NONE {
                return StackId(self.plain_stack[x as usize]);
            }
            let mut base = None;
            let mut n = x;
            loop {
                let i = n as usize;
                if self.plain_stack[i] != NONE {
                    base = Some(StackId(self.plain_stack[i]));
                    break;
                }
                self.chain.push(n);
                let p = t.parent[i];
                if p == NONE || t.role[p as usize] != Role::Normal {
                    break;
                }
                n = p;
            }
            while let Some(n) = self.chain.pop() {
                let s = out.profile.stacks.intern(base, t.frame[n as usize]);
                self.plain_stack[n as usize] = s.0;
                base = Some(s);
            }
            base.unwrap_or(StackId(0))
        }

        /// Samples plain node `x`: its ancestry is what is open now.
        fn open_plain(&mut self, out: &mut Out, t: &Table, x: u32) -> StackId {
            for (n, _) in self.open.drain(..) {
                self.pos[n as usize] = 0;
            }
            self.lazy = Some(x);
            self.plain(out, t, x)
        }

        /// Writes a lazy state out in `open`, so a walk can start from it.
        fn materialize(&mut self, out: &mut Out, t: &Table) {
            let Some(x) = self.lazy.take() else { return };
            self.plain(out, t, x);
            let mut n = x;
            while n != NONE && t.role[n as usize] == Role::Normal {
                self.chain.push(n);
                n = t.parent[n as usize];
            }
            while let Some(n) = self.chain.pop() {
                self.open.push((n, StackId(self.plain_stack[n as usize])));
                self.pos[n as usize] = self.open.len() as u32;
            }
        }

        /// The stack on top now.
        fn top(&self) -> Option<StackId> {
            match self.lazy {
                Some(x) => Some(StackId(self.plain_stack[x as usize])),
                None => self.open.last().map(|o| o.1),
            }
        }

        /// Moves the open stack to `top`: closes down to the lowest common ancestor
        /// and opens the rest. `(program)`/`(garbage collector)` continue from the
        /// previous top instead of their parent; ignored nodes stop the walk.
        fn step(&mut self, out: &mut Out, t: &Table, top: u32) {
            let next = |n: u32, open: &[(u32, StackId)]| -> u32 {
                if t.role[n as usize] == Role::OnTop {
                    open.last().map_or(NONE, |o| o.0)
                } else {
                    t.parent[n as usize]
                }
            };
            let mut lca = top;
            while lca != NONE && self.pos[lca as usize] == 0 {
                lca = next(lca, &self.open);
            }
            while let Some(&(n, _)) = self.open.last() {
                if n == lca {
                    break;
                }
                self.pos[n as usize] = 0;
                self.open.pop();
            }
            self.to_open.clear();
            let mut node = top;
            while node != NONE
                && node != lca
                && matches!(t.role[node as usize], Role::Normal | Role::OnTop)
            {
                self.to_open.push(node);
                node = next(node, &self.open);
                if self.to_open.len() > t.parent.len() {
                    break; // cannot happen once cycles are cut; a guard all the same
                }
            }
            for k in (0..self.to_open.len()).rev() {
                let node = self.to_open[k];
                let prefix = self.open.last().map(|o| o.1);
                let key = prefix.map_or(u32::MAX - 1, |p| p.0);
                let s = match self.last[node as usize] {
                    (k, s) if k == key => s,
                    _ => {
                        let s = out.profile.stacks.intern(prefix, t.frame[node as usize]);
                        self.last[node as usize] = (key, s);
                        s
                    }
                };
                self.open.push((node, s));
                self.pos[node as usize] = self.open.len() as u32;
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn cycles_are_cut_once() {
            let mut parent = vec![1, 2, 0, NONE, 3];
            assert_eq!(break_cycles(&mut parent), 1);
            assert_eq!(parent.iter().filter(|&&p| p == NONE).count(), 2);
        }
    }
}

/// Trace-event JSON.
mod trace {
    use std::borrow::Cow;
    use std::collections::HashMap;

    use serde::Deserialize;
    use serde_json::Value;

    use super::{Out, cpu, us_to_ns};
    use crate::formats::ParseError;
    use crate::formats::json::{self, Decimals, Index, Num};
    use crate::input::Progress;
    use crate::model::{FrameKind, Profile, StackId, ThreadInfo};

    #[derive(Deserialize)]
    pub struct Event<'a> {
        #[serde(default, borrow)]
        ph: Cow<'a, str>,
        #[serde(default, borrow)]
        name: Option<Cow<'a, str>>,
        #[serde(default)]
        pid: Option<Index>,
        #[serde(default)]
        tid: Option<Index>,
        #[serde(default)]
        ts: Option<Num>,
        #[serde(default)]
        dur: Option<Num>,
        #[serde(default)]
        tdur: Option<Num>,
        #[serde(default)]
        id: Option<Value>,
        #[serde(default)]
        args: Option<Value>,
    }

    #[derive(Deserialize)]
    struct TraceObject<'a> {
        #[serde(default, borrow, rename = "traceEvents")]
        events: Vec<Event<'a>>,
        #[serde(default)]
        samples: Option<Vec<TSample>>,
        #[serde(default, rename = "stackFrames")]
        stack_frames: Option<HashMap<String, StackFrame>>,
    }

    #[derive(Deserialize)]
    struct TSample {
        #[serde(default)]
        pid: Option<Index>,
        #[serde(default)]
        tid: Option<Index>,
        #[serde(default)]
        ts: Option<Num>,
        #[serde(default)]
        sf: Option<Value>,
    }

    #[derive(Deserialize)]
    struct StackFrame {
        #[serde(default)]
        name: String,
        #[serde(default)]
        parent: Option<Value>,
    }

    struct Trace<'a> {
        events: Vec<Event<'a>>,
        samples: Option<(Vec<TSample>, HashMap<String, StackFrame>)>,
    }

    pub fn parse(bytes: &[u8], progress: &Progress) -> Result<Profile, ParseError> {
        let mut repaired = Vec::new();
        let mut note = None;
        let trace = match read(bytes) {
            Ok(t) => t,
            Err(e) => {
                // The format allows a missing closing `]`; a cut file is read up to
                // its last complete event.
                let Some((fixed, clean)) = close_truncated(bytes) else {
                    return Err(e);
                };
                repaired = fixed;
                note = Some(clean);
                read(&repaired).map_err(|_| e)?
            }
        };
        if progress.is_cancelled() {
            return Err(ParseError::Cancelled);
        }
        let mut profile = if trace.events.iter().any(|e| is_cpu_event(e)) {
            cpu_profiles(&trace.events, progress)?
        } else if let Some((samples, frames)) = &trace.samples {
            sampled(&trace.events, samples, frames)
        } else {
            durations(&trace.events, progress)?
        };
        drop(repaired);
        match note {
            Some(true) => profile
                .notes
                .push("the trace has no closing `]` (the format allows that)".into()),
            Some(false) => profile.warnings.push(
                0,
                format!(
                    "the trace is cut short ({} bytes): read up to its last complete event",
                    bytes.len()
                ),
            ),
            None => {}
        }
        Ok(profile)
    }

    fn read(bytes: &[u8]) -> Result<Trace<'_>, ParseError> {
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        if first == Some(&b'{') {
            let o: TraceObject = json::from_slice(bytes)?;
            let samples = match (o.samples, o.stack_frames) {
                (Some(s), Some(f)) => Some((s, f)),
                _ => None,
            };
            Ok(Trace {
                events: o.events,
                samples,
            })
        } else {
            Ok(Trace {
                events: json::from_slice(bytes)?,
                samples: None,
            })
        }
    }

    /// The input cut after its last complete event and closed; `true` when only
    /// the closing brackets were missing.
    fn close_truncated(bytes: &[u8]) -> Option<(Vec<u8>, bool)> {
        let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
        let (target, closers): (usize, &[u8]) = match bytes[start] {
            b'[' => (1, b"]"),
            b'{' => (2, b"]}"),
            _ => return None,
        };
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        // Where the last complete event ended, and whether the events array was entered.
        let mut cut = None;
        let mut events_open = target == 1;
        for (i, &b) in bytes.iter().enumerate().skip(start) {
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => {
                    depth += 1;
                    if target == 2 && depth == 2 && b == b'[' {
                        events_open = true;
                        cut.get_or_insert(i + 1);
                    }
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    if depth == target && events_open {
                        cut = Some(i + 1);
                    }
                    if depth < target {
                        return None; // the events array closed: not a truncation
                    }
                }
                _ => {}
            }
        }
        let cut = cut?;
        let rest = &bytes[cut..];
        let clean = rest.iter().all(|b| b.is_ascii_whitespace() || *b == b',');
        let mut fixed = bytes[..cut].to_vec();
        fixed.extend_from_slice(closers);
        Some((fixed, clean))
    }

    fn is_cpu_event(e: &Event) -> bool {
        matches!(
            e.name.as_deref(),
            Some("CpuProfile" | "Profile" | "ProfileChunk")
        )
    }

    fn key_of_id(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    fn pid_tid(e: &Event) -> (i64, i64) {
        (e.pid.map_or(0, |p| p.0), e.tid.map_or(0, |t| t.0))
    }

    /// Thread names from `thread_name` / `process_name` metadata events.
    struct Names {
        threads: HashMap<(i64, i64), String>,
        processes: HashMap<i64, String>,
    }

    impl Names {
        fn new(events: &[Event]) -> Names {
            let mut threads = HashMap::new();
            let mut processes = HashMap::new();
            for e in events {
                let name = e
                    .args
                    .as_ref()
                    .and_then(|a| a.get("name"))
                    .and_then(Value::as_str);
                let (Some(name), Some(kind)) = (name, e.name.as_deref()) else {
                    continue;
                };
                match kind {
                    "thread_name" => {
                        threads.insert(pid_tid(e), name.to_string());
                    }
                    "process_name" => {
                        processes.insert(pid_tid(e).0, name.to_string());
                    }
                    _ => {}
                }
            }
            Names { threads, processes }
        }

        fn info(&self, pid: i64, tid: i64) -> ThreadInfo {
            let name = self
                .threads
                .get(&(pid, tid))
                .or_else(|| self.processes.get(&pid))
                .cloned()
                .unwrap_or_else(|| format!("pid {pid}, tid {tid}"));
            ThreadInfo {
                name,
                pid: u64::try_from(pid).ok(),
                tid: u64::try_from(tid).ok(),
            }
        }
    }

    #[derive(Deserialize, Default)]
    struct ChunkData {
        #[serde(default, rename = "cpuProfile")]
        cpu_profile: Option<ChunkProfile>,
        #[serde(default, rename = "timeDeltas")]
        time_deltas: Option<Vec<f64>>,
        #[serde(default, rename = "startTime")]
        start_time: Option<f64>,
        #[serde(default, rename = "endTime")]
        end_time: Option<f64>,
    }

    #[derive(Deserialize, Default)]
    struct ChunkProfile {
        #[serde(default)]
        nodes: Option<Vec<cpu::Node>>,
        #[serde(default)]
        samples: Option<Vec<Index>>,
    }

    /// DevTools traces: one CPU profile per `Profile` id (or `CpuProfile` event).
    fn cpu_profiles(events: &[Event], progress: &Progress) -> Result<Profile, ParseError> {
        let names = Names::new(events);
        // Events in time order (stable, as speedscope sorts them).
        let mut order: Vec<usize> = (0..events.len()).collect();
        order.sort_by(|&a, &b| {
            let t = |i: usize| events[i].ts.map_or(0.0, |t| t.0);
            t(a).total_cmp(&t(b))
        });
        let mut profiles: Vec<(String, (i64, i64), cpu::CpuData)> = Vec::new();
        let mut bad_chunks = 0u64;
        let mut orphans = 0u64;
        for &i in &order {
            let e = &events[i];
            let pt = pid_tid(e);
            let key =
                e.id.as_ref()
                    .map_or_else(|| format!("{}:{}", pt.0, pt.1), key_of_id);
            let data = e.args.as_ref().and_then(|a| a.get("data"));
            match e.name.as_deref() {
                Some("CpuProfile") => {
                    let raw = data
                        .and_then(|d| d.get("cpuProfile"))
                        .and_then(|c| serde_json::from_value::<cpu::RawProfile>(c.clone()).ok())
                        .and_then(cpu::CpuData::from_raw);
                    match raw {
                        Some(d) => upsert(&mut profiles, key, pt, d),
                        None => bad_chunks += 1,
                    }
                }
                Some("Profile") => {
                    let chunk: ChunkData = data
                        .and_then(|d| serde_json::from_value(d.clone()).ok())
                        .unwrap_or_default();
                    let mut d = cpu::CpuData {
                        start_us: chunk.start_time.unwrap_or(0.0),
                        end_us: chunk.end_time,
                        ..cpu::CpuData::default()
                    };
                    add_chunk(&mut d, chunk);
                    upsert(&mut profiles, key, pt, d);
                }
                Some("ProfileChunk") => {
                    let Some(p) = profiles.iter_mut().find(|p| p.0 == key) else {
                        orphans += 1;
                        continue;
                    };
                    match data.map(|d| serde_json::from_value::<ChunkData>(d.clone())) {
                        Some(Ok(chunk)) => add_chunk(&mut p.2, chunk),
                        _ => bad_chunks += 1,
                    }
                }
                _ => {}
            }
        }
        let all: Vec<&cpu::CpuData> = profiles.iter().map(|p| &p.2).collect();
        let mut out = Out::new("chrome-trace", &all);
        if bad_chunks > 0 {
            out.profile.warnings.push(
                0,
                format!("{bad_chunks} profile events have unreadable data; skipped"),
            );
        }
        if orphans > 0 {
            out.profile.warnings.push(
                0,
                format!("{orphans} ProfileChunk events belong to no Profile event; skipped"),
            );
        }
        let (mut start, mut end) = (f64::INFINITY, f64::NEG_INFINITY);
        for (_, (pid, tid), data) in &profiles {
            let thread = out.thread(names.info(*pid, *tid));
            cpu::import(&mut out, data, thread, progress)?;
            if let Some(e) = data.end_us.filter(|e| *e > data.start_us) {
                start = start.min(data.start_us);
                end = end.max(e);
            }
        }
        if end > start {
            out.profile.meta.duration_ns = Some(us_to_ns(end - start));
        }
        Ok(out.finish())
    }

    fn upsert(
        profiles: &mut Vec<(String, (i64, i64), cpu::CpuData)>,
        key: String,
        pt: (i64, i64),
        d: cpu::CpuData,
    ) {
        match profiles.iter_mut().find(|p| p.0 == key) {
            Some(p) => p.2 = d,
            None => profiles.push((key, pt, d)),
        }
    }

    fn add_chunk(d: &mut cpu::CpuData, chunk: ChunkData) {
        if let Some(p) = chunk.cpu_profile {
            d.nodes.extend(p.nodes.unwrap_or_default());
            d.samples.extend(p.samples.unwrap_or_default());
        }
        d.deltas.extend(chunk.time_deltas.unwrap_or_default());
        if let Some(s) = chunk.start_time {
            d.start_us = s;
        }
        if let Some(e) = chunk.end_time {
            d.end_us = Some(e);
        }
    }

    /// `{traceEvents, samples, stackFrames}`: each sample weighs the time to the
    /// next sample of its thread.
    fn sampled(
        events: &[Event],
        samples: &[TSample],
        frames: &HashMap<String, StackFrame>,
    ) -> Profile {
        let names = Names::new(events);
        let mut decimals = Decimals::default();
        samples
            .iter()
            .for_each(|s| decimals.observe(s.ts.map_or(0.0, |t| t.0)));
        let mut out = Out::with("chrome-trace", decimals.at_most(3), false);
        let mut by_thread: Vec<((i64, i64), Vec<usize>)> = Vec::new();
        for (i, s) in samples.iter().enumerate() {
            let pt = (s.pid.map_or(0, |p| p.0), s.tid.map_or(0, |t| t.0));
            match by_thread.iter_mut().find(|t| t.0 == pt) {
                Some(t) => t.1.push(i),
                None => by_thread.push((pt, vec![i])),
            }
        }
        by_thread.sort_by_key(|t| pid_tid_key(t.0));
        let mut cache: HashMap<String, Option<StackId>> = HashMap::new();
        let mut missing = 0u64;
        for (pt, list) in &by_thread {
            let thread = out.thread(names.info(pt.0, pt.1));
            for (k, &i) in list.iter().enumerate() {
                let ts = |i: usize| samples[i].ts.map_or(0.0, |t| t.0);
                let weight = list.get(k + 1).map_or(0.0, |&j| ts(j) - ts(i));
                let value = out.decimals.scale(weight.max(0.0)).unwrap_or(0);
                let sf = samples[i].sf.as_ref().map(key_of_id).unwrap_or_default();
                let stack = match cache.get(&sf) {
                    Some(&s) => s,
                    None => {
                        let s = stack_of(&mut out, frames, &sf, &mut missing);
                        cache.insert(sf, s);
                        s
                    }
                };
                out.push(stack, value, us_to_ns(ts(i)), thread);
            }
        }
        if missing > 0 {
            out.profile.warnings.push(
                0,
                format!("{missing} stack frames name a missing parent or frame; cut there"),
            );
        }
        out.finish()
    }

    /// The stack of frame `sf`: its parent chain, root first.
    fn stack_of(
        out: &mut Out,
        frames: &HashMap<String, StackFrame>,
        sf: &str,
        missing: &mut u64,
    ) -> Option<StackId> {
        let mut chain = Vec::new();
        let mut cur = Some(sf.to_string());
        while let Some(id) = cur.take() {
            let Some(f) = frames.get(&id) else {
                *missing += 1;
                break;
            };
            chain.push(&f.name);
            if chain.len() > frames.len() {
                *missing += 1; // a cycle
                break;
            }
            cur = f
                .parent
                .as_ref()
                .map(key_of_id)
                .filter(|p| p != "0" && p != "null");
        }
        let mut stack = None;
        for name in chain.into_iter().rev() {
            let f = out.frame(name, "", None, FrameKind::Normal);
            stack = Some(out.profile.stacks.intern(stack, f));
        }
        stack
    }

    /// speedscope's profile order: pid and tid zero-padded, as text.
    fn pid_tid_key((pid, tid): (i64, i64)) -> String {
        format!("{pid:0>10}:{tid:0>10}")
    }

    /// A duration event reduced to what the stack walk needs.
    #[derive(Clone, Copy)]
    struct Dur<'e, 'a> {
        ev: &'e Event<'a>,
        ts: f64,
    }

    impl Dur<'_, '_> {
        fn name(&self) -> Option<&str> {
            self.ev.name.as_deref()
        }
        /// speedscope's frame key: the name and the args.
        fn same_key(&self, other: &Dur) -> bool {
            self.name() == other.name() && self.args() == other.args()
        }
        fn args(&self) -> Option<&Value> {
            self.ev.args.as_ref().filter(|a| !a.is_null())
        }
    }

    /// `B`/`E`/`X` events: one thread per (pid, tid).
    fn durations(events: &[Event], progress: &Progress) -> Result<Profile, ParseError> {
        let names = Names::new(events);
        let mut decimals = Decimals::default();
        for e in events {
            if matches!(e.ph.as_ref(), "B" | "E" | "X") {
                decimals.observe(e.ts.map_or(0.0, |t| t.0));
                decimals.observe(e.dur.or(e.tdur).map_or(0.0, |t| t.0));
            }
        }
        let mut out = Out::with("chrome-trace", decimals.at_most(3), false);
        let mut by_thread: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
        let mut no_ts = 0u64;
        let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
        for (i, e) in events.iter().enumerate() {
            if matches!(e.ph.as_ref(), "B" | "E" | "X") {
                let Some(ts) = e.ts.map(|t| t.0).filter(|t| t.is_finite()) else {
                    no_ts += 1;
                    continue;
                };
                let dur = e.dur.or(e.tdur).map_or(0.0, |d| d.0);
                first = first.min(ts);
                last = last.max(ts + if dur.is_finite() { dur.max(0.0) } else { 0.0 });
                by_thread.entry(pid_tid(e)).or_default().push(i);
            }
        }
        if last > first {
            out.profile.meta.duration_ns = Some(us_to_ns(last - first));
        }
        let mut threads: Vec<_> = by_thread.into_iter().collect();
        threads.sort_by_key(|t| pid_tid_key(t.0));
        for ((pid, tid), list) in threads {
            if progress.is_cancelled() {
                return Err(ParseError::Cancelled);
            }
            let thread = out.thread(names.info(pid, tid));
            thread_durations(&mut out, events, &list, thread);
        }
        if no_ts > 0 {
            out.profile.warnings.push(
                0,
                format!("{no_ts} duration events have no valid `ts`; skipped"),
            );
        }
        Ok(out.finish())
    }

    /// speedscope's queue walk over one thread's duration events.
    fn thread_durations(out: &mut Out, events: &[Event], list: &[usize], thread: u32) {
        let ts = |e: &Event| e.ts.map_or(0.0, |t| t.0);
        let dur = |e: &Event| {
            e.dur
                .or(e.tdur)
                .map_or(0.0, |t| if t.0.is_finite() { t.0 } else { 0.0 })
        };
        let mut begins: Vec<Dur> = Vec::new();
        let mut ends: Vec<Dur> = Vec::new();
        let mut xs: Vec<&Event> = Vec::new();
        for &i in list {
            let e = &events[i];
            match e.ph.as_ref() {
                "B" => begins.push(Dur { ev: e, ts: ts(e) }),
                "E" => ends.push(Dur { ev: e, ts: ts(e) }),
                _ => xs.push(e),
            }
        }
        // X events: by start, the longer first at one start (stable otherwise).
        xs.sort_by(|a, b| ts(a).total_cmp(&ts(b)).then(dur(b).total_cmp(&dur(a))));
        for x in xs {
            begins.push(Dur { ev: x, ts: ts(x) });
            ends.push(Dur {
                ev: x,
                ts: ts(x) + dur(x),
            });
        }
        begins.sort_by(|a, b| a.ts.total_cmp(&b.ts));
        ends.sort_by(|a, b| a.ts.total_cmp(&b.ts));
        let mut open: Vec<(Dur, StackId)> = Vec::new();
        let mut last: Option<i64> = None;
        let (mut bi, mut ei) = (0, 0);
        let (mut unmatched, mut mismatched) = (0u64, 0u64);
        let dec = out.decimals;
        // Time passes for the open stack up to each applied event.
        let advance = |out: &mut Out, open: &[(Dur, StackId)], last: &mut Option<i64>, at: f64| {
            let Some(v) = dec.scale(at) else { return };
            if let (Some(l), Some(&(_, s))) = (*last, open.last())
                && v > l
            {
                out.push(
                    Some(s),
                    v.saturating_sub(l),
                    us_to_ns(l as f64 / dec.factor()),
                    thread,
                );
            }
            if last.is_none_or(|l| v > l) {
                *last = Some(v);
            }
        };
        while bi < begins.len() || ei < ends.len() {
            let take_begin = if ei == ends.len() {
                true
            } else if bi == begins.len() {
                false
            } else {
                let (b, e) = (&begins[bi], &ends[ei]);
                b.ts < e.ts || (b.ts == e.ts && b.same_key(e))
            };
            if take_begin {
                let b = begins[bi];
                bi += 1;
                advance(out, &open, &mut last, b.ts);
                let name = b.name().unwrap_or("(unnamed)");
                let (file, line) = hermes_location(b.ev);
                let f = out.frame(name, file, line, FrameKind::Normal);
                let s = out.profile.stacks.intern(open.last().map(|o| o.1), f);
                open.push((b, s));
                continue;
            }
            // Prefer an end at the same time that matches the top by key, then by name.
            if let Some(&(top, _)) = open.last() {
                let same_ts = ends[ei..]
                    .iter()
                    .take_while(|e| e.ts <= ends[ei].ts)
                    .count();
                let found = (1..same_ts)
                    .find(|&k| ends[ei + k].same_key(&top))
                    .or_else(|| (1..same_ts).find(|&k| ends[ei + k].name() == top.name()));
                if let Some(k) = found {
                    ends.swap(ei, ei + k);
                }
            }
            let e = ends[ei];
            ei += 1;
            match open.last() {
                None => unmatched += 1,
                Some((b, _)) if b.name() != e.name() => mismatched += 1,
                Some(_) => {
                    advance(out, &open, &mut last, e.ts);
                    open.pop();
                }
            }
        }
        let w = &mut out.profile.warnings;
        if unmatched > 0 {
            w.push(
                0,
                format!("thread {thread}: {unmatched} end events with nothing open; ignored"),
            );
        }
        if mismatched > 0 {
            w.push(
                0,
                format!(
                    "thread {thread}: {mismatched} end events do not match the open event; ignored"
                ),
            );
        }
        if !open.is_empty() {
            w.push(
                0,
                format!(
                    "thread {thread}: {} events never end; closed at the last event",
                    open.len()
                ),
            );
        }
    }

    /// Hermes traces put the source location in `args`.
    fn hermes_location<'e>(e: &'e Event) -> (&'e str, Option<u32>) {
        let Some(args) = e.args.as_ref() else {
            return ("", None);
        };
        let file = args.get("url").and_then(Value::as_str).unwrap_or("");
        let line = args
            .get("line")
            .and_then(Value::as_u64)
            .and_then(|l| u32::try_from(l).ok());
        (file, line)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn closes_a_cut_trace_after_its_last_event() {
            let (fixed, clean) =
                close_truncated(br#"[{"a": 1}, {"b": [2]},  "#).unwrap_or_default();
            assert_eq!(fixed, br#"[{"a": 1}, {"b": [2]}]"#);
            assert!(clean);
            let (fixed, clean) =
                close_truncated(br#"{"traceEvents": [{"a": 1}, {"b": "#).unwrap_or_default();
            assert_eq!(fixed, br#"{"traceEvents": [{"a": 1}]}"#);
            assert!(!clean);
            assert!(close_truncated(br#"[{"a": 1}] x"#).is_none());
        }
    }
}

#[cfg(test)]
mod tests;
