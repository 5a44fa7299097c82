//! iostat text (sysstat 10 to 12.7): default, `-x` of every era, `-d`, `-c`,
//! `-t` in every locale, `-U`, `-y`, `-z`, `-p ALL`, `-k`/`-m`, `-h`.
//!
//! Line classifier: banner | timestamp | `avg-cpu:` header | cpu values |
//! device header | device row | blank. Columns are mapped by name through
//! [`disk_column`]; a device header resets the map (the `-h` layout prints four
//! sub-tables per report with the device name last).

use std::collections::HashMap;

use super::build::{Builder, ContextOptions, Times, human_num};
use super::time::{self, DateTok, SlashOrder, Stamp};
use super::{ContextError, ContextKind, ContextSource, Entity, Metric, lines};

/// The metric of an iostat device column (text header or JSON key) and the
/// factor to KiB-based units.
pub(crate) fn disk_column(name: &str) -> Option<(Metric, f32)> {
    let name = name.trim_end_matches(':');
    let unit = |n: &str| -> Option<f32> {
        match n {
            "kB" => Some(1.0),
            "MB" => Some(1024.0),
            "sec" | "Blk" => Some(0.5),
            _ => None,
        }
    };
    Some(match name {
        "r/s" => (Metric::DiskReadsPerSec, 1.0),
        "w/s" => (Metric::DiskWritesPerSec, 1.0),
        "r_await" => (Metric::DiskAwaitRead, 1.0),
        "w_await" => (Metric::DiskAwaitWrite, 1.0),
        "await" => (Metric::DiskAwait, 1.0),
        "aqu-sz" | "avgqu-sz" => (Metric::DiskQueue, 1.0),
        "%util" | "util" | "util-percent" => (Metric::DiskUtil, 1.0),
        "tps" => (Metric::DiskTps, 1.0),
        // sadf -j: `rkB`, `wkB` are per second; `rd_sec`, `wr_sec` likewise.
        "rkB" => (Metric::DiskReadKibs, 1.0),
        "wkB" => (Metric::DiskWriteKibs, 1.0),
        _ => {
            // rkB/s rMB/s rsec/s rBlk/s, kB_read/s MB_wrtn/s Blk_read/s
            let per_s = name.strip_suffix("/s")?;
            if let Some(u) = per_s.strip_prefix('r').and_then(unit) {
                (Metric::DiskReadKibs, u)
            } else if let Some(u) = per_s.strip_prefix('w').and_then(unit) {
                (Metric::DiskWriteKibs, u)
            } else if let Some(u) = per_s.strip_suffix("_read").and_then(unit) {
                (Metric::DiskReadKibs, u)
            } else if let Some(u) = per_s.strip_suffix("_wrtn").and_then(unit) {
                (Metric::DiskWriteKibs, u)
            } else {
                return None;
            }
        }
    })
}

/// The metric of an avg-cpu / sar / mpstat CPU column.
pub(crate) fn cpu_column(name: &str) -> Option<Metric> {
    Some(match name.trim_start_matches('%') {
        "user" | "usr" => Metric::CpuUser,
        "nice" => Metric::CpuNice,
        "system" | "sys" => Metric::CpuSys,
        "iowait" => Metric::CpuIowait,
        "steal" => Metric::CpuSteal,
        "idle" => Metric::CpuIdle,
        "irq" => Metric::CpuIrq,
        "soft" => Metric::CpuSoft,
        "guest" => Metric::CpuGuest,
        _ => return None,
    })
}

/// The banner: `Linux 6.1.0 (host) \t12/02/26 \t_x86_64_\t(2 CPU)`.
pub(crate) struct Banner {
    pub host: Option<String>,
    pub n_cpus: Option<u32>,
    pub date: Option<DateTok>,
}

pub(crate) fn banner(line: &str) -> Option<Banner> {
    if !line.starts_with("Linux ") || !line.contains('\t') {
        return None;
    }
    let host = line
        .split_once('(')
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(h, _)| h.to_string());
    let n_cpus = line
        .rsplit_once('(')
        .and_then(|(_, r)| r.strip_suffix("CPU)"))
        .and_then(|n| n.trim().parse().ok());
    let date = line
        .split('\t')
        .nth(1)
        .and_then(|d| time::parse_date(d.trim()));
    Some(Banner { host, n_cpus, date })
}

