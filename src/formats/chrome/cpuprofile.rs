//! The `.cpuprofile` node table and speedscope's way of turning samples into stacks.

use serde::Deserialize;

use super::{Out, us_to_ns};
use crate::formats::ParseError;
use crate::formats::json::Index;
use crate::model::{FrameId, FrameKind, StackId};
use crate::sources::input::Progress;

mod walk;
use walk::Walk;

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
    /// V8's per-line hit counts of the node's own samples (1-based lines).
    #[serde(default, rename = "positionTicks")]
    pub position_ticks: Vec<PositionTick>,
}

#[derive(Deserialize, Clone, Default)]
pub struct PositionTick {
    #[serde(default)]
    pub line: f64,
    #[serde(default)]
    pub ticks: f64,
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
                position_ticks: Vec::new(),
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
    /// Each node's function name as its frame shows it (before any location).
    name: Vec<String>,
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
    let mut names = Vec::with_capacity(n);
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
        names.push(name);
    }
    let plain = plain_nodes(&parent, &role);
    Table {
        parent,
        frame,
        name: names,
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
            format!("{backwards} time deltas are negative; the clock is held until it catches up"),
        );
    }
    let idle = out.frame("(idle)", "", None, FrameKind::Normal);
    let idle_stack = out.profile.stacks.intern(None, idle);
    let mut walk = Walk::new(t.parent.len());
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
    let mut lines = LineTicks::new(out, &t, &data.nodes);
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
        let at = lines.place(out, &t, prev, stack);
        out.push(at, weight, to_ns(times[i]), thread);
    }
    if unknown > 0 {
        out.profile.warnings.push(
            0,
            format!("{unknown} samples name no node; they count for the previous stack"),
        );
    }
    Ok(())
}

/// At line granularity, the lines V8 counted a node's own samples on
/// (`positionTicks`): the node's samples go to its lines in order, as many to
/// each as it has ticks, so each line's self time is its share of the node's.
/// A node without them (or past them) keeps its function's line.
struct LineTicks {
    /// Per node: (the leaf frame at that line, ticks left), in V8's order.
    left: Vec<Vec<(FrameId, u64)>>,
}

impl LineTicks {
    fn new(out: &mut Out, t: &Table, nodes: &[Node]) -> LineTicks {
        let mut left = vec![Vec::new(); nodes.len()];
        if out.granularity != crate::formats::Granularity::Line {
            return LineTicks { left };
        }
        for (i, node) in nodes.iter().enumerate() {
            // A native frame has no file its lines could be of.
            if node.position_ticks.is_empty()
                || t.role[i] != Role::Normal
                || node.call_frame.url.is_empty()
            {
                continue;
            }
            let cf = &node.call_frame;
            let func = &t.name[i];
            for p in &node.position_ticks {
                let line =
                    (p.line.is_finite() && p.line >= 1.0 && p.line < 1e9).then_some(p.line as u32);
                let ticks = if p.ticks.is_finite() && p.ticks > 0.0 {
                    p.ticks as u64
                } else {
                    0
                };
                if let (Some(line), true) = (line, ticks > 0) {
                    let f = out.frame(func, &cf.url, Some(line), FrameKind::Jit);
                    left[i].push((f, ticks));
                }
            }
        }
        LineTicks { left }
    }

    /// The stack of one sample of `node` (on `stack`), its leaf moved to the
    /// next line with ticks left.
    fn place(
        &mut self,
        out: &mut Out,
        t: &Table,
        node: u32,
        stack: Option<StackId>,
    ) -> Option<StackId> {
        let s = stack?;
        let Some(lines) = self.left.get_mut(node as usize) else {
            return stack;
        };
        let Some(slot) = lines.iter_mut().find(|(_, n)| *n > 0) else {
            return stack;
        };
        if out.profile.stacks.frame(s) != t.frame[node as usize] {
            return stack;
        }
        slot.1 -= 1;
        let prefix = out.profile.stacks.prefix(s);
        Some(out.profile.stacks.intern(prefix, slot.0))
    }
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
