//! What every reader shares: the column store being filled and turning
//! printed times into the intervals of [`ContextSource`]. Splitting rows and
//! reading numbers is in [`super::scan`].

use std::collections::HashMap;

use super::time::NS;
use super::{
    Clock, ContextError, ContextKind, ContextSource, ContextWarning, Entity, Interval, Metric,
    Series, Unit,
};

/// What the caller knows about how the log was made (usually its command line).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContextOptions {
    /// The sampling interval (`vmstat N`, `iostat N`), for logs without times.
    pub interval_ns: Option<i64>,
    /// `Some(false)` when the log was made with `-y` (no since-boot report);
    /// `None`: guessed from the text (a since-boot report is assumed).
    pub since_boot_first: Option<bool>,
    /// `vmstat -S k|K|m|M`: bytes per unit of the memory and swap columns.
    pub vmstat_unit_bytes: Option<u64>,
}

impl ContextOptions {
    /// From the command line that wrote the log, e.g. `vmstat -a -t -n -S M 1 32`
    /// or `iostat -x -y -t 2`. Unknown words are ignored.
    pub fn from_command(cmd: &str) -> ContextOptions {
        let mut o = ContextOptions::default();
        let words: Vec<&str> = cmd.split_ascii_whitespace().collect();
        let mut numbers = Vec::new();
        let mut i = 0;
        while let Some(&w) = words.get(i) {
            i += 1;
            if let Some(flags) = w.strip_prefix('-').filter(|f| !f.starts_with('-')) {
                for (k, c) in flags.char_indices() {
                    match c {
                        'y' => o.since_boot_first = Some(false),
                        'S' => {
                            let unit = match &flags[k + 1..] {
                                "" => words.get(i).copied().inspect(|_| i += 1),
                                rest => Some(rest),
                            };
                            o.vmstat_unit_bytes = match unit {
                                Some("k") => Some(1000),
                                Some("K") => Some(1024),
                                Some("m") => Some(1_000_000),
                                Some("M") => Some(1 << 20),
                                _ => o.vmstat_unit_bytes,
                            };
                            break;
                        }
                        _ => {}
                    }
                }
            } else if let Ok(n) = w.parse::<f64>() {
                numbers.push(n);
            }
        }
        if let Some(&n) = numbers.first()
            && n > 0.0
        {
            o.interval_ns = Some((n * NS as f64) as i64);
        }
        o
    }
}

/// How the intervals' times were found.
pub(crate) enum Times {
    /// One printed end time per interval (`None` where a report had none),
    /// in ns; the clock's offset.
    Wall {
        ends: Vec<Option<i64>>,
        utc_offset_s: Option<i32>,
    },
    /// No times: k × interval.
    Relative { interval_ns: Option<i64> },
}

/// The column store a reader fills, one interval at a time.
pub(crate) struct Builder {
    kind: ContextKind,
    name: String,
    pub host: Option<String>,
    pub n_cpus: Option<u32>,
    intervals: Vec<Interval>,
    series: Vec<Series>,
    index: HashMap<(Metric, Entity), usize>,
    warnings: Vec<ContextWarning>,
    clamped: u32,
    clamped_line: u32,
}

impl Builder {
    pub fn new(kind: ContextKind, name: &str) -> Builder {
        Builder {
            kind,
            name: name.to_string(),
            host: None,
            n_cpus: None,
            intervals: Vec::new(),
            series: Vec::new(),
            index: HashMap::new(),
            warnings: Vec::new(),
            clamped: 0,
            clamped_line: 0,
        }
    }

    pub fn warn(&mut self, line: u32, message: impl Into<String>) {
        self.warnings.push(ContextWarning {
            line,
            message: message.into(),
        });
    }

    /// Starts the next interval; values set from now on belong to it.
    pub fn begin(&mut self, line: u32, since_boot: bool) {
        self.intervals.push(Interval {
            end_ns: 0,
            len_ns: 0,
            since_boot,
            line,
        });
    }

    pub fn len(&self) -> usize {
        self.intervals.len()
    }

    /// The line of the first interval.
    pub fn first_line(&self) -> Option<u32> {
        self.intervals.first().map(|i| i.line)
    }

