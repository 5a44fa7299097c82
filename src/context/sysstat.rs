//! sar and mpstat text, and `sadf -d`: rows keyed by time, one section per
//! activity (`sar -W -B` prints all of `-W`, then all of `-B`), so the
//! intervals are the union of the rows' times.
//!
//! sar and mpstat print the time of day only: the banner gives the start date
//! and a clock going back by more than 12 h adds a day. A header line whose
//! time goes back starts the next section at the start date again.

use super::build::{Builder, Times};
use super::iostat::{banner, cpu_column, disk_column};
use super::scan::{num, split_ws};
use super::time::{self, DayCounter, NS, SlashOrder};
use super::{ContextError, ContextKind, ContextSource, Entity, Metric, lines};

/// A sar/sadf column name to a metric and scale; `dev`: in a per-device table.
fn sar_column(name: &str, dev: bool) -> Option<(Metric, f32)> {
    if dev {
        return match name {
            "rd_sec/s" => Some((Metric::DiskReadKibs, 0.5)),
            "wr_sec/s" => Some((Metric::DiskWriteKibs, 0.5)),
            n => disk_column(n),
        };
    }
    if let Some(m) = cpu_column(name) {
        return Some((m, 1.0));
    }
    Some(match name {
        "runq-sz" => (Metric::RunQueue, 1.0),
        "blocked" => (Metric::Blocked, 1.0),
        "ldavg-1" => (Metric::Load1, 1.0),
        // pages of 4 KiB (x86, arm64 default)
        "pswpin/s" => (Metric::SwapInKibs, 4.0),
        "pswpout/s" => (Metric::SwapOutKibs, 4.0),
        "pgpgin/s" => (Metric::BlockIn, 1.0),
        "pgpgout/s" => (Metric::BlockOut, 1.0),
        "cswch/s" => (Metric::ContextSwitches, 1.0),
        "intr/s" => (Metric::Interrupts, 1.0),
        "kbmemfree" => (Metric::MemFreeKib, 1.0),
        "kbbuffers" => (Metric::MemBuffKib, 1.0),
        "kbcached" => (Metric::MemCacheKib, 1.0),
        "kbactive" => (Metric::MemActiveKib, 1.0),
        "kbinact" => (Metric::MemInactiveKib, 1.0),
        "kbswpused" => (Metric::SwapUsedKib, 1.0),
        "tps" => (Metric::DiskTps, 1.0),
        _ => return None,
    })
}

/// The entity of a row from its entity column (`CPU`, `DEV`).
fn entity(col: &str, value: &str) -> Option<Entity> {
    match col {
        "CPU" => match value {
            "all" | "-1" => Some(Entity::System),
            n => n.parse().ok().map(Entity::Cpu),
        },
        "DEV" => Some(Entity::Device(value.to_string())),
        _ => None,
    }
}

/// One table layout: where the entity column is and what each column is.
struct Layout {
    entity_col: Option<(usize, String)>,
    cols: Vec<Option<(Metric, f32)>>,
}

fn layout(names: &[&str]) -> Layout {
    let entity_col = names
        .iter()
        .position(|n| n.len() > 1 && n.bytes().all(|c| c.is_ascii_uppercase()))
        .map(|k| (k, names[k].to_string()));
    let dev = entity_col.as_ref().is_some_and(|(_, n)| n == "DEV");
    let cols = names
        .iter()
        .enumerate()
        .map(|(k, n)| {
            if entity_col.as_ref().is_some_and(|(e, _)| *e == k) {
                None
            } else {
                sar_column(n, dev)
            }
        })
        .collect();
    Layout { entity_col, cols }
}

/// A row read: its time (ns), line, entity and values.
struct Row {
    t: i64,
    line: u32,
    entity: Entity,
    values: Vec<(Metric, f32)>,
}

