//! `ember perf.data`: the binary file is turned into `perf script` text by the
//! perf on PATH, with the text's growth shown while perf works.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Result, bail};

use super::{Prepared, Status, TICK, TempDir, human_bytes};

/// perf.data's magic (file and pipe mode alike).
const MAGIC: &[u8; 8] = b"PERFILE2";

/// How much of perf's stderr an error shows.
const STDERR_KEPT: usize = 16 * 1024;

/// Whether `path` is a file in perf's binary format.
pub fn is_perf_data(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == MAGIC
}

/// Runs `perf script --header -i DATA [extra]` into a private temporary file.
/// perf's stderr is kept: shown whole (its end) when perf fails, its warnings
/// (lost samples, missing symbols) repeated when it succeeds.
pub fn perf_script(data: &Path, extra: &[&str]) -> Result<Prepared> {
    let temp = TempDir::new()?;
    let name = data
        .file_name()
        .map_or_else(|| "perf.data".into(), |n| n.to_string_lossy().into_owned());
    let out = temp.path().join(format!("{name} (perf script)"));
    let file = std::fs::File::create(&out)
        .map_err(|e| anyhow::anyhow!("creating {}: {e}", out.display()))?;
    let perf = std::env::var_os("EMBER_PERF").unwrap_or_else(|| "perf".into());
    let child = Command::new(&perf)
        .arg("script")
        .arg("--header")
        .args(extra)
        .arg("-i")
        .arg(data)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => bail!(
            "{}: is perf's binary format (perf.data); ember reads it through `perf script`, which could not be run ({e}). \
             Install perf (Debian: apt-get install linux-perf; Ubuntu: apt-get install linux-tools-$(uname -r); \
             Fedora/RHEL: dnf install perf), or run `perf script --header -i {} > perf.txt` where perf is and open perf.txt",
            data.display(),
            data.display()
        ),
    };
    let stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        if let Some(mut e) = stderr {
            let _ = e.read_to_end(&mut all);
        }
        all
    });
    let started = Instant::now();
    let mut status_line = Status::new(&format!("reading {} with perf script…", data.display()));
    let mut shown = started;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        // Looked at often, so a short run ends without waiting a tick;
        // redrawn once a tick.
        if shown.elapsed() >= TICK {
            shown = Instant::now();
            let written = std::fs::metadata(&out).map_or(0, |m| m.len());
            status_line.show(&format!(
                "perf script {}: {} of text in {:.1} s",
                data.display(),
                human_bytes(written),
                started.elapsed().as_secs_f64()
            ));
        }
        std::thread::sleep(TICK / 20);
    };
    status_line.done();
    let err_text = reader.join().unwrap_or_default();
    let err_text = String::from_utf8_lossy(tail(&err_text, STDERR_KEPT));
    let err_text = crate::host::sanitize::sanitize(err_text.trim_end()).into_owned();
    match status {
        Ok(s) if s.success() => {
            for line in err_text.lines().filter(|l| !l.trim().is_empty()).take(5) {
                eprintln!("ember: perf script: {line}");
            }
            Ok(Prepared {
                path: out,
                _temp: temp,
            })
        }
        Ok(s) => {
            let said = if err_text.is_empty() {
                " (it printed nothing on stderr)".to_string()
            } else {
                format!(":\n{err_text}")
            };
            bail!("{}: `perf script` failed ({s}){said}", data.display())
        }
        Err(e) => bail!("{}: waiting for `perf script`: {e}", data.display()),
    }
}

/// The last `n` bytes of `b`, from a line start where one is near.
fn tail(b: &[u8], n: usize) -> &[u8] {
    if b.len() <= n {
        return b;
    }
    let cut = &b[b.len() - n..];
    match memchr::memchr(b'\n', cut) {
        Some(i) => &cut[i + 1..],
        None => cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_whole_lines_of_the_end() {
        assert_eq!(tail(b"abc", 10), b"abc");
        assert_eq!(tail(b"one\ntwo\nthree", 8), b"three");
        assert_eq!(tail(b"abcdef", 3), b"def");
    }

    #[test]
    fn knows_perf_data_by_its_magic() {
        let Ok(dir) = TempDir::new() else {
            panic!("no temporary directory")
        };
        let yes = dir.path().join("a");
        let no = dir.path().join("b");
        assert!(std::fs::write(&yes, b"PERFILE2\x68\0\0\0").is_ok());
        assert!(std::fs::write(&no, b"main;foo 1\n").is_ok());
        assert!(is_perf_data(&yes));
        assert!(!is_perf_data(&no));
        assert!(!is_perf_data(&dir.path().join("missing")));
    }
}
