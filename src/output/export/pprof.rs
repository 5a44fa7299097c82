//! The view as a gzipped pprof protobuf (`profile.proto`), read back by
//! `go tool pprof` to the same numbers.

use std::collections::HashMap;
use std::io::Write;

use anyhow::Result;

use super::Scope;
use crate::formats::pprof::proto;
use crate::model::{FrameId, Profile, StackId, Unit, ValueType};

/// pprof's string table under construction (entry 0 is "").
struct Strings {
    table: Vec<Vec<u8>>,
    index: HashMap<Vec<u8>, i64>,
}

impl Strings {
    fn new() -> Self {
        let mut s = Strings {
            table: Vec::new(),
            index: HashMap::new(),
        };
        s.get(b"");
        s
    }

    fn get(&mut self, text: &[u8]) -> i64 {
        if let Some(&i) = self.index.get(text) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(text.to_vec());
        self.index.insert(text.to_vec(), i);
        i
    }
}

/// pprof's (type, unit) for a value type.
fn pprof_type(vt: &ValueType) -> (&str, &str) {
    let unit = match &vt.unit {
        // pprof counts samples in "count".
        Unit::Samples => "count",
        u => u.name(),
    };
    (&vt.kind, unit)
}

pub(super) fn pprof(out: &mut dyn Write, scope: &Scope, caveats: &mut Vec<String>) -> Result<()> {
    use prost::Message;
    let p = scope.profile;
    let groups = Groups::gather(scope);
    let (order, index) = groups.used_frames(p);
    let mut strings = Strings::new();
    let mut m = proto::Profile::default();
    // pprof holds integers: a fractional time becomes whole nanoseconds,
    // other fractional values are rounded (and the user told).
    let mut factors = Vec::new();
    for vt in &p.value_types {
        let (kind, mut unit) = pprof_type(vt);
        let mut factor = 1.0;
        if vt.decimals > 0 {
            factor = 1.0 / vt.scale();
            match vt.unit.nanos() {
                Some(ns) => {
                    factor *= ns;
                    unit = "nanoseconds";
                }
                None => caveats.push(format!(
                    "{}: fractional values rounded to whole numbers (pprof holds integers)",
                    vt.kind
                )),
            }
        }
        factors.push(factor);
        m.sample_type.push(proto::ValueType {
            r#type: strings.get(kind.as_bytes()),
            unit: strings.get(unit.as_bytes()),
        });
    }
    for (k, &f) in order.iter().enumerate() {
        let id = k as u64 + 1;
        let name = strings.get(p.frames.raw(f));
        let meta = p.frame_meta.get(&f);
        let filename = meta
            .and_then(|m| m.file.as_deref())
            .map_or(0, |file| strings.get(file.as_bytes()));
        // The system name as the input gave it, or none: pprof treats a
        // system name equal to the name as undemangled and simplifies it
        // again (`<u64>::wrapping_add` would become `::wrapping_add`).
        let system_name = meta
            .and_then(|m| m.system_name.as_deref())
            .map_or(0, |n| strings.get(n.as_bytes()));
        m.function.push(proto::Function {
            id,
            name,
            system_name,
            filename,
            ..Default::default()
        });
        m.location.push(proto::Location {
            id,
            line: vec![line_of(p, f, id)],
            ..Default::default()
        });
    }
    let mut locations = Locations::default();
    let values_of = |vals: &[i64]| -> Vec<i64> {
        factors
            .iter()
            .zip(vals)
            .map(|(&f, &x)| {
                if f == 1.0 {
                    x
                } else {
                    (x as f64 * f).round() as i64
                }
            })
            .collect()
    };
    for (s, vals) in groups.dense.chunks(groups.stride).enumerate() {
        if vals.iter().any(|&v| v != 0) {
            let path = p.stacks.path(StackId(s as u32));
            m.sample.push(proto::Sample {
                location_id: locations.of_path(p, &path, &index, &mut m.location),
                value: values_of(vals),
                ..Default::default()
            });
        }
    }
    for (k, &(stack, set, negative)) in groups.keys.iter().enumerate() {
        let vals = &groups.extra[k * groups.stride..(k + 1) * groups.stride];
        if vals.iter().all(|&v| v == 0) {
            continue;
        }
        let location_id = if stack == NONE {
            Vec::new()
        } else {
            let path = p.stacks.path(StackId(stack));
            locations.of_path(p, &path, &index, &mut m.location)
        };
        let mut label: Vec<proto::Label> = if set == NONE {
            Vec::new()
        } else {
            p.label_sets[set as usize]
                .iter()
                .map(|(k, v)| label_of(&mut strings, k, v))
                .collect()
        };
        if negative {
            // pprof merges samples of one stack and labels on reading, and a
            // loss merged into a gain would shrink its |value| total.
            label.push(proto::Label {
                key: strings.get(b"delta"),
                str: strings.get(b"negative"),
                ..Default::default()
            });
        }
        m.sample.push(proto::Sample {
            location_id,
            value: values_of(vals),
            label,
        });
    }
    if let Some(ns) = p.meta.start_unix_ns {
        m.time_nanos = i64::try_from(ns).unwrap_or(0);
    }
    if let Some(ns) = p.meta.duration_ns {
        m.duration_nanos = i64::try_from(ns).unwrap_or(0);
    }
    if let Some((period, vt)) = &p.meta.period {
        let (kind, unit) = pprof_type(vt);
        m.period_type = Some(proto::ValueType {
            r#type: strings.get(kind.as_bytes()),
            unit: strings.get(unit.as_bytes()),
        });
        m.period = *period;
    }
    let shown = &p.value_types[scope.tree.options.value];
    m.default_sample_type = strings.get(shown.kind.as_bytes());
    let mut comments = vec![format!("exported by ember {}", env!("CARGO_PKG_VERSION"))];
    if !scope.title.is_empty() {
        comments.push(format!("source: {}", scope.title));
    }
    comments.extend(scope.notes.iter().cloned());
    m.comment = comments.iter().map(|c| strings.get(c.as_bytes())).collect();
    m.string_table = strings.table;
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    gz.write_all(&m.encode_to_vec())?;
    gz.finish()?;
    Ok(())
}

