//! Detection by content: which format a head of bytes is, or why it is none
//! (empty, a host-context log, JSON that is no profile, unknown text).

use super::{Format, LoadOptions};
use crate::error::LoadError;
use crate::sources::input;

pub(super) const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// The format whose probe is sure. Failing that, text that no probe could judge
/// (one line longer than the head, say, or mostly bad lines) is read as folded
/// stacks, the most forgiving format, whose warnings then say what was skipped.
/// `complete` says whether `head` is the whole input.
pub fn detect(head: &[u8], complete: bool) -> Option<Format> {
    let mut folded_unsure = false;
    for &f in Format::ALL {
        if f == Format::Folded && looks_like_json(head) {
            // JSON that no JSON reader took is no profile; never folded lines.
            return None;
        }
        match f.probe(head, complete) {
            Some(true) => return Some(f),
            None if f == Format::Folded => folded_unsure = true,
            _ => {}
        }
    }
    (folded_unsure && looks_textual(head)).then_some(Format::Folded)
}

/// The format [`detect`] picks for every input that starts with `head`, as soon as
/// that is settled: the first probe (in detection order) that is sure, every probe
/// before it being surely not. `None` while some probe wants more bytes. For a stream
/// that arrives slowly; at its end (or after [`input::HEAD_LEN`] bytes) use `detect`.
pub fn detect_early(head: &[u8]) -> Option<Format> {
    for &f in Format::ALL {
        if f == Format::Folded && looks_like_json(head) {
            return None;
        }
        match f.probe(head, false) {
            Some(true) => return Some(f),
            Some(false) => {}
            None => return None,
        }
    }
    None
}

/// Starts like a JSON object or array: `{"` or `{}`, or `[` then blank, `{`,
/// `[`, `"` or `]`. Folded stacks may start with `[unknown];...`, and a frame
/// beginning `{"` is not something a profiler writes.
fn looks_like_json(head: &[u8]) -> bool {
    let text = strip_bom(head).trim_ascii_start();
    let rest = text.get(1..).unwrap_or_default();
    let next = rest.trim_ascii_start().first();
    match text.first() {
        Some(b'{') => matches!(next, Some(b'"' | b'}')),
        Some(b'[') => {
            matches!(next, Some(b'{' | b'[' | b'"' | b']'))
                || rest.first().is_some_and(u8::is_ascii_whitespace)
        }
        _ => false,
    }
}

/// No NUL bytes and few control characters: plausibly text.
fn looks_textual(head: &[u8]) -> bool {
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t'))
        .count();
    !head.contains(&0) && control * 100 <= head.len()
}

/// The format `load` would read an input as, from its first decompressed bytes
/// (`complete`: they are the whole input). A UTF-16 or UTF-8 byte-order mark is
/// handled as `load` handles it; a head of blanks is [`LoadError::Empty`].
pub fn detect_head(
    head: &[u8],
    complete: bool,
    options: &LoadOptions,
    path: &str,
) -> Result<Format, LoadError> {
    match input::decode_utf16(head) {
        Some(utf8) => detect_text(&utf8, complete, options, path),
        None => detect_text(strip_bom(head), complete, options, path),
    }
}

/// `bytes` without a leading UTF-8 byte-order mark.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes)
}

/// Detection on text whose byte-order mark is gone.
pub(super) fn detect_text(
    head: &[u8],
    complete: bool,
    options: &LoadOptions,
    path: &str,
) -> Result<Format, LoadError> {
    if head.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(LoadError::Empty {
            path: path.to_string(),
        });
    }
    if let Some(f) = options.format {
        return Ok(f);
    }
    // Before the probes: a vmstat log without timestamps is lines of numbers
    // ending in a number, which the folded probe (the catch-all) would take.
    if let Some(kind) = crate::context::detect(head) {
        return Err(LoadError::ContextLog {
            path: path.to_string(),
            kind: kind.name(),
        });
    }
    match detect(head, complete) {
        Some(f) => Ok(f),
        None if looks_like_json(head) => Err(LoadError::NotProfileJson {
            path: path.to_string(),
            head: printable_json_head(head),
        }),
        None => Err(LoadError::Unrecognised {
            path: path.to_string(),
            tried: Format::ALL
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", "),
            head: printable_head(head),
        }),
    }
}

/// The first 60 characters of JSON with its blank runs (newlines, indents)
/// as single spaces: pretty-printed JSON's first line says only `{`.
fn printable_json_head(head: &[u8]) -> String {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let joined = text.split_ascii_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = joined.chars().take(60).collect();
    crate::host::sanitize::sanitize(&cut).into_owned()
}

/// The first line of `head`, cut short and with control characters escaped.
fn printable_head(head: &[u8]) -> String {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let text = String::from_utf8_lossy(&line[..line.len().min(60)]);
    crate::host::sanitize::sanitize(&text).into_owned()
}
