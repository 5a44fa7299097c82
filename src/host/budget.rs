//! Know the memory budget before spending it: what loading a profile will
//! need (from its size, its format and, for line formats, its line count
//! estimated from the head), against the room the limits leave
//! ([`crate::host::limits`]). A load that will not fit is refused before it starts,
//! with the figures, instead of dying halfway.
//!
//! The ratios are the release build's peaks measured on this project's
//! inputs (BENCHMARKS.md, "A small host"): folded text costs about 0.12 byte
//! per byte plus 150 bytes per line (a line is a stack, and distinct stacks
//! are what the model keeps), `perf script` text 0.4 per byte, pprof 12 per
//! decompressed byte (every sample's locations become stacks), speedscope
//! JSON 3 and the other JSON formats 4. A gzip file's decompressed size is
//! its trailer's (modulo 4 GiB: a trailer smaller than the file itself is
//! taken as wrapped). The estimate is a central one, not a bound; the
//! refusal says how to go ahead anyway (`--force-load`).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::formats::{self, Format, LoadOptions};
use crate::host::limits::{Limits, mib};
use crate::sources::input::{self, Progress, Source};

/// What loading one input is expected to need.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The file as named (for messages).
    pub name: String,
    pub format: Format,
    /// Bytes to parse (decompressed).
    pub bytes: u64,
    pub gzipped: bool,
    /// Lines, for line formats (estimated from the head).
    pub lines: Option<u64>,
    /// Bytes of memory the load is expected to add.
    pub need: u64,
}

/// What the viewer needs beyond a batch command's load: its threads, the
/// terminal buffers, the first view (measured: 27 MiB of address space for
/// a tiny profile, against about 10 for `ember info`).
pub const VIEWER_EXTRA: u64 = 16 << 20;

/// Memory a load of `bytes` of `format` adds (`lines` for line formats).
pub fn need(format: Format, bytes: u64, lines: Option<u64>) -> u64 {
    let b = bytes as f64;
    let n = match format {
        Format::Folded => 0.12 * b + 150.0 * lines.unwrap_or(bytes / 64) as f64,
        Format::Perf => 0.4 * b,
        Format::Pprof => 12.0 * b,
        Format::Speedscope => 3.0 * b,
        Format::Cpuprofile | Format::ChromeTrace | Format::Gecko => 4.0 * b,
        // Text collapsed by inferno's collapsers into folded stacks.
        _ => 0.5 * b,
    };
    n as u64
}

/// The estimate for `path` (None for stdin, an unreadable file or one whose
/// format cannot be told: the load then says what is wrong).
pub fn estimate(path: &Path, options: &LoadOptions) -> Option<Estimate> {
    // Only a regular file: reading the head of a FIFO (`<(zcat ...)`) or a
    // device would take it from the load.
    if path == Path::new("-") || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let source = Source::Path(path.to_path_buf());
    let opened = input::open(&source, &Progress::new()).ok()?;
    let on_disk = opened.meta.as_ref()?.len();
    let bytes = if opened.gzipped {
        gzip_size(path, on_disk)?
    } else {
        on_disk
    };
    let complete = (opened.head.len() as u64) >= bytes;
    let format = match options.format {
        Some(f) => f,
        None => formats::detect_head(&opened.head, complete, options, &source.display()).ok()?,
    };
    let lines = format.reads_lines().then(|| {
        // The head's whole lines: bytes per line over them.
        let head = &opened.head;
        let whole = head
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(head.len(), |i| i + 1);
        let newlines = head[..whole].iter().filter(|&&b| b == b'\n').count().max(1) as u64;
        (bytes as f64 * newlines as f64 / whole.max(1) as f64).round() as u64
    });
    Some(Estimate {
        name: source.display(),
        format,
        bytes,
        gzipped: opened.gzipped,
        lines,
        need: need(format, bytes, lines),
    })
}

/// A gzip file's decompressed size from its trailer (ISIZE, the size modulo
/// 2^32 of the last member), unwrapped to at least the file's own size.
fn gzip_size(path: &Path, on_disk: u64) -> Option<u64> {
    let mut f = std::fs::File::open(path).ok()?;
    f.seek(SeekFrom::End(-4)).ok()?;
    let mut tail = [0u8; 4];
    f.read_exact(&mut tail).ok()?;
    Some(unwrap_isize(u32::from_le_bytes(tail), on_disk))
}

/// ISIZE plus the multiple of 4 GiB that makes it at least what `on_disk`
/// compressed bytes can hold. Deflate grows data that does not compress by
/// at most 5 bytes in 64 KiB, and gzip adds a header (18 bytes and the file
/// name), so a smaller file than its compressed form is real (a 173-byte
/// file of 165 bytes) and not a wrapped 4 GiB one.
fn unwrap_isize(isize: u32, on_disk: u64) -> u64 {
    let least = on_disk.saturating_sub(on_disk / 8192 + 4096);
    let mut size = u64::from(isize);
    while size < least {
        size += 1 << 32;
    }
    size
}

