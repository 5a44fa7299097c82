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

mod convert;
mod labels;
pub mod proto;
mod prune;
mod stacks;
mod tables;
mod wire;

use std::io::Read;

use prost::Message;

use self::convert::convert;
use self::wire::{Kind, Stop, check, field_end, salvage, tag};
use super::ParseError;
use crate::model::Profile;
use crate::sources::input::Progress;

/// How many bytes are read between two checks of the cancel flag.
const CHUNK: u64 = 4 << 20;

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
    parse_with(reader, progress, crate::formats::Granularity::Function)
}

/// [`parse`] with frames at `granularity` (see [`convert`]).
pub fn parse_with(
    reader: impl Read,
    progress: &Progress,
    granularity: crate::formats::Granularity,
) -> Result<Profile, ParseError> {
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
    let mut profile = convert(&message, len, progress, granularity)?;
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

#[cfg(test)]
mod tests;
