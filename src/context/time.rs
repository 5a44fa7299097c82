//! Timestamps as the tools print them: ISO with or without a zone, epoch
//! seconds (`iostat -U`), `%x %X` in the C, en_US, de_DE, fr_FR and ja_JP
//! locales, the time of day alone (sar, mpstat), and dool's month-day.
//!
//! A printed date whose field order the text alone does not settle
//! (`02/12/2026`) is kept as [`DateTok::Slash`] until the whole file has been
//! seen ([`SlashOrder::decide`]).

/// A date as printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DateTok {
    /// Year, month, day: ISO, `dd.mm.yyyy`, `yyyy年mm月dd日`.
    Ymd(i32, u32, u32),
    /// `a/b/year`: month/day in C and en_US, day/month in fr_FR and en_GB.
    Slash(u32, u32, i32),
}

/// A parsed timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stamp {
    /// Seconds since the Unix epoch (UTC).
    Epoch(i64),
    /// A date and a time of day, with the zone offset when printed.
    Local {
        date: DateTok,
        secs: u32,
        offset: Option<i32>,
    },
    /// A time of day alone (seconds since midnight).
    TimeOnly(u32),
}

/// Days since 1970-01-01 ([`crate::calendar`]) of a year as the logs print it.
pub(crate) fn days_from_civil(y: i32, m: u32, d: u32) -> i64 {
    crate::calendar::days_from_civil(i64::from(y), m, d)
}

fn valid(y: i32, m: u32, d: u32) -> Option<i64> {
    ((1..=12).contains(&m) && (1..=31).contains(&d) && (1900..=2200).contains(&y))
        .then(|| days_from_civil(y, m, d))
}

fn year(s: &str) -> Option<i32> {
    let y: i32 = digits(s)?;
    match s.len() {
        2 => Some(if y < 70 { 2000 + y } else { 1900 + y }),
        4 => Some(y),
        _ => None,
    }
}

fn digits<T: std::str::FromStr>(s: &str) -> Option<T> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A date token: `2026-12-02`, `12/02/26`, `02.12.2026`, `2026年12月02日`.
pub(crate) fn parse_date(s: &str) -> Option<DateTok> {
    if let Some((y, rest)) = s.split_once('年') {
        let (m, rest) = rest.split_once('月')?;
        let d = rest.strip_suffix('日')?;
        return Some(DateTok::Ymd(year(y)?, digits(m)?, digits(d)?));
    }
    let mut parts = s.split(['-', '/', '.']);
    let (a, b, c) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    if s.contains('-') {
        (a.len() == 4).then_some(())?;
        return Some(DateTok::Ymd(year(a)?, digits(b)?, digits(c)?));
    }
    if s.contains('.') {
        return Some(DateTok::Ymd(year(c)?, digits(b)?, digits(a)?));
    }
    Some(DateTok::Slash(digits(a)?, digits(b)?, year(c)?))
}

/// `HH:MM:SS` (or `11時58分48秒`) to seconds since midnight.
pub(crate) fn parse_clock(s: &str) -> Option<u32> {
    let (h, m, sec) = if let Some((h, rest)) = s.split_once('時') {
        let (m, rest) = rest.split_once('分')?;
        (h, m, rest.strip_suffix('秒')?)
    } else {
        let mut p = s.split(':');
        let t = (p.next()?, p.next()?, p.next()?);
        if p.next().is_some() {
            return None;
        }
        t
    };
    let (h, m, sec): (u32, u32, u32) = (digits(h)?, digits(m)?, digits(sec)?);
    (h < 24 && m < 60 && sec < 61).then_some(h * 3600 + m * 60 + sec)
}

/// `+0530`, `-0500`, `+05:30`.
fn parse_offset(s: &str) -> Option<i32> {
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let rest = rest.replace(':', "");
    if rest.len() != 4 {
        return None;
    }
    let hh: i32 = digits(&rest[..2])?;
    let mm: i32 = digits(&rest[2..])?;
    (hh <= 14 && mm < 60).then_some(sign * (hh * 3600 + mm * 60))
}

