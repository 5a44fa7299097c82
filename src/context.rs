//! Host context: what vmstat, iostat, sar, mpstat and dool logs captured next
//! to a profile said about the host, read into one time-series model
//! ([`ContextSource`]) that the timeline, the flags and `ember info` use.
//!
//! Detected by content like the profile formats ([`detect`]). A line that
//! cannot be read is a counted warning with its line number; a file that is
//! none of these formats is one error naming it.
//!
//! Times: with [`Clock::Wall`] and a known offset, `end_ns` is the true UTC
//! instant; without one, the printed local time read as if it were UTC. A log
//! `ember capture` wrote has its lines' arrival times beside it
//! ([`arrivals`]): then [`Clock::Monotonic`], to the microsecond.

pub mod arrivals;
mod build;
mod detect;
mod dool;
mod iostat;
mod iostat_json;
mod model;
mod scan;
mod sysstat;
mod time;
mod vmstat;

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use flate2::read::MultiGzDecoder;

pub use build::ContextOptions;
pub use detect::{detect, is_context};
#[doc(hidden)]
pub use iostat::parallel_splits as iostat_parallel_splits;
#[doc(hidden)]
pub use iostat::set_parallel_min as set_iostat_parallel_min;
pub use model::{
    Clock, ContextKind, ContextSource, ContextWarning, Entity, Interval, Metric, Series, Unit,
};

use build::Builder;
use detect::Sniff;

/// Why a context file could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// Not a format ember reads as host context.
    #[error("{path}: not a host-context log ember reads ({reason})")]
    Unknown { path: String, reason: String },
    /// Detected as `kind` but unusable (no report could be read).
    #[error("{path}: read as {kind}, line {line}: {message}")]
    Invalid {
        path: String,
        kind: &'static str,
        line: u32,
        message: String,
    },
}

/// Reads the context file at `path` (gzip or not). Never writes to it.
pub fn load(path: &Path) -> Result<ContextSource, ContextError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ContextError::Io {
        path: name.clone(),
        source,
    })?;
    let mut source = parse(&bytes, &name)?;
    // ember capture's arrival times, where they lie beside the log.
    if let Ok(text) = std::fs::read_to_string(arrivals::path_of(path)) {
        arrivals::apply(&mut source, &text);
    }
    Ok(source)
}

/// Reads a context log held in memory; `name` is used in messages.
pub fn parse(bytes: &[u8], name: &str) -> Result<ContextSource, ContextError> {
    parse_with(bytes, name, &ContextOptions::default())
}

/// [`parse`] with what the caller knows of the command line that wrote the log.
pub fn parse_with(
    bytes: &[u8],
    name: &str,
    opts: &ContextOptions,
) -> Result<ContextSource, ContextError> {
    let unzipped;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        MultiGzDecoder::new(bytes)
            .read_to_end(&mut out)
            .map_err(|source| ContextError::Io {
                path: name.to_string(),
                source,
            })?;
        unzipped = out;
        &unzipped[..]
    } else {
        bytes
    };
    // invalid UTF-8 is decoded lossily at the edge; the check alone is faster
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    let text = strip_ansi(text);
    let unknown = |reason: &str| ContextError::Unknown {
        path: name.to_string(),
        reason: reason.to_string(),
    };
    match detect::sniff(text.as_bytes()) {
        Sniff::Kind(ContextKind::Vmstat) => vmstat::read(&text, name, opts),
        Sniff::Kind(ContextKind::IostatText) => iostat::read(&text, name, opts),
        Sniff::Kind(
            k @ (ContextKind::IostatJson | ContextKind::MpstatJson | ContextKind::SadfJson),
        ) => iostat_json::read(&text, name, k, opts),
        Sniff::Kind(k @ (ContextKind::Sar | ContextKind::MpstatText)) => {
            sysstat::read_sar(&text, name, k)
        }
        Sniff::Kind(ContextKind::SadfCsv) => sysstat::read_sadf_csv(&text, name),
        Sniff::Kind(ContextKind::Dool) => dool::read(&text, name),
        Sniff::Refused(kind, why) => Err(ContextError::Invalid {
            path: name.to_string(),
            kind,
            line: 1,
            message: why.to_string(),
        }),
        Sniff::Unknown => Err(unknown(
            "not vmstat, iostat, sar, sadf, mpstat or dool/dstat output",
        )),
    }
}

/// Removes SGR colour codes (`S_COLORS=always`): `ESC [ digits ; ... m`.
fn strip_ansi(text: Cow<'_, str>) -> Cow<'_, str> {
    if memchr::memchr(0x1b, text.as_bytes()).is_none() {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = &text[..];
    while let Some(at) = rest.find('\x1b') {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let end = tail
            .strip_prefix('[')
            .and_then(|t| t.find(|c: char| !c.is_ascii_digit() && c != ';'))
            .map(|k| k + 2);
        rest = match end {
            Some(k)
                if tail
                    .as_bytes()
                    .get(k - 1)
                    .is_some_and(u8::is_ascii_alphabetic) =>
            {
                &tail[k..]
            }
            _ => tail,
        };
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The complete lines of `text` with 1-based numbers, `\r` and trailing blanks
/// trimmed. An unterminated last line (a log still being written or cut off)
/// is left out with a warning.
fn lines<'a>(text: &'a str, b: &mut Builder) -> impl Iterator<Item = (u32, &'a str)> + use<'a> {
    numbered(complete(text, b))
}

/// `text` up to its last newline (excluded); a partial last line is a warning.
fn complete<'a>(text: &'a str, b: &mut Builder) -> &'a str {
    match text.rfind('\n') {
        Some(at) => {
            if !text[at + 1..].trim().is_empty() {
                let n = text.bytes().filter(|&c| c == b'\n').count() + 1;
                b.warn(n as u32, "partial last line (no newline): skipped");
            }
            &text[..at]
        }
        None if text.trim().is_empty() => "",
        None => {
            b.warn(1, "partial last line (no newline): skipped");
            ""
        }
    }
}

/// The lines of `complete` (no final newline), numbered from 1, end-trimmed.
fn numbered(complete: &str) -> impl Iterator<Item = (u32, &str)> + use<'_> {
    // `split('\n')`, with the memchr crate's vector search for the newlines
    let mut rest = Some(complete);
    let mut n = 0u32;
    std::iter::from_fn(move || {
        let r = rest?;
        n += 1;
        let line = match memchr::memchr(b'\n', r.as_bytes()) {
            Some(at) => {
                rest = r.get(at + 1..);
                &r[..at]
            }
            None => {
                rest = None;
                r
            }
        };
        Some((n, line.trim_end()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colour_codes_only() {
        let s = strip_ansi(Cow::Borrowed("\x1b[34;1m   14.27\x1b[0m x\x1b"));
        assert_eq!(s, "   14.27 x");
    }

    #[test]
    fn gzip_is_read_and_unknown_text_refused() {
        use std::io::Write;
        let vm = "procs ---\n r  b swpd free buff cache si so bi bo in cs us sy id wa st\n \
                  1 0 0 1000000 1 1 0 0 0 0 1 1 1 1 98 0 0\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(vm.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        let gz = gz.finish().unwrap_or_else(|e| panic!("{e}"));
        let s = parse(&gz, "v.gz").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.intervals.len(), 1);
        let e = parse(b"main;foo 12\n", "f.folded");
        assert!(matches!(e, Err(ContextError::Unknown { .. })), "{e:?}");
    }
}
