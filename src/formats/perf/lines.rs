//! One line of `perf script` output taken apart: event lines, call-chain frame lines,
//! `--srcline` lines, and the byte helpers they share. No state: the parser
//! ([`super::Parser`]) decides what a line means where it stands.

use memchr::{memchr, memrchr};

#[inline]
pub(super) fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The line without trailing whitespace (blanks, TABs, `\r`).
#[inline]
pub(super) fn trim_end(s: &[u8]) -> &[u8] {
    let n = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &s[..n]
}

#[inline]
fn trim_start(s: &[u8]) -> &[u8] {
    let n = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    &s[n..]
}

#[inline]
pub(super) fn trim(s: &[u8]) -> &[u8] {
    trim_start(trim_end(s))
}

fn is_digits(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_digit)
}

pub(super) fn is_hex(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_hexdigit)
}

fn parse_u64(s: &[u8]) -> Option<u64> {
    if !is_digits(s) {
        return None;
    }
    s.iter().try_fold(0u64, |acc, &b| {
        acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

/// `# ========` (the rule perf puts above and below its `--header` block).
pub(super) fn is_header_rule(line: &[u8]) -> bool {
    trim(line.get(1..).unwrap_or_default()).starts_with(b"========")
}

/// Seconds with up to 9 decimals (`4794564.109216`) as exact nanoseconds.
pub(super) fn parse_seconds_ns(s: &[u8]) -> Option<u64> {
    let (int, frac) = match memchr(b'.', s) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &b""[..]),
    };
    if !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let secs = parse_u64(int)?;
    let mut ns: u64 = 0;
    for i in 0..9 {
        let d = frac.get(i).map_or(0, |b| u64::from(b - b'0'));
        ns = ns * 10 + d;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// `YYYY-MM-DD` and `HH:MM:SS[.frac]` as nanoseconds since the Unix epoch, read as UTC.
fn parse_tod(date: &[u8], clock: &[u8]) -> Option<i64> {
    let num = |s: &[u8]| parse_u64(s).and_then(|v| i64::try_from(v).ok());
    let mut dp = date.split(|&b| b == b'-');
    let (y, mo, d) = (num(dp.next()?)?, num(dp.next()?)?, num(dp.next()?)?);
    if dp.next().is_some() || date.len() != 10 || !(1..=12).contains(&mo) || !(1..=31).contains(&d)
    {
        return None;
    }
    let (hms, frac) = match memchr(b'.', clock) {
        Some(i) => (&clock[..i], &clock[i..]),
        None => (clock, &b""[..]),
    };
    let mut cp = hms.split(|&b| b == b':');
    let (h, mi, s) = (num(cp.next()?)?, num(cp.next()?)?, num(cp.next()?)?);
    if cp.next().is_some() || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut sub = b"0".to_vec();
    sub.extend_from_slice(frac);
    let sub_ns = i64::try_from(parse_seconds_ns(&sub)?).ok()?;
    let (mo, d) = (u32::try_from(mo).ok()?, u32::try_from(d).ok()?);
    let secs = crate::calendar::days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s;
    secs.checked_mul(1_000_000_000)?.checked_add(sub_ns)
}

fn is_date(t: &[u8]) -> bool {
    t.len() == 10
        && t.iter().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                *b == b'-'
            } else {
                b.is_ascii_digit()
            }
        })
}

// ---------------------------------------------------------------------------
// Event lines

/// A parsed event header.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct EventLine<'a> {
    pub(super) comm: &'a [u8],
    pub(super) pid: Option<u64>,
    pub(super) tid: Option<u64>,
    pub(super) cpu: Option<u32>,
    pub(super) time_ns: Option<u64>,
    /// `-F +tod` wall-clock time, read as UTC, in nanoseconds since the Unix epoch.
    pub(super) tod_ns: Option<i64>,
    pub(super) period: Option<u64>,
    /// The event name as printed, modifiers included (`cycles:uppp`); may be empty.
    pub(super) event: &'a [u8],
    /// What follows the event name: a single frame, trace fields, or nothing.
    pub(super) rest: &'a [u8],
}

/// (comm, pid, tid, offset after them).
type Ids<'a> = (&'a [u8], Option<u64>, Option<u64>, usize);

