package io.quotagate.tenant;

import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import static io.quotagate.tenant.FakeRequest.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Credentials as an attacker would send them, against every resolver type: each is refused with a
 * 4xx {@link TenantRejectedException} that names a reason, or is not the resolver's (empty). No other
 * exception may escape a resolver: the filter would answer 500 and log a stack trace per request.
 */
class HostileCredentialTest {
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final String INVALID = "401 invalid_token";

    private static final JwtClaimResolver VERIFIED = JwtClaimResolver.builder().hmacSecret(Tokens.SECRET).build();
    private static final JwtClaimResolver VERIFIED_RSA =
            JwtClaimResolver.builder().publicKeyPem(Tokens.pem(Tokens.RSA.getPublic())).build();
    private static final JwtClaimResolver UNVERIFIED = JwtClaimResolver.builder().withoutVerification().build();

    /** What a resolver made of a request: {@code Optional[...]}, or {@code "<status> <reason>"}. */
    private static Object outcome(TenantResolver r, HttpServletRequest request) {
        try {
            return r.resolve(request);
        } catch (TenantRejectedException e) {
            assertThat(e.getMessage()).as("a reason the client can read").isNotBlank();
            return e.status() + " " + e.reason();
        }
    }

    private static Object bearer(TenantResolver r, String token) {
        return outcome(r, request().header("Authorization", "Bearer " + token).build());
    }

