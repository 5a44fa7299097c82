//! `ember list`: the routines a pattern names, each line of their source with
//! its flat and cum beside it, laid out as `go tool pprof -list` lays it out,
//! or as JSON. Finding the source: the path the profile records, then under
//! each `--source-path` directory every shorter suffix of that path (less any
//! `--trim-path` prefix), as pprof looks, then the installed toolchains'
//! sources (Rust's rust-src, Go's GOROOT and module cache). A file found under
//! a directory must stay inside it once symlinks are resolved; nothing else is
//! read.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::amount;
use crate::host::sanitize::sanitize;
use crate::model::listing::Routine;
use crate::model::{Unit, ValueType};

/// Lines shown around the first and last line with weight (pprof's margin).
const MARGIN: u32 = 5;

/// Where to look for source files.
#[derive(Clone, Debug, Default)]
pub struct SourceOptions {
    pub source_paths: Vec<PathBuf>,
    pub trim_paths: Vec<String>,
}

/// A routine's source: the file's lines, or every place that was tried.
pub struct Source {
    pub path: Option<PathBuf>,
    pub lines: Vec<String>,
    pub looked: Vec<String>,
}

/// Finds and reads `recorded` as `opts` allow.
pub fn find_source(recorded: &str, opts: &SourceOptions) -> Source {
    let mut looked = Vec::new();
    let mut read = |p: &Path, inside: Option<&Path>| -> Option<Vec<String>> {
        looked.push(p.display().to_string());
        let real = p.canonicalize().ok()?;
        if let Some(dir) = inside {
            let dir = dir.canonicalize().ok()?;
            if !real.starts_with(&dir) {
                return None;
            }
        }
        let bytes = std::fs::read(&real).ok()?;
        let text = String::from_utf8_lossy(&bytes);
        Some(
            text.split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
                .collect(),
        )
    };
    // V8 and browsers record `file:///path`.
    let recorded = recorded.strip_prefix("file://").unwrap_or(recorded);
    let recorded_path = Path::new(recorded);
    // The recorded path as it is, unless it climbs (`..`): then only under
    // the directories given.
    let climbs = recorded_path
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir));
    if !climbs && let Some(lines) = read(recorded_path, None) {
        return Source {
            path: Some(recorded_path.to_path_buf()),
            lines,
            looked,
        };
    }
    let mut trimmed = recorded;
    for prefix in &opts.trim_paths {
        if let Some(rest) = recorded.strip_prefix(prefix.as_str()) {
            trimmed = rest;
            break;
        }
    }
    let parts: Vec<&str> = trimmed
        .split('/')
        .filter(|p| !p.is_empty() && *p != "..")
        .collect();
    for dir in &opts.source_paths {
        for start in 0..parts.len() {
            let candidate = dir.join(parts[start..].join("/"));
            if let Some(lines) = read(&candidate, Some(dir)) {
                return Source {
                    path: Some(candidate),
                    lines,
                    looked,
                };
            }
        }
    }
    for (root, rest) in toolchain_roots(recorded) {
        let candidate = root.join(&rest);
        if let Some(lines) = read(&candidate, Some(&root)) {
            return Source {
                path: Some(candidate),
                lines,
                looked,
            };
        }
    }
    Source {
        path: None,
        lines: Vec::new(),
        looked,
    }
}

