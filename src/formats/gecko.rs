//! Firefox Profiler / Gecko profile JSON.
//!
//! Three shapes are read:
//!
//! * the raw Gecko format (`about:profiling`, `MOZ_PROFILER_SHUTDOWN`): `meta`,
//!   `threads[]` with `samples`, `stackTable` and `frameTable` as `{schema, data}`
//!   tables and a `stringTable`, and child processes under `processes[]` (each a
//!   whole Gecko profile, in old versions serialized as a JSON string);
//! * the Firefox DevTools export, which wraps a Gecko profile as `profile`;
//! * the Firefox Profiler's processed format (`meta.preprocessedProfileVersion`):
//!   column tables (`samples.stack`, `stackTable.prefix`, `frameTable.func`,
//!   `funcTable.name`) and a `stringArray`, per thread or under `shared`.
//!
//! Every thread of every process becomes a thread of one ember profile. A frame
//! `name (file:line:col)` (JavaScript) is named `name` with its file and line kept
//! as frame metadata; other frames keep their whole label. A sample weighs the time
//! to the next sample of its thread (speedscope's choice; the last weighs 0); a
//! second value type counts samples.

use std::collections::HashMap;
use std::io::Read;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::ParseError;
use super::json::{self, Decimals, Index};
use crate::input::Progress;
use crate::model::{FrameId, FrameKind, FrameMeta, Profile, StackId, ThreadInfo, Unit, ValueType};

/// Whether `head` is a Gecko profile: `meta` with `threads`/`processes`/`libs` at
/// the top, or a DevTools export with the profile under `profile`.
pub fn probe(head: &[u8], complete: bool) -> Option<bool> {
    let scan = json::scan(head);
    if scan.first != b'{'
        || ["$schema", "traceEvents", "nodes", "head"]
            .iter()
            .any(|k| scan.has_key(1, k))
    {
        return Some(false);
    }
    let gecko_keys = ["threads", "processes", "libs"];
    let tables = ["stackTable", "frameTable", "stringTable", "stringArray"];
    let has_tables = tables.iter().any(|t| {
        let quoted = format!("\"{t}\"");
        memchr::memmem::find(head, quoted.as_bytes()).is_some()
    });
    if scan.has_key(1, "meta") && gecko_keys.iter().any(|k| scan.has_key(1, k)) {
        return Some(true);
    }
    // Gecko's `meta` object, seen before the threads in a cut head.
    let meta_keys = [
        "interval",
        "stackwalk",
        "processType",
        "product",
        "startTime",
    ];
    let gecko_meta = meta_keys.iter().filter(|k| scan.has_key(2, k)).count() >= 2;
    if scan.has_key(1, "meta") && gecko_meta && !scan.has_key(1, "profiles") {
        return Some(true);
    }
    // The DevTools export: the profile under `profile`, next to the recording's keys.
    let devtools = [
        "systemHost",
        "fileType",
        "duration",
        "configuration",
        "label",
    ];
    if scan.has_key(1, "profile")
        && ["meta", "threads", "libs"]
            .iter()
            .any(|k| scan.has_key(2, k))
        && (has_tables || devtools.iter().any(|k| scan.has_key(1, k)))
    {
        return Some(true);
    }
    if scan.has_key(1, "threads") && has_tables {
        return Some(true);
    }
    if !complete && scan.truncated && (scan.has_key(1, "meta") || scan.has_key(1, "profile")) {
        return None;
    }
    Some(false)
}

