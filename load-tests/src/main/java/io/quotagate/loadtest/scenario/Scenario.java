package io.quotagate.loadtest.scenario;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * One story told to every mode: the hidden quota, the workers and when they start, the neighbour
 * and the quota changes. All times and rates are scenario time (before {@code --speed}).
 *
 * @param name         the scenario's name on the command line
 * @param duration     how long it runs
 * @param quota        the hidden global quota, units per minute
 * @param burst        the quota bucket's capacity, units
 * @param workers      when each worker starts (one entry per worker)
 * @param demand       units per minute each worker wants
 * @param neighbour    a client that ignores 429s, if any
 * @param quotaDrop    a period when the server lowers its quota, if any
 * @param defaultModes modes run when {@code --modes} is not given
 * @param fixedRate    the rate of the {@code fixed} mode (whole app)
 */
record Scenario(String name, Duration duration, double quota, long burst, List<Duration> workers, double demand,
                Optional<Neighbour> neighbour, Optional<QuotaDrop> quotaDrop, List<Mode> defaultModes,
                double fixedRate) {

    /** A client sending {@code unitsPerMinute} from {@code start} for {@code length}, ignoring 429s. */
    record Neighbour(Duration start, Duration length, double unitsPerMinute) {
        Duration end() {
            return start.plus(length);
        }
    }

    /** The server's quota is multiplied by {@code factor} from {@code start} for {@code length}. */
    record QuotaDrop(Duration start, Duration length, double factor) {
        Duration end() {
            return start.plus(length);
        }
    }

    static final List<String> NAMES = List.of("race", "steady", "neighbour", "scale-out", "quota-drop");

    private static final double QUOTA = 3000;
    private static final long BURST = 500;
    private static final List<Mode> ADAPTIVE = List.of(Mode.AIMD, Mode.CUBIC);

    static Scenario named(String name) {
        Duration zero = Duration.ZERO;
        return switch (name.toLowerCase(Locale.ROOT)) {
            // the seeds' table: 2 instances wanting 2,000/min each; a neighbour takes half for 60 s after 5 min
            case "race" -> new Scenario("race", Duration.ofMinutes(15), QUOTA, BURST, List.of(zero, zero), 2000,
                    Optional.of(new Neighbour(Duration.ofMinutes(5), Duration.ofSeconds(60), 1500)), Optional.empty(),
                    List.of(Mode.NONE, Mode.FIXED, Mode.AIMD, Mode.CUBIC, Mode.HEADERS), 1500);
            case "steady" -> new Scenario("steady", Duration.ofMinutes(3), QUOTA, BURST, List.of(zero, zero, zero), 2000,
                    Optional.empty(), Optional.empty(), ADAPTIVE, 1500);
            // the seed's demo: the neighbour sends 1,500/min for 150 s, ignoring every 429
            case "neighbour" -> new Scenario("neighbour", Duration.ofSeconds(390), QUOTA, BURST, List.of(zero, zero, zero), 2000,
                    Optional.of(new Neighbour(Duration.ofMinutes(2), Duration.ofSeconds(150), 1500)), Optional.empty(),
                    ADAPTIVE, 1500);
            case "scale-out" -> new Scenario("scale-out", Duration.ofMinutes(6), QUOTA, BURST,
                    List.of(zero, zero, zero, Duration.ofMinutes(3), Duration.ofMinutes(3)), 2000,
                    Optional.empty(), Optional.empty(), ADAPTIVE, 1500);
            case "quota-drop" -> new Scenario("quota-drop", Duration.ofMinutes(5), QUOTA, BURST, List.of(zero, zero, zero), 2000,
                    Optional.empty(), Optional.of(new QuotaDrop(Duration.ofMinutes(2), Duration.ofSeconds(60), 0.5)),
                    ADAPTIVE, 1500);
            default -> throw new IllegalArgumentException("unknown scenario '" + name + "'; known: " + String.join(", ", NAMES));
        };
    }

    /** The same story with every rate (quota, demand, neighbour, fixed rate) multiplied by {@code factor}. */
    Scenario scaledRates(double factor) {
        return new Scenario(name, duration, quota * factor, Math.max(1, Math.round(burst * factor)), workers, demand * factor,
                neighbour.map(n -> new Neighbour(n.start(), n.length(), n.unitsPerMinute() * factor)), quotaDrop,
                defaultModes, fixedRate * factor);
    }

    int seconds() {
        return (int) duration.toSeconds();
    }

    /** The server's quota during scenario second {@code s}, units per minute. */
    double quotaAt(double second) {
        if (quotaDrop.isPresent()) {
            QuotaDrop d = quotaDrop.get();
            if (second >= d.start().toSeconds() && second < d.end().toSeconds()) return quota * d.factor();
        }
        return quota;
    }

    /** Workers started by scenario second {@code s}: the instance count every worker divides by. */
    int workersAt(double second) {
        return (int) workers.stream().filter(start -> start.toMillis() / 1000.0 <= second).count();
    }

    /** ∫ quota dt over the run, in units. */
    double quotaUnits() {
        double sum = 0;
        for (int s = 0; s < seconds(); s++) sum += quotaAt(s) / 60;
        return sum;
    }
}
