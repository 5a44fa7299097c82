//! The global allocator: the system's, plus a hint that big blocks may be
//! backed by transparent huge pages.
//!
//! Why: the inverted view of a 1M-line profile fills about 1 GB of fresh
//! arrays (29M stacks, their tree weights and child lists), and with 4 KiB
//! pages the kernel's page faults (zeroing, cgroup charging) were a third of
//! its time. Most distributions set THP to `madvise`, so a block is only
//! backed by 2 MiB pages when asked: `madvise(MADV_HUGEPAGE)` on every block
//! of at least [`BIG`] bytes, right after the system allocator hands it out and
//! before anything touches it. Small blocks are left alone (huge pages would
//! round them up). Where THP is `never` or the call fails, nothing changes.
//! `EMBER_HUGEPAGES=0` turns the hint off ([`set_enabled`]), `=1` on; it is
//! off by default in a VM that reports free pages to its host, where huge
//! pages cost more than they save ([`reports_free_pages`]).
//!
//! A failed allocation ends ember here, not in the standard library's abort
//! (exit 134 and `memory allocation of N bytes failed` across the screen): a
//! batch command prints [`crate::host::limits::message`] (prepared at start) and exits 1;
//! the viewer under its supervising parent exits [`OOM_EXIT`], and the parent,
//! having put the terminal back, says it. Nothing in ember uses `try_reserve`,
//! whose callers would have coped with a null.
//!
//! The hint covers the block's whole pages, so a block glibc maps on its own
//! keeps one mapping (a part-covered mapping would be split, and a later
//! `mremap` of the block would fail and copy instead).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// The exit code of a supervised viewer that ran out of memory (the parent
/// turns it into a message and exit 1).
pub const OOM_EXIT: i32 = 86;

static SUPERVISED: AtomicBool = AtomicBool::new(false);
static FAILING: AtomicBool = AtomicBool::new(false);

/// Marks this process as the viewer child of a supervising parent.
pub fn set_supervised(on: bool) {
    SUPERVISED.store(on, Ordering::Relaxed);
}

/// Ends the process on a failed allocation, allocating nothing.
#[cold]
fn out_of_memory() -> ! {
    if FAILING.swap(true, Ordering::SeqCst) {
        std::process::abort(); // failed again while failing: nothing left to say
    }
    if SUPERVISED.load(Ordering::Relaxed) {
        std::process::exit(OOM_EXIT);
    }
    let _ = std::io::stderr().write_all(crate::host::limits::message().as_bytes());
    std::process::exit(1)
}

/// Blocks this large or larger get the hint.
pub const BIG: usize = 8 << 20;

static ENABLED: AtomicBool = AtomicBool::new(cfg!(target_os = "linux"));

/// Turns the huge-page hint on or off for blocks allocated from now on.
pub fn set_enabled(on: bool) {
    ENABLED.store(on && cfg!(target_os = "linux"), Ordering::Relaxed);
}

/// Reads `EMBER_HUGEPAGES` (`0` turns the hint off, `1` on); without it the
/// hint is off in a virtual machine whose memory balloon reports free pages
/// to the host ([`reports_free_pages`]). Call first thing in `main`.
pub fn from_env() {
    match std::env::var_os("EMBER_HUGEPAGES") {
        Some(v) if v == "0" => set_enabled(false),
        Some(v) if v == "1" => set_enabled(true),
        _ if reports_free_pages(std::path::Path::new("/sys/bus/virtio/devices")) => {
            set_enabled(false);
        }
        _ => {}
    }
}

/// Whether a virtio memory balloon under `devices` (sysfs' virtio device
/// directory) has free page reporting on (feature bit 5). Such a guest hands
/// its free blocks of 2 MiB and more back to the host, which drops them, so a
/// huge page is always a fresh host page: its first touch faults in the host.
/// Measured on such a guest (Firecracker): the first inverted view of a
/// 1M-line profile took 2.4-2.5 s with the hint and 1.0-1.1 s without (4 KiB
/// pages come from recently freed memory the host still backs).
pub fn reports_free_pages(devices: &std::path::Path) -> bool {
    const BALLOON: &str = "0x0005";
    const F_REPORTING: usize = 5;
    let Ok(entries) = std::fs::read_dir(devices) else {
        return false;
    };
    entries.flatten().any(|e| {
        let read = |name: &str| std::fs::read_to_string(e.path().join(name)).unwrap_or_default();
        read("device").trim() == BALLOON
            && read("features").as_bytes().get(F_REPORTING) == Some(&b'1')
    })
}

/// `n` zeros, every page of them already written. A fresh zeroed block is
/// mapped lazily: read first (`count[p] += 1` reads before it writes), a page
/// is mapped to the shared zero page and then copied on the write, and that
/// copy flushes the page from every CPU the process runs on (an IPI to each
/// other thread's CPU, dear in a VM: 8% of an inverted view's build in
/// `perf`). One write per page up front makes the first fault the last.
pub fn zeros_written<T: Copy + Default>(n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    let step = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    for i in (0..n).step_by(step) {
        // Through a pointer the optimiser cannot see through: a store of
        // zero into memory it knows to be zeroed would otherwise go.
        *std::hint::black_box(&mut v[i]) = T::default();
    }
    v
}

