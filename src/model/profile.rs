//! A loaded profile: frames, stacks and samples, as the loaders return them.

use std::collections::{HashMap, HashSet};

use super::frames::{FrameId, Frames};
use super::stacks::{StackId, StackTable};

/// What a value measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Plain sample counts.
    Samples,
    /// Counts of something other than samples (objects, events).
    Count,
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Seconds,
    Bytes,
    /// A unit the profile named that we do not scale.
    Other(String),
}

impl Unit {
    pub fn name(&self) -> &str {
        match self {
            Unit::Samples => "samples",
            Unit::Count => "count",
            Unit::Nanoseconds => "nanoseconds",
            Unit::Microseconds => "microseconds",
            Unit::Milliseconds => "milliseconds",
            Unit::Seconds => "seconds",
            Unit::Bytes => "bytes",
            Unit::Other(s) => s,
        }
    }

    /// The unit a profile names ("nanoseconds", "ms", "bytes", "count", ...).
    pub fn from_name(name: &str) -> Unit {
        match name.to_ascii_lowercase().as_str() {
            "samples" | "sample" => Unit::Samples,
            "count" | "counts" | "objects" | "events" | "none" | "" => Unit::Count,
            "nanoseconds" | "nanosecond" | "ns" => Unit::Nanoseconds,
            "microseconds" | "microsecond" | "us" => Unit::Microseconds,
            "milliseconds" | "millisecond" | "ms" => Unit::Milliseconds,
            "seconds" | "second" | "s" => Unit::Seconds,
            "bytes" | "byte" | "b" => Unit::Bytes,
            _ => Unit::Other(name.to_string()),
        }
    }

    /// Nanoseconds per unit, for time units.
    pub fn nanos(&self) -> Option<f64> {
        match self {
            Unit::Nanoseconds => Some(1.0),
            Unit::Microseconds => Some(1e3),
            Unit::Milliseconds => Some(1e6),
            Unit::Seconds => Some(1e9),
            _ => None,
        }
    }
}

/// One kind of weight a sample carries (pprof has several; folded has one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueType {
    /// What is measured, e.g. "samples", "cpu", "alloc_space", "before".
    pub kind: String,
    pub unit: Unit,
    /// Values are stored as integers scaled by 10^decimals (fractional folded counts).
    pub decimals: u8,
}

impl ValueType {
    pub fn samples() -> Self {
        ValueType {
            kind: "samples".into(),
            unit: Unit::Samples,
            decimals: 0,
        }
    }

    pub fn new(kind: &str, unit: Unit) -> Self {
        ValueType {
            kind: kind.to_string(),
            unit,
            decimals: 0,
        }
    }

    /// Whether the value counts samples: folded counts, perf's `samples`, and
    /// pprof's `samples/count` (a count whose kind is "samples"). What noise-level
    /// and "+N samples" are judged by.
    pub fn counts_samples(&self) -> bool {
        self.unit == Unit::Samples || (self.unit == Unit::Count && self.kind == "samples")
    }

    /// The scale that turns a stored integer into the real value.
    pub fn scale(&self) -> f64 {
        10f64.powi(i32::from(self.decimals))
    }
}

/// The samples as columns. Sample `i` has stack `stack[i]` (or no stack), values
/// `values[i * n .. (i + 1) * n]` for `n` value types, and optional time and thread.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    /// `StackId.0`, or `u32::MAX` for a sample with an empty stack.
    pub stack: Vec<u32>,
    pub values: Vec<i64>,
    /// Nanoseconds since the epoch (or since the profile's start when unknown).
    pub time: Option<Vec<u64>>,
    /// Index into `Profile::threads`.
    pub thread: Option<Vec<u32>>,
    /// The CPU a sample was taken on (perf).
    pub cpu: Option<Vec<u32>>,
    /// Index into `Profile::label_sets` (pprof labels).
    pub labels: Option<Vec<u32>>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.stack.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// Keeps the samples whose `keep` entry is true, in every column; `stride` is
    /// the number of value types.
    pub fn retain(&mut self, keep: &[bool], stride: usize) {
        fn kept<T: Copy>(column: &[T], keep: &[bool]) -> Vec<T> {
            column
                .iter()
                .zip(keep)
                .filter(|&(_, &k)| k)
                .map(|(&x, _)| x)
                .collect()
        }
        self.values = self
            .values
            .chunks(stride.max(1))
            .zip(keep)
            .filter(|&(_, &k)| k)
            .flat_map(|(v, _)| v.iter().copied())
            .collect();
        self.stack = kept(&self.stack, keep);
        self.time = self.time.as_deref().map(|c| kept(c, keep));
        self.thread = self.thread.as_deref().map(|c| kept(c, keep));
        self.cpu = self.cpu.as_deref().map(|c| kept(c, keep));
        self.labels = self.labels.as_deref().map(|c| kept(c, keep));
    }

    pub fn stack_of(&self, i: usize) -> Option<StackId> {
        let s = self.stack[i];
        (s != u32::MAX).then_some(StackId(s))
    }
}

