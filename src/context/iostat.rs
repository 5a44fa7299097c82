//! iostat text (sysstat 10 to 12.7): default, `-x` of every era, `-d`, `-c`,
//! `-t` in every locale, `-U`, `-y`, `-z`, `-p ALL`, `-k`/`-m`, `-h`.
//!
//! Line classifier: banner | timestamp | `avg-cpu:` header | cpu values |
//! device header | device row | blank. Columns are mapped by name through
//! [`disk_column`]; a device header resets the map (the `-h` layout prints four
//! sub-tables per report with the device name last).

mod split;
mod table;

use super::build::{Builder, ContextOptions, Times};
use super::scan::{Spans, human_num, split_ws};
use super::time::{self, DateTok, SlashOrder, Stamp};
use super::{ContextError, ContextKind, ContextSource, Entity, Metric};
pub use split::{parallel_splits, set_parallel_min};
use table::{Table, put};

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

struct Reader<'o> {
    b: Builder,
    opts: &'o ContextOptions,
    tables: Vec<Table>,
    table: Option<usize>,
    /// The last avg-cpu header's names joined by one blank, and their series.
    cpu_key: String,
    cpu_cols: Vec<Option<usize>>,
    /// The byte ranges of the columns read of the row at hand.
    picked: Vec<(usize, usize)>,
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
    /// Reads the second half of a split file: no since-boot report there.
    later: bool,
}

