//! The kernel counters the built-in sampler reads: `/proc/stat`, `/proc/vmstat`,
//! `/proc/meminfo` and `/proc/diskstats`. Parsers take the file's text so they
//! can be tested without a kernel; `read_*` fetch the live files.

use std::path::Path;

use anyhow::{Context, Result};

/// CPU time from a `cpu` line of `/proc/stat`, in USER_HZ ticks. `user` and
/// `nice` include guest time (the kernel counts it twice).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

impl CpuTimes {
    /// Every tick once (guest is inside user and nice).
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// `self - before`, field by field, never below zero (counters can step back).
    pub fn since(&self, before: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(before.user),
            nice: self.nice.saturating_sub(before.nice),
            system: self.system.saturating_sub(before.system),
            idle: self.idle.saturating_sub(before.idle),
            iowait: self.iowait.saturating_sub(before.iowait),
            irq: self.irq.saturating_sub(before.irq),
            softirq: self.softirq.saturating_sub(before.softirq),
            steal: self.steal.saturating_sub(before.steal),
            guest: self.guest.saturating_sub(before.guest),
            guest_nice: self.guest_nice.saturating_sub(before.guest_nice),
        }
    }
}

/// What `/proc/stat` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Stat {
    pub cpu: CpuTimes,
    /// Online CPUs (`cpuN` lines).
    pub n_cpus: u32,
    /// Interrupts since boot (first number of `intr`).
    pub intr: u64,
    /// Context switches since boot.
    pub ctxt: u64,
    /// Boot time, seconds since the epoch.
    pub btime: u64,
    pub procs_running: u64,
    pub procs_blocked: u64,
}

pub(crate) fn parse_stat(text: &str) -> Stat {
    let mut stat = Stat::default();
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let Some(key) = words.next() else { continue };
        let mut next = || {
            words
                .next()
                .and_then(|w| w.parse::<u64>().ok())
                .unwrap_or(0)
        };
        match key {
            "cpu" => {
                stat.cpu = CpuTimes {
                    user: next(),
                    nice: next(),
                    system: next(),
                    idle: next(),
                    iowait: next(),
                    irq: next(),
                    softirq: next(),
                    steal: next(),
                    guest: next(),
                    guest_nice: next(),
                }
            }
            "intr" => stat.intr = next(),
            "ctxt" => stat.ctxt = next(),
            "btime" => stat.btime = next(),
            "procs_running" => stat.procs_running = next(),
            "procs_blocked" => stat.procs_blocked = next(),
            k if k.starts_with("cpu") => stat.n_cpus += 1,
            _ => {}
        }
    }
    stat
}

/// The `/proc/meminfo` fields vmstat shows, in KiB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Meminfo {
    pub mem_free: u64,
    pub buffers: u64,
    pub cached: u64,
    pub s_reclaimable: u64,
    pub swap_total: u64,
    pub swap_free: u64,
}

pub(crate) fn parse_meminfo(text: &str) -> Meminfo {
    let mut m = Meminfo::default();
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let value = rest
            .split_ascii_whitespace()
            .next()
            .and_then(|w| w.parse().ok())
            .unwrap_or(0);
        match key {
            "MemFree" => m.mem_free = value,
            "Buffers" => m.buffers = value,
            "Cached" => m.cached = value,
            "SReclaimable" => m.s_reclaimable = value,
            "SwapTotal" => m.swap_total = value,
            "SwapFree" => m.swap_free = value,
            _ => {}
        }
    }
    m
}

/// The `/proc/vmstat` counters vmstat shows: paging in KiB, swapping in pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Vmstat {
    pub pgpgin: u64,
    pub pgpgout: u64,
    pub pswpin: u64,
    pub pswpout: u64,
}

pub(crate) fn parse_vmstat(text: &str) -> Vmstat {
    let mut v = Vmstat::default();
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let (Some(key), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        let value = value.parse().unwrap_or(0);
        match key {
            "pgpgin" => v.pgpgin = value,
            "pgpgout" => v.pgpgout = value,
            "pswpin" => v.pswpin = value,
            "pswpout" => v.pswpout = value,
            _ => {}
        }
    }
    v
}

