//! What a frame's name says about the profile: idle code, blocking system calls,
//! glue that release builds inline, stack roots, unresolved JIT code, debug paths.
//! Each frame is classified once, into bits of [`Class`].

/// Bits of one frame's class.
pub(super) struct Class;

impl Class {
    /// Idle loops, pollers and waits: `swapper`, `do_idle`, `epoll_wait`, `(idle)`.
    pub const IDLE: u16 = 1 << 0;
    /// A system call that blocks on I/O or time: `read`, `fsync`, `nanosleep`.
    pub const BLOCKING: u16 = 1 << 1;
    /// A trivial wrapper that inlining removes in an optimised build.
    pub const WRAPPER: u16 = 1 << 2;
    /// perf's `[unknown]`: an address no symbol covers (often garbage from a broken unwind).
    pub const UNKNOWN: u16 = 1 << 3;
    /// JIT code without a symbol (`[perf-1234.map]`, a bare `0x7f...` address).
    pub const JIT: u16 = 1 << 4;
    /// Where a complete native stack starts: `_start`, `main`, `clone`, `runtime.goexit`.
    pub const ROOT: u16 = 1 << 5;
    /// A path of a debug build (`target/debug/`, `cmake-build-debug`, `/Debug/`).
    pub const DEBUG_PATH: u16 = 1 << 6;
    /// perf's frame for an event recorded without a call chain.
    pub const NO_STACK: u16 = 1 << 7;
    /// An inlined frame (the format says so).
    pub const INLINED: u16 = 1 << 8;
    /// Kernel code (the format says so).
    pub const KERNEL: u16 = 1 << 9;
    /// A frame a loader or `--process`/`--thread` put above the real stack.
    pub const SYNTH: u16 = 1 << 10;
    /// A thread root naming a JIT runtime (`node`, `java`), whose `[unknown]`
    /// frames are JIT code.
    pub const JIT_COMM: u16 = 1 << 11;
    /// Code in a release build's binary (`target/release/`, `cmake-build-release`).
    pub const RELEASE_PATH: u16 = 1 << 12;
}

/// perf's name for an event without a call chain (`formats::perf::NO_STACK`;
/// `model` does not import `formats`, the lint tests check the two agree).
pub(super) const NO_STACK_NAME: &str = "[no stack recorded]";

/// The classes a name falls in (what the name alone says).
pub(super) fn classify(name: &str) -> u16 {
    let mut c = 0;
    let bare = bare(name);
    if is_idle(name, bare) {
        c |= Class::IDLE;
    } else if is_blocking(bare) {
        c |= Class::BLOCKING;
    }
    if is_wrapper(name) {
        c |= Class::WRAPPER;
    }
    if name == "[unknown]" {
        c |= Class::UNKNOWN;
    }
    if is_unresolved_jit(name) {
        c |= Class::JIT;
    }
    if is_root(name) || is_root(bare) {
        c |= Class::ROOT;
    }
    if is_debug_path(name) {
        c |= Class::DEBUG_PATH;
    }
    if name == NO_STACK_NAME {
        c |= Class::NO_STACK;
    }
    if is_added_root(name) {
        c |= Class::SYNTH;
    }
    c
}

/// A comm or thread name of a JIT runtime.
pub(super) fn is_jit_comm(name: &str) -> bool {
    const RUNTIMES: [&str; 7] = ["node", "java", "dotnet", "deno", "bun", "luajit", "julia"];
    let lower = name.to_ascii_lowercase();
    RUNTIMES.iter().any(|r| lower.starts_with(r)) || lower == "v8"
}

/// The name without the prefixes that libc and the kernel put on a system call
/// or an internal alias (`__x64_sys_read`, `__GI___libc_write`, `__clone3`),
/// nor a `_nocancel` or Go `.abi0` suffix: `read`, `write`, `clone3`.
pub(super) fn bare(name: &str) -> &str {
    const PREFIXES: [&str; 9] = [
        "__x64_sys_",
        "__ia32_sys_",
        "__arm64_sys_",
        "__se_sys_",
        "__do_sys_",
        "ksys_",
        "__GI_",
        "__libc_",
        "__",
    ];
    let mut s = name;
    while let Some(rest) = PREFIXES.iter().find_map(|p| s.strip_prefix(p)) {
        if rest.is_empty() {
            break;
        }
        s = rest;
    }
    for suffix in ["_nocancel", ".abi0"] {
        s = s.strip_suffix(suffix).unwrap_or(s);
    }
    s
}