/// A vector of `n` slots for a table read at random places (a gather over
/// tens of megabytes): backed by huge pages, whatever [`enabled`] says, as
/// its TLB misses cost more than any page fault. Filled by the caller.
pub fn for_random_reads<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    madvise_huge(v.as_ptr() as *mut u8, n * std::mem::size_of::<T>());
    v
}

/// Whether the hint is given.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

pub struct HugePageHint;

#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, size: usize) {
    if enabled() {
        madvise_huge(ptr, size);
    }
}

#[cfg(target_os = "linux")]
fn madvise_huge(ptr: *mut u8, size: usize) {
    if ptr.is_null() || size < BIG {
        return;
    }
    const PAGE: usize = 4096;
    let start = (ptr as usize) & !(PAGE - 1);
    let end = (ptr as usize).saturating_add(size).div_ceil(PAGE) * PAGE;
    // SAFETY: [start, end) lies within whole pages of the block just allocated
    // (the block starts at or after `start` and ends at or before `end`, and
    // a block never shares a page with a mapping it does not own). MADV_HUGEPAGE
    // only changes how later faults are served: it moves, frees or changes no
    // byte, so no reference anywhere can observe it. Errors are ignored.
    unsafe {
        let _ = rustix::mm::madvise(
            start as *mut std::ffi::c_void,
            end - start,
            rustix::mm::Advice::LinuxHugepage,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_ptr: *mut u8, _size: usize) {}

// SAFETY: every call is forwarded to `System` with the same arguments; the
// hint neither allocates nor touches the block's contents.
unsafe impl GlobalAlloc for HugePageHint {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            out_of_memory();
        }
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory();
        }
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            out_of_memory();
        }
        advise(p, new_size);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_balloon_that_reports_free_pages_is_found() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let device = |name: &str, id: &str, features: &str| -> std::io::Result<()> {
            let d = dir.path().join(name);
            std::fs::create_dir(&d)?;
            std::fs::write(d.join("device"), format!("{id}\n"))?;
            std::fs::write(d.join("features"), format!("{features}\n"))
        };
        // A block device with bit 5 set is no balloon.
        device("virtio1", "0x0002", "0010011001")?;
        assert!(!reports_free_pages(dir.path()));
        // A balloon without reporting (bit 5 clear).
        device("virtio0", "0x0005", "0110000100")?;
        assert!(!reports_free_pages(dir.path()));
        device("virtio3", "0x0005", "0110010100")?;
        assert!(reports_free_pages(dir.path()));
        assert!(!reports_free_pages(&dir.path().join("missing")));
        Ok(())
    }

    #[test]
    fn zeros_written_are_zeros() {
        for n in [0, 1, 1023, 1024, 1025, 100_000] {
            let v = zeros_written::<u32>(n);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0));
        }
        let v = zeros_written::<i64>(5000);
        assert!(v.iter().all(|&x| x == 0));
    }

    #[test]
    fn big_blocks_work_and_keep_their_bytes() {
        // A big block filled, grown (realloc after the hint) and read back.
        let mut v: Vec<u64> = (0..(BIG as u64 / 8 + 1000)).collect();
        v.reserve(BIG);
        v.extend(0..10);
        assert_eq!(v[12345], 12345);
        assert_eq!(v[BIG / 8 + 999], (BIG / 8 + 999) as u64);
        assert_eq!(v.last(), Some(&9));
        let z = vec![0u32; BIG];
        assert!(z.iter().step_by(4099).all(|&x| x == 0));
    }

    /// The mapping holding a big block carries the hint (`hg` in its VmFlags).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_big_block_is_marked_for_huge_pages_and_a_small_one_is_not() {
        fn flags_at(addr: usize) -> Option<String> {
            let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
            let mut inside = false;
            for line in smaps.lines() {
                if let Some((range, _)) = line.split_once(' ')
                    && let Some((a, b)) = range.split_once('-')
                    && let (Ok(a), Ok(b)) =
                        (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    inside = (a..b).contains(&addr);
                } else if inside && let Some(f) = line.strip_prefix("VmFlags:") {
                    return Some(f.to_string());
                }
            }
            None
        }
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            return; // a kernel without THP refuses the hint
        }
        let big = vec![1u8; BIG * 2];
        let small = vec![1u8; 4096];
        let Some(big_flags) = flags_at(big.as_ptr() as usize + BIG) else {
            return; // no /proc here: nothing to check
        };
        assert!(
            big_flags.split_whitespace().any(|f| f == "hg"),
            "{big_flags}"
        );
        let small_flags = flags_at(small.as_ptr() as usize).unwrap_or_default();
        assert!(
            !small_flags.split_whitespace().any(|f| f == "hg"),
            "{small_flags}"
        );
    }
}
