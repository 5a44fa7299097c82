//! A profile read from a pipe while it arrives (`ember -`).

use std::io::{self, BufReader, Cursor, Read};
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use flate2::read::MultiGzDecoder;

use crate::error::LoadError;
use crate::formats::stream::LineStream;
use crate::formats::{self, Format, LoadOptions};
use crate::model::Profile;
use crate::sources::input::{self, Progress};

/// How often the loop wakes without data, to notice cancellation.
const IDLE: Duration = Duration::from_millis(100);
/// Most bytes one read hands over.
const READ: usize = 1 << 20;

/// What the reading thread sends.
enum Msg {
    /// The input is gzipped; what follows is decompressed.
    Gzip,
    Data(Vec<u8>),
    Failed(io::Error),
}

/// Where the input is at.
enum Phase {
    /// Too few bytes to know the format yet.
    Head(Vec<u8>),
    /// A line format, parsed as it arrives.
    Lines(LineStream),
    /// Any other format, kept whole until the end.
    Whole(Vec<u8>),
}

/// Reads a pipe/stdin (or any `Read`) as it arrives: detects the format from the
/// first bytes, feeds line formats incrementally and calls `emit(profile, done)`
/// with a snapshot at most every `every` while data flows, and once more
/// (`done = true`) at the end of the stream; other formats are read to the end and
/// emitted once. Errors are `LoadError`s naming `source_name`.
///
/// A thread reads `reader` (and un-gzips it) so that a snapshot is emitted when data
/// pauses; after cancellation (`progress`) this returns at once with
/// `LoadError::Cancelled` and the thread ends at its next read. Snapshots that
/// `formats::finish_profile` rejects (no sample yet) are not emitted.
pub fn follow_reader(
    reader: impl Read + Send + 'static,
    source_name: &str,
    options: &LoadOptions,
    progress: &Arc<Progress>,
    every: Duration,
    mut emit: impl FnMut(Profile, bool),
) -> Result<(), LoadError> {
    let (tx, rx) = mpsc::sync_channel::<Msg>(8);
    thread::Builder::new()
        .name("ember-follow".into())
        .spawn(move || read_loop(reader, &tx))
        .map_err(|e| LoadError::Io {
            path: source_name.to_string(),
            error: e,
        })?;
    let mut phase = Phase::Head(Vec::new());
    let mut gzipped = false;
    let mut emitted: Option<(Instant, usize)> = None;
    loop {
        if progress.is_cancelled() {
            return Err(LoadError::Cancelled);
        }
        let wait = match (&phase, emitted) {
            (Phase::Lines(s), Some((at, n))) if s.samples() != n => {
                every.saturating_sub(at.elapsed())
            }
            _ => IDLE,
        };
        match rx.recv_timeout(wait) {
            Ok(Msg::Gzip) => gzipped = true,
            Ok(Msg::Data(bytes)) => {
                phase = take_bytes(phase, &bytes, options, source_name)?;
            }
            Ok(Msg::Failed(e)) => {
                return Err(match &phase {
                    Phase::Lines(s) => LoadError::Read {
                        path: source_name.to_string(),
                        format: s.format().name(),
                        error: e,
                    },
                    _ => LoadError::Io {
                        path: source_name.to_string(),
                        error: e,
                    },
                });
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if let Phase::Lines(stream) = &phase {
            let due = emitted.is_none_or(|(at, n)| stream.samples() != n && at.elapsed() >= every);
            if due && stream.samples() > 0 {
                let snapshot = stream
                    .snapshot()
                    .map_err(|e| formats::parse_error(e, source_name, stream.format()));
                let format = stream.format();
                if let Ok(p) = snapshot
                    .and_then(|p| formats::finish_profile(p, options, source_name, format, gzipped))
                {
                    emit(p, false);
                }
                emitted = Some((Instant::now(), stream.samples()));
            }
        }
    }
    let profile = match phase {
        Phase::Head(head) => {
            let complete = head.len() < input::HEAD_LEN;
            let cut = &head[..head.len().min(input::HEAD_LEN)];
            let format = formats::detect_head(cut, complete, options, source_name)?;
            match lines(&head, format, options.granularity) {
                Some(stream) => finish_stream(stream, options, source_name, gzipped)?,
                None => whole(head, options, source_name, progress, gzipped)?,
            }
        }
        Phase::Lines(stream) => finish_stream(stream, options, source_name, gzipped)?,
        Phase::Whole(all) => whole(all, options, source_name, progress, gzipped)?,
    };
    emit(profile, true);
    Ok(())
}

/// The reading thread: sends decompressed chunks until the end (the channel then
/// closes), an error, or the receiver leaving.
fn read_loop(reader: impl Read, tx: &mpsc::SyncSender<Msg>) {
    let mut raw = BufReader::with_capacity(READ, reader);
    let magic = match io::BufRead::fill_buf(&mut raw) {
        Ok(b) => b.starts_with(&[0x1f, 0x8b]),
        Err(e) => {
            let _ = tx.send(Msg::Failed(e));
            return;
        }
    };
    let mut source: Box<dyn Read> = if magic {
        if tx.send(Msg::Gzip).is_err() {
            return;
        }
        Box::new(MultiGzDecoder::new(raw))
    } else {
        Box::new(raw)
    };
    let mut buf = vec![0u8; READ];
    loop {
        let msg = match source.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => Msg::Data(buf[..n].to_vec()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Msg::Failed(e),
        };
        let failed = matches!(msg, Msg::Failed(_));
        if tx.send(msg).is_err() || failed {
            return;
        }
    }
}

/// Takes arriving bytes: collects a head until the format is settled, then feeds a
/// line format or keeps the bytes of any other.
fn take_bytes(
    phase: Phase,
    bytes: &[u8],
    options: &LoadOptions,
    name: &str,
) -> Result<Phase, LoadError> {
    match phase {
        Phase::Lines(mut stream) => {
            stream.feed(bytes);
            Ok(Phase::Lines(stream))
        }
        Phase::Whole(mut all) => {
            all.extend_from_slice(bytes);
            Ok(Phase::Whole(all))
        }
        Phase::Head(mut head) => {
            head.extend_from_slice(bytes);
            let Some(format) = settled(&head, options, name)? else {
                return Ok(Phase::Head(head));
            };
            Ok(match lines(&head, format, options.granularity) {
                Some(stream) => Phase::Lines(stream),
                None => Phase::Whole(head),
            })
        }
    }
}

/// The format of an input that starts with `head`, once more bytes cannot change it.
fn settled(head: &[u8], options: &LoadOptions, name: &str) -> Result<Option<Format>, LoadError> {
    if head.len() >= input::HEAD_LEN {
        return formats::detect_head(&head[..input::HEAD_LEN], false, options, name).map(Some);
    }
    if input::decode_utf16(head).is_some() {
        // UTF-16 text is read whole, at the end.
        return Ok(None);
    }
    if options.format.is_some() {
        // Known, once there is more than blanks (an empty input is an error).
        return Ok(formats::detect_head(head, false, options, name).ok());
    }
    Ok(formats::detect_early(formats::strip_bom(head)))
}

/// A stream fed with `head`, for a line format in UTF-8.
fn lines(head: &[u8], format: Format, granularity: formats::Granularity) -> Option<LineStream> {
    if input::decode_utf16(head).is_some() {
        return None;
    }
    let mut stream = LineStream::new(format, granularity)?;
    stream.feed(formats::strip_bom(head));
    Some(stream)
}

fn finish_stream(
    stream: LineStream,
    options: &LoadOptions,
    name: &str,
    gzipped: bool,
) -> Result<Profile, LoadError> {
    let format = stream.format();
    let p = stream
        .finish()
        .map_err(|e| formats::parse_error(e, name, format))?;
    formats::finish_profile(p, options, name, format, gzipped)
}

/// Loads a whole input held in memory (already decompressed).
fn whole(
    all: Vec<u8>,
    options: &LoadOptions,
    name: &str,
    progress: &Progress,
    gzipped: bool,
) -> Result<Profile, LoadError> {
    let head = all[..all.len().min(input::HEAD_LEN)].to_vec();
    let opened = input::Opened {
        head,
        reader: Box::new(Cursor::new(all)),
        gzipped,
        meta: None,
    };
    formats::load_opened(opened, name, options, progress)
}
