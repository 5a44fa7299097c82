//! What a host-context log (vmstat, iostat, sar, mpstat, dool) says, whatever
//! tool wrote it: one time axis of intervals and one column of values per
//! (metric, entity), NaN where a report did not list the entity.

/// The tool (and form) a context file came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContextKind {
    Vmstat,
    IostatText,
    IostatJson,
    Sar,
    SadfCsv,
    SadfJson,
    MpstatText,
    MpstatJson,
    Dool,
}

impl ContextKind {
    pub fn name(self) -> &'static str {
        match self {
            ContextKind::Vmstat => "vmstat",
            ContextKind::IostatText => "iostat",
            ContextKind::IostatJson => "iostat JSON",
            ContextKind::Sar => "sar",
            ContextKind::SadfCsv => "sadf -d",
            ContextKind::SadfJson => "sadf -j",
            ContextKind::MpstatText => "mpstat",
            ContextKind::MpstatJson => "mpstat JSON",
            ContextKind::Dool => "dool/dstat CSV",
        }
    }
}

/// How the times of a log were obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The log prints wall-clock times. `utc_offset_s` is the zone's offset
    /// when the log states it (ISO `%z`, JSON); `None`: the times are the
    /// host's local time as printed, read as if UTC.
    Wall { utc_offset_s: Option<i32> },
    /// No times in the log (vmstat without `-t`, iostat without `-t`): each
    /// interval's end is nanoseconds since the log's start, from the interval
    /// length.
    Relative,
    /// `end_ns` is CLOCK_MONOTONIC when the report's line reached `ember
    /// capture` ([`super::arrivals`]); wall time (UTC) is `end_ns +
    /// realtime_offset_ns`, read with it, in a zone `utc_offset_s` from UTC.
    Monotonic {
        realtime_offset_ns: i64,
        utc_offset_s: i32,
    },
}

/// One report of the log: the interval it covers ends at `end_ns` and lasts
/// `len_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    /// With [`Clock::Wall`]: nanoseconds since the Unix epoch of the printed
    /// time (see `utc_offset_s`); with [`Clock::Relative`]: since the log's start.
    pub end_ns: i64,
    pub len_ns: i64,
    /// The first report of vmstat/iostat without `-y`: averages since boot,
    /// not the interval. Kept for line numbers, never drawn or flagged.
    pub since_boot: bool,
    /// 1-based line of the report in the file (its timestamp or first row).
    pub line: u32,
}

/// What a column measures. Percentages are 0..=100.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    CpuUser,
    CpuNice,
    CpuSys,
    CpuIowait,
    CpuSteal,
    CpuIdle,
    CpuIrq,
    CpuSoft,
    CpuGuest,
    /// vmstat `r`: runnable tasks (running + waiting for a CPU).
    RunQueue,
    /// vmstat `b`: tasks blocked in uninterruptible sleep (D state).
    Blocked,
    MemFreeKib,
    MemBuffKib,
    MemCacheKib,
    MemActiveKib,
    MemInactiveKib,
    SwapUsedKib,
    /// KiB/s swapped in and out (vmstat si/so).
    SwapInKibs,
    SwapOutKibs,
    /// vmstat bi/bo: blocks per second.
    BlockIn,
    BlockOut,
    Interrupts,
    ContextSwitches,
    Load1,
    DiskReadsPerSec,
    DiskWritesPerSec,
    DiskReadKibs,
    DiskWriteKibs,
    /// ms
    DiskAwaitRead,
    /// ms
    DiskAwaitWrite,
    /// ms (iostat `await`, of both)
    DiskAwait,
    /// aqu-sz / avgqu-sz
    DiskQueue,
    DiskUtil,
    DiskTps,
}

