//! Live reload: follow a file while it is written, or a stream while it arrives.
//!
//! [`Follower`] catches up with whatever happened to one file since it last looked:
//! appended bytes of a line format (folded, perf script) are parsed incrementally,
//! anything else (truncation, a rewrite, a file renamed over it or deleted and made
//! again, a format that cannot be appended to) is read again from the start. A read
//! that fails (a half-written protobuf, gzip or JSON file) keeps the last good state
//! and is tried again at the next change. [`follow_reader`] does the same for a pipe,
//! and [`watch_file`] says when to poll. None of this knows about the UI.

mod reader;
mod watch;

use std::fs::{self, File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

pub use reader::follow_reader;
pub use watch::{WatchHandle, profiles_in, watch_dir, watch_file};

use crate::error::LoadError;
use crate::formats::stream::LineStream;
use crate::formats::{self, Format, LoadOptions};
use crate::model::Profile;
use crate::sources::input::{self, FileId, Progress, Source};

/// How many bytes at the start of a file and just before the read offset are kept
/// to notice a rewrite that is as long as what was read, or longer.
const ENDS: usize = 4096;
/// Read size for the line formats.
const CHUNK: usize = 4 << 20;

/// What [`Follower::poll`] found.
#[derive(Debug)]
pub enum Update {
    /// Nothing changed since the last poll (or since the last failed read).
    Unchanged,
    /// The file does not exist (yet, or any more); the last good profile is kept.
    Missing,
    /// New bytes were appended and read incrementally.
    Appended { new_samples: usize, new_bytes: u64 },
    /// Read from the start: first load, truncation, a file replaced (rename-over,
    /// delete + recreate: inode changed), a rewrite, or a format that is not
    /// appendable (pprof, JSON, gzip).
    Reloaded { samples: usize },
    /// The file is unreadable as it stands (half-written protobuf/gzip/JSON...); the
    /// last good profile is kept and the next change tries again.
    Incomplete(LoadError),
}

/// A file's identity, size and modification time at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    id: FileId,
    len: u64,
    /// `None` when unknown (the file changed while it was read).
    mtime: Option<SystemTime>,
}

impl Stamp {
    fn of(meta: &Metadata) -> Stamp {
        Stamp {
            id: FileId::of(meta),
            len: meta.len(),
            mtime: meta.modified().ok(),
        }
    }
}

/// What the last good read left.
enum State {
    /// A line format read incrementally: the parser state and where it stopped.
    Stream {
        stream: LineStream,
        stamp: Stamp,
        /// Raw bytes of the file read (and fed) so far.
        offset: u64,
        ends: Ends,
    },
    /// Read as a whole; the profile is in `Follower::profile`.
    Whole { stamp: Stamp, format: Format },
}

/// Follows one file: catches up with whatever happened to it since the last poll.
/// Opens the file read-only, never writes.
pub struct Follower {
    path: PathBuf,
    name: String,
    options: LoadOptions,
    state: Option<State>,
    /// The finished profile: always for a whole read, and for a stream the one the
    /// last reload built, until taken or outdated by an append.
    profile: Option<Arc<Profile>>,
    /// The file went missing since the last good read: whatever comes next is read
    /// from the start, even with the same inode number.
    stale: bool,
    /// The file as it was when a read failed, not to be tried again unchanged.
    failed: Option<Stamp>,
}