/// The room left under each limit: a process limit less this process's
/// address space (`VmSize`), a cgroup limit less its usage, and
/// `MemAvailable`. The tightest first.
pub fn room(limits: &Limits) -> Vec<(u64, String)> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let used = |key: &str| crate::host::limits::kib_field(&status, key).unwrap_or(0);
    let mut out: Vec<(u64, String)> = limits
        .limits
        .iter()
        .map(|l| {
            let used = if l.source.starts_with("ulimit") {
                used("VmSize:")
            } else {
                crate::host::limits::cgroup_usage().unwrap_or_else(|| used("VmRSS:"))
            };
            (
                l.bytes.saturating_sub(used),
                format!(
                    "{} of {} left under {}",
                    mib(l.bytes.saturating_sub(used)),
                    mib(l.bytes),
                    l.source
                ),
            )
        })
        .collect();
    if let Some(a) = limits.available {
        out.push((
            a,
            format!("{} available on the host (MemAvailable)", mib(a)),
        ));
    }
    out.sort_by_key(|(b, _)| *b);
    out
}

/// `None` when everything fits; else the message that refuses the load.
/// `extra` is what the command needs beyond the loads (the viewer's
/// [`VIEWER_EXTRA`]).
pub fn refusal(estimates: &[Estimate], extra: u64, room: &[(u64, String)]) -> Option<String> {
    let need: u64 = estimates.iter().map(|e| e.need).sum::<u64>() + extra;
    let (left, why) = room.first()?;
    if need <= *left {
        return None;
    }
    let what: Vec<String> = estimates.iter().map(describe).collect();
    Some(format!(
        "ember: loading {} needs about {}; {why}\n  \
         ember refused before loading rather than run out of memory halfway.\n  \
         try: a higher limit (ulimit -v, systemd-run --user -p MemoryMax=...), the profile on a \
         host with more memory, or --force-load to try anyway (the estimate is from the file's \
         size and format: BENCHMARKS.md, \"A small host\")\n",
        what.join(" and "),
        mib(need),
    ))
}

/// `big.folded (2.2 GiB of folded, about 1.0M lines)`.
pub fn describe(e: &Estimate) -> String {
    let lines = e
        .lines
        .map(|n| format!(", about {} lines", approx(n)))
        .unwrap_or_default();
    let gz = if e.gzipped { " decompressed" } else { "" };
    format!(
        "{} ({}{gz} of {}{lines})",
        e.name,
        mib(e.bytes),
        e.format.name()
    )
}

/// `523`, `100k`, `1.0M`.
fn approx(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{}k", n / 1_000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(format: Format, bytes: u64, lines: Option<u64>) -> Estimate {
        Estimate {
            name: "big.folded".into(),
            format,
            bytes,
            gzipped: false,
            lines,
            need: need(format, bytes, lines),
        }
    }

    #[test]
    fn the_need_follows_the_measured_ratios() {
        // gen_folded's 100k profile: 235 MB in 100,000 lines peaked 41 MiB
        // above a tiny profile's; the estimate is within 15% of it.
        let n = need(Format::Folded, 235_427_150, Some(100_000)) as f64;
        assert!((n / (41.0 * 1048576.0) - 1.0).abs() < 0.15, "{n}");
        // More lines in the same bytes cost more; pprof costs more per byte.
        assert!(
            need(Format::Folded, 1 << 20, Some(20_000)) > need(Format::Folded, 1 << 20, Some(100))
        );
        assert!(need(Format::Pprof, 1 << 20, None) > need(Format::Speedscope, 1 << 20, None));
    }

    #[test]
    fn a_load_is_refused_only_when_it_does_not_fit_and_the_message_has_the_figures() {
        let big = est(Format::Folded, 2_400_000_000, Some(1_000_000));
        let room = vec![(
            146 << 20,
            "146 MiB of 150 MiB left under ulimit -v".to_string(),
        )];
        let m = refusal(std::slice::from_ref(&big), 0, &room).unwrap_or_else(|| panic!("fits?"));
        assert!(
            m.contains("loading big.folded (2.2 GiB of folded, about 1.0M lines) needs about"),
            "{m}"
        );
        assert!(m.contains("146 MiB of 150 MiB left under ulimit -v"), "{m}");
        assert!(m.contains("--force-load"), "{m}");
        let small = est(Format::Folded, 1 << 20, Some(10_000));
        assert_eq!(refusal(std::slice::from_ref(&small), 0, &room), None);
        // The viewer's extra can tip it; no limit at all never refuses.
        assert!(refusal(std::slice::from_ref(&small), 200 << 20, &room).is_some());
        assert_eq!(refusal(&[big], 0, &[]), None);
    }

    #[test]
    fn a_wrapped_gzip_trailer_is_unwrapped_to_the_file_size() {
        assert_eq!(unwrap_isize(1000, 10), 1000);
        assert_eq!(unwrap_isize(1000, 5 << 30), (1 << 32) * 2 + 1000);
        // A tiny file bigger compressed than plain (parca's two-stacks.pb.gz).
        assert_eq!(unwrap_isize(165, 173), 165);
        assert_eq!(unwrap_isize(10 << 20, (10 << 20) + 200), 10 << 20);
    }

    #[test]
    fn a_gzip_file_is_estimated_from_its_decompressed_size() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("p.folded.gz");
        let text = "main;work;leaf 1\n".repeat(100_000);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&path, gz.finish().unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}"));
        let e = estimate(&path, &LoadOptions::default()).unwrap_or_else(|| panic!("no estimate"));
        assert_eq!(e.bytes, text.len() as u64);
        assert!(e.gzipped);
        assert_eq!(e.format, Format::Folded);
        assert_eq!(e.lines, Some(100_000));
        assert!(
            describe(&e).contains("2 MiB decompressed of folded, about 100k lines"),
            "{}",
            describe(&e)
        );
    }
}
