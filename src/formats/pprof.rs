//! pprof protobuf profiles (`profile.proto`), as `go tool pprof` reads them.
//!
//! The whole (already un-gzipped) message is read into memory and decoded with
//! prost into our own message structs ([`proto`]). Then every location becomes its
//! frames once (inlined lines innermost last, so root-first), and every sample
//! becomes a stack of those frames plus all its values.
//!
//! What ember shows matches `go tool pprof -top` at its default (function)
//! granularity:
//!
//! * a frame is named by its function's name; a line without a (named) function,
//!   or a location without lines, is named after its mapping's file as
//!   `[basename]`, or `<unknown>` without one (pprof drops addresses at function
//!   granularity, so all unsymbolized addresses of one binary are one function);
//! * frames are interned by name only, so flat and cum per name equal pprof's;
//! * the default value is `default_sample_type` if set, else the last sample type;
//! * `drop_frames` / `keep_frames` are applied as pprof's `Prune` does when they
//!   are plain `|`-separated names (gperftools writes them so); other regular
//!   expressions are kept in the profile's info but not applied (we have no
//!   regex engine), with a note.
//!
//! Where pprof refuses a file (a sample naming a missing location, a sample with
//! the wrong number of values), ember loads the rest and counts warnings. A
//! truncated or partly corrupt message is salvaged field by field: top-level
//! fields that decode are kept, the others are reported.

pub mod proto;

use std::collections::HashMap;
use std::io::Read;

use prost::Message;

use super::ParseError;
use crate::input::Progress;
use crate::model::{
    FrameId, FrameKind, FrameMeta, Frames, Profile, StackId, ThreadInfo, Unit, ValueType,
};

/// How many bytes are read between two checks of the cancel flag.
const CHUNK: u64 = 4 << 20;
/// Most frames (summed over all samples) per input byte. Each location id takes
/// at least a byte; only inlined lines multiply it, by far less than this.
const FRAMES_PER_BYTE: usize = 16;
/// Samples converted between two checks of the cancel flag.
const CANCEL_EVERY: usize = 1 << 16;

// ---------------------------------------------------------------------------
// The wire format, walked by hand for the probe and for salvaging.

/// The messages of `profile.proto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Profile,
    ValueType,
    Sample,
    Label,
    Mapping,
    Location,
    Line,
    Function,
}

/// What a field may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Varint,
    /// A repeated integer: varints, or one length-delimited run of them.
    Packed,
    Bytes,
    Message(Kind),
}

/// The field `field` of message `kind`, if the schema has it.
fn slot(kind: Kind, field: u64) -> Option<Slot> {
    use Kind as K;
    use Slot::*;
    Some(match (kind, field) {
        (K::Profile, 1 | 11) => Message(K::ValueType),
        (K::Profile, 2) => Message(K::Sample),
        (K::Profile, 3) => Message(K::Mapping),
        (K::Profile, 4) => Message(K::Location),
        (K::Profile, 5) => Message(K::Function),
        (K::Profile, 6) => Bytes,
        (K::Profile, 7..=10 | 12 | 14 | 15) => Varint,
        (K::Profile, 13) => Packed,
        (K::ValueType, 1 | 2) => Varint,
        (K::Sample, 1 | 2) => Packed,
        (K::Sample, 3) => Message(K::Label),
        (K::Label, 1..=4) => Varint,
        (K::Mapping, 1..=10) => Varint,
        (K::Location, 1..=3 | 5) => Varint,
        (K::Location, 4) => Message(K::Line),
        (K::Line, 1..=3) => Varint,
        (K::Function, 1..=5) => Varint,
        _ => return None,
    })
}

/// Why a walk over protobuf bytes stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// The bytes end inside a field.
    Cut,
    /// Not the expected message: nothing valid can start at this offset.
    Bad(usize, &'static str),
}

/// A varint at `*pos`, which moves past it.
fn varint(buf: &[u8], pos: &mut usize) -> Result<u64, Stop> {
    let start = *pos;
    let mut v: u64 = 0;
    for i in 0..10 {
        let Some(&b) = buf.get(start + i) else {
            return Err(Stop::Cut);
        };
        if i == 9 && b > 1 {
            return Err(Stop::Bad(start, "varint longer than 64 bits"));
        }
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            *pos = start + i + 1;
            return Ok(v);
        }
    }
    Err(Stop::Bad(start, "varint longer than 10 bytes"))
}

/// One field's header: (field number, wire type); `*pos` moves past it.
fn tag(buf: &[u8], pos: &mut usize) -> Result<(u64, u8), Stop> {
    let at = *pos;
    let t = varint(buf, pos)?;
    let (field, wire) = (t >> 3, (t & 7) as u8);
    if field == 0 || field > u64::from(u32::MAX >> 3) {
        return Err(Stop::Bad(at, "field number out of range"));
    }
    Ok((field, wire))
}

/// Where the field whose payload starts at `*pos` ends (its wire type `wire`).
fn field_end(buf: &[u8], pos: &mut usize, wire: u8, at: usize) -> Result<usize, Stop> {
    match wire {
        0 => {
            varint(buf, pos)?;
            Ok(*pos)
        }
        1 => Ok(*pos + 8),
        2 => {
            let len = varint(buf, pos)?;
            let end = usize::try_from(len)
                .ok()
                .and_then(|l| pos.checked_add(l))
                .ok_or(Stop::Bad(at, "length out of range"))?;
            Ok(end)
        }
        5 => Ok(*pos + 4),
        _ => Err(Stop::Bad(at, "no such wire type in profile.proto")),
    }
}

