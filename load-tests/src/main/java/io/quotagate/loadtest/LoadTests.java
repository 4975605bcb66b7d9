package io.quotagate.loadtest;

import io.quotagate.loadtest.algorithms.AlgorithmsCommand;
import io.quotagate.loadtest.attack.AttackCommand;
import io.quotagate.loadtest.bench.BenchCommand;
import io.quotagate.loadtest.bench.FilterRoundsCommand;
import io.quotagate.loadtest.bench.FilterShareCommand;
import io.quotagate.loadtest.bench.HeapCommand;
import io.quotagate.loadtest.colleagues.ColleaguesCommand;
import io.quotagate.loadtest.scenario.ScenarioCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code load-tests.jar} entry point: one subcommand per tool. To add a tool, add its command
 * class to {@code subcommands} below.
 */
@Command(name = "load-tests", mixinStandardHelpOptions = true,
        description = "quotagate load generator and benchmarks.",
        subcommands = {
                AlgorithmsCommand.class,
                AttackCommand.class,
                BenchCommand.class,
                ColleaguesCommand.class,
                FilterRoundsCommand.class,
                FilterShareCommand.class,
                HeapCommand.class,
                JmhCommand.class,
                ScenarioCommand.class,
                CommandLine.HelpCommand.class,
        })
public final class LoadTests implements Runnable {
    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        // Jetty logs every start and stop at INFO: too chatty between benchmark runs
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        System.exit(new CommandLine(new LoadTests()).execute(args));
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
