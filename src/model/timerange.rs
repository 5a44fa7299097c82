//! Time ranges: which samples a window of time holds, and the profile cut to it.
//!
//! Sample times are in the profile's own clock (`Samples::time`: nanoseconds,
//! since the epoch for wall-clock formats, since boot for plain perf). The user
//! names times either as an offset from the first sample (`12.5`, `12.5s`,
//! `1m30s`, `250ms`) or as a wall-clock time (`11:56:28`, `11:56:28.250`,
//! `2026-12-02 11:56:28`, `2026-12-02T11:56:28+05:30`), which needs the
//! profile's offset to the epoch ([`wall_offset`]). A wall time without a date
//! takes the date of the profile's first sample. A time without a zone is read
//! in the profile's wall clock as printed (perf `tod` is local time read as
//! UTC: type the times perf printed).

use std::fmt;

use super::profile::Profile;

const NS: i64 = 1_000_000_000;
const DAY_NS: i64 = 86_400 * NS;

/// A time as the user wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimePoint {
    /// Nanoseconds after the profile's first sample.
    Offset(i64),
    /// A wall-clock time: nanoseconds since the epoch when `dated`, else since
    /// midnight; `utc_offset_s` when the text named a zone.
    Wall {
        ns: i64,
        dated: bool,
        utc_offset_s: Option<i32>,
    },
}

/// A half-open window `[start, end)` of the profile's clock, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    pub start: u64,
    pub end: u64,
}

impl Window {
    pub fn contains(&self, t: u64) -> bool {
        self.start <= t && t < self.end
    }

    pub fn len_ns(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// What a time selection keeps: the samples inside `keep` (all when `None`)
/// and outside every `exclude` window.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TimeFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<Window>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<Window>,
}

impl TimeFilter {
    pub fn is_all(&self) -> bool {
        self.keep.is_none() && self.exclude.is_empty()
    }

    pub fn keeps(&self, t: u64) -> bool {
        self.keep.is_none_or(|w| w.contains(t)) && !self.exclude.iter().any(|w| w.contains(t))
    }
}

/// Why a selection cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    #[error("bad time {text:?}: {reason}")]
    BadTime { text: String, reason: String },
    #[error(
        "the profile has no sample times (its format records none), so it cannot be cut by time"
    )]
    NoTimes,
    #[error(
        "wall-clock time {text:?} given, but the profile's clock is not tied to wall-clock time; give seconds from its start instead"
    )]
    NoWallClock { text: String },
    #[error("the range {range} holds no samples (the profile spans {span})")]
    Empty { range: String, span: String },
    #[error("the range ends ({end}) before it starts ({start})")]
    Backwards { start: String, end: String },
}

impl std::str::FromStr for TimePoint {
    type Err = RangeError;

    fn from_str(s: &str) -> Result<TimePoint, RangeError> {
        let text = s.trim();
        let bad = |reason: &str| RangeError::BadTime {
            text: s.to_string(),
            reason: reason.to_string(),
        };
        if text.is_empty() {
            return Err(bad("empty"));
        }
        if text.contains(':') {
            return parse_wall(text).ok_or_else(|| {
                bad("expected HH:MM:SS[.frac] or YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|+hh:mm]")
            });
        }
        parse_offset(text)
            .map(TimePoint::Offset)
            .ok_or_else(|| bad("expected seconds from the start (12.5, 12.5s, 1m30s, 250ms)"))
    }
}

/// `12.5`, `12.5s`, `250ms`, `1m30s`, `1h2m3.5s`, `-2s` (for `--align`).
pub fn parse_offset(text: &str) -> Option<i64> {
    let (neg, mut rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..end].parse().ok()?;
        rest = &rest[end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "" | "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit_end..];
        total += number * scale;
    }
    if !total.is_finite() || total > 1e9 {
        return None;
    }
    let ns = (total * 1e9).round() as i64;
    Some(if neg { -ns } else { ns })
}

