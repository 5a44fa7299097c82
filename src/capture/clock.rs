//! Clock anchors and local time.
//!
//! An anchor reads CLOCK_REALTIME, CLOCK_MONOTONIC and CLOCK_BOOTTIME back to
//! back, so a profile stamped with either kernel clock (perf's `-k
//! CLOCK_MONOTONIC`, or uptime-based tools) can be placed on the wall clock the
//! host logs use. CLOCK_MONOTONIC comes from `clock_gettime` through rustix:
//! `/proc/uptime` is CLOCK_BOOTTIME at 10 ms resolution (it drifts from
//! MONOTONIC by every suspend), and std's `Instant` is MONOTONIC but opaque.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use rustix::time::{ClockId, Timespec, clock_gettime};

use super::manifest::Anchor;

fn ns(t: Timespec) -> u64 {
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

fn realtime_ns() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

/// The host's zone now: its offset from UTC in seconds and its abbreviation,
/// as `date` reports them (honouring TZ, like vmstat and iostat do). UTC when
/// `date` cannot be run.
pub(crate) fn local_zone() -> (i32, String) {
    let out = Command::new("date").args(["+%z %Z"]).output();
    let text = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        _ => return (0, "UTC".to_string()),
    };
    let mut words = text.split_whitespace();
    let offset = words.next().and_then(parse_offset).unwrap_or(0);
    let zone = words.next().unwrap_or("UTC").to_string();
    (offset, zone)
}

/// `+0530` -> 19800 seconds.
fn parse_offset(s: &str) -> Option<i32> {
    let (sign, digits) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours: i32 = digits[..2].parse().ok()?;
    let minutes: i32 = digits[2..].parse().ok()?;
    Some(sign * (hours * 3600 + minutes * 60))
}

/// Reads the anchor now. The realtime value is the midpoint of two reads
/// around the kernel clocks, `read_ns` their distance (the anchor's error bar).
pub(crate) fn anchor() -> Anchor {
    let (utc_offset_s, zone) = local_zone();
    let before = realtime_ns();
    let monotonic = clock_gettime(ClockId::Monotonic);
    let boottime = clock_gettime(ClockId::Boottime);
    let after = realtime_ns();
    Anchor {
        realtime_ns: before + (after - before) / 2,
        monotonic_ns: ns(monotonic),
        boottime_ns: ns(boottime),
        read_ns: u64::try_from(after - before).unwrap_or(0),
        utc_offset_s,
        zone,
    }
}

/// A local civil time, to the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

/// Epoch seconds shifted by `offset_s` into a calendar date and time
/// (proleptic Gregorian, [`crate::calendar`]).
pub(crate) fn civil(epoch_s: i64, offset_s: i32) -> Civil {
    let t = epoch_s + i64::from(offset_s);
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let (year, month, day) = crate::calendar::civil_from_days(days);
    let small = |v: i64| u32::try_from(v).unwrap_or(0);
    Civil {
        year,
        month,
        day,
        hour: small(secs / 3600),
        minute: small(secs % 3600 / 60),
        second: small(secs % 60),
    }
}

impl Civil {
    /// `2026-12-02`
    pub fn date(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// `11:48:48`
    pub fn time(&self) -> String {
        format!("{:02}:{:02}:{:02}", self.hour, self.minute, self.second)
    }
}

/// `+0530`, as `%z` prints it.
pub(crate) fn offset_text(offset_s: i32) -> String {
    let sign = if offset_s < 0 { '-' } else { '+' };
    let a = offset_s.unsigned_abs();
    format!("{sign}{:02}{:02}", a / 3600, a % 3600 / 60)
}

/// Whole seconds since the epoch, now.
pub(crate) fn now_s() -> i64 {
    realtime_ns().div_euclid(1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_matches_known_dates() {
        // 1796211646 is the corpus host's boot time: 2026-12-02 11:40:46 UTC.
        let c = civil(1_796_211_646, 0);
        assert_eq!(
            (c.date(), c.time()),
            ("2026-12-02".into(), "11:40:46".into())
        );
        let k = civil(1_796_211_646, 19_800);
        assert_eq!(k.time(), "17:10:46");
        let leap = civil(951_782_400, 0); // 2000-02-29
        assert_eq!(leap.date(), "2000-02-29");
        assert_eq!(civil(-1, 0).date(), "1969-12-31");
    }

    #[test]
    fn offsets_round_trip() {
        assert_eq!(parse_offset("+0530"), Some(19_800));
        assert_eq!(parse_offset("-0330"), Some(-12_600));
        assert_eq!(parse_offset("0530"), None);
        assert_eq!(offset_text(-12_600), "-0330");
        assert_eq!(offset_text(0), "+0000");
    }

    #[test]
    fn anchor_clocks_are_plausible() {
        let a = anchor();
        assert!(a.monotonic_ns > 0);
        assert!(a.boottime_ns >= a.monotonic_ns);
        assert!(a.realtime_ns > 1_500_000_000_000_000_000);
    }
}
