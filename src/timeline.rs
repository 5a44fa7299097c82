//! The profile and the host's context logs on one time axis: samples per time
//! bucket, context logs shifted into the profile's clock, the strips the
//! timeline draws and the flags a triager should see.
//!
//! Knows nothing of terminals: `ui` draws what this computes, `output` prints it.

pub mod flags;

use crate::context::{Clock, ContextSource, Entity, Metric};
use crate::model::Profile;
use crate::model::timerange::{sample_span, wall_offset};

const NS: i64 = 1_000_000_000;

/// The profile's time window in its own clock, when it has one: the sample
/// times' span, or (pprof without times) its start and duration on the
/// wall clock.
pub fn profile_window(p: &Profile) -> Option<(u64, u64)> {
    if let Some((lo, hi)) = sample_span(p) {
        return Some((lo, hi.max(lo + 1)));
    }
    let start = p.meta.start_unix_ns?;
    Some((start, start + p.meta.duration_ns?.max(1)))
}

/// Whether the window above is in wall-clock nanoseconds since the epoch.
fn window_offset(p: &Profile) -> Option<i64> {
    if sample_span(p).is_some() {
        wall_offset(p)
    } else {
        p.meta.start_unix_ns.map(|_| 0)
    }
}

/// Samples (of one value column) per equal slice of `[lo, hi)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    pub lo: u64,
    pub hi: u64,
    pub counts: Vec<f64>,
}

/// Each sample taken in `[lo, hi]`: its time and the absolute value of its
/// `value` column (1 where it has none).
pub fn timed_values(
    p: &Profile,
    value: usize,
    lo: u64,
    hi: u64,
) -> impl Iterator<Item = (u64, f64)> {
    let stride = p.value_types.len().max(1);
    let values = &p.samples.values;
    p.samples
        .time
        .iter()
        .flatten()
        .enumerate()
        .filter(move |&(_, &t)| lo <= t && t <= hi)
        .map(move |(i, &t)| {
            let v = values.get(i * stride + value).copied().unwrap_or(1);
            (t, v.unsigned_abs() as f64)
        })
}

impl Histogram {
    /// `buckets` slices of the window; every sample lands in one (the last
    /// sample in the last bucket).
    pub fn build(p: &Profile, value: usize, buckets: usize, lo: u64, hi: u64) -> Histogram {
        let buckets = buckets.max(1);
        let mut counts = vec![0.0; buckets];
        let width = (hi.saturating_sub(lo)).max(1) as f64 / buckets as f64;
        for (t, v) in timed_values(p, value, lo, hi) {
            let b = (((t - lo) as f64 / width) as usize).min(buckets - 1);
            counts[b] += v;
        }
        Histogram { lo, hi, counts }
    }

    /// One histogram per thread for the `top` threads with the most samples
    /// (by `value`), busiest first, named as the profile names them.
    pub fn per_thread(
        p: &Profile,
        value: usize,
        buckets: usize,
        lo: u64,
        hi: u64,
        top: usize,
    ) -> Vec<(String, Histogram)> {
        let Some(threads) = &p.samples.thread else {
            return Vec::new();
        };
        let mut totals = vec![0.0f64; p.threads.len()];
        let stride = p.value_types.len().max(1);
        for (i, &t) in threads.iter().enumerate() {
            if let Some(x) = totals.get_mut(t as usize) {
                *x += p
                    .samples
                    .values
                    .get(i * stride + value)
                    .copied()
                    .unwrap_or(1)
                    .unsigned_abs() as f64;
            }
        }
        let mut order: Vec<usize> = (0..totals.len()).filter(|&t| totals[t] > 0.0).collect();
        order.sort_by(|a, b| totals[*b].total_cmp(&totals[*a]));
        order.truncate(top);
        let mut slot = vec![usize::MAX; totals.len()];
        for (k, &t) in order.iter().enumerate() {
            slot[t] = k;
        }
        let buckets = buckets.max(1);
        let mut counts = vec![vec![0.0; buckets]; order.len()];
        let width = (hi.saturating_sub(lo)).max(1) as f64 / buckets as f64;
        if let Some(times) = &p.samples.time {
            for (i, (&t, &th)) in times.iter().zip(threads).enumerate() {
                let k = slot.get(th as usize).copied().unwrap_or(usize::MAX);
                if k == usize::MAX || t < lo || t > hi {
                    continue;
                }
                let b = (((t - lo) as f64 / width) as usize).min(buckets - 1);
                let v = p
                    .samples
                    .values
                    .get(i * stride + value)
                    .copied()
                    .unwrap_or(1);
                counts[k][b] += v.unsigned_abs() as f64;
            }
        }
        order
            .iter()
            .zip(counts)
            .map(|(&t, counts)| (p.threads[t].name.clone(), Histogram { lo, hi, counts }))
            .collect()
    }