fn row(layout: &Layout, t: i64, line: u32, fields: &[&str], b: &mut Builder) -> Option<Row> {
    if fields.len() != layout.cols.len() {
        b.warn(
            line,
            format!(
                "row with {} fields, header has {}",
                fields.len(),
                layout.cols.len()
            ),
        );
        return None;
    }
    let entity = match &layout.entity_col {
        Some((k, name)) => entity(name, fields.get(*k)?)?,
        None => Entity::System,
    };
    let mut values = Vec::with_capacity(fields.len());
    for (k, f) in fields.iter().enumerate() {
        if let Some((m, scale)) = layout.cols[k] {
            match num(f) {
                Some(v) => values.push((m, v * scale)),
                None => b.warn(line, format!("unreadable number {f}")),
            }
        }
    }
    Some(Row {
        t,
        line,
        entity,
        values,
    })
}

/// The intervals are the distinct row times, in order.
fn assemble(
    mut b: Builder,
    mut rows: Vec<Row>,
    offset: Option<i32>,
) -> Result<ContextSource, ContextError> {
    rows.sort_by_key(|r| r.t);
    let mut ends = Vec::new();
    for r in &rows {
        if ends.last() != Some(&Some(r.t)) {
            b.begin(r.line, false);
            ends.push(Some(r.t));
        }
        let at = ends.len() - 1;
        for &(m, v) in &r.values {
            let id = b.series_id(m, &r.entity);
            b.set_at(id, at, v);
        }
    }
    b.finish(Times::Wall {
        ends,
        utc_offset_s: offset,
    })
}

/// sar or mpstat text.
pub(crate) fn read_sar(
    text: &str,
    name: &str,
    kind: ContextKind,
) -> Result<ContextSource, ContextError> {
    let mut b = Builder::new(kind, name);
    let mut start_days = 0;
    let mut days = DayCounter::new(0);
    let mut last_secs: Option<u32> = None;
    let mut table: Option<Layout> = None;
    let mut rows = Vec::new();
    let mut buf: Vec<&str> = Vec::with_capacity(24);
    for (n, line) in lines(text, &mut b) {
        split_ws(line, &mut buf);
        let Some(&first) = buf.first() else { continue };
        if let Some(bn) = banner(line) {
            b.host = bn.host;
            b.n_cpus = bn.n_cpus;
            start_days = bn
                .date
                .and_then(|d| time::date_days(d, SlashOrder::decide(&[], false, true)))
                .unwrap_or(0);
            days = DayCounter::new(start_days);
            continue;
        }
        if first.ends_with(':') || line.contains("LINUX RESTART") {
            continue; // `Average:`, `Summary:`, restarts
        }
        let Some(mut secs) = time::parse_clock(first) else {
            b.warn(n, "not a sar/mpstat line");
            continue;
        };
        let mut k = 1;
        if let Some(m @ (&"AM" | &"PM")) = buf.get(1) {
            let h = secs / 3600;
            secs = (h % 12 + if *m == "PM" { 12 } else { 0 }) * 3600 + secs % 3600;
            k = 2;
        }
        let fields = &buf[k..];
        if fields.iter().all(|f| num(f).is_none()) {
            // a header: a time going back starts the next section
            if let Some(last) = last_secs
                && ((secs < last && last - secs <= 12 * 3600) || secs > last + 12 * 3600)
            {
                days = DayCounter::new(start_days);
            }
            last_secs = Some(secs);
            table = Some(layout(fields));
            continue;
        }
        let Some(layout) = &table else {
            b.warn(n, "row before any header");
            continue;
        };
        last_secs = Some(secs);
        let t = days.next(secs) * NS;
        if let Some(r) = row(layout, t, n, fields, &mut b) {
            rows.push(r);
        }
    }
    assemble(b, rows, None)
}

