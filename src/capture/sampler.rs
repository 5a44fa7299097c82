//! The built-in sampler for hosts without vmstat or sysstat: reads `/proc`
//! every interval and writes what `vmstat -t -n -w 1` (procps-ng 4.0.x wide,
//! 18 columns) and `S_TIME_FORMAT=ISO iostat -x -t -y 1` (sysstat ≥ 12.3.1)
//! would have printed, so the same readers open the logs
//! (docs/context-formats.md §2.2, §3.1, §3.2).

use std::io::Write;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::clock::{self, civil, offset_text};
use super::procfs::{self, CpuTimes, DiskStat, Meminfo, Stat, Vmstat};
use super::stamp::Stamped;

pub(crate) const VMSTAT_GROUPS: &str = "--procs-- -----------------------memory---------------------- ---swap-- -----io---- -system-- ----------cpu---------- -----timestamp-----";
pub(crate) const VMSTAT_COLUMNS: &str = "   r    b         swpd         free         buff        cache   si   so    bi    bo   in   cs  us  sy  id  wa  st  gu";
pub(crate) const IOSTAT_CPU: &str = "avg-cpu:  %user   %nice %system %iowait  %steal   %idle";
pub(crate) const IOSTAT_DEVICE: &str = "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util";
/// iostat prints device names `%-13s`.
const DEVICE_WIDTH: usize = 13;

/// The width of each column of a right-aligned header, the blank before it
/// excluded. `first` is the width of a left-aligned first column (iostat's
/// `%-13s` device names), whose padding belongs to it, not to the next column.
fn widths(header: &str, first: Option<usize>) -> Vec<usize> {
    let bytes = header.as_bytes();
    let mut ends = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        while i < bytes.len() && bytes[i] != b' ' {
            i += 1;
        }
        ends.push(i);
    }
    if let (Some(w), Some(e)) = (first, ends.first_mut()) {
        *e = w;
    }
    let mut out = Vec::with_capacity(ends.len());
    let mut prev = None;
    for e in ends {
        out.push(prev.map_or(e, |p| e - p - 1));
        prev = Some(e);
    }
    out
}

/// Where the sampler writes, and what it knows of the host.
pub(crate) struct Sampler {
    pub vmstat: Option<Stamped>,
    pub iostat: Option<Stamped>,
    pub interval: Duration,
    pub utc_offset_s: i32,
    pub zone: String,
    /// For the iostat banner.
    pub kernel: String,
    pub host: String,
    pub arch: String,
}

/// One reading of every counter the two logs need.
struct Snapshot {
    at: Instant,
    stat: Stat,
    mem: Meminfo,
    vm: Vmstat,
    disks: Vec<DiskStat>,
}

fn snapshot(disks: bool) -> Result<Snapshot> {
    Ok(Snapshot {
        at: Instant::now(),
        stat: procfs::read_stat()?,
        mem: procfs::read_meminfo()?,
        vm: procfs::read_vmstat()?,
        disks: if disks {
            procfs::read_disks()?
        } else {
            Vec::new()
        },
    })
}

impl Sampler {
    /// Samples until `stop` receives (or its sender is dropped), writing one
    /// line/report per interval, each flushed as it is written.
    pub fn run(mut self, stop: &Receiver<()>) -> Result<()> {
        let page_kib = procfs::page_kib();
        let mut prev = snapshot(self.iostat.is_some())?;
        let start = prev.at;
        let stamp = self.stamp(" ");
        if let Some(w) = self.vmstat.as_mut() {
            writeln!(w, "{VMSTAT_GROUPS}\n{VMSTAT_COLUMNS} {:>19}", self.zone)?;
            let uptime = procfs::read_uptime()?.max(0.01);
            let line = vmstat_line(&prev, None, uptime, page_kib);
            writeln!(w, "{line} {stamp}")?;
            w.flush()?;
        }
        if let Some(w) = self.iostat.as_mut() {
            let now = civil(clock::now_s(), self.utc_offset_s);
            let stat = &prev.stat;
            writeln!(
                w,
                "Linux {} ({}) \t{} \t_{}_\t({} CPU)\n",
                self.kernel,
                self.host,
                now.date(),
                self.arch,
                stat.n_cpus
            )?;
            w.flush()?;
        }
        for k in 1u32.. {
            let due = start + self.interval * k;
            match stop.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
            }
            let cur = snapshot(self.iostat.is_some())?;
            let secs = cur.at.duration_since(prev.at).as_secs_f64().max(0.001);
            let stamp = self.stamp(" ");
            if let Some(w) = self.vmstat.as_mut() {
                let line = vmstat_line(&cur, Some(&prev), secs, page_kib);
                writeln!(w, "{line} {stamp}")?;
                w.flush()?;
            }
            if self.iostat.is_some() {
                let stamp = self.stamp("T") + &offset_text(self.utc_offset_s);
                let report = iostat_report(&cur, &prev, secs, &stamp);
                if let Some(w) = self.iostat.as_mut() {
                    w.write_all(report.as_bytes())?;
                    w.flush()?;
                }
            }
            prev = cur;
        }
        Ok(())
    }

    /// Local date and time now, joined by `sep`.
    fn stamp(&self, sep: &str) -> String {
        let c = civil(clock::now_s(), self.utc_offset_s);
        format!("{}{sep}{}", c.date(), c.time())
    }
}

