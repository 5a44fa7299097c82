//! Two profiles as one: the union of their stacks, with a value column per side.
//!
//! A diff is an ordinary [`Profile`] whose [`ProfileMeta::diff`](super::ProfileMeta)
//! says which value column is "before" and which "after" (and which columns count
//! their samples). Trees, transforms, search and the flame widget work on it
//! unchanged; node `n` of a tree is the same stack on both sides, so the two sides
//! are always matched by frame path. What is diff-only lives here: merging,
//! normalisation, the significance test and the delta table.

use thiserror::Error;

use super::frames::FrameId;
// What a profile and a tree know of a comparison's two sides is defined with
// them, so that imports point one way (diff -> profile, tree).
pub use super::profile::{DiffMeta, SideInfo};
use super::profile::{Profile, Samples, Unit, ValueType};
use super::stacks::StackId;
pub use super::tree::NodePair;
use super::tree::{CallTree, NodeId};

#[derive(Debug, Error)]
pub enum DiffError {
    #[error("{name}: no samples: nothing to compare")]
    Empty { name: String },
    #[error(
        "{before} and {after} have no value type in common ({before}: {before_types}; {after}: {after_types}); pick one with --sample-type"
    )]
    NoCommonValue {
        before: String,
        after: String,
        before_types: String,
        after_types: String,
    },
    #[error("values too large to compare after rescaling units")]
    Overflow,
}

/// How to merge two profiles.
#[derive(Clone, Debug, Default)]
pub struct MergeOptions {
    /// Short names of the inputs, `[before, after]`.
    pub names: [String; 2],
    /// Replace hex numbers in names (`0x45ef2173`) with `0x...`, as
    /// `inferno-diff-folded --strip-hex` does, so addresses that moved between
    /// builds match.
    pub strip_hex: bool,
}

/// The value columns to compare: one of each side, paired by name and unit.
struct Pairing {
    columns: [usize; 2],
    unit: Unit,
    /// Multiply each side's stored values by this (unit and decimals rescaling).
    factors: [i64; 2],
    decimals: u8,
    caution: Option<String>,
}

fn compatible(a: &ValueType, b: &ValueType) -> bool {
    a.unit == b.unit
        || (a.unit.nanos().is_some() && b.unit.nanos().is_some())
        || (a.counts_samples() && b.counts_samples())
}

