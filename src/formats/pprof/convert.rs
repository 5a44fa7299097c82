//! From the decoded message to ember's model: value types, locations as frames,
//! samples as stacks (with [`super::stacks`]), labels, and the profile's facts,
//! one [`Converter`] step each, in the order [`convert`] runs them.

use std::collections::HashMap;

use super::labels::LabelSets;
use super::prune::{FrameFilter, prune_start};
use super::stacks::{NameOrder, build_stacks};
use super::tables::{IdIndex, LocFrames, LocTable, Strings};
use super::{invalid, proto};
use crate::formats::{Granularity, ParseError};
use crate::model::{FrameId, FrameKind, FrameMeta, Profile, StackId, Unit, ValueType};
use crate::sources::input::Progress;

/// Most frames (summed over all samples) per input byte. Each location id takes
/// at least a byte; only inlined lines multiply it, by far less than this.
const FRAMES_PER_BYTE: usize = 16;
/// Samples converted between two checks of the cancel flag.
const CANCEL_EVERY: usize = 1 << 16;

/// `[basename]` of a mapping's file, or `<unknown>`, as pprof names code it has
/// no function name for.
pub(super) fn object_name(file: &[u8]) -> Vec<u8> {
    if file.is_empty() {
        return b"<unknown>".to_vec();
    }
    // Go's filepath.Base: trailing slashes dropped, then the last element.
    let trimmed = match file.iter().rposition(|&b| b != b'/') {
        Some(i) => &file[..=i],
        None => b"/",
    };
    let base = match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) if trimmed.len() > 1 => &trimmed[i + 1..],
        _ => trimmed,
    };
    let mut out = Vec::with_capacity(base.len() + 2);
    out.push(b'[');
    out.extend_from_slice(base);
    out.push(b']');
    out
}

/// Counted problems with ids, reported once each at the end.
#[derive(Default)]
struct IdProblems {
    missing_locations: u64,
    first_missing_location: Option<u64>,
    missing_functions: u64,
    missing_mappings: u64,
    zero_ids: u64,
    duplicate_ids: u64,
    bad_values: u64,
    first_bad_values: Option<(usize, usize)>,
}

/// Converts the decoded message (`input_len` bytes on the wire) to a profile.
pub(super) fn convert(
    m: &proto::Profile,
    input_len: usize,
    progress: &Progress,
    granularity: Granularity,
) -> Result<Profile, ParseError> {
    let mut c = Converter::new(m)?;
    let ids = c.index_ids();
    let filter = c.frame_filter();
    let (loc_table, loc_frames) = c.location_frames(&ids, filter.as_ref(), granularity);
    let SampleFrames {
        order,
        valid,
        seq,
        offs,
    } = c.sample_frames(
        &loc_table,
        loc_frames,
        filter.is_some(),
        input_len,
        progress,
    )?;
    let stack_of = build_stacks(&mut c.profile, &order.by_key, &seq, &offs);
    drop(seq);
    c.push_samples(&valid, &stack_of);
    c.profile_facts();
    c.finish()
}

/// A conversion under way: the message, the profile being filled in, and the
/// problems the steps count for the warnings at the end.
struct Converter<'a> {
    m: &'a proto::Profile,
    strings: Strings<'a>,
    problems: IdProblems,
    profile: Profile,
}

/// The message's id indexes, and what each mapping says of its frames.
struct Ids {
    mapping: IdIndex,
    /// Each mapping's object name (`[basename]`).
    mapping_names: Vec<Vec<u8>>,
    /// Each mapping's file as written (empty when none).
    mapping_files: Vec<String>,
    /// Whether each mapping is the kernel's.
    kernel: Vec<bool>,
    function: IdIndex,
    location: IdIndex,
}

/// Every valid sample's frames, root-first, in one flat array of keys that sort
/// like the frames' names (see `build_stacks`).
struct SampleFrames {
    order: NameOrder,
    /// The position in the message of each valid sample.
    valid: Vec<u32>,
    /// The frame keys of valid sample `k` are `seq[offs[k]..offs[k + 1]]`.
    seq: Vec<u32>,
    offs: Vec<usize>,
}