/// Percent of `part` in `total` ticks, rounded as procps does.
fn pct(part: u64, total: u64) -> u64 {
    (100 * part + total / 2).checked_div(total).unwrap_or(0)
}

/// Per second over `secs`.
fn rate(delta: u64, secs: f64) -> u64 {
    // Counters fit f64's 53 bits for any real uptime; rounded like vmstat's integer division.
    (delta as f64 / secs).round() as u64
}

/// A vmstat data line without its timestamp. With no `prev`, the since-boot
/// line (rates over the uptime `secs`), as vmstat prints first.
fn vmstat_line(cur: &Snapshot, prev: Option<&Snapshot>, secs: f64, page_kib: u64) -> String {
    let zero_stat = Stat::default();
    let zero_vm = Vmstat::default();
    let (ps, pv) = prev.map_or((&zero_stat, &zero_vm), |p| (&p.stat, &p.vm));
    let cpu = cur.stat.cpu.since(&ps.cpu);
    let total = cpu.total();
    let guest = cpu.guest + cpu.guest_nice;
    let user = (cpu.user + cpu.nice).saturating_sub(guest);
    let m = &cur.mem;
    let values = [
        cur.stat.procs_running,
        cur.stat.procs_blocked,
        m.swap_total.saturating_sub(m.swap_free),
        m.mem_free,
        m.buffers,
        m.cached + m.s_reclaimable,
        rate(cur.vm.pswpin.saturating_sub(pv.pswpin) * page_kib, secs),
        rate(cur.vm.pswpout.saturating_sub(pv.pswpout) * page_kib, secs),
        rate(cur.vm.pgpgin.saturating_sub(pv.pgpgin), secs),
        rate(cur.vm.pgpgout.saturating_sub(pv.pgpgout), secs),
        rate(cur.stat.intr.saturating_sub(ps.intr), secs),
        rate(cur.stat.ctxt.saturating_sub(ps.ctxt), secs),
        pct(user, total),
        pct(cpu.system + cpu.irq + cpu.softirq, total),
        pct(cpu.idle, total),
        pct(cpu.iowait, total),
        pct(cpu.steal, total),
        pct(guest, total),
    ];
    let mut line = String::new();
    for (i, (v, w)) in values.iter().zip(widths(VMSTAT_COLUMNS, None)).enumerate() {
        if i > 0 {
            line.push(' ');
        }
        line.push_str(&format!("{v:>w$}"));
    }
    line
}

/// One `iostat -x -t` report: timestamp, avg-cpu, the device table, two blanks.
fn iostat_report(cur: &Snapshot, prev: &Snapshot, secs: f64, stamp: &str) -> String {
    let mut out = format!("{stamp}\n{IOSTAT_CPU}\n       ");
    let cpu: CpuTimes = cur.stat.cpu.since(&prev.stat.cpu);
    let total = cpu.total() as f64;
    let share = |x: u64| {
        if total > 0.0 {
            100.0 * x as f64 / total
        } else {
            0.0
        }
    };
    for v in [
        share(cpu.user),
        share(cpu.nice),
        share(cpu.system + cpu.irq + cpu.softirq),
        share(cpu.iowait),
        share(cpu.steal),
        share(cpu.idle),
    ] {
        out.push_str(&format!(" {v:>7.2}"));
    }
    out.push_str(&format!("\n\n{IOSTAT_DEVICE}\n"));
    let w = widths(IOSTAT_DEVICE, Some(DEVICE_WIDTH));
    let zero = DiskStat::default();
    for disk in cur.disks.iter().filter(|d| d.has_io()) {
        let before = prev
            .disks
            .iter()
            .find(|p| p.name == disk.name)
            .unwrap_or(&zero);
        out.push_str(&format!("{:<DEVICE_WIDTH$}", disk.name));
        for (v, width) in device_values(disk, before, secs)
            .iter()
            .zip(w.iter().skip(1))
        {
            out.push_str(&format!(" {v:>width$.2}"));
        }
        out.push('\n');
    }
    out.push_str("\n\n");
    out
}