    /// The column of (`metric`, `entity`), created on first use.
    pub fn series_id(&mut self, metric: Metric, entity: &Entity) -> usize {
        if let Some(&i) = self.index.get(&(metric, entity.clone())) {
            return i;
        }
        let i = self.series.len();
        self.series.push(Series {
            metric,
            entity: entity.clone(),
            values: Vec::new(),
        });
        self.index.insert((metric, entity.clone()), i);
        i
    }

    /// Sets the value of column `id` in the current interval.
    pub fn set(&mut self, id: usize, v: f32) {
        if let Some(at) = self.intervals.len().checked_sub(1) {
            self.set_at(id, at, v);
        }
    }

    /// Sets the value of column `id` in interval `at`; percentages outside
    /// 0..=100 are clamped and counted.
    pub fn set_at(&mut self, id: usize, at: usize, mut v: f32) {
        let Some(s) = self.series.get_mut(id) else {
            return;
        };
        if s.metric.unit() == Unit::Percent && !(0.0..=100.0).contains(&v) && !v.is_nan() {
            if self.clamped == 0 {
                self.clamped_line = self.intervals.get(at).map_or(0, |i| i.line);
            }
            self.clamped += 1;
            v = v.clamp(0.0, 100.0);
        }
        // usually the next value of the column: a push
        if s.values.len() == at {
            s.values.push(v);
            return;
        }
        if s.values.len() < at {
            s.values.resize(at + 1, f32::NAN);
        }
        s.values[at] = v;
    }

    /// Appends what `later` read from the text after this builder's, whose
    /// line numbers start after `lines`: the same store one pass over both
    /// texts in order fills (columns matched by metric and entity, NaN where
    /// a column has no value; host and CPUs are the caller's to settle).
    pub fn append(&mut self, later: Builder, lines: u32) {
        let n = self.intervals.len();
        for s in later.series {
            let id = self.series_id(s.metric, &s.entity);
            if let Some(to) = self.series.get_mut(id) {
                to.values.resize(n, f32::NAN);
                to.values.extend(s.values);
            }
        }
        let shifted = |mut i: Interval| {
            i.line += lines;
            i
        };
        self.intervals
            .extend(later.intervals.into_iter().map(shifted));
        self.warnings
            .extend(later.warnings.into_iter().map(|w| ContextWarning {
                line: w.line + lines,
                message: w.message,
            }));
        if self.clamped == 0 && later.clamped > 0 {
            self.clamped_line = later.clamped_line + lines;
        }
        self.clamped += later.clamped;
    }

    /// Multiplies every value of the columns of `metrics` (unit fix-ups).
    pub fn scale(&mut self, metrics: &[Metric], factor: f32) {
        for s in self
            .series
            .iter_mut()
            .filter(|s| metrics.contains(&s.metric))
        {
            s.values.iter_mut().for_each(|v| *v *= factor);
        }
    }

    pub fn series(&self) -> &[Series] {
        &self.series
    }

    /// The finished source: times resolved, columns padded with NaN, sorted.
    pub fn finish(mut self, times: Times) -> Result<ContextSource, ContextError> {
        if self.intervals.is_empty() {
            let line = self.warnings.first().map_or(0, |w| w.line);
            return Err(ContextError::Invalid {
                path: self.name,
                kind: self.kind.name(),
                line,
                message: "no report could be read".to_string(),
            });
        }
        if self.clamped > 0 {
            let (n, line) = (self.clamped, self.clamped_line);
            self.warn(line, format!("{n} percentages outside 0..100 clamped"));
        }
        let n = self.intervals.len();
        for s in &mut self.series {
            s.values.resize(n, f32::NAN);
        }
        // A column the log never had (vmstat's `gu` before procps-ng 4) is no series.
        self.series.retain(|s| s.values.iter().any(|v| !v.is_nan()));
        let clock = match times {
            Times::Wall { ends, utc_offset_s } => {
                self.wall_times(&ends);
                Clock::Wall { utc_offset_s }
            }
            Times::Relative { interval_ns } => {
                self.relative_times(interval_ns);
                Clock::Relative
            }
        };
        self.sort();
        Ok(ContextSource {
            name: self.name,
            kind: self.kind,
            host: self.host,
            n_cpus: self.n_cpus,
            clock,
            intervals: self.intervals,
            series: self.series,
            warnings: self.warnings,
        })
    }