impl<'a> Converter<'a> {
    /// Reads the value types and the default one (unnamed ones when the message
    /// has none): the empty profile the other steps fill in.
    fn new(m: &'a proto::Profile) -> Result<Converter<'a>, ParseError> {
        let mut strings = Strings::new(&m.string_table);
        let mut value_types: Vec<ValueType> = m
            .sample_type
            .iter()
            .map(|vt| {
                let unit = String::from_utf8_lossy(strings.get(vt.unit)).into_owned();
                ValueType::new(&strings.text(vt.r#type), Unit::from_name(&unit))
            })
            .collect();
        let mut notes = Vec::new();
        if value_types.is_empty() {
            let n = m.sample.first().map_or(0, |s| s.value.len());
            if n == 0 {
                return Err(invalid(format!(
                    "no samples with values in the profile ({} samples, no sample_type)",
                    m.sample.len()
                )));
            }
            value_types = (0..n)
                .map(|i| ValueType::new(&format!("value{i}"), Unit::Count))
                .collect();
            notes.push(format!(
                "no sample_type in the profile: its {n} value(s) are shown unnamed (pprof refuses such a file)"
            ));
        }
        let nvalues = value_types.len();
        let default_name = strings.get(m.default_sample_type);
        let default_value = (!default_name.is_empty())
            .then(|| {
                m.sample_type
                    .iter()
                    .position(|vt| strings.get(vt.r#type) == default_name)
            })
            .flatten()
            .unwrap_or(nvalues - 1);

        let mut profile = Profile::new("pprof", value_types);
        profile.default_value = default_value;
        profile.notes = notes;
        if m.string_table.first().is_some_and(|s| !s.is_empty()) {
            profile.warnings.push(
                0,
                "string_table[0] is not the empty string (pprof refuses this)",
            );
        }
        Ok(Converter {
            m,
            strings,
            problems: IdProblems::default(),
            profile,
        })
    }

    /// Indexes the mappings (with their object names), functions and locations
    /// by id, counting ids that are 0 or repeated.
    fn index_ids(&mut self) -> Ids {
        let m = self.m;
        let problems = &mut self.problems;
        let (mapping, z, d) = IdIndex::new(m.mapping.iter().map(|x| x.id));
        problems.zero_ids += z;
        problems.duplicate_ids += d;
        let mapping_files: Vec<&[u8]> = m
            .mapping
            .iter()
            .map(|x| self.strings.get(x.filename))
            .collect();
        let mapping_names: Vec<Vec<u8>> = mapping_files.iter().map(|f| object_name(f)).collect();
        let files = mapping_files
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        let kernel: Vec<bool> = mapping_files
            .iter()
            .map(|f| f.starts_with(b"[kernel"))
            .collect();

        let (function, z, d) = IdIndex::new(m.function.iter().map(|x| x.id));
        problems.zero_ids += z;
        problems.duplicate_ids += d;

        let (location, z, d) = IdIndex::new(m.location.iter().map(|x| x.id));
        problems.zero_ids += z;
        problems.duplicate_ids += d;
        Ids {
            mapping,
            mapping_names,
            mapping_files: files,
            kernel,
            function,
            location,
        }
    }

    /// `drop_frames` / `keep_frames` as pprof's `Prune` applies them, when they
    /// are plain names; a note says so when `drop_frames` is a regex we skip.
    fn frame_filter(&mut self) -> Option<FrameFilter> {
        let (m, strings) = (self.m, &mut self.strings);
        let filter = FrameFilter::new(strings.get(m.drop_frames), strings.get(m.keep_frames));
        if filter.is_none() && m.drop_frames != 0 && !strings.get(m.drop_frames).is_empty() {
            self.profile.notes.push(
                "drop_frames is a regular expression ember does not apply: frames pprof would hide are shown"
                    .into(),
            );
        }
        filter
    }

    /// Makes each location its frames once, root-first (inlined lines first),
    /// cut where `filter` drops a frame, and records where each frame is first
    /// met as its source. Returns the locations by id and the flat array of
    /// every location's frames their spans point into.
    /// Each location's frames (inlined lines first), named at `granularity`
    /// as pprof's `-lines` and `-files` name them: `function file:line`, or
    /// the file; code without a function (or, for files, without a file) is
    /// its object, `[basename]`.
    fn location_frames(
        &mut self,
        ids: &Ids,
        filter: Option<&FrameFilter>,
        granularity: Granularity,
    ) -> (LocTable, Vec<FrameId>) {
        let m = self.m;
        let Converter {
            strings,
            problems,
            profile,
            ..
        } = self;
        let unknown_object = profile.frames.intern(b"<unknown>");
        let mut locs: Vec<LocFrames> = Vec::with_capacity(m.location.len());
        let mut loc_frames: Vec<FrameId> = Vec::with_capacity(m.location.len());
        // One location's lines: (frame, function, line number, kind, dropped).
        let mut lines: Vec<(FrameId, Option<&proto::Function>, i64, FrameKind, bool)> = Vec::new();
        for loc in &m.location {
            let mapping = if loc.mapping_id == 0 {
                None
            } else {
                let found = ids.mapping.get(loc.mapping_id);
                if found.is_none() && !m.mapping.is_empty() {
                    problems.missing_mappings += 1;
                }
                found
            };
            let object = mapping.map_or(unknown_object, |i| {
                profile.frames.intern(&ids.mapping_names[i])
            });
            let outer_kind = if mapping.is_some_and(|i| ids.kernel[i]) {
                FrameKind::Kernel
            } else {
                FrameKind::Normal
            };
            let object_file = mapping
                .map(|i| ids.mapping_files[i].as_str())
                .filter(|f| !f.is_empty());
            lines.clear();
            let last = loc.line.len().saturating_sub(1);
            for (li, line) in loc.line.iter().enumerate() {
                let function = if line.function_id == 0 {
                    None
                } else {
                    let found = ids.function.get(line.function_id);
                    if found.is_none() {
                        problems.missing_functions += 1;
                    }
                    found.map(|i| &m.function[i])
                };
                let name = function.map_or(&b""[..], |f| strings.get(f.name));
                let file = function.map_or(&b""[..], |f| strings.get(f.filename));
                let line_no = u32::try_from(line.line).ok();
                let frame = match granularity {
                    _ if function.is_none() => object,
                    Granularity::File if file.is_empty() => object,
                    Granularity::Function | Granularity::Line if name.is_empty() => object,
                    g => profile.frames.intern(&g.frame_name(name, file, line_no)),
                };
                let kind = if li < last {
                    FrameKind::Inlined
                } else {
                    outer_kind
                };
                let dropped = filter.is_some_and(|f| !name.is_empty() && f.drops(name));
                lines.push((frame, function, line.line, kind, dropped));
            }
            if lines.is_empty() {
                lines.push((object, None, 0, outer_kind, false));
            }
            // pprof's Prune: the outermost dropped line cuts the location there.
            let mut entry = LocFrames::default();
            let mut keep_from = 0;
            if let Some(i) = lines.iter().rposition(|l| l.4) {
                entry.beneath = true;
                if i + 1 == lines.len() {
                    entry.prune = true;
                } else {
                    keep_from = i + 1;
                }
            }
            entry.start = loc_frames.len() as u32;
            for &(frame, function, line, kind, _) in lines.iter().skip(keep_from).rev() {
                if loc_frames.len() as u32 > entry.start {
                    // Each line below the location's first is inlined into the one above.
                    profile
                        .inline_calls
                        .insert((loc_frames[loc_frames.len() - 1], frame));
                }
                loc_frames.push(frame);
                // Where a frame is first met is where it says it comes from.
                profile
                    .frame_meta
                    .entry(frame)
                    .or_insert_with(|| FrameMeta {
                        file: function
                            .map(|f| strings.get(f.filename))
                            .filter(|f| !f.is_empty())
                            .map(|f| String::from_utf8_lossy(f).into_owned()),
                        line: u32::try_from(line).ok().filter(|&l| l > 0),
                        kind,
                        system_name: function
                            .map(|f| strings.get(f.system_name))
                            .filter(|n| !n.is_empty())
                            .map(|n| String::from_utf8_lossy(n).into_owned()),
                        object: object_file.map(str::to_string),
                    });
            }
            entry.len = loc_frames.len() as u32 - entry.start;
            locs.push(entry);
        }
        let loc_table = LocTable::new(&ids.location, &m.location, &locs);
        (loc_table, loc_frames)
    }

    /// Each sample with the right number of values becomes its frames, root-first
    /// (pruned when `prune`; a missing location is an `[unknown location]`
    /// frame), bounded by what `input_len` bytes can sensibly hold.
    fn sample_frames(
        &mut self,
        loc_table: &LocTable,
        loc_frames: Vec<FrameId>,
        prune: bool,
        input_len: usize,
        progress: &Progress,
    ) -> Result<SampleFrames, ParseError> {
        let m = self.m;
        let Converter {
            problems, profile, ..
        } = self;
        let nvalues = profile.value_types.len();
        let mut order = NameOrder::new(&profile.frames);
        let loc_keys: Vec<u32> = loc_frames.iter().map(|&f| order.key(f)).collect();
        drop(loc_frames);
        let mut valid: Vec<u32> = Vec::with_capacity(m.sample.len());
        let mut seq: Vec<u32> =
            Vec::with_capacity(m.sample.iter().map(|s| s.location_id.len()).sum());
        let mut offs: Vec<usize> = Vec::with_capacity(m.sample.len() + 1);
        let mut unknown: HashMap<u64, u32> = HashMap::new();
        let frame_limit = input_len
            .saturating_mul(FRAMES_PER_BYTE)
            .saturating_add(1 << 20);
        offs.push(0);
        for (si, s) in m.sample.iter().enumerate() {
            if si % CANCEL_EVERY == 0 && progress.is_cancelled() {
                return Err(ParseError::Cancelled);
            }
            if s.value.len() != nvalues {
                problems.bad_values += 1;
                problems.first_bad_values.get_or_insert((si, s.value.len()));
                continue;
            }
            let lo = if prune {
                prune_start(&s.location_id, |id| loc_table.get(id))
            } else {
                0
            };
            for &id in s.location_id[lo..].iter().rev() {
                match loc_table.get(id) {
                    Some(l) if l.len == 1 => seq.push(loc_keys[l.start as usize]),
                    Some(l) => {
                        // Inlined lines multiply a location: bound what a small
                        // input can make us hold.
                        if seq.len() + l.len as usize > frame_limit {
                            return Err(invalid(format!(
                                "the stacks would hold more than {frame_limit} frames \
                                 ({FRAMES_PER_BYTE} per input byte): too many inlined lines per location"
                            )));
                        }
                        seq.extend_from_slice(
                            &loc_keys[l.start as usize..(l.start + l.len) as usize],
                        );
                    }
                    None => {
                        problems.missing_locations += 1;
                        problems.first_missing_location.get_or_insert(id);
                        let key = match unknown.get(&id) {
                            Some(&k) => k,
                            None => {
                                let name = format!("[unknown location {id:#x}]");
                                let k = order.key(profile.frames.intern(name.as_bytes()));
                                unknown.insert(id, k);
                                k
                            }
                        };
                        seq.push(key);
                    }
                }
            }
            valid.push(si as u32);
            offs.push(seq.len());
        }
        if progress.is_cancelled() {
            return Err(ParseError::Cancelled);
        }
        Ok(SampleFrames {
            order,
            valid,
            seq,
            offs,
        })
    }

    /// Pushes the valid samples in file order with their stacks (`stack_of`,
    /// from `build_stacks`), values and label sets.
    fn push_samples(&mut self, valid: &[u32], stack_of: &[u32]) {
        let m = self.m;
        let profile = &mut self.profile;
        let nvalues = profile.value_types.len();
        let mut labels = LabelSets::default();
        profile.samples.stack.reserve(valid.len());
        profile
            .samples
            .values
            .reserve(valid.len().saturating_mul(nvalues));
        for (k, &si) in valid.iter().enumerate() {
            let s = &m.sample[si as usize];
            let stack = stack_of[k];
            profile.push_sample((stack != u32::MAX).then_some(StackId(stack)), &s.value);
            if !s.label.is_empty() || labels.any {
                let set = labels.set_of(&s.label, &mut self.strings);
                labels.push(k, set);
            }
        }
        labels.finish(profile);
    }

    /// The profile's facts: start time, duration, period, comments, the
    /// frame filters and doc URL as written, the main binary and its build id.
    fn profile_facts(&mut self) {
        let (m, strings) = (self.m, &mut self.strings);
        let meta = &mut self.profile.meta;
        meta.start_unix_ns = u64::try_from(m.time_nanos).ok().filter(|&t| t > 0);
        meta.duration_ns = u64::try_from(m.duration_nanos).ok().filter(|&t| t > 0);
        if m.period != 0 {
            let pt = m.period_type.unwrap_or_default();
            let unit = String::from_utf8_lossy(strings.get(pt.unit)).into_owned();
            meta.period = Some((
                m.period,
                ValueType::new(&strings.text(pt.r#type), Unit::from_name(&unit)),
            ));
        }
        for &c in &m.comment {
            meta.extra.push(("comment".into(), strings.text(c)));
        }
        for (key, idx) in [
            ("drop_frames", m.drop_frames),
            ("keep_frames", m.keep_frames),
            ("doc_url", m.doc_url),
        ] {
            if idx != 0 {
                meta.extra.push((key.into(), strings.text(idx)));
            }
        }
        if let Some(main) = m.mapping.first() {
            let file = strings.text(main.filename);
            if !file.is_empty() {
                meta.extra.push(("binary".into(), file));
            }
            let build = strings.text(main.build_id);
            if !build.is_empty() {
                meta.extra.push(("build_id".into(), build));
            }
        }
    }

    /// Turns the counted problems into warnings; a profile left without
    /// samples is an error that says why.
    fn finish(self) -> Result<Profile, ParseError> {
        let Converter {
            m,
            strings,
            problems,
            mut profile,
        } = self;
        report(&mut profile, &problems, strings.bad(), m);
        if profile.samples.is_empty() {
            let why = match profile.warnings.first.first() {
                Some(w) => format!("; {}", w.message),
                None => String::new(),
            };
            return Err(invalid(format!(
                "no samples in the profile ({} sample records, {} sample types){why}",
                m.sample.len(),
                m.sample_type.len()
            )));
        }
        Ok(profile)
    }
}

/// Turns counted problems into warnings.
fn report(profile: &mut Profile, p: &IdProblems, bad_strings: u64, m: &proto::Profile) {
    let w = &mut profile.warnings;
    if let Some((i, n)) = p.first_bad_values {
        w.push(
            0,
            format!(
                "{} sample(s) skipped: their number of values differs from the {} sample types (the first, sample {i}, has {n})",
                p.bad_values,
                m.sample_type.len().max(1)
            ),
        );
    }
    if let Some(id) = p.first_missing_location {
        w.push(
            0,
            format!(
                "{} reference(s) to missing locations (the first, id {id}) are shown as [unknown location]",
                p.missing_locations
            ),
        );
    }
    if p.missing_functions > 0 {
        w.push(
            0,
            format!(
                "{} line(s) name a missing function; named after their mapping instead",
                p.missing_functions
            ),
        );
    }
    if p.missing_mappings > 0 {
        w.push(
            0,
            format!(
                "{} location(s) name a missing mapping; shown as <unknown>",
                p.missing_mappings
            ),
        );
    }
    if p.zero_ids > 0 || p.duplicate_ids > 0 {
        w.push(
            0,
            format!(
                "{} mapping/location/function record(s) with id 0 and {} with a repeated id were ignored",
                p.zero_ids, p.duplicate_ids
            ),
        );
    }
    if bad_strings > 0 {
        w.push(
            0,
            format!(
                "{bad_strings} string index(es) outside the string table ({} entries) read as empty",
                m.string_table.len()
            ),
        );
    }
}