fn describe_types(p: &Profile) -> String {
    p.value_types
        .iter()
        .map(|v| format!("{}/{}", v.kind, v.unit.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn pair(before: &Profile, after: &Profile, names: &[String; 2]) -> Result<Pairing, DiffError> {
    let by_name = |from: &Profile, col: usize, other: &Profile| {
        let vt = &from.value_types[col];
        other
            .value_types
            .iter()
            .position(|o| o.kind == vt.kind && compatible(o, vt))
    };
    let (db, da) = (before.default_value, after.default_value);
    let (columns, caution) = if let Some(a) = by_name(before, db, after) {
        ([db, a], None)
    } else if let Some(b) = by_name(after, da, before) {
        ([b, da], None)
    } else if let (Some(vb), Some(va)) = (before.value_types.get(db), after.value_types.get(da))
        && compatible(vb, va)
    {
        (
            [db, da],
            Some(format!(
                "comparing {}'s {} with {}'s {} (no value type of the same name)",
                names[0], vb.kind, names[1], va.kind
            )),
        )
    } else if let (Some(b), Some(a)) = (
        before
            .value_types
            .iter()
            .position(ValueType::counts_samples),
        after.value_types.iter().position(ValueType::counts_samples),
    ) {
        (
            [b, a],
            Some("comparing sample counts: the default value types differ in unit".to_string()),
        )
    } else {
        return Err(DiffError::NoCommonValue {
            before: names[0].clone(),
            after: names[1].clone(),
            before_types: describe_types(before),
            after_types: describe_types(after),
        });
    };
    let (vb, va) = (
        &before.value_types[columns[0]],
        &after.value_types[columns[1]],
    );
    // Time in the finer of the two units; otherwise the unit both share.
    let (unit, unit_factors) = match (vb.unit.nanos(), va.unit.nanos()) {
        (Some(nb), Some(na)) if nb != na => {
            let (fine, unit) = if nb < na {
                (nb, vb.unit.clone())
            } else {
                (na, va.unit.clone())
            };
            (unit, [(nb / fine) as i64, (na / fine) as i64])
        }
        _ if vb.counts_samples() && va.counts_samples() => (Unit::Samples, [1, 1]),
        _ => (vb.unit.clone(), [1, 1]),
    };
    let decimals = vb.decimals.max(va.decimals);
    let pow = |d: u8| 10i64.checked_pow(u32::from(decimals - d));
    let factors = [
        pow(vb.decimals)
            .and_then(|p| p.checked_mul(unit_factors[0]))
            .ok_or(DiffError::Overflow)?,
        pow(va.decimals)
            .and_then(|p| p.checked_mul(unit_factors[1]))
            .ok_or(DiffError::Overflow)?,
    ];
    Ok(Pairing {
        columns,
        unit,
        factors,
        decimals,
        caution,
    })
}

/// `0x45ef2173` -> `0x...`, as inferno-diff-folded's `--strip-hex` does.
pub fn strip_hex(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len());
    let mut i = 0;
    while i < name.len() {
        if name[i..].starts_with(b"0x") {
            out.extend_from_slice(b"0x");
            i += 2;
            let digits = name[i..]
                .iter()
                .take_while(|b| b.is_ascii_hexdigit())
                .count();
            if digits > 0 {
                out.extend_from_slice(b"...");
            }
            i += digits;
        } else {
            out.push(name[i]);
            i += 1;
        }
    }
    out
}

/// Maps every stack of `side` into `frames`/`stacks` of `into`; returns the new
/// id of each old stack.
fn absorb(into: &mut Profile, side: &Profile, strip: bool) -> Vec<u32> {
    let fmap: Vec<FrameId> = side
        .frames
        .ids()
        .map(|f| {
            let raw = side.frames.raw(f);
            if strip {
                into.frames.intern(&strip_hex(raw))
            } else {
                into.frames.intern(raw)
            }
        })
        .collect();
    for (old, meta) in &side.frame_meta {
        into.frame_meta
            .entry(fmap[old.0 as usize])
            .or_insert_with(|| meta.clone());
    }
    let mut smap: Vec<u32> = Vec::with_capacity(side.stacks.len());
    for s in 0..side.stacks.len() {
        let s = StackId(s as u32);
        let prefix = side.stacks.prefix(s).map(|p| StackId(smap[p.0 as usize]));
        let frame = fmap[side.stacks.frame(s).0 as usize];
        smap.push(into.stacks.intern(prefix, frame).0);
    }
    smap
}

/// Per side: the column to count samples in (`None`: count rows).
fn count_column(p: &Profile, value: usize) -> Option<usize> {
    if p.value_types[value].counts_samples() {
        Some(value)
    } else {
        p.value_types.iter().position(ValueType::counts_samples)
    }
}

/// Merges two profiles into one diff profile. `before`'s frames and stacks are
/// reused (its samples are replaced by one row per stack), so the peak is about
/// the two inputs, not three copies. Time, thread and label columns are dropped:
/// a diff compares totals.
pub fn merge(before: Profile, after: Profile, opts: &MergeOptions) -> Result<Profile, DiffError> {
    let names = &opts.names;
    for (p, name) in [(&before, &names[0]), (&after, &names[1])] {
        if p.samples.is_empty() || p.value_types.is_empty() {
            return Err(DiffError::Empty { name: name.clone() });
        }
    }
    let pairing = pair(&before, &after, names)?;
    let counts = [
        count_column(&before, pairing.columns[0]),
        count_column(&after, pairing.columns[1]),
    ];
    let both_count = counts[0] == Some(pairing.columns[0]) && counts[1] == Some(pairing.columns[1]);
    let ncols = if both_count { 2 } else { 4 };
    merge_into(before, after, opts, pairing, counts, ncols)
}

fn merge_into(
    before: Profile,
    after: Profile,
    opts: &MergeOptions,
    pairing: Pairing,
    counts: [Option<usize>; 2],
    ncols: usize,
) -> Result<Profile, DiffError> {
    let names = &opts.names;
    let side_meta = |p: &Profile, i: usize| SideInfo {
        name: names[i].clone(),
        format: p.format.clone(),
        kind: p.value_types[pairing.columns[i]].kind.clone(),
        value: i,
        count: if ncols == 2 { i } else { 2 + i },
        rows_counted: counts[i].is_none(),
        duration_ns: p.meta.duration_ns,
        period: p.meta.period.clone(),
    };
    let sides = [side_meta(&before, 0), side_meta(&after, 1)];
    let mut cautions: Vec<String> = pairing.caution.clone().into_iter().collect();
    if let (Some((pb, tb)), Some((pa, ta))) = (&sides[0].period, &sides[1].period)
        && (pb != pa || tb.unit != ta.unit)
    {
        let rate = |p: i64, vt: &ValueType| match vt.unit.nanos() {
            Some(n) if p > 0 => format!("{:.0} Hz", 1e9 / (p as f64 * n)),
            _ => format!("every {p} {}", vt.unit.name()),
        };
        cautions.push(format!(
            "sampling rates differ ({} vs {}): raw counts are not comparable, shares are",
            rate(*pb, tb),
            rate(*pa, ta)
        ));
    }
    let before_stride = before.value_types.len().max(1);
    let (mut out, before_samples, before_map) = if opts.strip_hex {
        let mut fresh = Profile::new("diff", Vec::new());
        let map = absorb(&mut fresh, &before, true);
        fresh.warnings = before.warnings.clone();
        (fresh, before.samples, Some(map))
    } else {
        let mut p = before;
        let samples = std::mem::take(&mut p.samples);
        (p, samples, None)
    };
    let after_map = absorb(&mut out, &after, opts.strip_hex);

    // One accumulator row per stack (+1: samples with no stack), `ncols` wide.
    let n = out.stacks.len() + 1;
    let mut acc = vec![0i64; n * ncols];
    let mut add = |side: usize,
                   samples: &Samples,
                   stride: usize,
                   map: Option<&[u32]>|
     -> Result<(), DiffError> {
        let col = pairing.columns[side];
        let factor = pairing.factors[side];
        for i in 0..samples.len() {
            let row = match samples.stack[i] {
                u32::MAX => 0,
                s => map.map_or(s, |m| m[s as usize]) as usize + 1,
            };
            let vals = &samples.values[i * stride..(i + 1) * stride];
            let v = vals[col].checked_mul(factor).ok_or(DiffError::Overflow)?;
            let cell = &mut acc[row * ncols + side];
            *cell = cell.saturating_add(v);
            if ncols == 4 {
                let c = match counts[side] {
                    Some(cc) => vals[cc],
                    None => 1,
                };
                let cell = &mut acc[row * ncols + 2 + side];
                *cell = cell.saturating_add(c);
            }
        }
        Ok(())
    };
    add(0, &before_samples, before_stride, before_map.as_deref())?;
    drop(before_samples);
    add(
        1,
        &after.samples,
        after.value_types.len().max(1),
        Some(&after_map),
    )?;

    cautions.extend(cautions::shared_frames(&out, &acc, ncols, names));
    let mut samples = Samples::default();
    for row in 0..n {
        let vals = &acc[row * ncols..(row + 1) * ncols];
        if vals.iter().any(|&v| v != 0) {
            samples
                .stack
                .push(if row == 0 { u32::MAX } else { row as u32 - 1 });
            samples.values.extend_from_slice(vals);
        }
    }
    out.samples = samples;
    let vt = |kind: &str| ValueType {
        kind: kind.into(),
        unit: pairing.unit.clone(),
        decimals: pairing.decimals,
    };
    out.value_types = vec![vt("before"), vt("after")];
    if ncols == 4 {
        out.value_types
            .push(ValueType::new("before samples", Unit::Count));
        out.value_types
            .push(ValueType::new("after samples", Unit::Count));
    }
    out.default_value = 1;
    out.format = "diff".into();
    out.threads.clear();
    out.label_sets.clear();
    let mut warnings = std::mem::take(&mut out.warnings);
    for w in &after.warnings.first {
        warnings.push(w.line, format!("{}: {}", names[1], w.message));
    }
    warnings.count += after
        .warnings
        .count
        .saturating_sub(after.warnings.first.len() as u64);
    out.warnings = warnings;
    // The sides are named by the meta; a note would say it twice.
    out.notes.clear();
    out.meta = super::ProfileMeta {
        diff: Some(Box::new(DiffMeta { sides, cautions })),
        ..super::ProfileMeta::default()
    };
    Ok(out)
}

/// How the two sides are made comparable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Norm {
    /// Each side as a share of its own total (the default: load-independent).
    #[default]
    Share,
    /// The values as recorded.
    Raw,
    /// Values per second of each profile's duration.
    PerSecond,
    /// Before scaled to after's total (`difffolded.pl -n`, `inferno-diff-folded
    /// --normalize`).
    Scaled,
}

impl Norm {
    pub const ALL: [Norm; 4] = [Norm::Share, Norm::Raw, Norm::PerSecond, Norm::Scaled];

    pub fn next(self) -> Norm {
        let i = Norm::ALL.iter().position(|&n| n == self).unwrap_or(0);
        Norm::ALL[(i + 1) % Norm::ALL.len()]
    }

    /// The name the CLI takes.
    pub fn name(self) -> &'static str {
        match self {
            Norm::Share => "share",
            Norm::Raw => "raw",
            Norm::PerSecond => "per-second",
            Norm::Scaled => "scaled",
        }
    }

    /// The header's word for it.
    pub fn short(self) -> &'static str {
        match self {
            Norm::Share => "share of total",
            Norm::Raw => "raw",
            Norm::PerSecond => "per second",
            Norm::Scaled => "before scaled",
        }
    }

    /// What the help, the CLI and the detail say.
    pub fn label(self) -> &'static str {
        match self {
            Norm::Share => "share of each side's total",
            Norm::Raw => "raw values",
            Norm::PerSecond => "per second of each profile",
            Norm::Scaled => "before scaled to after's total",
        }
    }
}

