//! Conformance of the `perf script` reader against peer tools' outputs in the shared
//! corpus.
//!
//! Reads `$EMBER_CORPUS` (the `shared/corpus` folder; see its MANIFEST.md). Unset: the
//! suite prints that it was skipped and passes. Set to a folder that does not exist:
//! the suite fails.
//!
//! Every input under `$EMBER_CORPUS/perf-script/` (plain or gzipped) is loaded through
//! `formats::load` with detection (it must be detected as perf) and compared, as a
//! multiset of `stack weight` lines summed per stack, with every oracle it has:
//!
//! | oracle | tool | ember's side |
//! |---|---|---|
//! | `<file>.inferno-collapsed.txt` | inferno-collapse-perf 0.12.8, default options | the first event's period (`period`, or `<event> period` when there are several events); root frame = comm; frame names as they are |
//! | `inferno/results/<stem>-collapsed[-<opt>].txt` | inferno's own expected outputs | the same, rendered with the option (below) |
//! | `flamegraph/results-inferno-0.12.8/<stem>-collapsed-<opt>.txt` | inferno-collapse-perf 0.12.8 `--<opt>` | the same, rendered with the option |
//! | `flamegraph/results/<stem>-collapsed-<opt>.txt` | stackcollapse-perf.pl (2019) `--<opt>`, 1 per sample | the first event's sample count (`samples` / `<event> samples`); `'` and `"` deleted on both sides, as inferno's tests do |
//! | `flamegraph/results-upstream-2024/<stem>-collapsed-<opt>.txt` | stackcollapse-perf.pl (2024) `--<opt>`, period-weighted | the first event's period; quotes deleted |
//!
//! Options are applied when rendering ember's profile, not when reading it: `pid`
//! makes the root `comm-pid`, `tid` `comm-pid/tid` (`?` where perf printed no pid),
//! from `Samples::thread` and `Profile::threads`; `kernel` appends `_[k]` to frames
//! marked `FrameKind::Kernel`, `jit` `_[j]` to `FrameKind::Jit` frames (unless the
//! name has it), `all` both. `addrs` oracles are not compared: ember keeps no
//! addresses for unsymbolised frames (`[unknown]` stays `[unknown]`, as by default).
//!
//! Intended deviations (each is still checked, as the last column says):
//!
//! | file | peer | ember | how it is checked |
//! |---|---|---|---|
//! | perf-dd-stacks-01, perf-iperf-stacks-pidtid-01, perf-java-stacks-01, perf-mirageos-stacks-01, perf-numa-stacks-01, perf-vertx-stacks-01 (no blank line after the last stack) | stackcollapse-perf.pl (2019 and 2024) drops the last stack | counts it, as inferno does | against the Perl oracles ember's last sample is left out; inferno oracles as usual |
//! | perf-java-faults-01, perf-java-stacks-01, perf-java-stacks-02, perf-vertx-stacks-01 with `pid` / `tid` (Perl 2019 and 2024) | tidies Java names (`Lpkg/Class;` -> `pkg/Class:`) only under a root that is exactly `java`, so under `java-PID` it keeps the `L` | tidies for every comm starting with `java`, as inferno does | the `L` is dropped from Perl's `L.../...` frames under `java*` roots (it must change something); inferno's own `--pid`/`--tid` oracles as usual |
//! | perf-rust-Yamakaky-dcpu, every Perl oracle | leaves perf's partly demangled Rust symbols (`_$LT$...$GT$::f::h0123...`) | finishes them, as inferno does (`<...>::f`) | Perl's frames are passed through inferno's `fix_partially_demangled_rust_symbol` (re-implemented below) before comparing; inferno's oracles as usual |
//! | any file with `(anonymous namespace)::...` symbols; in the corpus `firefox-profiler/test.perf.gz` (4 `(anonymous namespace)::CreateThread` frames) | inferno and Perl skip every symbol starting with `(` as a "process name" | keeps C++ `(anonymous namespace)::f` frames (other `(...)` symbols are skipped as they do) | those frames are removed from ember's stacks before every comparison, and samples left with only the comm are dropped (the peers do not count a stack without frames) |
//! | every file with events that have no call chain (in the corpus: the `context/` perf scripts, 2,000+ each) | inferno and stackcollapse-perf.pl leave them out; perf report counts them | counts each under its comm in a `[no stack recorded]` frame, so totals equal perf report's | that frame is removed from ember's stacks before every comparison (the sample then has only its comm and is dropped, as the peers do); the context suite asserts every event is a sample and the note's count equals the `[no stack recorded]` samples |
//! | `firefox-profiler/simple-perf.txt.gz` (TAB-separated event and frame lines) | inferno 0.12.8 panics, speedscope throws | reads TABs as blanks | compared with the inferno library (this crate's dependency, default options) run on the same text with every TAB replaced by a blank |
//! | `inferno/no-events.txt` (empty) | inferno prints nothing | `LoadError::Empty` | asserted; its empty oracle must stay empty |
//! | `inferno/weird-stack-line.txt`, `inferno/empty-line.txt` | inferno logs one "weird" line | one warning with its line number (5 and 6) | oracle as usual; warnings asserted |
//! | `speedscope/one-sample.linux-perf.txt`, `speedscope/simple.linux-perf.txt` (end mid-stack without a final newline) | read silently | one warning on the last line: the last sample may be cut short | oracle as usual; warning asserted |
//!
//! Where ember reads more than the peers and the corpus has no peer oracle: several
//! event types are all kept (oracles are compared with the first event's columns,
//! the only event inferno keeps); frame lines without a dso (`perf script -F
//! ip,sym`), `-1` ids and `-F +tod` times are checked on `context/`'s perf pairs by
//! `context_perf_scripts_agree_with_each_other`.
//!
//! Every file must also survive being cut short at many points (complete lines and
//! mid-line): `perf::parse` must return a profile or a clean error, never panic.
//!
//! `probe_claims_perf_script_and_nothing_else` runs the probe on every corpus file:
//! sure of each perf input, never sure of anything else (folded, JSON, iostat, ...).
//! `repo_sample_matches_inferno` needs no corpus: `samples/perf-python-wordindex-small.perf.gz`
//! against the inferno library.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use ember::error::LoadError;
use ember::formats::perf::NO_STACK;
use ember::formats::{self, Format, LoadOptions, ParseError, perf};
use ember::model::{FrameId, FrameKind, Profile};
use ember::sources::input::{Progress, Source};

