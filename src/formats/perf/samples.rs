//! The parser line by line: event lines open a sample, frame lines add to its stack,
//! a blank line (or the next event line) ends it; `#` comments become metadata.

use memchr::{memchr, memchr_iter, memchr2, memrchr};

/// The frame of an event that recorded no call chain.
pub const NO_STACK: &str = "[no stack recorded]";

use super::lines::{
    EventLine, FrameLine, event_base, is_header_rule, is_kernel_address, is_ws, parse_event_line,
    parse_seconds_ns, split_frame, split_frame_without_dso, split_srcline, trim, trim_end,
};
use super::names::{contains, fix_rust, is_jit, is_kernel, strip_offset, tidy_generic};
use super::{Current, EventStats, Parser, ThreadKey};
use crate::model::{FrameId, FrameKind, FrameMeta, StackId, ThreadInfo};

/// At most this many `# key : value` header comments are kept, each cut to this length.
const MAX_EXTRA: usize = 256;
const MAX_EXTRA_LEN: usize = 4096;

impl Parser {
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
        // `??:0` is perf's "no location".
        let known = if file == b"??" { &b""[..] } else { file };
        let id = if self.granularity == crate::formats::Granularity::Function {
            id
        } else {
            let name = self.profile.frames.raw(id).to_vec();
            let named = self.granularity.frame_name(&name, known, line).into_owned();
            let new = self.profile.frames.intern(&named);
            if new != id {
                let kind = self.profile.frame_meta.get(&id).map(|m| m.kind);
                let meta = self.profile.frame_meta.entry(new).or_default();
                if let Some(kind) = kind {
                    meta.kind = kind;
                }
                if let Some(last) = self.frames.last_mut() {
                    *last = new;
                }
            }
            new
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
            // The DSO, where perf printed one: `/app/target/debug/app` says
            // more about the build than any frame name.
            let object = (!module.is_empty() && module != b"inlined" && module != b"[unknown]")
                .then(|| String::from_utf8_lossy(module).into_owned());
            if kind != FrameKind::Normal || object.is_some() {
                self.profile.frame_meta.insert(
                    id,
                    FrameMeta {
                        kind,
                        object,
                        ..FrameMeta::default()
                    },
                );
            }
        }
        self.frames.push(id);
    }

    /// Ends the current event: its stack becomes a sample.
    pub(super) fn end_event(&mut self) {
        if !self.in_event {
            return;
        }
        self.in_event = false;
        if self.frames.is_empty() {
            // An event without a call chain is CPU time too (perf report counts
            // it): kept under its comm, in a frame that says what is missing.
            // inferno leaves such events out.
            self.stackless += 1;
            let id = self.profile.frames.intern(NO_STACK.as_bytes());
            self.frames.push(id);
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
