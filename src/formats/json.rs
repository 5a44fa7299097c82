//! What the JSON readers (speedscope, Chrome, Gecko) share: reading the input,
//! mapping serde errors, the probe's head scanner, numbers, and arrays of arrays
//! stored flat.

use std::io::{ErrorKind, Read};
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::formats::ParseError;
use crate::sources::input::Progress;

const CHUNK: usize = 1 << 20;

/// Reads all of `reader`, checking for cancellation between chunks.
pub fn read_all(mut reader: impl Read, progress: &Progress) -> Result<Vec<u8>, ParseError> {
    // The file's size, when known, spares the doublings of a growing buffer.
    let hint = usize::try_from(progress.total()).unwrap_or(0).min(1 << 32);
    let mut out = Vec::with_capacity(hint.saturating_add(CHUNK));
    loop {
        if progress.is_cancelled() {
            return Err(ParseError::Cancelled);
        }
        let len = out.len();
        out.resize(len + CHUNK, 0);
        match reader.read(&mut out[len..]) {
            Ok(0) => {
                out.truncate(len);
                return Ok(out);
            }
            Ok(n) => out.truncate(len + n),
            Err(e) if e.kind() == ErrorKind::Interrupted => out.truncate(len),
            Err(e) => return Err(ParseError::Io(e)),
        }
    }
}

/// Adds `v` to `total` unless that overflows, which is counted in `too_large`.
pub fn add_to_total(total: &mut i64, v: i64, too_large: &mut u64) -> bool {
    match total.checked_add(v) {
        Some(t) => {
            *total = t;
            true
        }
        None => {
            *too_large += 1;
            false
        }
    }
}

pub fn warn_too_large(profile: &mut crate::model::Profile, n: u64) {
    if n > 0 {
        profile.warnings.push(
            0,
            format!("{n} samples skipped: their weights would overflow the total"),
        );
    }
}

/// `v` (possibly fractional, possibly huge) in a unit of `unit_ns` nanoseconds, as
/// whole nanoseconds clamped to u64; 0 for what is not positive.
pub fn to_ns(v: f64, unit_ns: f64) -> u64 {
    let ns = (v * unit_ns).round();
    if ns.is_finite() && ns > 0.0 {
        ns.min(u64::MAX as f64) as u64
    } else {
        0
    }
}

/// Parses `bytes` as `T`; errors carry serde's line and column.
pub fn from_slice<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, ParseError> {
    serde_json::from_slice(bytes).map_err(error)
}

/// A serde_json error as a [`ParseError`] with its line, column and a plain reason.
pub fn error(e: serde_json::Error) -> ParseError {
    use serde_json::error::Category;
    let what = e.to_string();
    // serde's message ends in " at line L column C": keep the reason only.
    let reason = what
        .rsplit_once(" at line ")
        .map_or(what.as_str(), |(r, _)| r);
    let message = match e.classify() {
        _ if reason.contains("recursion limit") => format!(
            "the JSON nests deeper than 128 levels (column {}); ember does not read it",
            e.column()
        ),
        Category::Eof if e.line() <= 1 && e.column() == 0 => "no JSON in the input".to_string(),
        Category::Eof => format!(
            "the JSON ends early at column {} (truncated file?): {reason}",
            e.column()
        ),
        Category::Syntax => format!("malformed JSON at column {}: {reason}", e.column()),
        Category::Data => format!("unexpected JSON at column {}: {reason}", e.column()),
        Category::Io => format!("read error: {reason}"),
    };
    ParseError::Invalid {
        line: e.line() as u64,
        message,
    }
}

/// An index or integer id from a file: any JSON number; a non-integer, a
/// negative or an out-of-range value becomes -1, which no table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Index(pub i64);

impl Index {
    pub fn as_usize(self) -> Option<usize> {
        usize::try_from(self.0).ok()
    }
    pub fn as_u32(self) -> Option<u32> {
        u32::try_from(self.0).ok()
    }
}

struct IndexVisitor;

