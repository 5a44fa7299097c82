//! `perf script` text: per sample an event line (`comm pid/tid [cpu] time: period
//! event:`), then its call chain leaf first, one `address symbol+offset (dso)` line per
//! frame, then a blank line.
//!
//! Stacks are named the way `inferno-collapse-perf` (0.12.8, default options) names
//! them, so ember's `period` view equals its folded output: the root frame is the comm
//! (blanks become `_`), symbol offsets are stripped, argument lists are cut
//! (`tidy_generic`), Java's `L...;` class prefix is tidied for `java*` comms, partly
//! demangled Rust symbols are finished, `[unknown]` symbols in a known dso become
//! `[dso basename]`, and Java inlining (`a->b->c`) gives `b_[i]`, `c_[i]` frames.
//! Kernel, JIT and inlined frames are marked in [`Profile::frame_meta`] instead of
//! being renamed (inferno's `--annotate-kernel` / `--annotate-jit` add `_[k]` / `_[j]`).
//! A sample weighs its period where the event line has one, else 1.
//!
//! Where ember reads more than inferno: every event type is kept (inferno keeps the
//! first): `samples` and `period` count them all, and a file with several events gets
//! a `<event> samples` / `<event> period` pair per event. TABs count as blanks
//! (simpleperf-style output, which makes inferno panic), event lines need no
//! timestamp, `-1` ids are read as unknown, frame lines may lack the dso (`perf script
//! -F ip,sym`; kernel frames are then told by their address), C++ `(anonymous
//! namespace)::f` frames are kept (inferno skips every symbol starting with `(`),
//! `--srcline` lines give frames a source location, trace-event fields after the event
//! name are skipped, and an event line where a frame line was expected starts a new
//! sample. `-F +tod` wall-clock times, or perf's `--header` reference time, give
//! `meta.time_to_unix_ns`; other `--header` comments go to `meta.extra`.
//!
//! Streams the input in large chunks split with memchr; an event's frames are interned
//! as their lines are read, and the finished stack shares its prefix with the previous
//! sample's (consecutive samples of a thread mostly differ near the leaf).

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;

use memchr::{memchr, memchr_iter, memchr2, memrchr};

use super::ParseError;
use crate::input::Progress;
use crate::model::stacks::StackBuilder;
use crate::model::{FrameId, FrameKind, FrameMeta, Profile, StackId, ThreadInfo, Unit, ValueType};

/// At most this many `# key : value` header comments are kept, each cut to this length.
const MAX_EXTRA: usize = 256;
const MAX_EXTRA_LEN: usize = 4096;
/// inferno's Rust hash suffix: `h` and 16 hex digits.
const RUST_HASH_LENGTH: usize = 17;

// ---------------------------------------------------------------------------
// Detection

/// Whether `head` is `perf script` output (see [`super::folded::probe`] for the
/// contract): sure when an event line is followed by a frame line (or carries its
/// single frame itself), surely not when the first line that is not a comment is no
/// event line, unsure otherwise.
pub fn probe(head: &[u8], complete: bool) -> Option<bool> {
    let mut lines: Vec<&[u8]> = head.split(|&b| b == b'\n').collect();
    if !complete {
        lines.pop();
    }
    let mut header_block = false;
    let mut after_event = false;
    // After an event line with an event name: frame lines may lack the dso.
    let mut after_named_event = false;
    let mut timed_events = 0;
    for line in lines.into_iter().take(5000) {
        if line.first() == Some(&b'#') {
            if is_header_rule(line) {
                header_block = !header_block;
            }
            continue;
        }
        if header_block {
            // A header value that went on over several lines (`# cmdline` with newlines).
            continue;
        }
        let t = trim_end(line);
        if t.is_empty() {
            after_event = false;
            after_named_event = false;
            continue;
        }
        if after_event && split_frame(t).is_some_and(|f| is_hex(f.pc)) {
            return Some(true);
        }
        if after_named_event && split_frame_without_dso(t).is_some() {
            return Some(true);
        }
        match parse_event_line(t) {
            Some(ev) => {
                if split_frame(ev.rest).is_some_and(|f| is_hex(f.pc)) {
                    return Some(true);
                }
                if ev.time_ns.is_some() && !ev.event.is_empty() {
                    timed_events += 1;
                    if timed_events >= 3 {
                        // Events without call chains (`perf record` without -g).
                        return Some(true);
                    }
                }
                after_event = true;
                after_named_event = !ev.event.is_empty() && ev.rest.is_empty();
            }
            None => return Some(false),
        }
    }
    None
}

