package io.quotagate.tenant;

import io.quotagate.plans.AddressRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static io.quotagate.tenant.FakeRequest.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** host, path, principal, attribute, api-key, client address and the cached directory. */
class ResolverStrategiesTest {

    @Test
    void hostTakesTheSingleLabelUnderTheSuffix() {
        TenantResolver r = TenantResolver.host(".api.example.com");
        assertThat(r.resolve(request().host("acme.api.example.com").build())).contains("acme");
        assertThat(r.resolve(request().host("ACME.API.Example.com").build())).contains("acme");
        assertThat(r.resolve(request().host("api.example.com").build())).isEmpty();
        assertThat(r.resolve(request().host("x.acme.api.example.com").build())).as("two labels").isEmpty();
        assertThat(r.resolve(request().host("acme.api.example.org").build())).isEmpty();
        assertThat(r.resolve(request().host("evilapi.example.com").build())).isEmpty();
        assertThat(r.resolve(request().host("acme.api.example.com.").build())).as("absolute name").contains("acme");
        assertThat(r.resolve(request().host("ACME.API.EXAMPLE.COM.").build())).contains("acme");
        assertThat(r.resolve(request().host("acme.api.example.com..").build())).as("two dots: no host name").isEmpty();
        assertThat(r.resolve(request().host(".api.example.com.").build())).isEmpty();
        assertThat(r.resolve(request().host("api.example.com.").build())).isEmpty();
        assertThat(r.resolve(request().host("x.acme.api.example.com.").build())).isEmpty();
        assertThat(r.resolve(request().host(".").build())).isEmpty();
        assertThat(r.resolve(request().host("").build())).isEmpty();
        assertThatThrownBy(() -> TenantResolver.host("api.example.com")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void pathTakesTheSegmentAfterThePrefixInThePathTheContainerDispatched() {
        TenantResolver r = TenantResolver.path("/t/");
        assertThat(r.resolve(request().path("", "/t/acme/items/1").build())).contains("acme");
        assertThat(r.resolve(request().path("/t", "/acme/items/1").build())).as("servlet path + path info").contains("acme");
        assertThat(r.resolve(request().path("/t/acme/items/1", null).build())).as("a default servlet").contains("acme");
        assertThat(r.resolve(request().path("", "/t/acme").build())).contains("acme");
        assertThat(r.resolve(request().path("", "/t/acme;jsessionid=1/x").build())).contains("acme");
        assertThat(r.resolve(request().path("", "/items/1").build())).isEmpty();
        assertThat(r.resolve(request().path("", "/t").build())).isEmpty();
        assertThat(r.resolve(request().path("", "/t/").build())).isEmpty();
        assertThat(r.resolve(request().path("", "").build())).isEmpty();
        assertThat(TenantResolver.path("/").resolve(request().path("", "/acme/x").build())).contains("acme");
        assertThat(TenantResolver.path("/api/t/").resolve(request().path("", "/api/t/acme/x").build())).contains("acme");
        assertThat(TenantResolver.path("/api/t/").resolve(request().path("", "/api/x/acme/x").build())).isEmpty();
    }

    /** A container that passes dot segments on (Undertow does) gets the tenant route matching would see. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(nullValues = "none", value = {
            "/./t/acme/items/1, acme",
            "//t//acme//items/1, acme",
            "/t/./acme/items/1, acme",
            "/t/%2e/acme/items/1, acme",
            "/t/%2E/acme, acme",
            "/t;x=1/acme/items, acme",
            "/t/;x=1/acme/items, acme",
            "/t/acme%2e/items, acme%2e",
            "/t/.acme/items, .acme",
            "/t/.../items, ...",
            "/x/t/acme/items, none",
            "/T/acme/items, none"})
    void pathReadsDotAndEmptySegmentsAsRouteMatchingDoes(String path, String tenant) {
        assertThat(TenantResolver.path("/t/").resolve(request().path("", path).build()))
                .isEqualTo(Optional.ofNullable(tenant));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/t/acme/../globex/items", "/t/../items", "/../t/acme", "/t/%2e%2e/x", "/t/.%2E/x",
            "/t/..;x=1/x", "/t/acme/..", "/t/acme/%2E%2e"})
    void pathRefusesADotDotSegmentTheContainerLeftIn(String path) {
        assertThatThrownBy(() -> TenantResolver.path("/t/").resolve(request().path("", path).build()))
                .isInstanceOfSatisfying(TenantRejectedException.class, e -> {
                    assertThat(e.status()).isEqualTo(400);
                    assertThat(e.reason()).isEqualTo("invalid_path");
                });
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"t/", "/t", "/./", "/../", "/t/../", "/t//"})
    void pathRefusesAPrefixThatIsNoDispatchedPath(String prefix) {
        assertThatThrownBy(() -> TenantResolver.path(prefix)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void principalAndAttribute() {
        assertThat(TenantResolver.principal().resolve(request().principal("acme").build())).contains("acme");
        assertThat(TenantResolver.principal().resolve(request().build())).isEmpty();
        TenantResolver a = TenantResolver.attribute("tenant");
        assertThat(a.resolve(request().attribute("tenant", "acme").build())).contains("acme");
        assertThat(a.resolve(request().attribute("tenant", 42).build())).contains("42");
        assertThat(a.resolve(request().build())).isEmpty();
    }

    static final String KEY = "sk_live_abc123";

    @Test
    void apiKeysAreLookedUpByTheirSha256FromEitherHeader() {
        ApiKeyResolver r = ApiKeyResolver.builder().keys(Map.of(ApiKeyResolver.sha256Hex(KEY).toUpperCase(), "acme")).build();
        assertThat(ApiKeyResolver.sha256Hex("abc")).isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assertThat(r.resolve(request().header("X-Api-Key", KEY).build())).contains("acme");
        assertThat(r.resolve(request().header("Authorization", "ApiKey " + KEY).build())).contains("acme");
        assertThat(r.resolve(request().header("Authorization", "apikey " + KEY).build())).contains("acme");
        assertThat(r.resolve(request().header("Authorization", "Bearer " + KEY).build())).as("another scheme").isEmpty();
        assertThat(r.resolve(request().build())).isEmpty();
        assertThatThrownBy(() -> r.resolve(request().header("X-Api-Key", "sk_live_other").build()))
                .isInstanceOfSatisfying(TenantRejectedException.class, e -> {
                    assertThat(e.status()).isEqualTo(401);
                    assertThat(e.reason()).isEqualTo("unknown_api_key");
                });
        assertThatThrownBy(() -> ApiKeyResolver.builder().keys(Map.of(KEY, "acme")))
                .as("the key itself is refused").hasMessageContaining("never the key itself");
    }

    @Test
    void aRepeatedOrFoldedKeyHeaderIsAmbiguousAndLooksNothingUp() {
        AtomicInteger lookups = new AtomicInteger();
        ApiKeyResolver r = ApiKeyResolver.builder().keys(Map.of(ApiKeyResolver.sha256Hex(KEY), "acme")).lookup(h -> {
            lookups.incrementAndGet();
            return Optional.empty();
        }).build();
        List<FakeRequest> ambiguous = List.of(
                request().header("X-Api-Key", KEY).header("X-Api-Key", "sk_live_other"),
                request().header("X-Api-Key", KEY).header("X-Api-Key", KEY),
                request().header("X-Api-Key", "sk_live_other," + KEY),
                request().header("Authorization", "ApiKey " + KEY).header("Authorization", "ApiKey sk_live_other"));
        for (FakeRequest request : ambiguous) {
            assertThatThrownBy(() -> r.resolve(request.build())).isInstanceOfSatisfying(TenantRejectedException.class, e -> {
                assertThat(e.status()).isEqualTo(400);
                assertThat(e.reason()).isEqualTo("ambiguous_tenant");
            });
        }
        assertThat(lookups).hasValue(0);
        assertThat(r.resolve(request().header("X-Api-Key", KEY).header("Authorization", "Bearer x").build()))
                .as("one key header and one Authorization header are not ambiguous").contains("acme");
    }

    @Test
    void malformedKeysAreRefusedWithoutALookup() {
        AtomicInteger lookups = new AtomicInteger();
        ApiKeyResolver r = ApiKeyResolver.builder().lookup(h -> {
            lookups.incrementAndGet();
            return Optional.empty();
        }).build();
        for (String bad : List.of("", "   ", "k".repeat(ApiKeyResolver.MAX_KEY_LENGTH + 1), "caf\u00e9", "a b", "a\u0000b")) {
            assertThatThrownBy(() -> r.resolve(request().header("X-Api-Key", bad).build())).as(bad)
                    .isInstanceOfSatisfying(TenantRejectedException.class, e -> assertThat(e.reason()).isEqualTo("invalid_api_key"));
        }
        assertThat(lookups).hasValue(0);
    }

    @Test
    void lookupAnswersAreCachedUnknownKeysOnlyBriefly() {
        AtomicLong now = new AtomicLong();
        AtomicInteger lookups = new AtomicInteger();
        Map<String, String> db = new java.util.concurrent.ConcurrentHashMap<>(Map.of(ApiKeyResolver.sha256Hex(KEY), "acme"));
        ApiKeyResolver r = ApiKeyResolver.builder()
                .lookup(hash -> {
                    lookups.incrementAndGet();
                    return Optional.ofNullable(db.get(hash));
                })
                .expireAfter(Duration.ofMinutes(5)).negativeExpireAfter(Duration.ofSeconds(30)).maximumSize(100)
                .ticker(now::get).build();

        for (int i = 0; i < 10; i++) assertThat(r.resolve(request().header("X-Api-Key", KEY).build())).contains("acme");
        assertThat(lookups).as("one lookup for ten requests").hasValue(1);

        String newKey = "sk_live_new";
        for (int i = 0; i < 10; i++) {
            assertThatThrownBy(() -> r.resolve(request().header("X-Api-Key", newKey).build())).isInstanceOf(TenantRejectedException.class);
        }
        assertThat(lookups).as("an unknown key is looked up once").hasValue(2);
        db.put(ApiKeyResolver.sha256Hex(newKey), "globex");
        now.addAndGet(Duration.ofSeconds(31).toNanos());
        assertThat(r.resolve(request().header("X-Api-Key", newKey).build())).as("negative entry expired").contains("globex");
        assertThat(r.resolve(request().header("X-Api-Key", KEY).build())).contains("acme");
        assertThat(lookups).as("the known key is still cached").hasValue(3);

        for (int i = 0; i < 1000; i++) {
            String k = "spoof" + i;
            assertThatThrownBy(() -> r.resolve(request().header("X-Api-Key", k).build())).isInstanceOf(TenantRejectedException.class);
        }
        assertThat(r.cachedEntries()).as("bounded").isLessThanOrEqualTo(100);
    }

    @Test
    void forwardedForIsBelievedOnlyFromTrustedProxies() {
        ClientAddress direct = ClientAddress.behind(List.of());
        assertThat(direct.of(request().remote("203.0.113.9").header("X-Forwarded-For", "1.1.1.1").build())).isEqualTo("203.0.113.9");

        ClientAddress behind = ClientAddress.behind(List.of(AddressRange.parse("10.0.0.0/8"), AddressRange.parse("::1")));
        assertThat(behind.of(request().remote("203.0.113.9").header("X-Forwarded-For", "1.1.1.1").build()))
                .as("untrusted peer: header ignored").isEqualTo("203.0.113.9");
        assertThat(behind.of(request().remote("10.0.0.2").header("X-Forwarded-For", "198.51.100.7").build())).isEqualTo("198.51.100.7");
        assertThat(behind.of(request().remote("10.0.0.2").header("X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.0.0.5").build()))
                .as("the first untrusted hop from the right; the forged left part is ignored").isEqualTo("198.51.100.7");
        assertThat(behind.of(request().remote("10.0.0.2").header("X-Forwarded-For", "6.6.6.6").header("X-Forwarded-For", "198.51.100.7").build()))
                .as("repeated headers are one list").isEqualTo("198.51.100.7");
        assertThat(behind.of(request().remote("10.0.0.2").header("X-Forwarded-For", "evil.example, 10.0.0.9").build()))
                .as("garbage stops at the last trusted hop").isEqualTo("10.0.0.9");
        assertThat(behind.of(request().remote("10.0.0.2").header("X-Forwarded-For", "\u0000\r\n").build())).isEqualTo("10.0.0.2");
        assertThat(behind.of(request().remote("10.0.0.2").build())).isEqualTo("10.0.0.2");
        assertThat(behind.of(request().remote("0:0:0:0:0:0:0:1").header("X-Forwarded-For", "2001:db8:1:2:3:4:5:6").build()))
                .as("IPv6 via an IPv6 proxy, keyed by /64").isEqualTo("2001:db8:1:2::/64");
        assertThat(direct.of(request().remote("::ffff:192.0.2.1").build())).isEqualTo("192.0.2.1");
    }

    /** {@code n} untrusted addresses, 10.200.(i / 250).(i % 250 + 1) for i < n, comma-separated. */
    private static String forwardedEntries(int n, String last) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n - 1; i++) b.append("10.200.").append(i / 250).append('.').append(i % 250 + 1).append(", ");
        return b.append(last).toString();
    }