/// Offsets of the zone names that mean one zone only (`IST` does not).
pub(crate) fn zone_offset(name: &str) -> Option<i32> {
    let h = match name {
        "UTC" | "GMT" | "Z" | "UCT" => 0,
        "EST" => -5,
        "EDT" => -4,
        "CDT" => -5,
        "MST" => -7,
        "MDT" => -6,
        "PDT" => -7,
        "PST" => -8,
        "CET" => 1,
        "CEST" | "EET" => 2,
        "EEST" | "MSK" => 3,
        "JST" | "KST" => 9,
        _ => return parse_offset(name),
    };
    Some(h * 3600)
}

/// Applies a 12-hour meridiem to seconds since midnight.
fn meridiem(secs: u32, token: &str) -> Option<u32> {
    let pm = match token {
        "AM" | "am" | "a.m." => false,
        "PM" | "pm" | "p.m." => true,
        _ => return None,
    };
    let (h, rest) = (secs / 3600, secs % 3600);
    if !(1..=12).contains(&h) {
        return None;
    }
    Some(((h % 12) + if pm { 12 } else { 0 }) * 3600 + rest)
}

/// A whole timestamp: every form in the module doc. Surrounding blanks allowed.
pub(crate) fn parse_stamp(s: &str) -> Option<Stamp> {
    let s = s.trim();
    if s.len() >= 9 && s.len() <= 12 && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok().map(Stamp::Epoch);
    }
    let mut tokens = s.split_ascii_whitespace();
    let first = tokens.next()?;
    // ISO with `T`: 2026-12-02T11:53:54+0000
    if let Some((d, t)) = first.split_once('T') {
        let date = parse_date(d)?;
        let split = t.find(['+', '-', 'Z']).unwrap_or(t.len());
        let secs = parse_clock(&t[..split])?;
        let zone = &t[split..];
        let offset = match zone {
            "" => None,
            "Z" => Some(0),
            z => Some(parse_offset(z)?),
        };
        return tokens
            .next()
            .is_none()
            .then_some(Stamp::Local { date, secs, offset });
    }
    let (date, clock) = match parse_date(first) {
        Some(d) => (Some(d), tokens.next()?),
        None => (None, first),
    };
    let mut secs = parse_clock(clock)?;
    let mut offset = None;
    for t in tokens {
        if let Some(s2) = meridiem(secs, t) {
            secs = s2;
        } else if let Some(o) = zone_offset(t) {
            offset = Some(o);
        } else {
            return None;
        }
    }
    Some(match date {
        Some(date) => Stamp::Local { date, secs, offset },
        None => Stamp::TimeOnly(secs),
    })
}

/// How `a/b/year` dates of one file are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SlashOrder {
    pub day_first: bool,
    /// Nothing in the file settled it; the C order (month first) was used.
    pub guessed: bool,
}

impl SlashOrder {
    /// From every slash date of the file (banner and stamps): a field above 12
    /// settles the order; else a decimal comma means a day-first locale
    /// (fr_FR); else the C/en_US order. `c_like`: the file shows a form only the
    /// C or en_US locale prints (2-digit year, AM/PM), so no warning is due.
    pub fn decide(dates: &[(u32, u32)], decimal_comma: bool, c_like: bool) -> SlashOrder {
        if dates.iter().any(|&(a, _)| a > 12) {
            return SlashOrder {
                day_first: true,
                guessed: false,
            };
        }
        if dates.iter().any(|&(_, b)| b > 12) {
            return SlashOrder::default();
        }
        SlashOrder {
            day_first: decimal_comma,
            guessed: !decimal_comma && !c_like && !dates.is_empty(),
        }
    }
}

/// Days since the epoch of a date token.
pub(crate) fn date_days(d: DateTok, order: SlashOrder) -> Option<i64> {
    match d {
        DateTok::Ymd(y, m, d) => valid(y, m, d),
        DateTok::Slash(a, b, y) if order.day_first => valid(y, b, a),
        DateTok::Slash(a, b, y) => valid(y, a, b),
    }
}

pub(crate) const NS: i64 = 1_000_000_000;

