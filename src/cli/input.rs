//! The flags every command that reads a profile shares: the input, the
//! transforms, and the time range with the host's context.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use crate::formats::{Format, Granularity, LoadOptions};
use crate::model::{self, Recipe, Transform};

#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Read the input as this format instead of detecting it.
    #[arg(long, value_enum, value_name = "NAME")]
    pub input_format: Option<Format>,
    /// Show this sample type (pprof: cpu, alloc_space, ...; by name or index).
    #[arg(long, value_name = "TYPE", conflicts_with = "weight")]
    pub sample_type: Option<String>,
    /// perf script: weight stacks by sample count or by the event period.
    #[arg(long, value_enum)]
    pub weight: Option<Weight>,
    /// Put each sample's thread at the root of its stack.
    #[arg(long)]
    pub thread: bool,
    /// Keep only threads / sub-profiles (speedscope profiles, Gecko threads, perf
    /// comms) whose name matches REGEX.
    #[arg(long, value_name = "REGEX")]
    pub only_thread: Option<String>,
    /// Put each sample's process at the root of its stack.
    #[arg(long)]
    pub process: bool,
    /// Apply a recipe: a saved stack of transforms and a search (TOML).
    #[arg(long, value_name = "FILE")]
    pub recipe: Option<PathBuf>,
    /// Keep only stacks through a function matching REGEX, re-rooted at it.
    #[arg(long, value_name = "REGEX")]
    pub focus: Vec<String>,
    /// Drop stacks through a function matching REGEX.
    #[arg(long, value_name = "REGEX")]
    pub ignore: Vec<String>,
    /// Hide functions matching REGEX: their time goes to their callers.
    #[arg(long, value_name = "REGEX")]
    pub hide: Vec<String>,
    /// Collapse direct recursion (a;a;a;b becomes a;b).
    #[arg(long)]
    pub collapse_recursion: bool,
    /// Frames by function (default), by function and source line, or by
    /// source file, for formats that record lines (pprof, speedscope,
    /// cpuprofile, Gecko, perf script with srcline; a perf.data is read with
    /// `perf script -F +srcline` then).
    #[arg(long, value_enum, default_value_t = Granularity::Function)]
    pub granularity: Granularity,
    /// A URL's whole wait, in seconds (default: its `seconds=` plus 30, else 60).
    #[arg(long, value_name = "SECS")]
    pub fetch_timeout: Option<f64>,
    /// Report every warning (bad lines skipped) on stderr.
    #[arg(long, short)]
    pub verbose: bool,
    /// Load even when the estimate of what loading needs is over the memory
    /// limit or what the host has available (ember refuses before loading
    /// otherwise).
    #[arg(long)]
    pub force_load: bool,
    #[command(flatten)]
    pub time: TimeArgs,
}

/// Which samples of the profile's time to keep, and the host's context.
#[derive(Debug, Args, Clone, Default)]
pub struct TimeArgs {
    /// Keep the samples from TIME on: seconds from the first sample (12.5,
    /// 1m30s, 250ms) or a wall-clock time (11:56:28, 2026-12-02T11:56:28Z).
    #[arg(long, value_name = "TIME")]
    pub from: Option<String>,
    /// Keep the samples before TIME (as for --from). Not `--to`: that names
    /// the output format of `convert` and `diff`.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Drop the samples in START-END (repeatable): 09:58-10:06, 12-15.5.
    #[arg(long, value_name = "RANGE")]
    pub exclude: Vec<String>,
    /// A host-context log captured during the profile (vmstat, iostat, sar,
    /// mpstat, dool; repeatable): drawn on the timeline, listed by `info`.
    #[arg(long = "context", value_name = "FILE")]
    pub context: Vec<PathBuf>,
    /// Shift the context logs by OFFSET (e.g. -1.5s) against the profile.
    #[arg(long, value_name = "OFFSET", allow_hyphen_values = true)]
    pub align: Option<String>,
    /// Marks to draw on the timeline: one `TIME label` or `START-END label`
    /// a line (deploys, restarts, incidents).
    #[arg(long, value_name = "FILE")]
    pub marks: Option<PathBuf>,
    /// Drop the samples inside every START-END mark of --marks.
    #[arg(long, requires = "marks")]
    pub exclude_marks: bool,
    /// A capture bundle's clock anchor (set when PROFILE is one).
    #[arg(skip)]
    pub anchor_ns: Option<i64>,
}