/// `stack -> weight`, weights summed per stack, zero weights dropped.
type Folded = BTreeMap<String, i64>;

use common::say;

/// The option an oracle was made with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    Default,
    Pid,
    Tid,
    Kernel,
    Jit,
    All,
}

impl Opt {
    fn parse(s: &str) -> Option<Opt> {
        Some(match s {
            "" => Opt::Default,
            "pid" => Opt::Pid,
            "tid" => Opt::Tid,
            "kernel" => Opt::Kernel,
            "jit" => Opt::Jit,
            "all" => Opt::All,
            _ => return None,
        })
    }

    fn kernel(self) -> bool {
        matches!(self, Opt::Kernel | Opt::All)
    }

    fn jit(self) -> bool {
        matches!(self, Opt::Jit | Opt::All)
    }
}

/// Which tool made an oracle, and so how it weighs samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    /// inferno 0.12.8 (or its own expected outputs): period-weighted.
    Inferno,
    /// stackcollapse-perf.pl 2019: 1 per sample, last stack dropped without a blank line.
    Perl2019,
    /// stackcollapse-perf.pl 2024: period-weighted, last stack dropped too.
    Perl2024,
}

struct Oracle {
    path: PathBuf,
    tool: Tool,
    opt: Opt,
}

impl Oracle {
    fn label(&self, corpus: &Path) -> String {
        format!(
            "{} ({:?}, {:?})",
            self.path
                .strip_prefix(corpus)
                .unwrap_or(&self.path)
                .display(),
            self.tool,
            self.opt
        )
    }
}