/// Nanoseconds since the epoch: with an offset the true UTC instant, without
/// one the printed local time read as UTC. `None` for a time of day alone.
pub(crate) fn stamp_ns(s: Stamp, order: SlashOrder) -> Option<i64> {
    match s {
        Stamp::Epoch(e) => e.checked_mul(NS),
        Stamp::Local { date, secs, offset } => {
            let days = date_days(date, order)?;
            let t = days * 86_400 + i64::from(secs) - i64::from(offset.unwrap_or(0));
            t.checked_mul(NS)
        }
        Stamp::TimeOnly(_) => None,
    }
}

/// Turns times of day into absolute seconds from a start date, adding a day
/// whenever the clock goes back by more than 12 hours (midnight).
#[derive(Debug)]
pub(crate) struct DayCounter {
    days: i64,
    last: Option<u32>,
}

impl DayCounter {
    pub fn new(start_days: i64) -> DayCounter {
        DayCounter {
            days: start_days,
            last: None,
        }
    }

    /// Seconds since the epoch (local time read as UTC).
    pub fn next(&mut self, secs: u32) -> i64 {
        if let Some(last) = self.last
            && secs + 12 * 3600 < last
        {
            self.days += 1;
        }
        self.last = Some(secs);
        self.days * 86_400 + i64::from(secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEC2: i64 = 20_789; // 2026-12-02

    fn ns(s: &str, day_first: bool) -> Option<i64> {
        let order = SlashOrder {
            day_first,
            guessed: false,
        };
        stamp_ns(parse_stamp(s)?, order).map(|n| n / NS)
    }

    #[test]
    fn civil_days_match_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2026, 12, 2), DEC2);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn reads_every_locale_of_the_corpus() {
        let t = DEC2 * 86_400 + 11 * 3600 + 48 * 60 + 48;
        assert_eq!(ns("12/02/26 11:48:48", false), Some(t));
        assert_eq!(ns("12/02/2026 11:48:48 AM", false), Some(t));
        assert_eq!(ns("02.12.2026 11:48:48", false), Some(t));
        assert_eq!(ns("02/12/2026 11:48:48", true), Some(t));
        assert_eq!(ns("2026年12月02日 11時48分48秒", false), Some(t));
        assert_eq!(ns("2026-12-02 11:48:48", false), Some(t));
        assert_eq!(ns("2026-12-02T11:48:48+0000", false), Some(t));
        assert_eq!(ns("2026-12-02T17:18:48+0530", false), Some(t));
        assert_eq!(ns("2026-12-02 11:48:48 UTC", false), Some(t));
        assert_eq!(ns("1796212128", false), Some(1_796_212_128));
    }

    #[test]
    fn twelve_am_is_midnight_and_twelve_pm_noon() {
        assert_eq!(parse_stamp("12:00:01 AM"), Some(Stamp::TimeOnly(1)));
        assert_eq!(parse_stamp("12:00:01 PM"), Some(Stamp::TimeOnly(43_201)));
        assert_eq!(parse_stamp("11:59:59 PM"), Some(Stamp::TimeOnly(86_399)));
        assert_eq!(parse_stamp("13:00:00 PM"), None);
    }

    #[test]
    fn rejects_what_is_not_a_time() {
        for s in [
            "vda 1.00 2.00",
            "avg-cpu:",
            "12/02/26",
            "25:00:00",
            "1.5",
            "",
        ] {
            assert_eq!(parse_stamp(s), None, "{s}");
        }
    }

    #[test]
    fn slash_order_follows_the_evidence() {
        assert!(SlashOrder::decide(&[(13, 2)], false, true).day_first);
        assert!(!SlashOrder::decide(&[(12, 13)], true, false).day_first);
        assert!(SlashOrder::decide(&[(2, 12)], true, false).day_first);
        let g = SlashOrder::decide(&[(2, 12)], false, false);
        assert!(!g.day_first && g.guessed);
        assert!(!SlashOrder::decide(&[(2, 12)], false, true).guessed);
    }

    #[test]
    fn day_counter_adds_a_day_at_midnight_only() {
        let mut c = DayCounter::new(0);
        assert_eq!(c.next(86_399), 86_399);
        assert_eq!(c.next(0), 86_400);
        assert_eq!(c.next(3_600), 90_000);
        assert_eq!(c.next(0), 86_400, "a one-hour step back is not a new day");
    }
}
