//! Time-range figures (issue 10). Not a timed test: it prints medians for
//! BENCHMARKS.md.
//!
//!   cargo bench --bench timerange [-- FILE]     (env EMBER_BENCH_RUNS, default 5)
//!
//! FILE is a profile with sample times (perf script, a trace); without one a
//! deterministic profile of 1,000,000 timed samples over 1,000 s is built in
//! memory (2,000 functions, stacks 4-40 deep). Measures: cutting it to a time
//! range (slice, then the tree of the cut), the timeline's histogram, flags
//! over a day of 1 s vmstat, and the redraw after a timeline cursor key at
//! 200x50 with that log on the timeline.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{median, ms};
use ember::context::{Clock, ContextKind, ContextSource, Entity, Interval, Metric, Series};
use ember::formats::{self, LoadOptions};
use ember::model::timerange::{TimeFilter, Window, slice};
use ember::model::{CallTree, Profile, TreeOptions, ValueType};
use ember::sources::input::{Progress, Source};
use ember::timeline::{Histogram, align, flags::flags, profile_window};
use ember::ui::app::{App, Loaded, Phase};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::Orientation;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const NS: u64 = 1_000_000_000;

/// xorshift64*: deterministic and fast.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// 1,000,000 samples a millisecond apart; consecutive samples share most of
/// their stack, as a sampled thread's do.
fn synthetic() -> Profile {
    let mut p = Profile::new("perf", vec![ValueType::samples()]);
    let names: Vec<String> = (0..2000)
        .map(|i| format!("module{}::function_{i}", i % 37))
        .collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut stack: Vec<usize> = vec![0, 1, 2];
    let mut times = Vec::with_capacity(1_000_000);
    for i in 0..1_000_000u64 {
        let keep = 3 + rng.below(stack.len().max(4) as u64 - 2) as usize;
        stack.truncate(keep.min(stack.len()));
        while stack.len() < 4 || (stack.len() < 40 && rng.below(3) != 0) {
            stack.push(rng.below(2000) as usize);
        }
        let s = p.intern_path(stack.iter().map(|&f| names[f].as_bytes()));
        p.push_sample(s, &[1]);
        times.push(1_000 * NS + i * 1_000_000);
    }
    p.samples.time = Some(times);
    p.meta.duration_ns = Some(1_000 * NS);
    p
}

/// A day of `vmstat -t 1`: 86,400 reports from the profile's start.
fn vmstat_day(start_ns: i64) -> ContextSource {
    let n = 86_400usize;
    let wave = |i: usize, period: usize, amp: f32| amp * ((i % period) as f32 / period as f32);
    let metrics = [
        (Metric::CpuUser, 60.0, 97),
        (Metric::CpuSys, 20.0, 53),
        (Metric::CpuIowait, 40.0, 301),
        (Metric::RunQueue, 6.0, 17),
        (Metric::Blocked, 2.0, 211),
        (Metric::MemFreeKib, 1.6e7, 3600),
    ];
    ContextSource {
        name: "vmstat-day.log".into(),
        kind: ContextKind::Vmstat,
        host: None,
        n_cpus: Some(2),
        clock: Clock::Relative,
        intervals: (0..n as i64)
            .map(|i| Interval {
                end_ns: start_ns + (i + 1) * NS as i64,
                len_ns: NS as i64,
                since_boot: false,
                line: i as u32 + 3,
            })
            .collect(),
        series: metrics
            .iter()
            .map(|&(metric, amp, period)| Series {
                metric,
                entity: Entity::System,
                values: (0..n).map(|i| wave(i, period, amp)).collect(),
            })
            .collect(),
        warnings: vec![],
    }
}

fn main() -> anyhow::Result<()> {
    let runs = common::runs();
    let t = Instant::now();
    let (name, profile) = match common::files().first() {
        Some(file) => {
            let source = Source::from_arg(std::path::Path::new(file));
            let p = formats::load(&source, &LoadOptions::default(), &Progress::new())?;
            (file.clone(), p)
        }
        None => ("synthetic 1M timed samples".to_string(), synthetic()),
    };
    let Some((lo, hi)) = profile_window(&profile) else {
        anyhow::bail!("{name}: no sample times");
    };
    println!(
        "{name}: {} samples, {} stacks, {:.1} s span (ready in {})",
        profile.samples.len(),
        profile.stacks.len(),
        (hi - lo) as f64 / 1e9,
        ms(t.elapsed())
    );
    let span = hi - lo;
    for (label, a, b) in [
        ("10%", 0.45, 0.55),
        ("50%", 0.25, 0.75),
        ("90%", 0.05, 0.95),
    ] {
        let filter = TimeFilter {
            keep: Some(Window {
                start: lo + (span as f64 * a) as u64,
                end: lo + (span as f64 * b) as u64,
            }),
            exclude: vec![],
        };
        let (mut cut, mut tree) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let t = Instant::now();
            let p = slice(&profile, &filter)?;
            cut.push(t.elapsed());
            let t = Instant::now();
            let tr = CallTree::build(&p, TreeOptions::default());
            tree.push(t.elapsed());
            std::hint::black_box(&tr);
        }
        let (c, tr) = (median(cut), median(tree));
        println!(
            "  range of {label}: slice {}, tree {}, together {}",
            ms(c),
            ms(tr),
            ms(c + tr)
        );
    }
    let mut hist = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(Histogram::build(&profile, 0, 180, lo, hi));
        hist.push(t.elapsed());
    }
    println!("  histogram, 180 columns: {}", ms(median(hist)));
    let day = vmstat_day(lo as i64);
    let logs = vec![align(day.clone(), &profile, 0).map_err(anyhow::Error::msg)?];
    let mut fl = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(flags(&logs, &profile, lo as i64, hi as i64, 1_000_000));
        fl.push(t.elapsed());
    }
    println!("  flags over a day of 1 s vmstat: {}", ms(median(fl)));
    // Cursor keys on the timeline: each a redraw.
    let profile = Arc::new(profile);
    let tree = CallTree::build(&profile, TreeOptions::default());
    let loaded = Loaded::new(profile, tree, Orientation::Icicle, Duration::ZERO);
    let mut app = App::new(
        name,
        Keymap::default_map(),
        Theme::new(ColorDepth::C256),
        Phase::Ready(Box::new(loaded)),
        Orientation::Icicle,
    );
    app.contexts_read(vec![Ok(day)]);
    let mut term = Terminal::new(TestBackend::new(200, 50))?;
    ember::ui::draw_frame(&mut term, &mut app)?;
    let mut keys = Vec::new();
    for i in 0..runs.max(10) {
        let t = Instant::now();
        app.update(if i % 2 == 0 {
            Action::TimeRightFast
        } else {
            Action::TimeLeft
        });
        ember::ui::draw_frame(&mut term, &mut app)?;
        keys.push(t.elapsed());
    }
    println!(
        "  timeline cursor key + redraw, 200x50: {}",
        ms(median(keys))
    );
    Ok(())
}