/// |z| at or above this is a significant change: about p < 0.003 two-sided. A
/// table tests hundreds of functions at once, so 1.96 (p < 0.05) would flag a
/// few of them on two profiles of the same program.
pub const SIGNIFICANT_Z: f64 = 3.0;

/// Fewer samples than this on both sides: too few to act on (the profiling
/// guide's rule).
pub const MIN_SAMPLES: f64 = 50.0;

/// Whether a change is larger than sampling noise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Significant,
    /// Within what sampling alone would give.
    Noise,
    /// Fewer than [`MIN_SAMPLES`] on both sides.
    Few,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Significant => "significant",
            Verdict::Noise => "within noise",
            Verdict::Few => "too few samples",
        }
    }
}

/// The two-proportion z statistic for `x[i]` of `n[i]` samples on each side
/// (after's share minus before's, over the pooled standard error). `None` when a
/// side has no samples.
pub fn z_score(x: [f64; 2], n: [f64; 2]) -> Option<f64> {
    if n[0] <= 0.0 || n[1] <= 0.0 {
        return None;
    }
    let (p0, p1) = (x[0] / n[0], x[1] / n[1]);
    let pooled = (x[0] + x[1]) / (n[0] + n[1]);
    let se = (pooled * (1.0 - pooled) * (1.0 / n[0] + 1.0 / n[1])).sqrt();
    if se > 0.0 {
        Some((p1 - p0) / se)
    } else if p0 == p1 {
        Some(0.0)
    } else {
        Some(f64::INFINITY.copysign(p1 - p0))
    }
}