/// The 22 extended columns of one device over `secs`, as sysstat computes them.
fn device_values(cur: &DiskStat, prev: &DiskStat, secs: f64) -> Vec<f64> {
    let d = |a: u64, b: u64| a.saturating_sub(b) as f64;
    let per_s = |x: f64| x / secs;
    let ratio = |x: f64, n: f64| if n > 0.0 { x / n } else { 0.0 };
    let group = |ios: f64, merges: f64, sectors: f64, ticks: f64| {
        let kb = sectors / 2.0;
        [
            per_s(ios),
            per_s(kb),
            per_s(merges),
            100.0 * ratio(merges, merges + ios),
            ratio(ticks, ios),
            ratio(kb, ios),
        ]
    };
    let mut v = Vec::with_capacity(22);
    v.extend(group(
        d(cur.rd_ios, prev.rd_ios),
        d(cur.rd_merges, prev.rd_merges),
        d(cur.rd_sectors, prev.rd_sectors),
        d(cur.rd_ticks, prev.rd_ticks),
    ));
    v.extend(group(
        d(cur.wr_ios, prev.wr_ios),
        d(cur.wr_merges, prev.wr_merges),
        d(cur.wr_sectors, prev.wr_sectors),
        d(cur.wr_ticks, prev.wr_ticks),
    ));
    v.extend(group(
        d(cur.dc_ios, prev.dc_ios),
        d(cur.dc_merges, prev.dc_merges),
        d(cur.dc_sectors, prev.dc_sectors),
        d(cur.dc_ticks, prev.dc_ticks),
    ));
    let fl = d(cur.fl_ios, prev.fl_ios);
    v.push(per_s(fl));
    v.push(ratio(d(cur.fl_ticks, prev.fl_ticks), fl));
    let ms = secs * 1000.0;
    v.push(d(cur.rq_ticks, prev.rq_ticks) / ms);
    v.push((100.0 * d(cur.io_ticks, prev.io_ticks) / ms).min(100.0));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_the_headers() {
        let v = widths(VMSTAT_COLUMNS, None);
        assert_eq!(v.len(), 18);
        assert_eq!(&v[..6], &[4, 4, 12, 12, 12, 12]);
        assert_eq!(&v[12..], &[3; 6]);
        let d = widths(IOSTAT_DEVICE, Some(DEVICE_WIDTH));
        assert_eq!(d.len(), 23);
        assert_eq!(&d[..5], &[13, 7, 9, 8, 6]);
    }

    fn snap(secs_from: Instant, user: u64, idle: u64, disk: DiskStat) -> Snapshot {
        Snapshot {
            at: secs_from,
            stat: Stat {
                cpu: CpuTimes {
                    user,
                    idle,
                    ..CpuTimes::default()
                },
                n_cpus: 2,
                ..Stat::default()
            },
            mem: Meminfo::default(),
            vm: Vmstat::default(),
            disks: vec![disk],
        }
    }

    #[test]
    fn a_report_has_the_sysstat_layout() {
        let t = Instant::now();
        let before = DiskStat {
            name: "vda".into(),
            rd_ios: 10,
            ..DiskStat::default()
        };
        let after = DiskStat {
            name: "vda".into(),
            rd_ios: 20,
            rd_sectors: 80,
            rd_ticks: 5,
            io_ticks: 500,
            ..DiskStat::default()
        };
        let r = iostat_report(
            &snap(t, 30, 170, after),
            &snap(t, 10, 90, before),
            1.0,
            "STAMP",
        );
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines[0], "STAMP");
        assert_eq!(
            lines[2],
            "          20.00    0.00    0.00    0.00    0.00   80.00"
        );
        assert_eq!(lines[5].len(), IOSTAT_DEVICE.len());
        let row: Vec<&str> = lines[5].split_whitespace().collect();
        assert_eq!(
            &row[..6],
            &["vda", "10.00", "40.00", "0.00", "0.00", "0.50"]
        );
        assert_eq!(row[22], "50.00");
        assert!(r.ends_with("\n\n\n"));
    }
}