    fn relative_times(&mut self, interval_ns: Option<i64>) {
        let iv = interval_ns.unwrap_or_else(|| {
            let line = self.intervals.first().map_or(0, |i| i.line);
            self.warn(
                line,
                "no timestamps in the log: times are relative, 1 s per report assumed",
            );
            NS
        });
        let mut k = 0;
        for i in &mut self.intervals {
            if i.since_boot {
                i.end_ns = k * iv;
                i.len_ns = 0;
            } else {
                k += 1;
                i.end_ns = k * iv;
                i.len_ns = iv;
            }
        }
    }

    fn wall_times(&mut self, ends: &[Option<i64>]) {
        let mut diffs: Vec<i64> = ends
            .windows(2)
            .filter_map(|w| Some(w[1]? - w[0]?))
            .filter(|&d| d > 0)
            .collect();
        diffs.sort_unstable();
        let typical = diffs.get(diffs.len() / 2).copied().unwrap_or(NS);
        let mut prev: Option<i64> = None;
        let mut missing = 0;
        for (k, iv) in self.intervals.iter_mut().enumerate() {
            let end = match ends.get(k).copied().flatten() {
                Some(e) => e,
                None => {
                    missing += 1;
                    prev.map_or(0, |p| p + typical)
                }
            };
            iv.end_ns = end;
            iv.len_ns = match prev {
                _ if iv.since_boot => 0,
                Some(p) if end > p => end - p,
                _ => typical,
            };
            prev = Some(end);
        }
        if missing > 0 {
            self.warn(
                0,
                format!("{missing} reports without a time: placed after the one before"),
            );
        }
    }

    /// Sorts intervals by end (stable) and permutes every column alike.
    fn sort(&mut self) {
        if self
            .intervals
            .windows(2)
            .all(|w| w[0].end_ns <= w[1].end_ns)
        {
            return;
        }
        let line = self.intervals.first().map_or(0, |i| i.line);
        self.warn(line, "times go backwards: reports sorted by time");
        let mut order: Vec<usize> = (0..self.intervals.len()).collect();
        order.sort_by_key(|&i| self.intervals[i].end_ns);
        self.intervals = order.iter().map(|&i| self.intervals[i]).collect();
        for s in &mut self.series {
            s.values = order.iter().map(|&i| s.values[i]).collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_come_from_the_command_line() {
        let o = ContextOptions::from_command("vmstat -a -t -n -S M 2 32");
        assert_eq!(o.vmstat_unit_bytes, Some(1 << 20));
        assert_eq!(o.interval_ns, Some(2 * NS));
        assert_eq!(o.since_boot_first, None);
        let o = ContextOptions::from_command("iostat -xyz -t -m -p ALL 1 32");
        assert_eq!(o.since_boot_first, Some(false));
        assert_eq!(
            ContextOptions::from_command("vmstat -Sk 1").vmstat_unit_bytes,
            Some(1000)
        );
    }

    #[test]
    fn relative_times_count_reports_after_the_since_boot_one() {
        let mut b = Builder::new(ContextKind::Vmstat, "t");
        for k in 0..3 {
            b.begin(k + 1, k == 0);
        }
        let s = b.finish(Times::Relative {
            interval_ns: Some(2 * NS),
        });
        let s = s.unwrap_or_else(|e| panic!("{e}"));
        let ends: Vec<i64> = s.intervals.iter().map(|i| i.end_ns / NS).collect();
        assert_eq!(ends, [0, 2, 4]);
        assert_eq!(s.intervals[0].len_ns, 0);
        assert_eq!(s.intervals[1].len_ns, 2 * NS);
    }

    #[test]
    fn percentages_are_clamped_and_counted() {
        let mut b = Builder::new(ContextKind::Vmstat, "t");
        b.begin(3, false);
        let id = b.series_id(Metric::CpuIowait, &Entity::System);
        b.set(id, 870_819_400.0);
        let s = b.finish(Times::Relative {
            interval_ns: Some(NS),
        });
        let s = s.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.series[0].values, [100.0]);
        assert!(
            s.warnings
                .iter()
                .any(|w| w.line == 3 && w.message.contains("clamped"))
        );
    }

    #[test]
    fn no_report_is_an_error() {
        let b = Builder::new(ContextKind::IostatText, "x.log");
        let e = b.finish(Times::Relative { interval_ns: None });
        assert!(matches!(e, Err(ContextError::Invalid { .. })));
    }
}
