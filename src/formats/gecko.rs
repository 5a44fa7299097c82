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

mod builder;

use std::collections::HashMap;
use std::io::Read;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use self::builder::Builder;
use super::ParseError;
use super::json::{self, Index};
use crate::model::Profile;
use crate::sources::input::Progress;

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
    parse_with(reader, progress, super::Granularity::Function)
}

/// [`parse`] with frames at `granularity`.
pub fn parse_with(
    reader: impl Read,
    progress: &Progress,
    granularity: super::Granularity,
) -> Result<Profile, ParseError> {
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
    let mut b = Builder::new(granularity);
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

#[cfg(test)]
mod tests;