/// Checks that `buf` is a `kind` message field by field, with the schema's wire
/// types. `Err(Stop::Cut)` when `buf` ends inside a field (a cut head).
/// Returns the number of fields seen.
fn check(buf: &[u8], kind: Kind, base: usize) -> Result<usize, Stop> {
    let mut pos = 0;
    let mut fields = 0;
    while pos < buf.len() {
        let at = pos;
        let (field, wire) = tag(buf, &mut pos).map_err(|s| shift(s, base))?;
        let Some(slot) = slot(kind, field) else {
            return Err(Stop::Bad(base + at, "no such field in profile.proto"));
        };
        let wire_ok = match slot {
            Slot::Varint => wire == 0,
            Slot::Packed => wire == 0 || wire == 2,
            Slot::Bytes | Slot::Message(_) => wire == 2,
        };
        if !wire_ok {
            return Err(Stop::Bad(base + at, "wrong wire type for the field"));
        }
        let body = pos;
        let end = field_end(buf, &mut pos, wire, at).map_err(|s| shift(s, base))?;
        let payload_start = pos;
        let whole = end <= buf.len();
        let payload = &buf[payload_start.min(buf.len())..end.min(buf.len())];
        match slot {
            Slot::Message(inner) => match check(payload, inner, base + payload_start) {
                Ok(_) => {}
                // A complete field whose message is cut is not a message.
                Err(Stop::Cut) if whole => {
                    return Err(Stop::Bad(base + body, "message ends inside a field"));
                }
                Err(e) => return Err(e),
            },
            Slot::Packed if wire == 2 => {
                let mut p = 0;
                while p < payload.len() {
                    match varint(payload, &mut p) {
                        Ok(_) => {}
                        Err(Stop::Cut) if whole => {
                            return Err(Stop::Bad(base + body, "packed run ends inside a varint"));
                        }
                        Err(e) => return Err(shift(e, base + payload_start)),
                    }
                }
            }
            _ => {}
        }
        if !whole {
            return Err(Stop::Cut);
        }
        pos = end;
        fields += 1;
    }
    Ok(fields)
}

fn shift(s: Stop, base: usize) -> Stop {
    match s {
        Stop::Bad(at, why) => Stop::Bad(at + base, why),
        cut => cut,
    }
}