/// Text of a file, gunzipped when its name ends in `.gz`.
fn read_text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let bytes = if path.extension().is_some_and(|x| x == "gz") {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out
    } else {
        bytes
    };
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `stack weight` lines, summed per stack.
fn parse_folded(text: &str) -> Folded {
    let mut out = Folded::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (stack, w) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("oracle line without a weight: {line:?}"));
        let w: i64 = w
            .parse()
            .unwrap_or_else(|_| panic!("oracle weight not an integer: {line:?}"));
        *out.entry(stack.to_string()).or_default() += w;
    }
    out.retain(|_, w| *w != 0);
    out
}

/// Deletes `'` and `"` from the stacks (inferno's tests do so with Perl's outputs).
fn strip_quotes(f: &Folded) -> Folded {
    let mut out = Folded::new();
    for (s, w) in f {
        *out.entry(s.replace(['\'', '"'], "")).or_default() += w;
    }
    out
}

/// The value-type columns of the first event: (samples, period).
fn first_event_columns(p: &Profile) -> (usize, usize) {
    if p.value_types.len() > 2 {
        (2, 3)
    } else {
        (0, 1)
    }
}

/// A frame's name, with inferno's `_[k]` / `_[j]` annotations when asked for.
fn frame_text(p: &Profile, f: FrameId, opt: Opt) -> String {
    let name = p.frames.name(f).into_owned();
    match p.frame_meta.get(&f).map(|m| m.kind) {
        Some(FrameKind::Kernel) if opt.kernel() => format!("{name}_[k]"),
        Some(FrameKind::Jit) if opt.jit() && !name.contains("_[j]") => format!("{name}_[j]"),
        _ => name,
    }
}

/// ember's profile as folded lines of value column `v`, rendered with `opt`;
/// `skip_last` leaves the last sample out. The `(anonymous namespace)::...` frames
/// that inferno and stackcollapse-perf.pl skip are left out (and so are samples left
/// with no frame but the root, which they do not count); `changed` is set when that
/// made a difference.
fn ember_folded_as_peers(
    p: &Profile,
    v: usize,
    opt: Opt,
    skip_last: bool,
    changed: &mut bool,
) -> Folded {
    let n = p.value_types.len();
    let threads = p
        .samples
        .thread
        .as_ref()
        .expect("perf samples have threads");
    let count = p.samples.len() - usize::from(skip_last && !p.samples.is_empty());
    let mut out = Folded::new();
    for (i, &thread) in threads.iter().enumerate().take(count) {
        let Some(s) = p.samples.stack_of(i) else {
            continue;
        };
        let mut path = p.stacks.path(s);
        // Events without a call chain: the peers count none of them.
        path.retain(|&f| p.frames.raw(f) != NO_STACK.as_bytes());
        let len = path.len();
        path.retain(|&f| !p.frames.raw(f).starts_with(b"(anonymous namespace)"));
        *changed |= path.len() != len;
        if path.len() < 2 {
            continue;
        }
        let mut parts: Vec<String> = path.iter().map(|&f| frame_text(p, f, opt)).collect();
        let t = &p.threads[thread as usize];
        let pid = t.pid.map_or("?".to_string(), |x| x.to_string());
        match opt {
            Opt::Pid => parts[0] = format!("{}-{pid}", parts[0]),
            Opt::Tid => {
                let tid = t.tid.map_or("?".to_string(), |x| x.to_string());
                parts[0] = format!("{}-{pid}/{tid}", parts[0]);
            }
            _ => {}
        }
        *out.entry(parts.join(";")).or_default() += p.samples.values[i * n + v];
    }
    out.retain(|_, w| *w != 0);
    out
}

/// Differences between two folded maps, for a message.
fn diff(what: &str, expected: &Folded, got: &Folded) -> Vec<String> {
    if expected == got {
        return Vec::new();
    }
    let mut out = vec![format!(
        "{what}: {} expected stacks (total {}), {} got (total {})",
        expected.len(),
        expected.values().sum::<i64>(),
        got.len(),
        got.values().sum::<i64>()
    )];
    for (k, v) in expected {
        if got.get(k) != Some(v) {
            out.push(format!("  missing: {k} {v} (ember: {:?})", got.get(k)));
        }
    }
    for (k, v) in got {
        if !expected.contains_key(k) {
            out.push(format!("  unexpected: {k} {v}"));
        }
    }
    out.truncate(10);
    out
}

