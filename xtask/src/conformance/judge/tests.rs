use super::*;
use crate::conformance::baseline;

fn check(id: &str, status: &str) -> Check {
    Check {
        id: id.into(),
        status: status.into(),
        message: Some(format!("{id} said {status}")),
    }
}

fn ran(name: &str, scored: bool, checks: &[(&str, &str)]) -> Ran {
    Ran {
        listed: Listed {
            name: name.into(),
            not_scored: (!scored).then(|| "pending".to_owned()),
        },
        checks: Ok(checks.iter().map(|(id, s)| check(id, s)).collect()),
    }
}

fn known(text: &str) -> Vec<Entry> {
    baseline::parse(text).unwrap()
}

#[test]
fn reads_the_requirement_set_the_suite_lists() {
    let listing = "Required for 2026-07-28 (50 scenarios, frozen; run at the 2026-07-28 wire):\n\
                   \n\
                   Server scenarios (test against a server):\n\
                   \x20 - server-stateless\n\
                   \x20 - tools-list\n\
                   \n\
                   Client scenarios (test against a client):\n\
                   \x20 - tools_call\n\
                   \n\
                   Run and reported, but never scored:\n\
                   \x20 extension (2):\n\
                   \x20   - auth/dpop [client]\n\
                   \x20   - tasks-lifecycle [server]\n\
                   \x20 pending (1):\n\
                   \x20   - json-schema-2020-12 [server]\n";
    let named = |side| -> Vec<(String, Option<String>)> {
        (requirement_set(listing, side).into_iter())
            .map(|l| (l.name, l.not_scored))
            .collect()
    };
    let named = |side| {
        named(side)
            .iter()
            .map(|(n, r)| format!("{n} {}", r.as_deref().unwrap_or("scored")))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        named(Side::Server),
        [
            "server-stateless scored",
            "tools-list scored",
            "tasks-lifecycle extension",
            "json-schema-2020-12 pending",
        ]
    );
    assert_eq!(
        named(Side::Client),
        ["tools_call scored", "auth/dpop extension"]
    );
}

