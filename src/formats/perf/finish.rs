//! The end of the input: value types (a pair per event when there are several),
//! the period, times and the notes.

use super::lines::is_clock_event;
use super::{EventStats, Parser};
use crate::formats::ParseError;
use crate::model::{Profile, Unit, ValueType};

impl Parser {
    /// Ends the input.
    pub(crate) fn finish(mut self) -> Result<Profile, ParseError> {
        if self.in_event {
            self.end_event();
            if self.cut {
                // A stack that ends at a line boundary cannot be told from a whole one
                // (many saved outputs lack the final blank line), one cut mid-line can.
                let n = self.line_no;
                self.warn(
                    n,
                    "the input ends in the middle of a stack, without a newline: the last sample may be cut short",
                );
            }
        }
        if !self.saw_event
            && let Some((line, shown)) = self.first_bad.take()
        {
            return Err(ParseError::Invalid {
                line,
                message: format!(
                    "not perf script output: expected an event line like `comm pid [cpu] time: period event:`, found \"{shown}\""
                ),
            });
        }
        let mut p = self.profile;
        let events = self.events;
        let value_types = value_types(&events);
        if events.len() > 1 {
            // One `samples` and `period` column per event as well.
            let n = value_types.len();
            let old = std::mem::take(&mut p.samples.values);
            let mut values = Vec::with_capacity(self.col_event.len() * n);
            for (pair, &e) in old.chunks_exact(2).zip(&self.col_event) {
                let at = 2 + 2 * e as usize;
                values.extend_from_slice(pair);
                for i in 2..n {
                    let v = if i == at {
                        pair[0]
                    } else if i == at + 1 {
                        pair[1]
                    } else {
                        0
                    };
                    values.push(v);
                }
            }
            p.samples.values = values;
            p.notes.push(format!(
                "{} events ({}): `samples` and `period` add them all up; each also has its own pair",
                events.len(),
                events
                    .iter()
                    .map(|e| e.base.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        p.value_types = value_types;
        p.default_value = 0;
        if let Some(e) = events.first()
            && e.any_period
            && e.constant_period
        {
            let vt = if events.len() > 1 {
                p.value_types.get(3)
            } else {
                p.value_types.get(1)
            };
            if let (Some(period), Some(vt)) = (e.first_period, vt) {
                p.meta.period = Some((i64::try_from(period).unwrap_or(i64::MAX), vt.clone()));
            }
        }
        // `cycles:uppp, cycles:ppp (73 samples); instructions (333 samples)`
        let described: Vec<String> = events
            .iter()
            .filter(|e| e.samples > 0)
            .map(|e| format!("{} ({} samples)", e.printed.join(", "), e.samples))
            .collect();
        if !described.is_empty() {
            p.meta.extra.push(("events".into(), described.join("; ")));
        }
        p.samples.thread = Some(self.col_thread);
        if self.any_cpu {
            p.samples.cpu = Some(self.col_cpu);
        }
        if let Some((lo, hi)) = self.time_span {
            p.meta.duration_ns = Some(hi - lo);
            // Last resort: `--header`'s `captured on` (the perf.data file's
            // mtime, local time, 1 s) is about when the last sample was taken.
            let captured = captured_offset(&p.meta.extra)
                .filter(|_| self.ref_offset.is_none() && self.tod_offset.is_none());
            let offset = self.ref_offset.or(self.tod_offset).or(captured);
            if captured.is_some() {
                p.meta.wall_is_local = true;
                p.meta.wall_is_rough = true;
                p.notes.push(
                    "wall clock from the header's `captured on` (the perf.data file's modification time: about the last sample, to a second or two, in local time)"
                        .into(),
                );
            }
            if let Some(off) = offset {
                p.meta.time_to_unix_ns = Some(off);
                p.meta.start_unix_ns = u64::try_from(i128::from(lo) + i128::from(off)).ok();
            }
            if self.ref_offset.is_none() && self.tod_offset.is_some() {
                p.meta.wall_is_local = true;
                p.notes.push(
                    "wall-clock (`tod`) times were read as UTC; perf prints them in the recording machine's local time"
                        .into(),
                );
            }
            p.samples.time = Some(self.col_time);
        }
        if self.stackless > 0 {
            p.notes.push(format!(
                "{} events without a call chain: counted under [no stack recorded]",
                self.stackless
            ));
        }
        Ok(p)
    }
}

/// `samples`, `period`, and per event a pair when there are several events.
fn value_types(events: &[EventStats]) -> Vec<ValueType> {
    let period_of = |e: &EventStats, kind: String| {
        if e.any_period && is_clock_event(e.base.as_bytes()) {
            ValueType::new(&kind, Unit::Nanoseconds)
        } else {
            ValueType::new(&kind, Unit::Count)
        }
    };
    match events {
        [] => vec![ValueType::samples(), ValueType::new("period", Unit::Count)],
        // Always `period` (what `--sample-type period` asks for); the event's name
        // is in `meta.extra` ("events").
        [e] => vec![ValueType::samples(), period_of(e, "period".to_string())],
        _ => {
            let all_timed = events
                .iter()
                .all(|e| e.any_period && is_clock_event(e.base.as_bytes()));
            let unit = if all_timed {
                Unit::Nanoseconds
            } else {
                Unit::Count
            };
            let mut out = vec![ValueType::samples(), ValueType::new("period", unit)];
            for e in events {
                let name = if e.base.is_empty() {
                    "(no event name)"
                } else {
                    e.base.as_str()
                };
                out.push(ValueType::new(&format!("{name} samples"), Unit::Samples));
                out.push(period_of(e, format!("{name} period")));
            }
            out
        }
    }
}

/// Wall-clock minus sample clock from `captured on : Wed Dec  2 11:54:26 2026`
/// and `time of last sample : 819.017995` (`perf script --header`), in ns.
fn captured_offset(extra: &[(String, String)]) -> Option<i64> {
    let get = |k: &str| {
        extra
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let captured = parse_ctime(get("captured on")?)?;
    let last = get("time of last sample")?.trim();
    let last = super::lines::parse_seconds_ns(last.as_bytes())?;
    i64::try_from(i128::from(captured) - i128::from(last)).ok()
}

/// `ctime()` text (`Wed Dec  2 11:54:26 2026`) read as UTC, in ns since the epoch.
fn parse_ctime(text: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mut w = text.split_whitespace().skip(1);
    let name = w.next()?;
    let month = MONTHS.iter().position(|m| *m == name)? as u32 + 1;
    let day: u32 = w.next()?.parse().ok()?;
    let mut clock = w.next()?.split(':');
    let year: i64 = w.next()?.parse().ok()?;
    let (h, m, s): (i64, i64, i64) = (
        clock.next()?.parse().ok()?,
        clock.next()?.parse().ok()?,
        clock.next()?.parse().ok()?,
    );
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = crate::calendar::days_from_civil(year, month, day);
    (days * 86_400 + h * 3600 + m * 60 + s).checked_mul(1_000_000_000)
}

#[cfg(test)]
mod captured_tests {
    use super::*;

    #[test]
    fn captured_on_minus_the_last_sample_is_the_offset() {
        let extra = vec![
            (
                "captured on".to_string(),
                "Wed Dec  2 11:54:26 2026".to_string(),
            ),
            ("time of last sample".to_string(), "819.017995".to_string()),
        ];
        // 2026-12-02 11:54:26 UTC is 1796212466 s.
        assert_eq!(
            captured_offset(&extra),
            Some(1_796_212_466_000_000_000 - 819_017_995_000)
        );
        assert_eq!(parse_ctime("Wed Foo  2 11:54:26 2026"), None);
        assert_eq!(captured_offset(&extra[..1]), None);
    }
}
