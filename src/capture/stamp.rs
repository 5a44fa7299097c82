//! Writing a logger's output with the CLOCK_MONOTONIC time each line arrived
//! ([`crate::context::arrivals`]): for the built-in sampler as it writes, and
//! for vmstat/iostat/mpstat through a relay thread that reads their pipe.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::thread::JoinHandle;

use anyhow::{Context, Result};
use rustix::time::{ClockId, clock_gettime};

use crate::context::arrivals;

fn monotonic_ns() -> i64 {
    let t = clock_gettime(ClockId::Monotonic);
    t.tv_sec
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec)
}

/// A log writer that stamps each line's first byte with the monotonic clock
/// into the log's arrivals file.
pub(crate) struct Stamped {
    log: BufWriter<File>,
    times: BufWriter<File>,
    line: u32,
    at_start: bool,
}

impl Stamped {
    /// Creates `path` and its arrivals file, whose header records the offset
    /// to wall time (`realtime_ns - monotonic_ns` of the capture's anchor).
    pub fn create(path: &Path, realtime_offset_ns: i64, utc_offset_s: i32) -> Result<Stamped> {
        let open = |p: &Path| -> Result<BufWriter<File>> {
            Ok(BufWriter::new(
                File::create(p).with_context(|| format!("creating {}", p.display()))?,
            ))
        };
        let mut times = open(&arrivals::path_of(path))?;
        times.write_all(arrivals::header(realtime_offset_ns, utc_offset_s).as_bytes())?;
        Ok(Stamped {
            log: open(path)?,
            times,
            line: 0,
            at_start: true,
        })
    }
}

impl Write for Stamped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while !rest.is_empty() {
            if self.at_start {
                self.line += 1;
                writeln!(self.times, "{} {}", self.line, monotonic_ns())?;
                self.at_start = false;
            }
            let (chunk, more) = match memchr::memchr(b'\n', rest) {
                Some(i) => {
                    self.at_start = true;
                    rest.split_at(i + 1)
                }
                None => (rest, &[][..]),
            };
            self.log.write_all(chunk)?;
            rest = more;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.log.flush()?;
        self.times.flush()
    }
}

/// Copies `pipe` (a logger's stdout) into `out` as it arrives, flushing
/// after each read, until the logger closes it.
pub(crate) fn relay(
    mut pipe: impl Read + Send + 'static,
    mut out: Stamped,
) -> Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("ember-relay".into())
        .spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = out.flush();
        })
        .context("starting a relay thread")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_line_gets_its_arrival_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vmstat.log");
        let mut s = Stamped::create(&path, 5, 0).unwrap();
        s.write_all(b"head").unwrap();
        s.write_all(b"er\nrow 1\nrow").unwrap();
        s.write_all(b" 2\n").unwrap();
        s.flush().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "header\nrow 1\nrow 2\n"
        );
        let times = std::fs::read_to_string(arrivals::path_of(&path)).unwrap();
        let rows: Vec<(u32, i64)> = times
            .lines()
            .skip(1)
            .map(|l| {
                let (a, b) = l.split_once(' ').unwrap();
                (a.parse().unwrap(), b.parse().unwrap())
            })
            .collect();
        assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2, 3]);
        assert!(rows.windows(2).all(|w| w[0].1 <= w[1].1));
        assert!(times.starts_with(&arrivals::header(5, 0)));
    }
}