/// The installed toolchains' sources a recorded path may be from, as (root,
/// path under it): Rust's `/rustc/<commit>/library/...` under the sysroot's
/// `rust-src` (`EMBER_RUST_SYSROOT`, else `rustc --print sysroot`); Go's
/// standard library (`.../src/<pkg>/<file>.go` under `GOROOT`, else `go env
/// GOROOT`) and module cache (`.../pkg/mod/...` under `GOMODCACHE`, else `go
/// env GOMODCACHE`). Asked only for a path that looks like one of these.
fn toolchain_roots(recorded: &str) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let clean = |rest: &str| -> Option<String> {
        let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
        (!parts.is_empty() && !parts.contains(&"..")).then(|| parts.join("/"))
    };
    // Each root is asked once per run: a listing of many routines would
    // otherwise start `go env` for each.
    static ROOTS: std::sync::Mutex<Vec<(&'static str, Option<PathBuf>)>> =
        std::sync::Mutex::new(Vec::new());
    let asked = |var: &'static str, cmd: &[&str]| -> Option<PathBuf> {
        let mut known = ROOTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, root)) = known.iter().find(|(v, _)| *v == var) {
            return root.clone();
        }
        let root = match std::env::var_os(var).filter(|v| !v.is_empty()) {
            Some(v) => Some(PathBuf::from(v)),
            None => std::process::Command::new(cmd[0])
                .args(&cmd[1..])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .filter(|t| !t.is_empty())
                .map(PathBuf::from),
        };
        known.push((var, root.clone()));
        root
    };
    if let Some(after) = recorded.strip_prefix("/rustc/")
        && let Some((_, rest)) = after.split_once("/library/")
        && let Some(rest) = clean(rest)
        && let Some(sysroot) = asked("EMBER_RUST_SYSROOT", &["rustc", "--print", "sysroot"])
    {
        out.push((sysroot.join("lib/rustlib/src/rust/library"), rest));
    }
    if recorded.ends_with(".go") {
        if let Some((_, rest)) = recorded.split_once("/pkg/mod/")
            && let Some(rest) = clean(rest)
            && let Some(cache) = asked("GOMODCACHE", &["go", "env", "GOMODCACHE"])
        {
            out.push((cache, rest));
        } else if let Some((_, rest)) = recorded.split_once("/src/")
            && let Some(rest) = clean(rest)
            && let Some(root) = asked("GOROOT", &["go", "env", "GOROOT"])
        {
            out.push((root.join("src"), rest));
        }
    }
    out
}

/// A value as pprof's list prints it: `.` for zero.
fn cell(v: i64, vt: &ValueType) -> String {
    if v == 0 {
        return ".".into();
    }
    amount(v, vt)
}

/// Tabs to the next multiple of 4, then what a terminal may be shown.
pub fn display_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\t' {
            let pad = 4 - out.chars().count() % 4;
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            out.push(c);
        }
    }
    sanitize(&out).into_owned()
}

/// The lines to show of a routine: `MARGIN` either side of its weighted
/// lines, within the file when it was found.
fn window(r: &Routine, file_lines: Option<usize>) -> Option<(u32, u32)> {
    let weighted: Vec<u32> = r
        .lines
        .iter()
        .filter(|l| l.line > 0 && (l.flat != 0 || l.cum != 0))
        .map(|l| l.line)
        .collect();
    let lo = weighted.iter().min()?.saturating_sub(MARGIN).max(1);
    let mut hi = weighted.iter().max()? + MARGIN;
    if let Some(n) = file_lines {
        hi = hi.min(u32::try_from(n).unwrap_or(u32::MAX));
    }
    Some((lo, hi))
}