/// `sadf -d`: `host;interval;timestamp;[entity;]values`, `#` header lines.
pub(crate) fn read_sadf_csv(text: &str, name: &str) -> Result<ContextSource, ContextError> {
    let mut b = Builder::new(ContextKind::SadfCsv, name);
    let mut table: Option<Layout> = None;
    let mut rows = Vec::new();
    let mut offset = None;
    for (n, line) in lines(text, &mut b) {
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(';').collect();
        if let Some(h) = line.strip_prefix("# ") {
            let names: Vec<&str> = h.split(';').skip(3).collect();
            table = Some(layout(&names));
            continue;
        }
        let (Some(layout), Some(stamp)) = (&table, fields.get(2)) else {
            b.warn(n, "not a sadf -d row");
            continue;
        };
        let Some(s) = time::parse_stamp(stamp) else {
            b.warn(n, format!("unreadable time {stamp}"));
            continue;
        };
        if let time::Stamp::Local { offset: o, .. } = s {
            offset = offset.or(o);
        }
        let Some(t) = time::stamp_ns(s, SlashOrder::default()) else {
            b.warn(n, format!("unreadable time {stamp}"));
            continue;
        };
        if b.host.is_none() {
            b.host = fields.first().map(|h| h.to_string());
        }
        if let Some(r) = row(layout, t, n, &fields[3..], &mut b) {
            rows.push(r);
        }
    }
    assemble(b, rows, offset)
}

#[cfg(test)]
mod tests {
    use crate::context::{Clock, ContextKind, Entity, Metric, parse};

    const NS: i64 = 1_000_000_000;

    #[test]
    fn sar_sections_share_intervals_and_midnight_adds_a_day() {
        let t = "Linux 6.1 (vm) \t12/01/2026 \t_x86_64_\t(2 CPU)\n\n\
11:59:58 PM     CPU     %user     %nice   %system   %iowait    %steal     %idle\n\
11:59:59 PM     all      1.51      0.00      0.50      0.00      0.00     97.99\n\
12:00:00 AM     all      0.51      0.00      2.53      3.00      0.00     93.96\n\
Average:        all      1.01      0.00      1.52      1.50      0.00     95.97\n\n\
11:59:58 PM   runq-sz  plist-sz   ldavg-1   ldavg-5  ldavg-15   blocked\n\
11:59:59 PM         1       106      4.97      4.61      2.66         0\n\
12:00:00 AM         3       106      4.97      4.61      2.66         1\n";
        let s = parse(t.as_bytes(), "sar").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.kind, ContextKind::Sar);
        assert_eq!(s.n_cpus, Some(2));
        assert_eq!(s.clock, Clock::Wall { utc_offset_s: None });
        assert_eq!(s.intervals.len(), 2);
        assert_eq!(s.intervals[1].end_ns - s.intervals[0].end_ns, NS);
        let b = s
            .series(Metric::Blocked, &Entity::System)
            .map(|c| c.values.clone());
        assert_eq!(b, Some(vec![0.0, 1.0]));
        let wa = s
            .series(Metric::CpuIowait, &Entity::System)
            .map(|c| c.values.clone());
        assert_eq!(wa, Some(vec![0.0, 3.0]));
    }

    #[test]
    fn sar_device_name_last_and_sadf_rows_in_utc() {
        let t = "Linux 6.1 (vm) \t12/02/26 \t_x86_64_\t(2 CPU)\n\n\
11:56:15          tps     rkB/s     wkB/s     dkB/s   areq-sz    aqu-sz     await     %util DEV\n\
11:56:16        13.00      0.00    336.00    264.00     46.15      0.20      0.15      0.40 vda\n";
        let s = parse(t.as_bytes(), "sar-d").unwrap_or_else(|e| panic!("{e}"));
        let q = s.series(Metric::DiskQueue, &Entity::Device("vda".into()));
        assert_eq!(q.map(|c| c.values.clone()), Some(vec![0.2]));
        let d = "# hostname;interval;timestamp;CPU;%user;%nice;%system;%iowait;%steal;%idle\n\
vm;1;2026-12-02 11:56:16 UTC;-1;75.38;0.00;17.09;0.00;4.02;3.52\n\
vm;1;2026-12-02 11:56:17 UTC;-1;50.00;0.00;1.01;0.51;0.00;48.48\n";
        let s = parse(d.as_bytes(), "sadf").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.clock,
            Clock::Wall {
                utc_offset_s: Some(0)
            }
        );
        assert_eq!(s.intervals[0].end_ns, 1_796_212_576 * NS);
        assert_eq!(s.host.as_deref(), Some("vm"));
    }
}