#[test]
fn reads_checks_json_and_refuses_what_it_cannot_judge() {
    let text = r#"[{"id": "a", "status": "SUCCESS", "timestamp": "t"},
                   {"id": "b", "status": "FAILURE", "errorMessage": "no", "details": {"x": [1]}}]"#;
    let read = checks(text).unwrap();
    assert_eq!(read[1].message.as_deref(), Some("no"));
    assert!(
        checks(r#"{"id": "a"}"#)
            .unwrap_err()
            .contains("not an array")
    );
    assert!(checks(r#"[{"id": "a"}]"#).unwrap_err().contains("without"));
    let odd = checks(r#"[{"id": "a", "status": "MAYBE"}]"#).unwrap_err();
    assert!(odd.contains("unknown status \"MAYBE\""), "{odd}");
}

#[test]
fn finds_a_scenarios_results_by_its_name_and_time() {
    let dir = std::env::temp_dir().join(format!("xtask-judge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in [
        "server-tools-list-2026-12-06T04-06-34-165Z",
        "server-tools-list-2026-12-06T04-06-35-001Z",
        "server-tools-list-changed-2026-12-06T04-06-36-000Z",
        "tools_call-2026-12-06T04-06-36-000Z",
        "auth/dpop-2026-12-06T04-06-36-000Z",
        "auth/dpop-nonce-2026-12-06T04-06-36-000Z",
    ] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let found = results_of(&dir, Side::Server, "tools-list").unwrap();
    assert!(found.ends_with("server-tools-list-2026-12-06T04-06-35-001Z"));
    assert!(results_of(&dir, Side::Server, "tools").is_none());
    // A client's, under its own name; `auth/*` in the folder `auth`.
    let found = results_of(&dir, Side::Client, "tools_call").unwrap();
    assert!(found.ends_with("tools_call-2026-12-06T04-06-36-000Z"));
    let found = results_of(&dir, Side::Client, "auth/dpop").unwrap();
    assert!(found.ends_with("auth/dpop-2026-12-06T04-06-36-000Z"));
    assert!(results_of(&dir, Side::Server, "tools_call").is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unknown_failure_or_warning_fails_the_run_a_known_one_does_not() {
    let run = [
        ran("ping", true, &[("ping", "SUCCESS"), ("wire", "INFO")]),
        ran(
            "tools-list",
            true,
            &[("names", "WARNING"), ("order", "SUCCESS")],
        ),
        // The worst outcome of an id wins.
        ran("caching", true, &[("ttl", "FAILURE"), ("ttl", "SUCCESS")]),
        ran(
            "tasks-lifecycle",
            false,
            &[("a", "FAILURE"), ("b", "FAILURE")],
        ),
        ran(
            "json-schema",
            false,
            &[("anchor", "FAILURE"), ("refs", "SKIPPED")],
        ),
    ];
    let entries = known(
        "server:\n  - tasks-lifecycle # no tasks yet\n\
         server@2026-07-28:\n  - json-schema:anchor # dropped\n",
    );
    let verdict = judge(Side::Server, "2026-07-28", &run, &entries);
    assert_eq!(
        verdict.problems,
        [
            "server@2026-07-28 tools-list: names WARNING: names said WARNING",
            "server@2026-07-28 caching: ttl FAILURE: ttl said FAILURE",
        ]
    );
    assert_eq!(
        verdict.expected,
        [
            "tasks-lifecycle (no tasks yet)",
            "json-schema:anchor (dropped)"
        ]
    );
    assert_eq!(
        (verdict.scenarios, verdict.scored, verdict.failed),
        (5, 3, 4)
    );
    assert_eq!(verdict.failed_as_known, 2);
    assert!(verdict.scored_failure);
    // SUCCESS, FAILURE, WARNING, SKIPPED: each id once.
    assert_eq!(verdict.checks, [2, 4, 1, 1]);
}

#[test]
fn a_known_failure_that_passes_or_is_not_reported_fails_the_run() {
    let run = [
        ran("tasks-lifecycle", false, &[("a", "SUCCESS")]),
        ran(
            "json-schema",
            false,
            &[("anchor", "SUCCESS"), ("refs", "SKIPPED")],
        ),
    ];
    let entries = known(
        "server:\n  - tasks-lifecycle # no tasks yet\n\
         \x20 - json-schema:refs # skipped is not passing\n\
         \x20 - json-schema:anchr # a typo\n\
         \x20 - json-schema:anchor # fixed since\n\
         \x20 - no-such-scenario # a typo\n\
         server@2026-07-28:\n  - nowhere # a typo\n\
         server@2025-11-25:\n  - ping # another run's\n",
    );
    let verdict = judge(Side::Server, "2026-07-28", &run, &entries);
    assert_eq!(
        verdict.problems,
        [
            "server@2026-07-28 tasks-lifecycle passes now: remove tasks-lifecycle (line 2) from \
             expected-failures.yml",
            "server@2026-07-28 json-schema reported no check anchr: json-schema:anchr (line 4) of \
             expected-failures.yml names none",
            "server@2026-07-28 json-schema:anchor passes now: remove json-schema:anchor (line 5) from \
             expected-failures.yml",
            "nowhere (line 8) of expected-failures.yml names a scenario the server run of \
             --requirements 2026-07-28 does not run",
        ]
    );
    assert!(verdict.expected.is_empty() && !verdict.scored_failure);
    let unrun = unrun(&entries, Side::Server, &[&run]);
    assert_eq!(
        unrun,
        [
            "no-such-scenario (line 6) of expected-failures.yml names a scenario no requirement \
             set runs on the server"
        ]
    );
}

#[test]
fn a_scenario_without_results_fails_the_run_even_when_known() {
    let mut run = vec![ran("tasks-lifecycle", false, &[])];
    run[0].checks = Err("no checks.json in target/conformance".into());
    let entries = known("server:\n  - tasks-lifecycle # no tasks yet\n");
    let verdict = judge(Side::Server, "2026-07-28", &run, &entries);
    assert_eq!(
        verdict.problems,
        ["server@2026-07-28 tasks-lifecycle: no results: no checks.json in target/conformance"]
    );
    assert_eq!(verdict.failed, 1);
}

#[test]
fn a_client_run_is_judged_by_the_client_sections_only() {
    let run = [
        ran("tools_call", true, &[("tool-add-numbers", "SUCCESS")]),
        ran("auth/dpop", false, &[("dpop-proof", "FAILURE")]),
    ];
    // The server's entry for a scenario of the same name does not cover the client's run.
    let entries = known(
        "server:\n  - tools_call # not the client's\n\
         client@2026-07-28:\n  - auth/dpop # no DPoP\n\
         client@2025-11-25:\n  - initialize # another run's\n",
    );
    let verdict = judge(Side::Client, "2026-07-28", &run, &entries);
    assert!(verdict.problems.is_empty(), "{:?}", verdict.problems);
    assert_eq!(verdict.expected, ["auth/dpop (no DPoP)"]);
    assert!(!verdict.scored_failure);
    // The same failure unlisted fails the client's run, named as the client's.
    let verdict = judge(Side::Client, "2026-07-28", &run, &[]);
    assert_eq!(
        verdict.problems,
        ["client@2026-07-28 auth/dpop: dpop-proof FAILURE: dpop-proof said FAILURE"]
    );
    assert!(unrun(&entries, Side::Client, &[&run]).is_empty());
}
