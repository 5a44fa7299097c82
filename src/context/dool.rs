//! dool / dstat `--output` CSV: a preamble (`"Host:"`, `"Cmdline:"`,
//! `"Date:"`), a group line, a column line, then rows whose first cell is
//! `Dec-02 23:59:52` (dool) or `02-12 11:48:45` (dstat): no year, taken from
//! the `Date:` preamble and rolled at New Year. Values are raw (bytes/s,
//! bytes). Both tools append to an existing file, so a preamble can come
//! again; the first row after each column line is since boot.

use super::build::{Builder, Times};
use super::scan::num;
use super::time::{self, NS};
use super::{ContextError, ContextKind, ContextSource, Entity, Metric, lines};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// The metric of a (group, column) pair and the factor to its unit.
fn column(group: &str, name: &str) -> Option<(Metric, f32, Entity)> {
    let sys = Entity::System;
    let kib = 1.0 / 1024.0;
    let (m, scale) = match (group, name) {
        ("total cpu usage", "usr") => (Metric::CpuUser, 1.0),
        ("total cpu usage", "sys") => (Metric::CpuSys, 1.0),
        ("total cpu usage", "idl") => (Metric::CpuIdle, 1.0),
        ("total cpu usage", "wai") => (Metric::CpuIowait, 1.0),
        ("total cpu usage", "stl") => (Metric::CpuSteal, 1.0),
        ("procs", "run") => (Metric::RunQueue, 1.0),
        ("procs", "blk") => (Metric::Blocked, 1.0),
        ("paging", "in") => (Metric::SwapInKibs, kib),
        ("paging", "out") => (Metric::SwapOutKibs, kib),
        ("swap", "used") => (Metric::SwapUsedKib, kib),
        ("memory usage", "free") => (Metric::MemFreeKib, kib),
        ("memory usage", "buff") => (Metric::MemBuffKib, kib),
        ("memory usage", "cach") => (Metric::MemCacheKib, kib),
        ("system", "int") => (Metric::Interrupts, 1.0),
        ("system", "csw") => (Metric::ContextSwitches, 1.0),
        ("load avg", "1m") => (Metric::Load1, 1.0),
        (g, n) if g.starts_with("dsk/") || g.starts_with("io/") => {
            let dev = &g[g.find('/').map_or(0, |k| k + 1)..];
            let entity = if dev == "total" {
                sys
            } else {
                Entity::Device(dev.to_string())
            };
            let (m, scale) = match (g.starts_with("dsk/"), n) {
                (true, "read") => (Metric::DiskReadKibs, kib),
                (true, "writ") => (Metric::DiskWriteKibs, kib),
                (false, "read") => (Metric::DiskReadsPerSec, 1.0),
                (false, "writ") => (Metric::DiskWritesPerSec, 1.0),
                _ => return None,
            };
            return Some((m, scale, entity));
        }
        _ => return None,
    };
    Some((m, scale, sys))
}

fn cells(line: &str) -> Vec<&str> {
    line.split(',')
        .map(|c| c.trim().trim_matches('"'))
        .collect()
}

/// `Dec-02 23:59:52` or `02-12 11:48:45` to (month, day, seconds of day).
fn row_time(cell: &str) -> Option<(u32, u32, u32)> {
    let (md, clock) = cell.split_once(' ')?;
    let (a, b) = md.split_once('-')?;
    let secs = time::parse_clock(clock)?;
    if let Some(m) = MONTHS.iter().position(|&m| m == a) {
        return Some((m as u32 + 1, b.parse().ok()?, secs));
    }
    Some((b.parse().ok()?, a.parse().ok()?, secs))
}