/// Reads a whole Gecko profile.
pub fn parse(reader: impl Read, progress: &Progress) -> Result<Profile, ParseError> {
    let bytes = json::read_all(reader, progress)?;
    let root: Root = json::from_slice(&bytes)?;
    drop(bytes);
    if progress.is_cancelled() {
        return Err(ParseError::Cancelled);
    }
    let root = match root.profile {
        Some(inner) if root.threads.is_empty() => *inner,
        _ => root,
    };
    if root.meta.is_none() && root.threads.is_empty() {
        return Err(ParseError::Invalid {
            line: 0,
            message: "not a Gecko profile: no `meta` and no `threads`".into(),
        });
    }
    let mut b = Builder::new();
    let start = root.meta.as_ref().and_then(|m| m.start_time);
    b.profile.meta.start_unix_ns = start.filter(|s| *s > 0.0).map(ms_to_ns);
    if let Some(meta) = &root.meta {
        if meta.preprocessed.is_some() {
            b.profile
                .notes
                .push("Firefox Profiler processed format".into());
        }
        if let Some(ms) = meta
            .interval
            .and_then(|i| b.dec.scale(i))
            .filter(|&i| i > 0)
        {
            b.profile.meta.period = Some((ms, b.profile.value_types[0].clone()));
        }
        if let Some(product) = &meta.product {
            b.profile
                .meta
                .extra
                .push(("product".into(), product.clone()));
        }
        if let Some(v) = meta.preprocessed.or(meta.version) {
            b.profile
                .meta
                .extra
                .push(("gecko format version".into(), v.to_string()));
        }
    }
    // Processes nest: walk them with a list, not recursion.
    let mut todo: Vec<(Root, Option<f64>)> = vec![(root, None)];
    let mut processes = 0usize;
    while let Some((mut r, parent_start)) = todo.pop() {
        if progress.is_cancelled() {
            return Err(ParseError::Cancelled);
        }
        processes += 1;
        let start = r.meta.as_ref().and_then(|m| m.start_time).or(parent_start);
        let shared = r.shared.take().map(|s| s.string_array).unwrap_or_default();
        for (i, t) in r.threads.drain(..).enumerate() {
            match t.0 {
                Some(t) => b.thread(t, start.unwrap_or(0.0), &shared),
                None => b
                    .profile
                    .warnings
                    .push(0, format!("thread {i}: unreadable, skipped")),
            }
        }
        for p in r.processes.drain(..).rev() {
            match p.0 {
                Some(p) => todo.push((p, start)),
                None => b
                    .profile
                    .warnings
                    .push(0, "a child process profile is unreadable, skipped"),
            }
        }
    }
    Ok(b.finish(processes))
}

/// A Gecko profile (or a DevTools export wrapping one as `profile`).
#[derive(Deserialize, Default)]
struct Root {
    #[serde(default)]
    meta: Option<Meta>,
    #[serde(default)]
    threads: Vec<MaybeString<Thread>>,
    #[serde(default)]
    processes: Vec<MaybeString<Root>>,
    #[serde(default)]
    profile: Option<Box<Root>>,
    #[serde(default)]
    shared: Option<Shared>,
}

#[derive(Deserialize, Default)]
struct Meta {
    #[serde(default, rename = "startTime")]
    start_time: Option<f64>,
    #[serde(default, rename = "preprocessedProfileVersion")]
    preprocessed: Option<f64>,
    /// The sampling interval, ms.
    #[serde(default)]
    interval: Option<f64>,
    #[serde(default)]
    product: Option<String>,
    #[serde(default)]
    version: Option<f64>,
}

#[derive(Deserialize, Default)]
struct Shared {
    #[serde(default, rename = "stringArray")]
    string_array: Vec<String>,
}

#[derive(Deserialize, Default)]
struct Thread {
    #[serde(default)]
    name: Option<String>,
    #[serde(default, rename = "processName")]
    process_name: Option<String>,
    #[serde(default)]
    pid: Option<Index>,
    #[serde(default)]
    tid: Option<Index>,
    #[serde(default)]
    samples: Table,
    #[serde(default, rename = "stackTable")]
    stack_table: Table,
    #[serde(default, rename = "frameTable")]
    frame_table: Table,
    #[serde(default, rename = "funcTable")]
    func_table: Table,
    /// Raw format: the thread's strings (older processed profiles too).
    #[serde(default, rename = "stringTable")]
    string_table: Option<MaybeStrings>,
    #[serde(default, rename = "stringArray")]
    string_array: Option<Vec<String>>,
}

/// A Gecko table: `{schema, data}` rows in the raw format, named columns in the
/// processed one. Only the columns ember reads are kept.
#[derive(Deserialize, Default)]
struct Table {
    #[serde(default)]
    schema: Option<HashMap<String, Index>>,
    #[serde(default)]
    data: Rows,
    #[serde(default)]
    stack: Option<Vec<Cell>>,
    #[serde(default)]
    time: Option<Vec<Cell>>,
    #[serde(default, rename = "timeDeltas")]
    time_deltas: Option<Vec<Cell>>,
    #[serde(default)]
    weight: Option<Vec<Cell>>,
    #[serde(default, rename = "weightType")]
    weight_type: Option<String>,
    #[serde(default)]
    prefix: Option<Vec<Cell>>,
    #[serde(default)]
    frame: Option<Vec<Cell>>,
    #[serde(default)]
    func: Option<Vec<Cell>>,
    #[serde(default)]
    line: Option<Vec<Cell>>,
    #[serde(default)]
    name: Option<Vec<Cell>>,
    #[serde(default, rename = "fileName")]
    file_name: Option<Vec<Cell>>,
    #[serde(default, rename = "lineNumber")]
    line_number: Option<Vec<Cell>>,
}

impl Table {
    /// Column `name` of the raw format's schema.
    fn col(&self, name: &str) -> Option<usize> {
        self.schema.as_ref()?.get(name)?.as_usize()
    }

