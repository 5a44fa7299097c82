//! vmstat (procps-ng 3.3 and 4.0.x), VM mode: `-t`, `-n`, `-w`, `-a`, `-S`, `-y`.
//!
//! Columns are mapped by position and count (17 or 18 numbers, then two
//! timestamp tokens with `-t`): the header lines are translated in many
//! locales (`frei`, `libre`, Polish `io` for `wa`), so names are used only to
//! tell `-a` (inact/active) from buff/cache and to read the zone name.

use super::build::{Builder, ContextOptions, Times};
use super::scan::split_ws;
use super::time::{self, NS, SlashOrder, Stamp};
use super::{ContextError, ContextKind, ContextSource, Entity, Metric, lines};

const COLUMNS: [Metric; 18] = [
    Metric::RunQueue,
    Metric::Blocked,
    Metric::SwapUsedKib,
    Metric::MemFreeKib,
    Metric::MemBuffKib,
    Metric::MemCacheKib,
    Metric::SwapInKibs,
    Metric::SwapOutKibs,
    Metric::BlockIn,
    Metric::BlockOut,
    Metric::Interrupts,
    Metric::ContextSwitches,
    Metric::CpuUser,
    Metric::CpuSys,
    Metric::CpuIdle,
    Metric::CpuIowait,
    Metric::CpuSteal,
    Metric::CpuGuest,
];

/// The columns `-S` scales: the memory columns, then si/so.
const SCALED: [Metric; 8] = [
    Metric::SwapUsedKib,
    Metric::MemFreeKib,
    Metric::MemBuffKib,
    Metric::MemCacheKib,
    Metric::MemActiveKib,
    Metric::MemInactiveKib,
    Metric::SwapInKibs,
    Metric::SwapOutKibs,
];

/// Below this many "KiB" of swpd+free+buff+cache, the log is taken to be in MiB.
const MIB_GUESS_LIMIT: f32 = 262_144.0;

struct Reader {
    b: Builder,
    ids: [usize; 18],
    active_mode: bool,
    zone: Option<String>,
    ends: Vec<Option<i64>>,
    stamped: bool,
    data_lines: u32,
    since_boot_first: bool,
}

impl Reader {
    fn ids(b: &mut Builder, active_mode: bool) -> [usize; 18] {
        let mut ids = [0; 18];
        for (k, m) in COLUMNS.iter().enumerate() {
            let m = match (active_mode, m) {
                (true, Metric::MemBuffKib) => Metric::MemInactiveKib,
                (true, Metric::MemCacheKib) => Metric::MemActiveKib,
                (_, &m) => m,
            };
            ids[k] = b.series_id(m, &Entity::System);
        }
        ids
    }

    fn columns_line(&mut self, tokens: &[&str]) {
        // `-a` replaces buff/cache by inact/active (`nieakt akt`, ...).
        let active = tokens
            .get(5)
            .is_some_and(|t| t.contains("act") || t.contains("akt"));
        if active != self.active_mode {
            self.active_mode = active;
            self.ids = Reader::ids(&mut self.b, active);
        }
        // With -t the zone name ends the line: upper case (`UTC`) or an offset.
        if let Some(last) = tokens.last()
            && tokens.len() > 17
            && (last.bytes().all(|c| c.is_ascii_uppercase()) || last.starts_with(['+', '-']))
        {
            self.zone = Some(last.to_string());
        }
    }

    fn data_line(&mut self, n: u32, tokens: &[&str]) {
        let nums = tokens
            .iter()
            .take_while(|t| t.bytes().all(|c| c.is_ascii_digit()))
            .count();
        let rest = &tokens[nums..];
        if !(nums == 17 || nums == 18) || !(rest.is_empty() || rest.len() == 2) {
            self.b.warn(
                n,
                format!("vmstat line with {nums} numbers (17 or 18 expected)"),
            );
            return;
        }
        let stamp = match rest {
            [d, t] => match time::parse_stamp(&format!("{d} {t}")) {
                Some(s @ Stamp::Local { .. }) => Some(s),
                _ => {
                    self.b.warn(n, format!("unreadable time {d} {t}"));
                    return;
                }
            },
            _ => None,
        };
        let since_boot = self.data_lines == 0 && self.since_boot_first;
        self.data_lines += 1;
        self.b.begin(n, since_boot);
        if stamp.is_some() {
            self.stamped = true;
        }
        self.ends
            .push(stamp.and_then(|s| time::stamp_ns(s, SlashOrder::default())));
        for (k, t) in tokens[..nums].iter().enumerate() {
            if let (Some(&id), Ok(v)) = (self.ids.get(k), t.parse::<u64>()) {
                self.b.set(id, v as f32);
            }
        }
    }

