//! Evals of the ticket-triage client against a model: clear tickets that must always be right,
//! ambiguous ones judged by their pass rate, a gateway that mangles responses, and an async
//! majority vote. Every call's tokens and fees are booked to its run, so the summary ends with
//! what the evals cost.
//!
//! By default the calls go to the local model server that `start_model_server` starts; with
//! `PROBTEST_EXAMPLE_BASE_URL` (and `PROBTEST_EXAMPLE_API_KEY`) set they go to that provider
//! instead, and the numbers in the comments below are the local model's.
//!
//! Every call goes through `probtest::limit("model")`, so that at most `model`'s concurrency
//! (Cargo.toml's `[package.metadata.probtest.limits]`, or `PROB_LIMIT_MODEL`) are in flight
//! across all test processes, and through `probtest::cached`: `PROB_CACHE=record` keeps each
//! answer with its usage and fee, and `PROB_CACHE=replay` gives them back without a call, to
//! check a report or statistics change against a real earlier run for free.

use std::collections::HashMap;
use std::error::Error;
use std::io::Write;
use std::sync::{Mutex, PoisonError};

use benches_example::server::{LocalModelServer, GLITCH_MARKER};
use benches_example::triage::{Label, TriageClient, TriageError, REQUEST_FEE};
use probtest::{probability, record_cost, record_usage};

/// The local model server of this module's runs; `None` when a real provider is configured.
static SERVER: Mutex<Option<LocalModelServer>> = Mutex::new(None);

/// Starts the local model server before the first run of this module: once per test process.
/// Under `cargo test` that is once for all the runs below. Under nextest, which runs every test
/// in its own process, it is once per run, and loading the tokenizer (about 0.4 s in a debug
/// build) is most of each run's time.
#[probtest::setup]
fn start_model_server() -> Result<(), Box<dyn Error + Send + Sync>> {
    if TriageClient::from_env().is_none() {
        let server = LocalModelServer::start()?;
        *SERVER.lock().unwrap_or_else(PoisonError::into_inner) = Some(server);
    }
    Ok(())
}

/// Stops the server after the module's last run (at the latest when the process exits), and
/// says how many requests it received (zero when every answer was replayed).
#[probtest::teardown]
fn stop_model_server() {
    let server = SERVER.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(server) = server {
        let requests = server.requests();
        server.stop();
        // Past libtest's capture, which takes only what the print macros write.
        let _ = writeln!(
            std::io::stderr().lock(),
            "local model server: {requests} requests"
        );
    }
}

/// A client of the configured provider, else of the local model server.
fn client() -> TriageClient {
    TriageClient::from_env().unwrap_or_else(|| {
        let server = SERVER.lock().unwrap_or_else(PoisonError::into_inner);
        let server = server
            .as_ref()
            .expect("setup starts the local model server");
        TriageClient::new(server.base_url())
    })
}

/// Triages `ticket` and books the call to the current run: the gateway's fee (charged whether
/// or not the answer is usable) and the response's token usage.
fn triage(client: &TriageClient, ticket: &str) -> Result<Label, TriageError> {
    let mut error = None;
    let answer = probtest::cached("triage", || {
        call(client, ticket).map_err(|e| {
            let text = e.to_string();
            error = Some(e);
            text
        })
    });
    label_of(answer, error)
}

/// One call under the `model` limit, its fee and usage booked to the current run, as a label
/// word the cassette can keep.
fn call(client: &TriageClient, ticket: &str) -> Result<String, TriageError> {
    let _slot = probtest::limit("model");
    record_cost(REQUEST_FEE);
    let answer = client.triage(ticket)?;
    record_usage(&answer.usage);
    Ok(answer.label.as_str().to_string())
}

/// The label of a (possibly replayed) answer; an error is the call's own when there was a
/// call, else its recorded text.
fn label_of(
    answer: Result<String, String>,
    error: Option<TriageError>,
) -> Result<Label, TriageError> {
    match answer {
        Ok(word) => word.parse().map_err(|()| TriageError::NotALabel(word)),
        Err(text) => Err(error.unwrap_or(TriageError::Replayed(text))),
    }
}

/// The temperature the app triages at.
const APP_TEMPERATURE: f64 = 0.2;