/// The perf inputs under `dir`: everything that is not an oracle file.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = e.expect("directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if !name.starts_with("results") {
                    todo.push(path);
                }
            } else if !name.contains(".inferno-")
                && !name.contains(".speedscope-")
                && (name.ends_with(".txt") || name.ends_with(".gz"))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The input's stem as the results folders name it (`perf-dd-stacks-01`).
fn stem(input: &Path) -> String {
    let name = input.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let name = name.strip_suffix(".gz").unwrap_or(name);
    let name = name.strip_suffix(".txt").unwrap_or(name);
    name.strip_suffix(".perf").unwrap_or(name).to_string()
}

fn with_suffix(input: &Path, suffix: &str) -> PathBuf {
    let mut s = input.as_os_str().to_owned();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}

/// Every oracle for `input`.
fn oracles(root: &Path, input: &Path) -> Vec<Oracle> {
    let mut out = Vec::new();
    let own = with_suffix(input, "inferno-collapsed.txt");
    if own.exists() {
        out.push(Oracle {
            path: own,
            tool: Tool::Inferno,
            opt: Opt::Default,
        });
    }
    let stem = stem(input);
    for (dir, tool) in [
        ("inferno/results", Tool::Inferno),
        ("flamegraph/results-inferno-0.12.8", Tool::Inferno),
        ("flamegraph/results", Tool::Perl2019),
        ("flamegraph/results-upstream-2024", Tool::Perl2024),
    ] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries.map(|e| e.expect("entry").path()).collect();
        found.sort();
        for path in found {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let Some(rest) = name.strip_prefix(&format!("{stem}-collapsed")) else {
                continue;
            };
            let Some(opt) = rest.strip_suffix(".txt") else {
                continue;
            };
            let opt = opt.strip_prefix('-').unwrap_or(opt);
            if let Some(opt) = Opt::parse(opt) {
                out.push(Oracle { path, tool, opt });
            }
        }
    }
    out
}

/// Whether the input's last line is a frame line with no blank line after it:
/// stackcollapse-perl.pl then drops that last stack.
fn ends_inside_stack(text: &str) -> bool {
    text.lines()
        .last()
        .is_some_and(|l| !l.trim().is_empty() && l.starts_with([' ', '\t']))
}

/// Expected warnings (line numbers) per input; every other file must have none.
fn expected_warnings(rel: &str, text: &str) -> Vec<u64> {
    let mut lines = match rel {
        "inferno/weird-stack-line.txt" => vec![5],
        "inferno/empty-line.txt" => vec![6],
        _ => vec![],
    };
    if ends_inside_stack(text) && !text.ends_with('\n') {
        // speedscope's `one-sample` and `simple` end mid-stack without a newline.
        lines.push(text.lines().count() as u64);
    }
    lines
}

/// inferno's `fix_partially_demangled_rust_symbol` (common.rs, 0.12.8), which
/// stackcollapse-perf.pl does not have: finishes `_$LT$...$GT$::f::h<16 hex>`.
fn fix_rust(sym: &str) -> String {
    let is_hash = |s: &str| s.starts_with('h') && s[1..].chars().all(|c| c.is_ascii_hexdigit());
    if sym.len() < 17 || !sym.is_char_boundary(sym.len() - 17) || !is_hash(&sym[sym.len() - 17..]) {
        return sym.to_string();
    }
    let mut rest = &sym[..sym.len() - 17];
    rest = rest.strip_suffix("::").unwrap_or(rest);
    if rest.starts_with("_$") {
        rest = &rest[1..];
    }
    const CODES: &[(&str, &str)] = &[
        ("$SP$", "@"),
        ("$BP$", "*"),
        ("$RF$", "&"),
        ("$LT$", "<"),
        ("$GT$", ">"),
        ("$LP$", "("),
        ("$RP$", ")"),
        ("$C$", ","),
        ("$u7e$", "~"),
        ("$u20$", " "),
        ("$u27$", "'"),
        ("$u3d$", "="),
        ("$u5b$", "["),
        ("$u5d$", "]"),
        ("$u7b$", "{"),
        ("$u7d$", "}"),
        ("$u3b$", ";"),
        ("$u2b$", "+"),
        ("$u21$", "!"),
        ("$u22$", "\""),
    ];
    let mut out = String::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("..") {
            out.push_str("::");
            rest = r;
        } else if let Some(r) = rest.strip_prefix('.') {
            out.push('.');
            rest = r;
        } else if rest.starts_with('$') {
            match CODES.iter().find(|(pat, _)| rest.starts_with(pat)) {
                Some((pat, rep)) => {
                    out.push_str(rep);
                    rest = &rest[pat.len()..];
                }
                None => {
                    out.push_str(rest);
                    break;
                }
            }
        } else {
            let n = rest.find(['$', '.']).unwrap_or(rest.len());
            out.push_str(&rest[..n]);
            rest = &rest[n..];
        }
    }
    out
}