    fn memory_fixups(&mut self, opts: &ContextOptions) {
        if let Some(bytes) = opts.vmstat_unit_bytes {
            self.b.scale(&SCALED, bytes as f32 / 1024.0);
            return;
        }
        let mem = &SCALED[..6];
        let n = self.b.len();
        let series = self.b.series();
        let total = |i: usize| -> f32 {
            series
                .iter()
                .filter(|s| mem.contains(&s.metric))
                .filter_map(|s| s.values.get(i).copied().filter(|v| !v.is_nan()))
                .sum()
        };
        let max = (0..n).map(total).fold(0.0, f32::max);
        // Frozen memory (procps-ng 4.0.0-4.0.2): constant memory while swapping.
        let frozen = n >= 3 && (0..n).all(|i| total(i) == total(0));
        let swapping = series.iter().any(|s| {
            matches!(s.metric, Metric::SwapInKibs | Metric::SwapOutKibs)
                && s.values.iter().any(|&v| v > 0.0)
        });
        if max > 0.0 && max < MIB_GUESS_LIMIT {
            self.b.warn(
                0,
                "memory columns look like MiB (vmstat -S M?): scaled to KiB; give the \
                 command line to be sure",
            );
            self.b.scale(&SCALED, 1024.0);
        }
        if frozen && swapping {
            self.b.warn(
                0,
                "memory columns never change while swapping (procps-ng 4.0.0-4.0.2 bug): \
                 memory values are not reliable",
            );
        }
    }
}

