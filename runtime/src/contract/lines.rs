//! A line diff of two lockfiles, for a failing [`assert_lockfile`](super::assert_lockfile):
//! removed lines `-`, added lines `+`, two lines of context around each change.

use std::fmt::Write;

/// Lines kept around each change.
const CONTEXT: usize = 2;

/// The edit script from `old` to `new` as text; common lines far from a change are elided.
pub(super) fn diff(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    // Lines equal at both ends need no table.
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);

    let mut ops: Vec<(char, &str)> = a[..prefix].iter().map(|l| (' ', *l)).collect();
    ops.extend(middle(mid_a, mid_b));
    ops.extend(a[a.len() - suffix..].iter().map(|l| (' ', *l)));

    let near_change = |i: usize| {
        let lo = i.saturating_sub(CONTEXT);
        let hi = (i + CONTEXT + 1).min(ops.len());
        ops[lo..hi].iter().any(|(op, _)| *op != ' ')
    };
    let mut out = String::new();
    let mut elided = false;
    for (i, (op, line)) in ops.iter().enumerate() {
        if near_change(i) {
            let _ = writeln!(out, "{op} {line}");
            elided = false;
        } else if !elided {
            out.push_str("  ...\n");
            elided = true;
        }
    }
    out
}

/// The most cells of the table of [`middle`] (16 MiB of it): past that, the differing middle
/// part is shown as removed, then added.
const MAX_CELLS: usize = 4 << 20;

/// The longest-common-subsequence edit script of the differing middle part.
fn middle<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(char, &'a str)> {
    if (a.len() + 1).saturating_mul(b.len() + 1) > MAX_CELLS {
        let removed = a.iter().map(|l| ('-', *l));
        return removed.chain(b.iter().map(|l| ('+', *l))).collect();
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(a.len() + b.len());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::diff;

    #[test]
    fn changed_line_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\n";
        let new = "a\nb\nc\nD\ne\nf\ng\n";
        assert_eq!(
            diff(old, new),
            "  ...\n  b\n  c\n- d\n+ D\n  e\n  f\n  ...\n"
        );
    }

    #[test]
    fn insertions_and_deletions() {
        assert_eq!(diff("x\n", "x\ny\n"), "  x\n+ y\n");
        assert_eq!(diff("x\ny\n", "y\n"), "- x\n  y\n");
        assert_eq!(diff("", "z\n"), "+ z\n");
    }

    #[test]
    fn large_differences_skip_the_table() {
        let old: String = (0..5_000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..5_000).map(|i| format!("new {i}\n")).collect();
        let shown = diff(&old, &new);
        assert_eq!(shown.lines().filter(|l| l.starts_with('-')).count(), 5_000);
        assert_eq!(shown.lines().filter(|l| l.starts_with('+')).count(), 5_000);
    }
}
