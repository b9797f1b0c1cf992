//! The verdict on one run of the conformance suite (`--requirements R`), from every scenario's
//! `checks.json`, scored or not: under `--requirements` the suite's exit code counts only the
//! scenarios R scores, so xtask judges them all itself. A scenario fails when one of its checks
//! is a FAILURE or a WARNING (a warning fails, as under the suite's own `--expected-failures`),
//! the worst outcome of a check id winning. A failure that is not a known one
//! (`baseline.rs`) fails the run; so does a known one that passes now, a known one the run
//! did not report, and a scenario without results.

use std::path::Path;

use super::baseline::{Entry, Scope, Side};
use super::json::{self, Json};

/// A scenario the requirement set runs: whether it scores it, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    pub(crate) name: String,
    /// `None` when scored; otherwise the suite's reason (`extension`, `pending`, …).
    pub(crate) not_scored: Option<String>,
}

/// What `conformance list --requirements R` prints: the scenarios R runs on `side`.
pub(crate) fn requirement_set(listing: &str, side: Side) -> Vec<Listed> {
    let (heading, tag) = match side {
        Side::Server => ("Server scenarios", " [server]"),
        Side::Client => ("Client scenarios", " [client]"),
    };
    let mut listed = Vec::new();
    let mut section = "";
    let mut reason = String::new();
    for line in listing.lines() {
        if !line.starts_with(' ') {
            section = line.trim();
            continue;
        }
        let item = line.trim();
        match (section.starts_with(heading), item.strip_prefix("- ")) {
            (true, Some(name)) => listed.push(Listed {
                name: name.to_owned(),
                not_scored: None,
            }),
            (false, Some(name)) if section.starts_with("Run and reported") => {
                if let Some(name) = name.strip_suffix(tag) {
                    listed.push(Listed {
                        name: name.to_owned(),
                        not_scored: Some(reason.clone()),
                    });
                }
            }
            // `  extension (6):`, the reason of the names under it.
            (false, None) => {
                reason = item.split(" (").next().unwrap_or_default().to_owned();
            }
            _ => {}
        }
    }
    listed
}

/// One check of a scenario, as `checks.json` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Check {
    pub(crate) id: String,
    pub(crate) status: String,
    pub(crate) message: Option<String>,
}

/// How bad an outcome is, as the suite ranks them (`INFO` aside: it is never a check's worst).
fn rank(status: &str) -> u8 {
    match status {
        "FAILURE" => 3,
        "WARNING" => 2,
        "SUCCESS" => 1,
        _ => 0,
    }
}

fn fails(status: &str) -> bool {
    matches!(status, "FAILURE" | "WARNING")
}

/// Each check id once, at its worst outcome, in the order first reported.
fn worst(checks: &[Check]) -> Vec<&Check> {
    let mut worst: Vec<&Check> = Vec::new();
    for check in checks.iter().filter(|c| c.status != "INFO") {
        match worst.iter_mut().find(|w| w.id == check.id) {
            Some(w) if rank(&check.status) >= rank(&w.status) => *w = check,
            Some(_) => {}
            None => worst.push(check),
        }
    }
    worst
}

/// The checks of one `checks.json`.
pub(crate) fn checks(text: &str) -> Result<Vec<Check>, String> {
    let Json::Array(items) = json::parse(text)? else {
        return Err("not an array of checks".into());
    };
    let field = |item: &Json, key| item.get(key).and_then(Json::as_str).map(str::to_owned);
    (items.iter())
        .map(|item| {
            let (Some(id), Some(status)) = (field(item, "id"), field(item, "status")) else {
                return Err("a check without its string id and status".into());
            };
            if !matches!(
                status.as_str(),
                "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO"
            ) {
                return Err(format!("check {id} has the unknown status {status:?}"));
            }
            let message = field(item, "errorMessage");
            Ok(Check {
                id,
                status,
                message,
            })
        })
        .collect()
}

/// Where the suite put a scenario's results in `dir`: `server-<scenario>-<time>/` for a
/// server's, `<scenario>-<time>/` for a client's (`auth/<name>-<time>/` for `auth/<name>`),
/// the time as `2026-12-06T04-06-34-165Z`; the latest, if it ran more than once.
pub(crate) fn results_of(dir: &Path, side: Side, scenario: &str) -> Option<std::path::PathBuf> {
    let (dir, scenario) = match scenario.rsplit_once('/') {
        Some((folder, name)) => (dir.join(folder), name),
        None => (dir.to_owned(), scenario),
    };
    let prefix = match side {
        Side::Server => format!("server-{scenario}-"),
        Side::Client => format!("{scenario}-"),
    };
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            (path.file_name().and_then(|n| n.to_str()))
                .and_then(|name| name.strip_prefix(&prefix))
                .is_some_and(is_time)
        })
        .collect();
    found.sort();
    found.pop()
}

/// `2026-12-06T04-06-34-165Z`: an ISO time with `:` and `.` written `-`.
fn is_time(text: &str) -> bool {
    let shape = "0000-00-00T00-00-00-000Z";
    text.len() == shape.len()
        && (text.bytes().zip(shape.bytes())).all(|(b, s)| match s {
            b'0' => b.is_ascii_digit(),
            _ => b == s,
        })
}