impl Follower {
    /// A follower of `path`, which need not exist yet. Nothing is read before
    /// the first [`poll`](Follower::poll).
    pub fn new(path: PathBuf, options: LoadOptions) -> Follower {
        Follower {
            name: path.display().to_string(),
            path,
            options,
            state: None,
            profile: None,
            stale: false,
            failed: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The format of the last good read.
    pub fn format(&self) -> Option<Format> {
        self.state.as_ref().map(State::format)
    }

    /// Catches up with the file. Costs a `stat` when nothing changed, the new bytes
    /// (plus two 4 KiB reads) when a line format grew, a whole load otherwise.
    /// `progress` counts the bytes of a whole read and cancels it (the result is
    /// then `Incomplete(Cancelled)`, tried again at the next poll).
    ///
    /// `Appended` may bring no new sample (only part of a line arrived). After
    /// `Incomplete`, polls say `Unchanged` until the file changes again. `Missing`
    /// comes at every poll while the file is absent; whatever appears next is read
    /// from the start. Nothing but `Appended` and `Reloaded` changes the profile.
    pub fn poll(&mut self, progress: &Arc<Progress>) -> Update {
        let meta = match fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.stale = true;
                self.failed = None;
                return Update::Missing;
            }
            Err(e) => return Update::Incomplete(self.io_error(e)),
        };
        if !meta.is_file() {
            return Update::Incomplete(self.io_error(io::Error::other("not a regular file")));
        }
        let now = Stamp::of(&meta);
        if self.failed == Some(now) {
            return Update::Unchanged;
        }
        let grown = match &self.state {
            _ if self.stale => None,
            Some(State::Whole { stamp, .. }) if *stamp == now => return Update::Unchanged,
            Some(State::Stream { stamp, offset, .. }) if stamp.id == now.id => {
                if now.len == *offset && now.mtime.is_some() && now.mtime == stamp.mtime {
                    return Update::Unchanged;
                }
                (now.len >= *offset).then_some(now.len > *offset)
            }
            _ => None,
        };
        if grown == Some(true)
            && let Some(update) = self.append(now)
        {
            return update;
        }
        // Same size, another mtime: a rewrite, unless the bytes read are all still
        // there. A write in progress looks like that for a moment: Linux sets the
        // new mtime before it grows the file.
        if grown == Some(false) && self.still_there(now) {
            return Update::Unchanged;
        }
        self.reload(progress, now)
    }

    /// The last good profile, post-processed like `formats::load` does; `None`
    /// before the first good read. A folded stream shares its parser's profile
    /// (no copy: the parser takes it back, copying only if it is still held,
    /// when more lines arrive); a perf stream's is built on demand (about a
    /// clone of the profile).
    pub fn profile(&mut self) -> Option<Arc<Profile>> {
        if let Some(p) = &self.profile {
            return Some(p.clone());
        }
        match &mut self.state {
            Some(State::Stream { stream, .. }) => {
                finish_stream(stream, &self.options, &self.name).ok()
            }
            _ => None,
        }
    }

    /// Like [`profile`](Follower::profile), but lets go of the profile that a
    /// reload of a line format built instead of keeping a share of it.
    pub fn take_profile(&mut self) -> Option<Arc<Profile>> {
        if matches!(self.state, Some(State::Stream { .. }))
            && let Some(p) = self.profile.take()
        {
            return Some(p);
        }
        self.profile()
    }

    fn io_error(&self, e: io::Error) -> LoadError {
        LoadError::Io {
            path: self.name.clone(),
            error: e,
        }
    }

    /// The file as read before, positioned at the stream's offset: `None` when it
    /// is another file now (identity, or the bytes kept from its start and from just
    /// before the offset differ).
    fn reopen(&self, now: Stamp) -> Option<File> {
        let Some(State::Stream { offset, ends, .. }) = &self.state else {
            return None;
        };
        let mut file = File::open(&self.path).ok()?;
        let meta = file.metadata().ok()?;
        if FileId::of(&meta) != now.id || meta.len() < *offset {
            return None;
        }
        ends.still_in(&mut file, *offset).then_some(file)
    }

    /// Whether the file of the same size still holds the bytes read; if so, its
    /// new mtime is taken as the one read.
    fn still_there(&mut self, now: Stamp) -> bool {
        let same = self.reopen(now).is_some();
        if same && let Some(State::Stream { stamp, .. }) = &mut self.state {
            stamp.mtime = now.mtime;
        }
        same
    }

    /// Reads what was appended after the stream's offset; `None` when the file is
    /// not the one read before: then reload.
    fn append(&mut self, now: Stamp) -> Option<Update> {
        let mut file = self.reopen(now)?;
        let Some(State::Stream {
            stream,
            stamp,
            offset,
            ends,
        }) = &mut self.state
        else {
            return None;
        };
        self.profile = None;
        let before = (stream.samples(), *offset);
        let result = read_into(&mut file, stream, offset, ends, None);
        let after = file.metadata().ok();
        *stamp = stamp_after(now.id, *offset, after.as_ref());
        let update = Update::Appended {
            new_samples: stream.samples() - before.0,
            new_bytes: *offset - before.1,
        };
        Some(match result {
            Ok(()) => update,
            Err(e) => Update::Incomplete(LoadError::Read {
                path: self.name.clone(),
                format: stream.format().name(),
                error: e,
            }),
        })
    }

