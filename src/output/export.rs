//! Exports of what is on screen: the profile after its transforms and time range,
//! below the frame the view is zoomed to, written as folded stacks, an SVG flame
//! graph (inferno's writer), speedscope JSON or gzipped pprof protobuf.
//!
//! A zoomed export keeps the zoomed frame's ancestors in every stack, so the
//! paths stay what they were and a reader sees where the part sits. Folded and
//! SVG carry the shown value (both sides of a diff); speedscope and pprof carry
//! every value type, summed per stack from the samples in the tree's range.

use std::io::{self, Write};
use std::path::Path;

use anyhow::{Result, bail};

use crate::host::sanitize::sanitize;
use crate::model::{CallTree, FrameId, NodeId, Profile, StackId, Unit, ValueType};

mod pprof;
use pprof::pprof;

/// A file format ember writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Folded,
    Svg,
    Speedscope,
    Pprof,
}

impl ExportFormat {
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Folded => "folded",
            ExportFormat::Svg => "svg",
            ExportFormat::Speedscope => "speedscope",
            ExportFormat::Pprof => "pprof",
        }
    }

    /// The file name ending a file of this format gets.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Folded => "folded",
            ExportFormat::Svg => "svg",
            ExportFormat::Speedscope => "speedscope.json",
            ExportFormat::Pprof => "pb.gz",
        }
    }

    /// The format a file name asks for: `.svg`, `.json` (speedscope), `.pb`,
    /// `.pb.gz`, `.pprof`, `.folded`, `.collapsed`, `.txt`; `None` otherwise.
    pub fn from_path(path: &Path) -> Option<ExportFormat> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        let ext = name.rsplit_once('.')?.1;
        Some(match ext {
            "svg" => ExportFormat::Svg,
            "json" => ExportFormat::Speedscope,
            "pb" | "pprof" | "prof" => ExportFormat::Pprof,
            "folded" | "collapsed" | "txt" | "stacks" => ExportFormat::Folded,
            _ => return None,
        })
    }

    /// Whether the output is binary (never written to a terminal).
    pub fn is_binary(self) -> bool {
        self == ExportFormat::Pprof
    }
}

/// What to export.
pub struct Scope<'a> {
    pub profile: &'a Profile,
    /// The tree on screen: its value, its sample range, its sides.
    pub tree: &'a CallTree,
    /// The node the view is zoomed to ([`NodeId::ROOT`] for all of it).
    pub root: NodeId,
    /// The SVG's title and the speedscope profile's name: usually the file's.
    pub title: String,
    /// What the view shows beyond the file (transforms, range, zoom): the SVG's
    /// subtitle, pprof comments.
    pub notes: Vec<String>,
    /// Draw the SVG top-down (icicle) rather than as a flame.
    pub icicle: bool,
}

impl Scope<'_> {
    /// The samples in the view (its range, or all), and which stacks lie
    /// under its root (`None`: every stack, and samples without one count).
    fn samples(&self) -> (std::ops::Range<usize>, Option<Vec<bool>>) {
        let p = self.profile;
        let range = self
            .tree
            .options
            .samples
            .clone()
            .unwrap_or(0..p.samples.len());
        (range, inside(p, self.root))
    }
}

/// Writes `scope` as `format`. Returns caveats worth telling the user (values
/// rounded, parts left out); an error when there is nothing to write.
pub fn write(out: &mut dyn Write, format: ExportFormat, scope: &Scope) -> Result<Vec<String>> {
    if scope.tree.total(scope.root) == 0 && scope.tree.pair(scope.root).is_none() {
        bail!("nothing to export: the view holds no samples");
    }
    let mut caveats = Vec::new();
    match format {
        ExportFormat::Folded => {
            for line in folded_lines(scope, false) {
                out.write_all(&line)?;
                out.write_all(b"\n")?;
            }
        }
        ExportFormat::Svg => svg(out, scope)?,
        ExportFormat::Speedscope => speedscope(out, scope)?,
        ExportFormat::Pprof => pprof(out, scope, &mut caveats)?,
    }
    out.flush()?;
    Ok(caveats)
}