/// The verdict on `x[i]` of `n[i]` samples, and its z.
pub fn verdict(x: [f64; 2], n: [f64; 2]) -> (Verdict, Option<f64>) {
    let z = z_score(x, n);
    if x[0].max(x[1]) < MIN_SAMPLES {
        return (Verdict::Few, z);
    }
    match z {
        Some(z) if z.abs() >= SIGNIFICANT_Z => (Verdict::Significant, Some(z)),
        _ => (Verdict::Noise, z),
    }
}

/// One quantity on both sides, normalised, with its verdict.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// `[before, after]` after normalisation.
    pub value: [f64; 2],
    /// Samples behind each side.
    pub samples: [f64; 2],
    pub verdict: Verdict,
    pub z: Option<f64>,
}

impl Change {
    pub fn delta(&self) -> f64 {
        self.value[1] - self.value[0]
    }

    /// After over before minus one; `None` when before is zero.
    pub fn relative(&self) -> Option<f64> {
        (self.value[0] != 0.0).then(|| self.value[1] / self.value[0] - 1.0)
    }

    /// In after only / in before only.
    pub fn is_new(&self) -> bool {
        self.value[0] == 0.0 && self.value[1] != 0.0
    }

    pub fn is_gone(&self) -> bool {
        self.value[1] == 0.0 && self.value[0] != 0.0
    }

