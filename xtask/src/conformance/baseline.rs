//! The conformance suite's known failures, `tests/conformance-suite/expected-failures.yml`:
//! a YAML file of one shape only, read here (xtask uses the standard library only).
//!
//! ```yaml
//! # The server's runs, every requirement set, in each of its runs that runs the scenario:
//! server:
//!   - scenario            # why it fails
//! # Only the server's run of `--requirements 2026-07-28`:
//! server@2026-07-28:
//!   - scenario:check-id   # why this check fails
//! # The client's runs, likewise (`client:`, `client@2025-11-25:`):
//! client@2026-07-28:
//!   - auth/scope-step-up  # why it fails
//! ```
//!
//! An entry is a whole scenario (any of its checks may fail or warn) or one check of it, as the
//! suite's own `--expected-failures` writes them, and each says why in a comment; anything else
//! is refused with its line.

/// What the suite tests: a server (`conformance server`) or a client (`conformance client`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Server,
    Client,
}

impl Side {
    /// Its name, as the suite's commands and the file's sections spell it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Side::Server => "server",
            Side::Client => "client",
        }
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where an entry applies, on its side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Every requirement set, in each run of it that runs the scenario (`server:`).
    Every,
    /// Only the run of this requirement set (`server@2026-07-28:`).
    Revision(String),
}

impl Scope {
    pub(crate) fn covers(&self, revision: &str) -> bool {
        match self {
            Scope::Every => true,
            Scope::Revision(r) => r == revision,
        }
    }
}

/// A known failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) side: Side,
    pub(crate) scope: Scope,
    pub(crate) scenario: String,
    /// One check of the scenario; the whole scenario when `None`.
    pub(crate) check: Option<String>,
    pub(crate) reason: String,
    /// Its line in the file, from 1.
    pub(crate) line: usize,
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.scenario)?;
        if let Some(check) = &self.check {
            write!(f, ":{check}")?;
        }
        write!(f, " (line {})", self.line)
    }
}

