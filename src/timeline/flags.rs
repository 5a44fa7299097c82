//! What the host logs say a triager should notice about the profile's window
//! (the profiling guide's checklist, `docs/context-formats.md` §9): an on-CPU
//! profile while the host waited on I/O, a run queue longer than the CPUs,
//! swapping, a busy or queued disk, steal time, and too few samples.
//!
//! A condition counts when it is sustained: in at least two reports of the
//! window and in a tenth of them, so a one-second blip is not a finding.

use super::Aligned;
use crate::context::{Entity, Metric};
use crate::model::Profile;

/// How loud a flag is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Note,
    Warn,
}

/// One finding, with what to do about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Flag {
    pub severity: Severity,
    /// A stable name, as `ember lint --context` prints it: `host-io-wait`.
    pub code: &'static str,
    /// Short, for the timeline's title and the header: "iowait 44%".
    pub short: String,
    /// What the logs show, with figures.
    pub saw: String,
    /// What to do about it (or how to read the profile), a sentence.
    pub advice: String,
    /// The first and last report (profile clock) where it held.
    pub from_ns: i64,
    pub to_ns: i64,
}

impl Flag {
    /// The whole sentence: what was seen, then the advice.
    pub fn message(&self) -> String {
        format!("{}. {}", self.saw, self.advice)
    }
}

/// Below this many samples a profile (or a range of it) is noise.
pub const FEW_SAMPLES: usize = 50;

/// Whether the profile only sees time on the CPU (the usual sampling
/// profilers), so time spent waiting is invisible to it.
pub fn on_cpu(p: &Profile) -> bool {
    let named = |s: &str| {
        let s = s.to_ascii_lowercase();
        s.contains("wall") || s.contains("off") || s.contains("sched") || s.contains("idle")
    };
    !p.value_types.iter().any(|vt| named(&vt.kind))
        && !p.meta.extra.iter().any(|(k, v)| k == "events" && named(v))
}

/// The reports of one column inside `[lo, hi)` (profile clock): (end, value).
fn column(log: &Aligned, metric: Metric, entity: &Entity, lo: i64, hi: i64) -> Vec<(i64, f32)> {
    let Some(s) = log.source.series(metric, entity) else {
        return Vec::new();
    };
    log.source
        .reports()
        .filter_map(|(i, iv)| {
            let end = iv.end_ns + log.shift_ns;
            let start = end - iv.len_ns;
            let v = *s.values.get(i)?;
            (end > lo && start < hi && v.is_finite()).then_some((end, v))
        })
        .collect()
}

/// Where `holds` is sustained in `col`: (first, last, the peak value).
fn sustained(col: &[(i64, f32)], holds: impl Fn(f32) -> bool) -> Option<(i64, i64, f32)> {
    let hits: Vec<&(i64, f32)> = col.iter().filter(|(_, v)| holds(*v)).collect();
    if hits.len() < 2 || hits.len() * 10 < col.len() {
        return None;
    }
    let peak = hits.iter().map(|(_, v)| *v).fold(f32::MIN, f32::max);
    Some((hits[0].0, hits[hits.len() - 1].0, peak))
}

