//! sysstat JSON: `iostat -o JSON`, `mpstat -o JSON`, `sadf -j`.
//!
//! Read as a stream: the host fields before `"statistics": [`, then every
//! complete element of that array. A document cut off mid-write (iostat
//! killed by SIGTERM before 12.7.8, SIGKILL, still running) keeps every
//! complete report and says where it stopped.

use serde_json::Value;

use super::build::{Builder, ContextOptions, Times};
use super::iostat::{cpu_column, disk_column};
use super::time::{self, DateTok, DayCounter, NS, SlashOrder, Stamp};
use super::{ContextError, ContextKind, ContextSource, Entity, Metric};

/// The end (exclusive) of the JSON value that starts at `at` (`{` or `[`), or
/// `None` if the text ends first.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0u32;
    let mut in_str = false;
    let mut esc = false;
    for (k, &c) in bytes.iter().enumerate().skip(at) {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn line_of(text: &str, at: usize) -> u32 {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count() as u32
        + 1
}

/// Per-kind field readers fill one interval from one `statistics` element.
struct Reader<'o> {
    b: Builder,
    kind: ContextKind,
    opts: &'o ContextOptions,
    stamps: Vec<Option<Stamp>>,
    /// sadf -j: absolute ends; offset 0 when `"utc": 1`.
    ends: Vec<Option<i64>>,
    utc: bool,
}

fn f(v: &Value) -> Option<f32> {
    v.as_f64().map(|x| x as f32)
}

impl Reader<'_> {
    fn element(&mut self, line: u32, e: &Value) {
        let since_boot = self.b.len() == 0
            && self.kind == ContextKind::IostatJson
            && self.opts.since_boot_first.unwrap_or(true);
        self.b.begin(line, since_boot);
        match e.get("timestamp") {
            Some(Value::String(s)) => self.stamps.push(time::parse_stamp(s)),
            Some(Value::Object(o)) => {
                // sadf -j: {"date","time","utc","interval"}
                let date = o
                    .get("date")
                    .and_then(Value::as_str)
                    .and_then(time::parse_date);
                let secs = o
                    .get("time")
                    .and_then(Value::as_str)
                    .and_then(time::parse_clock);
                self.utc |= o.get("utc").and_then(Value::as_i64) == Some(1);
                self.stamps.push(None);
                let end = match (date, secs) {
                    (Some(d), Some(s)) => time::date_days(d, SlashOrder::default())
                        .map(|days| (days * 86_400 + i64::from(s)) * NS),
                    _ => None,
                };
                self.ends.push(end);
            }
            _ => self.stamps.push(None),
        }
        if let Some(Value::Object(cpu)) = e.get("avg-cpu") {
            for (k, v) in cpu {
                if let (Some(m), Some(x)) = (cpu_column(k), f(v)) {
                    let id = self.b.series_id(m, &Entity::System);
                    self.b.set(id, x);
                }
            }
        }
        if let Some(Value::Array(cpus)) = e.get("cpu-load") {
            for c in cpus {
                let entity = match c.get("cpu").and_then(Value::as_str) {
                    Some("all") | Some("-1") => Entity::System,
                    Some(n) => match n.parse() {
                        Ok(n) => Entity::Cpu(n),
                        Err(_) => continue,
                    },
                    None => continue,
                };
                self.fields(c, &entity, |k| cpu_column(k).map(|m| (m, 1.0)));
            }
        }
        if let Some(q) = e.get("queue") {
            self.fields(q, &Entity::System, |k| match k {
                "runq-sz" => Some((Metric::RunQueue, 1.0)),
                "blocked" => Some((Metric::Blocked, 1.0)),
                "ldavg-1" => Some((Metric::Load1, 1.0)),
                _ => None,
            });
        }
        if let Some(Value::Array(disks)) = e.get("disk") {
            for d in disks {
                let name = d
                    .get("disk_device")
                    .or_else(|| d.get("disk-device"))
                    .and_then(Value::as_str);
                let Some(name) = name else {
                    self.b.warn(line, "disk entry without a device name");
                    continue;
                };
                self.fields(d, &Entity::Device(name.to_string()), disk_column);
            }
        }
    }

    fn fields(
        &mut self,
        obj: &Value,
        entity: &Entity,
        map: impl Fn(&str) -> Option<(Metric, f32)>,
    ) {
        let Value::Object(o) = obj else { return };
        for (k, v) in o {
            if let (Some((m, scale)), Some(x)) = (map(k), f(v)) {
                let id = self.b.series_id(m, entity);
                self.b.set(id, x * scale);
            }
        }
    }

    /// sysstat 12.2.0 wrote sectors/s as `rkB/s` in JSON: twice the truth. The
    /// request size (`rareq-sz`, kB) tells: rkB/s = r/s × rareq-sz.
    fn doubled_kb_fixup(&mut self, elements: &[Value]) {
        let (mut twice, mut right) = (0, 0);
        for d in elements
            .iter()
            .filter_map(|e| e.get("disk").and_then(Value::as_array))
            .flatten()
        {
            for (n, kb, sz) in [("r/s", "rkB/s", "rareq-sz"), ("w/s", "wkB/s", "wareq-sz")] {
                let get = |k: &str| d.get(k).and_then(Value::as_f64);
                if let (Some(n), Some(kb), Some(sz)) = (get(n), get(kb), get(sz))
                    && n * sz > 10.0
                {
                    let ratio = kb / (n * sz);
                    if (1.9..2.1).contains(&ratio) {
                        twice += 1;
                    } else if (0.95..1.05).contains(&ratio) {
                        right += 1;
                    }
                }
            }
        }
        if twice > right && twice >= 2 {
            self.b.warn(
                0,
                "kB/s values are twice r/s x request size (the sysstat 12.2.0 JSON bug): halved",
            );
            self.b
                .scale(&[Metric::DiskReadKibs, Metric::DiskWriteKibs], 0.5);
        }
    }

    fn times(&mut self, host_date: Option<DateTok>) -> Times {
        if self.ends.iter().any(Option::is_some) {
            return Times::Wall {
                ends: std::mem::take(&mut self.ends),
                utc_offset_s: self.utc.then_some(0),
            };
        }
        if self.stamps.iter().all(Option::is_none) {
            return Times::Relative {
                interval_ns: self.opts.interval_ns,
            };
        }
        let mut slashes: Vec<(u32, u32)> = self
            .stamps
            .iter()
            .flatten()
            .filter_map(|s| match s {
                Stamp::Local {
                    date: DateTok::Slash(a, b, _),
                    ..
                } => Some((*a, *b)),
                _ => None,
            })
            .collect();
        if let Some(DateTok::Slash(a, b, _)) = host_date {
            slashes.push((a, b));
        }
        let order = SlashOrder::decide(&slashes, false, true);
        let mut offset = None;
        let start = host_date
            .and_then(|d| time::date_days(d, order))
            .unwrap_or(0);
        let mut days = DayCounter::new(start);
        let ends = self
            .stamps
            .iter()
            .map(|s| match *s {
                Some(Stamp::TimeOnly(secs)) => Some(days.next(secs) * NS),
                Some(s) => {
                    match s {
                        Stamp::Epoch(_) => offset = Some(0),
                        Stamp::Local {
                            offset: Some(o), ..
                        } => offset = offset.or(Some(o)),
                        _ => {}
                    }
                    time::stamp_ns(s, order)
                }
                None => None,
            })
            .collect();
        Times::Wall {
            ends,
            utc_offset_s: offset,
        }
    }
}

