//! Splitting rows into fields and reading the numbers in them: the hot path
//! of every text reader.

/// Splits `line` at runs of blanks and tabs into `out` (cleared first).
pub(crate) fn split_ws<'a>(line: &'a str, out: &mut Vec<&'a str>) {
    out.clear();
    // both ends are at ASCII blanks or the ends of the line: char boundaries
    out.extend(Spans::new(line).filter_map(|(a, b)| line.get(a..b)));
}

/// The fields of a line (runs of anything but blanks and tabs) as byte ranges.
///
/// Rows are mostly padding: rather than stepping over it byte by byte, each
/// 64 bytes become one bit mask of their blanks ([`blank_bits`]) and the
/// fields are read off the mask's changes, one bit operation per edge.
pub(crate) struct Spans<'a> {
    chunks: std::slice::Chunks<'a, u8>,
    /// Where the current chunk starts in the line.
    base: usize,
    next_base: usize,
    len: usize,
    /// Bit j: byte `base + j` starts or ends a field.
    edges: u64,
    /// Whether the last byte of the chunk before was a blank.
    carry: u64,
    open: Option<usize>,
}

impl<'a> Spans<'a> {
    pub fn new(line: &'a str) -> Spans<'a> {
        Spans {
            chunks: line.as_bytes().chunks(64),
            base: 0,
            next_base: 0,
            len: line.len(),
            edges: 0,
            // the byte before the line counts as a blank
            carry: 1,
            open: None,
        }
    }
}

impl Iterator for Spans<'_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        loop {
            while self.edges == 0 {
                let Some(chunk) = self.chunks.next() else {
                    // a field running to the end of the line
                    return self.open.take().map(|a| (a, self.len));
                };
                self.base = self.next_base;
                self.next_base += chunk.len();
                let blank = blank_bits(chunk);
                // bits past the end are blanks: a field ending there has its edge
                self.edges = blank ^ ((blank << 1) | self.carry);
                self.carry = blank >> 63;
            }
            let at = self.base + self.edges.trailing_zeros() as usize;
            self.edges &= self.edges - 1;
            match self.open.take() {
                None => self.open = Some(at),
                Some(a) => return Some((a, at)),
            }
        }
    }
}

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const ONES: u64 = 0x0101_0101_0101_0101;

/// Bit j set when `chunk[j]` is a blank or a tab, and for every j past the
/// end of the chunk (at most 64 bytes).
#[inline]
fn blank_bits(chunk: &[u8]) -> u64 {
    let mut m = 0;
    let mut words = chunk.chunks_exact(8);
    for (k, w) in (&mut words).enumerate() {
        let w = u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or_default());
        m |= gather(blanks(w)) << (8 * k);
    }
    let done = chunk.len() - words.remainder().len();
    for (k, &c) in words.remainder().iter().enumerate() {
        m |= u64::from(c == b' ' || c == b'\t') << (done + k);
    }
    if chunk.len() < 64 {
        m |= !0 << chunk.len();
    }
    m
}

/// The high bit set in each byte of `w` that is a blank or a tab, exactly (no
/// borrow runs from one byte into the next).
#[inline]
fn blanks(w: u64) -> u64 {
    let zero = |x: u64| !(((x & LOW7) + LOW7) | x | LOW7);
    zero(w ^ (ONES * u64::from(b' '))) | zero(w ^ (ONES * u64::from(b'\t')))
}

/// The high bits of the eight bytes of `m` (nothing else set) as bits 0..8,
/// byte 0 first, by shifts alone (a multiply does not vectorize well).
#[inline]
fn gather(m: u64) -> u64 {
    let mut x = m >> 7;
    x |= x >> 7;
    x |= x >> 14;
    x |= x >> 28;
    x & 0xff
}

/// A number as sysstat, procps and dool print it: `12`, `43.94`, `43,94`
/// (decimal comma), `-1`. `None` for anything else.
pub(crate) fn num(s: &str) -> Option<f32> {
    decimal(s).map(|(v, _)| v)
}

/// [`num`], and whether the number was written with a decimal comma.
///
/// Up to 18 digits are read exactly into an integer and divided once by a
/// power of ten (in f64, then rounded to f32); longer or other forms
/// (exponents) go to `str::parse`.
fn decimal(s: &str) -> Option<(f32, bool)> {
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
    let mut comma = false;
    for &c in b {
        match c {
            b'0'..=b'9' => {
                mant = mant * 10 + u64::from(c - b'0');
                if frac >= 0 {
                    frac += 1;
                }
            }
            b'.' | b',' if frac < 0 => {
                frac = 0;
                comma = c == b',';
            }
            _ => return slow_num(s),
        }
    }
    if frac == 0 {
        return None;
    }
    let v = mant as f64 / POW10.get(frac.max(0) as usize).copied().unwrap_or(1.0);
    Some((if neg { -v } else { v } as f32, comma))
}

const POW10: [f64; 19] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18,
];

fn slow_num(s: &str) -> Option<(f32, bool)> {
    let v: f64 = s.replace(',', ".").parse().ok()?;
    v.is_finite().then_some((v as f32, s.contains(',')))
}

/// A number of `iostat -h` (or a plain one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Human {
    pub value: f32,
    /// It had a size suffix (the value is in kB then).
    pub suffixed: bool,
    /// Its decimal mark was a comma (a hint at the locale).
    pub comma: bool,
}

