//! speedscope's JSON file format (`https://www.speedscope.app/file-format-schema.json`).
//!
//! `shared.frames` names the frames once; each of `profiles[]` is either *sampled*
//! (`samples`: stacks of frame indexes, root first, with `weights`) or *evented*
//! (`events`: open/close of a frame at a value `at`). Every profile becomes a thread
//! of one ember profile; weights keep the unit the file names. An evented profile
//! becomes one sample per interval between events (weight = the interval, time = its
//! start when the unit is a time).

use std::io::Read;

use serde::Deserialize;

use super::json::{self, Decimals, Index};
use super::{Granularity, ParseError};
use crate::model::{FrameId, FrameMeta, Profile, StackId, ThreadInfo, Unit, ValueType};
use crate::sources::input::Progress;

const SCHEMA_URL: &[u8] = b"speedscope.app/file-format-schema.json";

/// Whether `head` is a speedscope file: sure when the schema URL is there; unsure
/// for a cut head that has speedscope's keys but not (yet) the URL.
pub fn probe(head: &[u8], complete: bool) -> Option<bool> {
    let scan = json::scan(head);
    if scan.first != b'{' {
        return Some(false);
    }
    if memchr::memmem::find(head, SCHEMA_URL).is_some() && scan.has_key(1, "$schema") {
        return Some(true);
    }
    let looks = scan.has_key(1, "profiles") || scan.has_key(1, "shared");
    if looks && !complete && scan.truncated {
        None
    } else {
        Some(false)
    }
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    shared: Shared,
    #[serde(default)]
    profiles: Vec<SProfile>,
    #[serde(default, rename = "activeProfileIndex")]
    active: Option<Index>,
    #[serde(default)]
    exporter: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize, Default)]
struct Shared {
    #[serde(default)]
    frames: Vec<SFrame>,
}

#[derive(Deserialize)]
struct SFrame {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    line: Option<Index>,
}

/// A sampled or evented profile; the fields of both, all optional, so one struct
/// reads either without serde buffering an internally tagged enum.
#[derive(Deserialize)]
struct SProfile {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default, rename = "startValue")]
    start: Option<f64>,
    #[serde(default, rename = "endValue")]
    end: Option<f64>,
    #[serde(default)]
    samples: json::FlatStacks,
    #[serde(default)]
    weights: Vec<f64>,
    #[serde(default)]
    events: Vec<SEvent>,
}

#[derive(Deserialize)]
struct SEvent {
    #[serde(rename = "type")]
    kind: EventKind,
    frame: Index,
    at: f64,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
enum EventKind {
    #[serde(rename = "O")]
    Open,
    #[serde(rename = "C")]
    Close,
    #[serde(other)]
    Other,
}

/// Reads a whole speedscope file.
pub fn parse(reader: impl Read, progress: &Progress) -> Result<Profile, ParseError> {
    parse_with(reader, progress, Granularity::Function)
}

/// [`parse`] with frames at `granularity` (py-spy records the line each frame
/// was at, so its frames of one function differ by line).
pub fn parse_with(
    reader: impl Read,
    progress: &Progress,
    granularity: Granularity,
) -> Result<Profile, ParseError> {
    let bytes = json::read_all(reader, progress)?;
    let file: File = json::from_slice(&bytes)?;
    drop(bytes);
    if progress.is_cancelled() {
        return Err(ParseError::Cancelled);
    }
    Builder::new(&file, granularity).build(&file, progress)
}

/// One value type per distinct unit, in order of first use.
struct Column {
    unit: Unit,
    decimals: Decimals,
}

struct Builder {
    profile: Profile,
    /// Frame index -> interned frame.
    frames: Vec<FrameId>,
    /// Profile index -> value column.
    column_of: Vec<usize>,
    columns: Vec<Column>,
    times: Vec<u64>,
    timed: bool,
    threads: Vec<u32>,
    row: Vec<i64>,
    /// Per column, so no total overflows; samples that would are counted here.
    totals: Vec<i64>,
    too_large: u64,
}

impl Builder {
    fn new(file: &File, granularity: Granularity) -> Self {
        let mut profile = Profile::new("speedscope", Vec::new());
        let frames = file
            .shared
            .frames
            .iter()
            .map(|f| {
                let name = f.name.as_deref().filter(|n| !n.is_empty());
                let file = f.file.as_deref().filter(|s| !s.is_empty());
                let named = granularity.frame_name(
                    name.unwrap_or("(unnamed)").as_bytes(),
                    file.unwrap_or("").as_bytes(),
                    f.line.and_then(Index::as_u32),
                );
                let id = profile.frames.intern(&named);
                if file.is_some() || f.line.is_some() {
                    profile.frame_meta.entry(id).or_insert_with(|| FrameMeta {
                        file: file.map(str::to_string),
                        line: f.line.and_then(Index::as_u32),
                        ..FrameMeta::default()
                    });
                }
                id
            })
            .collect();
        let mut columns: Vec<Column> = Vec::new();
        let mut column_of = Vec::new();
        for p in &file.profiles {
            let unit = Unit::from_name(p.unit.as_deref().unwrap_or("none"));
            let c = match columns.iter().position(|c| c.unit == unit) {
                Some(c) => c,
                None => {
                    columns.push(Column {
                        unit,
                        decimals: Decimals::default(),
                    });
                    columns.len() - 1
                }
            };
            let d = &mut columns[c].decimals;
            p.weights.iter().for_each(|&w| d.observe(w));
            p.events.iter().for_each(|e| d.observe(e.at));
            column_of.push(c);
        }
        Builder {
            profile,
            frames,
            column_of,
            columns,
            times: Vec::new(),
            timed: true,
            threads: Vec::new(),
            row: Vec::new(),
            totals: Vec::new(),
            too_large: 0,
        }
    }