pub(crate) fn read(text: &str, name: &str) -> Result<ContextSource, ContextError> {
    let mut b = Builder::new(ContextKind::Dool, name);
    let mut groups: Vec<String> = Vec::new();
    let mut cols: Vec<Option<(usize, f32)>> = Vec::new();
    let mut year = 1970;
    let mut last_month = 0;
    let mut utc = false;
    let mut first_row = false;
    let mut ends = Vec::new();
    let mut header_only = true;
    for (n, line) in lines(text, &mut b) {
        if line.is_empty() {
            continue;
        }
        let c = cells(line);
        let first = c.first().copied().unwrap_or("");
        match first {
            "Dstat 0.8.0 CSV output" | "Author:" => continue,
            _ if first.ends_with("CSV output") => continue,
            "Host:" => {
                b.host = c.get(1).map(|h| h.to_string());
                continue;
            }
            "Cmdline:" => {
                if let Some(k) = c.iter().position(|&x| x == "Date:")
                    && let Some(date) = c.get(k + 1)
                {
                    // `02 Dec 2026 23:59:52 UTC`
                    let w: Vec<&str> = date.split_ascii_whitespace().collect();
                    year = w.get(2).and_then(|y| y.parse().ok()).unwrap_or(year);
                    last_month = w
                        .get(1)
                        .and_then(|m| MONTHS.iter().position(|x| x == m))
                        .map_or(0, |m| m as u32 + 1);
                    utc = w.get(4).is_some_and(|z| matches!(*z, "UTC" | "GMT"));
                }
                continue;
            }
            "time" | "epoch" => {
                // the column line; `groups` (the line before) spans its cells
                let mut g = String::new();
                cols = c
                    .iter()
                    .enumerate()
                    .map(|(k, name)| {
                        if let Some(x) = groups.get(k).filter(|x| !x.is_empty()) {
                            g = x.clone();
                        }
                        column(&g, name).map(|(m, s, e)| (b.series_id(m, &e), s))
                    })
                    .collect();
                first_row = true;
                continue;
            }
            _ => {}
        }
        let Some((month, day, secs)) = row_time(first) else {
            // the group line, kept for the column line after it
            groups = c.iter().map(|s| s.to_string()).collect();
            continue;
        };
        header_only = false;
        if c.len() != cols.len() {
            b.warn(
                n,
                format!("row with {} cells, header has {}", c.len(), cols.len()),
            );
            continue;
        }
        if month < last_month {
            year += 1; // New Year
        }
        last_month = month;
        let Some(days) = time::date_days(
            time::DateTok::Ymd(year, month, day),
            time::SlashOrder::default(),
        ) else {
            b.warn(n, format!("unreadable time {first}"));
            continue;
        };
        b.begin(n, first_row);
        first_row = false;
        ends.push(Some((days * 86_400 + i64::from(secs)) * NS));
        for (k, cell) in c.iter().enumerate().skip(1) {
            if let Some((id, scale)) = cols[k] {
                match num(cell) {
                    Some(v) => b.set(id, v * scale),
                    None => b.warn(n, format!("unreadable number {cell}")),
                }
            }
        }
    }
    if header_only {
        return Err(ContextError::Invalid {
            path: name.to_string(),
            kind: ContextKind::Dool.name(),
            line: 1,
            message: "a header and no data rows (dstat 0.7.4 crashes before its first CSV row \
                      under Python 3.11; use dool)"
                .to_string(),
        });
    }
    b.finish(Times::Wall {
        ends,
        utc_offset_s: utc.then_some(0),
    })
}

#[cfg(test)]
mod tests {
    use crate::context::{Clock, ContextError, Entity, Metric, parse};

    const NS: i64 = 1_000_000_000;

    #[test]
    fn reads_rows_rolls_midnight_and_appended_runs() {
        let t = "\"dool 1.3.8 CSV output\"\n\
\"Host:\",\"vm\",,,,\"User:\",\"root\"\n\
\"Cmdline:\",\"dool -t -c -d 1 16\",,,,\"Date:\",\"02 Dec 2026 23:59:52 UTC\"\n\
\"system\",\"total cpu usage\",,,,,\"dsk/total\",\n\
\"time\",\"usr\",\"sys\",\"idl\",\"wai\",\"stl\",\"read\",\"writ\"\n\
Dec-02 23:59:59,55.5,14,29,1,0.3,2048,1024\n\
Dec-03 00:00:00,75.5,24,0,0,0.5,196608,0\n\n\n\
\"Host:\",\"vm\",,,,\"User:\",\"root\"\n\
\"Cmdline:\",\"dool -t -c -d 1 16\",,,,\"Date:\",\"03 Dec 2026 00:00:01 UTC\"\n\
\"system\",\"total cpu usage\",,,,,\"dsk/total\",\n\
\"time\",\"usr\",\"sys\",\"idl\",\"wai\",\"stl\",\"read\",\"writ\"\n\
Dec-03 00:00:01,56,13,29,1,0.3,2048,1024\n";
        let s = parse(t.as_bytes(), "d.csv").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.clock,
            Clock::Wall {
                utc_offset_s: Some(0)
            }
        );
        assert_eq!(s.host.as_deref(), Some("vm"));
        let since: Vec<bool> = s.intervals.iter().map(|i| i.since_boot).collect();
        assert_eq!(since, [true, false, true]);
        assert_eq!(s.intervals[1].end_ns - s.intervals[0].end_ns, NS);
        let rd = s
            .series(Metric::DiskReadKibs, &Entity::System)
            .map(|c| c.values.clone());
        assert_eq!(rd, Some(vec![2.0, 192.0, 2.0]));
    }

    #[test]
    fn a_header_only_csv_is_refused() {
        let t = "\"Dstat 0.8.0 CSV output\"\n\"Host:\",\"vm\"\n\"system\",\"total cpu usage\"\n\"time\",\"usr\"\n";
        let e = parse(t.as_bytes(), "x.csv");
        assert!(matches!(e, Err(ContextError::Invalid { .. })), "{e:?}");
    }
}