impl TimeArgs {
    /// No time selection asked for (a context log or an alignment alone
    /// selects nothing).
    pub fn is_unset(&self) -> bool {
        self.from.is_none()
            && self.until.is_none()
            && self.exclude.is_empty()
            && self.marks.is_none()
    }

    /// The --marks file, read (none without the flag).
    pub fn marks(&self) -> Result<Vec<model::timerange::Mark>> {
        let Some(path) = &self.marks else {
            return Ok(Vec::new());
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--marks {}: cannot read", path.display()))?;
        model::timerange::parse_marks(&text, &path.display().to_string())
            .map_err(anyhow::Error::msg)
    }

    /// The selection with the range marks excluded when --exclude-marks says so.
    pub fn selection_with_marks(&self) -> Result<model::timerange::TimeSelection> {
        let mut sel = self.selection();
        if self.exclude_marks {
            sel.exclude.extend(
                self.marks()?
                    .into_iter()
                    .filter(|m| m.range)
                    .map(|m| m.time),
            );
        }
        Ok(sel)
    }

    pub fn selection(&self) -> model::timerange::TimeSelection {
        model::timerange::TimeSelection {
            from: self.from.clone(),
            to: self.until.clone(),
            exclude: self.exclude.clone(),
            anchor_ns: self.anchor_ns,
        }
    }

    /// `--align` in nanoseconds.
    pub fn align_ns(&self) -> Result<i64> {
        match &self.align {
            None => Ok(0),
            Some(a) => model::timerange::parse_offset(a).ok_or_else(|| {
                anyhow::anyhow!("--align {a:?}: expected an offset like -1.5s, 250ms")
            }),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Weight {
    Samples,
    Period,
}

impl InputArgs {
    /// The recipe's transforms, then the flags' (focus, ignore, hide, collapse), and
    /// the recipe's search.
    pub fn transforms(&self) -> Result<(Vec<Transform>, Option<String>)> {
        let mut out = Vec::new();
        let mut search = None;
        if let Some(path) = &self.recipe {
            let r = Recipe::load(path)?;
            out.extend(r.transforms);
            search = r.search;
        }
        out.extend(
            self.focus
                .iter()
                .map(|p| Transform::Focus { pattern: p.clone() }),
        );
        out.extend(
            self.ignore
                .iter()
                .map(|p| Transform::Drop { pattern: p.clone() }),
        );
        out.extend(
            self.hide
                .iter()
                .map(|p| Transform::Merge { pattern: p.clone() }),
        );
        if self.collapse_recursion {
            out.push(Transform::CollapseRecursion { indirect: false });
        }
        for t in &out {
            t.check()?;
        }
        Ok((out, search))
    }

    pub fn load_options(&self) -> LoadOptions {
        let weight = self.weight.map(|w| match w {
            Weight::Samples => "samples".to_string(),
            Weight::Period => "period".to_string(),
        });
        LoadOptions {
            format: self.input_format,
            sample_type: self.sample_type.clone().or(weight),
            only_thread: self.only_thread.clone(),
            process_roots: self.process,
            thread_roots: self.thread,
            granularity: self.granularity,
        }
    }

    /// How a URL is fetched.
    pub fn fetch_options(&self) -> crate::sources::FetchOptions {
        crate::sources::FetchOptions {
            timeout: self
                .fetch_timeout
                .filter(|s| s.is_finite() && *s > 0.0)
                .map(|s| std::time::Duration::from_secs_f64(s.min(86_400.0))),
        }
    }

    /// More `perf script` arguments for a perf.data: source lines when the
    /// granularity needs them (perf resolves them with addr2line: slower).
    pub fn perf_script_args(&self) -> Vec<&'static str> {
        match self.granularity {
            Granularity::Function => Vec::new(),
            Granularity::Line | Granularity::File => vec!["-F", "+srcline"],
        }
    }
}