impl<'o> Reader<'o> {
    fn new(name: &str, opts: &'o ContextOptions) -> Reader<'o> {
        Reader {
            b: Builder::new(ContextKind::IostatText, name),
            opts,
            tables: Vec::new(),
            table: None,
            cpu_key: String::new(),
            cpu_cols: Vec::new(),
            picked: Vec::new(),
            expect_cpu: false,
            open: false,
            content: false,
            headers: Vec::new(),
            stamps: Vec::new(),
            comma: false,
            blanks_after_banner: None,
            banner_date: None,
            c_like: false,
            later: false,
        }
    }

    /// Reads the lines of [`super::complete`]'s text; returns how many.
    fn run(&mut self, complete: &str) -> u32 {
        let mut buf: Vec<&str> = Vec::with_capacity(32);
        let mut last = 0;
        for (n, line) in super::numbered(complete) {
            last = n;
            if !self.fast_row(n, line) {
                split_ws(line, &mut buf);
                self.line(n, line, &buf);
            }
        }
        last
    }

    fn finish(mut self) -> Result<ContextSource, ContextError> {
        let times = self.times();
        self.b.finish(times)
    }

    fn start(&mut self, n: u32) {
        let since_boot = !self.later
            && self.b.len() == 0
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
        if !same_fields(&self.cpu_key, tokens) {
            self.cpu_key = tokens.join(" ");
            self.cpu_cols = tokens
                .iter()
                .skip(1)
                .map(|t| cpu_column(t).map(|m| self.b.series_id(m, &Entity::System)))
                .collect();
        }
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
                (Some(id), Some(h)) => {
                    self.comma |= h.comma;
                    self.b.set(id, h.value);
                }
                (_, None) => self.b.warn(n, format!("unreadable number {t}")),
                _ => {}
            }
        }
        self.content = true;
    }

    fn device_header(&mut self, n: u32, tokens: &[&str]) {
        let hid = match self.tables.iter().position(|t| same_fields(&t.key, tokens)) {
            Some(h) => h,
            None => {
                let name_last = tokens.last().is_some_and(|t| t.starts_with("Device"));
                let names = if name_last {
                    &tokens[..tokens.len() - 1]
                } else {
                    &tokens[1..]
                };
                self.tables
                    .push(Table::new(tokens.join(" "), name_last, names));
                self.tables.len() - 1
            }
        };
        if !self.open || self.headers.contains(&hid) {
            self.start(n);
        }
        self.headers.push(hid);
        self.table = Some(hid);
        if let Some(t) = self.tables.get_mut(hid) {
            t.next = 0;
        }
    }

    fn device_row(&mut self, n: u32, hid: usize, tokens: &[&str]) {
        let Some(t) = self.tables.get_mut(hid) else {
            return;
        };
        let (dev, vals) = match (t.name_last, tokens) {
            (true, [vals @ .., dev]) | (false, [dev, vals @ ..]) => (*dev, vals),
            _ => return,
        };
        if vals.len() != t.width {
            let msg = format!(
                "device row with {} values, header has {}",
                vals.len(),
                t.width
            );
            return self.b.warn(n, msg);
        }
        let read = std::mem::take(&mut t.read);
        let ids = t.device(dev, &mut self.b);
        for (&(k, scale), &id) in read.iter().zip(ids) {
            if let Some(tok) = vals.get(k) {
                put(&mut self.b, &mut self.comma, n, (id, scale), tok);
            }
        }
        t.read = read;
        self.content = true;
    }

    /// [`Self::line`] for a line that can only be a device row of the open
    /// table (the common case): its fields are found in one pass and only the
    /// columns read are looked at. `false` when the line may be anything else.
    fn fast_row(&mut self, n: u32, line: &str) -> bool {
        let Some(hid) = self.table.filter(|_| !self.expect_cpu) else {
            return false;
        };
        let head = line.trim_start_matches([' ', '\t']);
        let first = head.split([' ', '\t']).next().unwrap_or("");
        let last = line.rsplit([' ', '\t']).next().unwrap_or("");
        if first.is_empty()
            || first.as_bytes()[0].is_ascii_digit()
            || first == "avg-cpu:"
            || first.starts_with("Device")
            || last == "Device"
            || line.starts_with("Linux ")
        {
            return false;
        }
        let Some(t) = self.tables.get_mut(hid) else {
            return false;
        };
        // the fields kept: the name (first or last) and the columns read
        let skip = usize::from(!t.name_last);
        let mut want = t.read.iter().map(|&(k, _)| k + skip).peekable();
        self.picked.clear();
        let mut fields = 0;
        let mut name = (0, 0);
        for (f, span) in Spans::new(line).enumerate() {
            if f == 0 || t.name_last {
                name = span;
            }
            if want.peek() == Some(&f) {
                want.next();
                self.picked.push(span);
            }
            fields = f + 1;
        }
        if fields < 2 {
            self.b.warn(n, "not an iostat line");
            return true;
        }
        if fields - 1 != t.width {
            let msg = format!(
                "device row with {} values, header has {}",
                fields - 1,
                t.width
            );
            self.b.warn(n, msg);
            return true;
        }
        let read = std::mem::take(&mut t.read);
        let ids = t.device(line.get(name.0..name.1).unwrap_or(""), &mut self.b);
        for ((&(_, scale), &id), &(a, z)) in read.iter().zip(ids).zip(&self.picked) {
            put(
                &mut self.b,
                &mut self.comma,
                n,
                (id, scale),
                line.get(a..z).unwrap_or(""),
            );
        }
        t.read = read;
        self.content = true;
        true
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

/// Whether `tokens` are the fields of `key` (fields joined by one blank).
fn same_fields(key: &str, tokens: &[&str]) -> bool {
    !key.is_empty() && key.split(' ').eq(tokens.iter().copied())
}

pub(crate) fn read(
    text: &str,
    name: &str,
    opts: &ContextOptions,
) -> Result<ContextSource, ContextError> {
    if let Some(r) = split::read(text, name, opts) {
        return r.finish();
    }
    let mut r = Reader::new(name, opts);
    let complete = super::complete(text, &mut r.b);
    r.run(complete);
    r.finish()
}

#[cfg(test)]
mod tests {
    use crate::context::time::NS;
    use crate::context::{Clock, ContextKind, ContextSource, Entity, Metric, parse};

    const BANNER: &str = "Linux 6.18.44 (vm) \t12/02/26 \t_x86_64_\t(2 CPU)\n\n";
    const DEC2_1148: i64 = 1_796_212_080; // 2026-12-02 11:48:00 UTC

    fn read(text: &str) -> ContextSource {
        parse(text.as_bytes(), "t").unwrap_or_else(|e| panic!("{e}"))
    }

    fn dev(s: &ContextSource, m: Metric, d: &str) -> Vec<f32> {
        s.series(m, &Entity::Device(d.into()))
            .map(|c| c.values.clone())
            .unwrap_or_default()
    }

    fn report(stamp: &str, user: &str, rows: &str) -> String {
        format!(
            "{stamp}\navg-cpu:  %user   %nice %system %iowait  %steal   %idle\n\
             {user}    0.00    8.75    0.28    0.24   54.05\n\n\
             Device            r/s     rkB/s  aqu-sz  %util\n{rows}\n\n"
        )
    }

    #[test]
    fn c_locale_report_with_a_device_appearing_mid_run() {
        let t = format!(
            "{BANNER}{}{}",
            report(
                "12/02/26 11:48:48",
                "36.68",
                "vda   87.78  3937.97  0.12  2.25"
            ),
            report(
                "12/02/26 11:48:49",
                "62.37",
                "vda   50.00  468.00  0.01  0.80\nloop0  1.00  4.00  0.00  0.10"
            )
        );
        let s = read(&t);
        assert_eq!(s.kind, ContextKind::IostatText);
        assert_eq!((s.host.as_deref(), s.n_cpus), (Some("vm"), Some(2)));
        assert_eq!(s.clock, Clock::Wall { utc_offset_s: None });
        assert!(s.intervals[0].since_boot && !s.intervals[1].since_boot);
        assert_eq!(s.intervals[1].end_ns, (DEC2_1148 + 49) * NS);
        assert_eq!(s.intervals[0].line, 3);
        let l = dev(&s, Metric::DiskUtil, "loop0");
        assert!(l[0].is_nan() && l[1] == 0.1, "{l:?}");
        assert_eq!(dev(&s, Metric::DiskReadKibs, "vda"), [3937.97, 468.0]);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn comma_locales_read_day_first() {
        let fr = "Linux 6.18 (vm) \t02/12/2026 \t_x86_64_\t(2 CPU)\n\n".to_string()
            + &report(
                "02/12/2026 11:48:48",
                "55,80",
                "vda  1,50  2,25  0,10  3,50",
            );
        let s = read(&fr);
        assert_eq!(s.intervals[0].end_ns, (DEC2_1148 + 48) * NS);
        assert_eq!(dev(&s, Metric::DiskUtil, "vda"), [3.5]);
        let cpu = s
            .series(Metric::CpuUser, &Entity::System)
            .map(|c| c.values.clone());
        assert_eq!(cpu, Some(vec![55.8]));
        let de = "Linux 6.18 (vm) \t02.12.2026 \t_x86_64_\t(2 CPU)\n\n".to_string()
            + &report(
                "02.12.2026 11:48:48",
                "43,94",
                "vda  1,50  2,25  0,10  3,50",
            );
        assert_eq!(read(&de).intervals[0].end_ns, (DEC2_1148 + 48) * NS);
    }

    #[test]
    fn iso_zone_epoch_and_am_pm_stamps() {
        let iso = BANNER.to_string() + &report("2026-12-02T17:18:48+0530", "1.0", "vda 1 1 1 1");
        let s = read(&iso);
        assert_eq!(
            s.clock,
            Clock::Wall {
                utc_offset_s: Some(19_800)
            }
        );
        assert_eq!(s.intervals[0].end_ns, (DEC2_1148 + 48) * NS);
        let u = BANNER.to_string() + &report("1796212128", "1.0", "vda 1 1 1 1");
        let s = read(&u);
        assert_eq!(
            s.clock,
            Clock::Wall {
                utc_offset_s: Some(0)
            }
        );
        assert_eq!(s.intervals[0].end_ns, (DEC2_1148 + 48) * NS);
        let pm = BANNER.to_string()
            + &report("12/01/2026 11:59:59 PM", "1.0", "vda 1 1 1 1")
            + &report("12/02/2026 12:00:00 AM", "1.0", "vda 1 1 1 1");
        let s = read(&pm);
        assert_eq!(s.intervals[1].end_ns - s.intervals[0].end_ns, NS);
    }

    #[test]
    fn human_layout_device_last_with_suffixes() {
        let h = format!(
            "{BANNER}12/02/26 11:59:02\navg-cpu:  %user   %nice %system %iowait  %steal   %idle\n\
          55.3%    0.0%   13.5%    1.1%    0.4%   29.6%\n\n\
     r/s     rkB/s Device\n  547.36     26.2M vda\n    0.00      0.5k loop0\n\n\
     f/s f_await  aqu-sz  %util Device\n    0.91    0.06    0.64   7.3% vda\n\n\n"
        );
        let s = read(&h);
        assert_eq!(s.intervals.len(), 1, "the sub-tables are one report");
        assert_eq!(dev(&s, Metric::DiskReadKibs, "vda"), [26.2 * 1024.0]);
        assert_eq!(dev(&s, Metric::DiskReadKibs, "loop0"), [0.5]);
        assert_eq!(dev(&s, Metric::DiskUtil, "vda"), [7.3]);
    }

    #[test]
    fn old_layouts_units_and_no_timestamps() {
        let t = format!(
            "{BANNER}\navg-cpu:  %user   %nice %system %iowait  %steal   %idle\n\
          54.51    0.00   13.30    0.97    0.38   30.84\n\n\
Device:         rrqm/s   wrqm/s     r/s     w/s    rMB/s    wsec/s avgrq-sz avgqu-sz   await  svctm  %util\n\
vda               0.00     0.00    0.00    2.39     2.00   153.25   128.00     1.50    0.50   0.49   0.12\n\n"
        );
        let s = read(&t);
        assert_eq!(s.clock, Clock::Relative);
        // two blank lines after the banner: sysstat < 12.7.7 with -y
        assert!(!s.intervals[0].since_boot);
        assert_eq!(dev(&s, Metric::DiskReadKibs, "vda"), [2048.0]);
        assert_eq!(dev(&s, Metric::DiskWriteKibs, "vda"), [153.25 / 2.0]);
        assert_eq!(dev(&s, Metric::DiskQueue, "vda"), [1.5]);
        assert_eq!(dev(&s, Metric::DiskAwait, "vda"), [0.5]);
    }

    #[test]
    fn a_cut_row_and_stray_lines_are_warnings() {
        let t = format!(
            "{}{}vda   50.00  46",
            BANNER,
            report(
                "12/02/26 11:48:48",
                "36.68",
                "vda   87.78  3937.97  0.12\nzzz"
            )
        );
        let s = read(&t);
        assert_eq!(s.intervals.len(), 1);
        let lines: Vec<u32> = s.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, [11, 8, 9], "{:?}", s.warnings);
    }
}