    fn build(mut self, file: &File, progress: &Progress) -> Result<Profile, ParseError> {
        for (key, value) in [("name", &file.name), ("exporter", &file.exporter)] {
            if let Some(v) = value {
                self.profile.meta.extra.push((key.into(), v.to_string()));
            }
        }
        self.profile.value_types = self
            .columns
            .iter()
            .map(|c| ValueType {
                decimals: c.decimals.get(),
                ..ValueType::new(kind_of(&c.unit), c.unit.clone())
            })
            .collect();
        if self.profile.value_types.is_empty() {
            self.profile
                .value_types
                .push(ValueType::new("weight", Unit::Count));
        }
        self.totals = vec![0; self.profile.value_types.len()];
        let active = file.active.and_then(Index::as_usize).unwrap_or(0);
        if let Some(&c) = self.column_of.get(active) {
            self.profile.default_value = c;
        }
        let mut duration_ns: Option<f64> = None;
        for (i, p) in file.profiles.iter().enumerate() {
            if progress.is_cancelled() {
                return Err(ParseError::Cancelled);
            }
            let name = p
                .name
                .as_deref()
                .map_or_else(|| format!("profile {i}"), str::to_string);
            self.profile.threads.push(ThreadInfo {
                name,
                pid: None,
                tid: None,
            });
            let column = self.column_of[i];
            let nanos = self.columns[column].unit.nanos();
            match p.kind.as_ref() {
                "sampled" => {
                    self.timed = false;
                    self.sampled(i, p, column);
                }
                "evented" => self.evented(i, p, column, nanos),
                other => self.profile.warnings.push(
                    0,
                    format!(
                        "profile {i}: unknown type {other:?}, skipped (expected sampled or evented)"
                    ),
                ),
            }
            if let (Some(ns), Some(s), Some(e)) = (nanos, p.start, p.end) {
                let d = (e - s) * ns;
                duration_ns = Some(duration_ns.map_or(d, |x: f64| x.max(d)));
            }
        }
        let n = file.profiles.len();
        if n > 1 {
            self.profile.notes.push(format!(
                "{n} speedscope profiles merged into one; each is a thread (the profile {active} is shown first in speedscope)"
            ));
        }
        if self.columns.len() > 1 {
            self.profile.notes.push(
                "the profiles use different units: one value type per unit, 0 in the others".into(),
            );
        }
        self.profile.meta.duration_ns = duration_ns.filter(|d| *d >= 0.0).map(|d| d as u64);
        json::warn_too_large(&mut self.profile, self.too_large);
        self.profile.samples.thread = Some(self.threads);
        if self.timed && !self.times.is_empty() {
            self.profile.samples.time = Some(self.times);
        }
        Ok(self.profile)
    }

    /// Pushes one sample of profile `thread` with `value` in `column`.
    fn push(
        &mut self,
        thread: usize,
        column: usize,
        stack: Option<StackId>,
        value: i64,
        time: u64,
    ) {
        if !json::add_to_total(&mut self.totals[column], value, &mut self.too_large) {
            return;
        }
        self.row.clear();
        self.row.resize(self.profile.value_types.len(), 0);
        self.row[column] = value;
        self.profile.push_sample(stack, &self.row);
        self.threads.push(thread as u32);
        self.times.push(time);
    }

