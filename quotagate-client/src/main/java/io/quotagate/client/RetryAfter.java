package io.quotagate.client;

import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/** Reads a {@code Retry-After} value (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. */
final class RetryAfter {
    private RetryAfter() {
    }

    /** Whole seconds to wait, rounded up for a date; -1 when the value is neither form. */
    static long seconds(String value, long nowMillis) {
        String v = value.trim();
        if (!v.isEmpty() && v.length() <= 10 && v.chars().allMatch(ch -> ch >= '0' && ch <= '9')) {
            return Long.parseLong(v);
        }
        try {
            // IMF-fixdate is the form a sender must use; RFC_1123_DATE_TIME reads it
            long at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
            return Math.max(0, (at - nowMillis + 999) / 1000);
        } catch (DateTimeParseException e) {
            return -1;
        }
    }
}
