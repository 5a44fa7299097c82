//! Parse figures for the host-context readers (issue 10). Not a timed test: it
//! prints medians for BENCHMARKS.md.
//!
//!   cargo bench --bench context                   (env EMBER_BENCH_RUNS, default 5)
//!
//! Inputs are generated here, deterministically: a day of 1 s `vmstat -t -w`
//! (86,400 reports) and of `iostat -x -t` (sysstat 12.6 columns) with 16
//! devices (86,400 reports).

mod common;

use std::fmt::Write;
use std::time::Instant;

use common::{median, ms, vm_hwm_kib};
use ember::context;

const REPORTS: u64 = 86_400;

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn clock(k: u64) -> (u64, u64, u64) {
    let t = k % 86_400;
    (t / 3600, t / 60 % 60, t % 60)
}

fn vmstat_day() -> String {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut s = String::with_capacity(180 * REPORTS as usize);
    s.push_str("--procs-- -----------------------memory---------------------- ---swap-- -----io---- -system-- ----------cpu---------- -----timestamp-----\n");
    s.push_str("   r    b         swpd         free         buff        cache   si   so    bi    bo   in   cs  us  sy  id  wa  st  gu                 UTC\n");
    for k in 0..REPORTS {
        let (h, m, sec) = clock(k);
        let us = rng.next(90);
        let sy = rng.next(100 - us);
        let _ = writeln!(
            s,
            "{:>4} {:>4} {:>12} {:>12} {:>12} {:>12} {:>4} {:>4} {:>5} {:>5} {:>4} {:>4} {:>3} {:>3} {:>3} {:>3} {:>3} {:>3} 2026-12-02 {h:02}:{m:02}:{sec:02}",
            rng.next(12),
            rng.next(3),
            0,
            17_000_000 + rng.next(1_000_000),
            26_228,
            6_311_456 + rng.next(10_000),
            0,
            0,
            rng.next(20_000),
            rng.next(20_000),
            rng.next(5000),
            rng.next(20_000),
            us,
            sy,
            100 - us - sy,
            0,
            0,
            0
        );
    }
    s
}

fn iostat_day() -> String {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let header = "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util\n";
    let mut s = String::with_capacity(3_300 * REPORTS as usize);
    s.push_str("Linux 6.18.44 (bench) \t12/02/26 \t_x86_64_\t(16 CPU)\n\n");
    let mut v = |s: &mut String, scale: u64| {
        let x = rng.next(scale * 100);
        let _ = write!(s, " {:>6}.{:02}", x / 100, x % 100);
    };
    for k in 0..REPORTS {
        let (h, m, sec) = clock(k);
        let _ = writeln!(s, "12/02/26 {h:02}:{m:02}:{sec:02}");
        s.push_str("avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n        ");
        for _ in 0..6 {
            v(&mut s, 100);
        }
        s.push_str("\n\n");
        s.push_str(header);
        for d in 0..16 {
            let _ = write!(s, "nvme{d}n1      ");
            for _ in 0..22 {
                v(&mut s, 100);
            }
            s.push('\n');
        }
        s.push_str("\n\n");
    }
    s
}

fn main() -> anyhow::Result<()> {
    let runs = common::runs();
    for (name, text) in [
        ("vmstat -t -w, 86,400 reports", vmstat_day()),
        ("iostat -x -t, 16 devices, 86,400 reports", iostat_day()),
    ] {
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..runs {
            let t = Instant::now();
            let src = context::parse(text.as_bytes(), name)?;
            times.push(t.elapsed());
            last = Some(src);
        }
        let Some(src) = last else { continue };
        println!(
            "{name}: {} MiB, {} intervals, {} series, {} warnings; VmHWM {} MiB",
            text.len() >> 20,
            src.intervals.len(),
            src.series.len(),
            src.warnings.len(),
            vm_hwm_kib() >> 10
        );
        println!(
            "  parse            median {}  over {runs} runs",
            ms(median(times))
        );
    }
    Ok(())
}