    /// The start of bucket `b` in the profile's clock.
    pub fn bucket_start(&self, b: usize) -> u64 {
        let width = (self.hi - self.lo) as f64 / self.counts.len() as f64;
        self.lo + (b as f64 * width) as u64
    }

    /// The bucket holding time `t` (clamped to the window).
    pub fn bucket_of(&self, t: u64) -> usize {
        let width = (self.hi - self.lo).max(1) as f64 / self.counts.len() as f64;
        ((t.saturating_sub(self.lo) as f64 / width) as usize).min(self.counts.len() - 1)
    }
}

/// How a context log was put on the profile's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlignHow {
    /// Both have wall-clock times.
    WallClock,
    /// One side has no wall clock: the log's first report starts with the
    /// profile's first sample.
    StartTime,
    /// The log's reports carry `ember capture`'s CLOCK_MONOTONIC arrival
    /// times and the profile's clock maps to it exactly (it is CLOCK_MONOTONIC,
    /// perf `-k CLOCK_MONOTONIC` under a capture, or it has a wall clock): the
    /// error is the loggers' print latency, microseconds.
    Clock,
}

/// A context log on the profile's clock: profile time = log time + `shift_ns`.
#[derive(Clone, Debug)]
pub struct Aligned {
    pub source: ContextSource,
    pub shift_ns: i64,
    pub how: AlignHow,
}

/// Puts `source` on `profile`'s clock, moved by `nudge_ns` more (`--align`).
/// Fails, saying both spans, when the log does not overlap the profile.
pub fn align(source: ContextSource, profile: &Profile, nudge_ns: i64) -> Result<Aligned, String> {
    align_anchored(source, profile, nudge_ns, None)
}