/// `HH:MM[:SS[.frac]]`, optionally after `YYYY-MM-DD` and `T` or a blank, and
/// before `Z` or `±hh[:]mm`.
fn parse_wall(text: &str) -> Option<TimePoint> {
    let (date, clock) = match text.find(['T', ' ']) {
        Some(i) => (Some(&text[..i]), &text[i + 1..]),
        None => (None, text),
    };
    let days = match date {
        Some(d) => {
            let mut parts = d.split('-');
            let y: i64 = parts.next()?.parse().ok()?;
            let m: u32 = parts.next()?.parse().ok()?;
            let dd: u32 = parts.next()?.parse().ok()?;
            if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&dd) {
                return None;
            }
            Some(days_from_civil(y, m, dd))
        }
        None => None,
    };
    let (clock, zone) = split_zone(clock)?;
    let mut fields = clock.split(':');
    let h: i64 = fields.next()?.parse().ok()?;
    let m: i64 = fields.next()?.parse().ok()?;
    let sec: f64 = match fields.next() {
        Some(s) => s.parse().ok()?,
        None => 0.0,
    };
    if fields.next().is_some() || h > 23 || m > 59 || !(0.0..61.0).contains(&sec) {
        return None;
    }
    let of_day = (h * 3600 + m * 60) * NS + (sec * 1e9).round() as i64;
    Some(TimePoint::Wall {
        ns: days.map_or(of_day, |d| d * DAY_NS + of_day),
        dated: days.is_some(),
        utc_offset_s: zone,
    })
}

/// Splits a trailing `Z`, `+hh:mm`, `+hhmm` or `-hh` zone off a clock time.
fn split_zone(clock: &str) -> Option<(&str, Option<i32>)> {
    if let Some(c) = clock.strip_suffix('Z') {
        return Some((c, Some(0)));
    }
    let Some(i) = clock.rfind(['+', '-']) else {
        return Some((clock, None));
    };
    let (c, z) = (&clock[..i], &clock[i..]);
    let sign = if z.starts_with('-') { -1 } else { 1 };
    let digits: String = z[1..].chars().filter(|c| *c != ':').collect();
    if !(digits.len() == 2 || digits.len() == 4) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let h: i32 = digits[..2].parse().ok()?;
    let m: i32 = digits.get(2..).map_or(Some(0), |m| m.parse().ok())?;
    Some((c, Some(sign * (h * 3600 + m * 60))))
}

use crate::calendar::days_from_civil;

/// `A-B` or `A..B`: two times, split at the first `-` that leaves two valid
/// times (dates contain `-` too).
pub fn parse_range(text: &str) -> Result<(TimePoint, TimePoint), RangeError> {
    if let Some((a, b)) = text.split_once("..") {
        return Ok((a.parse()?, b.parse()?));
    }
    for (i, _) in text.match_indices('-').filter(|&(i, _)| i > 0) {
        if let (Ok(a), Ok(b)) = (text[..i].parse(), text[i + 1..].parse()) {
            return Ok((a, b));
        }
    }
    Err(RangeError::BadTime {
        text: text.to_string(),
        reason: "expected START-END or START..END (e.g. 09:58-10:06, 12-15.5)".into(),
    })
}

/// The first and last sample times, if the profile records times.
pub fn sample_span(profile: &Profile) -> Option<(u64, u64)> {
    let times = profile.samples.time.as_ref()?;
    let lo = times.iter().copied().min()?;
    let hi = times.iter().copied().max()?;
    Some((lo, hi))
}

/// What to add to a sample time to get wall-clock nanoseconds since the epoch:
/// the format's own offset (perf `tod`, a `--header` reference), zero for
/// times that are already wall-clock (after 2001), or the profile's start.
pub fn wall_offset(profile: &Profile) -> Option<i64> {
    if let Some(off) = profile.meta.time_to_unix_ns {
        return Some(off);
    }
    let (lo, _) = sample_span(profile)?;
    if lo >= 1_000_000_000 * NS as u64 {
        return Some(0);
    }
    let start = profile.meta.start_unix_ns?;
    Some(start as i64 - lo as i64)
}

/// The profile's offset to wall clock given an anchor from elsewhere (a
/// capture bundle's, UTC): the profile's own unless it has none or only a
/// rough one. With whether the result is local time read as UTC.
pub fn wall_offset_with(profile: &Profile, anchor_ns: Option<i64>) -> Option<(i64, bool)> {
    let own = wall_offset(profile);
    match (own, anchor_ns) {
        (Some(o), Some(_)) if !profile.meta.wall_is_rough => Some((o, profile.meta.wall_is_local)),
        (_, Some(a)) if sample_span(profile).is_some() => Some((a, false)),
        (Some(o), _) => Some((o, profile.meta.wall_is_local)),
        (None, _) => None,
    }
}

