package io.quotagate.plans;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The per-request checks, written for speed, against plain statements of their rules: every tenant id
 * character and thousands of generated patterns and paths give the answer the rule states.
 */
class MatchingEquivalenceTest {
    private static final Pattern TENANT_ID = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

    @Test
    void tenantIdAcceptsExactlyItsCharactersAndLengths() {
        for (char c = 0; c < Character.MAX_VALUE; c++) {
            String id = "a" + c;
            assertThat(TenantId.isValid(id)).as("U+%04X", (int) c).isEqualTo(TENANT_ID.matcher(id).matches());
            assertThat(TenantId.isValid(new StringBuilder(id))).as("U+%04X as a StringBuilder", (int) c)
                    .isEqualTo(TENANT_ID.matcher(id).matches());
        }
        assertThat(TenantId.isValid("x".repeat(64))).isTrue();
        assertThat(TenantId.isValid("x".repeat(65))).isFalse();
        for (String dots : List.of(".", "..", "...")) assertThat(TenantId.isValid(dots)).as(dots).isFalse();
        assertThat(TenantId.isValid(".a.")).isTrue();
        assertThat(TenantId.isValid("")).isFalse();
    }

    @Test
    void pathPatternMatchesWhatItsSegmentsSay() {
        Random random = new Random(42);
        String[] segments = {"a", "b", "ab", "*"};
        String[] pathParts = {"a", "b", "ab", "ba", "", "abc"};
        for (int p = 0; p < 2_000; p++) {
            StringBuilder text = new StringBuilder();
            int n = random.nextInt(4);
            for (int i = 0; i < n; i++) text.append('/').append(segments[random.nextInt(segments.length)]);
            if (random.nextBoolean()) text.append("/**");
            String patternText = text.length() == 0 ? "/" : text.toString();
            PathPattern pattern = PathPattern.parse(patternText);
            for (int q = 0; q < 50; q++) {
                StringBuilder path = new StringBuilder();
                int m = random.nextInt(5);
                for (int i = 0; i < m; i++) path.append('/').append(pathParts[random.nextInt(pathParts.length)]);
                String candidate = path.length() == 0 ? (random.nextBoolean() ? "/" : "") : path.toString();
                assertThat(pattern.matches(candidate)).as("%s matches %s", patternText, candidate)
                        .isEqualTo(bySegments(patternText, candidate));
            }
        }
    }

    /**
     * The rule of {@link PathPattern}, stated plainly: split both on {@code /}; a literal equals its
     * segment, {@code *} takes one non-empty segment, a final {@code **} takes any rest; one trailing
     * slash is allowed when no {@code **} ends the pattern.
     */
    private static boolean bySegments(String pattern, String path) {
        if (!path.startsWith("/")) return false;
        List<String> want = pattern.equals("/") ? List.of() : new ArrayList<>(List.of(pattern.substring(1).split("/")));
        boolean anyRest = !want.isEmpty() && want.get(want.size() - 1).equals("**");
        if (anyRest) want.remove(want.size() - 1);
        List<String> got = new ArrayList<>(List.of(path.substring(1).split("/", -1)));
        if (path.equals("/")) got = new ArrayList<>();
        if (got.size() < want.size()) return false;
        for (int i = 0; i < want.size(); i++) {
            String w = want.get(i);
            String g = got.get(i);
            if (g.isEmpty() || !(w.equals("*") || w.equals(g))) return false;
        }
        List<String> rest = got.subList(want.size(), got.size());
        return anyRest || rest.isEmpty() || (rest.size() == 1 && rest.get(0).isEmpty());
    }
}
