//! Splitting rows into fields and reading the numbers in them: the hot path
//! of every text reader.

/// Splits `line` at runs of blanks and tabs into `out` (cleared first). Faster
/// than `split_ascii_whitespace`, which yields and filters an empty piece for
/// every blank of the padding.
pub(crate) fn split_ws<'a>(line: &'a str, out: &mut Vec<&'a str>) {
    out.clear();
    let b = line.as_bytes();
    let blank = |c: u8| c == b' ' || c == b'\t';
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && blank(b[i]) {
            i += 1;
        }
        let start = i;
        while i < b.len() && !blank(b[i]) {
            i += 1;
        }
        // both ends are at ASCII blanks or the ends of the line: char boundaries
        if let Some(t) = line.get(start..i).filter(|t| !t.is_empty()) {
            out.push(t);
        }
    }
}

/// A number as sysstat, procps and dool print it: `12`, `43.94`, `43,94`
/// (decimal comma), `-1`. `None` for anything else.
pub(crate) fn num(s: &str) -> Option<f32> {
    let b = s.as_bytes();
    let (neg, b) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        _ => (false, b),
    };
    if b.is_empty() || b.len() > 18 {
        return slow_num(s);
    }
    let mut mant: u64 = 0;
    let mut frac: i32 = -1;
    for &c in b {
        match c {
            b'0'..=b'9' => {
                mant = mant * 10 + u64::from(c - b'0');
                if frac >= 0 {
                    frac += 1;
                }
            }
            b'.' | b',' if frac < 0 => frac = 0,
            _ => return slow_num(s),
        }
    }
    if frac == 0 {
        return None;
    }
    let v = mant as f64 / POW10.get(frac.max(0) as usize).copied().unwrap_or(1.0);
    Some(if neg { -v } else { v } as f32)
}

const POW10: [f64; 19] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18,
];

fn slow_num(s: &str) -> Option<f32> {
    let v: f64 = s.replace(',', ".").parse().ok()?;
    v.is_finite().then_some(v as f32)
}

/// A number of `iostat -h`: `26.2M`, `0.0k`, `1.7%`. The suffix multiplies a
/// kB-based value (k = 1, M = 1024, ...); `%` is dropped. Returns the number and
/// whether it had a size suffix.
pub(crate) fn human_num(s: &str) -> Option<(f32, bool)> {
    let (body, mult) = match s.as_bytes().last()? {
        b'%' => (&s[..s.len() - 1], None),
        b'k' | b'K' => (&s[..s.len() - 1], Some(1.0)),
        b'M' => (&s[..s.len() - 1], Some(1024.0)),
        b'G' => (&s[..s.len() - 1], Some(1024.0 * 1024.0)),
        b'T' => (&s[..s.len() - 1], Some(1024.0 * 1024.0 * 1024.0)),
        _ => (s, None),
    };
    let v = num(body)?;
    Some(match mult {
        Some(m) => (v * m, true),
        None => (v, false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_blank_runs_only() {
        let mut v = Vec::new();
        split_ws("  vda \t 1,5  ä x ", &mut v);
        assert_eq!(v, ["vda", "1,5", "ä", "x"]);
        split_ws("", &mut v);
        assert!(v.is_empty());
    }

    #[test]
    fn numbers_take_either_decimal_mark() {
        assert_eq!(num("43.94"), Some(43.94));
        assert_eq!(num("43,94"), Some(43.94));
        assert_eq!(num("100"), Some(100.0));
        assert_eq!(num("-1"), Some(-1.0));
        assert_eq!(num("1e3"), Some(1000.0));
        for bad in ["", "-", "1.", "vda", "1.2.3", "12:00"] {
            assert_eq!(num(bad), None, "{bad}");
        }
    }

    #[test]
    fn human_suffixes_are_binary_multiples_of_kb() {
        assert_eq!(human_num("26.2M"), Some((26.2 * 1024.0, true)));
        assert_eq!(human_num("0.0k"), Some((0.0, true)));
        assert_eq!(human_num("1.7%"), Some((1.7, false)));
        assert_eq!(human_num("547.36"), Some((547.36, false)));
    }
}