pub(crate) fn read(
    text: &str,
    name: &str,
    opts: &ContextOptions,
) -> Result<ContextSource, ContextError> {
    let mut b = Builder::new(ContextKind::Vmstat, name);
    let ids = Reader::ids(&mut b, false);
    let mut r = Reader {
        b,
        ids,
        active_mode: false,
        zone: None,
        ends: Vec::new(),
        stamped: false,
        data_lines: 0,
        since_boot_first: opts.since_boot_first.unwrap_or(true),
    };
    let mut buf: Vec<&str> = Vec::with_capacity(24);
    for (n, line) in lines(text, &mut r.b) {
        split_ws(line, &mut buf);
        let Some(first) = buf.first() else { continue };
        if first.bytes().all(|c| c.is_ascii_digit()) {
            r.data_line(n, &buf);
        } else if line.contains("--") {
            // the group line: `procs ---memory---`, `--procs--`, `proc. ---pamięć---`
        } else if buf.len() >= 17 {
            r.columns_line(&buf);
        } else {
            r.b.warn(n, "not a vmstat line");
        }
    }
    r.memory_fixups(opts);
    let times = if r.stamped {
        let offset = r.zone.as_deref().and_then(time::zone_offset);
        if offset.is_none() {
            let zone = r.zone.as_deref().unwrap_or("none");
            r.b.warn(
                0,
                format!("time zone {zone} not known: times are local, read as UTC"),
            );
        }
        let off_ns = i64::from(offset.unwrap_or(0)) * NS;
        Times::Wall {
            ends: r.ends.iter().map(|e| e.map(|t| t - off_ns)).collect(),
            utc_offset_s: offset,
        }
    } else {
        Times::Relative {
            interval_ns: opts.interval_ns,
        }
    };
    r.b.finish(times)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{Clock, parse_with};

    fn read_str(s: &str, opts: &ContextOptions) -> ContextSource {
        parse_with(s.as_bytes(), "test", opts).unwrap_or_else(|e| panic!("{e}"))
    }

    fn col(src: &ContextSource, m: Metric) -> Vec<f32> {
        src.series(m, &Entity::System)
            .map(|s| s.values.clone())
            .unwrap_or_default()
    }

    const NARROW_T: &str = "\
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC
 8  0      0 21382748  31436 2694888    0    0  1979  3243  451  950 37  9 54  0  0 2026-12-02 11:48:48
 3  1      0 21382748  31436 2694888    0    0   468     0 3576 8438 62 34  2  0  3 2026-12-02 11:48:49
 1  0      0 21382748  31436 2694888    0    0     0     0   71   97  0  0 100  0  0 2026-12-02 11:48:51
";

    #[test]
    fn reads_timestamps_in_utc_and_marks_the_first_line_since_boot() {
        let s = read_str(NARROW_T, &ContextOptions::default());
        assert_eq!(s.kind, ContextKind::Vmstat);
        assert_eq!(
            s.clock,
            Clock::Wall {
                utc_offset_s: Some(0)
            }
        );
        assert_eq!(s.intervals.len(), 3);
        assert!(s.intervals[0].since_boot && !s.intervals[1].since_boot);
        assert_eq!(s.intervals[1].end_ns, 1_796_212_129 * NS);
        // a skipped second: the interval is the label difference
        assert_eq!(s.intervals[2].len_ns, 2 * NS);
        assert_eq!(col(&s, Metric::Blocked), [0.0, 1.0, 0.0]);
        assert_eq!(col(&s, Metric::CpuIdle), [54.0, 2.0, 100.0]);
        assert_eq!(col(&s, Metric::MemFreeKib)[0], 21_382_748.0);
    }

    #[test]
    fn translated_headers_map_by_position() {
        let pl = "\
proc. -----------pamięć---------- ---swap-- ---we/wy--- -system-- ------cpu-------------czas--------
dz bl   swap  wolna nieakt    akt   si   so    bi    bo   in   cs uż sy be io sk                 UTC
10  0      0 16327564 5205736 2606116    0    0 13685 13071  905 1596 56 14 29  1  0 2026-12-02 11:58:48
 3  0      0 16327564 5205736 2606116    0    0    68  6700  503 3417 56  4 41  7  0 2026-12-02 11:58:49
";
        let s = read_str(pl, &ContextOptions::default());
        assert_eq!(col(&s, Metric::CpuIowait), [1.0, 7.0], "Polish `io` is wa");
        assert_eq!(col(&s, Metric::MemInactiveKib)[0], 5_205_736.0);
        assert!(
            s.series(Metric::MemBuffKib, &Entity::System)
                .is_none_or(|c| c.values.iter().all(|v| v.is_nan()))
        );
    }

    #[test]
    fn a_log_without_the_guest_column_has_no_guest_series() {
        let w = "\
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
 7  0      0 21382620  31436 2695036    0    0  1979  3243  451  950 37  9 54  0  0
";
        let s = read_str(w, &ContextOptions::default());
        assert!(s.series(Metric::CpuGuest, &Entity::System).is_none());
        assert_eq!(col(&s, Metric::CpuSteal), [0.0]);
        assert_eq!(s.series.len(), 17);
    }

    #[test]
    fn wide_with_guest_and_repeated_headers() {
        let w = "\
--procs-- -----------------------memory---------------------- ---swap-- -----io---- -system-- ----------cpu----------
   r    b         swpd         free         buff        cache   si   so    bi    bo   in   cs  us  sy  id  wa  st  gu
  15    0            0     17478640        26228      6311456    0    0  5077 10339  886 1609  52  13  34   1   0   0
--procs-- -----------------------memory---------------------- ---swap-- -----io---- -system-- ----------cpu----------
   r    b         swpd         free         buff        cache   si   so    bi    bo   in   cs  us  sy  id  wa  st  gu
   9    0            0     17478640        26228      6311456    0    0  1072     0 1013  997  83   8   0   0  10   4
";
        let s = read_str(w, &ContextOptions::default());
        assert_eq!(s.clock, Clock::Relative);
        assert_eq!(s.intervals.len(), 2);
        assert_eq!(col(&s, Metric::CpuGuest), [0.0, 4.0]);
        assert_eq!(s.intervals[1].end_ns, NS);
        assert!(
            s.warnings
                .iter()
                .any(|w| w.message.contains("1 s per report"))
        );
    }

    #[test]
    fn units_from_the_command_line_or_guessed() {
        let m = "\
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free  inact active   si   so    bi    bo   in   cs us sy id wa st
 9  0      0  17085   4832   1677    0    0  5409  9817  972 1774 54 13 31  1  0
";
        let y = ContextOptions {
            since_boot_first: Some(false),
            ..ContextOptions::from_command("vmstat -a -S M 1")
        };
        let s = read_str(m, &y);
        assert_eq!(col(&s, Metric::MemFreeKib), [17085.0 * 1024.0]);
        assert_eq!(col(&s, Metric::MemActiveKib), [1677.0 * 1024.0]);
        assert!(!s.intervals[0].since_boot);
        let s = read_str(m, &ContextOptions::default());
        assert_eq!(col(&s, Metric::MemFreeKib), [17085.0 * 1024.0]);
        assert!(s.warnings.iter().any(|w| w.message.contains("MiB")));
        let k = read_str(m, &ContextOptions::from_command("vmstat -S k 1"));
        assert_eq!(col(&k, Metric::MemFreeKib), [17085.0 * 1000.0 / 1024.0]);
    }

    #[test]
    fn midnight_advances_the_date_and_unknown_zones_stay_local() {
        let t = "\
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 IST
 4  0      0 16803592  42644 7653504    0    0 13233 12656  891 1564 55 13 30  1  0 2026-12-01 23:59:59
 1  0      0 16803592  42644 7653504    0    0    20     0   74  107  2  1 98  0  0 2026-12-02 00:00:00
";
        let s = read_str(t, &ContextOptions::default());
        assert_eq!(s.clock, Clock::Wall { utc_offset_s: None });
        assert_eq!(s.intervals[1].end_ns - s.intervals[0].end_ns, NS);
        assert!(s.warnings.iter().any(|w| w.message.contains("IST")));
    }

    #[test]
    fn bad_and_partial_lines_are_warnings() {
        let t = format!("{NARROW_T} 1  0  garbage\n 2  0      0 21382748  31436");
        let s = read_str(&t, &ContextOptions::default());
        assert_eq!(s.intervals.len(), 3);
        let lines: Vec<u32> = s.warnings.iter().map(|w| w.line).collect();
        assert!(lines.contains(&6) && lines.contains(&7), "{:?}", s.warnings);
    }
}
