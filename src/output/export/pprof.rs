//! The view as a gzipped pprof protobuf (`profile.proto`), read back by
//! `go tool pprof` to the same numbers.

use std::collections::HashMap;
use std::io::Write;

use anyhow::Result;

use super::{Scope, stack_values, used_frames};
use crate::model::{StackId, Unit, ValueType};

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
    use crate::formats::pprof::proto;
    use prost::Message;
    let p = scope.profile;
    let sv = stack_values(scope);
    let (order, index) = used_frames(p, &sv);
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
        let line = meta.and_then(|m| m.line).map_or(0, i64::from);
        m.function.push(proto::Function {
            id,
            name,
            system_name: name,
            filename,
            ..Default::default()
        });
        m.location.push(proto::Location {
            id,
            line: vec![proto::Line {
                function_id: id,
                line,
                ..Default::default()
            }],
            ..Default::default()
        });
    }
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
    for s in 0..p.stacks.len() {
        let vals = &sv.values[s * sv.stride..(s + 1) * sv.stride];
        if vals.iter().all(|&v| v == 0) {
            continue;
        }
        let mut location_id: Vec<u64> = p
            .stacks
            .path(StackId(s as u32))
            .iter()
            .map(|f| u64::from(index[f.0 as usize]) + 1)
            .collect();
        location_id.reverse(); // pprof lists the leaf first
        m.sample.push(proto::Sample {
            location_id,
            value: values_of(vals),
            ..Default::default()
        });
    }
    if sv.no_stack.iter().any(|&v| v != 0) {
        m.sample.push(proto::Sample {
            value: values_of(&sv.no_stack),
            ..Default::default()
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