    fn sampled(&mut self, thread: usize, p: &SProfile, column: usize) {
        let stacks = &p.samples;
        if stacks.len() != p.weights.len() {
            self.profile.warnings.push(
                0,
                format!(
                    "profile {thread}: {} samples but {} weights; the extra ones are ignored",
                    stacks.len(),
                    p.weights.len()
                ),
            );
        }
        let decimals = self.columns[column].decimals;
        // The previous sample's frame indexes and stacks: a new sample reuses the
        // stacks of the prefix it shares with the previous one.
        let mut prev: Vec<u32> = Vec::new();
        let mut prev_stacks: Vec<StackId> = Vec::new();
        'samples: for (i, (frames, &w)) in stacks.iter().zip(&p.weights).enumerate() {
            let Some(value) = decimals.scale(w) else {
                self.profile.warnings.push(
                    0,
                    format!("profile {thread}, sample {i}: weight {w} is not a finite number"),
                );
                continue;
            };
            if value == 0 {
                continue;
            }
            if value < 0 {
                self.profile.warnings.push(
                    0,
                    format!("profile {thread}, sample {i}: negative weight {w}, skipped"),
                );
                continue;
            }
            let shared = prev.iter().zip(frames).take_while(|(a, b)| a == b).count();
            prev.truncate(shared);
            prev_stacks.truncate(shared);
            for &f in &frames[shared..] {
                let Some(&frame) = self.frames.get(f as usize) else {
                    let what = if f == u32::MAX {
                        "an invalid frame index".to_string()
                    } else {
                        format!("frame {f}")
                    };
                    self.profile.warnings.push(
                        0,
                        format!("profile {thread}, sample {i}: {what} is not in shared.frames, sample skipped"),
                    );
                    prev.clear();
                    prev_stacks.clear();
                    continue 'samples;
                };
                let s = self
                    .profile
                    .stacks
                    .intern(prev_stacks.last().copied(), frame);
                prev.push(f);
                prev_stacks.push(s);
            }
            self.push(thread, column, prev_stacks.last().copied(), value, 0);
        }
    }

    fn evented(&mut self, thread: usize, p: &SProfile, column: usize, nanos: Option<f64>) {
        if nanos.is_none() {
            self.timed = false;
        }
        let decimals = self.columns[column].decimals;
        let to_ns = |v: i64| -> u64 {
            let ns = v as f64 / decimals.factor() * nanos.unwrap_or(0.0);
            if ns.is_finite() && ns > 0.0 {
                ns as u64
            } else {
                0
            }
        };
        let mut open: Vec<(i64, StackId)> = Vec::new();
        let mut last: Option<i64> = None;
        let mut backwards = 0u64;
        for (i, e) in p.events.iter().enumerate() {
            let Some(at) = decimals.scale(e.at) else {
                self.profile
                    .warnings
                    .push(0, format!("profile {thread}, event {i}: bad time {}", e.at));
                continue;
            };
            let from = last.unwrap_or(at);
            if at < from {
                backwards += 1;
            } else {
                if at > from
                    && let Some(&(_, s)) = open.last()
                {
                    self.push(
                        thread,
                        column,
                        Some(s),
                        at.saturating_sub(from),
                        to_ns(from),
                    );
                }
                last = Some(at);
            }
            let f = e.frame.0;
            match e.kind {
                EventKind::Open => {
                    let Some(&frame) = usize::try_from(f).ok().and_then(|f| self.frames.get(f)) else {
                        self.profile.warnings.push(
                            0,
                            format!("profile {thread}, event {i}: no frame {f} in shared.frames; the frame is skipped"),
                        );
                        continue;
                    };
                    let s = self.profile.stacks.intern(open.last().map(|o| o.1), frame);
                    open.push((f, s));
                }
                EventKind::Close => match open.iter().rposition(|o| o.0 == f) {
                    Some(k) if k + 1 == open.len() => {
                        open.pop();
                    }
                    Some(k) => {
                        self.profile.warnings.push(
                            0,
                            format!(
                                "profile {thread}, event {i}: closes frame {f} while {} frames above it are open; closed them too",
                                open.len() - k - 1
                            ),
                        );
                        open.truncate(k);
                    }
                    None => self.profile.warnings.push(
                        0,
                        format!("profile {thread}, event {i}: closes frame {f}, which is not open; ignored"),
                    ),
                },
                EventKind::Other => self.profile.warnings.push(
                    0,
                    format!("profile {thread}, event {i}: unknown event type (expected O or C)"),
                ),
            }
        }
        if backwards > 0 {
            self.profile.warnings.push(
                0,
                format!("profile {thread}: {backwards} events go back in time; they count no time"),
            );
        }
        if let Some(&(_, s)) = open.last() {
            let end = p.end.and_then(|e| decimals.scale(e));
            let from = last.unwrap_or(0);
            self.profile.warnings.push(
                0,
                format!(
                    "profile {thread}: {} frames still open at the end, closed at endValue",
                    open.len()
                ),
            );
            if let Some(end) = end.filter(|&e| e > from) {
                self.push(
                    thread,
                    column,
                    Some(s),
                    end.saturating_sub(from),
                    to_ns(from),
                );
            }
        }
    }
}

/// The value type's kind for a unit.
fn kind_of(unit: &Unit) -> &'static str {
    match unit {
        u if u.nanos().is_some() => "time",
        Unit::Bytes => "memory",
        _ => "weight",
    }
}

#[cfg(test)]
mod tests;
