//! Sample labels: deduplicated label sets, and threads from thread labels.

use std::collections::HashMap;

use super::proto;
use super::tables::Strings;
use crate::model::{Profile, ThreadInfo};

/// Deduplicated label sets and the per-sample column, built as samples arrive.
#[derive(Default)]
pub(super) struct LabelSets {
    /// Raw (key, str, num, unit) lists -> set index.
    raw: HashMap<Vec<[i64; 4]>, u32>,
    /// Rendered set -> index, so raw lists that read the same share one.
    rendered: HashMap<Vec<(String, String)>, u32>,
    sets: Vec<Vec<(String, String)>>,
    column: Vec<u32>,
    /// Whether any sample had labels (then every later sample gets an entry).
    pub(super) any: bool,
    buf: Vec<[i64; 4]>,
}

const NO_LABELS: u32 = u32::MAX;

impl LabelSets {
    pub(super) fn set_of(&mut self, labels: &[proto::Label], strings: &mut Strings) -> u32 {
        self.buf.clear();
        // pprof ignores a label with neither a string nor a number.
        self.buf.extend(
            labels
                .iter()
                .filter(|l| l.str != 0 || l.num != 0 || l.num_unit != 0)
                .map(|l| [l.key, l.str, l.num, l.num_unit]),
        );
        if self.buf.is_empty() {
            return NO_LABELS;
        }
        if let Some(&i) = self.raw.get(self.buf.as_slice()) {
            return i;
        }
        let mut set: Vec<(String, String)> = self
            .buf
            .iter()
            .map(|&[key, s, num, unit]| {
                let key = strings.text(key);
                let value = if s != 0 {
                    strings.text(s)
                } else {
                    let unit = strings.get(unit);
                    if unit.is_empty() {
                        num.to_string()
                    } else {
                        format!("{num} {}", String::from_utf8_lossy(unit))
                    }
                };
                (key, value)
            })
            .collect();
        set.sort_by(|a, b| a.0.cmp(&b.0));
        let next = self.sets.len() as u32;
        let i = *self.rendered.entry(set.clone()).or_insert(next);
        if i == next {
            self.sets.push(set);
        }
        self.raw.insert(self.buf.clone(), i);
        i
    }

    /// Records sample `sample`'s set (the column starts at the first labelled one).
    pub(super) fn push(&mut self, sample: usize, set: u32) {
        if set == NO_LABELS && !self.any {
            return;
        }
        if !self.any {
            self.any = true;
            self.column.resize(sample, NO_LABELS);
        }
        self.column.push(set);
    }

    pub(super) fn finish(self, profile: &mut Profile) {
        if !self.any {
            return;
        }
        let mut column = self.column;
        column.resize(profile.samples.len(), NO_LABELS);
        // Samples without labels get an empty set so every entry indexes one.
        let mut sets = self.sets;
        if column.contains(&NO_LABELS) {
            let empty = sets.len() as u32;
            sets.push(Vec::new());
            column
                .iter_mut()
                .filter(|c| **c == NO_LABELS)
                .for_each(|c| *c = empty);
        }
        threads_from_labels(profile, &sets, &column);
        profile.label_sets = sets;
        profile.samples.labels = Some(column);
    }
}

/// Threads from `thread`/`thread_name`/`tid`/`pid` labels, when samples carry them.
fn threads_from_labels(profile: &mut Profile, sets: &[Vec<(String, String)>], column: &[u32]) {
    let info: Vec<Option<ThreadInfo>> = sets
        .iter()
        .map(|set| {
            let mut t = ThreadInfo::default();
            let mut any = false;
            for (k, v) in set {
                let number = || v.split(' ').next().and_then(|n| n.parse::<u64>().ok());
                match k.to_ascii_lowercase().as_str() {
                    "thread" | "thread_name" | "threadname" | "thread name" => {
                        match v.parse::<u64>() {
                            Ok(n) => t.tid = Some(n),
                            Err(_) => t.name = v.clone(),
                        }
                        any = true;
                    }
                    "thread_id" | "threadid" | "tid" => {
                        t.tid = number();
                        any |= t.tid.is_some();
                    }
                    "pid" | "process_id" => {
                        t.pid = number();
                        any |= t.pid.is_some();
                    }
                    _ => {}
                }
            }
            if let (true, Some(tid)) = (t.name.is_empty(), t.tid) {
                t.name = format!("thread {tid}");
            }
            any.then_some(t)
        })
        .collect();
    if info.iter().all(Option::is_none) {
        return;
    }
    let mut index: HashMap<ThreadKey, u32> = HashMap::new();
    let mut threads = Vec::new();
    let mut of_set = Vec::with_capacity(info.len());
    for t in info {
        let t = t.unwrap_or_else(|| ThreadInfo {
            name: "(no thread label)".into(),
            ..ThreadInfo::default()
        });
        let key = (t.name.clone(), t.pid, t.tid);
        let i = *index.entry(key).or_insert_with(|| {
            threads.push(t);
            threads.len() as u32 - 1
        });
        of_set.push(i);
    }
    profile.samples.thread = Some(column.iter().map(|&s| of_set[s as usize]).collect());
    profile.threads = threads;
}

type ThreadKey = (String, Option<u64>, Option<u64>);