/// A time in the profile's clock. `end` rounds a date-less wall time forward
/// past the start (so `23:59-00:01` works across midnight).
fn resolve(
    p: TimePoint,
    text: &str,
    span: (u64, u64),
    offset: Option<i64>,
    not_before: Option<u64>,
) -> Result<u64, RangeError> {
    match p {
        TimePoint::Offset(ns) => Ok((span.0 as i64).saturating_add(ns).max(0) as u64),
        TimePoint::Wall {
            ns,
            dated,
            utc_offset_s,
        } => {
            let off = offset.ok_or_else(|| RangeError::NoWallClock {
                text: text.to_string(),
            })?;
            let zone = i64::from(utc_offset_s.unwrap_or(0)) * NS;
            let mut wall = ns - zone;
            if !dated {
                let first_wall = span.0 as i64 + off;
                wall += first_wall.div_euclid(DAY_NS) * DAY_NS;
                // A time of day before the first sample by more than an hour
                // is the next day's (a profile taken across midnight).
                if wall < first_wall - 3600 * NS {
                    wall += DAY_NS;
                }
                if let Some(lo) = not_before {
                    while wall - off < lo as i64 {
                        wall += DAY_NS;
                    }
                }
            }
            Ok((wall - off).max(0) as u64)
        }
    }
}

/// The user's selection as written: `--from`, `--until`, `--exclude`s.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeSelection {
    pub from: Option<String>,
    pub to: Option<String>,
    pub exclude: Vec<String>,
    /// Wall-clock minus sample clock from elsewhere (a capture bundle), for
    /// a profile that does not know its own.
    pub anchor_ns: Option<i64>,
}

impl TimeSelection {
    pub fn is_empty(&self) -> bool {
        self.from.is_none() && self.to.is_none() && self.exclude.is_empty()
    }

    /// Checks the syntax without a profile.
    pub fn check(&self) -> Result<(), RangeError> {
        for t in self.from.iter().chain(&self.to) {
            t.parse::<TimePoint>()?;
        }
        for r in &self.exclude {
            parse_range(r)?;
        }
        Ok(())
    }

    /// The windows of `profile`'s clock this selection names.
    pub fn resolve(&self, profile: &Profile) -> Result<TimeFilter, RangeError> {
        if self.is_empty() {
            return Ok(TimeFilter::default());
        }
        let span = sample_span(profile).ok_or(RangeError::NoTimes)?;
        let offset = wall_offset_with(profile, self.anchor_ns).map(|(o, _)| o);
        let point = |text: &str, not_before| -> Result<u64, RangeError> {
            resolve(text.parse()?, text, span, offset, not_before)
        };
        let keep = if self.from.is_some() || self.to.is_some() {
            // An open end stays open: a live profile's new samples are in.
            let start = match &self.from {
                Some(t) => point(t, None)?,
                None => 0,
            };
            let end = match &self.to {
                Some(t) => point(t, Some(start))?,
                None => u64::MAX,
            };
            if end < start {
                return Err(RangeError::Backwards {
                    start: self.from.clone().unwrap_or_default(),
                    end: self.to.clone().unwrap_or_default(),
                });
            }
            Some(Window { start, end })
        } else {
            None
        };
        let mut exclude = Vec::new();
        for r in &self.exclude {
            exclude.push(range_window(r, span, offset)?);
        }
        Ok(TimeFilter { keep, exclude })
    }

    /// Where each of `marks` falls in `profile`'s clock (a point mark is a
    /// window one nanosecond long).
    pub fn place_marks(
        &self,
        marks: &[Mark],
        profile: &Profile,
    ) -> Result<Vec<(Window, String)>, RangeError> {
        let span = sample_span(profile).ok_or(RangeError::NoTimes)?;
        let offset = wall_offset_with(profile, self.anchor_ns).map(|(o, _)| o);
        marks
            .iter()
            .map(|m| {
                let w = if m.range {
                    range_window(&m.time, span, offset)?
                } else {
                    let t = resolve(m.time.parse()?, &m.time, span, offset, None)?;
                    Window {
                        start: t,
                        end: t + 1,
                    }
                };
                Ok((w, m.label.clone()))
            })
            .collect()
    }
}

/// The window `A-B` / `A..B` names in the profile's clock.
fn range_window(r: &str, span: (u64, u64), offset: Option<i64>) -> Result<Window, RangeError> {
    let (a, b) = parse_range(r)?;
    let start = resolve(a, r, span, offset, None)?;
    let end = resolve(b, r, span, offset, Some(start))?;
    Ok(Window { start, end })
}

/// One line of a marks file: a time or a range, and what happened then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// As written: `10:02:13` or `09:58-10:06` (any form `--from` and
    /// `--exclude` take).
    pub time: String,
    pub range: bool,
    pub label: String,
}