    /// Reads the file from the start; on failure keeps the last good state.
    fn reload(&mut self, progress: &Arc<Progress>, now: Stamp) -> Update {
        let read = self.read_whole(progress, now).and_then(|(state, profile)| {
            // A loader that shows what it could read of a cut file (pprof) does not
            // get to replace a good profile with it.
            match salvaged(&profile) {
                Some(message) if self.state.is_some() => Err(LoadError::Invalid {
                    path: self.name.clone(),
                    format: state.format().name(),
                    line: 0,
                    message,
                }),
                _ => Ok((state, profile)),
            }
        });
        match read {
            Ok((state, profile)) => {
                let samples = profile.samples.len();
                self.state = Some(state);
                self.profile = Some(profile);
                self.stale = false;
                self.failed = None;
                Update::Reloaded { samples }
            }
            Err(e) => {
                if !matches!(e, LoadError::Cancelled) {
                    self.failed = Some(now);
                }
                Update::Incomplete(e)
            }
        }
    }

    /// A whole read: a line format into a stream that later appends resume, any
    /// other through `formats::load_opened`. The state's stamp is the opened
    /// file's own (`before`, the path's stamp taken before opening, where that
    /// is unknown): if the file changes meanwhile, or another is renamed over
    /// the path, the next poll sees it.
    fn read_whole(
        &self,
        progress: &Arc<Progress>,
        before: Stamp,
    ) -> Result<(State, Arc<Profile>), LoadError> {
        let source = Source::Path(self.path.clone());
        let opened = input::open(&source, progress).map_err(|e| self.io_error(e))?;
        let before = opened.meta.as_ref().map_or(before, Stamp::of);
        let complete = opened.head.len() < input::HEAD_LEN;
        let format = formats::detect_head(&opened.head, complete, &self.options, &self.name)?;
        let plain = !opened.gzipped && input::decode_utf16(&opened.head).is_none();
        let stream = LineStream::new(format, self.options.granularity).filter(|_| plain);
        let Some(mut stream) = stream else {
            let p = formats::load_opened(opened, &self.name, &self.options, progress)?;
            let state = State::Whole {
                stamp: before,
                format,
            };
            return Ok((state, Arc::new(p)));
        };
        // A big folded file is parsed on two threads, then resumed as a stream.
        // Every handle is checked to be the opened file.
        let split = (format == Format::Folded)
            .then(|| formats::parallel_range(&opened, &self.options, &self.name))
            .flatten()
            .and_then(|(start, end, id)| {
                let ends = Ends::of_file(input::reopen_same(&self.path, id)?, end).ok()?;
                let parsed = formats::folded::parse_parallel(&self.path, id, start, end, progress)?;
                Some((start, end, ends, parsed))
            });
        let (mut stream, offset, ends) = match split {
            Some((start, end, ends, parsed)) => {
                drop(opened);
                let (folder, rest) =
                    parsed.map_err(|e| formats::parse_error(e, &self.name, format))?;
                (
                    LineStream::resume_folded(folder, rest, end - start),
                    end,
                    ends,
                )
            }
            None => {
                let bom = opened.head.len() - formats::strip_bom(&opened.head).len();
                let (mut offset, mut ends) = (0, Ends::default());
                let mut reader = opened.reader;
                read_into(
                    &mut reader,
                    &mut stream,
                    &mut offset,
                    &mut ends,
                    Some((progress, bom)),
                )
                .map_err(|e| match e.kind() {
                    io::ErrorKind::Interrupted => LoadError::Cancelled,
                    _ => LoadError::Read {
                        path: self.name.clone(),
                        format: format.name(),
                        error: e,
                    },
                })?;
                (stream, offset, ends)
            }
        };
        let after = fs::metadata(&self.path).ok();
        let after = after.filter(|m| FileId::of(m) == before.id);
        let stamp = stamp_after(before.id, offset, after.as_ref());
        let profile = finish_stream(&mut stream, &self.options, &self.name)?;
        let state = State::Stream {
            stream,
            stamp,
            offset,
            ends,
        };
        Ok((state, profile))
    }
}

impl State {
    fn format(&self) -> Format {
        match self {
            State::Stream { stream, .. } => stream.format(),
            State::Whole { format, .. } => *format,
        }
    }
}