impl Metric {
    /// A short label for the timeline and `ember info`.
    pub fn label(self) -> &'static str {
        match self {
            Metric::CpuUser => "us",
            Metric::CpuNice => "ni",
            Metric::CpuSys => "sy",
            Metric::CpuIowait => "wa",
            Metric::CpuSteal => "st",
            Metric::CpuIdle => "id",
            Metric::CpuIrq => "irq",
            Metric::CpuSoft => "soft",
            Metric::CpuGuest => "gu",
            Metric::RunQueue => "r",
            Metric::Blocked => "b",
            Metric::MemFreeKib => "free",
            Metric::MemBuffKib => "buff",
            Metric::MemCacheKib => "cache",
            Metric::MemActiveKib => "active",
            Metric::MemInactiveKib => "inact",
            Metric::SwapUsedKib => "swpd",
            Metric::SwapInKibs => "si",
            Metric::SwapOutKibs => "so",
            Metric::BlockIn => "bi",
            Metric::BlockOut => "bo",
            Metric::Interrupts => "in",
            Metric::ContextSwitches => "cs",
            Metric::Load1 => "load1",
            Metric::DiskReadsPerSec => "r/s",
            Metric::DiskWritesPerSec => "w/s",
            Metric::DiskReadKibs => "rkB/s",
            Metric::DiskWriteKibs => "wkB/s",
            Metric::DiskAwaitRead => "r_await",
            Metric::DiskAwaitWrite => "w_await",
            Metric::DiskAwait => "await",
            Metric::DiskQueue => "aqu-sz",
            Metric::DiskUtil => "%util",
            Metric::DiskTps => "tps",
        }
    }

    pub fn unit(self) -> Unit {
        use Metric::*;
        match self {
            CpuUser | CpuNice | CpuSys | CpuIowait | CpuSteal | CpuIdle | CpuIrq | CpuSoft
            | CpuGuest | DiskUtil => Unit::Percent,
            RunQueue | Blocked | DiskQueue | Load1 => Unit::Tasks,
            MemFreeKib | MemBuffKib | MemCacheKib | MemActiveKib | MemInactiveKib | SwapUsedKib => {
                Unit::Kib
            }
            SwapInKibs | SwapOutKibs | DiskReadKibs | DiskWriteKibs => Unit::KibPerSec,
            BlockIn | BlockOut | Interrupts | ContextSwitches | DiskReadsPerSec
            | DiskWritesPerSec | DiskTps => Unit::PerSec,
            DiskAwaitRead | DiskAwaitWrite | DiskAwait => Unit::Ms,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Percent,
    Tasks,
    Kib,
    KibPerSec,
    PerSec,
    Ms,
}

/// Whose number it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Entity {
    /// The whole host (vmstat, iostat's avg-cpu, mpstat `all`).
    System,
    Cpu(u16),
    Device(String),
}

/// One column: a value per interval (NaN where absent).
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub metric: Metric,
    pub entity: Entity,
    pub values: Vec<f32>,
}

/// A line that could not be read, counted like the profile readers' warnings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextWarning {
    pub line: u32,
    pub message: String,
}

/// One context file, read.
#[derive(Clone, Debug, PartialEq)]
pub struct ContextSource {
    /// The file's name as the user gave it.
    pub name: String,
    pub kind: ContextKind,
    /// From the banner (`Linux 6.1.0 (host) ...`) or JSON.
    pub host: Option<String>,
    pub n_cpus: Option<u32>,
    pub clock: Clock,
    /// Sorted by `end_ns`.
    pub intervals: Vec<Interval>,
    pub series: Vec<Series>,
    pub warnings: Vec<ContextWarning>,
}

impl ContextSource {
    /// The column of `metric` for `entity`, if the log has it.
    pub fn series(&self, metric: Metric, entity: &Entity) -> Option<&Series> {
        self.series
            .iter()
            .find(|s| s.metric == metric && &s.entity == entity)
    }

    /// Every device the log names, in first-seen order.
    pub fn devices(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for s in &self.series {
            if let Entity::Device(d) = &s.entity
                && !out.contains(&d.as_str())
            {
                out.push(d);
            }
        }
        out
    }

    /// The intervals that describe the window (not the since-boot report).
    pub fn reports(&self) -> impl Iterator<Item = (usize, &Interval)> {
        self.intervals
            .iter()
            .enumerate()
            .filter(|(_, i)| !i.since_boot)
    }

    /// (start, end) in the log's clock: the start of the first real report's
    /// interval to the end of the last.
    pub fn span_ns(&self) -> Option<(i64, i64)> {
        let mut reports = self.reports();
        let first = reports.next()?.1;
        let last = self.intervals.last()?;
        Some((first.end_ns - first.len_ns, last.end_ns))
    }

    /// The usual interval length (the median), in nanoseconds.
    pub fn interval_ns(&self) -> Option<i64> {
        let mut lens: Vec<i64> = self.reports().map(|(_, i)| i.len_ns).collect();
        if lens.is_empty() {
            return None;
        }
        lens.sort_unstable();
        Some(lens[lens.len() / 2])
    }

    /// The index of the first interval whose end is at or after `t_ns`.
    pub fn interval_at(&self, t_ns: i64) -> Option<usize> {
        let i = self.intervals.partition_point(|iv| iv.end_ns < t_ns);
        (i < self.intervals.len()).then_some(i)
    }
}
