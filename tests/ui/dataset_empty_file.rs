use probtest::probability;

#[probability(cases(ticket = "data/empty.jsonl"))]
fn bench_empty(ticket: String) {
    assert!(!ticket.is_empty());
}

fn main() {}
