use probtest::probability;

#[probability(cases(ticket = "data/missing.jsonl"))]
fn bench_missing(ticket: String) {
    assert!(!ticket.is_empty());
}

#[probability(cases(ticket = "data/tickets.txt"))]
fn bench_unknown_kind(ticket: String) {
    assert!(!ticket.is_empty());
}

fn main() {}