/// One scenario of the run, with its checks (`Err`: why there are none).
#[derive(Debug)]
pub(crate) struct Ran {
    pub(crate) listed: Listed,
    pub(crate) checks: Result<Vec<Check>, String>,
}

/// The run of one requirement set, judged.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    /// What fails the run, one line each.
    pub(crate) problems: Vec<String>,
    /// The known failures the run showed.
    pub(crate) expected: Vec<String>,
    pub(crate) scenarios: usize,
    pub(crate) scored: usize,
    pub(crate) failed: usize,
    /// The scenarios that failed only as known.
    pub(crate) failed_as_known: usize,
    /// Whether a scored scenario has a FAILURE: what the suite's exit code says.
    pub(crate) scored_failure: bool,
    /// Checks by outcome (each id once, at its worst): SUCCESS, FAILURE, WARNING, SKIPPED.
    pub(crate) checks: [usize; 4],
}

/// Judges the run of `revision` on `side` against the known failures that cover it.
pub(crate) fn judge(side: Side, revision: &str, ran: &[Ran], known: &[Entry]) -> Verdict {
    let known: Vec<&Entry> = (known.iter())
        .filter(|e| e.side == side && e.scope.covers(revision))
        .collect();
    // How each problem names the run: `server@2026-07-28`.
    let run = format!("{side}@{revision}");
    let mut verdict = Verdict {
        scenarios: ran.len(),
        scored: ran.iter().filter(|r| r.listed.not_scored.is_none()).count(),
        ..Verdict::default()
    };
    for scenario in ran {
        let name = &scenario.listed.name;
        let checks = match &scenario.checks {
            Ok(checks) => checks,
            Err(why) => {
                verdict.failed += 1;
                (verdict.problems).push(format!("{run} {name}: no results: {why}"));
                continue;
            }
        };
        let worst = worst(checks);
        for check in &worst {
            let at = ["SUCCESS", "FAILURE", "WARNING", "SKIPPED"].iter();
            if let Some(i) = at.clone().position(|s| *s == check.status) {
                verdict.checks[i] += 1;
            }
        }
        let failing: Vec<&&Check> = worst.iter().filter(|c| fails(&c.status)).collect();
        verdict.failed += usize::from(!failing.is_empty());
        verdict.scored_failure |=
            scenario.listed.not_scored.is_none() && checks.iter().any(|c| c.status == "FAILURE");
        let entries: Vec<&&Entry> = known.iter().filter(|e| &e.scenario == name).collect();
        if let Some(whole) = entries.iter().find(|e| e.check.is_none()) {
            match failing.is_empty() {
                true => verdict.problems.push(format!(
                    "{run} {name} passes now: remove {whole} from expected-failures.yml"
                )),
                false => {
                    verdict.failed_as_known += 1;
                    (verdict.expected).push(format!("{name} ({})", whole.reason));
                }
            }
            continue;
        }
        let unknown = failing
            .iter()
            .filter(|c| !(entries.iter()).any(|e| e.check.as_ref() == Some(&c.id)));
        verdict.failed_as_known += usize::from(!failing.is_empty() && unknown.count() == 0);
        for check in &failing {
            let entry = entries.iter().find(|e| e.check.as_ref() == Some(&check.id));
            match entry {
                Some(entry) => {
                    (verdict.expected).push(format!("{name}:{} ({})", check.id, entry.reason))
                }
                None => verdict.problems.push(format!(
                    "{run} {name}: {} {}: {}",
                    check.id,
                    check.status,
                    check.message.as_deref().unwrap_or("(no message)")
                )),
            }
        }
        for entry in &entries {
            let id = entry.check.as_deref().unwrap_or_default();
            match worst.iter().find(|c| c.id == id).map(|c| c.status.as_str()) {
                Some("SUCCESS") => verdict.problems.push(format!(
                    "{run} {name}:{id} passes now: remove {entry} from expected-failures.yml"
                )),
                None => verdict.problems.push(format!(
                    "{run} {name} reported no check {id}: {entry} of expected-failures.yml \
                     names none"
                )),
                Some(_) => {}
            }
        }
    }
    for entry in &known {
        let ran_it = ran.iter().any(|r| r.listed.name == entry.scenario);
        if !ran_it && entry.scope == Scope::Revision(revision.to_owned()) {
            verdict.problems.push(format!(
                "{entry} of expected-failures.yml names a scenario the {side} run of \
                 --requirements {revision} does not run"
            ));
        }
    }
    verdict
}

/// The known failures of the `server:` (or `client:`) section that no run of `side` ran:
/// each names a scenario no requirement set runs there.
pub(crate) fn unrun(known: &[Entry], side: Side, runs: &[&[Ran]]) -> Vec<String> {
    (known.iter())
        .filter(|e| e.side == side && e.scope == Scope::Every)
        .filter(|e| {
            !runs
                .iter()
                .any(|ran| ran.iter().any(|r| r.listed.name == e.scenario))
        })
        .map(|e| {
            format!("{e} of expected-failures.yml names a scenario no requirement set runs on the {side}")
        })
        .collect()
}

#[cfg(test)]
mod tests;
