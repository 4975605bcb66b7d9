package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Loads and validates a plans file (YAML, format in docs/plans-file.md). Every mistake fails the load with
 * one {@link InvalidPlansException} naming the file, the line and the field, so a misconfigured
 * service refuses to start instead of limiting the wrong way.
 *
 * <p>The text becomes a tree that remembers lines ({@code YamlTree}); each section has a binder that
 * reads its fields through one typed cursor ({@code FieldCursor}). A {@code tenants.resolvers} entry is
 * kept as written ({@link TenantSettings.ResolverSpec}): its options are checked by the resolver type
 * that reads them, in tenant-resolution, when the resolver chain is built. {@code store:} is kept the
 * same way ({@link StoreSpec}): a type name and options that the type's provider checks (limiter-filter
 * finds it when a filter starts or takes a reloaded file), so this module knows no backend.
 */
public final class PlansFile {
    /** Prefix of a location that names a class-path resource rather than a file. */
    public static final String CLASSPATH_PREFIX = "classpath:";
    /**
     * The largest plans file loaded unless another limit is given: 1 MiB. Real plans files are a few
     * kilobytes; a 10 MB one took the YAML parser seconds and most of a core, during a hot reload too.
     */
    public static final long DEFAULT_MAX_BYTES = 1L << 20;

    private static final Pattern PERIOD = Pattern.compile("(\\d+)(ms|s|m|h|d)");
    /**
     * The longest period accepted: 10 years. Buckets, Retry-After and expiry work in nanoseconds, and a
     * {@code long} of them ends at about 292 years, before any sum or multiple of a period is taken
     * (a Redis store's local share multiplies it by the instance count); 10 years leaves that room and
     * is longer than any quota period in use.
     */
    static final Duration MAX_PERIOD = Duration.ofDays(3650);

    private PlansFile() {
    }

    /**
     * Loads plans from {@code classpath:<resource>} or a file path, at most {@link #DEFAULT_MAX_BYTES}.
     *
     * @throws InvalidPlansException if the file is missing, too large or invalid
     */
    public static Plans load(String location) {
        return load(location, DEFAULT_MAX_BYTES);
    }

    /**
     * Loads plans from {@code classpath:<resource>} or a file path, refusing one larger than
     * {@code maxBytes} before it is parsed (a resource is read no further than one byte past it).
     *
     * @throws InvalidPlansException    if the file is missing, larger than {@code maxBytes} or invalid
     * @throws IllegalArgumentException if {@code maxBytes} is not between 1 and {@code Integer.MAX_VALUE - 1}
     */
    public static Plans load(String location, long maxBytes) {
        checkMaxBytes(maxBytes);
        if (location == null || location.isBlank()) {
            throw new InvalidPlansException("<plans>", 0, "", "no plans file given");
        }
        if (location.startsWith(CLASSPATH_PREFIX)) {
            String resource = location.substring(CLASSPATH_PREFIX.length()).replaceFirst("^/", "");
            ClassLoader loader = Thread.currentThread().getContextClassLoader();
            if (loader == null) loader = PlansFile.class.getClassLoader();
            String text;
            try (InputStream in = loader.getResourceAsStream(resource)) {
                if (in == null) throw new InvalidPlansException(location, 0, "", "no such class-path resource");
                text = readAtMost(location, in, maxBytes);
            } catch (IOException e) {
                throw new InvalidPlansException(location, 0, "", "cannot read: " + e.getMessage());
            }
            return parse(location, text);
        }
        return load(Path.of(location), maxBytes);
    }

    /**
     * Loads plans from a file, at most {@link #DEFAULT_MAX_BYTES}.
     *
     * @throws InvalidPlansException if the file is missing, too large or invalid
     */
    public static Plans load(Path file) {
        return load(file, DEFAULT_MAX_BYTES);
    }

    /**
     * Loads plans from a file, refusing one larger than {@code maxBytes} before it is parsed: the size
     * is taken from the file's attributes, and the read stops one byte past the limit (for a file that
     * grows meanwhile, or a pipe whose size is unknown). The refusal names the file, its size and the
     * limit.
     *
     * @throws InvalidPlansException    if the file is missing, larger than {@code maxBytes} or invalid
     * @throws IllegalArgumentException if {@code maxBytes} is not between 1 and {@code Integer.MAX_VALUE - 1}
     */
    public static Plans load(Path file, long maxBytes) {
        checkMaxBytes(maxBytes);
        String source = file.toString();
        String text;
        try {
            long size = Files.size(file);
            if (size > maxBytes) throw tooLarge(source, size, maxBytes);
            try (InputStream in = Files.newInputStream(file)) {
                text = readAtMost(source, in, maxBytes);
            }
        } catch (IOException | UncheckedIOException e) {
            throw new InvalidPlansException(source, 0, "", "cannot read: " + e);
        }
        return parse(source, text);
    }