// Clear tickets at the app's temperature: the local model gets these wrong less than once in a
// billion calls (the unit tests of `benches_example::model` check it), so a wrong label is a
// regression. No gate: every run must pass. A harness problem (no server, a malformed
// response) comes back as `Err` through `?` and counts as an error, not as a wrong answer.
#[probability(runs = 5, params(
    (ticket, expected) = [
        ("I was charged twice for my order, please refund the duplicate charge", Label::Refund)
            => "double charge",
        ("Where is my parcel? The tracking has not updated and the delivery is late", Label::Shipping)
            => "late parcel",
        ("I am locked out of my account and the password reset email never arrives", Label::Account)
            => "locked out",
        ("The app crashes with an error every time I open the settings page", Label::Bug)
            => "app crash",
    ],
))]
fn bench_triage(ticket: &str, expected: Label) -> Result<(), TriageError> {
    let label = triage(&client().with_temperature(APP_TEMPERATURE), ticket)?;
    assert_eq!(label, expected, "ticket: {ticket}");
    Ok(())
}

// Held-out tickets, one a line of `data/held_out.jsonl` (`name`, `ticket`, `expected`): the
// support team adds tickets there without writing Rust, and each line is a case named by its
// `name` (`held_out::parcel lost`). At temperature 1 the local model gets each one right 97% to
// 99.7% of the time, so single runs miss now and then; what this eval measures is the line after
// the rows: with 12 inputs (`PROB_MIN_INPUTS`, 10) the summary gives the function's mean pass
// fraction over its tickets, with a bootstrap interval over inputs, and says whether more runs
// or more tickets would narrow it. The gate only catches a ticket the model no longer answers:
// right at least once in 8. Bad luck fails it less than once in ten billion sessions.
#[probability(
    runs = 8,
    min_passes = 1,
    cases((ticket, expected) = "data/held_out.jsonl", id = "name")
)]
fn bench_held_out(ticket: &str, expected: Label) -> Result<(), TriageError> {
    let label = triage(&client().with_temperature(1.0), ticket)?;
    assert_eq!(label, expected, "ticket: {ticket}");
    Ok(())
}

/// Mentions the parcel, asks for the money: the local model routes it to refund about 94% of
/// the time at temperature 1, and to shipping otherwise.
const BROKEN_ITEM: &str = "The parcel arrived but the item is broken, I want a refund";

// An ambiguous ticket at temperature 1, where answers vary the most. One wrong run is a
// sample, not a regression: the gate asks that the model be right more often than not, and
// passes when the whole 95% interval over the 40 runs lies above 0.5. At a true rate of 94%
// that fails about once in ten million sessions; about 7 sessions in 100 get all 40 right and
// show no FLAKY. (A bar of 0.8 would fail almost half of the sessions: over 40 runs the
// interval's lower end clears 0.8 only with 38 or more right.)
#[probability(runs = 40, min_rate = 0.5, params(ticket = [BROKEN_ITEM => "broken item"]))]
fn bench_ambiguous(ticket: &str) -> Result<(), TriageError> {
    let label = triage(&client().with_temperature(1.0), ticket)?;
    assert_eq!(label, Label::Refund, "ticket: {ticket}");
    Ok(())
}

/// The team a triaged ticket goes to: the first routing rule its label and words match. The
/// harness bug this row keeps on purpose, as eval authors write it: the rules are a `HashMap`,
/// and a refund for a broken item matches two of them (`returns` for a broken item, `billing`
/// for any refund), so the team is whichever of the two the map's order, seeded from the OS
/// per process and per map, lists first. The fix is a `Vec` of rules in order (or a `BTreeMap`).
fn route(label: Label, ticket: &str) -> &'static str {
    let rules: HashMap<&'static str, (Label, &str)> = HashMap::from([
        ("returns", (Label::Refund, "broken")),
        ("billing", (Label::Refund, "")),
        ("logistics", (Label::Shipping, "")),
    ]);
    rules
        .iter()
        .find(|(_, (rule, word))| *rule == label && ticket.contains(word))
        .map_or("triage", |(team, _)| team)
}

// The ambiguous ticket, triaged and then routed: the model's answer is right about 94% of the
// time, and the router (above) sends about half of the right answers to the wrong team. So
// the row is FLAKY for two reasons at once, and `cargo probtest doctor -p benches-example
// 'routed::broken item'` tells them apart: it records each run's answer through
// `probtest::cached`, replays it, and says which failures the answers carry (the model's) and
// that the harness fails given answers that pass (hash order, with a repro). The gate asks for
// little (at a true rate near 47%, 30 runs fall under 15% about once in a thousand sessions):
// the row is here to be diagnosed, not to judge the router.
#[probability(runs = 30, min_rate = 0.15, params(ticket = [BROKEN_ITEM => "broken item"]))]
fn bench_routed(ticket: &str) -> Result<(), TriageError> {
    let label = triage(&client().with_temperature(1.0), ticket)?;
    assert_eq!(label, Label::Refund, "ticket: {ticket}");
    assert_eq!(route(label, ticket), "returns", "label: {label:?}");
    Ok(())
}

