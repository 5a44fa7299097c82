//! The tables of an iostat text report: one per device header, the columns
//! it reads and the series of each device under it.

use std::collections::HashMap;

use super::super::build::Builder;
use super::super::scan::human_num;
use super::super::{Entity, Metric};
use super::disk_column;

/// One device header's layout.
pub(super) struct Table {
    /// The header's fields joined by one blank.
    pub key: String,
    pub name_last: bool,
    /// How many values a row has.
    pub width: usize,
    /// The columns read: (value index, scale to KiB-based units), in order.
    pub read: Vec<(usize, f32)>,
    metrics: Vec<Metric>,
    /// The devices seen under this header, in first-seen order.
    devs: Vec<Device>,
    index: HashMap<String, usize>,
    /// Where the next row's device is expected in `devs`: rows come in the
    /// same order in every report, so the lookup is one string compare.
    pub next: usize,
}

/// A device of a table: the series id of each column read.
struct Device {
    name: String,
    ids: Vec<usize>,
}

impl Table {
    pub(super) fn new(key: String, name_last: bool, names: &[&str]) -> Table {
        let cols: Vec<_> = names.iter().map(|c| disk_column(c)).collect();
        Table {
            key,
            name_last,
            width: names.len(),
            read: (cols.iter().enumerate())
                .filter_map(|(k, c)| Some((k, c.as_ref()?.1)))
                .collect(),
            metrics: cols.iter().filter_map(|c| Some(c.as_ref()?.0)).collect(),
            devs: Vec::new(),
            index: HashMap::new(),
            next: 0,
        }
    }

    /// The series ids of `dev`'s columns, added on first sight.
    pub(super) fn device(&mut self, dev: &str, b: &mut Builder) -> &[usize] {
        let k = match self.devs.get(self.next) {
            Some(d) if d.name == dev => self.next,
            _ => match self.index.get(dev) {
                Some(&k) => k,
                None => {
                    let entity = Entity::Device(dev.to_string());
                    let ids = self.metrics.iter().map(|&m| b.series_id(m, &entity));
                    let ids = ids.collect();
                    self.index.insert(dev.to_string(), self.devs.len());
                    self.devs.push(Device {
                        name: dev.to_string(),
                        ids,
                    });
                    self.devs.len() - 1
                }
            },
        };
        self.next = k + 1;
        self.devs.get(k).map_or(&[], |d| &d.ids)
    }
}

/// Sets one device value read from `tok`.
pub(super) fn put(b: &mut Builder, comma: &mut bool, n: u32, (id, scale): (usize, f32), tok: &str) {
    match human_num(tok) {
        Some(h) => {
            *comma |= h.comma;
            b.set(id, if h.suffixed { h.value } else { h.value * scale });
        }
        None => b.warn(n, format!("unreadable number {tok}")),
    }
}