/// Writes `scope` into a sibling temporary file renamed over `path` when
/// complete, so a failure never leaves half a file under the name. Returns the
/// size written and the caveats; errors name the path.
pub fn write_file(path: &Path, format: ExportFormat, scope: &Scope) -> Result<(u64, Vec<String>)> {
    use anyhow::Context;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".ember-{}.tmp", std::process::id()));
    let tmp = path.with_file_name(name);
    let written = (|| -> Result<Vec<String>> {
        let file = std::fs::File::create(&tmp).context("cannot create")?;
        let mut out = io::BufWriter::new(file);
        let caveats = write(&mut out, format, scope)?;
        out.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .context("cannot write")?;
        std::fs::rename(&tmp, path).context("cannot write")?;
        Ok(caveats)
    })();
    match written {
        Ok(caveats) => Ok((std::fs::metadata(path).map_or(0, |m| m.len()), caveats)),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e.context(format!("{}: {} export", path.display(), format.name())))
        }
    }
}

/// A frame's name as export text: the raw bytes unless they hold control
/// characters or invalid UTF-8, which become visible escapes (a newline or
/// ESC in a name would break a line format or reach a terminal).
fn name_bytes(profile: &Profile, f: FrameId) -> std::borrow::Cow<'_, [u8]> {
    let raw = profile.frames.raw(f);
    match std::str::from_utf8(raw) {
        Ok(s) if !s.chars().any(char::is_control) => raw.into(),
        _ => sanitize(&profile.frames.name(f))
            .into_owned()
            .into_bytes()
            .into(),
    }
}

/// Which stacks lie under `root` (itself included); `None` when root is the
/// whole tree. One pass: a prefix's id is smaller than its stack's.
fn inside(profile: &Profile, root: NodeId) -> Option<Vec<bool>> {
    if root == NodeId::ROOT {
        return None;
    }
    let prefixes = profile.stacks.prefixes();
    let top = root.0 as usize - 1;
    let mut mask = vec![false; prefixes.len()];
    for s in top..prefixes.len() {
        let p = prefixes[s] as usize;
        mask[s] = s == top || (p < s && p >= top && mask[p]);
    }
    Some(mask)
}

/// `a;b;c VALUE` per stack with non-zero self weight under the scope's root,
/// sorted; a diff tree writes `a;b;c BEFORE AFTER` (a stack on one side only
/// included). `integers`: the stored integers (the SVG scales them) rather than
/// the value's text.
fn folded_lines(scope: &Scope, integers: bool) -> Vec<Vec<u8>> {
    let (profile, tree) = (scope.profile, scope.tree);
    let vt = &profile.value_types[tree.options.value];
    let paired = tree.pair(NodeId::ROOT).is_some();
    let text = |v: i64| {
        if integers {
            v.to_string()
        } else {
            super::value_text(v, vt)
        }
    };
    let mask = inside(profile, scope.root);
    let first = mask.as_ref().map_or(0, |_| scope.root.0 as usize - 1);
    let mut lines = Vec::new();
    for s in first..profile.stacks.len() {
        if mask.as_ref().is_some_and(|m| !m[s]) {
            continue;
        }
        let node = NodeId(s as u32 + 1);
        let values = match tree.pair_self(node) {
            Some(p) if paired => {
                (p.total != [0, 0]).then(|| format!("{} {}", text(p.total[0]), text(p.total[1])))
            }
            _ => {
                let w = tree.self_weight(node);
                (w != 0).then(|| text(w))
            }
        };
        let Some(values) = values else { continue };
        let mut line = Vec::new();
        for f in profile.stacks.path(StackId(s as u32)) {
            if !line.is_empty() {
                line.push(b';');
            }
            line.extend_from_slice(&name_bytes(profile, f));
        }
        line.push(b' ');
        line.extend_from_slice(values.as_bytes());
        lines.push(line);
    }
    lines.sort_unstable();
    lines
}

