//! The memory limits that apply to this process, read once, and the one
//! message ember prints when an allocation fails under them.
//!
//! Sources: `RLIMIT_AS` (`ulimit -v`), `RLIMIT_DATA` (`ulimit -d`), the cgroup's
//! `memory.max` (v2) or `memory.limit_in_bytes` (v1), and `MemAvailable`.

use std::path::Path;
use std::sync::OnceLock;

/// One limit: bytes and where it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Limit {
    pub bytes: u64,
    pub source: &'static str,
}

/// The limits found (none set is an empty list) and the memory available.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Limits {
    pub limits: Vec<Limit>,
    pub available: Option<u64>,
}

/// Larger than any real limit: what the kernel reports for "no limit" in v1.
const UNLIMITED_V1: u64 = 1 << 60;

impl Limits {
    /// Reads every source; what cannot be read is left out.
    pub fn read() -> Limits {
        use rustix::process::{Resource, getrlimit};
        let mut limits = Vec::new();
        for (r, source) in [(Resource::As, "ulimit -v"), (Resource::Data, "ulimit -d")] {
            if let Some(bytes) = getrlimit(r).current {
                limits.push(Limit { bytes, source });
            }
        }
        if let Some(limit) =
            cgroup_limit(Path::new("/proc/self/cgroup"), Path::new("/sys/fs/cgroup"))
        {
            limits.push(limit);
        }
        let available = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| mem_available(&m));
        Limits { limits, available }
    }

    /// The tightest limit, if any.
    pub fn tightest(&self) -> Option<&Limit> {
        self.limits.iter().min_by_key(|l| l.bytes)
    }

    /// `limit 146 MiB from ulimit -v, cgroup memory.max 512 MiB; 20.1 GiB available`.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut sorted: Vec<&Limit> = self.limits.iter().collect();
        sorted.sort_by_key(|l| l.bytes);
        for (i, l) in sorted.iter().enumerate() {
            parts.push(if i == 0 {
                format!("limit {} from {}", mib(l.bytes), l.source)
            } else {
                format!("{} {}", l.source, mib(l.bytes))
            });
        }
        let mut out = if parts.is_empty() {
            "no memory limit set".to_string()
        } else {
            parts.join(", ")
        };
        if let Some(a) = self.available {
            out.push_str(&format!("; {} available", mib(a)));
        }
        out
    }
}

/// `146 MiB`, `2.4 GiB`.
pub fn mib(bytes: u64) -> String {
    let m = bytes as f64 / (1024.0 * 1024.0);
    if m >= 1024.0 {
        format!("{:.1} GiB", m / 1024.0)
    } else {
        format!("{m:.0} MiB")
    }
}

/// The cgroup limit of this process: v2's `memory.max` of its own cgroup
/// (a line `0::/path` in `/proc/self/cgroup`), else v1's
/// `memory.limit_in_bytes` (a line `N:memory:/path`). `max` or v1's huge
/// "unlimited" value is no limit.
fn cgroup_limit(proc_cgroup: &Path, root: &Path) -> Option<Limit> {
    let text = std::fs::read_to_string(proc_cgroup).ok()?;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        let (file, source) = if controllers.is_empty() {
            (root.join(rel).join("memory.max"), "cgroup memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                root.join("memory").join(rel).join("memory.limit_in_bytes"),
                "cgroup memory.limit_in_bytes",
            )
        } else {
            continue;
        };
        let Ok(value) = std::fs::read_to_string(&file) else {
            continue;
        };
        if let Ok(bytes) = value.trim().parse::<u64>()
            && bytes < UNLIMITED_V1
        {
            return Some(Limit { bytes, source });
        }
    }
    None
}

