package io.quotagate.loadtest;

import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Runs the JMH benchmarks packaged in this jar (packages {@code io.quotagate.loadtest.jmh} and, for
 * {@code FilterBenchmark}, {@code io.quotagate.loadtest.bench}); every
 * argument goes to JMH unchanged, so {@code jmh -h} lists JMH's own options.
 */
@Command(name = "jmh", description = {
        "Runs the JMH microbenchmarks in this jar; arguments are JMH's own (try: jmh -h, jmh -l).",
        "Example: jmh AdmissionBenchmark -f 1 -wi 3 -i 5"})
public final class JmhCommand implements Callable<Integer> {

    /** Every argument, in order: JMH's options are unknown to picocli, so they all land here. */
    @Unmatched
    List<String> args = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        org.openjdk.jmh.Main.main(args.toArray(String[]::new));
        return 0;
    }
}