/// A stream's profile as `formats::load` returns it: the parser's own, shared,
/// when the options leave it as it is.
fn finish_stream(
    stream: &mut LineStream,
    options: &LoadOptions,
    name: &str,
) -> Result<Arc<Profile>, LoadError> {
    let format = stream.format();
    if options.keeps_profile()
        && let Some(p) = stream.share()
        && !p.samples.is_empty()
    {
        return Ok(p);
    }
    let p = stream
        .snapshot()
        .map_err(|e| formats::parse_error(e, name, format))?;
    formats::finish_profile(p, options, name, format, false).map(Arc::new)
}

/// Why the profile is only what a cut input held (`ProfileMeta::incomplete`).
fn salvaged(profile: &Profile) -> Option<String> {
    profile.meta.incomplete.clone()
}

/// The stamp of a file read up to `offset`, from its metadata after the read: the
/// modification time counts only if the size then was what was read.
fn stamp_after(id: FileId, offset: u64, after: Option<&Metadata>) -> Stamp {
    Stamp {
        id,
        len: offset,
        mtime: after
            .filter(|m| m.len() == offset)
            .and_then(|m| m.modified().ok()),
    }
}

/// Reads `reader` to its end into `stream`, advancing `offset` and `ends` by what was
/// fed, so they stay true if reading fails half-way. With `whole = (progress, bom)`:
/// checks for cancellation (an `Interrupted` error) and skips `bom` leading bytes.
fn read_into(
    reader: &mut dyn Read,
    stream: &mut LineStream,
    offset: &mut u64,
    ends: &mut Ends,
    whole: Option<(&Arc<Progress>, usize)>,
) -> io::Result<()> {
    // Reads land on a page boundary. malloc's big blocks start 16 bytes past
    // one, and the kernel's copy of page-cache pages to such an address was
    // markedly slower on this project's AMD EPYC VM: a watched 1m.folded spent
    // 1.7x as long in `_copy_to_iter` as `formats::load`, whose reads land at
    // varying offsets, and reached its first frame about 15% later.
    const PAGE: usize = 4096;
    let mut whole_buf = vec![0u8; CHUNK + PAGE];
    let pad = (PAGE - whole_buf.as_ptr() as usize % PAGE) % PAGE;
    let buf = &mut whole_buf[pad..pad + CHUNK];
    let mut skip = whole.map_or(0, |(_, bom)| bom);
    loop {
        if whole.is_some_and(|(p, _)| p.is_cancelled()) {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        let n = match reader.read(buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let bytes = &buf[..n];
        let s = skip.min(n);
        skip -= s;
        stream.feed(&bytes[s..]);
        *offset += n as u64;
        ends.keep(bytes);
    }
}

/// The first and the last [`ENDS`] bytes of what was read.
#[derive(Default)]
struct Ends {
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl Ends {
    /// The ends of the first `offset` bytes of `f`, read from it.
    fn of_file(mut f: File, offset: u64) -> io::Result<Ends> {
        let n = (ENDS as u64).min(offset);
        let mut head = vec![0u8; n as usize];
        f.read_exact(&mut head)?;
        let mut tail = vec![0u8; n as usize];
        f.seek(SeekFrom::Start(offset - n))?;
        f.read_exact(&mut tail)?;
        Ok(Ends { head, tail })
    }

    /// Takes the next bytes read.
    fn keep(&mut self, bytes: &[u8]) {
        let room = ENDS - self.head.len();
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        let tail = &mut self.tail;
        if bytes.len() >= ENDS {
            tail.clear();
            tail.extend_from_slice(&bytes[bytes.len() - ENDS..]);
        } else {
            tail.extend_from_slice(bytes);
            let extra = tail.len().saturating_sub(ENDS);
            tail.drain(..extra);
        }
    }

    /// Whether `file` still starts with the head and has the tail just before
    /// `offset`; leaves it positioned at `offset`.
    fn still_in(&self, file: &mut File, offset: u64) -> bool {
        let mut seen = vec![0u8; ENDS];
        let mut same = |at: u64, kept: &[u8]| {
            let seen = &mut seen[..kept.len()];
            file.seek(SeekFrom::Start(at)).is_ok() && file.read_exact(seen).is_ok() && seen == kept
        };
        same(0, &self.head)
            && same(offset - self.tail.len() as u64, &self.tail)
            && file.stream_position().is_ok_and(|p| p == offset)
    }
}
