//! Profile lint: warnings for profiles that mislead (a debug build, broken or
//! truncated stacks, too few samples, an idle system, an on-CPU profile of a
//! process that waits, unresolved JIT code), each saying what it saw and what
//! to do.
//!
//! One pass classifies every frame name ([`names`]) and one pass weighs each
//! stack by its node's samples in the caller's tree (so transforms and time
//! ranges already applied count), folding the depths and classes of a stack
//! that has samples of its own from its root down. O(frames + samples +
//! stacks with samples x their depth), in the memory of one number per stack.

mod checks;
mod names;

use self::names::Class;
use super::frames::FrameId;
use super::profile::{FrameKind, Profile};
use super::stacks::NO_PREFIX;
use super::tree::{CallTree, NodeId, TreeOptions};

/// What a warning is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LintKind {
    DebugBuild,
    BrokenStacks,
    FewSamples,
    ShortProfile,
    UnusualRate,
    Idle,
    OnCpuOnly,
    UnresolvedJit,
    TruncatedStacks,
    /// perf's lost-sample records. No reader carries them yet (`perf script`
    /// prints none unless asked with `--show-lost-events`), so no check fires it.
    LostSamples,
    /// What the host logs (`--context`) say about the profile's window, by
    /// the host flag's own code (`host-io-wait`, `host-run-queue`, ...): the
    /// caller adds these, the profile alone cannot tell.
    Host(&'static str),
    /// Names alone look like a debug build, but the format cannot tell one
    /// from a symboliser that writes inlined frames as frames of their own.
    MaybeDebugBuild,
}

impl LintKind {
    /// The warning's stable name, as `ember lint` prints it.
    pub fn code(&self) -> &'static str {
        match self {
            LintKind::DebugBuild => "debug-build",
            LintKind::BrokenStacks => "broken-stacks",
            LintKind::FewSamples => "few-samples",
            LintKind::ShortProfile => "short-profile",
            LintKind::UnusualRate => "unusual-rate",
            LintKind::Idle => "idle",
            LintKind::OnCpuOnly => "on-cpu-only",
            LintKind::UnresolvedJit => "unresolved-jit",
            LintKind::TruncatedStacks => "truncated-stacks",
            LintKind::LostSamples => "lost-samples",
            LintKind::Host(code) => code,
            LintKind::MaybeDebugBuild => "maybe-debug-build",
        }
    }
}

/// One warning: what was seen (with figures) and what to do about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub kind: LintKind,
    /// What the lint saw: "62% of samples in stacks of depth <= 2". Frame
    /// names in it are sanitized.
    pub saw: String,
    /// What to do.
    pub advice: String,
}

/// Fewer samples than this are noise ([`super::NOISE_SAMPLES`]).
const FEW_SAMPLES: f64 = super::tree::NOISE_SAMPLES as f64;
/// A profile shorter than this is mostly start-up and warm-up.
const SHORT_NS: u64 = 1_000_000_000;
/// Sampling slower or faster than this is unusual.
const MIN_HZ: f64 = 10.0;
const MAX_HZ: f64 = 10_000.0;
/// "Most samples": idle, shallow, stackless, blocking, not reaching a root.
const MOST: f64 = 0.5;
/// A large share of samples through `[unknown]` frames.
const UNKNOWN_SHARE: f64 = 0.3;
/// Unresolved JIT frames in more samples than this.
const JIT_SHARE: f64 = 0.1;
/// Truncated stacks in more samples than this.
const TRUNCATED_SHARE: f64 = 0.05;
/// Debug build: samples with at least two wrapper frames, and wrapper frames
/// among all (non-inlined) frames. Measured on the same programs built both
/// ways (see `tests/fixtures/README.md`): Rust 87% / 49% debug, 0% / 0%
/// release; C++ (g++ -O0 vs -O2) 75% / 21% debug, 0% / 0% release.
const WRAPPED_SAMPLES: f64 = 0.3;
const WRAPPER_FRAMES: f64 = 0.1;
/// Samples in frames under a debug build's path.
const DEBUG_PATH_SHARE: f64 = 0.05;
/// Samples in code under a release build's path (perf's DSOs, pprof's
/// mappings) that outweigh what frame names suggest.
const RELEASE_PATH_SHARE: f64 = 0.5;
/// perf's default `kernel.perf_event_max_stack`.
const PERF_MAX_STACK: u16 = 127;
/// Go's profiler stack caps (heap records, CPU before Go 1.23, CPU since).
const PPROF_MAX_STACKS: [u16; 3] = [32, 64, 128];