    /** The text, read no further than one byte past {@code maxBytes} (a size not known before, or grown meanwhile). */
    private static String readAtMost(String source, InputStream in, long maxBytes) throws IOException {
        byte[] bytes = in.readNBytes((int) maxBytes + 1);
        if (bytes.length > maxBytes) throw tooLarge(source, -1, maxBytes);
        return decode(source, bytes);
    }

    private static void checkMaxBytes(long maxBytes) {
        if (maxBytes <= 0 || maxBytes >= Integer.MAX_VALUE) {
            throw new IllegalArgumentException("the plans file size limit must be 1 to " + (Integer.MAX_VALUE - 1)
                    + " bytes, was " + maxBytes);
        }
    }

    /** {@code size} -1: not known (a class-path resource, a file that grew while it was read). */
    private static InvalidPlansException tooLarge(String source, long size, long maxBytes) {
        return new InvalidPlansException(source, 0, "", "the file is " + (size < 0 ? "more than " + maxBytes : size)
                + " bytes, over the limit of " + maxBytes + " bytes; it was not parsed (raise the limit if it is meant to be this large)");
    }

    /** Strict UTF-8, as {@code Files.readString}: a malformed byte fails the load instead of becoming U+FFFD. */
    private static String decode(String source, byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new InvalidPlansException(source, 0, "", "cannot read: " + e);
        }
    }

    /**
     * Parses plans from YAML text.
     *
     * @param source the name used in error messages (usually the file name)
     * @throws InvalidPlansException if the text is not a valid plans file
     */
    public static Plans parse(String source, String yaml) {
        FieldCursor in = new FieldCursor(source);
        return plans(in, YamlTree.read(in, yaml));
    }

    // ---- tree -> model: one binder per section, in an order where each sees what it checks against --------

    private static Plans plans(FieldCursor in, YamlNode root) {
        Mapping top = in.mapping(root, "", Set.of("global", "plans", "routes", "tenants", "groups", "shadow", "store",
                "signals"));
        PlanBinder planBinder = new PlanBinder(in);
        Map<String, Plan> plans = planBinder.plans(top);
        Optional<GlobalQuota> global = planBinder.global(top.entries().get("global"));
        RouteBinder routeBinder = new RouteBinder(in, planBinder);
        List<RouteRule> routes = routeBinder.routes(top.entries().get("routes"), plans, global);
        TenantSettings tenants = new TenantBinder(in, planBinder).tenants(top.entries().get("tenants"), plans, routes);
        if (tenants.users().isEmpty() && routeBinder.userScopeLine >= 0) {
            throw in.error(routeBinder.userScopeLine, routeBinder.userScopeField,
                    "a limit per user needs tenants.users, the resolvers that name the user inside a tenant");
        }
        Set<String> usedGroups = RouteBinder.usedGroups(routes);
        GroupBinder groupBinder = new GroupBinder(in);
        groupBinder.checkPlanCapsAreUsed(top, usedGroups);
        Map<String, GroupSettings> groups = groupBinder.groups(top.entries().get("groups"), usedGroups);
        boolean shadow = in.bool(top, "shadow", "shadow", false);
        StoreSpec store = new StoreBinder(in).store(top.entries().get("store"));
        SignalSettings signals = new SignalBinder(in).signals(top.entries().get("signals"), plans);
        Plans.reserveConflict(plans, routes, global, tenants).ifPresent(c -> {
            PlanBinder.Where at = planBinder.slidingWindows.get(c.limits() + "#" + c.limit());
            Integer throttleLine = planBinder.throttleLines.get(c.throttle());
            String reason = c.reason(c.throttle() + (throttleLine == null ? "" : " (line " + throttleLine + ")"));
            if (at == null) throw in.error(0, c.limits(), "limit '" + c.limit() + "': " + reason);
            throw in.error(at.line(), at.field(), reason);
        });
        return Plans.builder(in.source())
                .global(global)
                .plans(plans.values())
                .routes(routes)
                .tenants(tenants)
                .groups(groups.values())
                .shadow(shadow)
                .store(store)
                .signals(signals)
                .build();
    }

    /**
     * Parses a list of limits as a plans file's {@code limits:} writes it, for limits kept elsewhere (a
     * tenant's contract in a database column): YAML, usually on one line
     * ({@code [{capacity: 200, refill: 100, period: 10s}, {name: day, capacity: 100000, refill: 100000, period: 1d}]}),
     * or the same as JSON, which is YAML too. The checks are the file's: at least one limit, only the
     * keys {@code name}, {@code algorithm}, {@code capacity}, {@code refill}, {@code period}, whole numbers
     * &gt; 0, periods as {@link #parsePeriod} reads them, unique names ({@code b0}, {@code b1}... when none is
     * written), {@code algorithm} one of {@code token-bucket} (the default), {@code gcra}, {@code sliding-window},
     * no {@code refill} on a sliding window.
     * A route's cost is not checked here: the caller knows the routes.
     *
     * @param source names the text in error messages (a table and column, a tenant)
     * @throws InvalidPlansException naming the field ({@code limits[1].period}) and the reason
     */
    public static List<Bandwidth> parseLimits(String source, String text) {
        FieldCursor in = new FieldCursor(source);
        if (text == null || text.isBlank()) throw in.error(0, "limits", "at least one limit is required");
        return new PlanBinder(in).limits(YamlTree.read(in, text), "limits");
    }

    /**
     * Parses a list of calendar quotas as a plans file's {@code quotas:} writes it, for quotas kept
     * elsewhere (a tenant's contract in a database column): YAML, usually on one line
     * ({@code [{name: monthly, limit: 100000, per: month, zone: Europe/Berlin}]}), or the same as JSON.
     * The checks are the file's: only the keys {@code name}, {@code limit}, {@code per}, {@code zone},
     * {@code anchor}, names required and unique, limits whole numbers &gt; 0, {@code per} one of {@code day},
     * {@code week}, {@code month}, an IANA zone (UTC when none is written), an anchor that fits the period
     * ({@code {day: 15, time: "09:00"}} on a month, {@code {weekday: wednesday}} on a week,
     * {@code {time: "06:00"}} on any). {@code []} is a valid
     * answer: no quotas at all, as {@code tenants.overrides.<t>.quotas: []} says. A route's cost is not
     * checked here: the caller knows the routes.
     *
     * @param source names the text in error messages (a table and column, a tenant)
     * @throws InvalidPlansException naming the field ({@code quotas[0].per}) and the reason
     */
    public static List<CalendarQuota> parseQuotas(String source, String text) {
        return parseQuotas(source, text, ZoneOffset.UTC);
    }

    /**
     * Parses a list of calendar quotas as {@link #parseQuotas(String, String)} does, a quota written without
     * a {@code zone} running in {@code defaultZone} (a tenant's own zone).
     *
     * @param source      names the text in error messages (a table and column, a tenant)
     * @param defaultZone the zone of a quota that names none
     * @throws InvalidPlansException naming the field ({@code quotas[0].anchor.day}) and the reason
     */
    public static List<CalendarQuota> parseQuotas(String source, String text, ZoneId defaultZone) {
        FieldCursor in = new FieldCursor(source);
        if (text == null || text.isBlank()) throw in.error(0, "quotas", "expected a list of quotas ([] for none)");
        return new PlanBinder(in).quotas(YamlTree.read(in, text), "quotas", defaultZone);
    }

    /**
     * Parses a period as the plans file writes it: a whole number with a unit ({@code 500ms},
     * {@code 10s}, {@code 1m}, {@code 2h}, {@code 1d}) or ISO-8601 ({@code PT10S}). Also used to read
     * periods given at runtime (an admin API), so both accept exactly the same text. Every period is
     * at most 10 years ({@code 3650d}).
     *
     * @throws IllegalArgumentException naming the reason, if the text is not a period &gt; 0 and &lt;= 10 years
     */
    public static Duration parsePeriod(String text) {
        if (text == null || text.isEmpty()) throw new IllegalArgumentException("a period is required, e.g. 10s, 1m, 1d or PT10S");
        Duration d;
        Matcher m = PERIOD.matcher(text);
        if (m.matches()) {
            long n;
            try {
                n = Long.parseLong(m.group(1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("number out of range: " + text);
            }
            try {
                d = switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("number out of range: " + text);
            }
        } else if (text.toUpperCase(Locale.ROOT).startsWith("P")) {
            try {
                d = Duration.parse(text);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("not an ISO-8601 duration: '" + text + "'");
            }
        } else {
            throw new IllegalArgumentException("unknown period '" + text + "': use a number with a unit (ms, s, m, h, d) or ISO-8601 like PT10S");
        }
        if (d.isZero() || d.isNegative()) throw new IllegalArgumentException("must be > 0, was '" + text + "'");
        if (d.compareTo(MAX_PERIOD) > 0) {
            throw new IllegalArgumentException("must be at most " + MAX_PERIOD.toDays() + "d (10 years), was '" + text + "'");
        }
        return d;
    }
}