/// The tree as normalised folded stacks of the shown value: what
/// `ember convert --to folded` writes and the conformance suites compare.
pub fn folded(out: &mut dyn Write, profile: &Profile, tree: &CallTree) -> io::Result<()> {
    let scope = Scope {
        profile,
        tree,
        root: NodeId::ROOT,
        title: String::new(),
        notes: Vec::new(),
        icicle: false,
    };
    for line in folded_lines(&scope, false) {
        out.write_all(&line)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The unit an SVG's counts are shown in, and the factor from stored integers
/// to it: times in the largest unit that still gives 1,000 steps over the
/// total (inferno shows whole numbers), bytes likewise in binary units.
fn svg_units(vt: &ValueType, total: i64) -> (String, f64) {
    let stored = 1.0 / vt.scale();
    let total = total.unsigned_abs() as f64 * stored;
    let pick = |steps: &[(&str, f64)], per: f64| {
        steps
            .iter()
            .find(|(_, size)| total * per / size >= 1e3)
            .or(steps.last())
            .map(|&(name, size)| (name.to_string(), stored * per / size))
            .unwrap_or_default()
    };
    match &vt.unit {
        Unit::Bytes => pick(
            &[
                ("GiB", 1_073_741_824.0),
                ("MiB", 1_048_576.0),
                ("KiB", 1024.0),
                ("bytes", 1.0),
            ],
            1.0,
        ),
        u => match u.nanos() {
            Some(ns) => pick(&[("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0)], ns),
            None if vt.counts_samples() => ("samples".into(), stored),
            None => (sanitize(&vt.kind).into_owned(), stored),
        },
    }
}

fn svg(out: &mut dyn Write, scope: &Scope) -> Result<()> {
    use inferno::flamegraph::{self, Direction, Options};
    let lines = folded_lines(scope, true);
    let text: Vec<&str> = lines
        .iter()
        .map(|l| std::str::from_utf8(l).unwrap_or(""))
        .collect();
    let vt = &scope.profile.value_types[scope.tree.options.value];
    let (count_name, factor) = svg_units(vt, scope.tree.total(scope.root));
    let mut opts = Options::default();
    opts.title = if scope.title.is_empty() {
        "Flame Graph".into()
    } else {
        sanitize(&scope.title).into_owned()
    };
    if !scope.notes.is_empty() {
        opts.subtitle = Some(sanitize(&scope.notes.join(" · ")).into_owned());
    }
    opts.count_name = count_name;
    opts.factor = factor;
    opts.hash = true;
    opts.deterministic = true;
    if scope.icicle {
        opts.direction = Direction::Inverted;
    }
    flamegraph::from_lines(&mut opts, text, io::BufWriter::new(out))?;
    Ok(())
}

/// Stacks under the scope's root with their values in every value type, summed
/// from the samples in the tree's range; and the values of samples without a
/// stack (counted when the whole profile is exported).
struct StackValues {
    stride: usize,
    /// `values[s * stride + v]`.
    values: Vec<i64>,
    no_stack: Vec<i64>,
}

fn stack_values(scope: &Scope) -> StackValues {
    let p = scope.profile;
    let stride = p.value_types.len().max(1);
    let (range, mask) = scope.samples();
    let mut values = vec![0i64; p.stacks.len() * stride];
    let mut no_stack = vec![0i64; stride];
    for i in range {
        let vals = &p.samples.values[i * stride..(i + 1) * stride];
        let dst = match p.samples.stack_of(i) {
            Some(s) if mask.as_ref().is_none_or(|m| m[s.0 as usize]) => {
                let at = s.0 as usize * stride;
                &mut values[at..at + stride]
            }
            None if mask.is_none() => &mut no_stack[..],
            _ => continue,
        };
        for (d, v) in dst.iter_mut().zip(vals) {
            *d += v;
        }
    }
    StackValues {
        stride,
        values,
        no_stack,
    }
}

/// Frames in the order first used by the stacks in `sv`, as (frame, index) maps.
fn used_frames(p: &Profile, sv: &StackValues) -> (Vec<FrameId>, Vec<u32>) {
    let mut index = vec![u32::MAX; p.frames.len()];
    let mut order = Vec::new();
    for s in 0..p.stacks.len() {
        if sv.values[s * sv.stride..(s + 1) * sv.stride]
            .iter()
            .all(|&v| v == 0)
        {
            continue;
        }
        for f in p.stacks.path(StackId(s as u32)) {
            if index[f.0 as usize] == u32::MAX {
                index[f.0 as usize] = order.len() as u32;
                order.push(f);
            }
        }
    }
    (order, index)
}

fn speedscope_unit(unit: &Unit) -> &'static str {
    match unit {
        Unit::Nanoseconds => "nanoseconds",
        Unit::Microseconds => "microseconds",
        Unit::Milliseconds => "milliseconds",
        Unit::Seconds => "seconds",
        Unit::Bytes => "bytes",
        _ => "none",
    }
}

fn speedscope(out: &mut dyn Write, scope: &Scope) -> Result<()> {
    use serde_json::{Number, Value, json};
    let p = scope.profile;
    let sv = stack_values(scope);
    let (order, index) = used_frames(p, &sv);
    let frames: Vec<Value> = order
        .iter()
        .map(|&f| {
            let mut o = serde_json::Map::new();
            o.insert("name".into(), Value::String(p.frames.name(f).into_owned()));
            if let Some(m) = p.frame_meta.get(&f) {
                if let Some(file) = &m.file {
                    o.insert("file".into(), Value::String(file.clone()));
                }
                if let Some(line) = m.line {
                    o.insert("line".into(), Value::from(line));
                }
            }
            Value::Object(o)
        })
        .collect();
    let stacks: Vec<usize> = (0..p.stacks.len())
        .filter(|&s| {
            sv.values[s * sv.stride..(s + 1) * sv.stride]
                .iter()
                .any(|&v| v != 0)
        })
        .collect();
    let name = if scope.title.is_empty() {
        "profile".to_string()
    } else {
        scope.title.clone()
    };
    let mut profiles = Vec::new();
    for (v, vt) in p.value_types.iter().enumerate() {
        let weight = |x: i64| -> Value {
            if vt.decimals == 0 {
                Value::from(x)
            } else {
                Number::from_f64(x as f64 / vt.scale()).map_or(Value::Null, Value::Number)
            }
        };
        let mut samples = Vec::new();
        let mut weights = Vec::new();
        let mut total = 0i64;
        for &s in &stacks {
            let x = sv.values[s * sv.stride + v];
            if x == 0 {
                continue;
            }
            let path: Vec<u32> = p
                .stacks
                .path(StackId(s as u32))
                .iter()
                .map(|f| index[f.0 as usize])
                .collect();
            samples.push(Value::from(path));
            weights.push(weight(x));
            total += x;
        }
        if sv.no_stack[v] != 0 {
            samples.push(Value::Array(Vec::new()));
            weights.push(weight(sv.no_stack[v]));
            total += sv.no_stack[v];
        }
        let label = if p.value_types.len() > 1 {
            format!("{name} ({})", vt.kind)
        } else {
            name.clone()
        };
        profiles.push(json!({
            "type": "sampled",
            "name": label,
            "unit": speedscope_unit(&vt.unit),
            "startValue": 0,
            "endValue": weight(total),
            "samples": samples,
            "weights": weights,
        }));
    }
    let doc = json!({
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "exporter": format!("ember {}", env!("CARGO_PKG_VERSION")),
        "name": name,
        "activeProfileIndex": scope.tree.options.value,
        "shared": { "frames": frames },
        "profiles": profiles,
    });
    let mut w = io::BufWriter::new(out);
    serde_json::to_writer(&mut w, &doc)?;
    w.write_all(b"\n")?;
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_come_from_file_names() {
        let f = |s: &str| ExportFormat::from_path(Path::new(s));
        assert_eq!(f("out.svg"), Some(ExportFormat::Svg));
        assert_eq!(f("a/b.speedscope.json"), Some(ExportFormat::Speedscope));
        assert_eq!(f("cpu.pb.gz"), Some(ExportFormat::Pprof));
        assert_eq!(f("cpu.pprof"), Some(ExportFormat::Pprof));
        assert_eq!(f("x.folded.gz"), Some(ExportFormat::Folded));
        assert_eq!(f("x.collapsed"), Some(ExportFormat::Folded));
        assert_eq!(f("README"), None);
        assert_eq!(f("x.png"), None);
    }

    #[test]
    fn svg_units_keep_a_thousand_steps() {
        let ns = ValueType::new("cpu", Unit::Nanoseconds);
        assert_eq!(svg_units(&ns, 30_000_000_000), ("ms".to_string(), 1e-6));
        assert_eq!(svg_units(&ns, 5_000_000).0, "µs");
        assert_eq!(svg_units(&ns, 50).0, "ns");
        let b = ValueType::new("alloc_space", Unit::Bytes);
        assert_eq!(svg_units(&b, 8 << 30).0, "MiB");
        let mut frac = ValueType::samples();
        frac.decimals = 2;
        assert_eq!(svg_units(&frac, 12_345), ("samples".to_string(), 0.01));
    }
}
