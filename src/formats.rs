//! Input formats: detection by content and one parser per format.
//! Parsers turn bytes into a [`Profile`] of samples; they build no trees.

pub mod adjust;
pub mod chrome;
pub mod collapsers;
mod detect;
pub mod folded;
pub mod gecko;
mod json;
pub mod perf;
pub mod pprof;
pub mod speedscope;
pub mod stream;

use std::io::{self, Cursor, Read};
use std::sync::Arc;

use detect::{UTF8_BOM, detect_text};
pub use detect::{detect, detect_early, detect_head, strip_bom};

use crate::error::LoadError;
use crate::model::Profile;
use crate::sources::input::{self, Progress, Source};

/// A format ember reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// pprof protobuf (`profile.proto`), gzipped or not.
    Pprof,
    /// speedscope's JSON file format.
    Speedscope,
    /// Chrome / V8 / Node `.cpuprofile` JSON.
    Cpuprofile,
    /// Chrome trace-event JSON: CPU profile chunks, duration events, sample traces.
    ChromeTrace,
    /// Firefox Profiler / Gecko profile JSON.
    Gecko,
    /// `perf script` text output.
    Perf,
    /// DTrace `ustack()` aggregations (through inferno).
    Dtrace,
    /// macOS `sample` output (through inferno).
    Sample,
    /// Intel VTune CSV export (through inferno).
    Vtune,
    /// Visual Studio profiler CSV export (through inferno).
    Vsprof,
    /// GHC `.prof` files (through inferno).
    Ghcprof,
    /// Apple `xctrace export` XML (through inferno).
    Xctrace,
    /// Folded ("collapsed") stacks: `a;b;c 42`.
    Folded,
}

impl Format {
    /// In detection order: the most specific probes first, folded last.
    pub const ALL: &'static [Format] = &[
        Format::Pprof,
        Format::Speedscope,
        Format::Cpuprofile,
        Format::ChromeTrace,
        Format::Gecko,
        Format::Perf,
        Format::Dtrace,
        Format::Sample,
        Format::Vtune,
        Format::Vsprof,
        Format::Ghcprof,
        Format::Xctrace,
        Format::Folded,
    ];

    /// The inferno collapser behind a format, if any.
    fn collapser(self) -> Option<collapsers::Kind> {
        Some(match self {
            Format::Dtrace => collapsers::Kind::Dtrace,
            Format::Sample => collapsers::Kind::Sample,
            Format::Vtune => collapsers::Kind::Vtune,
            Format::Vsprof => collapsers::Kind::Vsprof,
            Format::Ghcprof => collapsers::Kind::Ghcprof,
            Format::Xctrace => collapsers::Kind::Xctrace,
            _ => return None,
        })
    }

    /// A line format, read line by line: an appended file or a stream can be
    /// read incrementally ([`stream::LineStream`]).
    pub fn reads_lines(self) -> bool {
        matches!(self, Format::Folded | Format::Perf)
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Pprof => "pprof",
            Format::Speedscope => "speedscope",
            Format::Cpuprofile => "cpuprofile",
            Format::ChromeTrace => "chrome-trace",
            Format::Gecko => "gecko",
            Format::Perf => "perf",
            Format::Dtrace => "dtrace",
            Format::Sample => "macos-sample",
            Format::Vtune => "vtune",
            Format::Vsprof => "vsprof",
            Format::Ghcprof => "ghcprof",
            Format::Xctrace => "xctrace",
            Format::Folded => "folded",
        }
    }

    fn probe(self, head: &[u8], complete: bool) -> Option<bool> {
        if let Some(kind) = self.collapser() {
            return collapsers::probe(kind, head, complete);
        }
        match self {
            Format::Pprof => pprof::probe(head, complete),
            Format::Speedscope => speedscope::probe(head, complete),
            Format::Cpuprofile => chrome::probe_cpuprofile(head, complete),
            Format::ChromeTrace => chrome::probe_trace(head, complete),
            Format::Gecko => gecko::probe(head, complete),
            Format::Perf => perf::probe(head, complete),
            _ => folded::probe(head, complete),
        }
    }

    fn parse(
        self,
        reader: Box<dyn Read + Send>,
        progress: &Progress,
        granularity: Granularity,
    ) -> Result<Profile, ParseError> {
        if let Some(kind) = self.collapser() {
            return collapsers::parse(kind, reader, progress);
        }
        let g = granularity;
        match self {
            Format::Pprof => pprof::parse_with(reader, progress, g),
            Format::Speedscope => speedscope::parse_with(reader, progress, g),
            Format::Cpuprofile => chrome::parse_cpuprofile_with(reader, progress, g),
            Format::ChromeTrace => chrome::parse_trace_with(reader, progress, g),
            Format::Gecko => gecko::parse_with(reader, progress, g),
            Format::Perf => perf::parse_with(reader, progress, g),
            _ => folded::parse(reader, progress),
        }
    }

    /// Whether the format can carry source lines (so another granularity
    /// than function can change the profile).
    pub fn carries_lines(self) -> bool {
        matches!(
            self,
            Format::Pprof
                | Format::Speedscope
                | Format::Cpuprofile
                | Format::ChromeTrace
                | Format::Gecko
                | Format::Perf
        )
    }
}