/// Reads the file's text: its entries, or the first line it cannot read and why.
pub(crate) fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut scope = None;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let fail = |why: &str| Err(format!("line {line}: {why}: {raw:?}"));
        let (content, comment) = match raw.split_once(" #") {
            Some((content, comment)) => (content.trim_end(), Some(comment.trim())),
            None if raw.trim_start().starts_with('#') => ("", None),
            None => (raw.trim_end(), None),
        };
        if content.trim().is_empty() {
            continue;
        }
        if !content.starts_with(' ') {
            match section(content) {
                Some(found) => scope = Some(found),
                None => {
                    return fail(
                        "a section is `server:`, `client:`, `server@YYYY-MM-DD:` or \
                         `client@YYYY-MM-DD:`",
                    );
                }
            }
            continue;
        }
        let Some((side, scope)) = scope.clone() else {
            return fail("an entry before any section");
        };
        let Some(item) = content.trim_start().strip_prefix("- ") else {
            return fail("an entry is `  - scenario` or `  - scenario:check-id`, then `# why`");
        };
        let item = item.trim();
        let (scenario, check) = match item.split_once(':') {
            Some((scenario, check)) => (scenario, Some(check)),
            None => (item, None),
        };
        let name_like = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b))
        };
        if !name_like(scenario) || !check.is_none_or(name_like) {
            return fail(
                "not a scenario or `scenario:check-id` (no space after the colon, no quotes)",
            );
        }
        let Some(reason) = comment.filter(|c| !c.is_empty()) else {
            return fail("every entry says why it fails, in a comment after it");
        };
        let entry = Entry {
            side,
            scope,
            scenario: scenario.to_owned(),
            check: check.map(str::to_owned),
            reason: reason.to_owned(),
            line,
        };
        let overlaps = |other: &Entry| {
            other.side == entry.side
                && other.scope == entry.scope
                && other.scenario == entry.scenario
                && (other.check == entry.check || other.check.is_none() || entry.check.is_none())
        };
        if let Some(other) = entries.iter().find(|other| overlaps(other)) {
            return Err(format!(
                "line {line}: {entry} repeats or overlaps {other} in the same section"
            ));
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// A section's header: `server:`, `client@2026-07-28:`, each maybe `: []` (empty).
fn section(header: &str) -> Option<(Side, Scope)> {
    let header = header.strip_suffix(": []").or(header.strip_suffix(':'))?;
    let (side, revision) = match header.split_once('@') {
        Some((side, revision)) => (side, Some(revision)),
        None => (header, None),
    };
    let side = [Side::Server, Side::Client]
        .into_iter()
        .find(|s| s.name() == side)?;
    match revision {
        None => Some((side, Scope::Every)),
        Some(revision) if is_revision(revision) => {
            Some((side, Scope::Revision(revision.to_owned())))
        }
        Some(_) => None,
    }
}

/// `YYYY-MM-DD`.
fn is_revision(text: &str) -> bool {
    text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sections_entries_and_their_reasons() {
        let text = "# Known failures.\n\
                    server:\n\
                    \x20 - tasks-lifecycle   # tasks are not built yet\n\
                    \n\
                    server@2026-07-28:  # only at 2026-07-28\n\
                    \x20 # a comment line between entries\n\
                    \x20 - json-schema-2020-12:sep-2106-anchor-keyword-preserved # $anchor is dropped\n\
                    server@2025-11-25: []\n\
                    client@2026-07-28:\n\
                    \x20 - auth/dpop # no DPoP\n\
                    client: []\n";
        let entries = parse(text).unwrap();
        assert_eq!(
            entries,
            [
                Entry {
                    side: Side::Server,
                    scope: Scope::Every,
                    scenario: "tasks-lifecycle".into(),
                    check: None,
                    reason: "tasks are not built yet".into(),
                    line: 3,
                },
                Entry {
                    side: Side::Server,
                    scope: Scope::Revision("2026-07-28".into()),
                    scenario: "json-schema-2020-12".into(),
                    check: Some("sep-2106-anchor-keyword-preserved".into()),
                    reason: "$anchor is dropped".into(),
                    line: 7,
                },
                Entry {
                    side: Side::Client,
                    scope: Scope::Revision("2026-07-28".into()),
                    scenario: "auth/dpop".into(),
                    check: None,
                    reason: "no DPoP".into(),
                    line: 10,
                },
            ]
        );
        assert!(entries[1].scope.covers("2026-07-28") && !entries[1].scope.covers("2025-11-25"));
        assert!(parse("server: []\n").unwrap().is_empty());
    }

    #[test]
    fn refuses_each_misuse_with_its_line() {
        let refused = |text: &str| parse(text).unwrap_err();
        assert!(refused("  - ping # why\n").starts_with("line 1: an entry before any section"));
        assert!(refused("clients:\n").contains("a section is"));
        assert!(refused("client@latest:\n").contains("a section is"));
        assert!(refused("server@2026-7-28:\n").contains("a section is"));
        assert!(refused("server:\n  - ping\n").contains("line 2: every entry says why"));
        assert!(refused("server:\n  - ping #\n").contains("every entry says why"));
        assert!(refused("server:\n  - ping: check # why\n").contains("no space after the colon"));
        assert!(refused("server:\n  - \"ping\" # why\n").contains("no quotes"));
        assert!(refused("server:\n  ping # why\n").contains("an entry is"));
        let twice = "server:\n  - ping # why\n  - ping:a-check # why\n";
        assert!(refused(twice).contains("line 3: ping:a-check (line 3) repeats or overlaps ping"));
        // The same entry in two sections is two scopes, not a repeat.
        let both = "server:\n  - ping # why\nserver@2026-07-28:\n  - ping # why\n";
        assert_eq!(parse(both).unwrap().len(), 2);
        // And the same scenario on both sides is two entries.
        let sides = "server:\n  - ping # why\nclient:\n  - ping # why\n";
        assert_eq!(parse(sides).unwrap().len(), 2);
    }
}