    private static String b64(String text) {
        return B64.encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    /** Header and payload as given (any JSON, or none), with an HS256 signature by the trusted secret. */
    private static String signedRaw(String header, String payload) {
        String input = b64(header) + "." + b64(payload);
        try {
            javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new javax.crypto.spec.SecretKeySpec(Tokens.SECRET, "HmacSHA256"));
            return input + "." + B64.encodeToString(mac.doFinal(input.getBytes(StandardCharsets.US_ASCII)));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String signed(String payload) {
        return signedRaw("{\"alg\":\"HS256\"}", payload);
    }

    /**
     * Tokens refused by a resolver that verifies signatures and by one that does not: the claim cannot
     * be read (encrypted, malformed) or has the wrong type, so neither may name a tenant from it.
     */
    static Stream<Arguments> tokensNoModeAccepts() {
        String exp = "\"exp\":" + Instant.now().plusSeconds(600).getEpochSecond();
        String deep = "[".repeat(3000) + "]".repeat(3000);
        return Stream.of(
                arguments("JWE compact serialisation (dir, A256GCM)", Tokens.encryptedDirect(Tokens.tid("acme"))),
                arguments("JWE compact serialisation (RSA-OAEP-256)", Tokens.encryptedRsa(Tokens.tid("acme"))),
                arguments("JWE header, five empty-ish parts", b64("{\"alg\":\"dir\",\"enc\":\"A128GCM\"}") + "....") ,
                arguments("five parts of garbage", "a.b.c.d.e"),
                arguments("four parts", b64("{\"alg\":\"none\"}") + "." + b64("{\"tid\":\"acme\"}") + ".."),
                arguments("two parts", b64("{\"alg\":\"none\"}") + "." + b64("{\"tid\":\"acme\"}")),
                arguments("one part", "abc"),
                arguments("only dots", ".."),
                arguments("garbage base64 header", "%%%." + b64("{\"tid\":\"acme\"}") + "."),
                arguments("non-ASCII", "caf\u00e9." + b64("{\"tid\":\"acme\"}") + "."),
                arguments("header is not JSON", b64("alg=none") + "." + b64("{\"tid\":\"acme\"}") + "."),
                arguments("header is a JSON array", b64("[\"none\"]") + "." + b64("{\"tid\":\"acme\"}") + "."),
                arguments("header is a JSON string", b64("\"none\"") + "." + b64("{\"tid\":\"acme\"}") + "."),
                arguments("header is JSON null", b64("null") + "." + b64("{\"tid\":\"acme\"}") + "."),
                arguments("header without alg", b64("{}") + "." + b64("{\"tid\":\"acme\"}") + "."),
                arguments("alg is a number", b64("{\"alg\":5}") + "." + b64("{\"tid\":\"acme\"}") + "."),
                arguments("alg none with a signature", b64("{\"alg\":\"none\"}") + "." + b64("{\"tid\":\"acme\"}") + ".c2ln"),
                arguments("payload is a JSON array", signed("[\"acme\"]")),
                arguments("payload is a JSON string", signed("\"acme\"")),
                arguments("payload is JSON null", signed("null")),
                arguments("payload is not JSON", signed("tid=acme")),
                arguments("payload JSON cut short", signed("{\"tid\":\"ac")),
                arguments("the claim twice", signed("{\"tid\":\"acme\",\"tid\":\"globex\"," + exp + "}")),
                arguments("claim is a number", signed("{\"tid\":42," + exp + "}")),
                arguments("claim is a fraction", signed("{\"tid\":4.2," + exp + "}")),
                arguments("claim is an array", signed("{\"tid\":[\"acme\"]," + exp + "}")),
                arguments("claim is an object", signed("{\"tid\":{\"id\":\"acme\"}," + exp + "}")),
                arguments("claim is a boolean", signed("{\"tid\":true," + exp + "}")),
                arguments("exp is text", signed("{\"tid\":\"acme\",\"exp\":\"tomorrow\"}")),
                arguments("nbf is an object", signed("{\"tid\":\"acme\",\"nbf\":{}}")),
                arguments("deeply nested JSON", signed("{\"tid\":\"acme\",\"x\":" + deep + "}")),
                arguments("a token just over the limit", "a".repeat(JwtClaimResolver.MAX_TOKEN_LENGTH + 1)),
                arguments("a 1 MB token", "a".repeat(1 << 20)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("tokensNoModeAccepts")
    void aVerifyingResolverRefusesWith401(String description, String token) {
        assertThat(bearer(VERIFIED, token)).isEqualTo(INVALID);
        assertThat(bearer(VERIFIED_RSA, token)).isEqualTo(INVALID);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("tokensNoModeAccepts")
    void aResolverWithoutVerificationRefusesWith401Too(String description, String token) {
        assertThat(bearer(UNVERIFIED, token)).isEqualTo(INVALID);
    }

    @Test
    void anUnsecuredTokenIsRefusedWhenVerifyingAndReadOnlyWithoutVerification() {
        String none = Tokens.none(Tokens.tid("acme"));
        assertThat(bearer(VERIFIED, none)).isEqualTo(INVALID);
        assertThat(bearer(VERIFIED_RSA, none)).isEqualTo(INVALID);
        assertThat(bearer(UNVERIFIED, none)).as("verify: false trusts the gateway in front").isEqualTo(Optional.of("acme"));
    }

    @Test
    void anEncryptedTokenIsNamedAsSuchInTheDetail() {
        for (JwtClaimResolver r : List.of(VERIFIED, UNVERIFIED)) {
            try {
                r.resolve(request().header("Authorization", "Bearer " + Tokens.encryptedDirect(Tokens.tid("acme"))).build());
            } catch (TenantRejectedException e) {
                assertThat(e.getMessage()).contains("encrypted");
                continue;
            }
            throw new AssertionError("an encrypted token was accepted");
        }
    }

    @Test
    void issuerAndAudienceOfTheWrongTypeAreRefused() {
        JwtClaimResolver r = JwtClaimResolver.builder().hmacSecret(Tokens.SECRET).issuer("https://idp").audience("api").build();
        String exp = "\"exp\":" + Instant.now().plusSeconds(600).getEpochSecond();
        assertThat(bearer(r, signed("{\"tid\":\"acme\",\"iss\":\"https://idp\",\"aud\":\"api\"," + exp + "}")))
                .as("sanity").isEqualTo(Optional.of("acme"));
        assertThat(bearer(r, signed("{\"tid\":\"acme\",\"iss\":7,\"aud\":\"api\"," + exp + "}"))).isEqualTo(INVALID);
        assertThat(bearer(r, signed("{\"tid\":\"acme\",\"iss\":[\"https://idp\"],\"aud\":\"api\"," + exp + "}"))).isEqualTo(INVALID);
        assertThat(bearer(r, signed("{\"tid\":\"acme\",\"iss\":\"https://idp\",\"aud\":7," + exp + "}"))).isEqualTo(INVALID);
        assertThat(bearer(r, signed("{\"tid\":\"acme\",\"iss\":\"https://idp\",\"aud\":{\"a\":\"api\"}," + exp + "}"))).isEqualTo(INVALID);
        assertThat(bearer(r, signed("{\"tid\":\"acme\",\"iss\":\"https://idp\",\"aud\":[7,\"api\"]," + exp + "}"))).isEqualTo(INVALID);
    }

    @Test
    void aTokenInAnotherHeaderIsRefusedTheSameWay() {
        JwtClaimResolver r = JwtClaimResolver.builder().header("X-Token").withoutVerification().build();
        assertThat(outcome(r, request().header("X-Token", Tokens.encryptedDirect(Tokens.tid("acme"))).build())).isEqualTo(INVALID);
        assertThat(outcome(r, request().header("X-Token", "Bearer a.b.c.d.e").build())).isEqualTo(INVALID);
        assertThat(outcome(r, request().header("X-Token", "   ").build())).isEqualTo(INVALID);
    }

    /** Values a client controls for the other resolver types: each is a 4xx reason, empty, or an id the filter validates. */
    static Stream<Arguments> hostileValuesForOtherResolvers() {
        String key = "sk_live_abc123";
        ApiKeyResolver apiKey = ApiKeyResolver.builder().keys(Map.of(ApiKeyResolver.sha256Hex(key), "acme")).build();
        TenantResolver header = TenantResolver.header(TenantResolver.DEFAULT_HEADER);
        TenantResolver host = TenantResolver.host(".api.example.com");
        TenantResolver path = TenantResolver.path("/t/");
        String huge = "x".repeat(1 << 20);
        return Stream.of(
                arguments("api-key: 1 MB key", apiKey, request().header("X-Api-Key", huge), "401 invalid_api_key"),
                arguments("api-key: scheme only", apiKey, request().header("Authorization", "ApiKey "), "401 invalid_api_key"),
                arguments("api-key: scheme without a space", apiKey, request().header("Authorization", "ApiKey"), "Optional.empty"),
                arguments("api-key: control characters", apiKey, request().header("X-Api-Key", "k\u0000\u007f"), "401 invalid_api_key"),
                arguments("api-key: surrogate half", apiKey, request().header("X-Api-Key", "k\ud800"), "401 invalid_api_key"),
                arguments("header: 1 MB value", header, request().header("X-Tenant-Id", huge), "Optional[" + huge + "]"),
                arguments("host: no name", host, request().host(null), "Optional.empty"),
                arguments("host: only the suffix", host, request().host(".api.example.com"), "Optional.empty"),
                arguments("host: 1 MB name", host, request().host(huge + ".api.example.com"), "Optional[" + huge + "]"),
                arguments("path: no path", path, request().path(null, null), "Optional.empty"),
                arguments("path: only the prefix", path, request().path("", "/t/"), "Optional.empty"),
                arguments("path: path parameter first", path, request().path("", "/t/;x=1/items"), "Optional[items]"),
                arguments("path: 1 MB segment", path, request().path("", "/t/" + huge + "/x"), "Optional[" + huge + "]"),
                arguments("path: 1 MB of slashes", path, request().path("", "/".repeat(1 << 20)), "Optional.empty"),
                arguments("path: .. left in", path, request().path("/t", "/../x"), "400 invalid_path"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hostileValuesForOtherResolvers")
    void otherResolversNeverThrowAnythingButARejection(String description, TenantResolver resolver, FakeRequest request,
                                                       String expected) {
        assertThat(String.valueOf(outcome(resolver, request.build()))).isEqualTo(expected);
    }
}