pub use crate::model::granularity::Granularity;

/// What a parser can fail with; [`load`] adds the file and format.
#[derive(Debug)]
pub enum ParseError {
    Io(io::Error),
    Cancelled,
    Invalid { line: u64, message: String },
}

/// Streams a line-oriented input in large chunks: `f(lines, eof)` gets each run of
/// whole lines (every line ends in `\n`, except that at the end of input the last
/// one may lack it). A line longer than the buffer grows the buffer; cancellation
/// is checked once per chunk. The text formats (folded, perf script) read this way.
pub(crate) fn for_each_line_chunk(
    mut reader: impl Read,
    progress: &Progress,
    mut f: impl FnMut(&[u8], bool),
) -> Result<(), ParseError> {
    const CHUNK: usize = 4 << 20;
    let mut buf = vec![0u8; CHUNK];
    let mut filled = 0;
    loop {
        if progress.is_cancelled() {
            return Err(ParseError::Cancelled);
        }
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = match reader.read(&mut buf[filled..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ParseError::Io(e)),
        };
        let eof = n == 0;
        let scan_from = filled;
        filled += n;
        if eof {
            f(&buf[..filled], true);
            return Ok(());
        }
        let Some(i) = memchr::memrchr(b'\n', &buf[scan_from..filled]) else {
            continue;
        };
        let end = scan_from + i + 1;
        f(&buf[..end], false);
        buf.copy_within(end..filled, 0);
        filled -= end;
    }
}

/// Options that choose how an input is read.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Skip detection and read as this format.
    pub format: Option<Format>,
    /// Show this value type (pprof sample type, perf `samples`/`period`) by default.
    pub sample_type: Option<String>,
    /// Keep only the samples of threads / sub-profiles whose name matches (regex).
    pub only_thread: Option<String>,
    /// Put a process frame at the root of every stack.
    pub process_roots: bool,
    /// Put a thread frame at the root of every stack (under the process, if any).
    pub thread_roots: bool,
    /// Frames by function, line or file.
    pub granularity: Granularity,
}

impl LoadOptions {
    /// Whether [`finish_profile`] leaves a profile as it is (apart from
    /// refusing one without samples): then a parser's profile can be shown
    /// as it stands, shared rather than copied.
    pub fn keeps_profile(&self) -> bool {
        self.sample_type.is_none()
            && self.only_thread.is_none()
            && !self.process_roots
            && !self.thread_roots
    }
}

/// Reads a whole profile from `source`.
pub fn load(
    source: &Source,
    options: &LoadOptions,
    progress: &Arc<Progress>,
) -> Result<Profile, LoadError> {
    let path = source.display();
    let opened = input::open(source, progress).map_err(|e| LoadError::Io {
        path: path.clone(),
        error: e,
    })?;
    if let Source::Path(file) = source
        && let Some(result) = load_folded_parallel(file, &opened, &path, options, progress)
    {
        return result;
    }
    load_opened(opened, &path, options, progress)
}