/// Frame `f`'s line in a location, as function `id`.
fn line_of(p: &Profile, f: FrameId, id: u64) -> proto::Line {
    let line = p
        .frame_meta
        .get(&f)
        .and_then(|m| m.line)
        .map_or(0, i64::from);
    proto::Line {
        function_id: id,
        line,
        ..Default::default()
    }
}

/// Locations of several lines: a frame and the frames the input inlined into
/// it ([`Profile::inline_calls`]), made once each. A
/// frame on its own is the location of its function's id.
#[derive(Default)]
struct Locations {
    by_run: HashMap<Vec<u32>, u64>,
}

impl Locations {
    /// The location ids of a root-first `path`, leaf first as pprof lists them.
    fn of_path(
        &mut self,
        p: &Profile,
        path: &[FrameId],
        index: &[u32],
        out: &mut Vec<proto::Location>,
    ) -> Vec<u64> {
        let mut ids = Vec::new();
        let mut start = 0;
        for i in 1..=path.len() {
            let joined = i < path.len() && p.inline_calls.contains(&(path[i - 1], path[i]));
            if joined {
                continue;
            }
            let run = &path[start..i];
            start = i;
            let id = if let [f] = run {
                u64::from(index[f.0 as usize]) + 1
            } else {
                let key: Vec<u32> = run.iter().map(|f| index[f.0 as usize]).collect();
                // Ids past the one-frame locations, which come first.
                let next = out.len() as u64 + 1;
                *self.by_run.entry(key).or_insert_with(|| {
                    // pprof lists a location's lines innermost first.
                    let line = run
                        .iter()
                        .rev()
                        .map(|f| line_of(p, *f, u64::from(index[f.0 as usize]) + 1))
                        .collect();
                    out.push(proto::Location {
                        id: next,
                        line,
                        ..Default::default()
                    });
                    next
                })
            };
            ids.push(id);
        }
        ids.reverse(); // pprof lists the leaf first
        ids
    }
}

/// No stack, or no label set.
const NONE: u32 = u32::MAX;

/// The samples to write, summed where pprof would sum them anyway: per stack
/// for plain samples (`dense`), and per (stack, label set, sign) for the rest.
/// pprof merges only samples of equal stacks and labels, and its total adds
/// |value| per sample, so labelled samples stay apart (their labels written
/// back) and so do the gains and losses of a delta profile (a loss carries
/// the label `delta=negative`, or pprof would merge it into the gain again).
struct Groups {
    stride: usize,
    /// `dense[s * stride + v]`: unlabelled samples of stack `s` with no value below 0.
    dense: Vec<i64>,
    /// (stack or [`NONE`], label set or [`NONE`], negative part) of each `extra` row.
    keys: Vec<(u32, u32, bool)>,
    extra: Vec<i64>,
}

