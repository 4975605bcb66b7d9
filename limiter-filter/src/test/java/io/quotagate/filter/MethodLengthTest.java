package io.quotagate.filter;

import io.quotagate.filter.MethodLengths.Method;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No method of the main code of any module is longer than {@value #MOST_LINES} lines of code (issue 41: a long
 * method does several things; split it by what each part does). Counted by {@link MethodLengths} from the
 * line of the method's name to its closing brace, blank and comment-only lines left out.
 */
class MethodLengthTest {
    static final int MOST_LINES = 80;

    /**
     * Methods known to be longer, each with the reason it is still allowed; remove an entry once its method
     * is split (the test fails on an entry that no longer needs to be here).
     */
    private static final Map<String, String> ALLOWED = Map.of();

    @Test
    void noMainMethodIsLongerThanEightyLines() {
        List<Method> methods = MethodLengths.inMainSources(Path.of(".."));
        assertThat(methods).as("methods found in the modules' src/main/java").hasSizeGreaterThan(1_000);
        List<Method> tooLong = methods.stream()
                .filter(m -> m.length() > MOST_LINES && !ALLOWED.containsKey(m.qualifiedName()))
                .toList();
        assertThat(tooLong).as("methods longer than %d lines of code: split them by what each part does",
                MOST_LINES).isEmpty();
        List<String> stale = ALLOWED.keySet().stream()
                .filter(name -> methods.stream().noneMatch(m -> m.qualifiedName().equals(name)
                        && m.length() > MOST_LINES))
                .toList();
        assertThat(stale).as("allowed as too long, but no longer are (or gone): remove them from ALLOWED").isEmpty();
    }

    @Test
    void theScanCountsCodeLinesOfMethodsAndConstructorsOnly() {
        String source = """
                package x;
                /** A { brace in javadoc. */
                public final class Sample implements Runnable {
                    private static final String BRACES = "{{{ } \\" {";
                    private final Runnable field = () -> {
                        System.out.println('{');
                    };

                    Sample() {
                        // a comment { that opens nothing
                        this.hashCode();
                    }

                    @Override
                    public void run() {

                        Runnable r = new Runnable() {
                            @Override public void run() { if (true) { return; } }
                        };
                        /* a block comment
                           over two lines } */
                        String block = \"""
                            { text block }
                            \""";
                    }

                    <T extends Comparable<T>> T max(T a,
                                                    T b) throws IllegalStateException {
                        return a.compareTo(b) >= 0 ? a : b;
                    }

                    record Pair(int a, int b) {
                        Pair {
                            if (a > b) throw new IllegalArgumentException("a > b {");
                        }
                    }

                    enum Kind { ONE, TWO; int twice() { return 2 * ordinal(); } }

                    static { System.out.println("initialiser"); }
                }
                """;
        List<Method> methods = MethodLengths.in(Path.of("Sample.java"), source);
        assertThat(methods).extracting(m -> m.qualifiedName() + "@" + m.line() + ":" + m.length())
                .containsExactlyInAnyOrder(
                        "Sample.Sample@9:3",
                        "Sample.new.run@18:1",
                        "Sample.run@15:8",
                        "Sample.max@27:4",
                        "Sample.Pair.Pair@33:3",
                        "Sample.Kind.twice@38:1");
    }
}