fn is_idle(name: &str, bare: &str) -> bool {
    const EXACT: [&str; 34] = [
        "swapper",
        "cpu_idle",
        "do_idle",
        "cpuidle_idle_call",
        "cpuidle_enter",
        "cpuidle_enter_state",
        "cpu_idle_poll",
        "intel_idle",
        "intel_idle_irq",
        "acpi_idle_enter",
        "acpi_idle_do_entry",
        "acpi_safe_halt",
        "poll_idle",
        "default_idle",
        "default_idle_call",
        "arch_cpu_idle",
        "native_safe_halt",
        "pv_native_safe_halt",
        "mwait_idle",
        "mwait_idle_with_hints",
        "(idle)",
        "(program)",
        "epoll_wait",
        "epoll_pwait",
        "epoll_pwait2",
        "do_epoll_wait",
        "ep_poll",
        "pthread_cond_wait",
        "pthread_cond_timedwait",
        "lll_lock_wait",
        "runtime.usleep",
        "runtime.futex",
        "runtime.notesleep",
        "runtime.stopm",
    ];
    EXACT.contains(&name)
        || EXACT.contains(&bare)
        || bare.starts_with("futex_wait")
        || bare.starts_with("futex_abstimed_wait")
        || bare.starts_with("pthread_cond_wait")
        || bare.starts_with("pthread_cond_timedwait")
}

fn is_blocking(bare: &str) -> bool {
    const CALLS: [&str; 44] = [
        "read",
        "write",
        "pread64",
        "pwrite64",
        "readv",
        "writev",
        "preadv",
        "preadv2",
        "pwritev",
        "pwritev2",
        "recv",
        "recvfrom",
        "recvmsg",
        "recvmmsg",
        "send",
        "sendto",
        "sendmsg",
        "sendmmsg",
        "sendfile",
        "sendfile64",
        "splice",
        "copy_file_range",
        "poll",
        "ppoll",
        "select",
        "pselect6",
        "nanosleep",
        "clock_nanosleep",
        "fsync",
        "fdatasync",
        "sync_file_range",
        "syncfs",
        "msync",
        "flock",
        "io_uring_enter",
        "io_getevents",
        "io_pgetevents",
        "accept",
        "accept4",
        "connect",
        "wait4",
        "waitid",
        "io_schedule",
        "io_schedule_timeout",
    ];
    CALLS.contains(&bare) || bare == "blk_io_schedule" || bare == "folio_wait_bit_common"
}

/// Where a whole native stack starts. Asked with the name as printed
/// (`__libc_start_main`) and with its [`bare`] form (`__clone3` as `clone3`).
fn is_root(name: &str) -> bool {
    const ROOTS: [&str; 33] = [
        "_start",
        "start",
        "main",
        "__libc_start_main",
        "__libc_start_main_impl",
        "__libc_start_call_main",
        "clone",
        "clone3",
        "start_thread",
        "thread_start",
        "_pthread_start",
        "_dl_start",
        "_dl_start_user",
        "runtime.goexit",
        "runtime.main",
        "runtime.mstart",
        "runtime.rt0_go",
        "runtime.morestack",
        "runtime.mcall",
        "runtime.systemstack",
        "ret_from_fork",
        "ret_from_fork_asm",
        "kthread",
        "secondary_startup_64",
        "secondary_startup_64_no_verify",
        "common_startup_64",
        "start_kernel",
        "x86_64_start_kernel",
        "x86_64_start_reservations",
        "rest_init",
        "RtlUserThreadStart",
        "BaseThreadInitThunk",
        "wmain",
    ];
    ROOTS.contains(&name)
}

/// Names a loader or `--process`/`--thread` puts above the stack:
/// `process 1234`, `worker (tid 77)`.
fn is_added_root(name: &str) -> bool {
    if name.starts_with("process ") {
        return true;
    }
    name.strip_suffix(')')
        .and_then(|s| s.rsplit_once(" (tid "))
        .is_some_and(|(_, tid)| !tid.is_empty() && tid.bytes().all(|b| b.is_ascii_digit()))
}

