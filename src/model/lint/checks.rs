//! The checks, each a function of the scan's shares that pushes its finding.

use std::collections::HashMap;

use super::names::{self, Class};
use super::{
    DEBUG_PATH_SHARE, Finding, JIT_SHARE, LintKind, MAX_HZ, MIN_HZ, MOST, PERF_MAX_STACK,
    RELEASE_PATH_SHARE, SHORT_NS, Scan, TRUNCATED_SHARE, UNKNOWN_SHARE, WRAPPED_SAMPLES,
    WRAPPER_FRAMES, base_format,
};
use crate::host::sanitize::sanitize;
use crate::model::FrameId;
use crate::model::profile::Profile;
use crate::model::stacks::NO_PREFIX;

/// `62%`; `<1%` for a small non-zero share.
fn pct(share: f64) -> String {
    let p = share * 100.0;
    if p > 0.0 && p < 1.0 {
        "<1%".into()
    } else {
        format!("{p:.0}%")
    }
}

/// The frames of class `bit` that most samples pass through (the innermost
/// such frame of each stack), at most `n`, sanitized and shortened.
fn top_frames(profile: &Profile, scan: &Scan, bit: u16, n: usize) -> String {
    let prefixes = profile.stacks.prefixes();
    let frames = profile.stacks.frames();
    let mut witness: Vec<u32> = Vec::with_capacity(prefixes.len());
    let mut tally: HashMap<u32, f64> = HashMap::new();
    for (s, (&p, &f)) in prefixes.iter().zip(frames).enumerate() {
        let inherited = if p == NO_PREFIX {
            u32::MAX
        } else {
            witness.get(p as usize).copied().unwrap_or(u32::MAX)
        };
        let here = if scan.frame_class[f.0 as usize] & bit != 0 {
            f.0
        } else {
            inherited
        };
        witness.push(here);
        let own = f64::from(scan.own.get(s + 1).copied().unwrap_or(0.0));
        if here != u32::MAX && own > 0.0 {
            *tally.entry(here).or_default() += own;
        }
    }
    let mut top: Vec<(u32, f64)> = tally.into_iter().collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    top.iter()
        .take(n)
        .map(|&(f, _)| short_name(&profile.frames.name(FrameId(f))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A frame name fit for a one-line message: sanitized, at most 60 characters.
fn short_name(name: &str) -> String {
    let clean = sanitize(name);
    if clean.chars().count() <= 60 {
        return clean.into_owned();
    }
    let mut s: String = clean.chars().take(57).collect();
    s.push('…');
    s
}

pub(super) fn debug_build(profile: &Profile, scan: &Scan, out: &mut Vec<Finding>) {
    let w = &scan.weights;
    let advice = "profile the build you ship: cargo build --release (keep names with [profile.release] debug = \"line-tables-only\"), or -O2 -g for C/C++";
    let binary = profile.meta.extra.iter().find(|(k, v)| {
        matches!(k.as_str(), "cmdline" | "binary" | "executable" | "exe") && names::is_debug_path(v)
    });
    if let Some((key, value)) = binary {
        // The path itself, not the start of a long command line.
        let path = value
            .split_whitespace()
            .find(|w| names::is_debug_path(w))
            .unwrap_or(value);
        out.push(Finding {
            kind: LintKind::DebugBuild,
            saw: format!("the {key} names a debug build: {}", short_name(path)),
            advice: advice.into(),
        });
        return;
    }
    let path = scan.share(w.debug_path);
    if path >= DEBUG_PATH_SHARE {
        // The binary most frames under a debug path come from, as an example.
        let mut objects: HashMap<&str, usize> = HashMap::new();
        for m in profile.frame_meta.values() {
            if let Some(o) = m.object.as_deref().filter(|o| names::is_debug_path(o)) {
                *objects.entry(o).or_default() += 1;
            }
        }
        let example = objects
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
            .map(|(o, _)| format!(", e.g. {}", short_name(o)))
            .unwrap_or_default();
        out.push(Finding {
            kind: LintKind::DebugBuild,
            saw: format!(
                "{} of samples in code under a debug build's path (target/debug, cmake-build-debug, /Debug/){example}",
                pct(path)
            ),
            advice: advice.into(),
        });
        return;
    }
    // The binary's own path outweighs what names suggest.
    if scan.share(w.release_path) >= RELEASE_PATH_SHARE {
        return;
    }
    let wrapped = scan.share(w.wrapped);
    let frames = if w.real_frames > 0.0 {
        w.wrapper_frames / w.real_frames
    } else {
        0.0
    };
    if wrapped >= WRAPPED_SAMPLES && frames >= WRAPPER_FRAMES {
        let names = top_frames(profile, scan, Class::WRAPPER, 3);
        let seen = format!(
            "{} of samples pass through two or more calls that optimised builds inline ({} of all frames), e.g. {names}",
            pct(wrapped),
            pct(frames)
        );
        // pprof marks inlining by giving a location several lines; a writer
        // that never does (pprof-rs: a location per frame, inlined or not)
        // looks like a debug build by names alone.
        if base_format(&profile.format) == "pprof" && profile.inline_calls.is_empty() {
            out.push(Finding {
                kind: LintKind::MaybeDebugBuild,
                saw: format!(
                    "may be a debug build, or a symboliser that writes inlined frames as calls of their own \
                     (pprof-rs does; this file marks no inlined lines and names no binary): {seen}"
                ),
                advice: format!(
                    "if the binary was built without optimisation, {advice}; a release build profiled \
                     with pprof-rs looks like this too"
                ),
            });
            return;
        }
        out.push(Finding {
            kind: LintKind::DebugBuild,
            saw: seen,
            advice: advice.into(),
        });
    }
}

/// Formats whose stacks come from unwinding native code (where frame pointers
/// can be missing); interpreters' samplers (py-spy, V8) have shallow stacks
/// of their own.
fn native_format(format: &str) -> bool {
    matches!(
        format,
        "perf" | "folded" | "dtrace" | "macos-sample" | "vtune" | "xctrace" | "pprof" | "gecko"
    )
}

pub(super) fn broken_stacks(profile: &Profile, scan: &Scan, out: &mut Vec<Finding>) {
    let w = &scan.weights;
    let no_stack = scan.share(w.no_stack);
    if no_stack > MOST {
        out.push(Finding {
            kind: LintKind::BrokenStacks,
            saw: format!(
                "{} of samples have no call chain (recorded without -g)",
                pct(no_stack)
            ),
            advice: "record call chains: perf record -g (or --call-graph dwarf)".into(),
        });
        return;
    }
    let mut saw = Vec::new();
    let shallow = scan.share(w.shallow);
    if native_format(base_format(&profile.format)) && shallow > MOST {
        saw.push(format!(
            "{} of samples in stacks of depth <= 2",
            pct(shallow)
        ));
    }
    let unknown = scan.share(w.unknown);
    if unknown >= UNKNOWN_SHARE {
        saw.push(format!(
            "{} of samples pass through [unknown] frames",
            pct(unknown)
        ));
    }
    // Only perf's native stacks are known to start at one of these roots.
    let unrooted = scan.share(w.unrooted);
    if base_format(&profile.format) == "perf" && unrooted > MOST {
        saw.push(format!(
            "{} of samples do not reach a root such as main, _start or clone",
            pct(unrooted)
        ));
    }
    if !saw.is_empty() {
        out.push(Finding {
            kind: LintKind::BrokenStacks,
            saw: saw.join("; "),
            advice: "frame pointers are missing (or no call graph was recorded): build with -fno-omit-frame-pointer (Rust: -C force-frame-pointers=yes), or record with perf record --call-graph dwarf".into(),
        });
    }
}

/// "1.5 s", "250 ms", "40 µs".
fn duration_text(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.0} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.0} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// The span of the samples' times in `range`, else the profile's duration.
fn span_ns(profile: &Profile, range: std::ops::Range<usize>) -> Option<u64> {
    let times = profile.samples.time.as_deref();
    if let Some(t) = times.and_then(|t| t.get(range))
        && t.len() >= 2
    {
        let (lo, hi) = t
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        return (hi > lo).then(|| hi - lo);
    }
    profile.meta.duration_ns.filter(|&d| d > 0)
}

pub(super) fn short_profile(
    profile: &Profile,
    range: std::ops::Range<usize>,
    out: &mut Vec<Finding>,
) {
    if let Some(ns) = span_ns(profile, range).filter(|&ns| ns < SHORT_NS) {
        out.push(Finding {
            kind: LintKind::ShortProfile,
            saw: format!("the profile covers {}", duration_text(ns as f64)),
            advice: "record for a few seconds at least, so that the steady state outweighs start-up and warm-up".into(),
        });
    }
}

pub(super) fn unusual_rate(profile: &Profile, out: &mut Vec<Finding>) {
    let Some((period, vt)) = &profile.meta.period else {
        return;
    };
    let Some(unit_ns) = vt.unit.nanos() else {
        return; // a count of events or bytes: no rate in Hz
    };
    let ns = *period as f64 / vt.scale() * unit_ns;
    if ns <= 0.0 {
        return;
    }
    let hz = 1e9 / ns;
    let advice = if hz < MIN_HZ {
        "sample at 99 to 999 Hz (perf record -F 99; Go's default is 100 Hz) so that a short run still gives enough samples"
    } else if hz > MAX_HZ {
        "sampling this often perturbs the program, and perf throttles or loses samples: 99 to 999 Hz is usual (perf record -F 999)"
    } else {
        return;
    };
    out.push(Finding {
        kind: LintKind::UnusualRate,
        saw: format!(
            "sampling at {} Hz (a sample every {})",
            if hz < 10.0 {
                format!("{hz:.1}")
            } else {
                format!("{hz:.0}")
            },
            duration_text(ns)
        ),
        advice: advice.into(),
    });
}

pub(super) fn idle(profile: &Profile, scan: &Scan, out: &mut Vec<Finding>) {
    let idle = scan.share(scan.weights.idle);
    if idle > MOST {
        out.push(Finding {
            kind: LintKind::Idle,
            saw: format!(
                "{} of samples in idle or waiting code ({})",
                pct(idle),
                top_frames(profile, scan, Class::IDLE, 3)
            ),
            advice: "the system was mostly idle: profile it under load (a benchmark, real traffic), or keep the busy threads (--only-thread, --focus)".into(),
        });
    }
}

/// Whether the profile samples only code on a CPU (perf's events, a Go CPU
/// profile, the native collapsers), so that waiting leaves no trace in it.
fn on_cpu(profile: &Profile) -> bool {
    let waits = |kind: &str| {
        let k = kind.to_ascii_lowercase();
        [
            "wall",
            "off",
            "goroutine",
            "block",
            "mutex",
            "delay",
            "lock",
        ]
        .iter()
        .any(|w| k.contains(w))
    };
    if profile.value_types.iter().any(|vt| waits(&vt.kind))
        || profile
            .meta
            .period
            .as_ref()
            .is_some_and(|(_, vt)| waits(&vt.kind))
    {
        return false;
    }
    match base_format(&profile.format) {
        "perf" => !profile
            .meta
            .extra
            .iter()
            .any(|(k, v)| k == "events" && (v.contains("offcpu") || v.contains("sched:"))),
        "pprof" => profile.value_types.iter().any(|vt| vt.kind == "cpu"),
        "folded" | "dtrace" | "macos-sample" | "vtune" | "xctrace" => true,
        _ => false,
    }
}

/// The host's side (iowait, blocked tasks while this profile ran) is
/// `ember lint --context`'s `host-io-wait`, from the same flags `ember info
/// --context` and the timeline show.
pub(super) fn on_cpu_only(profile: &Profile, scan: &Scan, out: &mut Vec<Finding>) {
    if !on_cpu(profile) {
        return;
    }
    let blocking = scan.share(scan.weights.blocking);
    let saw = if blocking > MOST {
        format!(
            "{} of samples in blocking system calls ({}): the process mostly waits",
            pct(blocking),
            top_frames(profile, scan, Class::BLOCKING, 3)
        )
    } else {
        return;
    };
    out.push(Finding {
        kind: LintKind::OnCpuOnly,
        saw,
        advice: "an on-CPU profile shows no time spent waiting: record wall-clock or off-CPU time too (perf record --off-cpu, perf trace -s, bcc offcputime; py-spy record --idle; async-profiler -e wall)".into(),
    });
}

pub(super) fn unresolved_jit(profile: &Profile, scan: &Scan, out: &mut Vec<Finding>) {
    let jit = scan.share(scan.weights.jit);
    if jit > JIT_SHARE {
        let mut names = top_frames(profile, scan, Class::JIT, 3);
        if names.is_empty() {
            names = "[unknown] in a JIT runtime".into();
        }
        out.push(Finding {
            kind: LintKind::UnresolvedJit,
            saw: format!(
                "{} of samples pass through code without symbols, as JIT code without a symbol map leaves it ({names})",
                pct(jit)
            ),
            advice: "perf reads JIT symbols from /tmp/perf-PID.map when perf script runs: node --perf-basic-prof; Java -XX:+PreserveFramePointer with perf-map-agent (or async-profiler); native code: keep its symbol table (do not strip)".into(),
        });
    }
}

pub(super) fn truncated(profile: &Profile, scan: &Scan, out: &mut Vec<Finding>) {
    let cut = scan.share(scan.weights.truncated);
    if cut <= TRUNCATED_SHARE {
        return;
    }
    let (saw, advice) = if base_format(&profile.format) == "perf" {
        (
            format!(
                "{} of samples have stacks of {PERF_MAX_STACK} frames or more, perf's limit: their callers are cut off",
                pct(cut)
            ),
            "raise the limit (sysctl kernel.perf_event_max_stack=1024, perf record --max-stack 1024) and read totals near the root with care",
        )
    } else {
        (
            format!(
                "{} of samples have stacks of exactly 32, 64 or 128 frames that reach no root: the profiler cut them",
                pct(cut)
            ),
            "Go keeps 64 frames before 1.23 and 128 since (GODEBUG=profstackdepth=N raises it): read totals near the root with care",
        )
    };
    out.push(Finding {
        kind: LintKind::TruncatedStacks,
        saw,
        advice: advice.into(),
    });
}