/// [`align`] with a wall-clock anchor from elsewhere (a capture bundle's
/// realtime minus monotonic) for a profile whose own clock has none.
pub fn align_anchored(
    source: ContextSource,
    profile: &Profile,
    nudge_ns: i64,
    anchor_ns: Option<i64>,
) -> Result<Aligned, String> {
    let Some((lo, hi)) = profile_window(profile) else {
        return Err(format!(
            "{}: the profile has no times to line the log up with",
            source.name
        ));
    };
    let Some((c0, c1)) = source.span_ns() else {
        return Err(format!("{}: the log holds no report", source.name));
    };
    let (offset, local) = match window_offset(profile) {
        Some(_) if sample_span(profile).is_some() => {
            match crate::model::timerange::wall_offset_with(profile, anchor_ns) {
                Some((o, local)) => (Some(o), local),
                None => (None, false),
            }
        }
        Some(o) => (Some(o), false),
        None => (anchor_ns.filter(|_| sample_span(profile).is_some()), false),
    };
    let (shift, how) = match (source.clock, offset) {
        (Clock::Wall { utc_offset_s }, Some(off)) => {
            // Log times are as printed; the profile's are UTC unless it too
            // printed local times without a zone (perf tod).
            let zone = match (local, utc_offset_s) {
                (false, Some(z)) => i64::from(z) * NS,
                _ => 0,
            };
            (-zone - off, AlignHow::WallClock)
        }
        (
            Clock::Monotonic {
                realtime_offset_ns,
                utc_offset_s,
            },
            Some(off),
        ) => {
            // Wall (UTC) = log + realtime_offset; profile = wall - off (in
            // local time when the profile printed local time).
            let zone = if local {
                i64::from(utc_offset_s) * NS
            } else {
                0
            };
            (realtime_offset_ns + zone - off, AlignHow::Clock)
        }
        _ => (lo as i64 - c0, AlignHow::StartTime),
    };
    let shift = shift + nudge_ns;
    let (s0, s1) = (c0 + shift, c1 + shift);
    if s1 <= lo as i64 || s0 > hi as i64 {
        let wall = offset.unwrap_or(0);
        let when = |t: i64| format_clock(t + wall, offset.is_some());
        return Err(format!(
            "{}: its time span ({} to {}) does not overlap the profile's ({} to {}); the profile opens without it",
            source.name,
            when(s0),
            when(s1),
            when(lo as i64),
            when(hi as i64),
        ));
    }
    Ok(Aligned {
        source,
        shift_ns: shift,
        how,
    })
}

