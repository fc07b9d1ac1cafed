//! Evals of the ticket classifier: every case runs ten times, and the summary shows how often
//! each answer was right and what the calls cost.

use benches_example::triage::{Label, Triage};
use probtest::{probability, record_usage};

#[probability(runs = 10, params(
    (ticket, expected) = [
        ("I was charged twice, please refund my money", Label::Refund) => "double charge",
        ("Where is my order? The parcel did not arrive", Label::Shipping) => "late parcel",
        ("I am locked out of my account, reset my password", Label::Account) => "locked out",
    ],
))]
fn bench_triage(ticket: &str, expected: Label) {
    let answer = Triage::default().classify(ticket);
    record_usage(&answer.usage);
    assert_eq!(answer.label, expected, "ticket: {ticket}");
}
