//! The regression gate of `ember check`: thresholds, budgets and the functions
//! that grew past them.

use super::*;

/// How much a function may grow: relative to its before value ("10%") or in
/// percentage points of the whole profile ("2pp").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Threshold {
    /// A fraction: 0.1 is 10%.
    Relative(f64),
    /// A fraction of the total: 0.02 is 2 percentage points.
    Points(f64),
}

impl std::str::FromStr for Threshold {
    type Err = String;

    fn from_str(s: &str) -> Result<Threshold, String> {
        let t = s.trim();
        let (num, points) = if let Some(n) = t.strip_suffix("pp") {
            (n, true)
        } else {
            (t.strip_suffix('%').unwrap_or(t), false)
        };
        let v: f64 = num.trim().parse().map_err(|_| {
            format!("threshold {s:?}: expected a percentage like 10% or percentage points like 2pp")
        })?;
        if !v.is_finite() || v < 0.0 {
            return Err(format!("threshold {s:?}: must be a number >= 0"));
        }
        Ok(if points {
            Threshold::Points(v / 100.0)
        } else {
            Threshold::Relative(v / 100.0)
        })
    }
}

impl std::fmt::Display for Threshold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Threshold::Relative(v) => write!(f, "{}%", v * 100.0),
            Threshold::Points(v) => write!(f, "{}pp", v * 100.0),
        }
    }
}

/// Which of a function's numbers a gate looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Metric {
    /// Time in the function itself.
    #[default]
    SelfWeight,
    /// Time in the function and everything it calls.
    Total,
}

impl std::str::FromStr for Metric {
    type Err = String;

    fn from_str(s: &str) -> Result<Metric, String> {
        match s {
            "self" => Ok(Metric::SelfWeight),
            "total" => Ok(Metric::Total),
            _ => Err(format!("metric {s:?}: expected self or total")),
        }
    }
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::SelfWeight => "self",
            Metric::Total => "total",
        }
    }
}

/// A function that grew past its budget.
#[derive(Clone, Debug, PartialEq)]
pub struct Offender {
    pub frame: FrameId,
    pub metric: Metric,
    pub threshold: Threshold,
    /// The change under the gate's normalisation.
    pub change: Change,
    /// Shares of each side's total, for the message.
    pub share: [f64; 2],
}

/// One budget of a gate: functions matching `pattern` (all when `None`) may grow
/// by at most `threshold` of `metric`.
#[derive(Clone, Debug)]
pub struct Gate {
    pub pattern: Option<regex::Regex>,
    pub threshold: Threshold,
    pub metric: Metric,
}

/// What a regression gate checks beyond each budget.
#[derive(Clone, Debug)]
pub struct GateOptions {
    /// Ignore functions with fewer samples than this on both sides.
    pub min_samples: f64,
    /// Also fail on growth within sampling noise.
    pub include_noise: bool,
}

/// How many functions of a table a gate run weighed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Weighed against at least one budget.
    pub checked: usize,
    /// Matched by a budget but under `min_samples` on both sides for every one.
    pub skipped: usize,
    /// Matched by no budget's pattern.
    pub unmatched: usize,
}

/// Which functions of `table` the `gates` weigh, and which they skip for
/// having too few samples: what "N functions checked" must count.
pub fn coverage(
    profile: &Profile,
    table: &DeltaTable,
    gates: &[Gate],
    opts: &GateOptions,
) -> Coverage {
    let mut c = Coverage::default();
    for row in &table.rows {
        let name = profile.frames.name(row.frame);
        let mut matched = false;
        let mut weighed = false;
        for gate in gates {
            if gate.pattern.as_ref().is_some_and(|p| !p.is_match(&name)) {
                continue;
            }
            matched = true;
            let n = match gate.metric {
                Metric::SelfWeight => row.self_samples,
                Metric::Total => row.total_samples,
            };
            weighed |= n[0].max(n[1]) >= opts.min_samples;
        }
        match (matched, weighed) {
            (false, _) => c.unmatched += 1,
            (true, false) => c.skipped += 1,
            (true, true) => c.checked += 1,
        }
    }
    c
}

/// The functions of `table` that grew past a gate. Relative thresholds compare
/// under `cmp`'s normalisation, point thresholds compare shares.
pub fn offenders(
    profile: &Profile,
    table: &DeltaTable,
    cmp: &Compare,
    share: &Compare,
    gates: &[Gate],
    opts: &GateOptions,
) -> Vec<Offender> {
    let mut out = Vec::new();
    for row in &table.rows {
        let name = profile.frames.name(row.frame);
        for gate in gates {
            if gate.pattern.as_ref().is_some_and(|p| !p.is_match(&name)) {
                continue;
            }
            let (v, n) = match gate.metric {
                Metric::SelfWeight => (row.self_w, row.self_samples),
                Metric::Total => (row.total, row.total_samples),
            };
            if n[0].max(n[1]) < opts.min_samples {
                continue;
            }
            let change = cmp.change(v, n);
            let shares = share.change(v, n);
            let significant = change.z.is_some_and(|z| z.abs() >= SIGNIFICANT_Z);
            if !significant && !opts.include_noise {
                continue;
            }
            let grew = match gate.threshold {
                Threshold::Relative(t) => match change.relative() {
                    Some(r) => r > t,
                    None => change.value[1] > 0.0,
                },
                Threshold::Points(t) => shares.delta() > t,
            };
            if grew {
                out.push(Offender {
                    frame: row.frame,
                    metric: gate.metric,
                    threshold: gate.threshold,
                    change,
                    share: shares.value,
                });
                break;
            }
        }
    }
    out
}