pub(crate) fn read(
    text: &str,
    name: &str,
    kind: ContextKind,
    opts: &ContextOptions,
) -> Result<ContextSource, ContextError> {
    let mut r = Reader {
        b: Builder::new(kind, name),
        kind,
        opts,
        stamps: Vec::new(),
        ends: Vec::new(),
        utc: false,
    };
    let invalid = |line: u32, message: &str| ContextError::Invalid {
        path: name.to_string(),
        kind: kind.name(),
        line,
        message: message.to_string(),
    };
    let key = "\"statistics\"";
    let Some(at) = text.find(key) else {
        return Err(invalid(1, "no \"statistics\" array"));
    };
    let bytes = text.as_bytes();
    let mut pos = at + key.len();
    while bytes
        .get(pos)
        .is_some_and(|c| c.is_ascii_whitespace() || *c == b':')
    {
        pos += 1;
    }
    if bytes.get(pos) != Some(&b'[') {
        return Err(invalid(
            line_of(text, pos),
            "\"statistics\" is not an array",
        ));
    }
    pos += 1;
    // The host fields: close the document before "statistics".
    let head = format!("{}[]}}]}}}}", &text[..pos - 1]);
    let host: Option<Value> = serde_json::from_str::<Value>(&head)
        .ok()
        .and_then(|v| v.pointer("/sysstat/hosts/0").cloned());
    let host_date = host.as_ref().and_then(|h| {
        h.get("date")
            .or_else(|| h.get("file-date"))
            .and_then(Value::as_str)
            .and_then(time::parse_date)
    });
    if let Some(h) = &host {
        r.b.host = h
            .get("nodename")
            .and_then(Value::as_str)
            .map(str::to_string);
        r.b.n_cpus = h
            .get("number-of-cpus")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok());
    }
    let mut elements = Vec::new();
    let mut line = line_of(text, pos);
    let mut counted = pos;
    loop {
        while bytes
            .get(pos)
            .is_some_and(|c| c.is_ascii_whitespace() || *c == b',')
        {
            pos += 1;
        }
        match bytes.get(pos) {
            Some(b']') => break,
            Some(b'{') => {}
            Some(_) => {
                r.b.warn(line_of(text, pos), "unexpected text in \"statistics\"");
                break;
            }
            None => {
                let n = elements.len();
                r.b.warn(
                    line_of(text, pos),
                    format!("JSON ends inside \"statistics\" (killed mid-write?): {n} complete reports read"),
                );
                break;
            }
        }
        line += bytes[counted..pos].iter().filter(|&&c| c == b'\n').count() as u32;
        counted = pos;
        let Some(end) = value_end(bytes, pos) else {
            let n = elements.len();
            r.b.warn(
                line,
                format!("JSON cut off in a report (killed mid-write?): {n} complete reports read"),
            );
            break;
        };
        match serde_json::from_str::<Value>(&text[pos..end]) {
            Ok(v) => {
                r.element(line, &v);
                elements.push(v);
            }
            Err(e) => r.b.warn(line, format!("unreadable report: {e}")),
        }
        pos = end;
    }
    if kind == ContextKind::IostatJson {
        r.doubled_kb_fixup(&elements);
    }
    let times = r.times(host_date);
    r.b.finish(times)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{Clock, parse};

    const DOC: &str = r#"{"sysstat": {
	"hosts": [
		{
			"nodename": "vm",
			"number-of-cpus": 2,
			"date": "12/02/26",
			"statistics": [
				{
					"timestamp": "12/02/26 11:48:48",
					"avg-cpu":  {"user": 36.68, "nice": 0.00, "system": 8.75, "iowait": 0.28, "steal": 0.24, "idle": 54.05},
					"disk": [
						{"disk_device": "vda", "r/s": 87.78, "w/s": 45.18, "rkB/s": 3937.88, "aqu-sz": 0.12, "util": 2.25}
					]
				},
				{
					"timestamp": "12/02/26 11:48:49",
					"avg-cpu":  {"user": 62.37, "nice": 0.00, "system": 33.51, "iowait": 0.00, "steal": 2.58, "idle": 1.55},
					"disk": [
						{"disk_device": "vda", "r/s": 50.00, "w/s": 0.00, "rkB/s": 468.00, "aqu-sz": 0.01, "util": 0.80},
						{"disk_device": "loop0", "r/s": 1.00, "w/s": 0.00, "rkB/s": 4.00, "aqu-sz": 0.00, "util": 0.10}
					]
				}"#;

    #[test]
    fn reads_every_complete_report_of_a_cut_document() {
        let cut =
            format!("{DOC},\n{{\"timestamp\": \"12/02/26 11:48:50\", \"avg-cpu\": {{\"user\": 1");
        let s = parse(cut.as_bytes(), "cut.json").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.kind, ContextKind::IostatJson);
        assert_eq!((s.host.as_deref(), s.n_cpus), (Some("vm"), Some(2)));
        assert_eq!(s.intervals.len(), 2);
        assert!(s.intervals[0].since_boot);
        assert_eq!(s.clock, Clock::Wall { utc_offset_s: None });
        assert_eq!(s.intervals[1].end_ns, 1_796_212_129 * NS);
        assert_eq!(s.intervals[1].line, 15);
        assert!(
            s.warnings.iter().any(|w| w.message.contains("killed")),
            "{:?}",
            s.warnings
        );
        let loop0 = s.series(Metric::DiskUtil, &Entity::Device("loop0".into()));
        let loop0 = loop0.map(|c| c.values.clone()).unwrap_or_default();
        assert!(loop0[0].is_nan() && loop0[1] == 0.1, "{loop0:?}");
    }

    #[test]
    fn a_closed_document_has_no_warning() {
        let whole = format!("{DOC}\n]}}]}}}}\n");
        let s = parse(whole.as_bytes(), "ok.json").unwrap_or_else(|e| panic!("{e}"));
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        let cpu = s
            .series(Metric::CpuSys, &Entity::System)
            .map(|c| c.values.clone());
        assert_eq!(cpu, Some(vec![8.75, 33.51]));
    }

    #[test]
    fn mpstat_json_times_of_day_take_the_host_date() {
        let m = r#"{"sysstat": {"hosts": [{"nodename": "vm", "date": "12/02/26", "statistics": [
            {"timestamp": "23:59:59", "cpu-load": [{"cpu": "all", "usr": 14.50, "idle": 84.50}, {"cpu": "1", "usr": 3.0}]},
            {"timestamp": "00:00:00", "cpu-load": [{"cpu": "all", "usr": 0.00, "idle": 100.00}]}]}]}}"#;
        let s = parse(m.as_bytes(), "m.json").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.kind, ContextKind::MpstatJson);
        assert!(!s.intervals[0].since_boot);
        assert_eq!(
            s.intervals[1].end_ns - s.intervals[0].end_ns,
            NS,
            "midnight"
        );
        assert!(s.series(Metric::CpuUser, &Entity::Cpu(1)).is_some());
    }
}