/// Every flag for the window `[lo, hi)` of the profile's clock, where the
/// profile (or its range) holds `samples` samples. `n_cpus` from the logs.
pub fn flags(logs: &[Aligned], profile: &Profile, lo: i64, hi: i64, samples: usize) -> Vec<Flag> {
    let mut out = Vec::new();
    let n_cpus = logs.iter().find_map(|l| l.source.n_cpus);
    let sys = Entity::System;
    let first = |metric: Metric| -> Vec<(i64, f32)> {
        logs.iter()
            .map(|l| column(l, metric, &sys, lo, hi))
            .find(|c| !c.is_empty())
            .unwrap_or_default()
    };
    let mut flag = |severity,
                    code,
                    short: String,
                    (saw, advice): (String, &str),
                    (a, b, _): (i64, i64, f32)| {
        out.push(Flag {
            severity,
            code,
            short,
            saw,
            advice: advice.to_string(),
            from_ns: a,
            to_ns: b,
        });
    };
    let wait = sustained(&first(Metric::CpuIowait), |v| v > 20.0);
    let blocked = sustained(&first(Metric::Blocked), |v| v >= 1.0);
    if on_cpu(profile) && (wait.is_some() || blocked.is_some()) {
        let what = match (wait, blocked) {
            (Some(w), Some(b)) => format!("iowait up to {:.0}% and {:.0} blocked tasks", w.2, b.2),
            (Some(w), None) => format!("iowait up to {:.0}%", w.2),
            (None, Some(b)) => format!("{:.0} blocked (D-state) tasks", b.2),
            (None, None) => String::new(),
        };
        flag(
            Severity::Warn,
            "host-io-wait",
            "waiting on I/O".into(),
            (
                format!(
                    "the host was waiting on I/O ({what}) but this profile only sees time on the CPU: \
                     it cannot show the wait"
                ),
                "Take a wall-clock or off-CPU profile: perf record -e sched:sched_switch -g, \
                 offcputime-bpfcc, py-spy record --idle, async-profiler -e wall",
            ),
            wait.or(blocked).unwrap_or_default(),
        );
    }
    if let Some(cpus) = n_cpus
        && let Some(r) = sustained(&first(Metric::RunQueue), |v| v > cpus as f32)
    {
        let severe = r.2 > 2.0 * cpus as f32;
        flag(
            if severe {
                Severity::Warn
            } else {
                Severity::Note
            },
            "host-run-queue",
            format!("run queue {:.0} > {cpus} CPUs", r.2),
            (
                format!(
                    "more runnable tasks than CPUs (r up to {:.0} on {cpus} CPUs): \
                     the CPU is saturated and samples show who got it, not who waited for it",
                    r.2
                ),
                "Read the profile as where the CPU went; for who waited, see the scheduler's \
                 delays (perf sched record, then perf sched latency)",
            ),
            r,
        );
    }
    let si = sustained(&first(Metric::SwapInKibs), |v| v > 0.0);
    let so = sustained(&first(Metric::SwapOutKibs), |v| v > 0.0);
    if let Some(s) = si.or(so) {
        flag(
            Severity::Warn,
            "host-swapping",
            "swapping".into(),
            (
                "the host was swapping (si/so above 0): memory pressure, and time spent in page faults"
                    .into(),
                "Check what holds the memory (free -m, ps aux --sort=-rss); page-fault time shows \
                 as kernel frames in the profile",
            ),
            s,
        );
    }
    if let Some(st) = sustained(&first(Metric::CpuSteal), |v| v > 10.0) {
        flag(
            Severity::Note,
            "host-steal",
            format!("steal {:.0}%", st.2),
            (
                format!(
                    "steal time up to {:.0}%: the hypervisor gave the CPUs to others; \
                     the profile undercounts wall time",
                    st.2
                ),
                "Compare with a run on dedicated CPUs before reading small differences",
            ),
            st,
        );
    }
    let mut devices: Vec<String> = Vec::new();
    for log in logs {
        for d in log.source.devices() {
            if !devices.iter().any(|x| x == d) {
                devices.push(d.to_string());
            }
        }
    }
    for dev in devices {
        let entity = Entity::Device(dev.clone());
        let col = |metric| {
            logs.iter()
                .map(|l| column(l, metric, &entity, lo, hi))
                .find(|c| !c.is_empty())
                .unwrap_or_default()
        };
        let util = sustained(&col(Metric::DiskUtil), |v| v > 60.0);
        let queue = sustained(&col(Metric::DiskQueue), |v| v > 1.0);
        if util.is_none() && queue.is_none() {
            continue;
        }
        let mut parts = Vec::new();
        if let Some(u) = util {
            parts.push(format!("%util up to {:.0}%", u.2));
        }
        if let Some(q) = queue {
            parts.push(format!("aqu-sz up to {:.1}", q.2));
        }
        let word = if queue.is_some() { "queued" } else { "busy" };
        flag(
            Severity::Warn,
            "host-disk",
            format!("{dev} {word}"),
            (
                format!("disk {dev} was {word} ({})", parts.join(", ")),
                "%util near 100 means saturated only if the queue or await agree \
                 (RAID, SSD and virtual disks serve in parallel)",
            ),
            util.or(queue).unwrap_or_default(),
        );
    }
    if samples < FEW_SAMPLES {
        out.push(Flag {
            severity: Severity::Warn,
            code: "few-samples",
            short: format!("{samples} samples"),
            saw: format!("only {samples} samples in this window"),
            advice: format!("Fewer than {FEW_SAMPLES} cannot be told apart from chance"),
            from_ns: lo,
            to_ns: hi,
        });
    }
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{Clock, ContextKind, ContextSource, Interval, Series};

    const NS: i64 = 1_000_000_000;

    fn vmstat(columns: &[(Metric, &[f32])]) -> Aligned {
        let n = columns[0].1.len() as i64;
        Aligned {
            source: ContextSource {
                name: "vmstat.log".into(),
                kind: ContextKind::Vmstat,
                host: None,
                n_cpus: Some(2),
                clock: Clock::Relative,
                intervals: (0..n)
                    .map(|i| Interval {
                        end_ns: (i + 1) * NS,
                        len_ns: NS,
                        since_boot: false,
                        line: i as u32 + 3,
                    })
                    .collect(),
                series: columns
                    .iter()
                    .map(|(m, v)| Series {
                        metric: *m,
                        entity: Entity::System,
                        values: v.to_vec(),
                    })
                    .collect(),
                warnings: vec![],
            },
            shift_ns: 0,
            how: super::super::AlignHow::StartTime,
        }
    }

    fn cpu_profile() -> Profile {
        crate::model::testing::profile_from_lines(&["a;b 1"])
    }

    #[test]
    fn sustained_iowait_under_an_on_cpu_profile_says_to_take_an_off_cpu_one() {
        let logs = [vmstat(&[
            (Metric::CpuIowait, &[0.0, 30.0, 44.0, 25.0, 0.0, 0.0]),
            (Metric::Blocked, &[0.0, 1.0, 1.0, 1.0, 0.0, 0.0]),
        ])];
        let f = flags(&logs, &cpu_profile(), 0, 6 * NS, 500);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message().contains("iowait up to 44%"),
            "{}",
            f[0].message()
        );
        assert!(f[0].message().contains("off-CPU"), "{}", f[0].message());
        assert_eq!((f[0].from_ns, f[0].to_ns), (2 * NS, 4 * NS));
        // Outside the window, or in one report only, it is no finding.
        assert!(flags(&logs, &cpu_profile(), 4 * NS, 6 * NS, 500).is_empty());
        let blip = [vmstat(&[(Metric::CpuIowait, &[0.0, 90.0, 0.0, 0.0])])];
        assert!(flags(&blip, &cpu_profile(), 0, 4 * NS, 500).is_empty());
        // A wall-clock profile sees the wait: no flag.
        let mut wall = cpu_profile();
        wall.value_types[0].kind = "wall".into();
        assert!(flags(&logs, &wall, 0, 6 * NS, 500).is_empty());
    }

    #[test]
    fn run_queue_swapping_steal_and_few_samples() {
        let logs = [vmstat(&[
            (Metric::RunQueue, &[5.0, 6.0, 1.0, 1.0]),
            (Metric::SwapOutKibs, &[0.0, 120.0, 80.0, 0.0]),
            (Metric::CpuSteal, &[12.0, 15.0, 0.0, 0.0]),
        ])];
        let f = flags(&logs, &cpu_profile(), 0, 4 * NS, 20);
        let shorts: Vec<&str> = f.iter().map(|f| f.short.as_str()).collect();
        assert_eq!(
            shorts,
            [
                "run queue 6 > 2 CPUs",
                "swapping",
                "20 samples",
                "steal 15%"
            ]
        );
    }
}