    /// Whether a side rests on fewer than [`MIN_SAMPLES`] samples.
    pub fn thin(&self, side: usize) -> bool {
        self.samples[side] < MIN_SAMPLES
    }
}

/// What comparing needs besides one quantity's values: each side's totals and
/// the normalisation factors.
#[derive(Clone, Debug, PartialEq)]
pub struct Compare {
    pub norm: Norm,
    /// Stored totals, `[before, after]`.
    pub totals: [i64; 2],
    /// Total samples per side.
    pub sample_totals: [f64; 2],
    /// Multiply a stored value by this to get its normalised number.
    pub factors: [f64; 2],
}

impl Compare {
    /// The comparison under `norm`, or why it cannot be made (per second without
    /// a duration). `scale` is the value type's decimal scale.
    pub fn new(
        meta: &DiffMeta,
        norm: Norm,
        totals: [i64; 2],
        sample_totals: [f64; 2],
        scale: f64,
    ) -> Result<Compare, String> {
        let inv = |t: i64| if t == 0 { 0.0 } else { 1.0 / t as f64 };
        let factors = match norm {
            Norm::Share => [inv(totals[0]), inv(totals[1])],
            Norm::Raw => [1.0 / scale, 1.0 / scale],
            Norm::PerSecond => {
                let secs = |i: usize| {
                    meta.sides[i]
                        .duration_ns
                        .filter(|&d| d > 0)
                        .map(|d| d as f64 / 1e9)
                        .ok_or_else(|| {
                            format!(
                                "per second needs each profile's duration; {} does not say",
                                meta.sides[i].name
                            )
                        })
                };
                [1.0 / (scale * secs(0)?), 1.0 / (scale * secs(1)?)]
            }
            Norm::Scaled => [totals[1] as f64 * inv(totals[0]) / scale, 1.0 / scale],
        };
        Ok(Compare {
            norm,
            totals,
            sample_totals,
            factors,
        })
    }

    /// The change of a quantity with stored values `v` and `samples` per side.
    pub fn change(&self, v: [i64; 2], samples: [f64; 2]) -> Change {
        let (verdict, z) = verdict(samples, self.sample_totals);
        Change {
            value: [v[0] as f64 * self.factors[0], v[1] as f64 * self.factors[1]],
            samples,
            verdict,
            z,
        }
    }
}

mod cautions;
mod delta;
mod gate;
pub use delta::{DeltaRow, DeltaSort, DeltaTable, tree_compare};
pub use gate::{Coverage, Gate, GateOptions, Metric, Offender, Threshold, coverage, offenders};