/// The per-function table of a folded file (plain or gzip) summed line by line
/// without loading the profile ([`folded::tally`]): what `load` and
/// [`crate::model::TopTable::build`] give, in the memory of the frame names.
/// `None` when the input is no folded file, the options change the profile,
/// or the tally sends it to the full load (then nothing is left open).
pub fn top_streamed(
    source: &Source,
    options: &LoadOptions,
    progress: &Arc<Progress>,
) -> Option<Result<(Profile, crate::model::TopTable), LoadError>> {
    let Source::Path(_) = source else {
        return None;
    };
    if !options.keeps_profile() || options.format.is_some_and(|f| f != Format::Folded) {
        return None;
    }
    let path = source.display();
    let opened = match input::open(source, progress) {
        Ok(o) => o,
        Err(e) => return Some(Err(LoadError::Io { path, error: e })),
    };
    if input::decode_utf16(&opened.head).is_some() {
        return None;
    }
    let complete = opened.head.len() < input::HEAD_LEN;
    let head = strip_bom(&opened.head);
    if detect_text(head, complete, options, &path).ok()? != Format::Folded {
        return None;
    }
    let (gzipped, mut reader) = (opened.gzipped, opened.reader);
    if opened.head.starts_with(UTF8_BOM) {
        let mut bom = [0u8; 3];
        if let Err(e) = reader.read_exact(&mut bom) {
            return Some(Err(parse_error(ParseError::Io(e), &path, Format::Folded)));
        }
    }
    match folded::tally(reader, progress) {
        Err(e) => Some(Err(parse_error(e, &path, Format::Folded))),
        Ok(folded::Tallied::Fallback) => None,
        Ok(folded::Tallied::Done(mut profile, table)) => {
            if gzipped {
                profile.format = format!("{} (gzip)", profile.format);
            }
            Some(Ok((*profile, table)))
        }
    }
}

/// A plain (not gzip, not UTF-16) folded file parsed on two threads; `None`
/// when the input is no such file or not worth splitting.
fn load_folded_parallel(
    file: &std::path::Path,
    opened: &input::Opened,
    path: &str,
    options: &LoadOptions,
    progress: &Arc<Progress>,
) -> Option<Result<Profile, LoadError>> {
    let (start, end, id) = parallel_range(opened, options, path)?;
    let result =
        folded::parse_parallel(file, id, start, end, progress)?.map(|(mut folder, rest)| {
            folder.chunk(&rest, true);
            folder.finish()
        });
    Some(
        result
            .map_err(|e| parse_error(e, path, Format::Folded))
            .and_then(|p| finish_profile(p, options, path, Format::Folded, false)),
    )
}

/// The byte range of the opened file that a parallel folded parse reads (the
/// whole file after any UTF-8 byte-order mark) and the file's identity, when it
/// is a plain folded file.
pub(crate) fn parallel_range(
    opened: &input::Opened,
    options: &LoadOptions,
    path: &str,
) -> Option<(u64, u64, input::FileId)> {
    if opened.gzipped || input::decode_utf16(&opened.head).is_some() {
        return None;
    }
    let complete = opened.head.len() < input::HEAD_LEN;
    let format = detect_text(strip_bom(&opened.head), complete, options, path).ok()?;
    if format != Format::Folded {
        return None;
    }
    let meta = opened.meta.as_ref().filter(|m| m.is_file())?;
    let start = (opened.head.len() - strip_bom(&opened.head).len()) as u64;
    Some((start, meta.len(), input::FileId::of(meta)))
}

/// Reads two profiles at once (one thread each) and merges them into one diff
/// profile (see [`crate::model::diff`]). `progress` should come from
/// [`Progress::several`]. An unreadable side is its own error, naming its file.
pub fn load_diff(
    sources: [&Source; 2],
    options: &LoadOptions,
    strip_hex: bool,
    progress: &Arc<Progress>,
) -> Result<Profile, LoadError> {
    let (before, after) = std::thread::scope(|s| {
        let after = s.spawn(|| load(sources[1], options, progress));
        let before = load(sources[0], options, progress);
        if before.is_err() {
            progress.cancel();
        }
        (before, after.join())
    });
    let after = match after {
        Ok(a) => a,
        Err(_) => {
            return Err(LoadError::Invalid {
                path: sources[1].display(),
                format: "diff",
                line: 0,
                message: "internal error while loading".into(),
            });
        }
    };
    let before = before?;
    let after = after?;
    let opts = crate::model::diff::MergeOptions {
        names: [sources[0].short_name(), sources[1].short_name()],
        strip_hex,
    };
    crate::model::diff::merge(before, after, &opts).map_err(|e| LoadError::Invalid {
        path: format!("{} vs {}", sources[0].display(), sources[1].display()),
        format: "diff",
        line: 0,
        message: e.to_string(),
    })
}

