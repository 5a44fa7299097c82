//! Gecko threads into one ember profile: frame and stack tables (raw or
//! processed) resolved to ember stacks, samples weighed by the time to the next.

use std::collections::HashMap;

use super::json::{self, Decimals};
use super::{Cell, Thread, col_index, col_num, ms_to_ns};
use crate::model::{FrameId, FrameKind, FrameMeta, Profile, StackId, ThreadInfo, Unit, ValueType};
/// Splits a Gecko frame label `name (file:line:col)` as speedscope's regular
/// expression does: the last ` (`, and up to two trailing `:digits`.
pub(super) fn split_location(s: &str) -> Option<(&str, &str, Option<u32>)> {
    let inner_end = s.strip_suffix(')')?.len();
    let bytes = s.as_bytes();
    let open = (1..inner_end)
        .rev()
        .find(|&i| bytes[i] == b'(' && bytes[i - 1].is_ascii_whitespace())?;
    let name = &s[..open - 1];
    let mut file = &s[open + 1..inner_end];
    let mut nums = Vec::new();
    for _ in 0..2 {
        let Some(colon) = file.rfind(':') else { break };
        let digits = &file[colon + 1..];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        nums.push(digits);
        file = &file[..colon];
    }
    // With two numbers the first is the line; with one, it is the line.
    let line = nums.last().and_then(|d| d.parse::<u32>().ok());
    Some((name, file, line))
}

/// The profile being built, one Gecko thread after another.
pub(super) struct Builder {
    pub(super) profile: Profile,
    threads: Vec<u32>,
    times: Vec<u64>,
    pub(super) dec: Decimals,
    /// (name, file, line) -> frame.
    frames: HashMap<(String, String, u32), FrameId>,
    /// The time total, kept from overflowing; samples that would are counted.
    total: i64,
    too_large: u64,
    granularity: crate::formats::Granularity,
}

/// What one thread's frame and stack tables resolve to.
struct Resolved {
    frames: Vec<Option<FrameId>>,
    stacks: Vec<u32>,
}

const UNRESOLVED: u32 = u32::MAX - 1;
const NO_STACK: u32 = u32::MAX;

impl Builder {
    pub(super) fn new(granularity: crate::formats::Granularity) -> Builder {
        // Milliseconds kept to the nanosecond.
        let dec = Decimals::fixed(6);
        let profile = Profile::new(
            "gecko",
            vec![
                ValueType {
                    decimals: dec.get(),
                    ..ValueType::new("time", Unit::Milliseconds)
                },
                ValueType::samples(),
            ],
        );
        Builder {
            profile,
            threads: Vec::new(),
            times: Vec::new(),
            dec,
            frames: HashMap::new(),
            total: 0,
            too_large: 0,
            granularity,
        }
    }

    fn frame(&mut self, label: &str, file: Option<&str>, line: Option<u32>) -> FrameId {
        let (name, file, line) = match (file, split_location(label)) {
            (Some(f), _) => (label, f, line),
            (None, Some((n, f, l))) => (n, f, l.or(line)),
            (None, None) => (label, "", line),
        };
        let key = (name.to_string(), file.to_string(), line.unwrap_or(0));
        if let Some(&f) = self.frames.get(&key) {
            return f;
        }
        let named = self
            .granularity
            .frame_name(name.as_bytes(), file.as_bytes(), line);
        let id = self.profile.frames.intern(&named);
        if !file.is_empty() {
            self.profile
                .frame_meta
                .entry(id)
                .or_insert_with(|| FrameMeta {
                    file: Some(file.to_string()),
                    line,
                    kind: FrameKind::Normal,
                    system_name: None,
                    object: None,
                });
        }
        self.frames.insert(key, id);
        id
    }

    pub(super) fn thread(&mut self, t: Thread, start_ms: f64, shared: &[String]) {
        let index = self.profile.threads.len() as u32;
        let name = t.name.clone().unwrap_or_else(|| format!("thread {index}"));
        self.profile.threads.push(ThreadInfo {
            name: match &t.process_name {
                Some(p) if !p.is_empty() => format!("{p}: {name}"),
                _ => name,
            },
            pid: t.pid.and_then(|p| u64::try_from(p.0).ok()),
            tid: t.tid.and_then(|p| u64::try_from(p.0).ok()),
        });
        let processed = t.samples.stack.is_some();
        let resolved = if processed {
            let strings = t
                .string_array
                .as_deref()
                .or(t.string_table.as_ref().map(|s| s.0.as_slice()))
                .unwrap_or(shared);
            self.processed_tables(&t, strings, index)
        } else {
            let strings = t.string_table.as_ref().map_or(&[][..], |s| s.0.as_slice());
            self.raw_tables(&t, strings, index)
        };
        self.samples(&t, &resolved, start_ms, index);
    }