/// The memory this process's cgroup uses now (v2 `memory.current`, v1
/// `memory.usage_in_bytes`), to tell how much of its limit is left.
pub fn cgroup_usage() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let root = Path::new("/sys/fs/cgroup");
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        let file = if controllers.is_empty() {
            root.join(rel).join("memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            root.join("memory").join(rel).join("memory.usage_in_bytes")
        } else {
            return None;
        };
        std::fs::read_to_string(file).ok()?.trim().parse().ok()
    })
}

/// The count of OOM kills in this process's cgroup (v2 `memory.events`), to
/// tell a SIGKILL from the OOM killer from another.
pub fn oom_kills() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    let events = Path::new("/sys/fs/cgroup")
        .join(path.trim_start_matches('/'))
        .join("memory.events");
    let events = std::fs::read_to_string(events).ok()?;
    events
        .lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|n| n.trim().parse().ok())
}

/// This process's peak resident memory so far (`VmHWM`), in bytes.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&status, "VmHWM:")
}

/// `MemAvailable:  20581068 kB` in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    kib_field(meminfo, "MemAvailable:")
}

/// The value of a `Key:   N kB` line of a /proc file (`key` with its colon),
/// in bytes.
pub(crate) fn kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What to try when memory runs out, for every message that says it did.
/// (`--only-thread` and `--from/--until` are applied after the whole file is
/// read, so they do not lower a load's peak and are not offered.)
pub const TRY: &str = "try: a higher limit or a host with more memory; `ember info` on the \
file under a higher limit says what its load takes; for a folded file, `ember top` sums it \
while reading, in about the memory of its frame names";

static MESSAGE: OnceLock<String> = OnceLock::new();

/// Composes, while memory is still there, what [`out_of_memory`] will print:
/// `doing` is what ember is about to do (`loading big.folded`).
pub fn prepare(doing: &str) {
    let limits = Limits::read();
    let _ = MESSAGE.set(format!(
        "ember ran out of memory {doing} ({})\n  {TRY}\n",
        limits.describe()
    ));
}

/// The prepared message (a default when [`prepare`] never ran).
pub fn message() -> &'static str {
    MESSAGE
        .get()
        .map(String::as_str)
        .unwrap_or("ember ran out of memory\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_v2_and_v1_limits_are_found_and_unlimited_is_none() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
        };
        write("proc-v2", "0::/user.slice/ember.scope\n");
        write("user.slice/ember.scope/memory.max", "536870912\n");
        assert_eq!(
            cgroup_limit(&root.join("proc-v2"), root),
            Some(Limit {
                bytes: 512 << 20,
                source: "cgroup memory.max"
            })
        );
        write("user.slice/ember.scope/memory.max", "max\n");
        assert_eq!(cgroup_limit(&root.join("proc-v2"), root), None);
        write("proc-v1", "12:cpu,cpuacct:/x\n4:memory:/docker/abc\n");
        write("memory/docker/abc/memory.limit_in_bytes", "268435456\n");
        assert_eq!(
            cgroup_limit(&root.join("proc-v1"), root).map(|l| (l.bytes, l.source)),
            Some((256 << 20, "cgroup memory.limit_in_bytes"))
        );
        write(
            "memory/docker/abc/memory.limit_in_bytes",
            "9223372036854771712\n",
        );
        assert_eq!(cgroup_limit(&root.join("proc-v1"), root), None);
    }

    #[test]
    fn the_description_puts_the_tightest_first() {
        let l = Limits {
            limits: vec![
                Limit {
                    bytes: 512 << 20,
                    source: "cgroup memory.max",
                },
                Limit {
                    bytes: 146 << 20,
                    source: "ulimit -v",
                },
            ],
            available: Some(3 << 30),
        };
        assert_eq!(
            l.describe(),
            "limit 146 MiB from ulimit -v, cgroup memory.max 512 MiB; 3.0 GiB available"
        );
        assert_eq!(l.tightest().map(|l| l.bytes), Some(146 << 20));
        assert_eq!(
            mem_available("MemTotal: 10 kB\nMemAvailable:   2048 kB\n"),
            Some(2 << 20)
        );
    }
}