// ---------------------------------------------------------------------------
// Small byte helpers

#[inline]
fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The line without trailing whitespace (blanks, TABs, `\r`).
#[inline]
fn trim_end(s: &[u8]) -> &[u8] {
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
fn trim(s: &[u8]) -> &[u8] {
    trim_start(trim_end(s))
}

fn is_digits(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_digit)
}

fn is_hex(s: &[u8]) -> bool {
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
fn is_header_rule(line: &[u8]) -> bool {
    trim(line.get(1..).unwrap_or_default()).starts_with(b"========")
}

/// Seconds with up to 9 decimals (`4794564.109216`) as exact nanoseconds.
fn parse_seconds_ns(s: &[u8]) -> Option<u64> {
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

/// Days from 1970-01-01 to a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s;
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
struct EventLine<'a> {
    comm: &'a [u8],
    pid: Option<u64>,
    tid: Option<u64>,
    cpu: Option<u32>,
    time_ns: Option<u64>,
    /// `-F +tod` wall-clock time, read as UTC, in nanoseconds since the Unix epoch.
    tod_ns: Option<i64>,
    period: Option<u64>,
    /// The event name as printed, modifiers included (`cycles:uppp`); may be empty.
    event: &'a [u8],
    /// What follows the event name: a single frame, trace fields, or nothing.
    rest: &'a [u8],
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
fn parse_event_line(line: &[u8]) -> Option<EventLine<'_>> {
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
fn event_base(name: &[u8]) -> &[u8] {
    match memrchr(b':', name) {
        Some(i)
            if i + 1 < name.len() && name[i + 1..].iter().all(|b| b"ukhIGHpPSDWeb".contains(b)) =>
        {
            &name[..i]
        }
        _ => name,
    }
}

fn is_clock_event(base: &[u8]) -> bool {
    base == b"cpu-clock" || base == b"task-clock"
}

// ---------------------------------------------------------------------------
// Frame lines

/// One call-chain line: `address symbol[+offset] (dso)`.
#[derive(Debug, PartialEq, Eq)]
struct FrameLine<'a> {
    pc: &'a [u8],
    sym: &'a [u8],
    module: &'a [u8],
}

/// Splits a frame line (trimmed at the end) like inferno's `stack_line_parts`: the
/// address is the first word, the dso the final parenthesised part (its parentheses
/// balanced, so `(/tmp/x (deleted))` is one dso), the symbol what is between
/// (`" "` when nothing is).
fn split_frame(line: &[u8]) -> Option<FrameLine<'_>> {
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
fn split_frame_without_dso(line: &[u8]) -> Option<FrameLine<'_>> {
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
fn is_kernel_address(pc: &[u8]) -> bool {
    pc.len() == 16 && pc.starts_with(b"ffff")
}

/// A `--srcline` line (`file.c:12`, `??:0`, maybe ending in ` (inlined)`):
/// (file, line, inlined).
fn split_srcline(line: &[u8]) -> Option<(&[u8], Option<u32>, bool)> {
    let t = trim(line);
    let (t, inlined) = match t.strip_suffix(b" (inlined)") {
        Some(x) => (trim_end(x), true),
        None => (t, false),
    };
    let colon = memrchr(b':', t)?;
    let (file, num) = (&t[..colon], &t[colon + 1..]);
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

/// The symbol without a `+0x1f` offset.
fn strip_offset(sym: &[u8]) -> &[u8] {
    let mut end = sym.len();
    while let Some(p) = memrchr(b'+', &sym[..end]) {
        if sym[p..].starts_with(b"+0x") {
            return if sym[p + 3..].iter().all(u8::is_ascii_hexdigit) {
                &sym[..p]
            } else {
                sym
            };
        }
        end = p;
    }
    sym
}

/// inferno's `fix_partially_demangled_rust_symbol`: finishes what perf's demangler
/// left of a Rust symbol with a trailing `h<16 hex>` hash.
fn fix_rust(sym: &[u8]) -> Cow<'_, [u8]> {
    let Some(split) = sym.len().checked_sub(RUST_HASH_LENGTH) else {
        return Cow::Borrowed(sym);
    };
    let hash = &sym[split..];
    if hash.first() != Some(&b'h') || !hash[1..].iter().all(u8::is_ascii_hexdigit) {
        return Cow::Borrowed(sym);
    }
    let mut rest = &sym[..split];
    if let Some(r) = rest.strip_suffix(b"::") {
        rest = r;
    }
    if rest.starts_with(b"_$") {
        rest = &rest[1..];
    }
    const CODES: &[(&[u8], &[u8])] = &[
        (b"$SP$", b"@"),
        (b"$BP$", b"*"),
        (b"$RF$", b"&"),
        (b"$LT$", b"<"),
        (b"$GT$", b">"),
        (b"$LP$", b"("),
        (b"$RP$", b")"),
        (b"$C$", b","),
        (b"$u7e$", b"~"),
        (b"$u20$", b" "),
        (b"$u27$", b"'"),
        (b"$u3d$", b"="),
        (b"$u5b$", b"["),
        (b"$u5d$", b"]"),
        (b"$u7b$", b"{"),
        (b"$u7d$", b"}"),
        (b"$u3b$", b";"),
        (b"$u2b$", b"+"),
        (b"$u21$", b"!"),
        (b"$u22$", b"\""),
    ];
    let mut out = Vec::with_capacity(rest.len());
    while let Some(&c) = rest.first() {
        if c == b'.' {
            if rest.get(1) == Some(&b'.') {
                out.extend_from_slice(b"::");
                rest = &rest[2..];
            } else {
                out.push(b'.');
                rest = &rest[1..];
            }
        } else if c == b'$' {
            match CODES.iter().find(|(pat, _)| rest.starts_with(pat)) {
                Some((pat, rep)) => {
                    out.extend_from_slice(rep);
                    rest = &rest[pat.len()..];
                }
                None => {
                    out.extend_from_slice(rest);
                    break;
                }
            }
        } else {
            let n = memchr2(b'$', b'.', rest).unwrap_or(rest.len());
            out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
    }
    Cow::Owned(out)
}

/// inferno's `tidy_generic` in place: `;` -> `:`, and the argument list cut off
/// (not Go's `pkg.(*T).M`, not C++ `(anonymous namespace)`, not parentheses
/// inside `<>`, `{}` or `[]`).
fn tidy_generic(name: &mut Vec<u8>) {
    for b in name.iter_mut() {
        if *b == b';' {
            *b = b':';
        }
    }
    let mut depth: i64 = 0;
    let mut last_dot: Option<usize> = None;
    let mut cut = name.len();
    for (idx, &c) in name.iter().enumerate() {
        match c {
            b'<' | b'{' | b'[' => depth += 1,
            b'>' | b'}' | b']' | b')' => depth -= 1,
            b'(' => {
                if depth == 0 {
                    let go = last_dot == Some(idx);
                    let anon = name[idx..].starts_with(b"(anonymous namespace)");
                    if !go && !anon {
                        cut = idx;
                        break;
                    }
                }
                depth += 1;
            }
            b'.' => last_dot = Some(idx + 1),
            _ => {}
        }
    }
    name.truncate(cut);
}

/// inferno's `is_kernel`: `[kernel.kallsyms]`, `[module]`, `*.ko`, `vmlinux[-version]`.
fn is_kernel(module: &[u8]) -> bool {
    let vmlinux = || {
        module
            .windows(7)
            .rposition(|w| w == b"vmlinux")
            .is_some_and(|i| {
                module[i..]
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
            })
    };
    (module.starts_with(b"[") || module.ends_with(b".ko") || vmlinux()) && module != b"[unknown]"
}

/// JIT code: a `/tmp/perf-PID.map` symbol map or a `jitted-*.so` jitdump image.
fn is_jit(module: &[u8]) -> bool {
    (module.starts_with(b"/tmp/perf-") && module.ends_with(b".map"))
        || (module.ends_with(b".so") && module.windows(8).any(|w| w == b"/jitted-"))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

// ---------------------------------------------------------------------------
// The parser

#[derive(Clone, Copy, Debug, Default)]
struct Current {
    thread: u32,
    root: FrameId,
    /// The comm starts with `java` (inferno then tidies `Lpkg/Class;` names).
    java: bool,
    event: u32,
    period: Option<u64>,
    time: Option<u64>,
    cpu: Option<u32>,
}

/// What is known about one event (by its base name).
#[derive(Clone, Debug, Default)]
struct EventStats {
    base: String,
    /// Names as printed (`cycles:u`, `cycles:ppp`), in order of appearance.
    printed: Vec<String>,
    samples: u64,
    any_period: bool,
    first_period: Option<u64>,
    constant_period: bool,
}

type ThreadKey = (Vec<u8>, Option<u64>, Option<u64>);

/// Parser state carried from line to line (and from feed to feed: see
/// [`super::stream::LineStream`]). Cloned for a snapshot, which ends the clone's
/// input, not this one's.
#[derive(Clone)]
pub(crate) struct Parser {
    profile: Profile,
    builder: StackBuilder,
    line_no: u64,
    in_event: bool,
    header_block: bool,
    saw_event: bool,
    /// The first line that was neither a comment nor perf text.
    first_bad: Option<(u64, String)>,
    cur: Current,
    /// The event's frames so far, leaf first.
    frames: Vec<FrameId>,
    /// Root-first frames of the previous sample and the stack after each.
    path_frames: Vec<FrameId>,
    path_stacks: Vec<StackId>,
    cur_path: Vec<FrameId>,
    name_buf: Vec<u8>,
    parts: Vec<(usize, usize)>,
    thread_ids: HashMap<ThreadKey, u32>,
    thread_roots: Vec<(FrameId, bool)>,
    last_thread: Option<(ThreadKey, u32)>,
    events: Vec<EventStats>,
    event_ids: HashMap<Vec<u8>, u32>,
    last_event: Option<(Vec<u8>, u32)>,
    col_thread: Vec<u32>,
    col_time: Vec<u64>,
    col_cpu: Vec<u32>,
    col_event: Vec<u32>,
    /// Earliest and latest timestamp read.
    time_span: Option<(u64, u64)>,
    any_cpu: bool,
    /// A sample without a timestamp gets the one before it (0 before any).
    last_time: u64,
    tod_offset: Option<i64>,
    ref_offset: Option<i64>,
    stackless: u64,
    /// The input ended in the middle of a line.
    cut: bool,
}

impl Parser {
    pub(crate) fn new() -> Self {
        Parser {
            // Two columns while reading; `finish` names them and adds per-event pairs.
            profile: Profile::new(
                "perf",
                vec![ValueType::samples(), ValueType::new("period", Unit::Count)],
            ),
            builder: StackBuilder::default(),
            line_no: 0,
            in_event: false,
            header_block: false,
            saw_event: false,
            first_bad: None,
            cur: Current::default(),
            frames: Vec::with_capacity(256),
            path_frames: Vec::with_capacity(256),
            path_stacks: Vec::with_capacity(256),
            cur_path: Vec::with_capacity(256),
            name_buf: Vec::with_capacity(256),
            parts: Vec::new(),
            thread_ids: HashMap::new(),
            thread_roots: Vec::new(),
            last_thread: None,
            events: Vec::new(),
            event_ids: HashMap::new(),
            last_event: None,
            col_thread: Vec::new(),
            col_time: Vec::new(),
            col_cpu: Vec::new(),
            col_event: Vec::new(),
            time_span: None,
            any_cpu: false,
            last_time: 0,
            tod_offset: None,
            ref_offset: None,
            stackless: 0,
            cut: false,
        }
    }

    /// Parses a run of whole lines, each ending in `\n`; at the end of input
    /// (`eof`) the last one may lack it.
    pub(crate) fn chunk(&mut self, lines: &[u8], eof: bool) {
        let mut start = 0;
        for nl in memchr_iter(b'\n', lines) {
            self.line(&lines[start..nl]);
            start = nl + 1;
        }
        if eof && start < lines.len() {
            // The input ends in the middle of a line.
            self.cut = true;
            self.line(&lines[start..]);
        }
    }

    /// Samples so far; an event whose stack is still being read is not one yet.
    pub(crate) fn samples(&self) -> usize {
        self.profile.samples.len()
    }

    /// What [`Parser::finish`] would return if the input ended here.
    pub(crate) fn snapshot(&self) -> Result<Profile, ParseError> {
        self.clone().finish()
    }

    fn warn(&mut self, line: u64, message: impl Into<String>) {
        self.profile.warnings.push(line, message);
    }

    /// Handles one line (without its `\n`).
    fn line(&mut self, raw: &[u8]) {
        self.line_no += 1;
        if raw.first() == Some(&b'#') {
            self.comment(raw);
            return;
        }
        let line = trim_end(raw);
        if self.header_block {
            // Inside perf's `--header` block a line without `#` continues the last
            // value, unless it is plainly an event line (the closing rule was lost).
            match parse_event_line(line) {
                Some(ev) if ev.time_ns.is_some() && !ev.event.is_empty() => {
                    self.header_block = false;
                }
                _ => {
                    self.continuation(raw);
                    return;
                }
            }
        }
        if line.is_empty() {
            self.end_event();
            return;
        }
        if self.in_event {
            if self.stack_line(line) {
                return;
            }
            if let Some(ev) = parse_event_line(line)
                && (ev.time_ns.is_some() || !ev.event.is_empty())
            {
                // No blank line after the previous event: this one starts anew.
                self.end_event();
                self.event_line(ev);
                return;
            }
            if let Some(f) = split_frame_without_dso(line) {
                self.push_frame(&f);
                return;
            }
            let n = self.line_no;
            self.warn(n, "not a frame line (`address symbol (dso)`); skipped");
            return;
        }
        match parse_event_line(line) {
            Some(ev) => self.event_line(ev),
            None => {
                let n = self.line_no;
                if self.first_bad.is_none() {
                    let shown = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
                    self.first_bad = Some((n, shown));
                }
                self.warn(
                    n,
                    "not an event line (`comm pid [cpu] time: period event:`); skipped",
                );
            }
        }
    }

    /// `# key : value` header lines become metadata; `# ========` rules open and
    /// close perf's `--header` block.
    fn comment(&mut self, raw: &[u8]) {
        if is_header_rule(raw) {
            self.header_block = !self.header_block;
            return;
        }
        let body = trim(raw.get(1..).unwrap_or_default());
        let Some(colon) = memchr(b':', body) else {
            return;
        };
        let (key, value) = (trim(&body[..colon]), trim(&body[colon + 1..]));
        if key.is_empty() || value.is_empty() || key.len() > 64 {
            return;
        }
        if key == b"reference time" {
            self.ref_offset = reference_offset(value);
        }
        let extra = &mut self.profile.meta.extra;
        if extra.len() < MAX_EXTRA {
            let mut v = String::from_utf8_lossy(value).into_owned();
            truncate_string(&mut v, MAX_EXTRA_LEN);
            extra.push((String::from_utf8_lossy(key).into_owned(), v));
        }
    }

    /// A header value continued on a line without `#` (a `cmdline` with newlines).
    fn continuation(&mut self, raw: &[u8]) {
        if let Some((_, v)) = self.profile.meta.extra.last_mut()
            && v.len() < MAX_EXTRA_LEN
        {
            v.push('\n');
            v.push_str(&String::from_utf8_lossy(trim_end(raw)));
            truncate_string(v, MAX_EXTRA_LEN);
        }
    }

    fn event_line(&mut self, ev: EventLine<'_>) {
        self.saw_event = true;
        self.in_event = true;
        let (thread, root, java) = self.thread(&ev);
        let event = self.event_id(ev.event);
        self.cur = Current {
            thread,
            root,
            java,
            event,
            period: ev.period,
            time: ev.time_ns,
            cpu: ev.cpu,
        };
        if let (Some(tod), Some(t), None) = (ev.tod_ns, ev.time_ns, self.tod_offset) {
            self.tod_offset = i64::try_from(i128::from(tod) - i128::from(t)).ok();
        }
        // A sample with a one-frame stack on its event line (no -g). Anything else
        // there is trace-event fields: the call chain (if any) follows.
        if let Some(f) = split_frame(ev.rest) {
            self.push_frame(&f);
            self.end_event();
        }
    }

    /// The thread of an event line: (index, root frame, java comm).
    fn thread(&mut self, ev: &EventLine<'_>) -> (u32, FrameId, bool) {
        if let Some(((comm, pid, tid), idx)) = &self.last_thread
            && comm == ev.comm
            && *pid == ev.pid
            && *tid == ev.tid
        {
            let (root, java) = self.thread_roots[*idx as usize];
            return (*idx, root, java);
        }
        let key: ThreadKey = (ev.comm.to_vec(), ev.pid, ev.tid);
        let idx = match self.thread_ids.get(&key) {
            Some(&i) => i,
            None => {
                let i = self.thread_roots.len() as u32;
                let root_name: Vec<u8> = ev
                    .comm
                    .iter()
                    .map(|&b| if is_ws(b) { b'_' } else { b })
                    .collect();
                let root = self.profile.frames.intern(&root_name);
                self.thread_roots
                    .push((root, root_name.starts_with(b"java")));
                self.profile.threads.push(ThreadInfo {
                    name: String::from_utf8_lossy(ev.comm).into_owned(),
                    pid: ev.pid,
                    tid: ev.tid,
                });
                self.thread_ids.insert(key.clone(), i);
                i
            }
        };
        self.last_thread = Some((key, idx));
        let (root, java) = self.thread_roots[idx as usize];
        (idx, root, java)
    }

    fn event_id(&mut self, printed: &[u8]) -> u32 {
        if let Some((name, idx)) = &self.last_event
            && name == printed
        {
            return *idx;
        }
        let base = event_base(printed);
        let idx = match self.event_ids.get(base) {
            Some(&i) => i,
            None => {
                let i = self.events.len() as u32;
                self.events.push(EventStats {
                    base: String::from_utf8_lossy(base).into_owned(),
                    constant_period: true,
                    ..EventStats::default()
                });
                self.event_ids.insert(base.to_vec(), i);
                i
            }
        };
        if let Some(e) = self.events.get_mut(idx as usize) {
            let name = String::from_utf8_lossy(printed);
            if e.printed.len() < 16 && !e.printed.iter().any(|p| *p == name) {
                e.printed.push(name.into_owned());
            }
        }
        self.last_event = Some((printed.to_vec(), idx));
        idx
    }

    /// A line inside an event: a frame line with its dso or a `--srcline` line.
    /// False for anything else, which may be the next event line or a frame line
    /// without a dso (`line` tells them apart, event lines first).
    fn stack_line(&mut self, line: &[u8]) -> bool {
        if let Some(f) = split_frame(line) {
            self.push_frame(&f);
            return true;
        }
        if let Some((file, line_no, inlined)) = split_srcline(line) {
            self.srcline(file, line_no, inlined);
            return true;
        }
        false
    }

    /// A `--srcline` line: the source location of the frame line before it, and
    /// whether that frame was inlined (perf then prints no dso).
    fn srcline(&mut self, file: &[u8], line: Option<u32>, inlined: bool) {
        let Some(&id) = self.frames.last() else {
            return;
        };
        let meta = self.profile.frame_meta.entry(id).or_default();
        if meta.file.is_none() {
            meta.file = Some(String::from_utf8_lossy(file).into_owned());
            meta.line = line;
        }
        if inlined && meta.kind == FrameKind::Normal {
            meta.kind = FrameKind::Inlined;
        }
    }

    /// Interns the frame(s) of one call-chain line, inferno's way.
    fn push_frame(&mut self, f: &FrameLine<'_>) {
        let sym = strip_offset(f.sym);
        if sym.first() == Some(&b'(') && !sym.starts_with(b"(anonymous namespace)") {
            // inferno and stackcollapse-perf.pl skip these as process names; unlike
            // them, C++ `(anonymous namespace)::f` frames are kept.
            return;
        }
        let fixed = fix_rust(sym);
        let name: &[u8] = &fixed;
        if memchr::memmem::find(name, b"->").is_none() {
            self.push_func(name, f, true);
            return;
        }
        // Java inlining: `outer->inlined->innermost`, root to leaf.
        let mut parts = std::mem::take(&mut self.parts);
        parts.clear();
        let mut start = 0;
        for i in memchr::memmem::find_iter(name, b"->") {
            if i >= start {
                parts.push((start, i));
                start = i + 2;
            }
        }
        parts.push((start, name.len()));
        for (k, &(a, b)) in parts.iter().enumerate().rev() {
            self.push_func(&name[a..b], f, k == 0);
        }
        self.parts = parts;
    }

    fn push_func(&mut self, func: &[u8], f: &FrameLine<'_>, first: bool) {
        let module = f.module;
        // No dso printed (`perf script -F ip,sym`): `[unknown]` stays as it is.
        let unknown = func == b"[unknown]" && module != b"[unknown]" && !module.is_empty();
        let java_tidy = self.cur.java && func.first() == Some(&b'L');
        let before = self.profile.frames.len();
        let id = if !unknown && !java_tidy && first && memchr2(b';', b'(', func).is_none() {
            self.profile.frames.intern(func)
        } else {
            let buf = &mut self.name_buf;
            buf.clear();
            if unknown {
                let base = memrchr(b'/', module).map_or(module, |i| &module[i + 1..]);
                buf.push(b'[');
                buf.extend_from_slice(base);
                buf.push(b']');
            } else {
                buf.extend_from_slice(func);
            }
            tidy_generic(buf);
            if self.cur.java && buf.first() == Some(&b'L') && memchr(b'/', buf).is_some() {
                buf.remove(0);
            }
            if !first && !contains(buf, b"_[i]") {
                buf.extend_from_slice(b"_[i]");
            }
            self.profile.frames.intern(buf)
        };
        if id.0 as usize == before {
            let kind = if !first || module == b"inlined" {
                FrameKind::Inlined
            } else if is_kernel(module) || (module.is_empty() && is_kernel_address(f.pc)) {
                FrameKind::Kernel
            } else if is_jit(module) {
                FrameKind::Jit
            } else {
                FrameKind::Normal
            };
            if kind != FrameKind::Normal {
                self.profile.frame_meta.insert(
                    id,
                    FrameMeta {
                        kind,
                        ..FrameMeta::default()
                    },
                );
            }
        }
        self.frames.push(id);
    }

    /// Ends the current event: its stack becomes a sample.
    fn end_event(&mut self) {
        if !self.in_event {
            return;
        }
        self.in_event = false;
        if self.frames.is_empty() {
            // inferno counts no stack for an event without frames.
            self.stackless += 1;
            return;
        }
        let stack = self.build_stack();
        let cur = self.cur;
        let period = cur.period.unwrap_or(1);
        self.profile
            .push_sample(Some(stack), &[1, i64::try_from(period).unwrap_or(i64::MAX)]);
        self.col_thread.push(cur.thread);
        let time = match cur.time {
            Some(t) => {
                let (lo, hi) = self.time_span.unwrap_or((t, t));
                self.time_span = Some((lo.min(t), hi.max(t)));
                self.last_time = t;
                t
            }
            None => self.last_time,
        };
        self.col_time.push(time);
        self.any_cpu |= cur.cpu.is_some();
        self.col_cpu.push(cur.cpu.unwrap_or(u32::MAX));
        self.col_event.push(cur.event);
        if let Some(e) = self.events.get_mut(cur.event as usize) {
            e.samples += 1;
            if let Some(p) = cur.period {
                e.any_period = true;
                match e.first_period {
                    None => e.first_period = Some(p),
                    Some(q) if q != p => e.constant_period = false,
                    Some(_) => {}
                }
            } else if e.any_period {
                e.constant_period = false;
            }
        }
    }

    /// Interns `root; frames (reversed)`, reusing the previous sample's prefix.
    fn build_stack(&mut self) -> StackId {
        let Parser {
            profile,
            builder,
            frames,
            path_frames,
            path_stacks,
            cur_path,
            cur,
            ..
        } = self;
        cur_path.clear();
        cur_path.push(cur.root);
        cur_path.extend(frames.iter().rev());
        frames.clear();
        let k = cur_path
            .iter()
            .zip(path_frames.iter())
            .take_while(|(a, b)| a == b)
            .count();
        path_frames.truncate(k);
        path_stacks.truncate(k);
        let mut prefix = path_stacks.last().copied();
        for &f in &cur_path[k..] {
            let s = builder.child(&mut profile.stacks, &profile.frames, prefix, f);
            path_frames.push(f);
            path_stacks.push(s);
            prefix = Some(s);
        }
        prefix.unwrap_or(StackId(0))
    }

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
            let offset = self.ref_offset.or(self.tod_offset);
            if let Some(off) = offset {
                p.meta.time_to_unix_ns = Some(off);
                p.meta.start_unix_ns = u64::try_from(i128::from(lo) + i128::from(off)).ok();
            }
            if self.ref_offset.is_none() && self.tod_offset.is_some() {
                p.notes.push(
                    "wall-clock (`tod`) times were read as UTC; perf prints them in the recording machine's local time"
                        .into(),
                );
            }
            p.samples.time = Some(self.col_time);
        }
        if self.stackless > 0 {
            p.notes.push(format!(
                "{} events without a call chain were skipped",
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

/// `2026-12-02 13:32:50.514950 = 1796218370.514950 (TOD) = 1949.047215595 (monotonic)`:
/// Unix time minus the sample clock, in nanoseconds.
fn reference_offset(value: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(value).ok()?;
    let mut parts = text.split(" = ").skip(1);
    let tod = parts.next()?.split_whitespace().next()?;
    let clock = parts.next()?.split_whitespace().next()?;
    let tod = parse_seconds_ns(tod.as_bytes())?;
    let clock = parse_seconds_ns(clock.as_bytes())?;
    i64::try_from(i128::from(tod) - i128::from(clock)).ok()
}

fn truncate_string(s: &mut String, max: usize) {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
}

/// Parses `perf script` output from `reader`.
pub fn parse(reader: impl Read, progress: &Progress) -> Result<Profile, ParseError> {
    let mut parser = Parser::new();
    super::for_each_line_chunk(reader, progress, |lines, eof| parser.chunk(lines, eof))?;
    parser.finish()
}

#[cfg(test)]
mod tests;
