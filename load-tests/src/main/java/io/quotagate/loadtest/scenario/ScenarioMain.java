package io.quotagate.loadtest.scenario;

import picocli.CommandLine;

/** Temporary entry point until the load-tests main command lands; then {@code scenario} is one of its subcommands. */
public final class ScenarioMain {
    private ScenarioMain() {
    }

    public static void main(String[] args) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.exit(new CommandLine(new ScenarioCommand()).execute(args));
    }
}