/// A documented difference between stackcollapse-perf.pl and inferno/ember that is
/// normalised away in Perl's oracle before comparing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PerlFix {
    /// With `--pid`/`--tid` the root is `java-PID`, and Perl tidies `Lpkg/Class;`
    /// names only under a root that is exactly `java`: drop the `L`.
    JavaUnderPid,
    /// Perl does not finish partly demangled Rust symbols.
    RustSymbols,
}

fn perl_fixes(rel: &str, opt: Opt) -> Vec<PerlFix> {
    let mut out = Vec::new();
    let java = rel.contains("java") || rel.contains("vertx");
    if java && matches!(opt, Opt::Pid | Opt::Tid) {
        out.push(PerlFix::JavaUnderPid);
    }
    if rel == RUST {
        out.push(PerlFix::RustSymbols);
    }
    out
}

fn apply_perl_fix(theirs: &Folded, fix: PerlFix) -> Folded {
    let mut out = Folded::new();
    for (stack, w) in theirs {
        let mut frames: Vec<String> = stack.split(';').map(str::to_string).collect();
        let java_root = frames.first().is_some_and(|r| r.starts_with("java"));
        for f in frames.iter_mut().skip(1) {
            match fix {
                PerlFix::JavaUnderPid if java_root && f.starts_with('L') && f.contains('/') => {
                    f.remove(0);
                }
                PerlFix::RustSymbols => *f = fix_rust(f),
                _ => {}
            }
        }
        *out.entry(frames.join(";")).or_default() += w;
    }
    out
}

const TABS: &str = "firefox-profiler/simple-perf.txt.gz";
const RUST: &str = "flamegraph/perf-rust-Yamakaky-dcpu.txt";

/// inferno's output (the library this crate depends on, default options) for `text`.
fn inferno_collapse(text: &str) -> Folded {
    use inferno::collapse::Collapse;
    let mut folder = inferno::collapse::perf::Folder::default();
    let mut out = Vec::new();
    folder
        .collapse(text.as_bytes(), &mut out)
        .expect("inferno collapses the text");
    parse_folded(&String::from_utf8_lossy(&out))
}

/// Checks one oracle; problems are returned. `deviation` is set when the check
/// passed through a documented deviation.
fn check_oracle(
    rel: &str,
    text: &str,
    p: &Profile,
    o: &Oracle,
    deviation: &mut bool,
) -> Vec<String> {
    let (samples_col, period_col) = first_event_columns(p);
    let theirs = parse_folded(&read_text(&o.path));
    match o.tool {
        Tool::Inferno => diff(
            "inferno",
            &theirs,
            &ember_folded_as_peers(p, period_col, o.opt, false, deviation),
        ),
        Tool::Perl2019 | Tool::Perl2024 => {
            let col = if o.tool == Tool::Perl2019 {
                samples_col
            } else {
                period_col
            };
            let skip_last = ends_inside_stack(text);
            *deviation |= skip_last;
            let ours = strip_quotes(&ember_folded_as_peers(p, col, o.opt, skip_last, deviation));
            let mut theirs = theirs;
            let mut problems = Vec::new();
            for fix in perl_fixes(rel, o.opt) {
                *deviation = true;
                let fixed = apply_perl_fix(&theirs, fix);
                if fixed == theirs {
                    problems.push(format!("{fix:?} changed nothing: deviation gone?"));
                }
                theirs = fixed;
            }
            // After the fixes: a finished Rust name may have gained a quote.
            problems.extend(diff("perl", &strip_quotes(&theirs), &ours));
            problems
        }
    }
}

