package io.quotagate.loadtest.bench;

import org.HdrHistogram.Histogram;

/**
 * One timed run of one mode.
 *
 * @param mode           what was measured
 * @param ok             responses with status 200
 * @param non200         responses with any other status
 * @param ioErrors       failed exchanges (connection refused, reset, timeout, malformed response)
 * @param elapsedNanos   from the first request sent to the last response read
 * @param latencyMicros  latency of every answered request
 * @param serverCpuNanos CPU time of the server's threads during the run
 */
record RunResult(Mode mode, long ok, long non200, long ioErrors, long elapsedNanos, Histogram latencyMicros,
                 long serverCpuNanos) {

    long requests() {
        return ok + non200;
    }

    long errors() {
        return non200 + ioErrors;
    }

    double rps() {
        return requests() * 1e9 / elapsedNanos;
    }

    double p50Ms() {
        return latencyMicros.getValueAtPercentile(50) / 1000.0;
    }

    double p99Ms() {
        return latencyMicros.getValueAtPercentile(99) / 1000.0;
    }

    double cpuMicrosPerRequest() {
        return requests() == 0 ? Double.NaN : serverCpuNanos / 1000.0 / requests();
    }
}
