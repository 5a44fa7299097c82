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
//! `EMBER_HUGEPAGES=0` turns the hint off ([`set_enabled`]).
//!
//! A failed allocation ends ember here, not in the standard library's abort
//! (exit 134 and `memory allocation of N bytes failed` across the screen): a
//! batch command prints [`crate::limits::message`] (prepared at start) and exits 1;
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
    let _ = std::io::stderr().write_all(crate::limits::message().as_bytes());
    std::process::exit(1)
}

/// Blocks this large or larger get the hint.
pub const BIG: usize = 8 << 20;

static ENABLED: AtomicBool = AtomicBool::new(cfg!(target_os = "linux"));

/// Turns the huge-page hint on or off for blocks allocated from now on.
pub fn set_enabled(on: bool) {
    ENABLED.store(on && cfg!(target_os = "linux"), Ordering::Relaxed);
}

/// Reads `EMBER_HUGEPAGES` (`0` turns the hint off); call first thing in `main`.
pub fn from_env() {
    if std::env::var_os("EMBER_HUGEPAGES").is_some_and(|v| v == "0") {
        set_enabled(false);
    }
}

/// Whether the hint is given.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

pub struct HugePageHint;

#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, size: usize) {
    if ptr.is_null() || size < BIG || !enabled() {
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