enum Verdict {
    Pass { checks: usize, deviations: usize },
    Fail(Vec<String>),
}

/// Cuts `bytes` short at many points and parses each piece: no panic, and only a
/// profile or a clean `Invalid` error.
fn survives_truncation(bytes: &[u8]) -> Vec<String> {
    let mut cuts: Vec<usize> = (1..16).map(|k| bytes.len() * k / 16).collect();
    let line_ends: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    cuts.extend(line_ends.iter().step_by(line_ends.len() / 16 + 1));
    let mut problems = Vec::new();
    for cut in cuts {
        let piece = &bytes[..cut.min(bytes.len())];
        match std::panic::catch_unwind(|| perf::parse(piece, &Progress::default())) {
            Ok(Ok(_) | Err(ParseError::Invalid { .. })) => {}
            Ok(Err(e)) => problems.push(format!("cut at {cut}: unexpected error {e:?}")),
            Err(_) => problems.push(format!("cut at {cut}: panicked")),
        }
    }
    problems
}

fn check_file(root: &Path, input: &Path) -> Verdict {
    let rel = input
        .strip_prefix(root)
        .expect("under the folder")
        .to_string_lossy()
        .replace('\\', "/");
    let text = read_text(input);
    let mut problems = survives_truncation(text.as_bytes());
    let loaded = formats::load(
        &Source::Path(input.to_path_buf()),
        &LoadOptions::default(),
        &Progress::new(),
    );
    let oracles = oracles(root, input);
    if text.trim().is_empty() {
        // `inferno/no-events.txt`: nothing to read.
        match loaded {
            Err(LoadError::Empty { .. }) => {}
            other => problems.push(format!("expected LoadError::Empty, got {other:?}")),
        }
        for o in &oracles {
            if !parse_folded(&read_text(&o.path)).is_empty() {
                problems.push(format!("{}: oracle not empty", o.path.display()));
            }
        }
        return if problems.is_empty() {
            Verdict::Pass {
                checks: oracles.len(),
                deviations: oracles.len(),
            }
        } else {
            Verdict::Fail(problems)
        };
    }
    let p = match loaded {
        Ok(p) => p,
        Err(e) => return Verdict::Fail(vec![format!("ember failed to load it: {e}")]),
    };
    if !p.format.starts_with("perf") {
        problems.push(format!("detected as {}", p.format));
    }
    let forced = formats::load(
        &Source::Path(input.to_path_buf()),
        &LoadOptions {
            format: Some(Format::Perf),
            ..LoadOptions::default()
        },
        &Progress::new(),
    );
    if forced.as_ref().map(|f| f.samples.len()).ok() != Some(p.samples.len()) {
        problems.push("`--input-format perf` reads it differently".into());
    }
    let warning_lines: Vec<u64> = p.warnings.first.iter().map(|w| w.line).collect();
    let want = expected_warnings(&rel, &text);
    if warning_lines != want || p.warnings.count != want.len() as u64 {
        problems.push(format!(
            "warnings at lines {warning_lines:?} (count {}), expected {want:?}: {:?}",
            p.warnings.count, p.warnings.first
        ));
    }
    let threads = p.samples.thread.as_ref().map_or(0, Vec::len);
    if threads != p.samples.len() {
        problems.push("thread column does not cover every sample".into());
    }
    let mut checks = 0;
    let mut deviations = 0;
    if rel == TABS {
        checks += 1;
        deviations += 1;
        let (_, period_col) = first_event_columns(&p);
        let reference = inferno_collapse(&text.replace('\t', " "));
        if reference.is_empty() {
            problems.push("inferno read nothing from the TAB-free copy".into());
        }
        problems.extend(diff(
            "inferno on the TAB-free copy",
            &reference,
            &ember_folded_as_peers(&p, period_col, Opt::Default, false, &mut false),
        ));
    }
    if oracles.is_empty() && rel != TABS {
        problems.push("no oracle for this input".into());
    }
    for o in &oracles {
        let mut deviation = false;
        let found = check_oracle(&rel, &text, &p, o, &mut deviation);
        checks += 1;
        if found.is_empty() {
            deviations += usize::from(deviation);
        } else {
            problems.push(o.label(root));
            problems.extend(found);
        }
    }
    if problems.is_empty() {
        Verdict::Pass { checks, deviations }
    } else {
        Verdict::Fail(problems)
    }
}

