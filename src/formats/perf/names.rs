//! Frame names as `inferno-collapse-perf` makes them, and the marks of kernel and
//! JIT code.

use std::borrow::Cow;

use memchr::{memchr2, memrchr};

/// inferno's Rust hash suffix: `h` and 16 hex digits.
const RUST_HASH_LENGTH: usize = 17;

/// The symbol without a `+0x1f` offset.
pub(super) fn strip_offset(sym: &[u8]) -> &[u8] {
    let mut end = sym.len();
    while let Some(p) = memrchr(b'+', &sym[..end]) {
        if sym[p..].starts_with(b"+0x") {
            return if sym[p + 3..].iter().all(u8::is_ascii_hexdigit) {
                &sym[..p]
            } else {
                sym
            };
        }
        end = p;
    }
    sym
}

/// inferno's `fix_partially_demangled_rust_symbol`: finishes what perf's demangler
/// left of a Rust symbol with a trailing `h<16 hex>` hash.
pub(super) fn fix_rust(sym: &[u8]) -> Cow<'_, [u8]> {
    let Some(split) = sym.len().checked_sub(RUST_HASH_LENGTH) else {
        return Cow::Borrowed(sym);
    };
    let hash = &sym[split..];
    if hash.first() != Some(&b'h') || !hash[1..].iter().all(u8::is_ascii_hexdigit) {
        return Cow::Borrowed(sym);
    }
    let mut rest = &sym[..split];
    if let Some(r) = rest.strip_suffix(b"::") {
        rest = r;
    }
    if rest.starts_with(b"_$") {
        rest = &rest[1..];
    }
    const CODES: &[(&[u8], &[u8])] = &[
        (b"$SP$", b"@"),
        (b"$BP$", b"*"),
        (b"$RF$", b"&"),
        (b"$LT$", b"<"),
        (b"$GT$", b">"),
        (b"$LP$", b"("),
        (b"$RP$", b")"),
        (b"$C$", b","),
        (b"$u7e$", b"~"),
        (b"$u20$", b" "),
        (b"$u27$", b"'"),
        (b"$u3d$", b"="),
        (b"$u5b$", b"["),
        (b"$u5d$", b"]"),
        (b"$u7b$", b"{"),
        (b"$u7d$", b"}"),
        (b"$u3b$", b";"),
        (b"$u2b$", b"+"),
        (b"$u21$", b"!"),
        (b"$u22$", b"\""),
    ];
    let mut out = Vec::with_capacity(rest.len());
    while let Some(&c) = rest.first() {
        if c == b'.' {
            if rest.get(1) == Some(&b'.') {
                out.extend_from_slice(b"::");
                rest = &rest[2..];
            } else {
                out.push(b'.');
                rest = &rest[1..];
            }
        } else if c == b'$' {
            match CODES.iter().find(|(pat, _)| rest.starts_with(pat)) {
                Some((pat, rep)) => {
                    out.extend_from_slice(rep);
                    rest = &rest[pat.len()..];
                }
                None => {
                    out.extend_from_slice(rest);
                    break;
                }
            }
        } else {
            let n = memchr2(b'$', b'.', rest).unwrap_or(rest.len());
            out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
    }
    Cow::Owned(out)
}

/// inferno's `tidy_generic` in place: `;` -> `:`, and the argument list cut off
/// (not Go's `pkg.(*T).M`, not C++ `(anonymous namespace)`, not parentheses
/// inside `<>`, `{}` or `[]`).
pub(super) fn tidy_generic(name: &mut Vec<u8>) {
    for b in name.iter_mut() {
        if *b == b';' {
            *b = b':';
        }
    }
    let mut depth: i64 = 0;
    let mut last_dot: Option<usize> = None;
    let mut cut = name.len();
    for (idx, &c) in name.iter().enumerate() {
        match c {
            b'<' | b'{' | b'[' => depth += 1,
            b'>' | b'}' | b']' | b')' => depth -= 1,
            b'(' => {
                if depth == 0 {
                    let go = last_dot == Some(idx);
                    let anon = name[idx..].starts_with(b"(anonymous namespace)");
                    if !go && !anon {
                        cut = idx;
                        break;
                    }
                }
                depth += 1;
            }
            b'.' => last_dot = Some(idx + 1),
            _ => {}
        }
    }
    name.truncate(cut);
}

/// inferno's `is_kernel`: `[kernel.kallsyms]`, `[module]`, `*.ko`, `vmlinux[-version]`.
pub(super) fn is_kernel(module: &[u8]) -> bool {
    let vmlinux = || {
        module
            .windows(7)
            .rposition(|w| w == b"vmlinux")
            .is_some_and(|i| {
                module[i..]
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
            })
    };
    (module.starts_with(b"[") || module.ends_with(b".ko") || vmlinux()) && module != b"[unknown]"
}

/// JIT code: a `/tmp/perf-PID.map` symbol map or a `jitted-*.so` jitdump image.
pub(super) fn is_jit(module: &[u8]) -> bool {
    (module.starts_with(b"/tmp/perf-") && module.ends_with(b".map"))
        || (module.ends_with(b".so") && module.windows(8).any(|w| w == b"/jitted-"))
}

pub(super) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}