/// Finds `comm pid/tid` or `comm tid` as inferno does: the comm runs up to the first
/// word after it that is an id (`123` or `123/456`) and has a blank after it. perf
/// prints `-1` for an unknown id (`:-1  -1 [000] ...`): such ids are `None`.
/// Returns (comm, pid, tid, index after the word's trailing blank).
fn split_ids(line: &[u8]) -> Option<Ids<'_>> {
    let mut toks = Tokens { s: line, pos: 0 };
    toks.next()?;
    for (a, b) in toks {
        if b >= line.len() {
            break;
        }
        if let Some((pid, tid)) = parse_ids(&line[a..b]) {
            return Some((trim(&line[..a]), pid, tid, b + 1));
        }
    }
    None
}

/// `tid` or `pid/tid`; `-1` (or another negative number) is an unknown id.
fn parse_ids(word: &[u8]) -> Option<(Option<u64>, Option<u64>)> {
    let id = |s: &[u8]| match s.strip_prefix(b"-") {
        Some(digits) => is_digits(digits).then_some(None),
        None => parse_u64(s).map(Some),
    };
    match memchr(b'/', word) {
        Some(i) => Some((id(&word[..i])?, id(&word[i + 1..])?)),
        None => Some((None, id(word)?)),
    }
}

/// Blank-separated tokens of `s` from `pos`, as (start, end) offsets.
struct Tokens<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Iterator for Tokens<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let s = self.s;
        let mut a = self.pos;
        while a < s.len() && is_ws(s[a]) {
            a += 1;
        }
        if a >= s.len() {
            self.pos = s.len();
            return None;
        }
        let mut b = a;
        while b < s.len() && !is_ws(s[b]) {
            b += 1;
        }
        self.pos = b;
        Some((a, b))
    }
}

/// Parses an event line (trimmed at the end); `None` if it has no `comm tid` part.
pub(super) fn parse_event_line(line: &[u8]) -> Option<EventLine<'_>> {
    let (comm, pid, tid, after) = split_ids(line)?;
    let mut ev = EventLine {
        comm,
        pid,
        tid,
        ..EventLine::default()
    };
    let mut toks = Tokens {
        s: line,
        pos: after,
    };
    while let Some((a, b)) = toks.next() {
        let t = &line[a..b];
        if let Some(body) = t.strip_suffix(b":") {
            if ev.time_ns.is_none()
                && ev.period.is_none()
                && let Some(ns) = parse_seconds_ns(body)
            {
                ev.time_ns = Some(ns);
                continue;
            }
            ev.event = body;
            ev.rest = trim(&line[b..]);
            break;
        }
        if ev.period.is_none() && is_digits(t) {
            ev.period = parse_u64(t);
            continue;
        }
        if ev.cpu.is_none()
            && ev.time_ns.is_none()
            && let Some(cpu) = t
                .strip_prefix(b"[")
                .and_then(|x| x.strip_suffix(b"]"))
                .and_then(parse_u64)
        {
            ev.cpu = u32::try_from(cpu).ok();
            continue;
        }
        if ev.tod_ns.is_none() && ev.time_ns.is_none() && is_date(t) {
            let save = toks.pos;
            if let Some((c, d)) = toks.next()
                && let Some(ns) = parse_tod(t, &line[c..d])
            {
                ev.tod_ns = Some(ns);
                continue;
            }
            toks.pos = save;
        }
        // Anything else (`-F +flags`, `+ipc`, ...) is skipped.
    }
    Some(ev)
}

/// The event's name without perf's modifier suffix (`cycles:uppp` -> `cycles`), the
/// name inferno groups events by; tracepoints (`sched:sched_switch`) stay whole.
pub(super) fn event_base(name: &[u8]) -> &[u8] {
    match memrchr(b':', name) {
        Some(i)
            if i + 1 < name.len() && name[i + 1..].iter().all(|b| b"ukhIGHpPSDWeb".contains(b)) =>
        {
            &name[..i]
        }
        _ => name,
    }
}

pub(super) fn is_clock_event(base: &[u8]) -> bool {
    base == b"cpu-clock" || base == b"task-clock"
}