#[test]
fn perf_script_matches_inferno_and_flamegraph() {
    let Some(corpus) = common::corpus("perf conformance suite") else {
        return;
    };
    let root = corpus.join("perf-script");
    assert!(root.is_dir(), "{} is missing", root.display());
    let files = inputs(&root);
    assert!(
        files.len() >= 30,
        "only {} perf inputs under {}",
        files.len(),
        root.display()
    );
    let (mut files_pass, mut checks_pass, mut checks_dev) = (0, 0, 0);
    let mut failures = Vec::new();
    for file in &files {
        let verdict = std::panic::catch_unwind(|| check_file(&root, file))
            .unwrap_or_else(|_| Verdict::Fail(vec!["panicked".into()]));
        let rel = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        match verdict {
            Verdict::Pass { checks, deviations } => {
                files_pass += 1;
                checks_pass += checks;
                checks_dev += deviations;
            }
            Verdict::Fail(problems) => {
                say(&format!("FAIL perf-script/{rel}"));
                for p in &problems {
                    say(&format!("    {p}"));
                }
                failures.push(rel);
            }
        }
    }
    say(&format!(
        "perf: {files_pass}/{} pass ({checks_pass} oracle comparisons, {checks_dev} through a documented deviation)",
        files.len()
    ));
    assert!(
        failures.is_empty(),
        "perf conformance failures: {failures:?}"
    );
}

/// The head of a file as detection sees it: up to 64 KiB, gunzipped.
fn head_of(path: &Path) -> (Vec<u8>, bool) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let data = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let _ = flate2::read::MultiGzDecoder::new(&bytes[..])
            .take(1 << 16)
            .read_to_end(&mut out);
        out
    } else {
        bytes
    };
    let complete = data.len() < 1 << 16;
    (data.into_iter().take(1 << 16).collect(), complete)
}

/// The probe is sure of every perf input and of nothing else in the corpus.
#[test]
fn probe_claims_perf_script_and_nothing_else() {
    let Some(corpus) = common::corpus("perf probe suite") else {
        return;
    };
    let perf_root = corpus.join("perf-script");
    let mut wrong = Vec::new();
    for input in inputs(&perf_root) {
        let (head, complete) = head_of(&input);
        if !head.iter().all(u8::is_ascii_whitespace) && perf::probe(&head, complete) != Some(true) {
            wrong.push(format!("{}: not claimed", input.display()));
        }
    }
    let mut others = 0;
    let mut todo = vec![corpus.clone()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = e.expect("directory entry").path();
            if path.is_dir() {
                if path != perf_root {
                    todo.push(path);
                }
                continue;
            }
            others += 1;
            let (head, complete) = head_of(&path);
            // `context/perf-*.script-*.txt.gz` are perf script too (see its README).
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let is_perf = name.starts_with("perf-") && name.contains(".script");
            let verdict = std::panic::catch_unwind(|| perf::probe(&head, complete));
            match verdict {
                Ok(Some(true)) if is_perf => {}
                Ok(_) if is_perf => wrong.push(format!("{}: not claimed", path.display())),
                Ok(Some(true)) => wrong.push(format!("{}: claimed", path.display())),
                Ok(_) => {}
                Err(_) => wrong.push(format!("{}: probe panicked", path.display())),
            }
        }
    }
    say(&format!("perf probe: checked {others} other corpus files"));
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Samples per thread name.
fn samples_per_comm(p: &Profile) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for &t in p.samples.thread.as_deref().unwrap_or_default() {
        *out.entry(p.threads[t as usize].name.clone()).or_default() += 1;
    }
    out
}