/// Whether `head` is the start of a pprof `Profile` message: `Some(true)` when its
/// fields (and the messages inside them) follow the schema up to the end of the
/// head and at least one of them is a whole sample type, sample, mapping,
/// location, function or string; `Some(false)` for text and other binaries;
/// `None` when the head is too short to tell. `head` is already un-gzipped.
pub fn probe(head: &[u8], complete: bool) -> Option<bool> {
    if head.is_empty() {
        return Some(false);
    }
    // Every profile has field tags 0x08/0x10 (ids, types, values) or lengths below
    // 32: text has no such control bytes.
    if !head
        .iter()
        .any(|&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t'))
    {
        return Some(false);
    }
    match check(head, Kind::Profile, 0) {
        Ok(_) | Err(Stop::Cut) => {}
        Err(Stop::Bad(..)) => return Some(false),
    }
    // Count the whole fields that hold messages or strings.
    let mut pos = 0;
    let mut evidence = 0;
    while pos < head.len() {
        let at = pos;
        let end = match tag(head, &mut pos) {
            Ok((field, wire)) => match field_end(head, &mut pos, wire, at) {
                Ok(end) if end <= head.len() => {
                    if field <= 6 || field == 11 {
                        evidence += 1;
                    }
                    end
                }
                _ => break,
            },
            Err(_) => break,
        };
        pos = end;
    }
    match evidence {
        0 if complete => Some(false),
        0 => None,
        _ => Some(true),
    }
}

// ---------------------------------------------------------------------------
// Reading and decoding.

/// Reads a whole profile.
pub fn parse(reader: impl Read, progress: &Progress) -> Result<Profile, ParseError> {
    let bytes = read_all(reader, progress)?;
    if bytes.is_empty() {
        return Err(invalid("empty input: no protobuf message"));
    }
    let len = bytes.len();
    let mut warnings = Vec::new();
    let message = match proto::Profile::decode(bytes.as_slice()) {
        Ok(m) => m,
        Err(e) => salvage(&bytes, &e, &mut warnings)?,
    };
    drop(bytes);
    if progress.is_cancelled() {
        return Err(ParseError::Cancelled);
    }
    let mut profile = convert(&message, len, progress)?;
    // Only salvage leaves warnings here: the profile is what a cut file held.
    profile.meta.incomplete = warnings.first().cloned();
    for w in warnings {
        profile.warnings.push(0, w);
    }
    Ok(profile)
}

fn invalid(message: impl Into<String>) -> ParseError {
    ParseError::Invalid {
        line: 0,
        message: message.into(),
    }
}

/// All of `reader`, checking the cancel flag every few MiB.
fn read_all(mut reader: impl Read, progress: &Progress) -> Result<Vec<u8>, ParseError> {
    let mut buf = Vec::new();
    loop {
        if progress.is_cancelled() {
            return Err(ParseError::Cancelled);
        }
        let n = (&mut reader)
            .take(CHUNK)
            .read_to_end(&mut buf)
            .map_err(ParseError::Io)?;
        if n == 0 {
            return Ok(buf);
        }
    }
}

/// Decodes what can be decoded of a message prost refused: each complete
/// top-level field on its own. Fails when nothing useful is left.
fn salvage(
    bytes: &[u8],
    error: &prost::DecodeError,
    warnings: &mut Vec<String>,
) -> Result<proto::Profile, ParseError> {
    let mut message = proto::Profile::default();
    let mut pos = 0;
    let mut bad_fields = 0u64;
    let mut first_bad: Option<String> = None;
    let mut stop: Option<String> = None;
    while pos < bytes.len() {
        let at = pos;
        let step = tag(bytes, &mut pos).and_then(|(_, wire)| field_end(bytes, &mut pos, wire, at));
        let end = match step {
            Ok(end) if end <= bytes.len() => end,
            Ok(_) | Err(Stop::Cut) => {
                stop = Some(format!(
                    "the input ends inside the field that starts at byte {at} (truncated?)"
                ));
                break;
            }
            Err(Stop::Bad(b, why)) => {
                stop = Some(format!("byte {b} starts no protobuf field ({why})"));
                break;
            }
        };
        if let Err(e) = message.merge(&bytes[at..end]) {
            bad_fields += 1;
            first_bad.get_or_insert_with(|| format!("the field at bytes {at}..{end}: {e}"));
        }
        pos = end;
    }
    let len = bytes.len();
    let mut what = Vec::new();
    if let Some(s) = &stop {
        what.push(s.clone());
    }
    if let Some(b) = &first_bad {
        what.push(format!(
            "{bad_fields} corrupt top-level field(s), the first {b}"
        ));
    }
    let what = if what.is_empty() {
        String::new()
    } else {
        format!("; {}", what.join("; "))
    };
    if message.sample.is_empty() || message.string_table.is_empty() {
        let lost = if message.sample.is_empty() {
            "no sample"
        } else {
            "no string table"
        };
        return Err(invalid(format!(
            "truncated or corrupt protobuf ({len} bytes): {error}{what}; {lost} could be read"
        )));
    }
    warnings.push(format!(
        "truncated or corrupt protobuf ({len} bytes): {error}{what}; showing the fields that could be read"
    ));
    Ok(message)
}

// ---------------------------------------------------------------------------
// From messages to ember's model.

/// Ids to positions: a table for the usual small dense ids, a map for the rest.
struct IdIndex {
    dense: Vec<u32>,
    sparse: HashMap<u64, u32>,
}

const NONE: u32 = u32::MAX;

impl IdIndex {
    /// Indexes `ids` (positions in order); id 0 and repeated ids are left out and
    /// counted in the returned (zero, duplicate) pair.
    fn new(ids: impl ExactSizeIterator<Item = u64>) -> (IdIndex, u64, u64) {
        let n = ids.len();
        let mut ix = IdIndex {
            dense: vec![NONE; n + 1],
            sparse: HashMap::new(),
        };
        let (mut zero, mut dup) = (0, 0);
        for (pos, id) in ids.enumerate() {
            let pos = pos as u32;
            if id == 0 {
                zero += 1;
                continue;
            }
            let slot = match usize::try_from(id).ok().filter(|&i| i <= n) {
                Some(i) => &mut ix.dense[i],
                None => ix.sparse.entry(id).or_insert(NONE),
            };
            if *slot == NONE {
                *slot = pos;
            } else {
                dup += 1;
            }
        }
        (ix, zero, dup)
    }

    fn get(&self, id: u64) -> Option<usize> {
        let pos = match usize::try_from(id).ok().and_then(|i| self.dense.get(i)) {
            Some(&p) => p,
            None => *self.sparse.get(&id)?,
        };
        (pos != NONE).then_some(pos as usize)
    }
}

/// The string table with counted out-of-range indexes.
struct Strings<'a> {
    table: &'a [Vec<u8>],
    bad: u64,
}

impl<'a> Strings<'a> {
    fn get(&mut self, i: i64) -> &'a [u8] {
        match usize::try_from(i).ok().and_then(|i| self.table.get(i)) {
            Some(s) => s,
            None => {
                self.bad += 1;
                b""
            }
        }
    }

    fn text(&mut self, i: i64) -> String {
        String::from_utf8_lossy(self.get(i)).into_owned()
    }
}

/// A location's frames, root-first, as a span of `Converter::loc_frames`.
#[derive(Clone, Copy, Default)]
struct LocFrames {
    start: u32,
    len: u32,
    /// pprof `Prune`: drop this location and everything below it.
    prune: bool,
    /// pprof `Prune`: keep this (trimmed) location, drop everything below it.
    beneath: bool,
}

/// `drop_frames` / `keep_frames` when they are plain alternatives of names.
struct FrameFilter {
    drop: Vec<Vec<u8>>,
    keep: Vec<Vec<u8>>,
}

