//! What unit tests that read a profile's stacks share (the readers' tests, the
//! transforms' tests).

use std::collections::BTreeMap;

use super::{Profile, ValueType};

/// A one-value profile from folded-style lines "a;b;c 3" ("" or " 3" for an
/// empty stack). Each line is one sample.
pub(crate) fn profile_from_lines(lines: &[&str]) -> Profile {
    let mut p = Profile::new("test", vec![ValueType::samples()]);
    for line in lines {
        let (stack, w) = line.rsplit_once(' ').unwrap_or((line, "1"));
        let w: i64 = w.parse().unwrap_or(1);
        let s = p.intern_path(
            stack
                .split(';')
                .filter(|n| !n.is_empty())
                .map(|n| n.as_bytes()),
        );
        p.push_sample(s, &[w]);
    }
    p
}

/// The frame names of sample `i`'s stack, root first; none for a sample without one.
pub(crate) fn stack_names(p: &Profile, i: usize) -> Vec<String> {
    p.samples
        .stack_of(i)
        .map(|s| {
            p.stacks
                .path(s)
                .iter()
                .map(|&f| p.frames.name(f).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Sorted `a;b;c value` lines, one per stack: `value` picks a number from each
/// sample's values, and the stack's samples add up. Samples without a stack count
/// under `no_stack`; stacks that add up to 0 are left out when `skip_zero`.
pub(crate) fn folded_by(
    p: &Profile,
    no_stack: &str,
    skip_zero: bool,
    value: impl Fn(&[i64]) -> i64,
) -> Vec<String> {
    let n = p.value_types.len();
    let mut sums = BTreeMap::<String, i64>::new();
    for i in 0..p.samples.len() {
        let name = match p.samples.stack_of(i) {
            Some(_) => stack_names(p, i).join(";"),
            None => no_stack.to_string(),
        };
        *sums.entry(name).or_default() += value(&p.samples.values[i * n..(i + 1) * n]);
    }
    sums.into_iter()
        .filter(|(_, v)| !skip_zero || *v != 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect()
}