// ---------------------------------------------------------------------------
// Frame lines

/// One call-chain line: `address symbol[+offset] (dso)`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct FrameLine<'a> {
    pub(super) pc: &'a [u8],
    pub(super) sym: &'a [u8],
    pub(super) module: &'a [u8],
}

/// Splits a frame line (trimmed at the end) like inferno's `stack_line_parts`: the
/// address is the first word, the dso the final parenthesised part (its parentheses
/// balanced, so `(/tmp/x (deleted))` is one dso), the symbol what is between
/// (`" "` when nothing is).
pub(super) fn split_frame(line: &[u8]) -> Option<FrameLine<'_>> {
    let s = trim_start(line);
    let sp = s.iter().position(|&b| is_ws(b))?;
    let pc = &s[..sp];
    let rest = trim_end(&s[sp + 1..]);
    if rest.last() != Some(&b')') {
        return None;
    }
    let open = module_open(rest)?;
    if open == 0 || !is_ws(rest[open - 1]) {
        return None;
    }
    let module = &rest[open + 1..rest.len() - 1];
    let sym = trim(&rest[..open - 1]);
    let sym: &[u8] = if sym.is_empty() { b" " } else { sym };
    Some(FrameLine { pc, sym, module })
}

/// Where the final `(...)` of `rest` (which ends with `)`) opens.
fn module_open(rest: &[u8]) -> Option<usize> {
    let last = rest.len().checked_sub(1)?;
    let open = memrchr(b'(', rest)?;
    if memchr(b')', &rest[open..last]).is_none() {
        return Some(open);
    }
    // Nested parentheses inside the dso name: match them from the end.
    let mut depth = 0usize;
    for i in (0..rest.len()).rev() {
        match rest[i] {
            b')' => depth += 1,
            b'(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `address symbol[+offset]` without a dso (`perf script -F ip,sym,symoff`), which
/// inferno skips as weird lines.
pub(super) fn split_frame_without_dso(line: &[u8]) -> Option<FrameLine<'_>> {
    let s = trim_start(line);
    let sp = s.iter().position(|&b| is_ws(b))?;
    let (pc, sym) = (&s[..sp], trim(&s[sp..]));
    (is_hex(pc) && !sym.is_empty()).then_some(FrameLine {
        pc,
        sym,
        module: b"",
    })
}

/// An address in the kernel's half of a 64-bit address space (`ffff...`, 16 digits):
/// the only kernel mark a frame line without a dso has.
pub(super) fn is_kernel_address(pc: &[u8]) -> bool {
    pc.len() == 16 && pc.starts_with(b"ffff")
}

/// A `--srcline` line (`file.c:12`, `??:0`, maybe ending in ` (inlined)`):
/// (file, line, inlined).
pub(super) fn split_srcline(line: &[u8]) -> Option<(&[u8], Option<u32>, bool)> {
    let t = trim(line);
    let (t, inlined) = match t.strip_suffix(b" (inlined)") {
        Some(x) => (trim_end(x), true),
        None => (t, false),
    };
    // perf's srcline for code without line tables: `dso[address]`
    // (`[kernel.kallsyms][ffffffff81655f70]`, `libc.so.6[f9460]`): no location.
    if t.last() == Some(&b']')
        && let Some(i) = memrchr(b'[', t)
        && i > 0
        && i + 2 < t.len()
        && t[i + 1..t.len() - 1].iter().all(u8::is_ascii_hexdigit)
        && !t[..i].iter().any(|&b| is_ws(b))
    {
        return Some((&b"??"[..], None, inlined));
    }
    let colon = memrchr(b':', t)?;
    let (file, num) = (&t[..colon], &t[colon + 1..]);
    if file.is_empty() && colon == 0 && !num.is_empty() && num.iter().all(u8::is_ascii_digit) {
        // `:0`: perf knew no file.
        return Some((&b"??"[..], None, inlined));
    }
    if file.is_empty() || file.iter().any(|&b| is_ws(b)) {
        return None;
    }
    let line_no = if num == b"?" {
        None
    } else {
        Some(u32::try_from(parse_u64(num)?).ok()?)
    };
    Some((file, line_no, inlined))
}