/// A problem inside an otherwise readable profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// 1-based line number where the input is line-oriented, else 0.
    pub line: u64,
    pub message: String,
}

/// Counted warnings; only the first few are kept in full.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Warnings {
    pub count: u64,
    pub first: Vec<Warning>,
}

impl Warnings {
    pub const KEPT: usize = 20;

    pub fn push(&mut self, line: u64, message: impl Into<String>) {
        self.count += 1;
        if self.first.len() < Self::KEPT {
            self.first.push(Warning {
                line,
                message: message.into(),
            });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// "3 bad lines skipped (lines 4, 9, 12)".
    pub fn summary(&self) -> String {
        if self.count == 0 {
            return String::new();
        }
        let lines: Vec<String> = self
            .first
            .iter()
            .filter(|w| w.line > 0)
            .take(5)
            .map(|w| w.line.to_string())
            .collect();
        let noun = if self.count == 1 {
            "warning"
        } else {
            "warnings"
        };
        if lines.is_empty() {
            format!("{} {noun}", self.count)
        } else {
            let more = if self.count as usize > lines.len() {
                ", …"
            } else {
                ""
            };
            format!("{} {noun} (line {}{more})", self.count, lines.join(", "))
        }
    }
}

/// A loaded profile.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    pub frames: Frames,
    pub stacks: StackTable,
    pub samples: Samples,
    pub value_types: Vec<ValueType>,
    /// The value type shown unless the user picks another.
    pub default_value: usize,
    /// The format's name as detected, e.g. "folded".
    pub format: String,
    /// Facts about the input worth showing ("differential folded: two counts per line").
    pub notes: Vec<String>,
    pub warnings: Warnings,
    /// Threads (or processes, or sub-profiles) that `Samples::thread` indexes.
    pub threads: Vec<ThreadInfo>,
    /// Distinct label sets (key, value) that `Samples::labels` indexes.
    pub label_sets: Vec<Vec<(String, String)>>,
    /// Where a frame came from, for frames whose format says so.
    pub frame_meta: HashMap<FrameId, FrameMeta>,
    /// (caller, callee) pairs the input gave as one location's inlined lines
    /// (pprof), so an export can put them back into one location and
    /// `go tool pprof` still marks the callee `(inline)`.
    pub inline_calls: HashSet<(FrameId, FrameId)>,
    pub meta: ProfileMeta,
}

/// A thread, process or sub-profile that samples belong to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadInfo {
    /// A display name: the comm, the thread name, or a sub-profile's name.
    pub name: String,
    pub pid: Option<u64>,
    pub tid: Option<u64>,
}

/// What kind of code a frame is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FrameKind {
    #[default]
    Normal,
    Kernel,
    Inlined,
    Jit,
}

/// A frame's source location and kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameMeta {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub kind: FrameKind,
    /// The input's system (often mangled) name where it gave one apart from
    /// the display name: pprof's `Function.system_name`, written back as is.
    pub system_name: Option<String>,
    /// The binary or library the code is in, as the format names it (perf's
    /// DSO path, a pprof mapping's file): what says a debug build from a release one.
    pub object: Option<String>,
}

/// Facts about the whole profile, where the format carries them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProfileMeta {
    /// How long the profile ran.
    pub duration_ns: Option<u64>,
    /// When it started, in nanoseconds since the Unix epoch.
    pub start_unix_ns: Option<u64>,
    /// Add to a sample's `time` to get nanoseconds since the Unix epoch, when the
    /// sample clock is not wall-clock time but the offset is known (perf `-F +tod`).
    pub time_to_unix_ns: Option<i64>,
    /// The wall-clock times were printed in the recording host's local time
    /// with no zone (perf `tod`) and read as if UTC: compare them with other
    /// local times as printed, not with UTC.
    pub wall_is_local: bool,
    /// `time_to_unix_ns` is only good to a second or two (perf's `captured
    /// on`): a better anchor from elsewhere (a capture bundle) wins.
    pub wall_is_rough: bool,
    /// The sampling period and what it counts (pprof `period`, perf's period).
    pub period: Option<(i64, ValueType)>,
    /// Anything else worth showing in `ember info` (key, value).
    pub extra: Vec<(String, String)>,
    /// The input was cut short and this is what could be read of it (a pprof
    /// salvaged from a truncated protobuf): why. A live reload does not replace
    /// a good profile with such a one.
    pub incomplete: Option<String>,
    /// Set when the profile is a comparison: which value columns hold the
    /// before and after sides (see [`super::diff`]).
    pub diff: Option<Box<DiffMeta>>,
}

impl Profile {
    pub fn new(format: &str, value_types: Vec<ValueType>) -> Self {
        Profile {
            value_types,
            format: format.to_string(),
            ..Profile::default()
        }
    }