/// Reads a whole profile from an input that [`input::open`] opened; `path` names it
/// in errors.
pub fn load_opened(
    opened: input::Opened,
    path: &str,
    options: &LoadOptions,
    progress: &Progress,
) -> Result<Profile, LoadError> {
    let io_err = |e: io::Error| LoadError::Io {
        path: path.to_string(),
        error: e,
    };
    let complete = opened.head.len() < input::HEAD_LEN;
    let (head, reader): (Vec<u8>, Box<dyn Read + Send>) = match input::decode_utf16(&opened.head) {
        Some(_) => {
            // UTF-16 text is rare and small: decode all of it up front.
            let mut all = Vec::new();
            let mut r = opened.reader;
            r.read_to_end(&mut all).map_err(io_err)?;
            let utf8 = input::decode_utf16(&all).unwrap_or_default();
            (utf8.clone(), Box::new(Cursor::new(utf8)))
        }
        None if opened.head.starts_with(UTF8_BOM) => {
            // Drop the byte-order mark so it does not stick to the first frame.
            let mut r = opened.reader;
            let mut bom = [0u8; 3];
            r.read_exact(&mut bom).map_err(io_err)?;
            (opened.head[3..].to_vec(), r)
        }
        None => (opened.head, opened.reader),
    };
    let format = detect_text(&head, complete, options, path)?;
    let profile = format
        .parse(reader, progress, options.granularity)
        .map_err(|e| parse_error(e, path, format))?;
    finish_profile(profile, options, path, format, opened.gzipped)
}

/// A parser's error as the [`LoadError`] naming the input and the format.
pub fn parse_error(e: ParseError, path: &str, format: Format) -> LoadError {
    match e {
        ParseError::Io(e) => LoadError::Read {
            path: path.to_string(),
            format: format.name(),
            error: e,
        },
        ParseError::Cancelled => LoadError::Cancelled,
        ParseError::Invalid { line, message } => LoadError::Invalid {
            path: path.to_string(),
            format: format.name(),
            line,
            message,
        },
    }
}

/// What `load` does after parsing, for every profile however it was read (live
/// snapshots too): the gzip note, `--sample-type`, `--only-thread`, process and
/// thread roots, and the error for an input without a valid sample.
pub fn finish_profile(
    mut profile: Profile,
    options: &LoadOptions,
    path: &str,
    format: Format,
    gzipped: bool,
) -> Result<Profile, LoadError> {
    let invalid = |message: String| LoadError::Invalid {
        path: path.to_string(),
        format: format.name(),
        line: 0,
        message,
    };
    if gzipped {
        profile.format = format!("{} (gzip)", profile.format);
    }
    if let Some(want) = &options.sample_type {
        adjust::select_value(&mut profile, want).map_err(invalid)?;
    }
    if let Some(pattern) = &options.only_thread {
        adjust::only_threads(&mut profile, pattern).map_err(invalid)?;
    }
    if !adjust::add_roots(&mut profile, options.process_roots, options.thread_roots) {
        profile
            .notes
            .push("no thread or process information for --thread/--process".into());
    }
    if profile.samples.is_empty() {
        let first = profile.warnings.first.first();
        return Err(LoadError::Invalid {
            path: path.to_string(),
            format: format.name(),
            line: first.map_or(0, |w| w.line),
            message: match first {
                Some(w) => format!(
                    "no valid sample in the input ({} bad lines; the first: {})",
                    profile.warnings.count, w.message
                ),
                None => "no samples in the input".to_string(),
            },
        });
    }
    Ok(profile)
}
