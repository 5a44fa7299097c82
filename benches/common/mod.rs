//! What the bench binaries share: their arguments, medians, and how figures print.
#![allow(dead_code)]

use std::time::Duration;

/// The FILE arguments (cargo's own `--bench` flag filtered out).
pub fn files() -> Vec<String> {
    std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect()
}

/// Runs per figure: `EMBER_BENCH_RUNS`, 5 by default, at least 1.
pub fn runs() -> usize {
    std::env::var("EMBER_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        .max(1)
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Peak resident memory of this process (VmHWM), in KiB; 0 where unknown.
pub fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmHWM:")
                    .map(|v| v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0))
            })
        })
        .unwrap_or(0)
}
