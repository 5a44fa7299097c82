//! Load time per input file, whatever its format (issue 3: a bench per loader).
//! Not a timed test: it prints medians for BENCHMARKS.md.
//!
//!   cargo bench --bench formats -- FILE [FILE ...]   (env EMBER_BENCH_RUNS, default 5)
//!
//! For each file: the detected format, its size, the median load time (detection,
//! decompression and parsing into samples) and the throughput.

mod common;

use std::time::{Duration, Instant};

use ember::formats::{self, LoadOptions};
use ember::sources::input::{Progress, Source};

fn main() -> anyhow::Result<()> {
    let files = common::files();
    let runs = common::runs();
    if files.is_empty() {
        eprintln!("usage: cargo bench --bench formats -- FILE [FILE ...]");
        return Ok(());
    }
    println!(
        "{:<48} {:>14} {:>10} {:>12} {:>10}",
        "file", "format", "MB", "median", "MB/s"
    );
    for file in files {
        let path = std::path::PathBuf::from(&file);
        let size = std::fs::metadata(&path)?.len() as f64 / 1e6;
        let mut times: Vec<Duration> = Vec::new();
        let mut format = String::new();
        for _ in 0..runs.max(1) {
            let t = Instant::now();
            let p = formats::load(
                &Source::Path(path.clone()),
                &LoadOptions::default(),
                &Progress::new(),
            )?;
            times.push(t.elapsed());
            format = p.format.clone();
            std::hint::black_box(&p);
        }
        times.sort();
        let med = times[times.len() / 2];
        let name = path
            .file_name()
            .map_or(file.clone(), |n| n.to_string_lossy().into_owned());
        println!(
            "{:<48} {:>14} {:>10.1} {:>9.1} ms {:>10.0}",
            name,
            format,
            size,
            med.as_secs_f64() * 1e3,
            size / med.as_secs_f64()
        );
    }
    Ok(())
}