/// One `/proc/diskstats` line: I/Os, merges, 512-byte sectors and milliseconds
/// for reads, writes, discards and flushes (the last two are 0 on old kernels).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DiskStat {
    pub name: String,
    pub rd_ios: u64,
    pub rd_merges: u64,
    pub rd_sectors: u64,
    pub rd_ticks: u64,
    pub wr_ios: u64,
    pub wr_merges: u64,
    pub wr_sectors: u64,
    pub wr_ticks: u64,
    pub in_flight: u64,
    /// Milliseconds with at least one I/O in flight (%util).
    pub io_ticks: u64,
    /// Weighted milliseconds of I/O (aqu-sz).
    pub rq_ticks: u64,
    pub dc_ios: u64,
    pub dc_merges: u64,
    pub dc_sectors: u64,
    pub dc_ticks: u64,
    pub fl_ios: u64,
    pub fl_ticks: u64,
}

impl DiskStat {
    /// iostat lists a device only once it has done some I/O since boot.
    pub fn has_io(&self) -> bool {
        self.rd_ios + self.wr_ios + self.dc_ios + self.fl_ios > 0
    }
}

pub(crate) fn parse_diskstats(text: &str) -> Vec<DiskStat> {
    let mut disks = Vec::new();
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace().skip(2);
        let Some(name) = words.next() else { continue };
        let n: Vec<u64> = words.map(|w| w.parse().unwrap_or(0)).collect();
        if n.len() < 11 {
            continue;
        }
        let at = |i: usize| n.get(i).copied().unwrap_or(0);
        disks.push(DiskStat {
            name: name.to_string(),
            rd_ios: at(0),
            rd_merges: at(1),
            rd_sectors: at(2),
            rd_ticks: at(3),
            wr_ios: at(4),
            wr_merges: at(5),
            wr_sectors: at(6),
            wr_ticks: at(7),
            in_flight: at(8),
            io_ticks: at(9),
            rq_ticks: at(10),
            dc_ios: at(11),
            dc_merges: at(12),
            dc_sectors: at(13),
            dc_ticks: at(14),
            fl_ios: at(15),
            fl_ticks: at(16),
        });
    }
    disks
}

fn read(path: &str) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {path}"))
}

pub(crate) fn read_stat() -> Result<Stat> {
    read("/proc/stat").map(|t| parse_stat(&t))
}

pub(crate) fn read_meminfo() -> Result<Meminfo> {
    read("/proc/meminfo").map(|t| parse_meminfo(&t))
}

pub(crate) fn read_vmstat() -> Result<Vmstat> {
    read("/proc/vmstat").map(|t| parse_vmstat(&t))
}

/// Whole devices only, as iostat shows them without `-p`: those with a
/// `/sys/block` entry (a `/` in the name is `!` there).
pub(crate) fn read_disks() -> Result<Vec<DiskStat>> {
    let mut disks = parse_diskstats(&read("/proc/diskstats")?);
    disks.retain(|d| {
        Path::new("/sys/block")
            .join(d.name.replace('/', "!"))
            .exists()
    });
    Ok(disks)
}

/// Seconds since boot, from `/proc/uptime`.
pub(crate) fn read_uptime() -> Result<f64> {
    let text = read("/proc/uptime")?;
    text.split_ascii_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .context("/proc/uptime: no number")
}

/// The kernel's page size in KiB (swap counters are in pages), from the first
/// mapping in `/proc/self/smaps`; 4 when it cannot be read.
pub(crate) fn page_kib() -> u64 {
    std::fs::read_to_string("/proc/self/smaps")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("KernelPageSize:"))
                .and_then(|r| r.split_ascii_whitespace().next()?.parse().ok())
        })
        .unwrap_or(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_counts_cpus_and_reads_counters() {
        let s = parse_stat(
            "cpu  10 1 5 80 2 1 1 0 3 0\ncpu0 5 0 2 40 1 0 0 0 0 0\ncpu1 5 1 3 40 1 1 1 0 3 0\n\
             intr 1234 0 1\nctxt 99\nbtime 1796211646\nprocs_running 3\nprocs_blocked 1\n",
        );
        assert_eq!(s.n_cpus, 2);
        assert_eq!(s.cpu.total(), 100);
        assert_eq!(s.cpu.guest, 3);
        assert_eq!((s.intr, s.ctxt, s.btime), (1234, 99, 1796211646));
        assert_eq!((s.procs_running, s.procs_blocked), (3, 1));
    }

    #[test]
    fn diskstats_reads_old_and_new_kernels() {
        let d = parse_diskstats(
            " 253 0 vda 10 1 80 5 20 2 160 7 0 9 12\n 253 0 vdb 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n",
        );
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].rd_sectors, d[0].rq_ticks, d[0].fl_ios), (80, 12, 0));
        assert_eq!((d[1].dc_ticks, d[1].fl_ticks), (15, 17));
    }
}