    /// Frames and stacks of the raw format.
    fn raw_tables(&mut self, t: &Thread, strings: &[String], thread: u32) -> Resolved {
        let ft = &t.frame_table;
        let (loc, line) = (ft.col("location"), ft.col("line"));
        let mut bad = 0u64;
        let frames = (0..ft.data.len())
            .map(|i| {
                let label = ft
                    .get(i, loc)
                    .and_then(|l| strings.get(Cell(Some(l)).index()?));
                match label {
                    Some(label) => {
                        let line = ft
                            .get(i, line)
                            .and_then(|l| Cell(Some(l)).index())
                            .map(|l| l as u32);
                        Some(self.frame(label, None, line))
                    }
                    None => {
                        bad += 1;
                        None
                    }
                }
            })
            .collect();
        if bad > 0 {
            self.profile.warnings.push(
                0,
                format!("thread {thread}: {bad} frames name no string; dropped from their stacks"),
            );
        }
        let st = &t.stack_table;
        let (pc, fc) = (st.col("prefix"), st.col("frame"));
        let links = (0..st.data.len())
            .map(|i| {
                let prefix = st.get(i, pc).and_then(|p| Cell(Some(p)).index());
                (prefix, st.get(i, fc).and_then(|f| Cell(Some(f)).index()))
            })
            .collect::<Vec<_>>();
        let mut r = Resolved {
            frames,
            stacks: Vec::new(),
        };
        self.resolve_stacks(&links, &mut r, thread);
        r
    }

    /// Frames and stacks of the processed format.
    fn processed_tables(&mut self, t: &Thread, strings: &[String], thread: u32) -> Resolved {
        let (ft, fu) = (&t.frame_table, &t.func_table);
        let n = ft.func.as_ref().map_or(0, Vec::len);
        let mut bad = 0u64;
        let mut frames = Vec::with_capacity(n);
        for i in 0..n {
            let func = col_index(ft.func.as_ref(), i);
            let name = func
                .and_then(|f| col_index(fu.name.as_ref(), f))
                .and_then(|s| strings.get(s));
            let Some(name) = name else {
                bad += 1;
                frames.push(None);
                continue;
            };
            let file = func
                .and_then(|f| col_index(fu.file_name.as_ref(), f))
                .and_then(|s| strings.get(s))
                .map(String::as_str);
            let line = col_index(ft.line.as_ref(), i)
                .or_else(|| func.and_then(|f| col_index(fu.line_number.as_ref(), f)))
                .and_then(|l| u32::try_from(l).ok());
            frames.push(Some(self.frame(name, Some(file.unwrap_or("")), line)));
        }
        if bad > 0 {
            self.profile.warnings.push(
                0,
                format!(
                    "thread {thread}: {bad} frames name no function; dropped from their stacks"
                ),
            );
        }
        let st = &t.stack_table;
        let len = st.frame.as_ref().map_or(0, Vec::len);
        let links = (0..len)
            .map(|i| {
                (
                    col_index(st.prefix.as_ref(), i),
                    col_index(st.frame.as_ref(), i),
                )
            })
            .collect::<Vec<_>>();
        let mut r = Resolved {
            frames,
            stacks: Vec::new(),
        };
        self.resolve_stacks(&links, &mut r, thread);
        r
    }

    /// Interns every stack of the table (prefix, frame), walking prefix chains with
    /// a list, never recursion. Bad links cut the chain there, with a warning.
    fn resolve_stacks(
        &mut self,
        links: &[(Option<usize>, Option<usize>)],
        r: &mut Resolved,
        thread: u32,
    ) {
        let n = links.len();
        r.stacks = vec![UNRESOLVED; n];
        let mut chain = Vec::new();
        let mut bad = 0u64;
        for i in 0..n {
            if r.stacks[i] != UNRESOLVED {
                continue;
            }
            // Walk up to a resolved stack (or the root), marking the chain.
            let mut base = NO_STACK;
            let mut cur = Some(i);
            while let Some(c) = cur {
                if r.stacks[c] != UNRESOLVED {
                    base = r.stacks[c];
                    break;
                }
                if chain.len() > n {
                    bad += 1; // a cycle: cut it
                    break;
                }
                chain.push(c);
                cur = match links[c].0 {
                    Some(p) if p < n => Some(p),
                    Some(_) => {
                        bad += 1;
                        None
                    }
                    None => None,
                };
            }
            for &c in chain.iter().rev() {
                let frame = links[c].1.and_then(|f| r.frames.get(f).copied().flatten());
                if let Some(f) = frame {
                    let prefix = (base != NO_STACK).then_some(StackId(base));
                    base = self.profile.stacks.intern(prefix, f).0;
                } else {
                    bad += 1;
                }
                r.stacks[c] = base;
            }
            chain.clear();
        }
        if bad > 0 {
            self.profile.warnings.push(
                0,
                format!("thread {thread}: {bad} bad links in the stack table; cut there"),
            );
        }
    }