    @ParameterizedTest(name = "{0} entries")
    @ValueSource(ints = {1, 32, 33, 34, 41, 1_000})
    void theRightmostUntrustedEntryIsTheClientWhateverTheCount(int entries) {
        ClientAddress behind = ClientAddress.behind(List.of(AddressRange.parse("127.0.0.1")));
        assertThat(behind.of(request().remote("127.0.0.1").header("X-Forwarded-For", forwardedEntries(entries, "10.250.34.1"))
                .build())).isEqualTo("10.250.34.1");
        assertThat(behind.of(request().remote("127.0.0.1").header("X-Forwarded-For", forwardedEntries(entries, "10.250.41.2"))
                .build())).as("another client sending as many entries").isEqualTo("10.250.41.2");
        assertThat(behind.of(request().remote("127.0.0.1")
                .header("X-Forwarded-For", forwardedEntries(entries, "10.250.34.1") + ", 127.0.0.1, 127.0.0.1").build()))
                .as("trusted hops on the right are skipped").isEqualTo("10.250.34.1");
    }

    @Test
    void severalHeaderLinesAreOneListReadFromTheLastLine() {
        ClientAddress behind = ClientAddress.behind(List.of(AddressRange.parse("127.0.0.0/8")));
        FakeRequest hundredLines = request().remote("127.0.0.1");
        for (int line = 0; line < 100; line++) hundredLines.header("X-Forwarded-For", forwardedEntries(10, "10.250." + line + ".1"));
        assertThat(behind.of(hundredLines.build())).as("1,000 entries on 100 lines").isEqualTo("10.250.99.1");

        FakeRequest trustedLastLine = request().remote("127.0.0.1")
                .header("X-Forwarded-For", forwardedEntries(41, "198.51.100.7"))
                .header("X-Forwarded-For", "127.0.0.2, 127.0.0.3");
        assertThat(behind.of(trustedLastLine.build())).as("the walk goes on into the line before").isEqualTo("198.51.100.7");

        FakeRequest emptyLastLine = request().remote("127.0.0.1")
                .header("X-Forwarded-For", forwardedEntries(34, "198.51.100.8")).header("X-Forwarded-For", "");
        assertThat(behind.of(emptyLastLine.build())).as("an empty line holds no entry").isEqualTo("198.51.100.8");

        FakeRequest thousandTrusted = request().remote("127.0.0.1")
                .header("X-Forwarded-For", "6.6.6.6, 198.51.100.9, " + "127.0.0.1, ".repeat(999) + "127.0.0.1");
        assertThat(behind.of(thousandTrusted.build())).as("a long chain of trusted hops").isEqualTo("198.51.100.9");
    }