/// `[perf-1234.map]` (perf names an address in JIT code after the map file it
/// could not find), `[jitted-12-3.so]`, or a bare `0x7f3a...` address.
fn is_unresolved_jit(name: &str) -> bool {
    if let Some(inner) = name
        .strip_prefix("[perf-")
        .and_then(|s| s.strip_suffix(".map]"))
    {
        return inner.bytes().all(|b| b.is_ascii_digit());
    }
    if name.starts_with("[jitted-") && name.ends_with(".so]") {
        return true;
    }
    name.strip_prefix("0x")
        .is_some_and(|hex| hex.len() >= 6 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A path of a debug build inside `text` (a frame name, a source file, a binary).
pub(super) fn is_debug_path(text: &str) -> bool {
    const MARKS: [&str; 5] = [
        "target/debug/",
        "target\\debug\\",
        "cmake-build-debug",
        "/Debug/",
        "\\Debug\\",
    ];
    MARKS.iter().any(|m| text.contains(m))
}

/// A path of an optimised build: `target/release/`, `cmake-build-release`,
/// Visual Studio's `/Release/` and `/RelWithDebInfo/`.
pub(super) fn is_release_path(text: &str) -> bool {
    const MARKS: [&str; 7] = [
        "target/release/",
        "target\\release\\",
        "cmake-build-release",
        "cmake-build-relwithdebinfo",
        "/Release/",
        "\\Release\\",
        "/RelWithDebInfo/",
    ];
    MARKS.iter().any(|m| text.contains(m))
}

/// Glue that an optimised build inlines: Rust's closure calls, conversions,
/// iterator adaptors, indexing and comparisons; C++'s `std::__invoke`,
/// iterator and accessor wrappers (libstdc++ and libc++ spellings). Calls that
/// stay real in release builds (`core::ptr::drop_in_place`, sorting, hashing,
/// `{{vtable.shim}}`) are left out.
fn is_wrapper(name: &str) -> bool {
    is_rust_wrapper(name) || is_cpp_wrapper(name)
}

fn is_rust_wrapper(n: &str) -> bool {
    if n.ends_with("{{vtable.shim}}") || n.contains("drop_in_place") {
        return false;
    }
    const PREFIXES: [&str; 13] = [
        "core::ops::function::impls::",
        "core::convert::",
        "core::iter::",
        "<core::iter::",
        "core::slice::index::",
        "core::slice::<impl [T]>::",
        "core::cmp::",
        "core::num::<impl ",
        "core::f64::<impl f64>::",
        "core::f32::<impl f32>::",
        "core::ptr::",
        "core::option::Option<T>::",
        "core::result::Result<T,E>::",
    ];
    const TRAITS: [&str; 8] = [
        " as core::convert::",
        " as core::iter::",
        " as core::ops::index::",
        " as core::ops::deref::",
        " as core::slice::index::",
        " as core::cmp::",
        " as core::ops::try_trait::",
        " as core::ops::function::",
    ];
    matches!(
        n,
        "core::ops::function::FnOnce::call_once"
            | "core::ops::function::FnMut::call_mut"
            | "core::ops::function::Fn::call"
    ) || PREFIXES.iter().any(|p| n.starts_with(p))
        || (n.starts_with('<') && TRAITS.iter().any(|t| n.contains(t)))
}

fn is_cpp_wrapper(name: &str) -> bool {
    // libc++ keeps everything in `std::__1::`.
    let n = match name.strip_prefix("std::__1::") {
        Some(rest) => std::borrow::Cow::Owned(format!("std::{rest}")),
        None => std::borrow::Cow::Borrowed(name),
    };
    const PREFIXES: [&str; 14] = [
        "std::__invoke",
        "std::__niter_base",
        "std::__niter_wrap",
        "std::__miter_base",
        "std::__addressof",
        "std::__to_address",
        "std::__get_helper",
        "std::__uniq_ptr_impl<",
        "std::forward<",
        "std::move<",
        "std::get<",
        "__gnu_cxx::__normal_iterator<",
        "__gnu_cxx::__ops::",
        "std::__wrap_iter<",
    ];
    if PREFIXES.iter().any(|p| n.starts_with(p)) {
        return true;
    }
    let accessor = |class: &str, members: &[&str]| {
        n.starts_with(class)
            && members
                .iter()
                .any(|m| n.ends_with(&format!(">::{m}")) || n.ends_with(&format!(">::{m}() const")))
    };
    accessor(
        "std::vector<",
        &["operator[]", "size", "begin", "end", "data", "empty"],
    ) || accessor("std::unique_ptr<", &["operator->", "operator*", "get"])
        || accessor("std::shared_ptr<", &["operator->", "operator*", "get"])
        || accessor("std::__shared_ptr_access<", &["operator->", "operator*"])
        || accessor("std::__shared_ptr<", &["get"])
}