impl FrameFilter {
    /// `None` for an empty or non-literal regex (also when `keep` is non-literal).
    fn new(drop: &[u8], keep: &[u8]) -> Option<FrameFilter> {
        if drop.is_empty() {
            return None;
        }
        Some(FrameFilter {
            drop: literal_alternatives(drop)?,
            keep: if keep.is_empty() {
                Vec::new()
            } else {
                literal_alternatives(keep)?
            },
        })
    }

    /// pprof's test: the simplified name matches `^(drop)$` and not `^(keep)$`.
    fn drops(&self, name: &[u8]) -> bool {
        let name = simplify_func(name);
        self.drop.iter().any(|d| d == name) && !self.keep.iter().any(|k| k == name)
    }
}

/// `a|b|c` as names, if no alternative uses a regex metacharacter.
fn literal_alternatives(re: &[u8]) -> Option<Vec<Vec<u8>>> {
    const META: &[u8] = b"\\.+*?()[]{}^$";
    if re.iter().any(|b| META.contains(b)) {
        return None;
    }
    Some(re.split(|&b| b == b'|').map(<[u8]>::to_vec).collect())
}

/// pprof's `simplifyFunc`: no leading `.`, and cut at the first `(` that does
/// not begin `(anonymous namespace)` or end `operator()`.
fn simplify_func(name: &[u8]) -> &[u8] {
    let name = name.strip_prefix(b".").unwrap_or(name);
    let mut i = 0;
    while i < name.len() {
        let rest = &name[i..];
        if rest.starts_with(b"(anonymous namespace)") {
            i += b"(anonymous namespace)".len();
        } else if rest.starts_with(b"operator()") {
            i += b"operator()".len();
        } else if rest[0] == b'(' {
            return &name[..i];
        } else {
            i += 1;
        }
    }
    name
}

/// `[basename]` of a mapping's file, or `<unknown>`, as pprof names code it has
/// no function name for.
fn object_name(file: &[u8]) -> Vec<u8> {
    if file.is_empty() {
        return b"<unknown>".to_vec();
    }
    // Go's filepath.Base: trailing slashes dropped, then the last element.
    let trimmed = match file.iter().rposition(|&b| b != b'/') {
        Some(i) => &file[..=i],
        None => b"/",
    };
    let base = match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) if trimmed.len() > 1 => &trimmed[i + 1..],
        _ => trimmed,
    };
    let mut out = Vec::with_capacity(base.len() + 2);
    out.push(b'[');
    out.extend_from_slice(base);
    out.push(b']');
    out
}

/// Counted problems with ids, reported once each at the end.
#[derive(Default)]
struct IdProblems {
    missing_locations: u64,
    first_missing_location: Option<u64>,
    missing_functions: u64,
    missing_mappings: u64,
    zero_ids: u64,
    duplicate_ids: u64,
    bad_values: u64,
    first_bad_values: Option<(usize, usize)>,
}