/// The perf pairs of `context/` (see its README): `perf script` without dsos
/// (`-F comm,tid,cpu,time[,tod],period,event,ip,sym,symoff`, which inferno cannot
/// read) and the default format restricted to `--comms xz,fio,swapper`.
#[test]
fn context_perf_scripts_agree_with_each_other() {
    let Some(corpus) = common::corpus("perf context suite") else {
        return;
    };
    let dir = corpus.join("context");
    assert!(dir.is_dir(), "{} is missing", dir.display());
    let load = |name: &str| {
        let path = dir.join(name);
        let p = formats::load(
            &Source::Path(path.clone()),
            &LoadOptions::default(),
            &Progress::new(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.format, "perf (gzip)", "{name}");
        assert!(p.warnings.is_empty(), "{name}: {:?}", p.warnings.first);
        p
    };
    for (run, all_samples) in [("phased", 29_243), ("iowaitperf", 29_549)] {
        let nodso_name = if run == "phased" {
            format!("perf-{run}.script-nodso.txt.gz")
        } else {
            format!("perf-{run}.script-tod-nodso.txt.gz")
        };
        let nodso = load(&nodso_name);
        // Every event is a sample, those without a call chain too (under
        // `[no stack recorded]`, which the note counts), as perf report counts them.
        assert_eq!(nodso.samples.len(), all_samples, "{nodso_name}");
        let noted: usize = nodso
            .notes
            .iter()
            .find_map(|n| {
                n.strip_suffix(" events without a call chain: counted under [no stack recorded]")
            })
            .map_or(0, |n| n.parse().expect("a count"));
        let stackless = (0..nodso.samples.len())
            .filter(|&i| {
                nodso
                    .samples
                    .stack_of(i)
                    .is_some_and(|s| nodso.frames.raw(nodso.stacks.frame(s)) == NO_STACK.as_bytes())
            })
            .count();
        assert!(noted > 0, "{nodso_name}: the corpus has stackless events");
        assert_eq!(stackless, noted, "{nodso_name}");
        let some = load(&format!("perf-{run}.script-xz-fio-swapper.txt.gz"));
        let (all, part) = (samples_per_comm(&nodso), samples_per_comm(&some));
        assert!(!part.is_empty());
        for (comm, n) in &part {
            assert_eq!(all.get(comm), Some(n), "{run}: {comm}");
        }
        // Kernel frames are found by their dso in one and their address in the other.
        for p in [&nodso, &some] {
            let kernel = p
                .frame_meta
                .values()
                .filter(|m| m.kind == FrameKind::Kernel)
                .count();
            assert!(kernel > 100, "{run}: {kernel} kernel frames");
        }
        if run == "iowaitperf" {
            // README: epoch = t + 1796211646.927 s, from the `tod` column.
            let off = nodso.meta.time_to_unix_ns.expect("tod gives the offset");
            assert!(
                (off - 1_796_211_646_927_000_000).abs() < 2_000_000,
                "offset {off}"
            );
        }
    }
}

/// The repository's own raw `perf script` sample (see samples/README.md) against
/// the inferno library: needs no corpus, so it runs everywhere.
#[test]
fn repo_sample_matches_inferno() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join("perf-python-wordindex-small.perf.gz");
    let text = read_text(&path);
    let p = formats::load(
        &Source::Path(path.clone()),
        &LoadOptions::default(),
        &Progress::new(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.format, "perf (gzip)");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings.first);
    assert_eq!(p.samples.len(), 1828);
    let (_, period) = first_event_columns(&p);
    let ours = ember_folded_as_peers(&p, period, Opt::Default, false, &mut false);
    let theirs = inferno_collapse(&text);
    assert!(theirs.len() > 100);
    let problems = diff("inferno library", &theirs, &ours);
    assert!(problems.is_empty(), "{problems:#?}");
    // The README's facts: one thread, CPU 1 throughout, a 4.466 s span, inline frames.
    assert_eq!(p.threads.len(), 1);
    assert!(
        p.samples
            .cpu
            .as_deref()
            .unwrap_or_default()
            .iter()
            .all(|&c| c == 1)
    );
    let span = p.meta.duration_ns.expect("timestamps");
    assert!((4_465_000_000..4_467_000_000).contains(&span), "{span}");
    assert!(
        p.frame_meta.values().any(|m| m.kind == FrameKind::Inlined)
            && p.frame_meta.values().any(|m| m.kind == FrameKind::Kernel)
    );
}