/// The text listing, pprof's layout.
pub fn text(
    out: &mut dyn Write,
    routines: &[(Routine, Source)],
    total: i64,
    vt: &ValueType,
) -> io::Result<()> {
    writeln!(out, "Total: {}", amount(total, vt))?;
    for (r, src) in routines {
        let file = r.file.as_deref().unwrap_or("?");
        writeln!(
            out,
            "ROUTINE ======================== {} in {}",
            sanitize(&r.function),
            sanitize(file)
        )?;
        let head = |v: i64| {
            if v == 0 {
                "0".to_string()
            } else {
                amount(v, vt)
            }
        };
        writeln!(
            out,
            "{:>10} {:>10} (flat, cum) {:.2}% of Total",
            head(r.flat),
            head(r.cum),
            super::percent(r.cum, total)
        )?;
        let found = src.path.is_some();
        // A file ends with a newline: its last "line" is empty, not a line.
        let n = src
            .lines
            .len()
            .saturating_sub(usize::from(src.lines.last().is_some_and(String::is_empty)));
        let cost = |line: u32| r.lines.iter().find(|l| l.line == line);
        if found && let Some((lo, hi)) = window(r, Some(n)) {
            for line in lo..=hi {
                let (flat, cum) = cost(line).map_or((0, 0), |c| (c.flat, c.cum));
                let text = src.lines.get(line as usize - 1).map_or("", String::as_str);
                writeln!(
                    out,
                    "{:>10} {:>10} {line:>7}:{}",
                    cell(flat, vt),
                    cell(cum, vt),
                    display_line(text)
                )?;
            }
        }
        let past: Vec<u32> = r
            .lines
            .iter()
            .filter(|l| found && l.line as usize > n)
            .map(|l| l.line)
            .collect();
        if !found {
            for l in r.lines.iter().filter(|l| l.line > 0) {
                writeln!(
                    out,
                    "{:>10} {:>10} {:>7}:",
                    cell(l.flat, vt),
                    cell(l.cum, vt),
                    l.line
                )?;
            }
            let looked: Vec<String> = src
                .looked
                .iter()
                .map(|l| sanitize(l).into_owned())
                .collect();
            writeln!(
                out,
                "  source not found: looked at {} (--source-path DIR, --trim-path PREFIX)",
                if looked.is_empty() {
                    "nothing".to_string()
                } else {
                    looked.join(", ")
                }
            )?;
        } else if !past.is_empty() {
            writeln!(
                out,
                "  line {} past the end of {} ({n} lines): the file changed since the profile was taken",
                past.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                src.path
                    .as_deref()
                    .map_or_else(String::new, |p| sanitize(&p.display().to_string())
                        .into_owned())
            )?;
        }
    }
    Ok(())
}

