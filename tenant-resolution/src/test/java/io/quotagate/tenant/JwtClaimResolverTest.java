package io.quotagate.tenant;

import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Map;
import java.util.stream.Stream;

import static io.quotagate.tenant.FakeRequest.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class JwtClaimResolverTest {
    private final JwtClaimResolver hs = JwtClaimResolver.builder().hmacSecret(Tokens.SECRET).build();

    private static Object bearer(TenantResolver r, String token) {
        try {
            return r.resolve(request().header("Authorization", "Bearer " + token).build());
        } catch (TenantRejectedException e) {
            return e.status() + " " + e.reason();
        }
    }

    @Test
    void readsTheClaimOfAVerifiedToken() {
        assertThat(bearer(hs, Tokens.hs256(Tokens.tid("acme")))).isEqualTo(java.util.Optional.of("acme"));
        assertThat(hs.resolve(request().build())).as("no token: not ours").isEmpty();
        assertThat(hs.resolve(request().header("Authorization", "Basic dXNlcjpwYXNz").build())).as("another scheme").isEmpty();
        assertThat(bearer(hs, Tokens.hs256(Map.of("sub", "x")))).as("no tid claim").isEqualTo(java.util.Optional.empty());
        JwtClaimResolver org = JwtClaimResolver.builder().claim("org").hmacSecret(Tokens.SECRET).build();
        assertThat(bearer(org, Tokens.hs256(Map.of("org", "globex")))).isEqualTo(java.util.Optional.of("globex"));
    }

    @Test
    void rsaAndEcPublicKeysAndJwkSets() {
        JwtClaimResolver rsa = JwtClaimResolver.builder().publicKeyPem(Tokens.pem(Tokens.RSA.getPublic())).build();
        JwtClaimResolver ec = JwtClaimResolver.builder().publicKeyPem(Tokens.pem(Tokens.EC.getPublic())).build();
        assertThat(bearer(rsa, Tokens.rs256(Tokens.tid("acme")))).isEqualTo(java.util.Optional.of("acme"));
        assertThat(bearer(ec, Tokens.es256(Tokens.tid("acme")))).isEqualTo(java.util.Optional.of("acme"));
        assertThat(bearer(rsa, Tokens.es256(Tokens.tid("acme")))).isEqualTo("401 invalid_token");
        assertThat(bearer(ec, Tokens.hs256(Tokens.tid("acme")))).isEqualTo("401 invalid_token");

        String jwks = new com.nimbusds.jose.jwk.JWKSet(new com.nimbusds.jose.jwk.RSAKey.Builder(
                (java.security.interfaces.RSAPublicKey) Tokens.RSA.getPublic()).build()).toString();
        JwtClaimResolver set = JwtClaimResolver.builder().jwks(jwks).build();
        assertThat(bearer(set, Tokens.rs256(Tokens.tid("acme")))).isEqualTo(java.util.Optional.of("acme"));
    }

    @Test
    void anRsaPublicKeyUsedAsAnHmacSecretIsRefused() {
        // the classic algorithm-confusion forgery: HS256 "signed" with the server's public key bytes
        JwtClaimResolver rsa = JwtClaimResolver.builder().publicKeyPem(Tokens.pem(Tokens.RSA.getPublic())).build();
        String forged = Tokens.hs256(Tokens.pem(Tokens.RSA.getPublic()).getBytes(), Tokens.tid("acme"));
        assertThat(bearer(rsa, forged)).isEqualTo("401 invalid_token");
    }

    static Stream<Arguments> hostileTokens() {
        String good = Tokens.hs256(Tokens.tid("acme"));
        String[] parts = good.split("\\.");
        return Stream.of(
                arguments("bad base64", "%%%." + parts[1] + "." + parts[2], "401 invalid_token"),
                arguments("not three parts", "abc", "401 invalid_token"),
                arguments("alg none", Tokens.none(Tokens.tid("acme")), "401 invalid_token"),
                arguments("wrong signature", parts[0] + "." + parts[1] + "." + Base64.getUrlEncoder().withoutPadding()
                        .encodeToString(new byte[32]), "401 invalid_token"),
                arguments("another secret", Tokens.hs256("another-secret-another-secret-another".getBytes(), Tokens.tid("acme")), "401 invalid_token"),
                arguments("tampered payload", parts[0] + "." + Base64.getUrlEncoder().withoutPadding()
                        .encodeToString("{\"tid\":\"admin\"}".getBytes()) + "." + parts[2], "401 invalid_token"),
                arguments("expired", Tokens.hs256(Tokens.expired("acme")), "401 expired_token"),
                arguments("not yet valid", Tokens.hs256(Map.of("tid", "acme", "nbf", Instant.now().plusSeconds(3600))), "401 invalid_token"),
                arguments("numeric claim", Tokens.hs256(Map.of("tid", 42)), "401 invalid_token"),
                arguments("10 KB token", "a".repeat(10_240), "401 invalid_token"),
                arguments("JSON garbage", Base64.getUrlEncoder().encodeToString("{\"alg\":".getBytes()) + ".e30.", "401 invalid_token"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hostileTokens")
    void hostileTokensAreRefusedWith401(String description, String token, String expected) {
        assertThat(bearer(hs, token)).isEqualTo(expected);
    }

    @Test
    void twoTokenHeadersAreAmbiguous() {
        String good = Tokens.hs256(Tokens.tid("acme"));
        assertThatThrownBy(() -> hs.resolve(request().header("Authorization", "Bearer " + good)
                .header("Authorization", "Bearer " + Tokens.hs256(Tokens.tid("globex"))).build()))
                .isInstanceOfSatisfying(TenantRejectedException.class, e -> {
                    assertThat(e.status()).isEqualTo(400);
                    assertThat(e.reason()).isEqualTo("ambiguous_tenant");
                });
        assertThat(hs.resolve(request().header("Authorization", "Digest username=\"a\", realm=\"b\"").build()))
                .as("a comma inside another scheme is its syntax, not a list").isEmpty();
    }

    @Test
    void expiryUsesTheInjectedClockWithSkew() {
        Instant exp = Instant.parse("2030-01-01T00:00:00Z");
        String token = Tokens.hs256(Map.of("tid", "acme", "exp", exp));
        JwtClaimResolver before = JwtClaimResolver.builder().hmacSecret(Tokens.SECRET)
                .clock(Clock.fixed(exp.plusSeconds(59), ZoneOffset.UTC)).build();
        JwtClaimResolver after = JwtClaimResolver.builder().hmacSecret(Tokens.SECRET)
                .clock(Clock.fixed(exp.plusSeconds(61), ZoneOffset.UTC)).build();
        assertThat(bearer(before, token)).isEqualTo(java.util.Optional.of("acme"));
        assertThat(bearer(after, token)).isEqualTo("401 expired_token");
    }

    @Test
    void issuerAndAudience() {
        JwtClaimResolver r = JwtClaimResolver.builder().hmacSecret(Tokens.SECRET).issuer("https://idp").audience("api").build();
        Instant exp = Instant.now().plusSeconds(60);
        assertThat(bearer(r, Tokens.hs256(Map.of("tid", "acme", "iss", "https://idp", "aud", "api", "exp", exp))))
                .isEqualTo(java.util.Optional.of("acme"));
        assertThat(bearer(r, Tokens.hs256(Map.of("tid", "acme", "iss", "https://evil", "aud", "api")))).isEqualTo("401 invalid_token");
        assertThat(bearer(r, Tokens.hs256(Map.of("tid", "acme", "iss", "https://idp", "aud", "other")))).isEqualTo("401 invalid_token");
    }

    @Test
    void withoutVerificationReadsAnyWellFormedTokenButStillChecksExpiry() {
        JwtClaimResolver r = JwtClaimResolver.builder().withoutVerification().build();
        assertThat(bearer(r, Tokens.hs256("another-secret-another-secret-another".getBytes(), Tokens.tid("acme"))))
                .isEqualTo(java.util.Optional.of("acme"));
        assertThat(bearer(r, Tokens.none(Tokens.tid("acme")))).isEqualTo(java.util.Optional.of("acme"));
        assertThat(bearer(r, Tokens.hs256(Tokens.expired("acme")))).isEqualTo("401 expired_token");
        assertThat(bearer(r, "garbage")).isEqualTo("401 invalid_token");
    }

    @Test
    void builderRefusesMisuse() {
        assertThatThrownBy(() -> JwtClaimResolver.builder().hmacSecret("short".getBytes())).hasMessageContaining("at least 32 bytes");
        assertThatThrownBy(() -> JwtClaimResolver.builder().build()).hasMessageContaining("exactly one key");
        assertThatThrownBy(() -> JwtClaimResolver.builder().hmacSecret(Tokens.SECRET).publicKey(Tokens.RSA.getPublic()).build())
                .hasMessageContaining("exactly one key");
        assertThatThrownBy(() -> JwtClaimResolver.builder().hmacSecret(Tokens.SECRET).withoutVerification().build())
                .hasMessageContaining("takes no key");
        assertThatThrownBy(() -> JwtClaimResolver.builder().publicKeyPem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"))
                .hasMessageContaining("private key");
    }

    // ---- from the plans file ------------------------------------------------------------------

    private static final String PLAN = "plans: { free: { limits: [ { capacity: 5, refill: 5, period: 1s } ] } }\n";

    private static TenantResolver fromFile(Path dir, String resolvers, Map<String, String> env) throws Exception {
        Path file = dir.resolve("plans.yml");
        Files.writeString(file, PLAN + "tenants:\n  resolvers:\n" + resolvers);
        return TenantResolvers.fromSettings(PlansFile.load(file).tenants(), env::get);
    }

    @Test
    void everyKeySourceWorksFromThePlansFile(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("rsa.pem"), Tokens.pem(Tokens.RSA.getPublic()));
        Files.writeString(dir.resolve("ec.pem"), Tokens.pem(Tokens.EC.getPublic()));
        Files.writeString(dir.resolve("secret.txt"), new String(Tokens.SECRET) + "\n");
        Files.writeString(dir.resolve("jwks.json"), new com.nimbusds.jose.jwk.JWKSet(new com.nimbusds.jose.jwk.ECKey.Builder(
                com.nimbusds.jose.jwk.Curve.P_256, (java.security.interfaces.ECPublicKey) Tokens.EC.getPublic()).build()).toString());
        Map<String, String> env = Map.of("JWT_SECRET", new String(Tokens.SECRET));

        assertThat(bearer(fromFile(dir, "    - { type: jwt-claim, secret-env: JWT_SECRET }\n", env), Tokens.hs256(Tokens.tid("a"))))
                .isEqualTo(java.util.Optional.of("a"));
        assertThat(bearer(fromFile(dir, "    - { type: jwt-claim, secret-file: secret.txt }\n", env), Tokens.hs256(Tokens.tid("a"))))
                .as("relative to the plans file, trailing newline ignored").isEqualTo(java.util.Optional.of("a"));
        assertThat(bearer(fromFile(dir, "    - { type: jwt-claim, public-key-file: rsa.pem }\n", env), Tokens.rs256(Tokens.tid("a"))))
                .isEqualTo(java.util.Optional.of("a"));
        assertThat(bearer(fromFile(dir, "    - { type: jwt-claim, public-key-file: ec.pem }\n", env), Tokens.es256(Tokens.tid("a"))))
                .isEqualTo(java.util.Optional.of("a"));
        assertThat(bearer(fromFile(dir, "    - { type: jwt-claim, jwks-file: " + dir.resolve("jwks.json") + " }\n", env),
                Tokens.es256(Tokens.tid("a")))).isEqualTo(java.util.Optional.of("a"));
        assertThat(bearer(fromFile(dir, "    - { type: jwt-claim, verify: false, claim: org }\n", env),
                Tokens.none(Map.of("org", "b")))).isEqualTo(java.util.Optional.of("b"));
    }

    static Stream<Arguments> badKeyMaterial() {
        return Stream.of(
                arguments("unset environment variable", "    - { type: jwt-claim, secret-env: NOPE }\n",
                        "plans.yml:4: tenants.resolvers[0].secret-env: environment variable NOPE is not set"),
                arguments("short secret", "    - { type: jwt-claim, secret-env: SHORT }\n",
                        "plans.yml:4: tenants.resolvers[0].secret-env: an HMAC secret must be at least 32 bytes"),
                arguments("missing key file", "    - { type: jwt-claim, public-key-file: nope.pem }\n",
                        "plans.yml:4: tenants.resolvers[0].public-key-file: cannot read"),
                arguments("not a PEM key", "    - { type: jwt-claim, public-key-file: plans.yml }\n",
                        "plans.yml:4: tenants.resolvers[0].public-key-file: expected a PEM"),
                arguments("not a JWK set", "    - type: jwt-claim\n      jwks-file: plans.yml\n",
                        "plans.yml:5: tenants.resolvers[0].jwks-file: not a JWK set"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badKeyMaterial")
    void badKeyMaterialFailsAtStartupNamingFileLineAndField(String description, String resolvers, String message,
                                                           @TempDir Path dir) {
        assertThatThrownBy(() -> fromFile(dir, resolvers, Map.of("SHORT", "tooshort")))
                .isInstanceOf(InvalidPlansException.class)
                .satisfies(e -> assertThat(e.getMessage()).startsWith(dir.resolve(message.substring(0, message.indexOf(':'))).toString())
                        .contains(message.substring(message.indexOf(':'))));
    }

    @Test
    void everyResolverTypeIsBuiltFromThePlansFile(@TempDir Path dir) throws Exception {
        String hash = ApiKeyResolver.sha256Hex("k-123");
        Path file = dir.resolve("plans.yml");
        Files.writeString(file, PLAN + """
                tenants:
                  api-keys: { %s: keyed }
                  resolvers:
                    - { type: api-key }
                    - { type: host, suffix: .api.example.com }
                    - { type: path, prefix: /tenants/ }
                    - { type: principal }
                    - { type: attribute, name: org }
                    - { type: header, name: X-Org }
                """.formatted(hash));
        TenantResolver r = TenantResolvers.fromSettings(PlansFile.load(file).tenants(), k -> null);
        assertThat(r.resolve(request().header("X-Api-Key", "k-123").build())).contains("keyed");
        assertThat(r.resolve(request().header("Authorization", "ApiKey k-123").build())).contains("keyed");
        assertThat(r.resolve(request().host("hosted.api.example.com").build())).contains("hosted");
        assertThat(r.resolve(request().path("", "/tenants/pathed/x").build())).contains("pathed");
        assertThat(r.resolve(request().principal("user1").build())).contains("user1");
        assertThat(r.resolve(request().attribute("org", "attr").build())).contains("attr");
        assertThat(r.resolve(request().header("X-Org", "hdr").build())).contains("hdr");
        assertThat(r.resolve(request().build())).isEmpty();
    }
}