/// `2026-12-02 11:56:28` for wall-clock nanoseconds, else `+12.345 s`.
pub fn format_clock(ns: i64, wall: bool) -> String {
    if !wall {
        return format!("{:.3} s", ns as f64 / 1e9);
    }
    let secs = ns.div_euclid(NS);
    let (days, of_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

use crate::calendar::civil_from_days;

impl Aligned {
    /// The report covering profile time `t`, if any (never the since-boot one).
    pub fn interval_at(&self, t: u64) -> Option<usize> {
        let t = t as i64 - self.shift_ns;
        let i = self.source.interval_at(t)?;
        let iv = &self.source.intervals[i];
        (!iv.since_boot && iv.end_ns - iv.len_ns <= t).then_some(i)
    }

    /// The log's span on the profile's clock.
    pub fn span(&self) -> Option<(i64, i64)> {
        let (a, b) = self.source.span_ns()?;
        Some((a + self.shift_ns, b + self.shift_ns))
    }
}

/// One row of the timeline: a column of one log.
#[derive(Clone, Debug, PartialEq)]
pub struct Strip {
    pub label: String,
    /// Index into the aligned logs, and into that log's series.
    pub log: usize,
    pub series: usize,
    /// The value the strip's full height stands for.
    pub scale: f32,
}

/// The strips worth drawing, in the order the guide reads them: CPU (us, sy,
/// wa, st), run queue and blocked tasks, swapping, free memory, then per
/// device %util, aqu-sz and await. Columns that stay at zero are left out
/// (st, si/so on a host that never swaps), and a metric two logs both have
/// is drawn once (the first log's).
pub fn strips(logs: &[Aligned]) -> Vec<Strip> {
    use Metric::*;
    // What answers "was the host starved" first (a short pane shows these),
    // then the rest.
    let system = [CpuUser, CpuSys, CpuIowait, RunQueue, Blocked];
    let device = [DiskUtil, DiskQueue];
    let later = [SwapInKibs, SwapOutKibs, CpuSteal, MemFreeKib];
    let device_later = [DiskAwaitRead, DiskAwaitWrite];
    let mut out: Vec<Strip> = Vec::new();
    let mut seen: Vec<(Metric, Entity)> = Vec::new();
    let mut add = |log: usize, metric: Metric, entity: &Entity, label: String| {
        if seen.iter().any(|(m, e)| *m == metric && e == entity) {
            return;
        }
        let src = &logs[log].source;
        let Some(series) = src
            .series
            .iter()
            .position(|s| s.metric == metric && &s.entity == entity)
        else {
            return;
        };
        let max = src
            .reports()
            .filter_map(|(i, _)| src.series[series].values.get(i).copied())
            .filter(|v| v.is_finite())
            .fold(0.0f32, f32::max);
        let always = matches!(metric, CpuUser | CpuSys | CpuIowait | RunQueue | Blocked);
        if max <= 0.0 && !always {
            return;
        }
        let scale = match metric.unit() {
            crate::context::Unit::Percent => 100.0,
            _ => max.max(1.0),
        };
        seen.push((metric, entity.clone()));
        out.push(Strip {
            label,
            log,
            series,
            scale,
        });
    };
    for metric in system {
        for log in 0..logs.len() {
            add(log, metric, &Entity::System, metric.label().to_string());
        }
    }
    let devices = |metrics: &[Metric], add: &mut dyn FnMut(usize, Metric, &Entity, String)| {
        for (log, aligned) in logs.iter().enumerate() {
            for dev in aligned.source.devices() {
                let entity = Entity::Device(dev.to_string());
                for &metric in metrics {
                    add(log, metric, &entity, format!("{dev} {}", metric.label()));
                }
            }
        }
    };
    devices(&device, &mut add);
    for metric in later {
        for log in 0..logs.len() {
            add(log, metric, &Entity::System, metric.label().to_string());
        }
    }
    devices(&device_later, &mut add);
    out
}

/// The value of `strip` at profile time `t`.
pub fn strip_value(logs: &[Aligned], strip: &Strip, t: u64) -> Option<f32> {
    let log = &logs[strip.log];
    let i = log.interval_at(t)?;
    let v = *log.source.series[strip.series].values.get(i)?;
    v.is_finite().then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{ContextKind, Interval, Series};

    fn log(clock: Clock, start_ns: i64, values: &[f32]) -> ContextSource {
        ContextSource {
            name: "vmstat.log".into(),
            kind: ContextKind::Vmstat,
            host: None,
            n_cpus: Some(2),
            clock,
            intervals: (0..values.len() as i64)
                .map(|i| Interval {
                    end_ns: start_ns + (i + 1) * NS,
                    len_ns: NS,
                    since_boot: false,
                    line: i as u32 + 3,
                })
                .collect(),
            series: vec![Series {
                metric: Metric::CpuIowait,
                entity: Entity::System,
                values: values.to_vec(),
            }],
            warnings: vec![],
        }
    }

    fn timed_profile(t0: u64, n: u64) -> Profile {
        let mut p = crate::model::testing::profile_from_lines(&vec!["a;b 1"; n as usize]);
        p.samples.time = Some((0..n).map(|i| t0 + i * NS as u64 / 2).collect());
        p
    }

    #[test]
    fn dates_round_trip() {
        use crate::calendar::days_from_civil;
        for (y, m, d) in [(1970, 1, 1), (2000, 2, 29), (2026, 12, 2), (2100, 3, 1)] {
            assert_eq!(civil_from_days(days_from_civil(y, m, d)), (y, m, d));
        }
        assert_eq!(
            format_clock(1_796_212_588 * NS, true),
            "2026-12-02 11:56:28"
        );
    }

    #[test]
    fn a_wall_clock_log_lines_up_with_wall_clock_samples() {
        let t0 = 1_796_212_575 * NS as u64;
        let p = timed_profile(t0, 20);
        let src = log(
            Clock::Wall { utc_offset_s: None },
            t0 as i64 - 2 * NS,
            &[1.0; 8],
        );
        let a = align(src, &p, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.how, AlignHow::WallClock);
        assert_eq!(a.shift_ns, 0);
        // Sample time t0 + 0.5 s lies in the log's third report (t0-2 s + 2..3 s).
        assert_eq!(a.interval_at(t0 + NS as u64 / 2), Some(2));
        // A zone the log states moves it, unless the profile's times are local.
        let src = log(
            Clock::Wall {
                utc_offset_s: Some(3600),
            },
            t0 as i64 + 3600 * NS,
            &[1.0; 8],
        );
        let a = align(src, &p, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.shift_ns, -3600 * NS);
        assert_eq!(a.interval_at(t0), Some(0));
    }

    #[test]
    fn a_log_without_times_starts_with_the_profile_and_can_be_nudged() {
        let p = timed_profile(789 * NS as u64, 20);
        let src = log(Clock::Relative, 0, &[1.0; 12]);
        let a = align(src.clone(), &p, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.how, AlignHow::StartTime);
        assert_eq!(a.shift_ns, 789 * NS);
        let b = align(src, &p, -NS / 2).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.shift_ns, 789 * NS - NS / 2);
    }

    #[test]
    fn a_log_from_another_time_is_refused_naming_both_spans() {
        let t0 = 1_796_212_575 * NS as u64;
        let p = timed_profile(t0, 20);
        let src = log(
            Clock::Wall { utc_offset_s: None },
            t0 as i64 + 3600 * NS,
            &[1.0; 8],
        );
        let e = align(src, &p, 0).err().unwrap_or_default();
        assert!(e.contains("vmstat.log"), "{e}");
        assert!(e.contains("2026-12-02 12:56:15"), "{e}");
        assert!(e.contains("2026-12-02 11:56:15"), "{e}");
    }

    #[test]
    fn per_thread_rows_take_the_busiest_threads() {
        let mut p = timed_profile(100 * NS as u64, 6);
        p.threads = ["idle", "main", "worker"]
            .iter()
            .map(|n| crate::model::ThreadInfo {
                name: (*n).to_string(),
                ..Default::default()
            })
            .collect();
        p.samples.thread = Some(vec![1, 1, 2, 1, 2, 1]);
        let (lo, hi) = profile_window(&p).unwrap_or_default();
        let rows = Histogram::per_thread(&p, 0, 2, lo, hi, 5);
        let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["main", "worker"]);
        assert_eq!(rows[0].1.counts.iter().sum::<f64>(), 4.0);
        assert_eq!(rows[1].1.counts, [1.0, 1.0]);
        assert_eq!(Histogram::per_thread(&p, 0, 2, lo, hi, 1).len(), 1);
    }

    #[test]
    fn the_histogram_counts_every_sample_once() {
        let t0 = 100 * NS as u64;
        let p = timed_profile(t0, 10);
        let (lo, hi) = profile_window(&p).unwrap_or_default();
        let h = Histogram::build(&p, 0, 3, lo, hi);
        assert_eq!(h.counts.iter().sum::<f64>(), 10.0);
        assert_eq!(h.bucket_of(lo), 0);
        assert_eq!(h.bucket_of(hi), 2);
    }

    #[test]
    fn strips_skip_columns_that_stay_at_zero_but_keep_the_cpu_ones() {
        let t0 = 1_796_212_575 * NS as u64;
        let p = timed_profile(t0, 4);
        let mut src = log(Clock::Wall { utc_offset_s: None }, t0 as i64, &[0.0; 4]);
        src.series.push(Series {
            metric: Metric::CpuSteal,
            entity: Entity::System,
            values: vec![0.0; 4],
        });
        src.series.push(Series {
            metric: Metric::DiskUtil,
            entity: Entity::Device("sda".into()),
            values: vec![10.0, f32::NAN, 50.0, 0.0],
        });
        let logs = vec![align(src, &p, 0).unwrap_or_else(|e| panic!("{e}"))];
        let labels: Vec<String> = strips(&logs).into_iter().map(|s| s.label).collect();
        assert_eq!(labels, ["wa", "sda %util"]);
        let util = &strips(&logs)[1];
        assert_eq!(strip_value(&logs, util, t0 + NS as u64 / 2), Some(10.0));
        assert_eq!(strip_value(&logs, util, t0 + 3 * NS as u64 / 2), None);
    }
}