impl Visitor<'_> for IndexVisitor {
    type Value = Index;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a number")
    }
    fn visit_i64<E>(self, v: i64) -> Result<Index, E> {
        Ok(Index(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Index, E> {
        Ok(Index(i64::try_from(v).unwrap_or(-1)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Index, E> {
        let ok = v.fract() == 0.0 && v.abs() < 9e15;
        Ok(Index(if ok { v as i64 } else { -1 }))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Index, E> {
        // Some producers quote their ids ("tid": "7695").
        Ok(Index(v.trim().parse::<i64>().unwrap_or(-1)))
    }
    fn visit_unit<E>(self) -> Result<Index, E> {
        Ok(Index(-1))
    }
}

impl<'de> Deserialize<'de> for Index {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IndexVisitor)
    }
}

/// A number that some producers write as a string ("ts": "11550183666").
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Num(pub f64);

struct NumVisitor;

impl Visitor<'_> for NumVisitor {
    type Value = Num;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a number")
    }
    fn visit_i64<E>(self, v: i64) -> Result<Num, E> {
        Ok(Num(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Num, E> {
        Ok(Num(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Num, E> {
        Ok(Num(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
        Ok(Num(v.trim().parse::<f64>().unwrap_or(f64::NAN)))
    }
    fn visit_unit<E>(self) -> Result<Num, E> {
        Ok(Num(f64::NAN))
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumVisitor)
    }
}

/// An array of arrays stored flat: one allocation, not one per inner array.
/// [`FlatItem`] says how `T` is read and what an inner value that is no array does.
#[derive(Clone, Debug)]
pub struct Flat<T> {
    items: Vec<T>,
    ends: Vec<usize>,
}

impl<T> Default for Flat<T> {
    fn default() -> Self {
        Flat {
            items: Vec::new(),
            ends: Vec::new(),
        }
    }
}

impl<T> Flat<T> {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Inner array `i`; empty past the end.
    pub fn get(&self, i: usize) -> &[T] {
        let Some(&end) = self.ends.get(i) else {
            return &[];
        };
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.items[start..end]
    }

    pub fn iter(&self) -> impl Iterator<Item = &[T]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// What a [`Flat`] array holds: how one item is read, and what serde's error
/// messages say is expected.
pub trait FlatItem: Sized {
    /// Expected: the whole array.
    const ARRAY: &'static str;
    /// Expected: one inner array.
    const INNER: &'static str;
    /// An inner value that is no array (`null`, an object) reads as an empty one
    /// instead of failing the parse.
    const LENIENT: bool;

    /// The next item of an inner array, `None` at its end.
    fn next<'de, A: SeqAccess<'de>>(seq: &mut A) -> Result<Option<Self>, A::Error>;
}

/// Arrays of arrays of indexes (speedscope's stacks) as u32: an index that is not
/// one (negative, fractional, too large) is stored as `u32::MAX`, which no table holds.
pub type FlatStacks = Flat<u32>;

impl FlatItem for u32 {
    const ARRAY: &'static str = "an array of stacks";
    const INNER: &'static str = "an array of frame indexes";
    const LENIENT: bool = false;

    fn next<'de, A: SeqAccess<'de>>(seq: &mut A) -> Result<Option<u32>, A::Error> {
        Ok(seq
            .next_element::<Index>()?
            .map(|i| i.as_u32().unwrap_or(u32::MAX)))
    }
}

/// Reads one inner array onto the end of [`Flat::items`].
struct InnerSeed<'a, T>(&'a mut Vec<T>);

impl<'de, T: FlatItem> DeserializeSeed<'de> for InnerSeed<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if T::LENIENT {
            d.deserialize_any(self)
        } else {
            d.deserialize_seq(self)
        }
    }
}

impl<'de, T: FlatItem> Visitor<'de> for InnerSeed<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(T::INNER)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = T::next(&mut seq)? {
            self.0.push(item);
        }
        Ok(())
    }
    // Only a lenient item asks for any value, so only it gets here: an object
    // (very old Gecko profiles write some rows so) or `null` is an empty array.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

struct FlatVisitor<T>(PhantomData<T>);

impl<'de, T: FlatItem> Visitor<'de> for FlatVisitor<T> {
    type Value = Flat<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(T::ARRAY)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Flat<T>, A::Error> {
        let mut out = Flat::default();
        while seq.next_element_seed(InnerSeed(&mut out.items))?.is_some() {
            out.ends.push(out.items.len());
        }
        Ok(out)
    }
}

impl<'de, T: FlatItem> Deserialize<'de> for Flat<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(FlatVisitor(PhantomData))
    }
}

/// Most decimals kept for fractional weights (nanoseconds of a millisecond).
pub const MAX_DECIMALS: u8 = 6;

/// How many decimals a set of floating values needs to be stored exactly as
/// integers (up to [`MAX_DECIMALS`]; values too large for that keep fewer).
#[derive(Clone, Copy, Debug, Default)]
pub struct Decimals {
    need: u8,
    max_abs: f64,
}

impl Decimals {
    pub fn fixed(need: u8) -> Self {
        Decimals { need, max_abs: 0.0 }
    }

    /// At most `max` decimals, still fewer if the largest value needs it.
    pub fn at_most(self, max: u8) -> Self {
        Decimals {
            need: self.need.min(max),
            ..self
        }
    }

    /// Notes that `v` must be stored, without asking for more decimals.
    pub fn observe_magnitude(&mut self, v: f64) {
        if v.is_finite() {
            self.max_abs = self.max_abs.max(v.abs());
        }
    }

    pub fn observe(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        self.max_abs = self.max_abs.max(v.abs());
        while self.need < MAX_DECIMALS {
            let x = v * 10f64.powi(i32::from(self.need));
            let tol = (x.abs() * 1e-12).max(1e-6);
            if (x - x.round()).abs() <= tol {
                break;
            }
            self.need += 1;
        }
    }

    /// The decimals to use: what the values need, fewer if the largest would
    /// not fit in 2^53 (where f64 stops being exact).
    pub fn get(&self) -> u8 {
        let mut d = self.need;
        while d > 0 && self.max_abs * 10f64.powi(i32::from(d)) >= 9.0e15 {
            d -= 1;
        }
        d
    }

    pub fn factor(&self) -> f64 {
        10f64.powi(i32::from(self.get()))
    }

    /// `v` as a stored integer, `None` if it is not finite or too large.
    pub fn scale(&self, v: f64) -> Option<i64> {
        let x = (v * self.factor()).round();
        (x.is_finite() && x.abs() < 9.2e18).then_some(x as i64)
    }
}

/// What a cheap scan of the first bytes saw: the first non-blank byte and the
/// object keys at the first few nesting levels.
#[derive(Debug, Default)]
pub struct Scan {
    pub first: u8,
    /// (depth, key): depth 1 = a key of the top-level object.
    pub keys: Vec<(u8, String)>,
    /// The head ended before the top-level value did.
    pub truncated: bool,
}

impl Scan {
    pub fn has_key(&self, depth: u8, key: &str) -> bool {
        self.keys.iter().any(|(d, k)| *d == depth && k == key)
    }
}

const MAX_KEYS: usize = 512;
const MAX_KEY_LEN: usize = 64;
const MAX_KEY_DEPTH: usize = 3;

/// Scans `head` once, tracking strings and nesting: no JSON is built.
pub fn scan(head: &[u8]) -> Scan {
    let mut out = Scan::default();
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    let Some(&first) = head.get(start) else {
        return out;
    };
    out.first = first;
    if first != b'{' && first != b'[' {
        return out;
    }
    // One bit per open container up to depth 64: set for objects.
    let mut objects: u64 = 0;
    let mut depth: usize = 0;
    let mut expect_key = false;
    let mut i = start;
    while i < head.len() {
        let b = head[i];
        match b {
            b'"' => {
                let s = i + 1;
                let mut j = s;
                let mut closed = false;
                while j < head.len() {
                    match head[j] {
                        b'\\' => j += 2,
                        b'"' => {
                            closed = true;
                            break;
                        }
                        _ => j += 1,
                    }
                }
                if !closed {
                    out.truncated = true;
                    return out;
                }
                let in_object = depth > 0 && depth <= 64 && objects >> (depth - 1) & 1 == 1;
                if expect_key
                    && in_object
                    && depth <= MAX_KEY_DEPTH
                    && j - s <= MAX_KEY_LEN
                    && out.keys.len() < MAX_KEYS
                {
                    let key = String::from_utf8_lossy(&head[s..j]).into_owned();
                    out.keys.push((depth as u8, key));
                }
                expect_key = false;
                i = j + 1;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth <= 64 {
                    if b == b'{' {
                        objects |= 1 << (depth - 1);
                    } else {
                        objects &= !(1 << (depth - 1));
                    }
                }
                expect_key = b == b'{';
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                expect_key = false;
                if depth == 0 {
                    return out;
                }
            }
            b',' => {
                expect_key = depth > 0 && depth <= 64 && objects >> (depth - 1) & 1 == 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.truncated = true;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_sees_keys_by_depth_and_skips_strings() {
        let s = scan(br#" {"a": {"b": "x\"}", "c": [ {"d": 1} ]}, "e": 2}"#);
        assert_eq!(s.first, b'{');
        assert!(!s.truncated);
        assert!(s.has_key(1, "a") && s.has_key(2, "b") && s.has_key(2, "c"));
        // "d" is at depth 4 (object, object, array, object): deeper than kept.
        assert!(!s.keys.iter().any(|(_, k)| k == "d") && s.has_key(1, "e"));
        assert!(!s.has_key(1, "x\\\"}"));
        assert!(scan(br#"{"a": [1, 2"#).truncated);
    }

    #[test]
    fn decimals_fit_the_values() {
        let mut d = Decimals::default();
        [1.0, 2.0, 3.0].iter().for_each(|&v| d.observe(v));
        assert_eq!(d.get(), 0);
        d.observe(0.1 + 0.2);
        assert_eq!(d.get(), 1);
        assert_eq!(d.scale(0.30000000000000004), Some(3));
        d.observe(1234567.5);
        assert_eq!(d.get(), 1);
        let mut d = Decimals::default();
        d.observe(0.9106829999946058);
        assert_eq!(d.get(), MAX_DECIMALS);
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = from_slice::<serde_json::Value>(b"{\n \"a\": [1,\n").err();
        match e {
            Some(ParseError::Invalid { line, message }) => {
                assert_eq!(line, 3);
                assert!(message.contains("truncated"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
}