impl Groups {
    fn gather(scope: &Scope) -> Groups {
        let p = scope.profile;
        let stride = p.value_types.len().max(1);
        let (range, mask) = scope.samples();
        let mut g = Groups {
            stride,
            dense: vec![0; p.stacks.len() * stride],
            keys: Vec::new(),
            extra: Vec::new(),
        };
        let mut rows: HashMap<(u32, u32, bool), usize> = HashMap::new();
        let mut add =
            |g: &mut Groups, key: (u32, u32, bool), vals: &mut dyn Iterator<Item = i64>| {
                let row = *rows.entry(key).or_insert_with(|| {
                    g.keys.push(key);
                    g.extra.resize(g.extra.len() + stride, 0);
                    g.keys.len() - 1
                });
                for (d, v) in g.extra[row * stride..(row + 1) * stride]
                    .iter_mut()
                    .zip(vals)
                {
                    *d += v;
                }
            };
        for i in range {
            let stack = match p.samples.stack_of(i) {
                Some(s) if mask.as_ref().is_none_or(|m| m[s.0 as usize]) => s.0,
                None if mask.is_none() => NONE,
                _ => continue,
            };
            let vals = &p.samples.values[i * stride..(i + 1) * stride];
            let set = p
                .samples
                .labels
                .as_ref()
                .map(|l| l[i])
                .filter(|&set| {
                    p.label_sets
                        .get(set as usize)
                        .is_some_and(|s| !s.is_empty())
                })
                .unwrap_or(NONE);
            let negative = vals.iter().any(|&v| v < 0);
            if stack != NONE && set == NONE && !negative {
                let at = stack as usize * stride;
                for (d, v) in g.dense[at..at + stride].iter_mut().zip(vals) {
                    *d += v;
                }
                continue;
            }
            add(
                &mut g,
                (stack, set, false),
                &mut vals.iter().map(|&v| v.max(0)),
            );
            if negative {
                add(
                    &mut g,
                    (stack, set, true),
                    &mut vals.iter().map(|&v| v.min(0)),
                );
            }
        }
        g
    }

    /// The frames of the stacks written, in the order first used, as
    /// (frames, index of each frame id in that order).
    fn used_frames(&self, p: &Profile) -> (Vec<FrameId>, Vec<u32>) {
        let mut used = vec![false; p.stacks.len()];
        for (s, vals) in self.dense.chunks(self.stride).enumerate() {
            used[s] = vals.iter().any(|&v| v != 0);
        }
        for &(stack, _, _) in &self.keys {
            if stack != NONE {
                used[stack as usize] = true;
            }
        }
        let mut index = vec![u32::MAX; p.frames.len()];
        let mut order = Vec::new();
        for s in (0..p.stacks.len()).filter(|&s| used[s]) {
            for f in p.stacks.path(StackId(s as u32)) {
                if index[f.0 as usize] == u32::MAX {
                    index[f.0 as usize] = order.len() as u32;
                    order.push(f);
                }
            }
        }
        (order, index)
    }
}

/// A label as pprof had it: ember keeps labels as text, a number as `576` or
/// `576 bytes`, which goes back as a numeric label with its unit.
fn label_of(strings: &mut Strings, key: &str, value: &str) -> proto::Label {
    let key = strings.get(key.as_bytes());
    let (num, unit) = value.split_once(' ').unwrap_or((value, ""));
    match num.parse::<i64>() {
        Ok(num) if unit.chars().all(|c| c.is_ascii_alphabetic()) => proto::Label {
            key,
            num,
            num_unit: if unit.is_empty() {
                0
            } else {
                strings.get(unit.as_bytes())
            },
            ..Default::default()
        },
        _ => proto::Label {
            key,
            str: strings.get(value.as_bytes()),
            ..Default::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A label's text goes back as a number only where ember's rendering of
    /// a numeric label made it: `576` or `576 bytes`.
    #[test]
    fn numbers_with_a_unit_word_go_back_as_numeric_labels() {
        let mut strings = Strings::new();
        let l = label_of(&mut strings, "bytes", "576 bytes");
        assert_eq!((l.num, l.str != 0, l.num_unit != 0), (576, false, true));
        let l = label_of(&mut strings, "n", "12");
        assert_eq!((l.num, l.str, l.num_unit), (12, 0, 0));
        for text in ["1 2", "abc", "12 ms later", "-"] {
            let l = label_of(&mut strings, "k", text);
            assert!(l.str != 0 && l.num == 0, "{text}");
        }
    }
}
