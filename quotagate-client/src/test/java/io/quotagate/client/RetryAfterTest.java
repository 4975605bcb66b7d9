package io.quotagate.client;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

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
            "Sun, 06 Nov 1994 08:49:00 GMT | 0",     // in the past
            "-1 | -1",
            "soon | -1",
            "1.5 | -1",
    })
    void readsDelaySecondsAndHttpDates(String value, long seconds) {
        assertThat(RetryAfter.seconds(value, NOW)).isEqualTo(seconds);
    }
}