// A ticket support staff argue about. Policy says shipping (find the parcel before refunding
// it); the local model says shipping about half the time. A rate gate near 50% would need
// hundreds of runs to decide, so this one counts instead: the policy answer must come up at
// least 3 times in 30. That catches a prompt or training-data change that makes the model stop
// considering shipping here, and fails by bad luck about twice in ten million sessions.
#[probability(
    runs = 30,
    min_passes = 3,
    params(ticket = ["I was charged for an order that never arrived" => "never arrived"])
)]
fn bench_contested(ticket: &str) -> Result<(), TriageError> {
    let label = triage(&client().with_temperature(1.0), ticket)?;
    assert_eq!(label, Label::Shipping, "ticket: {ticket}");
    Ok(())
}

// The gateway mangles a third of the responses to this ticket (the local server's
// GLITCH_MARKER): the client's `Err` makes those runs errors, and the row reads `N ERRORED`.
// How it stays green: `errors = "exclude"` in Cargo.toml's [package.metadata.probtest] leaves
// errored runs out of gates' samples, so this gate judges the model on the answers it did give
// (all right: it is a clear ticket). The setting is session-wide, and still strict where it
// matters: an ungated case fails on any error, and a gated case whose every run errored has no
// sample and cannot pass. Without it every errored run would fail its test item. A call that
// always fails is a broken harness rather than a flaky one: mark such an eval
// `#[ignore = "why"]` until it is fixed. With 24 runs, too few clean answers to clear the gate
// (fewer than 6) come about once in 200,000 sessions.
#[probability(runs = 24, min_rate = 0.5, params(ticket = [
    format!("{GLITCH_MARKER} I was charged twice for my order, please refund the duplicate charge")
        => "mangled response",
]))]
fn bench_flaky_gateway(ticket: String) -> Result<(), TriageError> {
    let label = triage(&client().with_temperature(APP_TEMPERATURE), &ticket)?;
    assert_eq!(label, Label::Refund, "ticket: {ticket}");
    Ok(())
}

// Self-consistency: ask three times concurrently and take the majority. One answer to the
// ambiguous ticket is right about 94% of the time; the majority of three about 99%, for three
// times the tokens (the Tokens line shows them). The client is blocking, so each call runs on
// tokio's blocking pool; the usage comes back to the eval's body, where probtest knows the
// current run (from threads you spawn yourself, record through `probtest::current_run()`).
#[probability(runs = 20, min_rate = 0.5, params(ticket = [BROKEN_ITEM => "broken item"]))]
#[tokio::test]
async fn bench_majority_vote(ticket: &str) -> Result<(), TriageError> {
    let client = client().with_temperature(1.0);
    let run = probtest::current_run().expect("inside a run");
    let calls: Vec<_> = (0..3)
        .map(|vote| {
            let (client, ticket, run) = (client.clone(), ticket.to_string(), run.clone());
            tokio::task::spawn_blocking(move || {
                // Each vote is recorded apart; its fee and usage are booked through the run's
                // handle, on this thread, so that the cassette keeps them with the vote.
                let mut error = None;
                let answer = run.cached(&format!("vote{vote}"), || {
                    let _slot = probtest::limit("model");
                    run.record_cost(REQUEST_FEE);
                    match client.triage(&ticket) {
                        Ok(answer) => {
                            run.record_usage(&answer.usage);
                            Ok(answer.label.as_str().to_string())
                        }
                        Err(e) => {
                            let text = e.to_string();
                            error = Some(e);
                            Err(text)
                        }
                    }
                });
                label_of(answer, error)
            })
        })
        .collect();
    let mut votes = Vec::new();
    for call in calls {
        votes.push(call.await.expect("a triage call panicked")?);
    }
    let majority = Label::ALL
        .into_iter()
        .find(|label| votes.iter().filter(|vote| *vote == label).count() >= 2);
    assert_eq!(majority, Some(Label::Refund), "votes: {votes:?}");
    Ok(())
}
