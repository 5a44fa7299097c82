//! Resumable parsing of the line formats (folded, perf script): bytes are fed as they
//! arrive (an appended file, a pipe) and a profile can be taken at any point.
//!
//! `parse` of these formats runs on the same state (`folded::Folder`,
//! `perf::Parser`), so what a stream returns is what `parse` returns for the same
//! bytes, whatever the cuts between feeds.

use memchr::{memchr, memrchr};

use super::{Format, ParseError, folded, perf};
use std::sync::Arc;

use crate::model::Profile;

/// The parser state of one line format.
enum Lines {
    Folded(Box<folded::Folder>),
    Perf(Box<perf::Parser>),
}

impl Lines {
    fn chunk(&mut self, lines: &[u8], eof: bool) {
        match self {
            Lines::Folded(f) => f.chunk(lines, eof),
            Lines::Perf(p) => p.chunk(lines, eof),
        }
    }
}

/// A resumable parser for the line formats (folded, perf script).
pub struct LineStream {
    format: Format,
    lines: Lines,
    /// The last fed line, still without its `\n`.
    partial: Vec<u8>,
    /// Bytes fed so far, the partial line included.
    fed: u64,
}

impl LineStream {
    /// `None` for formats that are not read line by line.
    pub fn new(format: Format, granularity: super::Granularity) -> Option<LineStream> {
        let lines = match format {
            Format::Folded => Lines::Folded(Box::new(folded::Folder::new())),
            Format::Perf => Lines::Perf(Box::new(perf::Parser::with_granularity(granularity))),
            _ => return None,
        };
        Some(LineStream {
            format,
            lines,
            partial: Vec::new(),
            fed: 0,
        })
    }

    /// A folded stream that goes on from `folder` (a parallel parse of the
    /// first `fed` bytes, `partial` the unfinished last line among them).
    pub(crate) fn resume_folded(folder: folded::Folder, partial: Vec<u8>, fed: u64) -> LineStream {
        LineStream {
            format: Format::Folded,
            lines: Lines::Folded(Box::new(folder)),
            partial,
            fed,
        }
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// Parses every complete line in `bytes` (after any partial line kept from the
    /// last feed); keeps a trailing partial line for the next feed.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        self.fed += bytes.len() as u64;
        if !self.partial.is_empty() {
            let Some(nl) = memchr(b'\n', bytes) else {
                self.partial.extend_from_slice(bytes);
                return;
            };
            let mut line = std::mem::take(&mut self.partial);
            line.extend_from_slice(&bytes[..=nl]);
            self.lines.chunk(&line, false);
            line.clear();
            self.partial = line;
            bytes = &bytes[nl + 1..];
        }
        match memrchr(b'\n', bytes) {
            Some(nl) => {
                self.lines.chunk(&bytes[..=nl], false);
                self.partial.extend_from_slice(&bytes[nl + 1..]);
            }
            None => self.partial.extend_from_slice(bytes),
        }
    }

    /// The profile as `parse` would return it for the bytes fed so far up to the
    /// last complete line. Costs about a clone of the profile; the stream goes on.
    pub fn snapshot(&self) -> Result<Profile, ParseError> {
        match &self.lines {
            Lines::Folded(f) => Ok(f.snapshot()),
            Lines::Perf(p) => p.snapshot(),
        }
    }

    /// The profile so far (complete lines), shared instead of copied when the
    /// format can: folded hands its profile over and takes it back at the
    /// next line. `None` for perf script, whose profile is assembled at the
    /// end (use [`LineStream::snapshot`]).
    pub fn share(&mut self) -> Option<Arc<Profile>> {
        match &mut self.lines {
            Lines::Folded(f) => Some(f.share()),
            Lines::Perf(_) => None,
        }
    }

    /// End of input: parses the partial last line too and returns what `parse`
    /// of everything fed would return.
    pub fn finish(mut self) -> Result<Profile, ParseError> {
        let partial = std::mem::take(&mut self.partial);
        self.lines.chunk(&partial, true);
        match self.lines {
            Lines::Folded(f) => Ok((*f).finish()),
            Lines::Perf(p) => (*p).finish(),
        }
    }

    /// Samples parsed so far (complete lines only; for perf script, an event whose
    /// stack is still being read is not counted yet).
    pub fn samples(&self) -> usize {
        match &self.lines {
            Lines::Folded(f) => f.samples(),
            Lines::Perf(p) => p.samples(),
        }
    }

    /// Bytes fed so far, the partial last line included.
    pub fn bytes_fed(&self) -> u64 {
        self.fed
    }

    /// Length of the partial last line kept for the next feed.
    pub fn pending(&self) -> usize {
        self.partial.len()
    }
}