/// One device header's layout.
struct Table {
    name_last: bool,
    /// Per value column: the metric's column key (metric, scale).
    cols: Vec<Option<(Metric, f32)>>,
    /// Per device: the series id of each column.
    ids: HashMap<String, Vec<Option<usize>>>,
}

struct Reader<'o> {
    b: Builder,
    opts: &'o ContextOptions,
    tables: Vec<(String, Table)>,
    table: Option<usize>,
    cpu_cols: Vec<Option<usize>>,
    expect_cpu: bool,
    /// The current report: has content, header tables seen in it.
    open: bool,
    content: bool,
    headers: Vec<usize>,
    stamps: Vec<Option<Stamp>>,
    comma: bool,
    blanks_after_banner: Option<u32>,
    banner_date: Option<DateTok>,
    /// A form only the C or en_US locale prints (2-digit year, AM/PM).
    c_like: bool,
}

impl Reader<'_> {
    fn start(&mut self, n: u32) {
        let since_boot = self.b.len() == 0
            && self
                .opts
                .since_boot_first
                .unwrap_or(self.blanks_after_banner.is_none_or(|k| k < 2));
        self.b.begin(n, since_boot);
        self.stamps.push(None);
        self.open = true;
        self.content = false;
        self.headers.clear();
    }

    fn cpu_header(&mut self, n: u32, tokens: &[&str]) {
        if !self.open || self.content {
            self.start(n);
        }
        self.cpu_cols = tokens
            .iter()
            .skip(1)
            .map(|t| cpu_column(t).map(|m| self.b.series_id(m, &Entity::System)))
            .collect();
        self.expect_cpu = true;
        self.table = None;
    }

    fn cpu_values(&mut self, n: u32, tokens: &[&str]) {
        self.expect_cpu = false;
        if tokens.len() != self.cpu_cols.len() {
            self.b.warn(n, "avg-cpu values do not match the header");
            return;
        }
        for (k, t) in tokens.iter().enumerate() {
            match (self.cpu_cols.get(k).copied().flatten(), human_num(t)) {
                (Some(id), Some((v, _))) => {
                    self.comma |= t.contains(',');
                    self.b.set(id, v);
                }
                (_, None) => self.b.warn(n, format!("unreadable number {t}")),
                _ => {}
            }
        }
        self.content = true;
    }

    fn device_header(&mut self, n: u32, tokens: &[&str]) {
        let key = tokens.join(" ");
        let hid = match self.tables.iter().position(|(k, _)| *k == key) {
            Some(h) => h,
            None => {
                let name_last = tokens.last().is_some_and(|t| t.starts_with("Device"));
                let names = if name_last {
                    &tokens[..tokens.len() - 1]
                } else {
                    &tokens[1..]
                };
                let cols = names.iter().map(|c| disk_column(c)).collect();
                self.tables.push((
                    key,
                    Table {
                        name_last,
                        cols,
                        ids: HashMap::new(),
                    },
                ));
                self.tables.len() - 1
            }
        };
        if !self.open || self.headers.contains(&hid) {
            self.start(n);
        }
        self.headers.push(hid);
        self.table = Some(hid);
    }

    fn device_row(&mut self, n: u32, hid: usize, tokens: &[&str]) {
        let Some((_, t)) = self.tables.get_mut(hid) else {
            return;
        };
        let (dev, vals) = match (t.name_last, tokens) {
            (true, [vals @ .., dev]) | (false, [dev, vals @ ..]) => (*dev, vals),
            _ => return,
        };
        if vals.len() != t.cols.len() {
            self.b.warn(
                n,
                format!(
                    "device row with {} values, header has {}",
                    vals.len(),
                    t.cols.len()
                ),
            );
            return;
        }
        if !t.ids.contains_key(dev) {
            let entity = Entity::Device(dev.to_string());
            let ids = t
                .cols
                .iter()
                .map(|c| c.map(|(m, _)| self.b.series_id(m, &entity)))
                .collect();
            t.ids.insert(dev.to_string(), ids);
        }
        let Some(ids) = t.ids.get(dev) else { return };
        for (k, tok) in vals.iter().enumerate() {
            let (Some(id), Some((_, scale))) = (ids[k], t.cols[k]) else {
                continue;
            };
            match human_num(tok) {
                Some((v, suffixed)) => {
                    self.comma |= tok.contains(',');
                    self.b.set(id, if suffixed { v } else { v * scale });
                }
                None => self.b.warn(n, format!("unreadable number {tok}")),
            }
        }
        self.content = true;
    }

    fn line(&mut self, n: u32, line: &str, tokens: &[&str]) {
        let Some(&first) = tokens.first() else {
            // A blank line ends a device table; count the ones after the banner
            // (sysstat < 12.7.7 printed two with -y).
            self.table = None;
            if let Some(k) = self.blanks_after_banner.as_mut()
                && self.b.len() == 0
            {
                *k += 1;
            }
            return;
        };
        if self.expect_cpu {
            return self.cpu_values(n, tokens);
        }
        if first == "avg-cpu:" {
            return self.cpu_header(n, tokens);
        }
        if first.starts_with("Device") || tokens.last().is_some_and(|t| *t == "Device") {
            return self.device_header(n, tokens);
        }
        if let Some(bn) = banner(line) {
            self.b.host = bn.host;
            self.b.n_cpus = bn.n_cpus;
            self.banner_date = bn.date;
            // `12/02/26`: the C locale's `%x`
            self.c_like |= line.split('\t').nth(1).is_some_and(|d| d.trim().len() == 8);
            self.blanks_after_banner = Some(0);
            return;
        }
        if first.as_bytes()[0].is_ascii_digit()
            && let Some(s) = time::parse_stamp(line)
            && !matches!(s, Stamp::TimeOnly(_))
        {
            self.start(n);
            self.c_like |= line.ends_with("AM") || line.ends_with("PM");
            if let Some(last) = self.stamps.last_mut() {
                *last = Some(s);
            }
            return;
        }
        match self.table {
            Some(hid) if tokens.len() > 1 => self.device_row(n, hid, tokens),
            _ => self.b.warn(n, "not an iostat line"),
        }
    }

    fn times(&mut self) -> Times {
        if self.stamps.iter().all(Option::is_none) {
            return Times::Relative {
                interval_ns: self.opts.interval_ns,
            };
        }
        let mut slashes: Vec<(u32, u32)> = Vec::new();
        let mut offset = None;
        for s in self.stamps.iter().flatten() {
            match s {
                Stamp::Local {
                    date: DateTok::Slash(a, b, _),
                    ..
                } => slashes.push((*a, *b)),
                Stamp::Local {
                    offset: Some(o), ..
                } => offset = offset.or(Some(*o)),
                Stamp::Epoch(_) => offset = Some(0),
                _ => {}
            }
        }
        if let Some(DateTok::Slash(a, b, _)) = self.banner_date {
            slashes.push((a, b));
        }
        let order = SlashOrder::decide(&slashes, self.comma, self.c_like);
        if order.guessed {
            self.b.warn(
                0,
                "dates like 02/12/2026 read month first (C order); nothing in the file settles it",
            );
        }
        Times::Wall {
            ends: self
                .stamps
                .iter()
                .map(|s| s.and_then(|s| time::stamp_ns(s, order)))
                .collect(),
            utc_offset_s: offset,
        }
    }
}

pub(crate) fn read(
    text: &str,
    name: &str,
    opts: &ContextOptions,
) -> Result<ContextSource, ContextError> {
    let mut r = Reader {
        b: Builder::new(ContextKind::IostatText, name),
        opts,
        tables: Vec::new(),
        table: None,
        cpu_cols: Vec::new(),
        expect_cpu: false,
        open: false,
        content: false,
        headers: Vec::new(),
        stamps: Vec::new(),
        comma: false,
        blanks_after_banner: None,
        banner_date: None,
        c_like: false,
    };
    let mut buf: Vec<&str> = Vec::with_capacity(32);
    for (n, line) in lines(text, &mut r.b) {
        buf.clear();
        buf.extend(line.split_ascii_whitespace());
        r.line(n, line, &buf);
    }
    let times = r.times();
    r.b.finish(times)
}