    /// A profile like this one (frames, value types, threads, metadata, notes)
    /// with another stack table and samples: what transforms and inversion return.
    pub fn derive(&self, stacks: StackTable, samples: Samples) -> Profile {
        Profile {
            frames: self.frames.clone(),
            stacks,
            samples,
            value_types: self.value_types.clone(),
            default_value: self.default_value,
            format: self.format.clone(),
            notes: self.notes.clone(),
            warnings: self.warnings.clone(),
            threads: self.threads.clone(),
            label_sets: self.label_sets.clone(),
            frame_meta: self.frame_meta.clone(),
            inline_calls: self.inline_calls.clone(),
            meta: self.meta.clone(),
        }
    }

    /// Sum of value `v` over all samples.
    pub fn total(&self, v: usize) -> i64 {
        let n = self.value_types.len();
        self.samples.values.iter().skip(v).step_by(n.max(1)).sum()
    }

    /// Interns a root-to-leaf path of names and returns its stack.
    pub fn intern_path<'a>(
        &mut self,
        names: impl IntoIterator<Item = &'a [u8]>,
    ) -> Option<StackId> {
        let mut cur = None;
        for name in names {
            let f = self.frames.intern(name);
            cur = Some(self.stacks.intern(cur, f));
        }
        cur
    }

    /// Adds one sample with values for every value type.
    pub fn push_sample(&mut self, stack: Option<StackId>, values: &[i64]) {
        debug_assert_eq!(values.len(), self.value_types.len());
        self.samples.stack.push(stack.map_or(u32::MAX, |s| s.0));
        self.samples.values.extend_from_slice(values);
    }

    pub fn frame_path(&self, s: StackId) -> Vec<FrameId> {
        self.stacks.path(s)
    }

    /// Approximate heap bytes held by the profile.
    pub fn heap_bytes(&self) -> usize {
        self.frames.heap_bytes()
            + self.stacks.heap_bytes()
            + self.samples.stack.capacity() * 4
            + self.samples.values.capacity() * 8
            + self.samples.time.as_ref().map_or(0, |t| t.capacity() * 8)
            + self.samples.thread.as_ref().map_or(0, |t| t.capacity() * 4)
            + self.samples.cpu.as_ref().map_or(0, |t| t.capacity() * 4)
            + self.samples.labels.as_ref().map_or(0, |t| t.capacity() * 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_count_all_but_keep_few() {
        let mut w = Warnings::default();
        for i in 0..30 {
            w.push(i + 1, "bad");
        }
        assert_eq!(w.count, 30);
        assert_eq!(w.first.len(), Warnings::KEPT);
        assert_eq!(w.summary(), "30 warnings (line 1, 2, 3, 4, 5, …)");
    }

    #[test]
    fn total_sums_one_value_type() {
        let mut p = Profile::new("test", vec![ValueType::samples(), ValueType::samples()]);
        let s = p.intern_path([&b"a"[..], b"b"]);
        p.push_sample(s, &[1, 10]);
        p.push_sample(s, &[2, 20]);
        assert_eq!(p.total(0), 3);
        assert_eq!(p.total(1), 30);
    }
}

/// Which value columns of a diff profile hold each side.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffMeta {
    /// `[before, after]`.
    pub sides: [SideInfo; 2],
    /// Things the user must know to read the comparison (different sampling rates,
    /// value types paired by unit only).
    pub cautions: Vec<String>,
}

/// One side of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct SideInfo {
    /// The input's short name ("before.folded").
    pub name: String,
    /// The input's format ("pprof").
    pub format: String,
    /// The side's value type as its profile named it ("cpu", "samples").
    pub kind: String,
    /// The column of the merged profile that holds the side's values.
    pub value: usize,
    /// The column holding the side's sample counts (the value column itself when
    /// the values count samples).
    pub count: usize,
    /// Whether `count` is each sample row counted once, because the profile has
    /// no sample-count value type (the test is then approximate).
    pub rows_counted: bool,
    pub duration_ns: Option<u64>,
    /// The sampling period and what it counts.
    pub period: Option<(i64, ValueType)>,
}

impl DiffMeta {
    /// Meta for a profile that already holds both sides as sample counts in
    /// columns 0 and 1 (the two-count folded form).
    pub fn two_count(format: &str) -> DiffMeta {
        let side = |value: usize, kind: &str| SideInfo {
            name: kind.to_string(),
            format: format.to_string(),
            kind: kind.to_string(),
            value,
            count: value,
            rows_counted: false,
            duration_ns: None,
            period: None,
        };
        DiffMeta {
            sides: [side(0, "before"), side(1, "after")],
            cautions: Vec::new(),
        }
    }

    /// The side (0 before, 1 after) whose values live in column `value`.
    pub fn side_of(&self, value: usize) -> Option<usize> {
        self.sides.iter().position(|s| s.value == value)
    }
}
