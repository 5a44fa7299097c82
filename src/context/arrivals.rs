//! Arrival times: `ember capture` stamps every line a logger prints with
//! CLOCK_MONOTONIC as it reads it, into `<log>.arrivals` beside the log. A
//! report's interval then ends when its first line arrived, to the
//! microsecond, instead of at a printed time of whole seconds; and a profile
//! on CLOCK_MONOTONIC (perf `-k CLOCK_MONOTONIC`) needs no guess at all.
//!
//! The file: a header naming the clock and the offset to wall time read with
//! it, then `LINE NS` per line of the log (1-based).
//!
//! ```text
//! # ember arrivals v1: CLOCK_MONOTONIC; realtime-monotonic 1796212575101756000; utc-offset 0
//! 1 928174938112
//! 2 928174938530
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{Clock, ContextSource};

/// What follows a log's name for its arrivals.
pub const SUFFIX: &str = ".arrivals";
const MAGIC: &str = "# ember arrivals v1: CLOCK_MONOTONIC; realtime-monotonic ";

/// The arrivals file of `log`.
pub fn path_of(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_os_string();
    name.push(SUFFIX);
    PathBuf::from(name)
}

/// The header line (with its newline) for an offset read with the clock.
pub fn header(realtime_minus_monotonic_ns: i64, utc_offset_s: i32) -> String {
    format!("{MAGIC}{realtime_minus_monotonic_ns}; utc-offset {utc_offset_s}\n")
}

/// The offset and zone of a header line.
fn parse_header(line: &str) -> Option<(i64, i32)> {
    let rest = line.strip_prefix(MAGIC)?;
    let (offset, zone) = rest.split_once("; utc-offset ")?;
    Some((offset.trim().parse().ok()?, zone.trim().parse().ok()?))
}

/// Puts `source` on CLOCK_MONOTONIC from `text` (an arrivals file): every
/// report then ends when its line arrived. Left as it is, and false, when the
/// text is not an arrivals file or misses a report's line.
pub fn apply(source: &mut ContextSource, text: &str) -> bool {
    let mut lines = text.lines();
    let Some((realtime_offset_ns, utc_offset_s)) = lines.next().and_then(parse_header) else {
        return false;
    };
    let mut at: HashMap<u32, i64> = HashMap::new();
    for l in lines {
        let Some((n, ns)) = l.split_once(' ') else {
            return false;
        };
        match (n.parse::<u32>(), ns.trim().parse::<i64>()) {
            (Ok(n), Ok(ns)) => {
                at.insert(n, ns);
            }
            _ => return false,
        }
    }
    let Some(ends) = source
        .intervals
        .iter()
        .map(|i| at.get(&i.line).copied())
        .collect::<Option<Vec<i64>>>()
    else {
        return false;
    };
    if ends.windows(2).any(|w| w[1] < w[0]) {
        return false;
    }
    for (i, end) in source.intervals.iter_mut().zip(ends) {
        i.end_ns = end;
    }
    source.clock = Clock::Monotonic {
        realtime_offset_ns,
        utc_offset_s,
    };
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{ContextKind, Interval};

    fn source(lines: &[u32]) -> ContextSource {
        ContextSource {
            name: "vmstat.log".into(),
            kind: ContextKind::Vmstat,
            host: None,
            n_cpus: None,
            clock: Clock::Wall { utc_offset_s: None },
            intervals: lines
                .iter()
                .map(|&line| Interval {
                    end_ns: i64::from(line) * 1_000_000_000,
                    len_ns: 1_000_000_000,
                    since_boot: false,
                    line,
                })
                .collect(),
            series: Vec::new(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn reports_end_when_their_line_arrived() {
        let text = format!(
            "{}1 10\n2 20\n3 3000000123\n4 4000000456\n",
            header(77, 3600)
        );
        let mut s = source(&[3, 4]);
        assert!(apply(&mut s, &text));
        let ends: Vec<i64> = s.intervals.iter().map(|i| i.end_ns).collect();
        assert_eq!(ends, [3_000_000_123, 4_000_000_456]);
        assert_eq!(
            s.clock,
            Clock::Monotonic {
                realtime_offset_ns: 77,
                utc_offset_s: 3600
            }
        );
    }

    #[test]
    fn a_missing_line_or_a_foreign_file_leaves_the_log_alone() {
        let mut s = source(&[3, 5]);
        let before = s.clone();
        assert!(!apply(&mut s, &format!("{}3 1\n4 2\n", header(0, 0))));
        assert!(!apply(&mut s, "3 1\n5 2\n"));
        assert!(!apply(&mut s, &format!("{}3 x\n5 2\n", header(0, 0))));
        assert_eq!(s, before);
    }
}