/// A number of `iostat -h`: `26.2M`, `0.0k`, `1.7%`. The suffix multiplies a
/// kB-based value (k = 1, M = 1024, ...); `%` is dropped.
pub(crate) fn human_num(s: &str) -> Option<Human> {
    let (body, mult) = match s.as_bytes().last()? {
        b'0'..=b'9' => (s, None),
        b'%' => (&s[..s.len() - 1], None),
        b'k' | b'K' => (&s[..s.len() - 1], Some(1.0)),
        b'M' => (&s[..s.len() - 1], Some(1024.0)),
        b'G' => (&s[..s.len() - 1], Some(1024.0 * 1024.0)),
        b'T' => (&s[..s.len() - 1], Some(1024.0 * 1024.0 * 1024.0)),
        _ => (s, None),
    };
    let (v, comma) = decimal(body)?;
    Some(match mult {
        Some(m) => Human {
            value: v * m,
            suffixed: true,
            comma,
        },
        None => Human {
            value: v,
            suffixed: false,
            comma,
        },
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
        // fields and blank runs across the 8- and 64-byte steps, every alignment
        let row = "nvme10n1      \t    12.34 0,5\t\t123456789012345678901234 é\u{a0}x  -1 \
                   \t\t    0.00 1234567890123456789012345678901234567890123456789012345678901234567 \
                   1 2 3 4 5 6 7 8 9 a b c d e f g h i j k l m n o p q r s t u v w x y z 12.5     ";
        for k in 0..row.len() {
            for end in [row.len(), row.len() - 5, k + 63, k + 64, k + 65, k + 128] {
                let Some(tail) = row.get(k..end.min(row.len()).max(k)) else {
                    continue;
                };
                split_ws(tail, &mut v);
                let w: Vec<&str> = tail.split([' ', '\t']).filter(|t| !t.is_empty()).collect();
                assert_eq!(v, w, "{k}..{end}");
            }
        }
    }

    #[test]
    fn gathers_the_high_bit_of_each_byte() {
        for bits in 0..=255u64 {
            let m = (0..8)
                .filter(|j| bits >> j & 1 == 1)
                .map(|j| 0x80u64 << (8 * j))
                .sum();
            assert_eq!(gather(m), bits);
        }
        let w = u64::from_le_bytes(*b" a\t\xa0 \x09!\x00");
        assert_eq!(gather(blanks(w)), 0b0011_0101);
    }

    fn h(value: f32, suffixed: bool, comma: bool) -> Option<Human> {
        Some(Human {
            value,
            suffixed,
            comma,
        })
    }

    #[test]
    fn numbers_take_either_decimal_mark() {
        assert_eq!(num("43.94"), Some(43.94));
        assert_eq!(num("43,94"), Some(43.94));
        assert_eq!(num("100"), Some(100.0));
        assert_eq!(num("-1"), Some(-1.0));
        assert_eq!(num("1e3"), Some(1000.0));
        assert_eq!(num("-0,25"), Some(-0.25));
        assert_eq!(num(",5"), Some(0.5));
        assert_eq!(num("1,5e3"), Some(1500.0));
        for bad in [
            "", "-", "1.", ",", "vda", "1.2.3", "1,2.3", "--1", "+-1", "12:00", "1e999",
        ] {
            assert_eq!(num(bad), None, "{bad}");
        }
        assert_eq!(decimal("43,94"), Some((43.94, true)));
        assert_eq!(decimal("43.94"), Some((43.94, false)));
        assert_eq!(decimal("2,5e1"), Some((25.0, true)));
    }

    #[test]
    fn the_integer_path_rounds_like_str_parse() {
        // what sysstat prints: up to two decimals; and long fractions
        let mut cases: Vec<String> = (0..2_000_000u64)
            .step_by(7)
            .map(|k| format!("{}.{:02}", k / 100, k % 100))
            .collect();
        cases.extend((0..20_000u64).map(|k| format!("{}.{:06}", k * 7919 % 100_000, k * 104_729)));
        cases.extend(
            [
                "0.1",
                "16777217",
                "4294967295.99",
                "999999999999999999",
                "-12345.678",
                "12345678901234567890.5",
            ]
            .map(String::from),
        );
        for c in &cases {
            let want = c.parse::<f64>().map(|v| v as f32).ok();
            assert_eq!(num(c), want, "{c}");
            assert_eq!(num(&c.replace('.', ",")), want, "{c} with a comma");
        }
    }

    #[test]
    fn human_suffixes_are_binary_multiples_of_kb() {
        assert_eq!(human_num("26.2M"), h(26.2 * 1024.0, true, false));
        assert_eq!(human_num("26,2M"), h(26.2 * 1024.0, true, true));
        assert_eq!(human_num("0.0k"), h(0.0, true, false));
        assert_eq!(human_num("1.5G"), h(1.5 * 1024.0 * 1024.0, true, false));
        assert_eq!(human_num("1.7%"), h(1.7, false, false));
        assert_eq!(human_num("547.36"), h(547.36, false, false));
        assert_eq!(human_num("-0,50"), h(-0.5, false, true));
        assert_eq!(human_num("1,5e3"), h(1500.0, false, true));
        for bad in ["", "%", "M", "1.M", "vda", "12:00"] {
            assert_eq!(human_num(bad), None, "{bad}");
        }
    }
}
