package io.quotagate.filter.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The samples of a Prometheus text exposition (a {@code PrometheusMeterRegistry.scrape()}), read as a query would. */
public final class Scrape {
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

    /** One sample line: its series name, labels and value. */
    public record Sample(String name, Map<String, String> labels, double value) {
        /** Whether it has every one of these labels with these values. */
        public boolean has(Map<String, String> wanted) {
            return wanted.entrySet().stream().allMatch(e -> e.getValue().equals(labels.get(e.getKey())));
        }
    }

    private final List<Sample> samples;

    private Scrape(List<Sample> samples) {
        this.samples = samples;
    }

    /** Parses the text (comment lines skipped). */
    public static Scrape of(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) continue;
            Matcher m = SAMPLE.matcher(line);
            if (!m.matches()) throw new IllegalArgumentException("not a sample line: " + line);
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(3) != null) {
                Matcher l = LABEL.matcher(m.group(3));
                while (l.find()) labels.put(l.group(1), l.group(2));
            }
            samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4).replace("+Inf", "Infinity"))));
        }
        return new Scrape(samples);
    }

    /** The samples of a series name that have these labels. */
    public List<Sample> series(String name, Map<String, String> labels) {
        return samples.stream().filter(s -> s.name().equals(name) && s.has(labels)).toList();
    }

    /** The sum of those samples ({@code sum(name{labels})}); 0 for none. */
    public double sum(String name, Map<String, String> labels) {
        return series(name, labels).stream().mapToDouble(Sample::value).sum();
    }
}