/// `{"total", "unit", "routines": [{"function", "file", "source", "looked",
/// "flat", "cum", "lines": [{"line", "flat", "cum", "text"}]}]}`; a line's
/// text is `null` where the source was not found.
pub fn json(
    out: &mut dyn Write,
    routines: &[(Routine, Source)],
    total: i64,
    vt: &ValueType,
) -> io::Result<()> {
    #[derive(Serialize)]
    struct Doc<'a> {
        total: i64,
        unit: &'a str,
        routines: Vec<R<'a>>,
    }
    #[derive(Serialize)]
    struct R<'a> {
        function: &'a str,
        file: Option<&'a str>,
        source: Option<String>,
        looked: &'a [String],
        flat: i64,
        cum: i64,
        lines: Vec<L<'a>>,
    }
    #[derive(Serialize)]
    struct L<'a> {
        line: u32,
        flat: i64,
        cum: i64,
        text: Option<&'a str>,
    }
    let doc = Doc {
        total,
        unit: vt.unit.name(),
        routines: routines
            .iter()
            .map(|(r, src)| {
                let found = src.path.is_some();
                let range = window(r, found.then_some(src.lines.len()));
                let mut lines: Vec<L> = Vec::new();
                if let (true, Some((lo, hi))) = (found, range) {
                    for line in lo..=hi {
                        let (flat, cum) = r
                            .lines
                            .iter()
                            .find(|l| l.line == line)
                            .map_or((0, 0), |c| (c.flat, c.cum));
                        let text = src.lines.get(line as usize - 1).map(String::as_str);
                        lines.push(L {
                            line,
                            flat,
                            cum,
                            text,
                        });
                    }
                }
                for l in &r.lines {
                    if !lines.iter().any(|x| x.line == l.line) {
                        lines.push(L {
                            line: l.line,
                            flat: l.flat,
                            cum: l.cum,
                            text: None,
                        });
                    }
                }
                lines.sort_by_key(|l| l.line);
                R {
                    function: &r.function,
                    file: r.file.as_deref(),
                    source: src.path.as_ref().map(|p| p.display().to_string()),
                    looked: &src.looked,
                    flat: r.flat,
                    cum: r.cum,
                    lines,
                }
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// The lines to show of weighted lines `weighted`: `MARGIN` around them in a
/// found source (to its end, or to the last weighted line past it), else just
/// them. Empty when none carries weight.
pub fn shown_lines(weighted: &[u32], src: &Source) -> Vec<u32> {
    let (Some(&lo), Some(&hi)) = (weighted.iter().min(), weighted.iter().max()) else {
        return Vec::new();
    };
    if src.path.is_none() {
        return weighted.to_vec();
    }
    let n = src
        .lines
        .len()
        .saturating_sub(usize::from(src.lines.last().is_some_and(String::is_empty)));
    let end = u32::try_from(n).unwrap_or(u32::MAX).max(hi);
    (lo.saturating_sub(MARGIN).max(1)..=(hi + MARGIN).min(end)).collect()
}

/// `ember diff --list`: per routine, each line's cum before and after under
/// `cmp`'s normalisation, the change and its verdict, beside the source;
/// flat is in the JSON. Text or (`json`) JSON.
pub fn diff(
    out: &mut dyn Write,
    routines: &[(crate::model::listing::PairedRoutine, Source)],
    cmp: &crate::model::diff::Compare,
    unit: &Unit,
    json: bool,
) -> io::Result<()> {
    use super::diff::{change_cells, relative_text, verdict_text};
    #[derive(Serialize)]
    struct L<'a> {
        line: u32,
        flat: [i64; 2],
        cum: [i64; 2],
        samples: [i64; 2],
        /// cum under the normalisation, before and after.
        normalised: [f64; 2],
        relative: Option<f64>,
        verdict: &'a str,
        z: Option<f64>,
        text: Option<&'a str>,
    }
    #[derive(Serialize)]
    struct R<'a> {
        function: &'a str,
        file: Option<&'a str>,
        source: Option<String>,
        lines: Vec<L<'a>>,
    }
    let mut doc: Vec<R> = Vec::new();
    if !json {
        writeln!(out, "Normalisation: {}", cmp.norm.label())?;
    }
    for (r, src) in routines {
        let shown = shown_lines(&r.weighted(), src);
        if shown.is_empty() {
            continue;
        }
        if !json {
            writeln!(
                out,
                "ROUTINE ======================== {} in {}",
                sanitize(&r.function),
                sanitize(r.file.as_deref().unwrap_or("?"))
            )?;
            writeln!(
                out,
                "{:>10} {:>10} {:>11} {:>8}  {:<26} line",
                "before", "after", "delta", "rel", "verdict"
            )?;
        }
        let mut lines = Vec::new();
        for line in shown {
            let p = r
                .lines
                .iter()
                .find(|l| l.line == line)
                .copied()
                .unwrap_or_default();
            let c = cmp.change(p.cum, [p.samples[0] as f64, p.samples[1] as f64]);
            let text = src.lines.get(line as usize - 1).map(String::as_str);
            if json {
                lines.push(L {
                    line,
                    flat: p.flat,
                    cum: p.cum,
                    samples: p.samples,
                    normalised: c.value,
                    relative: c.relative(),
                    verdict: if p.cum == [0, 0] {
                        "-"
                    } else {
                        c.verdict.name()
                    },
                    z: c.z,
                    text,
                });
                continue;
            }
            let (b, a, d, rel, verdict) = if p.cum == [0, 0] {
                (
                    ".".into(),
                    ".".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                )
            } else {
                let [b, a, d] = change_cells(&c, cmp.norm, unit);
                (b, a, d, relative_text(&c), verdict_text(&c))
            };
            writeln!(
                out,
                "{b:>10} {a:>10} {d:>11} {rel:>8}  {verdict:<26} {line:>5}:{}",
                display_line(text.unwrap_or(""))
            )?;
        }
        if !json && src.path.is_none() {
            writeln!(
                out,
                "  source not found: looked at {} (--source-path DIR, --trim-path PREFIX)",
                sanitize(&src.looked.join(", "))
            )?;
        }
        if json {
            doc.push(R {
                function: &r.function,
                file: r.file.as_deref(),
                source: src.path.as_ref().map(|p| p.display().to_string()),
                lines,
            });
        }
    }
    if json {
        #[derive(Serialize)]
        struct Doc<'a> {
            normalisation: &'a str,
            routines: Vec<R<'a>>,
        }
        serde_json::to_writer_pretty(
            &mut *out,
            &Doc {
                normalisation: cmp.norm.name(),
                routines: doc,
            },
        )?;
        writeln!(out)?;
    }
    Ok(())
}
