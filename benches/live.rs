//! Live reload figures (issue 5). Not a timed test: it prints medians for BENCHMARKS.md.
//!
//!   cargo bench --bench live -- FILE      (env EMBER_BENCH_RUNS, default 5)
//!
//! FILE (a folded or perf script file) is copied into a temporary folder and followed:
//! the first load, then appends of 1 MB of whole lines (perf: samples) taken from the
//! file itself (poll, which reads only the new bytes, and profile(), which clones the
//! profile), against parsing those 1 MB alone; then a copy renamed over the file,
//! whose reload is a whole read again.

mod common;

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use common::{median, ms};
use ember::formats::{self, LoadOptions};
use ember::live::{Follower, Update};
use ember::sources::input::{Progress, Source};

const APPEND: usize = 1 << 20;

/// About `APPEND` bytes of whole records of `text` (lines, or for perf script the
/// blank-line-ended samples), starting at the record that holds byte `from`.
fn records_at<'a>(text: &'a [u8], from: usize, end_of_record: &[u8]) -> &'a [u8] {
    let after = |at: usize| {
        memchr::memmem::find(&text[at..], end_of_record)
            .map_or(text.len(), |i| at + i + end_of_record.len())
    };
    let before = from.min(text.len()).saturating_sub(end_of_record.len());
    let start = memchr::memmem::rfind(&text[..before], end_of_record)
        .map_or(0, |i| i + end_of_record.len());
    &text[start..after((start + APPEND).min(text.len()))]
}

fn poll_expecting(f: &mut Follower, what: &str) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let u = f.poll(&Progress::new());
    let took = t.elapsed();
    match (&u, what) {
        (Update::Reloaded { .. }, "reload") | (Update::Appended { .. }, "append") => Ok(took),
        _ => bail!("expected a {what}, got {u:?}"),
    }
}

fn load_file(path: &Path) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let p = formats::load(
        &Source::Path(path.to_path_buf()),
        &LoadOptions::default(),
        &Progress::new(),
    )?;
    let took = t.elapsed();
    std::hint::black_box(&p);
    Ok(took)
}

fn main() -> anyhow::Result<()> {
    let Some(file) = common::files().into_iter().next() else {
        eprintln!("usage: cargo bench --bench live -- FILE");
        return Ok(());
    };
    let runs = common::runs();
    let text = fs::read(&file).with_context(|| file.clone())?;
    let dir = tempfile::tempdir()?;
    let name = Path::new(&file)
        .file_name()
        .map_or_else(|| "profile".into(), |n| n.to_os_string());
    let path: PathBuf = dir.path().join(&name);
    fs::write(&path, &text)?;
    println!("{file}: {:.1} MB", text.len() as f64 / 1e6);

    let mut follower = Follower::new(path.clone(), LoadOptions::default());
    let t = Instant::now();
    poll_expecting(&mut follower, "reload")?;
    let first = follower.take_profile().context("no profile")?;
    let first_load = t.elapsed();
    let format = follower.format().map_or("?", |f| f.name());
    println!(
        "first load (poll + take_profile), {format}: {} ({} samples); formats::load: {}",
        ms(first_load),
        first.samples.len(),
        ms(load_file(&path)?)
    );
    drop(first);
    let end_of_record: &[u8] = match follower.format() {
        Some(formats::Format::Perf) => b"\n\n",
        _ => b"\n",
    };

    let (mut polls, mut profiles, mut parses) = (Vec::new(), Vec::new(), Vec::new());
    let mut appended = 0;
    for i in 0..runs {
        let lines = records_at(&text, text.len() / runs * i, end_of_record);
        appended = lines.len();
        let mut f = OpenOptions::new().append(true).open(&path)?;
        f.write_all(lines)?;
        drop(f);
        polls.push(poll_expecting(&mut follower, "append")?);
        let t = Instant::now();
        let p = follower.profile().context("no profile")?;
        profiles.push(t.elapsed());
        drop(p);
        let alone = dir.path().join("alone");
        fs::write(&alone, lines)?;
        parses.push(load_file(&alone)?);
    }
    let (poll, profile) = (median(polls), median(profiles));
    println!(
        "append of {:.2} MB, median of {runs}: poll {} + profile() {} = {}; \
         formats::load of those bytes alone: {}",
        appended as f64 / 1e6,
        ms(poll),
        ms(profile),
        ms(poll + profile),
        ms(median(parses))
    );

    let mut reloads = Vec::new();
    for i in 0..runs.min(3) {
        let copy = dir.path().join(format!(".copy{i}"));
        fs::copy(&path, &copy)?;
        fs::rename(&copy, &path)?;
        let t = Instant::now();
        poll_expecting(&mut follower, "reload")?;
        let p = follower.take_profile().context("no profile")?;
        reloads.push(t.elapsed());
        drop(p);
    }
    println!(
        "rename-over reload (poll + take_profile), median of {}: {} (first load {})",
        reloads.len(),
        ms(median(reloads)),
        ms(first_load)
    );
    Ok(())
}
