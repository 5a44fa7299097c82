//! The protobuf wire format, walked by hand for the probe and for salvaging a
//! message prost refuses.

use prost::Message;

use super::{invalid, proto};
use crate::formats::ParseError;

/// The messages of `profile.proto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
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
pub(super) enum Stop {
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
pub(super) fn tag(buf: &[u8], pos: &mut usize) -> Result<(u64, u8), Stop> {
    let at = *pos;
    let t = varint(buf, pos)?;
    let (field, wire) = (t >> 3, (t & 7) as u8);
    if field == 0 || field > u64::from(u32::MAX >> 3) {
        return Err(Stop::Bad(at, "field number out of range"));
    }
    Ok((field, wire))
}

/// Where the field whose payload starts at `*pos` ends (its wire type `wire`).
pub(super) fn field_end(buf: &[u8], pos: &mut usize, wire: u8, at: usize) -> Result<usize, Stop> {
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
pub(super) fn check(buf: &[u8], kind: Kind, base: usize) -> Result<usize, Stop> {
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

/// Decodes what can be decoded of a message prost refused: each complete
/// top-level field on its own. Fails when nothing useful is left.
pub(super) fn salvage(
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
