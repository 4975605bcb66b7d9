package io.quotagate.client;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Reads a {@code Retry-After} value (RFC 9110 §10.2.3): delay-seconds or an HTTP-date, as a server
 * sends it, or a broken or hostile one. Nothing here throws and nothing overflows: the limiter clamps
 * what it reads to its maximum pause.
 */
final class RetryAfter {
    /** Neither form: the caller waits as if the field were absent. */
    static final long UNREADABLE = -1;

    // delay-seconds is 1*DIGIT; a decimal ("1.5") or an exponent ("1e30") is read too, rounded up,
    // rather than mistaken for "no wait asked". No sign: "-1" is unreadable.
    private static final Pattern NUMBER = Pattern.compile("[0-9]+(\\.[0-9]+)?([eE][+-]?[0-9]+)?");
    // obsolete forms a recipient must still accept (RFC 9110 §5.6.7); IMF-fixdate is RFC_1123_DATE_TIME's
    private static final DateTimeFormatter ASCTIME = new DateTimeFormatterBuilder().parseCaseInsensitive()
            .appendPattern("EEE MMM ppd HH:mm:ss yyyy").toFormatter(Locale.US).withZone(ZoneOffset.UTC);

    private RetryAfter() {
    }

    /**
     * The longest wait the field lines ask for, in whole seconds: {@link #UNREADABLE} when no line
     * reads as either form. A field is a singleton; several lines (or one a proxy joined with commas)
     * are a broken server's, and the longest readable wait is the safe reading.
     */
    static long seconds(List<String> values, long nowMillis) {
        long longest = UNREADABLE;
        if (values == null) return longest;
        for (String value : values) {
            long s = seconds(value, nowMillis);
            if (s == UNREADABLE && value != null && value.indexOf(',') >= 0 && !looksLikeDate(value)) {
                for (String piece : value.split(",")) s = Math.max(s, seconds(piece, nowMillis));
            }
            longest = Math.max(longest, s);
        }
        return longest;
    }

    /**
     * Whole seconds to wait, rounded up: 0 for a date in the past, {@link Long#MAX_VALUE} for more
     * than a long holds, {@link #UNREADABLE} when the value is neither form (empty, negative, text).
     */
    static long seconds(String value, long nowMillis) {
        if (value == null) return UNREADABLE;
        String v = value.trim();
        if (v.isEmpty()) return UNREADABLE;
        if (v.charAt(0) >= '0' && v.charAt(0) <= '9') {
            if (!NUMBER.matcher(v).matches()) return UNREADABLE;
            double d = Double.parseDouble(v);                 // "1e999" is infinite: as long as it gets
            return d >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(d);
        }
        long at = dateMillis(v, nowMillis);
        if (at == Long.MIN_VALUE) return UNREADABLE;
        // years 0000..9999 keep this far from overflow
        return Math.max(0, Math.floorDiv(at - nowMillis + 999, 1000));
    }

    private static boolean looksLikeDate(String value) {
        return value.indexOf(':') >= 0;
    }

    /** The date's epoch milliseconds, or {@code Long.MIN_VALUE} when it is no HTTP-date. */
    private static long dateMillis(String v, long nowMillis) {
        try {
            return ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
        } catch (DateTimeException e) {
            // not IMF-fixdate: try the two obsolete forms
        }
        try {
            return rfc850(nowMillis).parse(v, Instant::from).toEpochMilli();
        } catch (DateTimeException e) {
            // not rfc850-date either
        }
        try {
            return ASCTIME.parse(v, Instant::from).toEpochMilli();
        } catch (DateTimeException e) {
            return Long.MIN_VALUE;
        }
    }

    // rfc850-date has a two-digit year: one more than 50 years ahead is the most recent past year
    // with those digits (RFC 9110 §5.6.7), so the century runs from 49 years back to 50 ahead.
    private static DateTimeFormatter rfc850(long nowMillis) {
        int year = Instant.ofEpochMilli(nowMillis).atZone(ZoneOffset.UTC).getYear();
        return new DateTimeFormatterBuilder().parseCaseInsensitive()
                .appendPattern("EEEE, dd-MMM-")
                .appendValueReduced(ChronoField.YEAR, 2, 2, LocalDate.of(year - 49, 1, 1))
                .appendPattern(" HH:mm:ss 'GMT'")
                .toFormatter(Locale.US).withZone(ZoneOffset.UTC);
    }
}
