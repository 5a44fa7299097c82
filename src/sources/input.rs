//! Where profile bytes come from: a file or stdin, gzipped or not, with progress.

use std::fs::{File, Metadata};
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use flate2::read::MultiGzDecoder;

/// A profile's origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Path(PathBuf),
    Stdin,
}

impl Source {
    /// `-` means stdin.
    pub fn from_arg(arg: &Path) -> Source {
        if arg.as_os_str() == "-" {
            Source::Stdin
        } else {
            Source::Path(arg.to_path_buf())
        }
    }

    pub fn display(&self) -> String {
        match self {
            Source::Path(p) => p.display().to_string(),
            Source::Stdin => "<stdin>".to_string(),
        }
    }

    /// The short name for titles.
    pub fn short_name(&self) -> String {
        match self {
            Source::Path(p) => p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            Source::Stdin => "<stdin>".to_string(),
        }
    }
}

/// Shared load progress: raw bytes read so far, the size when known, and a cancel flag.
#[derive(Debug, Default)]
pub struct Progress {
    read: AtomicU64,
    total: AtomicU64,
    cancel: AtomicBool,
    /// Several inputs read at once (the two sides of a diff): their sizes add up.
    several: AtomicBool,
}

impl Progress {
    pub fn new() -> Arc<Progress> {
        Arc::new(Progress::default())
    }

    /// A progress for several inputs read at once: sizes add up, one cancel
    /// stops them all.
    pub fn several() -> Arc<Progress> {
        let p = Progress::default();
        p.several.store(true, Ordering::Relaxed);
        Arc::new(p)
    }

    pub fn read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// Size of the raw input, 0 when unknown (a pipe).
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// Counts raw bytes into a [`Progress`].
struct Counting<R> {
    inner: R,
    progress: Arc<Progress>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// `inner`, its bytes counted into `progress` as they are read.
pub fn counting<R: Read>(inner: R, progress: Arc<Progress>) -> impl Read {
    Counting { inner, progress }
}

/// An opened input: its first bytes (decompressed) for format detection, and a
/// reader that yields the whole decompressed stream again from the start.
pub struct Opened {
    pub head: Vec<u8>,
    pub reader: Box<dyn Read + Send>,
    pub gzipped: bool,
    /// The opened file's own metadata (taken from the handle, not the path: a
    /// file renamed over the path after the open is another file). `None` for
    /// stdin and bytes in memory.
    pub meta: Option<Metadata>,
}

/// Which file a path names: (device, inode) on unix. Elsewhere every file looks the
/// same and size, mtime and the bytes read tell changes apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId(u64, u64);

impl FileId {
    #[cfg(unix)]
    pub fn of(meta: &Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId(meta.dev(), meta.ino())
    }

    #[cfg(not(unix))]
    pub fn of(_meta: &Metadata) -> FileId {
        FileId(0, 0)
    }
}

/// Opens `path` again, checking that it is still the file `id` names; `None`
/// when it is not (renamed over or recreated since).
pub fn reopen_same(path: &Path, id: FileId) -> Option<File> {
    let file = File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    (FileId::of(&meta) == id).then_some(file)
}

/// How many decompressed bytes detection looks at.
pub const HEAD_LEN: usize = 64 * 1024;

/// Opens `source` for reading. Never writes to it.
pub fn open(source: &Source, progress: &Arc<Progress>) -> io::Result<Opened> {
    let mut opened_meta = None;
    let raw: Box<dyn Read + Send> = match source {
        Source::Path(p) => {
            let f = File::open(p)?;
            if let Ok(meta) = f.metadata() {
                if meta.is_dir() {
                    return Err(io::Error::other("is a directory"));
                }
                if progress.several.load(Ordering::Relaxed) {
                    progress.total.fetch_add(meta.len(), Ordering::Relaxed);
                } else {
                    progress.total.store(meta.len(), Ordering::Relaxed);
                }
                opened_meta = Some(meta);
            }
            Box::new(f)
        }
        Source::Stdin => Box::new(io::stdin()),
    };
    let mut counted: Box<dyn Read + Send> = Box::new(Counting {
        inner: raw,
        progress: progress.clone(),
    });
    let magic = read_up_to(&mut counted, 2)?;
    let gzipped = magic.starts_with(&[0x1f, 0x8b]);
    let rejoined: Box<dyn Read + Send> = Box::new(Cursor::new(magic).chain(counted));
    let mut reader: Box<dyn Read + Send> = if gzipped {
        Box::new(GzipErrors(MultiGzDecoder::new(
            io::BufReader::with_capacity(256 * 1024, rejoined),
        )))
    } else {
        rejoined
    };
    let head = read_up_to(&mut reader, HEAD_LEN)?;
    let reader = Box::new(Cursor::new(head.clone()).chain(reader));
    Ok(Opened {
        head,
        reader,
        gzipped,
        meta: opened_meta,
    })
}

/// A gzip decoder whose errors say they are the gzip layer's: flate2 says
/// only "incomplete deflate stream" for a cut `.gz`, which names neither.
struct GzipErrors<R>(R);

impl<R: Read> Read for GzipErrors<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(gzip_error)
    }
}

fn gzip_error(e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::Interrupted => e,
        io::ErrorKind::UnexpectedEof => io::Error::new(
            e.kind(),
            format!("truncated gzip: the compressed data ends early ({e})"),
        ),
        kind => io::Error::new(kind, format!("bad gzip data: {e}")),
    }
}

/// Reads until `n` bytes or end of input.
fn read_up_to(r: &mut dyn Read, n: usize) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(n.min(HEAD_LEN));
    r.take(n as u64).read_to_end(&mut out)?;
    Ok(out)
}

/// Text with a UTF-16 byte-order mark, re-encoded as UTF-8; `None` without a BOM.
pub fn decode_utf16(bytes: &[u8]) -> Option<Vec<u8>> {
    let le = bytes.starts_with(&[0xff, 0xfe]);
    let be = bytes.starts_with(&[0xfe, 0xff]);
    if !le && !be {
        return None;
    }
    let units = bytes[2..].chunks_exact(2).map(|c| {
        if le {
            u16::from_le_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], c[1]])
        }
    });
    let text: String = char::decode_utf16(units)
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
    Some(text.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_utf16_with_either_bom() {
        let le = [0xff, 0xfe, b'a', 0, b';', 0, b'b', 0];
        let be = [0xfe, 0xff, 0, b'a', 0, b';', 0, b'b'];
        assert_eq!(decode_utf16(&le).as_deref(), Some(&b"a;b"[..]));
        assert_eq!(decode_utf16(&be).as_deref(), Some(&b"a;b"[..]));
        assert_eq!(decode_utf16(b"a;b 1"), None);
    }
}
