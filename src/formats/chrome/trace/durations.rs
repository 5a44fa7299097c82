//! Trace events with a duration (`B`/`E` pairs, `X`), nested into stacks per
//! thread as speedscope nests them: an event's time is split between it and the
//! events nested in it.

use std::collections::HashMap;

use serde_json::Value;

use super::{Event, Names, pid_tid, pid_tid_key};
use crate::formats::ParseError;
use crate::formats::chrome::{Out, us_to_ns};
use crate::formats::json::Decimals;
use crate::model::{FrameKind, Profile, StackId};
use crate::sources::input::Progress;

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
pub(super) fn profile(events: &[Event], progress: &Progress) -> Result<Profile, ParseError> {
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