/// Converts the decoded message (`input_len` bytes on the wire) to a profile.
fn convert(
    m: &proto::Profile,
    input_len: usize,
    progress: &Progress,
) -> Result<Profile, ParseError> {
    let mut strings = Strings {
        table: &m.string_table,
        bad: 0,
    };
    let mut problems = IdProblems::default();

    // Value types and the default one.
    let mut value_types: Vec<ValueType> = m
        .sample_type
        .iter()
        .map(|vt| {
            let unit = String::from_utf8_lossy(strings.get(vt.unit)).into_owned();
            ValueType::new(&strings.text(vt.r#type), Unit::from_name(&unit))
        })
        .collect();
    let mut notes = Vec::new();
    if value_types.is_empty() {
        let n = m.sample.first().map_or(0, |s| s.value.len());
        if n == 0 {
            return Err(invalid(format!(
                "no samples with values in the profile ({} samples, no sample_type)",
                m.sample.len()
            )));
        }
        value_types = (0..n)
            .map(|i| ValueType::new(&format!("value{i}"), Unit::Count))
            .collect();
        notes.push(format!(
            "no sample_type in the profile: its {n} value(s) are shown unnamed (pprof refuses such a file)"
        ));
    }
    let nvalues = value_types.len();
    let default_name = strings.get(m.default_sample_type);
    let default_value = (!default_name.is_empty())
        .then(|| {
            m.sample_type
                .iter()
                .position(|vt| strings.get(vt.r#type) == default_name)
        })
        .flatten()
        .unwrap_or(nvalues - 1);

    let mut profile = Profile::new("pprof", value_types);
    profile.default_value = default_value;
    profile.notes = notes;
    if m.string_table.first().is_some_and(|s| !s.is_empty()) {
        profile.warnings.push(
            0,
            "string_table[0] is not the empty string (pprof refuses this)",
        );
    }

    // Mappings: id -> object name.
    let (mapping_ix, z, d) = IdIndex::new(m.mapping.iter().map(|x| x.id));
    problems.zero_ids += z;
    problems.duplicate_ids += d;
    let mapping_files: Vec<&[u8]> = m.mapping.iter().map(|x| strings.get(x.filename)).collect();
    let mapping_names: Vec<Vec<u8>> = mapping_files.iter().map(|f| object_name(f)).collect();
    let kernel: Vec<bool> = mapping_files
        .iter()
        .map(|f| f.starts_with(b"[kernel"))
        .collect();

    // Functions: id -> position.
    let (function_ix, z, d) = IdIndex::new(m.function.iter().map(|x| x.id));
    problems.zero_ids += z;
    problems.duplicate_ids += d;

    let filter = FrameFilter::new(strings.get(m.drop_frames), strings.get(m.keep_frames));
    if filter.is_none() && m.drop_frames != 0 && !strings.get(m.drop_frames).is_empty() {
        profile.notes.push(
            "drop_frames is a regular expression ember does not apply: frames pprof would hide are shown"
                .into(),
        );
    }

    // Locations: each becomes its frames once, root-first.
    let (location_ix, z, d) = IdIndex::new(m.location.iter().map(|x| x.id));
    problems.zero_ids += z;
    problems.duplicate_ids += d;
    let unknown_object = profile.frames.intern(b"<unknown>");
    let mut locs: Vec<LocFrames> = Vec::with_capacity(m.location.len());
    let mut loc_frames: Vec<FrameId> = Vec::with_capacity(m.location.len());
    // One location's lines: (frame, function, line number, kind, dropped).
    let mut lines: Vec<(FrameId, Option<&proto::Function>, i64, FrameKind, bool)> = Vec::new();
    for loc in &m.location {
        let mapping = if loc.mapping_id == 0 {
            None
        } else {
            let found = mapping_ix.get(loc.mapping_id);
            if found.is_none() && !m.mapping.is_empty() {
                problems.missing_mappings += 1;
            }
            found
        };
        let object = mapping.map_or(unknown_object, |i| profile.frames.intern(&mapping_names[i]));
        let outer_kind = if mapping.is_some_and(|i| kernel[i]) {
            FrameKind::Kernel
        } else {
            FrameKind::Normal
        };
        lines.clear();
        let last = loc.line.len().saturating_sub(1);
        for (li, line) in loc.line.iter().enumerate() {
            let function = if line.function_id == 0 {
                None
            } else {
                let found = function_ix.get(line.function_id);
                if found.is_none() {
                    problems.missing_functions += 1;
                }
                found.map(|i| &m.function[i])
            };
            let name = function.map_or(&b""[..], |f| strings.get(f.name));
            let frame = if name.is_empty() {
                object
            } else {
                profile.frames.intern(name)
            };
            let kind = if li < last {
                FrameKind::Inlined
            } else {
                outer_kind
            };
            let dropped = filter
                .as_ref()
                .is_some_and(|f| !name.is_empty() && f.drops(name));
            lines.push((frame, function, line.line, kind, dropped));
        }
        if lines.is_empty() {
            lines.push((object, None, 0, outer_kind, false));
        }
        // pprof's Prune: the outermost dropped line cuts the location there.
        let mut entry = LocFrames::default();
        let mut keep_from = 0;
        if let Some(i) = lines.iter().rposition(|l| l.4) {
            entry.beneath = true;
            if i + 1 == lines.len() {
                entry.prune = true;
            } else {
                keep_from = i + 1;
            }
        }
        entry.start = loc_frames.len() as u32;
        for &(frame, function, line, kind, _) in lines.iter().skip(keep_from).rev() {
            loc_frames.push(frame);
            // Where a frame is first met is where it says it comes from.
            profile
                .frame_meta
                .entry(frame)
                .or_insert_with(|| FrameMeta {
                    file: function
                        .map(|f| strings.get(f.filename))
                        .filter(|f| !f.is_empty())
                        .map(|f| String::from_utf8_lossy(f).into_owned()),
                    line: u32::try_from(line).ok().filter(|&l| l > 0),
                    kind,
                });
        }
        entry.len = loc_frames.len() as u32 - entry.start;
        locs.push(entry);
    }

    let loc_table = LocTable::new(&location_ix, &m.location, &locs);
    drop(locs);

    // Samples: first each valid sample's frames, root-first, in one flat array,
    // as keys that sort like the frames' names (see `build_stacks`).
    let mut order = NameOrder::new(&profile.frames);
    let loc_keys: Vec<u32> = loc_frames.iter().map(|&f| order.key(f)).collect();
    drop(loc_frames);
    let mut valid: Vec<u32> = Vec::with_capacity(m.sample.len());
    let mut seq: Vec<u32> = Vec::with_capacity(m.sample.iter().map(|s| s.location_id.len()).sum());
    let mut offs: Vec<usize> = Vec::with_capacity(m.sample.len() + 1);
    let mut unknown: HashMap<u64, u32> = HashMap::new();
    let frame_limit = input_len
        .saturating_mul(FRAMES_PER_BYTE)
        .saturating_add(1 << 20);
    offs.push(0);
    for (si, s) in m.sample.iter().enumerate() {
        if si % CANCEL_EVERY == 0 && progress.is_cancelled() {
            return Err(ParseError::Cancelled);
        }
        if s.value.len() != nvalues {
            problems.bad_values += 1;
            problems.first_bad_values.get_or_insert((si, s.value.len()));
            continue;
        }
        let lo = if filter.is_some() {
            prune_start(&s.location_id, |id| loc_table.get(id))
        } else {
            0
        };
        for &id in s.location_id[lo..].iter().rev() {
            match loc_table.get(id) {
                Some(l) if l.len == 1 => seq.push(loc_keys[l.start as usize]),
                Some(l) => {
                    // Inlined lines multiply a location: bound what a small
                    // input can make us hold.
                    if seq.len() + l.len as usize > frame_limit {
                        return Err(invalid(format!(
                            "the stacks would hold more than {frame_limit} frames \
                             ({FRAMES_PER_BYTE} per input byte): too many inlined lines per location"
                        )));
                    }
                    seq.extend_from_slice(&loc_keys[l.start as usize..(l.start + l.len) as usize]);
                }
                None => {
                    problems.missing_locations += 1;
                    problems.first_missing_location.get_or_insert(id);
                    let key = match unknown.get(&id) {
                        Some(&k) => k,
                        None => {
                            let name = format!("[unknown location {id:#x}]");
                            let k = order.key(profile.frames.intern(name.as_bytes()));
                            unknown.insert(id, k);
                            k
                        }
                    };
                    seq.push(key);
                }
            }
        }
        valid.push(si as u32);
        offs.push(seq.len());
    }
    if progress.is_cancelled() {
        return Err(ParseError::Cancelled);
    }
    let stack_of = build_stacks(&mut profile, &order.by_key, &seq, &offs);
    drop(seq);

    // Then the samples in file order, with their stacks, values and labels.
    let mut labels = LabelSets::default();
    profile.samples.stack.reserve(valid.len());
    profile
        .samples
        .values
        .reserve(valid.len().saturating_mul(nvalues));
    for (k, &si) in valid.iter().enumerate() {
        let s = &m.sample[si as usize];
        let stack = stack_of[k];
        profile.push_sample((stack != u32::MAX).then_some(StackId(stack)), &s.value);
        if !s.label.is_empty() || labels.any {
            let set = labels.set_of(&s.label, &mut strings);
            labels.push(k, set);
        }
    }
    labels.finish(&mut profile);

    // Profile facts.
    let meta = &mut profile.meta;
    meta.start_unix_ns = u64::try_from(m.time_nanos).ok().filter(|&t| t > 0);
    meta.duration_ns = u64::try_from(m.duration_nanos).ok().filter(|&t| t > 0);
    if m.period != 0 {
        let pt = m.period_type.unwrap_or_default();
        let unit = String::from_utf8_lossy(strings.get(pt.unit)).into_owned();
        meta.period = Some((
            m.period,
            ValueType::new(&strings.text(pt.r#type), Unit::from_name(&unit)),
        ));
    }
    for &c in &m.comment {
        meta.extra.push(("comment".into(), strings.text(c)));
    }
    for (key, idx) in [
        ("drop_frames", m.drop_frames),
        ("keep_frames", m.keep_frames),
        ("doc_url", m.doc_url),
    ] {
        if idx != 0 {
            meta.extra.push((key.into(), strings.text(idx)));
        }
    }
    if let Some(main) = m.mapping.first() {
        let file = strings.text(main.filename);
        if !file.is_empty() {
            meta.extra.push(("binary".into(), file));
        }
        let build = strings.text(main.build_id);
        if !build.is_empty() {
            meta.extra.push(("build_id".into(), build));
        }
    }

    report(&mut profile, &problems, strings.bad, m);
    if profile.samples.is_empty() {
        let why = match profile.warnings.first.first() {
            Some(w) => format!("; {}", w.message),
            None => String::new(),
        };
        return Err(invalid(format!(
            "no samples in the profile ({} sample records, {} sample types){why}",
            m.sample.len(),
            m.sample_type.len()
        )));
    }
    Ok(profile)
}

/// Location id -> its frames, directly indexed for the usual small dense ids.
struct LocTable {
    dense: Vec<LocFrames>,
    sparse: HashMap<u64, LocFrames>,
}

impl LocTable {
    fn new(index: &IdIndex, locations: &[proto::Location], locs: &[LocFrames]) -> LocTable {
        let mut t = LocTable {
            dense: vec![LocFrames::default(); locations.len() + 1],
            sparse: HashMap::new(),
        };
        for loc in locations {
            let Some(i) = index.get(loc.id) else {
                continue;
            };
            match usize::try_from(loc.id)
                .ok()
                .and_then(|id| t.dense.get_mut(id))
            {
                Some(slot) => *slot = locs[i],
                None => {
                    t.sparse.insert(loc.id, locs[i]);
                }
            }
        }
        t
    }

    /// Every location has at least one frame, so an empty entry is no location.
    #[inline]
    fn get(&self, id: u64) -> Option<LocFrames> {
        match usize::try_from(id).ok().and_then(|i| self.dense.get(i)) {
            Some(l) if l.len > 0 => Some(*l),
            Some(_) => None,
            None => self.sparse.get(&id).copied(),
        }
    }
}

/// pprof's `Prune` for one sample (locations leaf-first): the index of the first
/// location kept. From the root down, the first location with a dropped frame
/// that comes after a kept one cuts the stack there.
fn prune_start(ids: &[u64], loc: impl Fn(u64) -> Option<LocFrames>) -> usize {
    let mut found_user = false;
    for i in (0..ids.len()).rev() {
        let Some(l) = loc(ids[i]) else {
            found_user = true;
            continue;
        };
        if !l.prune && !l.beneath {
            found_user = true;
            continue;
        }
        if !found_user {
            continue;
        }
        return if l.prune { i + 1 } else { i };
    }
    0
}

/// Frames numbered in name order, so that comparing numbers compares names.
struct NameOrder {
    /// The frame of each key (key `k` is `by_key[k - 1]`; 0 means "no frame").
    by_key: Vec<FrameId>,
    /// The key of each frame id.
    key_of: Vec<u32>,
}

impl NameOrder {
    fn new(frames: &Frames) -> NameOrder {
        let mut by_key: Vec<FrameId> = frames.ids().collect();
        by_key.sort_unstable_by(|&a, &b| frames.raw(a).cmp(frames.raw(b)));
        let mut key_of = vec![0u32; by_key.len()];
        for (k, f) in by_key.iter().enumerate() {
            key_of[f.0 as usize] = k as u32 + 1;
        }
        NameOrder { by_key, key_of }
    }

    /// The key of `f`. Frames interned after `new` get keys after all others: out
    /// of name order, which only changes the order siblings are created in.
    fn key(&mut self, f: FrameId) -> u32 {
        let i = f.0 as usize;
        if i >= self.key_of.len() {
            self.key_of.resize(i + 1, 0);
        }
        if self.key_of[i] == 0 {
            self.by_key.push(f);
            self.key_of[i] = self.by_key.len() as u32;
        }
        self.key_of[i]
    }
}

/// Interns every sample's stack (`seq[offs[k]..offs[k + 1]]`: frame keys of
/// [`NameOrder`], root-first) and returns the stack of each (`u32::MAX` for an
/// empty one).
///
/// pprof samples are one per distinct stack and most of their frames are new
/// stacks (85% of the frames of a long Go CPU profile), so a hash probe per frame
/// would cost a cache miss each. Instead the samples are partitioned depth by
/// depth (an MSD radix walk): every (prefix, frame) pair is met exactly once, so
/// each is appended as a new stack without any lookup
/// ([`crate::model::StackTable::push_unique`]), children of a prefix in name
/// order, and a group of one sample appends the rest of its frames in a line.
fn build_stacks(
    profile: &mut Profile,
    by_key: &[FrameId],
    seq: &[u32],
    offs: &[usize],
) -> Vec<u32> {
    let n = offs.len().saturating_sub(1);
    let mut stack_of = vec![u32::MAX; n];
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut keys: Vec<u64> = Vec::new();
    // Every (prefix, frame) pair is met exactly once below, so each stack is new:
    // it is appended without a lookup.
    // (range of `order`, depth, prefix stack or u32::MAX).
    let mut todo: Vec<(usize, usize, usize, u32)> = vec![(0, n, 0, u32::MAX)];
    while let Some((lo, hi, depth, prefix)) = todo.pop() {
        let prefix_id = (prefix != u32::MAX).then_some(StackId(prefix));
        if hi - lo == 1 {
            let k = order[lo] as usize;
            let mut cur = prefix_id;
            for &key in &seq[offs[k] + depth..offs[k + 1]] {
                let f = by_key[key as usize - 1];
                cur = Some(profile.stacks.push_unique(cur, f));
            }
            stack_of[k] = cur.map_or(u32::MAX, |s| s.0);
            continue;
        }
        keys.clear();
        keys.extend(order[lo..hi].iter().map(|&k| {
            let at = offs[k as usize] + depth;
            let key = if at < offs[k as usize + 1] {
                seq[at]
            } else {
                0
            };
            (u64::from(key) << 32) | u64::from(k)
        }));
        keys.sort_unstable();
        for (slot, &key) in order[lo..hi].iter_mut().zip(&keys) {
            *slot = key as u32;
        }
        let mut i = 0;
        while i < keys.len() {
            let key = keys[i] >> 32;
            let mut j = i + 1;
            while j < keys.len() && keys[j] >> 32 == key {
                j += 1;
            }
            if key == 0 {
                // These samples end here.
                for &k in &order[lo + i..lo + j] {
                    stack_of[k as usize] = prefix;
                }
            } else {
                let f = by_key[key as usize - 1];
                let child = profile.stacks.push_unique(prefix_id, f);
                todo.push((lo + i, lo + j, depth + 1, child.0));
            }
            i = j;
        }
    }
    stack_of
}

/// Turns counted problems into warnings.
fn report(profile: &mut Profile, p: &IdProblems, bad_strings: u64, m: &proto::Profile) {
    let w = &mut profile.warnings;
    if let Some((i, n)) = p.first_bad_values {
        w.push(
            0,
            format!(
                "{} sample(s) skipped: their number of values differs from the {} sample types (the first, sample {i}, has {n})",
                p.bad_values,
                m.sample_type.len().max(1)
            ),
        );
    }
    if let Some(id) = p.first_missing_location {
        w.push(
            0,
            format!(
                "{} reference(s) to missing locations (the first, id {id}) are shown as [unknown location]",
                p.missing_locations
            ),
        );
    }
    if p.missing_functions > 0 {
        w.push(
            0,
            format!(
                "{} line(s) name a missing function; named after their mapping instead",
                p.missing_functions
            ),
        );
    }
    if p.missing_mappings > 0 {
        w.push(
            0,
            format!(
                "{} location(s) name a missing mapping; shown as <unknown>",
                p.missing_mappings
            ),
        );
    }
    if p.zero_ids > 0 || p.duplicate_ids > 0 {
        w.push(
            0,
            format!(
                "{} mapping/location/function record(s) with id 0 and {} with a repeated id were ignored",
                p.zero_ids, p.duplicate_ids
            ),
        );
    }
    if bad_strings > 0 {
        w.push(
            0,
            format!(
                "{bad_strings} string index(es) outside the string table ({} entries) read as empty",
                m.string_table.len()
            ),
        );
    }
}

/// Deduplicated label sets and the per-sample column, built as samples arrive.
#[derive(Default)]
struct LabelSets {
    /// Raw (key, str, num, unit) lists -> set index.
    raw: HashMap<Vec<[i64; 4]>, u32>,
    /// Rendered set -> index, so raw lists that read the same share one.
    rendered: HashMap<Vec<(String, String)>, u32>,
    sets: Vec<Vec<(String, String)>>,
    column: Vec<u32>,
    /// Whether any sample had labels (then every later sample gets an entry).
    any: bool,
    buf: Vec<[i64; 4]>,
}

const NO_LABELS: u32 = u32::MAX;

impl LabelSets {
    fn set_of(&mut self, labels: &[proto::Label], strings: &mut Strings) -> u32 {
        self.buf.clear();
        // pprof ignores a label with neither a string nor a number.
        self.buf.extend(
            labels
                .iter()
                .filter(|l| l.str != 0 || l.num != 0 || l.num_unit != 0)
                .map(|l| [l.key, l.str, l.num, l.num_unit]),
        );
        if self.buf.is_empty() {
            return NO_LABELS;
        }
        if let Some(&i) = self.raw.get(self.buf.as_slice()) {
            return i;
        }
        let mut set: Vec<(String, String)> = self
            .buf
            .iter()
            .map(|&[key, s, num, unit]| {
                let key = strings.text(key);
                let value = if s != 0 {
                    strings.text(s)
                } else {
                    let unit = strings.get(unit);
                    if unit.is_empty() {
                        num.to_string()
                    } else {
                        format!("{num} {}", String::from_utf8_lossy(unit))
                    }
                };
                (key, value)
            })
            .collect();
        set.sort_by(|a, b| a.0.cmp(&b.0));
        let next = self.sets.len() as u32;
        let i = *self.rendered.entry(set.clone()).or_insert(next);
        if i == next {
            self.sets.push(set);
        }
        self.raw.insert(self.buf.clone(), i);
        i
    }

    /// Records sample `sample`'s set (the column starts at the first labelled one).
    fn push(&mut self, sample: usize, set: u32) {
        if set == NO_LABELS && !self.any {
            return;
        }
        if !self.any {
            self.any = true;
            self.column.resize(sample, NO_LABELS);
        }
        self.column.push(set);
    }

    fn finish(self, profile: &mut Profile) {
        if !self.any {
            return;
        }
        let mut column = self.column;
        column.resize(profile.samples.len(), NO_LABELS);
        // Samples without labels get an empty set so every entry indexes one.
        let mut sets = self.sets;
        if column.contains(&NO_LABELS) {
            let empty = sets.len() as u32;
            sets.push(Vec::new());
            column
                .iter_mut()
                .filter(|c| **c == NO_LABELS)
                .for_each(|c| *c = empty);
        }
        threads_from_labels(profile, &sets, &column);
        profile.label_sets = sets;
        profile.samples.labels = Some(column);
    }
}

/// Threads from `thread`/`thread_name`/`tid`/`pid` labels, when samples carry them.
fn threads_from_labels(profile: &mut Profile, sets: &[Vec<(String, String)>], column: &[u32]) {
    let info: Vec<Option<ThreadInfo>> = sets
        .iter()
        .map(|set| {
            let mut t = ThreadInfo::default();
            let mut any = false;
            for (k, v) in set {
                let number = || v.split(' ').next().and_then(|n| n.parse::<u64>().ok());
                match k.to_ascii_lowercase().as_str() {
                    "thread" | "thread_name" | "threadname" | "thread name" => {
                        match v.parse::<u64>() {
                            Ok(n) => t.tid = Some(n),
                            Err(_) => t.name = v.clone(),
                        }
                        any = true;
                    }
                    "thread_id" | "threadid" | "tid" => {
                        t.tid = number();
                        any |= t.tid.is_some();
                    }
                    "pid" | "process_id" => {
                        t.pid = number();
                        any |= t.pid.is_some();
                    }
                    _ => {}
                }
            }
            if let (true, Some(tid)) = (t.name.is_empty(), t.tid) {
                t.name = format!("thread {tid}");
            }
            any.then_some(t)
        })
        .collect();
    if info.iter().all(Option::is_none) {
        return;
    }
    let mut index: HashMap<ThreadKey, u32> = HashMap::new();
    let mut threads = Vec::new();
    let mut of_set = Vec::with_capacity(info.len());
    for t in info {
        let t = t.unwrap_or_else(|| ThreadInfo {
            name: "(no thread label)".into(),
            ..ThreadInfo::default()
        });
        let key = (t.name.clone(), t.pid, t.tid);
        let i = *index.entry(key).or_insert_with(|| {
            threads.push(t);
            threads.len() as u32 - 1
        });
        of_set.push(i);
    }
    profile.samples.thread = Some(column.iter().map(|&s| of_set[s as usize]).collect());
    profile.threads = threads;
}

type ThreadKey = (String, Option<u64>, Option<u64>);

#[cfg(test)]
mod tests;