    fn samples(&mut self, t: &Thread, r: &Resolved, start_ms: f64, thread: u32) {
        let s = &t.samples;
        // (stack index, time ms, count, traced duration ms) per sample.
        let mut rows: Vec<(Option<usize>, f64, i64, Option<f64>)> = Vec::new();
        let count_weight = |w: Option<f64>| {
            w.filter(|w| w.is_finite() && *w >= 0.0)
                .map_or(1, |w| w as i64)
        };
        if let Some(stacks) = &s.stack {
            // Traced profiles weigh each sample by a duration instead of counting it.
            let traced = s.weight_type.as_deref() == Some("tracing-ms");
            let mut t_acc = 0.0;
            for (i, c) in stacks.iter().enumerate() {
                let time = match (&s.time, &s.time_deltas) {
                    (Some(time), _) => col_num(Some(time), i).unwrap_or(f64::NAN),
                    (None, Some(d)) => {
                        t_acc += col_num(Some(d), i).unwrap_or(0.0);
                        t_acc
                    }
                    (None, None) => i as f64,
                };
                let w = col_num(s.weight.as_ref(), i);
                if traced {
                    rows.push((c.index(), time, 1, Some(w.unwrap_or(0.0))));
                } else {
                    rows.push((c.index(), time, count_weight(w), None));
                }
            }
        } else {
            let (sc, tc, wc) = (s.col("stack"), s.col("time"), s.col("weight"));
            for i in 0..s.data.len() {
                let stack = s.get(i, sc).and_then(|v| Cell(Some(v)).index());
                let time = s.get(i, tc).unwrap_or(f64::NAN);
                rows.push((stack, time, count_weight(s.get(i, wc)), None));
            }
        }
        let mut bad_time = 0u64;
        let mut bad_stack = 0u64;
        let mut last_t = None;
        let scaled: Vec<Option<i64>> = rows
            .iter()
            .map(|&(_, time, _, _)| {
                let v = self.dec.scale(time).filter(|_| time.is_finite());
                // Keep time from going backwards.
                match (v, last_t) {
                    (Some(v), Some(l)) if v < l => {
                        bad_time += 1;
                        Some(l)
                    }
                    (Some(v), _) => {
                        last_t = Some(v);
                        Some(v)
                    }
                    (None, _) => {
                        bad_time += 1;
                        last_t
                    }
                }
            })
            .collect();
        for (i, &(stack, _, count, traced)) in rows.iter().enumerate() {
            let stack = match stack {
                None => None,
                Some(s) => match r.stacks.get(s) {
                    Some(&NO_STACK) => None,
                    Some(&id) => Some(StackId(id)),
                    None => {
                        bad_stack += 1;
                        continue;
                    }
                },
            };
            let here = scaled[i].unwrap_or(0);
            let next = scaled.get(i + 1).copied().flatten().unwrap_or(here);
            let weight = match traced {
                Some(ms) => self.dec.scale(ms.max(0.0)).unwrap_or(0),
                None => next.saturating_sub(here).max(0),
            };
            if !json::add_to_total(&mut self.total, weight, &mut self.too_large) {
                continue;
            }
            self.profile.push_sample(stack, &[weight, count]);
            self.threads.push(thread);
            let ms = start_ms + here as f64 / self.dec.factor();
            self.times.push(ms_to_ns(ms));
        }
        if bad_time > 0 {
            self.profile.warnings.push(
                0,
                format!("thread {thread}: {bad_time} samples without a valid time or out of order"),
            );
        }
        if bad_stack > 0 {
            self.profile.warnings.push(
                0,
                format!("thread {thread}: {bad_stack} samples name no stack; skipped"),
            );
        }
    }

    pub(super) fn finish(mut self, processes: usize) -> Profile {
        json::warn_too_large(&mut self.profile, self.too_large);
        let n = self.profile.threads.len();
        if n > 1 {
            let procs = if processes > 1 {
                format!(" from {processes} processes")
            } else {
                String::new()
            };
            self.profile.notes.push(format!(
                "{n} threads{procs} merged into one profile; the thread column tells them apart"
            ));
        }
        if let (Some(a), Some(b)) = (self.times.iter().min(), self.times.iter().max()) {
            self.profile.meta.duration_ns = Some(b - a);
        }
        self.profile.samples.thread = Some(self.threads);
        self.profile.samples.time = Some(self.times);
        self.profile
    }
}