/// The warnings for `profile` as `tree` weighs it (the tree's value type,
/// sample range and the transforms applied to `profile`).
pub fn lint(profile: &Profile, tree: &CallTree) -> Vec<Finding> {
    let range = tree
        .options
        .samples
        .clone()
        .unwrap_or(0..profile.samples.len());
    let own = own_weights(profile, tree);
    findings(profile, own, tree.samples(NodeId::ROOT), range)
}

/// [`lint`] of the view a tree with `options` would show, from the samples
/// alone: no tree is built (the viewer runs it on its job thread after the
/// first frame). A comparison is weighed by its tree: use [`lint`].
pub fn lint_view(profile: &Profile, options: &TreeOptions) -> Vec<Finding> {
    let range = options.samples.clone().unwrap_or(0..profile.samples.len());
    let (own, samples) = own_from_samples(profile, options.value, range.clone());
    findings(profile, own, samples, range)
}

fn findings(
    profile: &Profile,
    own: Vec<f32>,
    samples: Option<f64>,
    range: std::ops::Range<usize>,
) -> Vec<Finding> {
    let scan = Scan::new(profile, own, samples);
    let mut out = Vec::new();
    let w = &scan.weights;
    checks::debug_build(profile, &scan, &mut out);
    checks::broken_stacks(profile, &scan, &mut out);
    if let Some(n) = w.samples.filter(|&n| n < FEW_SAMPLES) {
        out.push(Finding {
            kind: LintKind::FewSamples,
            saw: format!("only {} samples", n.round()),
            advice: format!(
                "differences under {FEW_SAMPLES} samples are noise: record longer or at a higher rate (perf record -F 999, pprof ?seconds=30)"
            ),
        });
    }
    checks::short_profile(profile, range, &mut out);
    checks::unusual_rate(profile, &mut out);
    checks::idle(profile, &scan, &mut out);
    checks::on_cpu_only(profile, &scan, &mut out);
    checks::unresolved_jit(profile, &scan, &mut out);
    checks::truncated(profile, &scan, &mut out);
    out
}

/// The format's name without what `formats::load` adds: `perf` for `perf (gzip)`.
pub fn base_format(format: &str) -> &str {
    format.split(" (").next().unwrap_or(format)
}

/// What the passes over frames, stacks and weights found.
struct Scan {
    /// Per frame: [`Class`] bits.
    frame_class: Vec<u16>,
    /// Per node (stack + 1): its own samples (its total less its children's).
    own: Vec<f32>,
    weights: Weights,
}

/// Sample shares (of [`Weights::total`]) with each property.
#[derive(Default)]
struct Weights {
    /// Sum of weights (samples, or the shown value where no count is known).
    total: f64,
    /// The tree's sample count, when it knows one.
    samples: Option<f64>,
    idle: f64,
    blocking: f64,
    unknown: f64,
    jit: f64,
    no_stack: f64,
    debug_path: f64,
    release_path: f64,
    /// Native depth (below synthetic roots) <= 2.
    shallow: f64,
    /// Reaches no root frame, does not start in the kernel and is not cut.
    unrooted: f64,
    /// Two or more wrapper frames.
    wrapped: f64,
    /// Weighted sums of wrapper frames and of non-inlined native frames.
    wrapper_frames: f64,
    real_frames: f64,
    truncated: f64,
}

/// Per stack, carried from its prefix.
#[derive(Clone, Copy, Default)]
struct StackFacts {
    /// OR of the classes of its frames (the carried ones).
    class: u16,
    /// Native frames (below the synthetic roots).
    depth: u16,
    /// Native frames that are not inlined.
    real: u16,
    wrappers: u16,
    /// Every frame so far is a synthetic root.
    synthetic: bool,
    /// The outermost native frame is kernel code.
    kernel_start: bool,
    /// An `[unknown]` frame below a root frame: a hole in the stack.
    unknown_inside: bool,
    /// An `[unknown]` frame before any root frame: a hole when no root
    /// follows, else the garbage a frame-pointer walk reads past the real
    /// root (`[unknown]` above `__libc_start_main`).
    unknown_outside: bool,
}

const CARRIED: u16 = Class::IDLE
    | Class::BLOCKING
    | Class::JIT
    | Class::ROOT
    | Class::DEBUG_PATH
    | Class::RELEASE_PATH
    | Class::NO_STACK
    | Class::JIT_COMM;

