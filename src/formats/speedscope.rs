//! speedscope's JSON file format (`https://www.speedscope.app/file-format-schema.json`).
//!
//! `shared.frames` names the frames once; each of `profiles[]` is either *sampled*
//! (`samples`: stacks of frame indexes, root first, with `weights`) or *evented*
//! (`events`: open/close of a frame at a value `at`). Every profile becomes a thread
//! of one ember profile; weights keep the unit the file names. An evented profile
//! becomes one sample per interval between events (weight = the interval, time = its
//! start when the unit is a time).
//!
//! The [`json`] module holds what the JSON readers (speedscope, Chrome, Gecko) share:
//! reading the input, mapping serde errors, the probe's head scanner, and numbers.

use std::io::Read;

use serde::Deserialize;

use self::json::{Decimals, Index};
use super::ParseError;
use crate::input::Progress;
use crate::model::{FrameId, FrameMeta, Profile, StackId, ThreadInfo, Unit, ValueType};

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
    let bytes = json::read_all(reader, progress)?;
    let file: File = json::from_slice(&bytes)?;
    drop(bytes);
    if progress.is_cancelled() {
        return Err(ParseError::Cancelled);
    }
    Builder::new(&file).build(&file, progress)
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
    fn new(file: &File) -> Self {
        let mut profile = Profile::new("speedscope", Vec::new());
        let frames = file
            .shared
            .frames
            .iter()
            .map(|f| {
                let name = f.name.as_deref().filter(|n| !n.is_empty());
                let id = profile
                    .frames
                    .intern(name.unwrap_or("(unnamed)").as_bytes());
                let file = f.file.as_deref().filter(|s| !s.is_empty());
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

/// What the JSON readers share.
pub(crate) mod json {
    use std::io::{ErrorKind, Read};

    use serde::Deserialize;
    use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Visitor};

    use crate::formats::ParseError;
    use crate::input::Progress;

    const CHUNK: usize = 1 << 20;

    /// Reads all of `reader`, checking for cancellation between chunks.
    pub fn read_all(mut reader: impl Read, progress: &Progress) -> Result<Vec<u8>, ParseError> {
        // The file's size, when known, spares the doublings of a growing buffer.
        let hint = usize::try_from(progress.total()).unwrap_or(0).min(1 << 32);
        let mut out = Vec::with_capacity(hint.saturating_add(CHUNK));
        loop {
            if progress.is_cancelled() {
                return Err(ParseError::Cancelled);
            }
            let len = out.len();
            out.resize(len + CHUNK, 0);
            match reader.read(&mut out[len..]) {
                Ok(0) => {
                    out.truncate(len);
                    return Ok(out);
                }
                Ok(n) => out.truncate(len + n),
                Err(e) if e.kind() == ErrorKind::Interrupted => out.truncate(len),
                Err(e) => return Err(ParseError::Io(e)),
            }
        }
    }

    /// Adds `v` to `total` unless that overflows, which is counted in `too_large`.
    pub fn add_to_total(total: &mut i64, v: i64, too_large: &mut u64) -> bool {
        match total.checked_add(v) {
            Some(t) => {
                *total = t;
                true
            }
            None => {
                *too_large += 1;
                false
            }
        }
    }

    pub fn warn_too_large(profile: &mut crate::model::Profile, n: u64) {
        if n > 0 {
            profile.warnings.push(
                0,
                format!("{n} samples skipped: their weights would overflow the total"),
            );
        }
    }

    /// Parses `bytes` as `T`; errors carry serde's line and column.
    pub fn from_slice<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, ParseError> {
        serde_json::from_slice(bytes).map_err(error)
    }

    /// A serde_json error as a [`ParseError`] with its line, column and a plain reason.
    pub fn error(e: serde_json::Error) -> ParseError {
        use serde_json::error::Category;
        let what = e.to_string();
        // serde's message ends in " at line L column C": keep the reason only.
        let reason = what
            .rsplit_once(" at line ")
            .map_or(what.as_str(), |(r, _)| r);
        let message = match e.classify() {
            _ if reason.contains("recursion limit") => format!(
                "the JSON nests deeper than 128 levels (column {}); ember does not read it",
                e.column()
            ),
            Category::Eof if e.line() <= 1 && e.column() == 0 => "no JSON in the input".to_string(),
            Category::Eof => format!(
                "the JSON ends early at column {} (truncated file?): {reason}",
                e.column()
            ),
            Category::Syntax => format!("malformed JSON at column {}: {reason}", e.column()),
            Category::Data => format!("unexpected JSON at column {}: {reason}", e.column()),
            Category::Io => format!("read error: {reason}"),
        };
        ParseError::Invalid {
            line: e.line() as u64,
            message,
        }
    }

    /// An index or integer id from a file: any JSON number; a non-integer, a
    /// negative or an out-of-range value becomes -1, which no table holds.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
    pub struct Index(pub i64);

    impl Index {
        pub fn as_usize(self) -> Option<usize> {
            usize::try_from(self.0).ok()
        }
        pub fn as_u32(self) -> Option<u32> {
            u32::try_from(self.0).ok()
        }
    }

    struct IndexVisitor;

    impl Visitor<'_> for IndexVisitor {
        type Value = Index;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a number")
        }
        fn visit_i64<E>(self, v: i64) -> Result<Index, E> {
            Ok(Index(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Index, E> {
            Ok(Index(i64::try_from(v).unwrap_or(-1)))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Index, E> {
            let ok = v.fract() == 0.0 && v.abs() < 9e15;
            Ok(Index(if ok { v as i64 } else { -1 }))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Index, E> {
            // Some producers quote their ids ("tid": "7695").
            Ok(Index(v.trim().parse::<i64>().unwrap_or(-1)))
        }
        fn visit_unit<E>(self) -> Result<Index, E> {
            Ok(Index(-1))
        }
    }

    impl<'de> Deserialize<'de> for Index {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(IndexVisitor)
        }
    }

    /// A number that some producers write as a string ("ts": "11550183666").
    #[derive(Clone, Copy, Debug, PartialEq, Default)]
    pub struct Num(pub f64);

    struct NumVisitor;

    impl Visitor<'_> for NumVisitor {
        type Value = Num;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a number")
        }
        fn visit_i64<E>(self, v: i64) -> Result<Num, E> {
            Ok(Num(v as f64))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Num, E> {
            Ok(Num(v as f64))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Num, E> {
            Ok(Num(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
            Ok(Num(v.trim().parse::<f64>().unwrap_or(f64::NAN)))
        }
        fn visit_unit<E>(self) -> Result<Num, E> {
            Ok(Num(f64::NAN))
        }
    }

    impl<'de> Deserialize<'de> for Num {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(NumVisitor)
        }
    }

    /// An array of arrays of indexes, stored flat (one allocation, not one per
    /// stack) as u32: an index that is not one (negative, fractional, too large)
    /// is stored as `u32::MAX`, which no table holds.
    #[derive(Clone, Debug, Default)]
    pub struct FlatStacks {
        items: Vec<u32>,
        ends: Vec<usize>,
    }

    impl FlatStacks {
        pub fn len(&self) -> usize {
            self.ends.len()
        }
        pub fn get(&self, i: usize) -> &[u32] {
            let start = if i == 0 { 0 } else { self.ends[i - 1] };
            &self.items[start..self.ends[i]]
        }
        pub fn iter(&self) -> impl Iterator<Item = &[u32]> + '_ {
            (0..self.len()).map(|i| self.get(i))
        }
    }

    struct StackSeed<'a>(&'a mut Vec<u32>);

    impl<'de> DeserializeSeed<'de> for StackSeed<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_seq(self)
        }
    }

    impl<'de> Visitor<'de> for StackSeed<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array of frame indexes")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while let Some(i) = seq.next_element::<Index>()? {
                self.0.push(i.as_u32().unwrap_or(u32::MAX));
            }
            Ok(())
        }
    }

    struct FlatVisitor;

    impl<'de> Visitor<'de> for FlatVisitor {
        type Value = FlatStacks;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array of stacks")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FlatStacks, A::Error> {
            let mut out = FlatStacks::default();
            while seq.next_element_seed(StackSeed(&mut out.items))?.is_some() {
                out.ends.push(out.items.len());
            }
            Ok(out)
        }
    }

    impl<'de> Deserialize<'de> for FlatStacks {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_seq(FlatVisitor)
        }
    }

    /// Most decimals kept for fractional weights (nanoseconds of a millisecond).
    pub const MAX_DECIMALS: u8 = 6;

    /// How many decimals a set of floating values needs to be stored exactly as
    /// integers (up to [`MAX_DECIMALS`]; values too large for that keep fewer).
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Decimals {
        need: u8,
        max_abs: f64,
    }

    impl Decimals {
        pub fn fixed(need: u8) -> Self {
            Decimals { need, max_abs: 0.0 }
        }

        /// At most `max` decimals, still fewer if the largest value needs it.
        pub fn at_most(self, max: u8) -> Self {
            Decimals {
                need: self.need.min(max),
                ..self
            }
        }

        /// Notes that `v` must be stored, without asking for more decimals.
        pub fn observe_magnitude(&mut self, v: f64) {
            if v.is_finite() {
                self.max_abs = self.max_abs.max(v.abs());
            }
        }

        pub fn observe(&mut self, v: f64) {
            if !v.is_finite() {
                return;
            }
            self.max_abs = self.max_abs.max(v.abs());
            while self.need < MAX_DECIMALS {
                let x = v * 10f64.powi(i32::from(self.need));
                let tol = (x.abs() * 1e-12).max(1e-6);
                if (x - x.round()).abs() <= tol {
                    break;
                }
                self.need += 1;
            }
        }

        /// The decimals to use: what the values need, fewer if the largest would
        /// not fit in 2^53 (where f64 stops being exact).
        pub fn get(&self) -> u8 {
            let mut d = self.need;
            while d > 0 && self.max_abs * 10f64.powi(i32::from(d)) >= 9.0e15 {
                d -= 1;
            }
            d
        }

        pub fn factor(&self) -> f64 {
            10f64.powi(i32::from(self.get()))
        }

        /// `v` as a stored integer, `None` if it is not finite or too large.
        pub fn scale(&self, v: f64) -> Option<i64> {
            let x = (v * self.factor()).round();
            (x.is_finite() && x.abs() < 9.2e18).then_some(x as i64)
        }
    }

    /// What a cheap scan of the first bytes saw: the first non-blank byte and the
    /// object keys at the first few nesting levels.
    #[derive(Debug, Default)]
    pub struct Scan {
        pub first: u8,
        /// (depth, key): depth 1 = a key of the top-level object.
        pub keys: Vec<(u8, String)>,
        /// The head ended before the top-level value did.
        pub truncated: bool,
    }

    impl Scan {
        pub fn has_key(&self, depth: u8, key: &str) -> bool {
            self.keys.iter().any(|(d, k)| *d == depth && k == key)
        }
    }

    const MAX_KEYS: usize = 512;
    const MAX_KEY_LEN: usize = 64;
    const MAX_KEY_DEPTH: usize = 3;

    /// Scans `head` once, tracking strings and nesting: no JSON is built.
    pub fn scan(head: &[u8]) -> Scan {
        let mut out = Scan::default();
        let start = head
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(head.len());
        let Some(&first) = head.get(start) else {
            return out;
        };
        out.first = first;
        if first != b'{' && first != b'[' {
            return out;
        }
        // One bit per open container up to depth 64: set for objects.
        let mut objects: u64 = 0;
        let mut depth: usize = 0;
        let mut expect_key = false;
        let mut i = start;
        while i < head.len() {
            let b = head[i];
            match b {
                b'"' => {
                    let s = i + 1;
                    let mut j = s;
                    let mut closed = false;
                    while j < head.len() {
                        match head[j] {
                            b'\\' => j += 2,
                            b'"' => {
                                closed = true;
                                break;
                            }
                            _ => j += 1,
                        }
                    }
                    if !closed {
                        out.truncated = true;
                        return out;
                    }
                    let in_object = depth > 0 && depth <= 64 && objects >> (depth - 1) & 1 == 1;
                    if expect_key
                        && in_object
                        && depth <= MAX_KEY_DEPTH
                        && j - s <= MAX_KEY_LEN
                        && out.keys.len() < MAX_KEYS
                    {
                        let key = String::from_utf8_lossy(&head[s..j]).into_owned();
                        out.keys.push((depth as u8, key));
                    }
                    expect_key = false;
                    i = j + 1;
                    continue;
                }
                b'{' | b'[' => {
                    depth += 1;
                    if depth <= 64 {
                        if b == b'{' {
                            objects |= 1 << (depth - 1);
                        } else {
                            objects &= !(1 << (depth - 1));
                        }
                    }
                    expect_key = b == b'{';
                }
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    expect_key = false;
                    if depth == 0 {
                        return out;
                    }
                }
                b',' => {
                    expect_key = depth > 0 && depth <= 64 && objects >> (depth - 1) & 1 == 1;
                }
                _ => {}
            }
            i += 1;
        }
        out.truncated = true;
        out
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn scan_sees_keys_by_depth_and_skips_strings() {
            let s = scan(br#" {"a": {"b": "x\"}", "c": [ {"d": 1} ]}, "e": 2}"#);
            assert_eq!(s.first, b'{');
            assert!(!s.truncated);
            assert!(s.has_key(1, "a") && s.has_key(2, "b") && s.has_key(2, "c"));
            // "d" is at depth 4 (object, object, array, object): deeper than kept.
            assert!(!s.keys.iter().any(|(_, k)| k == "d") && s.has_key(1, "e"));
            assert!(!s.has_key(1, "x\\\"}"));
            assert!(scan(br#"{"a": [1, 2"#).truncated);
        }

        #[test]
        fn decimals_fit_the_values() {
            let mut d = Decimals::default();
            [1.0, 2.0, 3.0].iter().for_each(|&v| d.observe(v));
            assert_eq!(d.get(), 0);
            d.observe(0.1 + 0.2);
            assert_eq!(d.get(), 1);
            assert_eq!(d.scale(0.30000000000000004), Some(3));
            d.observe(1234567.5);
            assert_eq!(d.get(), 1);
            let mut d = Decimals::default();
            d.observe(0.9106829999946058);
            assert_eq!(d.get(), MAX_DECIMALS);
        }

        #[test]
        fn errors_name_line_and_column() {
            let e = from_slice::<serde_json::Value>(b"{\n \"a\": [1,\n").err();
            match e {
                Some(ParseError::Invalid { line, message }) => {
                    assert_eq!(line, 3);
                    assert!(message.contains("truncated"), "{message}");
                }
                other => panic!("{other:?}"),
            }
        }
    }
}

#[cfg(test)]
mod tests;
