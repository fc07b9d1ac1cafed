# The pytest-probability 0.3.0 benches behind peer_latency.json:
#   python -m pytest bench_latency.py --prob-json=peer_latency.json --prob-latency

import time
import pytest

@pytest.mark.probability(runs=8, latency_quantile=0.5, max_latency=0.05)
def bench_fast():
    pass

@pytest.mark.probability(runs=8, latency_quantile=0.5, max_latency=0.05)
def bench_slow():
    time.sleep(0.06)

@pytest.mark.probability(runs=3, latency_quantile=0.5, max_latency=0.05)
def bench_short():
    pass

@pytest.mark.probability(runs=12, latency_quantile=0.5, max_latency=0.05, confidence=0.8)
def bench_confident():
    time.sleep(0.001)

@pytest.mark.probability(runs=10, latency_quantile=0.9)
def bench_reported():
    time.sleep(0.002)

@pytest.mark.probability(runs=20)
def bench_default():
    pass