/// Reads a marks file: one `TIME label` or `START-END label` a line; blank
/// lines and `#` comments are skipped. An unreadable line is an error naming
/// `name` and the line.
pub fn parse_marks(text: &str, name: &str) -> Result<Vec<Mark>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // A date-time may hold a blank (2026-12-02 10:00:00): try the longest
        // head of two words first.
        let words: Vec<&str> = line.splitn(3, char::is_whitespace).collect();
        let heads = [
            (words.len() >= 2).then(|| format!("{} {}", words[0], words[1])),
            Some(words[0].to_string()),
        ];
        let found = heads.into_iter().flatten().find_map(|head| {
            let range = parse_range(&head).is_ok();
            (range || head.parse::<TimePoint>().is_ok()).then(|| {
                let label = line[head.len()..].trim().to_string();
                Mark {
                    time: head,
                    range,
                    label,
                }
            })
        });
        match found {
            Some(m) => out.push(m),
            None => {
                return Err(format!(
                    "{name}: line {}: expected `TIME label` or `START-END label`, got {line:?}",
                    i + 1
                ));
            }
        }
    }
    Ok(out)
}

/// Seconds with millisecond precision: `12.345 s`.
pub struct Secs(pub u64);

impl fmt::Display for Secs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} s", self.0 as f64 / 1e9)
    }
}

/// `filter` described against the profile's first sample: `12.000-20.500 s`,
/// with exclusions.
pub fn describe(filter: &TimeFilter, first: u64) -> String {
    let rel = |t: u64| t.saturating_sub(first) as f64 / 1e9;
    let mut parts = Vec::new();
    if let Some(w) = filter.keep {
        parts.push(match w.end {
            u64::MAX => format!("from {:.3} s", rel(w.start)),
            end => format!("{:.3}-{:.3} s", rel(w.start), rel(end)),
        });
    }
    for w in &filter.exclude {
        parts.push(format!("not {:.3}-{:.3} s", rel(w.start), rel(w.end)));
    }
    parts.join(", ")
}

/// `profile` cut to what `selection` names (itself, copied, when it names
/// nothing): what the batch commands do with `--from/--until/--exclude`.
pub fn cut(profile: Profile, selection: &TimeSelection) -> Result<Profile, RangeError> {
    if selection.is_empty() {
        return Ok(profile);
    }
    slice(&profile, &selection.resolve(&profile)?)
}

/// `transforms` with `selection` resolved against `profile` put first, unless
/// the list already holds a time range (the view's own, which wins).
pub fn with_selection(
    transforms: &[crate::model::Transform],
    selection: &TimeSelection,
    profile: &Profile,
) -> Result<Vec<crate::model::Transform>, RangeError> {
    use crate::model::Transform;
    let has_range = transforms
        .iter()
        .any(|t| matches!(t, Transform::TimeRange { .. }));
    if selection.is_empty() || has_range {
        return Ok(transforms.to_vec());
    }
    let mut out = vec![Transform::time_range(selection.resolve(profile)?)];
    out.extend_from_slice(transforms);
    Ok(out)
}

/// The samples of `profile` that `filter` keeps, everything else shared or
/// copied as it is. The duration becomes the window's length.
pub fn slice(profile: &Profile, filter: &TimeFilter) -> Result<Profile, RangeError> {
    if filter.is_all() {
        return Ok(profile.clone());
    }
    let span = sample_span(profile).ok_or(RangeError::NoTimes)?;
    let times = profile.samples.time.as_ref().ok_or(RangeError::NoTimes)?;
    let keep: Vec<bool> = times.iter().map(|&t| filter.keeps(t)).collect();
    if !keep.contains(&true) {
        return Err(RangeError::Empty {
            range: describe(filter, span.0),
            span: format!("0-{:.3} s", (span.1 - span.0) as f64 / 1e9),
        });
    }
    let mut samples = profile.samples.clone();
    samples.retain(&keep, profile.value_types.len());
    let mut out = profile.derive(profile.stacks.clone(), samples);
    let whole = Window {
        start: span.0,
        end: span.1 + 1,
    };
    let window = filter.keep.map_or(whole, |w| Window {
        start: w.start.max(whole.start),
        end: w.end.min(whole.end),
    });
    let excluded: u64 = filter
        .exclude
        .iter()
        .map(|w| {
            let s = w.start.max(window.start);
            let e = w.end.min(window.end);
            e.saturating_sub(s)
        })
        .sum();
    if profile.meta.duration_ns.is_some() {
        out.meta.duration_ns = Some(window.len_ns().saturating_sub(excluded));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