    /// Cell `col` of row `row` (raw format).
    fn get(&self, row: usize, col: Option<usize>) -> Option<f64> {
        self.data.get(row).get(col?)?.0
    }
}

/// A table cell: a number, or nothing (null, a string, an object...).
#[derive(Clone, Copy, Debug, Default)]
struct Cell(Option<f64>);

impl Cell {
    fn index(self) -> Option<usize> {
        let v = self.0?;
        (v >= 0.0 && v.fract() == 0.0 && v < 4e9).then_some(v as usize)
    }
}

fn col_index(col: Option<&Vec<Cell>>, i: usize) -> Option<usize> {
    col?.get(i)?.index()
}

fn col_num(col: Option<&Vec<Cell>>, i: usize) -> Option<f64> {
    col?.get(i)?.0
}

struct CellVisitor;

impl<'de> Visitor<'de> for CellVisitor {
    type Value = Cell;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a table cell")
    }
    fn visit_i64<E>(self, v: i64) -> Result<Cell, E> {
        Ok(Cell(Some(v as f64)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Cell, E> {
        Ok(Cell(Some(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Cell, E> {
        Ok(Cell(Some(v)))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Cell, E> {
        Ok(Cell(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Cell, E> {
        Ok(Cell(None))
    }
    fn visit_unit<E>(self) -> Result<Cell, E> {
        Ok(Cell(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cell, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Cell(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Cell, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Cell(None))
    }
}

impl<'de> Deserialize<'de> for Cell {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CellVisitor)
    }
}

/// `data` rows, stored flat: one allocation, not one per row.
type Rows = json::Flat<Cell>;

impl json::FlatItem for Cell {
    const ARRAY: &'static str = "an array of rows";
    const INNER: &'static str = "a table row";
    const LENIENT: bool = true;

    fn next<'de, A: SeqAccess<'de>>(seq: &mut A) -> Result<Option<Cell>, A::Error> {
        seq.next_element::<Cell>()
    }
}

/// A value written either as itself or as a JSON string holding it (old Gecko
/// versions serialize threads and child processes so). `None` when the string
/// does not parse.
struct MaybeString<T>(Option<T>);

struct MaybeStringVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for MaybeStringVisitor<T> {
    type Value = MaybeString<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object or a JSON string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(MaybeString(serde_json::from_str(v).ok()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| MaybeString(Some(t)))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(MaybeString(None))
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for MaybeString<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MaybeStringVisitor(std::marker::PhantomData))
    }
}

/// A string table: an array of strings, or (old versions) something else we skip.
#[derive(Default)]
struct MaybeStrings(Vec<String>);

impl<'de> Deserialize<'de> for MaybeStrings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeStrings;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of strings")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MaybeStrings, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<Option<String>>()? {
                    out.push(s.unwrap_or_default());
                }
                Ok(MaybeStrings(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MaybeStrings, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MaybeStrings(Vec::new()))
            }
        }
        d.deserialize_any(V)
    }
}

/// ms (possibly fractional, possibly huge) as nanoseconds, clamped to u64.
fn ms_to_ns(ms: f64) -> u64 {
    json::to_ns(ms, 1e6)
}

/// Splits a Gecko frame label `name (file:line:col)` as speedscope's regular
/// expression does: the last ` (`, and up to two trailing `:digits`.
fn split_location(s: &str) -> Option<(&str, &str, Option<u32>)> {
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

struct Builder {
    profile: Profile,
    threads: Vec<u32>,
    times: Vec<u64>,
    dec: Decimals,
    /// (name, file, line) -> frame.
    frames: HashMap<(String, String, u32), FrameId>,
    /// The time total, kept from overflowing; samples that would are counted.
    total: i64,
    too_large: u64,
}

/// What one thread's frame and stack tables resolve to.
struct Resolved {
    frames: Vec<Option<FrameId>>,
    stacks: Vec<u32>,
}

const UNRESOLVED: u32 = u32::MAX - 1;
const NO_STACK: u32 = u32::MAX;

impl Builder {
    fn new() -> Builder {
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
        let id = self.profile.frames.intern(name.as_bytes());
        if !file.is_empty() {
            self.profile
                .frame_meta
                .entry(id)
                .or_insert_with(|| FrameMeta {
                    file: Some(file.to_string()),
                    line,
                    kind: FrameKind::Normal,
                });
        }
        self.frames.insert(key, id);
        id
    }

    fn thread(&mut self, t: Thread, start_ms: f64, shared: &[String]) {
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

    fn finish(mut self, processes: usize) -> Profile {
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

#[cfg(test)]
mod tests;
