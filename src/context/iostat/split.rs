//! A big iostat text log read on two threads. Every report repeats its
//! `avg-cpu:` and `Device` headers, so the text after a report boundary near
//! the middle reads the same without what came before: the two halves are
//! read at once and merged into what one pass gives.
//!
//! What one pass carries across a report boundary, and how the merge keeps it:
//! the column maps (rebuilt from the headers each report repeats), the series
//! (matched by metric and entity, NaN where a device is in one half only),
//! since-boot (only the first report of the file: the second half has none),
//! the banner (host, CPUs, date: the second half's only if it has one), the
//! stamps (resolved together after the merge, so the date order, the zone and
//! the clock are decided over the whole file), warnings and line numbers
//! (the second half's shifted by the first half's lines). Stamps carry their
//! own date, so there is no date to hand on for midnight.

use std::sync::atomic::{AtomicU64, Ordering};

use super::super::time::{self, Stamp};
use super::super::{ContextOptions, complete};
use super::Reader;

/// Texts smaller than this are read on one thread: splitting would save less
/// than it costs. A variable only so that tests can split small files.
static PARALLEL_MIN: AtomicU64 = AtomicU64::new(16 << 20);

/// How many texts were read split (tests check the split path was taken).
static SPLITS: AtomicU64 = AtomicU64::new(0);

/// Splits iostat text logs from `bytes` up (tests only: the default is 16 MiB).
#[doc(hidden)]
pub fn set_parallel_min(bytes: u64) {
    PARALLEL_MIN.store(bytes, Ordering::Relaxed);
}

/// How many iostat text logs were read in two halves so far (tests only).
#[doc(hidden)]
pub fn parallel_splits() -> u64 {
    SPLITS.load(Ordering::Relaxed)
}

/// Where the second half starts.
#[derive(Clone, Copy, PartialEq)]
enum Boundary {
    /// A timestamp line: it always starts a report.
    Stamp,
    /// An `avg-cpu:` line (logs without times): it starts a report when the
    /// one before has content.
    AvgCpu,
}

/// The text read in two halves, merged; `None` when it is too small, has no
/// report boundary after its middle, or the halves do not join the way one
/// pass would (then read it in one pass).
pub(super) fn read<'o>(text: &str, name: &str, opts: &'o ContextOptions) -> Option<Reader<'o>> {
    if (text.len() as u64) < PARALLEL_MIN.load(Ordering::Relaxed).max(1) {
        return None;
    }
    let mut a = Reader::new(name, opts);
    let whole = complete(text, &mut a.b);
    let (at, kind) = boundary(whole)?;
    // the newline before the boundary ends the first half
    let first = whole.get(..at.checked_sub(1)?)?;
    let second = whole.get(at..)?;
    let mut b = Reader::new(name, opts);
    b.later = true;
    // no second thread to be had: one pass
    let (a, n, b) = std::thread::scope(|s| {
        let later = std::thread::Builder::new().spawn_scoped(s, move || {
            b.run(second);
            b
        });
        let later = later.ok()?;
        let n = a.run(first);
        Some((a, n, later.join().ok()?))
    })?;
    let merged = merge(a, n, b, kind)?;
    SPLITS.fetch_add(1, Ordering::Relaxed);
    Some(merged)
}

/// `b` (read from the line after `a`'s `n` lines) appended to `a`, if one
/// pass would have started a report at `b`'s first line with nothing of
/// `a`'s open: the state a pass would carry into it is then what `b` started
/// with, but for what [`Reader::times`] and the builder gather.
fn merge<'o>(mut a: Reader<'o>, n: u32, b: Reader<'o>, kind: Boundary) -> Option<Reader<'o>> {
    let joins = a.b.len() > 0
        && !a.expect_cpu
        && a.table.is_none()
        && (kind == Boundary::Stamp || a.content)
        && b.b.len() > 0
        && b.stamps.len() == b.b.len()
        && b.b.first_line() == Some(1);
    if !joins {
        return None;
    }
    if b.blanks_after_banner.is_some() {
        // a banner in the second half: the last one wins, as in one pass
        a.b.host.clone_from(&b.b.host);
        a.b.n_cpus = b.b.n_cpus;
        a.banner_date = b.banner_date;
    }
    a.stamps.extend(b.stamps);
    a.comma |= b.comma;
    a.c_like |= b.c_like;
    a.b.append(b.b, n);
    Some(a)
}

/// The first report boundary after the middle of `text`: a timestamp line,
/// or, when the `avg-cpu:` line found first has none before it, that line.
/// Looks at most a few MiB on (a report is a few KiB).
fn boundary(text: &str) -> Option<(usize, Boundary)> {
    const LOOK: usize = 4 << 20;
    let mid = text.len() / 2;
    let mut at = mid + memchr::memchr(b'\n', text.as_bytes().get(mid..)?)? + 1;
    let mut prev = line_start_before(text, at);
    while at < text.len() && at - mid < LOOK {
        let end = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |k| at + k);
        let line = text.get(at..end)?.trim_end();
        if is_stamp(line) {
            return Some((at, Boundary::Stamp));
        }
        if line.starts_with("avg-cpu:") {
            let before = prev.and_then(|p| text.get(p..at.checked_sub(1)?));
            if before.is_some_and(|l| is_stamp(l.trim_end())) {
                return Some((prev?, Boundary::Stamp));
            }
            return Some((at, Boundary::AvgCpu));
        }
        prev = Some(at);
        at = end + 1;
    }
    None
}

/// The start of the line that ends just before `at` (a line start).
fn line_start_before(text: &str, at: usize) -> Option<usize> {
    let end = at.checked_sub(1)?;
    let head = text.as_bytes().get(..end)?;
    Some(memchr::memrchr(b'\n', head).map_or(0, |k| k + 1))
}

/// A line the reader takes for a report's timestamp (see `Reader::line`).
fn is_stamp(line: &str) -> bool {
    let head = line.trim_start_matches([' ', '\t']);
    head.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && !line.ends_with("Device")
        && time::parse_stamp(line).is_some_and(|s| !matches!(s, Stamp::TimeOnly(_)))
}
