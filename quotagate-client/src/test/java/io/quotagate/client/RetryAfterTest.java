package io.quotagate.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class RetryAfterTest {
    private static final long NOW = ZonedDateTime.parse("Sun, 06 Nov 1994 08:49:30 GMT", DateTimeFormatter.RFC_1123_DATE_TIME)
            .toInstant().toEpochMilli() + 200;

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "120 | 120",
            "' 3 ' | 3",
            "0 | 0",
            "Sun, 06 Nov 1994 08:49:37 GMT | 7",     // 6.8 s away: rounded up
            "Sunday, 06-Nov-94 08:49:37 GMT | 7",    // rfc850-date, obsolete but to be accepted
            "Sun Nov  6 08:49:37 1994 | 7",          // asctime-date, likewise
            "Sun, 06 Nov 1994 08:49:00 GMT | 0",     // in the past
            "Thu, 01 Jan 1970 00:00:00 GMT | 0",
            "Mon, 06 Nov 1994 08:49:37 GMT | -1",    // not that day of the week
            "1.5 | 2",                               // not delay-seconds, but a wait: rounded up
            "0.001 | 1",
            "2.0 | 2",
            "9999999999 | 9999999999",
            "999999999999 | 999999999999",
            "99999999999999999999999 | 9223372036854775807",   // more than a long holds
            "1e30 | 9223372036854775807",
            "1e999 | 9223372036854775807",
            "5e-1 | 1",
            "-1 | -1",
            "-999999999999 | -1",
            "+5 | -1",
            "soon | -1",
            "'' | -1",
            "NaN | -1",
            "Infinity | -1",
            "0x10 | -1",
            "12abc | -1",
            "1e | -1",
            "'120, 60' | -1",                        // one value: unreadable; as a field, see below
    })
    void readsDelaySecondsAndHttpDatesAndNeverOverflows(String value, long seconds) {
        assertThat(RetryAfter.seconds(value, NOW)).isEqualTo(seconds);
    }

    @Test
    void aDateFarAheadIsItsSecondsWithoutOverflow() {
        long at = Instant.parse("9999-12-31T23:59:59Z").toEpochMilli();
        assertThat(RetryAfter.seconds("Fri, 31 Dec 9999 23:59:59 GMT", NOW)).isEqualTo((at - NOW + 999) / 1000);
    }

    @Test
    void aMillionDigitsAreAsLongAsALongGets() {
        assertThat(RetryAfter.seconds("9".repeat(1_000_000), NOW)).isEqualTo(Long.MAX_VALUE);
        assertThat(RetryAfter.seconds("9".repeat(1_000_000) + "x", NOW)).isEqualTo(RetryAfter.UNREADABLE);
    }

    @Test
    void ofSeveralValuesTheLongestReadableOneCounts() {
        assertThat(RetryAfter.seconds(List.of("120", "60"), NOW)).isEqualTo(120);
        assertThat(RetryAfter.seconds(List.of("soon", "30"), NOW)).isEqualTo(30);
        assertThat(RetryAfter.seconds(List.of("120, 60"), NOW)).as("joined by a proxy").isEqualTo(120);
        assertThat(RetryAfter.seconds(List.of("Sun, 06 Nov 1994 08:49:37 GMT", "3"), NOW)).isEqualTo(7);
        assertThat(RetryAfter.seconds(Arrays.asList(null, "5"), NOW)).isEqualTo(5);
        assertThat(RetryAfter.seconds(List.of("soon", "-3", ""), NOW)).isEqualTo(RetryAfter.UNREADABLE);
        assertThat(RetryAfter.seconds(List.of(), NOW)).isEqualTo(RetryAfter.UNREADABLE);
        assertThat(RetryAfter.seconds((List<String>) null, NOW)).isEqualTo(RetryAfter.UNREADABLE);
    }
}
