//! Trace-event JSON.

mod durations;

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::{Out, cpuprofile, us_to_ns};
use crate::formats::ParseError;
use crate::formats::json::{self, Decimals, Index, Num};
use crate::model::{FrameKind, Profile, StackId, ThreadInfo};
use crate::sources::input::Progress;

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

pub fn parse(
    bytes: &[u8],
    progress: &Progress,
    granularity: crate::formats::Granularity,
) -> Result<Profile, ParseError> {
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
        cpu_profiles(&trace.events, progress, granularity)?
    } else if let Some((samples, frames)) = &trace.samples {
        sampled(&trace.events, samples, frames)
    } else {
        durations::profile(&trace.events, progress)?
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
    nodes: Option<Vec<cpuprofile::Node>>,
    #[serde(default)]
    samples: Option<Vec<Index>>,
}

/// DevTools traces: one CPU profile per `Profile` id (or `CpuProfile` event).
fn cpu_profiles(
    events: &[Event],
    progress: &Progress,
    granularity: crate::formats::Granularity,
) -> Result<Profile, ParseError> {
    let names = Names::new(events);
    // Events in time order (stable, as speedscope sorts them).
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by(|&a, &b| {
        let t = |i: usize| events[i].ts.map_or(0.0, |t| t.0);
        t(a).total_cmp(&t(b))
    });
    let mut profiles: Vec<(String, (i64, i64), cpuprofile::CpuData)> = Vec::new();
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
                    .and_then(|c| serde_json::from_value::<cpuprofile::RawProfile>(c.clone()).ok())
                    .and_then(cpuprofile::CpuData::from_raw);
                match raw {
                    Some(d) => upsert(&mut profiles, key, pt, d),
                    None => bad_chunks += 1,
                }
            }
            Some("Profile") => {
                let chunk: ChunkData = data
                    .and_then(|d| serde_json::from_value(d.clone()).ok())
                    .unwrap_or_default();
                let mut d = cpuprofile::CpuData {
                    start_us: chunk.start_time.unwrap_or(0.0),
                    end_us: chunk.end_time,
                    ..cpuprofile::CpuData::default()
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
    let all: Vec<&cpuprofile::CpuData> = profiles.iter().map(|p| &p.2).collect();
    let mut out = Out::new("chrome-trace", &all);
    out.granularity = granularity;
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
        cpuprofile::import(&mut out, data, thread, progress)?;
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
    profiles: &mut Vec<(String, (i64, i64), cpuprofile::CpuData)>,
    key: String,
    pt: (i64, i64),
    d: cpuprofile::CpuData,
) {
    match profiles.iter_mut().find(|p| p.0 == key) {
        Some(p) => p.2 = d,
        None => profiles.push((key, pt, d)),
    }
}

fn add_chunk(d: &mut cpuprofile::CpuData, chunk: ChunkData) {
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
fn sampled(events: &[Event], samples: &[TSample], frames: &HashMap<String, StackFrame>) -> Profile {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closes_a_cut_trace_after_its_last_event() {
        let (fixed, clean) = close_truncated(br#"[{"a": 1}, {"b": [2]},  "#).unwrap_or_default();
        assert_eq!(fixed, br#"[{"a": 1}, {"b": [2]}]"#);
        assert!(clean);
        let (fixed, clean) =
            close_truncated(br#"{"traceEvents": [{"a": 1}, {"b": "#).unwrap_or_default();
        assert_eq!(fixed, br#"{"traceEvents": [{"a": 1}]}"#);
        assert!(!clean);
        assert!(close_truncated(br#"[{"a": 1}] x"#).is_none());
    }
}