    @Test
    void entriesLeftOfTheClientAreNeverRead() {
        ClientAddress behind = ClientAddress.behind(List.of(AddressRange.parse("10.0.0.0/8")));
        String garbage = "not-an-address, ".repeat(5_000) + "x".repeat(100_000) + ", ";
        assertThat(behind.of(request().remote("10.0.0.2").header("X-Forwarded-For", garbage + "198.51.100.7, 10.0.0.5").build()))
                .isEqualTo("198.51.100.7");
        assertThat(behind.of(request().remote("10.0.0.2").header("X-Forwarded-For", "198.51.100.7,, 10.0.0.5,").build()))
                .as("empty entries are skipped (RFC 9110 section 5.6.1)").isEqualTo("198.51.100.7");
    }

    @Test
    void cachedDirectoryAsksOncePerTenantAndForgetsUnknownTenantsSooner() {
        AtomicLong now = new AtomicLong();
        AtomicInteger asked = new AtomicInteger();
        Map<String, String> db = new java.util.concurrent.ConcurrentHashMap<>(Map.of("acme", "pro"));
        // lookups on the calling thread: a background read has ended when planOf returns
        TenantDirectory d = new CachedDirectory(t -> {
            asked.incrementAndGet();
            return Optional.ofNullable(db.get(t));
        }, 100, Duration.ofMinutes(5).toNanos(), Duration.ofSeconds(30).toNanos(), Duration.ofMillis(250).toNanos(), 8,
                now::get, Runnable::run);
        for (int i = 0; i < 5; i++) assertThat(d.planOf("acme")).contains("pro");
        for (int i = 0; i < 5; i++) assertThat(d.planOf("newco")).isEmpty();
        assertThat(asked).hasValue(2);
        db.put("newco", "free");
        db.put("acme", "enterprise");
        now.addAndGet(Duration.ofSeconds(31).toNanos());
        assertThat(d.planOf("newco")).contains("free");
        assertThat(d.planOf("acme")).as("still cached").contains("pro");
        now.addAndGet(Duration.ofMinutes(3).toNanos());
        assertThat(d.planOf("acme")).as("past the refresh time: the cached answer, while it is read again").contains("pro");
        assertThat(d.planOf("acme")).contains("enterprise");
        assertThat(asked).hasValue(4);

        TenantDirectory chained = TenantDirectory.of(Map.of("a", "x")).orElse(t -> Optional.of("y"));
        assertThat(chained.planOf("a")).contains("x");
        assertThat(chained.planOf("b")).contains("y");
    }
}