impl Scan {
    fn new(profile: &Profile, own: Vec<f32>, samples: Option<f64>) -> Scan {
        let frame_class = classify_frames(profile);
        let weights = weigh(profile, samples, &frame_class, &own);
        Scan {
            frame_class,
            own,
            weights,
        }
    }

    fn share(&self, x: f64) -> f64 {
        if self.weights.total > 0.0 {
            x / self.weights.total
        } else {
            0.0
        }
    }
}

/// Each frame's classes: its name, its source file, its kind.
fn classify_frames(profile: &Profile) -> Vec<u16> {
    let perf = base_format(&profile.format) == "perf";
    let comms: Vec<Vec<u8>> = if perf {
        profile
            .threads
            .iter()
            .map(|t| {
                t.name
                    .bytes()
                    .map(|b| if b == b' ' || b == b'\t' { b'_' } else { b })
                    .collect()
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut class: Vec<u16> = profile
        .frames
        .ids()
        .map(|f| names::classify(&profile.frames.name(f)))
        .collect();
    for comm in &comms {
        if let Some(f) = profile.frames.get(comm) {
            class[f.0 as usize] |= Class::SYNTH;
        }
    }
    for (f, meta) in &profile.frame_meta {
        let Some(c) = class.get_mut(f.0 as usize) else {
            continue;
        };
        match meta.kind {
            FrameKind::Inlined => *c |= Class::INLINED,
            FrameKind::Kernel => *c |= Class::KERNEL,
            FrameKind::Jit | FrameKind::Normal => {}
        }
        let object = meta.object.as_deref();
        if meta.file.as_deref().is_some_and(names::is_debug_path)
            || object.is_some_and(names::is_debug_path)
        {
            *c |= Class::DEBUG_PATH;
        } else if object.is_some_and(names::is_release_path) {
            *c |= Class::RELEASE_PATH;
        }
    }
    class
}

/// Depths and carried classes of stack `s`, folded from its root frame down
/// (`path` is scratch space). Walked per stack that has samples of its own
/// rather than kept for every stack: the facts of all 6.5M stacks of a big
/// profile would be 80 MB held next to the viewer's tree.
fn facts_of(
    profile: &Profile,
    frame_class: &[u16],
    perf: bool,
    s: usize,
    path: &mut Vec<FrameId>,
) -> StackFacts {
    let prefixes = profile.stacks.prefixes();
    let frames = profile.stacks.frames();
    path.clear();
    let mut at = s;
    loop {
        path.push(frames[at]);
        match prefixes[at] {
            NO_PREFIX => break,
            p => at = p as usize,
        }
    }
    let mut facts = StackFacts {
        synthetic: true,
        ..StackFacts::default()
    };
    for (depth, &f) in path.iter().rev().enumerate() {
        facts = step(
            profile,
            frame_class[f.0 as usize],
            perf,
            facts,
            depth == 0,
            f,
        );
    }
    facts
}

/// The facts of a stack from its prefix's (`parent`) and its own frame `f` of
/// classes `c`; `root_level` when it has no prefix.
fn step(
    profile: &Profile,
    c: u16,
    perf: bool,
    parent: StackFacts,
    root_level: bool,
    f: FrameId,
) -> StackFacts {
    let synthetic = parent.synthetic && ((perf && root_level) || c & Class::SYNTH != 0);
    let mut here = StackFacts {
        class: parent.class | (c & CARRIED & !Class::JIT_COMM),
        synthetic,
        ..parent
    };
    if synthetic {
        if names::is_jit_comm(&profile.frames.name(f)) {
            here.class |= Class::JIT_COMM;
        }
    } else {
        if parent.depth == 0 {
            here.kernel_start = c & Class::KERNEL != 0;
        }
        here.depth = parent.depth.saturating_add(1);
        if c & Class::UNKNOWN != 0 {
            if parent.class & Class::ROOT != 0 {
                here.unknown_inside = true;
            } else {
                here.unknown_outside = true;
            }
        }
        if c & Class::INLINED == 0 {
            here.real = parent.real.saturating_add(1);
            if c & Class::WRAPPER != 0 {
                here.wrappers = parent.wrappers.saturating_add(1);
            }
        }
    }
    here
}

/// Per node, its own samples: the node's total less its children's (node
/// `i + 1` is stack `i`). The shown value where the tree knows no counts.
fn own_weights(profile: &Profile, tree: &CallTree) -> Vec<f32> {
    let counted = tree.samples(NodeId::ROOT).is_some();
    let n = profile.stacks.len().min(tree.len().saturating_sub(1));
    let mut own: Vec<f64> = (0..=n)
        .map(|i| {
            let node = NodeId(i as u32);
            if counted {
                tree.samples(node).unwrap_or(0.0)
            } else {
                tree.total(node) as f64
            }
        })
        .collect();
    for (s, &p) in profile.stacks.prefixes().iter().take(n).enumerate() {
        let parent = if p == NO_PREFIX { 0 } else { p as usize + 1 };
        own[parent] -= own[s + 1];
    }
    own.into_iter().map(|x| x as f32).collect()
}

/// Per stack (node `i + 1` is stack `i`, 0 the samples without one) its own
/// samples over `range`, and their sum: what [`own_weights`] reads off a tree
/// (`value` itself if it counts samples, else the profile's sample-count
/// column, else `value` uncounted).
fn own_from_samples(
    profile: &Profile,
    value: usize,
    range: std::ops::Range<usize>,
) -> (Vec<f32>, Option<f64>) {
    let types = &profile.value_types;
    let stride = types.len().max(1);
    let value = value.min(stride - 1);
    let (col, counted) = match types.get(value) {
        Some(vt) if vt.counts_samples() => (value, true),
        _ => match types.iter().position(super::ValueType::counts_samples) {
            Some(c) => (c, true),
            None => (value, false),
        },
    };
    let scale = types.get(col).map_or(1.0, |vt| vt.scale().max(1.0));
    // f32 per stack (a big profile has millions): exact for counts to 2^24,
    // and a share needs no more; the sum is kept in f64.
    let mut own = vec![0.0f32; profile.stacks.len() + 1];
    let mut sum = 0.0f64;
    for i in range {
        let s = profile.samples.stack[i];
        let at = if s == u32::MAX { 0 } else { s as usize + 1 };
        let v = profile.samples.values[i * stride + col] as f64;
        let x = if counted { v / scale } else { v };
        own[at] += x as f32;
        sum += x;
    }
    (own, counted.then_some(sum))
}

/// The stacks' own samples summed by property.
fn weigh(profile: &Profile, samples: Option<f64>, frame_class: &[u16], own: &[f32]) -> Weights {
    let perf = base_format(&profile.format) == "perf";
    let pprof = base_format(&profile.format) == "pprof";
    let mut w = Weights {
        samples,
        ..Weights::default()
    };
    let mut path = Vec::new();
    for (s, &x) in own.iter().skip(1).enumerate() {
        if x <= 0.0 {
            continue;
        }
        let x = f64::from(x);
        let f = &facts_of(profile, frame_class, perf, s, &mut path);
        w.total += x;
        let has = |bit: u16| f.class & bit != 0;
        let unknown = f.unknown_inside || (f.unknown_outside && !has(Class::ROOT));
        let jit_unknown = unknown && has(Class::JIT_COMM);
        if has(Class::IDLE) {
            w.idle += x;
        }
        if has(Class::BLOCKING) {
            w.blocking += x;
        }
        if has(Class::JIT) || jit_unknown {
            w.jit += x;
        }
        if unknown && !jit_unknown {
            w.unknown += x;
        }
        if has(Class::NO_STACK) {
            w.no_stack += x;
        }
        if has(Class::DEBUG_PATH) {
            w.debug_path += x;
        } else if has(Class::RELEASE_PATH) {
            w.release_path += x;
        }
        if f.depth <= 2 {
            w.shallow += x;
        }

        if f.wrappers >= 2 {
            w.wrapped += x;
        }
        w.wrapper_frames += x * f64::from(f.wrappers);
        w.real_frames += x * f64::from(f.real);
        let cut = if perf {
            f.real >= PERF_MAX_STACK
        } else {
            pprof && PPROF_MAX_STACKS.contains(&f.real) && !has(Class::ROOT)
        };
        if cut {
            w.truncated += x;
        } else if !has(Class::ROOT) && !f.kernel_start {
            // A cut stack misses its root for another reason.
            w.unrooted += x;
        }
    }
    // The root's own weight: samples without a stack.
    if own[0] > 0.0 {
        w.total += f64::from(own[0]);
    }
    w
}

#[cfg(test)]
mod tests;
