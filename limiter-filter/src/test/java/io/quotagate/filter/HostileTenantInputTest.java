package io.quotagate.filter;

import com.nimbusds.jose.EncryptionMethod;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWEAlgorithm;
import com.nimbusds.jose.JWEHeader;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.DirectEncrypter;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.EncryptedJWT;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.LogCapture;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.ApiKeyResolver;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Principal;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.logging.Level;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Hostile values for every resolver, sent over real HTTP to Jetty: CR/LF, NUL, 10 KB values, non-ASCII,
 * empty, {@code ..}, malformed and encrypted JWTs, unknown API keys, repeated or proxy-folded tenant
 * headers (400 {@code ambiguous_tenant}). Each gets a clear 4xx; none a 500.
 *
 * <p>Where the value reaches the filter, the answer is an {@code application/problem+json} body with
 * the listed reason. Raw control characters in a request head never reach it: Jetty's HTTP parser
 * refuses them with its own 400 (rows marked {@code CONTAINER}). Values that an application hands over
 * (principal names, request attributes, JWT claims) can hold any character, so those rows push CR, LF
 * and NUL through an upstream filter or a signed token.
 */
class HostileTenantInputTest {
    static final String CONTAINER = "container";
    static final String API_KEY = "sk_live_good";
    static final byte[] SECRET = "hostile-test-secret-0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    static final String K10 = "k".repeat(10 * 1024);

    private static final Map<String, JettyServer> SERVERS = new HashMap<>();

    /** A server whose QuotaFilter uses one resolver; 32 KiB request heads, so 10 KB values reach the filter. */
    private static synchronized JettyServer server(String resolver) throws Exception {
        JettyServer s = SERVERS.get(resolver);
        if (s != null) return s;
        Path secret = Files.createTempFile("jwt-secret", ".txt");
        Files.write(secret, SECRET);
        secret.toFile().deleteOnExit();
        String spec = switch (resolver) {
            case "header" -> "{ type: header }";
            case "api-key" -> "{ type: api-key }";
            case "host" -> "{ type: host, suffix: .api.example.com }";
            case "path" -> "{ type: path, prefix: /t/ }";
            case "jwt-claim" -> "{ type: jwt-claim, secret-file: \"" + secret.toAbsolutePath() + "\" }";
            case "jwt-unverified" -> "{ type: jwt-claim, verify: false }";
            case "principal" -> "{ type: principal }";
            case "attribute" -> "{ type: attribute, name: tenant }";
            default -> throw new IllegalArgumentException(resolver);
        };
        String yaml = """
                plans:
                  free: { limits: [ { capacity: 1000, refill: 1000, period: 1s } ] }
                tenants:
                  unresolved: reject
                  unknown: default
                  api-keys: { %s: acme }
                  resolvers:
                    - %s
                """.formatted(ApiKeyResolver.sha256Hex(API_KEY), spec);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addFilter(new FilterHolder(upstreamIdentity()), "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addFilter(new FilterHolder(QuotaFilter.builder().plans(PlansFile.parse("hostile.yml", yaml)).build()),
                "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new JettyServer.OkServlet()), "/");
        s = JettyServer.start(context, 32 * 1024);
        SERVERS.put(resolver, s);
        return s;
    }

    /**
     * Stands in for an application's authentication filter: the percent-decoded {@code X-Test-Identity}
     * becomes the principal's name and the {@code tenant} attribute, so any character can be tried.
     */
    private static Filter upstreamIdentity() {
        return (req, res, chain) -> {
            HttpServletRequest http = (HttpServletRequest) req;
            String identity = http.getHeader("X-Test-Identity");
            if (identity == null) {
                chain.doFilter(req, res);
                return;
            }
            String name = URLDecoder.decode(identity, StandardCharsets.UTF_8);
            req.setAttribute("tenant", name);
            Principal principal = () -> name;
            chain.doFilter(new HttpServletRequestWrapper(http) {
                @Override
                public Principal getUserPrincipal() {
                    return principal;
                }
            }, res);
        };
    }

    @AfterAll
    static void stopServers() throws Exception {
        for (JettyServer s : SERVERS.values()) s.close();
        SERVERS.clear();
    }

    static String get(String path, String headers) {
        return "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n" + headers;
    }

    static String identity(String value) {
        return get("/items/1", "X-Test-Identity: " + URLEncoder.encode(value, StandardCharsets.UTF_8) + "\r\n");
    }

    static String bearer(String token) {
        return get("/items/1", "Authorization: Bearer " + token + "\r\n");
    }

    static String token(Map<String, Object> claims) {
        JWTClaimsSet.Builder b = new JWTClaimsSet.Builder();
        claims.forEach((k, v) -> b.claim(k, v instanceof Instant i ? Date.from(i) : v));
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), b.build());
        try {
            jwt.sign(new MACSigner(SECRET));
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
        return jwt.serialize();
    }

    /** A JWE (dir, A256GCM) under a key the server never sees: unreadable, so never a tenant. */
    static String encrypted(String tenant) {
        EncryptedJWT jwt = new EncryptedJWT(new JWEHeader(JWEAlgorithm.DIR, EncryptionMethod.A256GCM),
                new JWTClaimsSet.Builder().claim("tid", tenant).build());
        try {
            jwt.encrypt(new DirectEncrypter(new byte[32]));
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
        return jwt.serialize();
    }

    static String tid(String tenant) {
        return token(Map.of("tid", tenant, "exp", Instant.now().plusSeconds(600)));
    }

    static Stream<Arguments> hostileRequests() {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String good = tid("acme");
        String[] parts = good.split("\\.");
        String none = b64.encodeToString("{\"alg\":\"none\"}".getBytes()) + "." + b64.encodeToString("{\"tid\":\"acme\"}".getBytes()) + ".";
        return Stream.of(
                // resolver, case, request head, expected status, expected reason (or CONTAINER)
                arguments("header", "sanity", get("/items/1", "X-Tenant-Id: acme\r\n"), 200, null),
                arguments("header", "CR/LF splits the header", get("/items/1", "X-Tenant-Id: ac\r\nme\r\n"), 400, CONTAINER),
                arguments("header", "bare CR", get("/items/1", "X-Tenant-Id: ac\rme\r\n"), 400, CONTAINER),
                arguments("header", "NUL", get("/items/1", "X-Tenant-Id: ac\u0000me\r\n"), 400, CONTAINER),
                arguments("header", "10 KB", get("/items/1", "X-Tenant-Id: " + K10 + "\r\n"), 400, "invalid_tenant"),
                arguments("header", "non-ASCII", get("/items/1", "X-Tenant-Id: caf\u00e9\r\n"), 400, "invalid_tenant"),
                arguments("header", "empty", get("/items/1", "X-Tenant-Id: \r\n"), 400, "invalid_tenant"),
                arguments("header", "..", get("/items/1", "X-Tenant-Id: ..\r\n"), 400, "invalid_tenant"),
                arguments("header", "absent", get("/items/1", ""), 401, "missing_tenant"),
                arguments("header", "repeated", get("/items/1", "X-Tenant-Id: acme\r\nX-Tenant-Id: globex\r\n"),
                        400, "ambiguous_tenant"),
                arguments("header", "repeated, names in other cases", get("/items/1", "x-tenant-id: acme\r\nX-TENANT-ID: globex\r\n"),
                        400, "ambiguous_tenant"),
                arguments("header", "repeated with one value", get("/items/1", "X-Tenant-Id: acme\r\nX-Tenant-Id: acme\r\n"),
                        400, "ambiguous_tenant"),
                arguments("header", "folded by a proxy", get("/items/1", "X-Tenant-Id: acme, globex\r\n"), 400, "ambiguous_tenant"),

                arguments("api-key", "sanity", get("/items/1", "X-Api-Key: " + API_KEY + "\r\n"), 200, null),
                arguments("api-key", "sanity, Authorization", get("/items/1", "Authorization: ApiKey " + API_KEY + "\r\n"), 200, null),
                arguments("api-key", "CR/LF", get("/items/1", "X-Api-Key: sk\r\n_live\r\n"), 400, CONTAINER),
                arguments("api-key", "NUL", get("/items/1", "X-Api-Key: sk\u0000live\r\n"), 400, CONTAINER),
                arguments("api-key", "10 KB", get("/items/1", "X-Api-Key: " + K10 + "\r\n"), 401, "invalid_api_key"),
                arguments("api-key", "non-ASCII", get("/items/1", "X-Api-Key: cl\u00e9\r\n"), 401, "invalid_api_key"),
                arguments("api-key", "empty", get("/items/1", "X-Api-Key: \r\n"), 401, "invalid_api_key"),
                arguments("api-key", "..", get("/items/1", "X-Api-Key: ..\r\n"), 401, "unknown_api_key"),
                arguments("api-key", "unknown key", get("/items/1", "X-Api-Key: sk_live_guess\r\n"), 401, "unknown_api_key"),
                arguments("api-key", "repeated", get("/items/1", "X-Api-Key: sk_live_guess\r\nX-Api-Key: " + API_KEY + "\r\n"),
                        400, "ambiguous_tenant"),
                arguments("api-key", "folded by a proxy", get("/items/1", "X-Api-Key: sk_live_guess," + API_KEY + "\r\n"),
                        400, "ambiguous_tenant"),
                arguments("api-key", "the key's hash as the key", get("/items/1", "X-Api-Key: " + ApiKeyResolver.sha256Hex(API_KEY) + "\r\n"),
                        401, "unknown_api_key"),

                arguments("host", "sanity", "GET /items/1 HTTP/1.1\r\nHost: acme.api.example.com\r\n", 200, null),
                arguments("host", "CR/LF", "GET /items/1 HTTP/1.1\r\nHost: ac\r\nme.api.example.com\r\n", 400, CONTAINER),
                arguments("host", "NUL", "GET /items/1 HTTP/1.1\r\nHost: ac\u0000me.api.example.com\r\n", 400, CONTAINER),
                arguments("host", "10 KB", "GET /items/1 HTTP/1.1\r\nHost: " + K10 + ".api.example.com\r\n", 400, "invalid_tenant"),
                arguments("host", "non-ASCII", "GET /items/1 HTTP/1.1\r\nHost: caf\u00e9.api.example.com\r\n", 400, CONTAINER),
                arguments("host", "empty label", "GET /items/1 HTTP/1.1\r\nHost: .api.example.com\r\n", 401, "missing_tenant"),
                arguments("host", "..", "GET /items/1 HTTP/1.1\r\nHost: ...api.example.com\r\n", 401, "missing_tenant"),
                arguments("host", "another domain", "GET /items/1 HTTP/1.1\r\nHost: acme.evil.com\r\n", 401, "missing_tenant"),

                arguments("path", "sanity", get("/t/acme/items/1", ""), 200, null),
                arguments("path", "encoded CR/LF", get("/t/ac%0d%0ame/items", ""), 400, CONTAINER),
                arguments("path", "encoded NUL", get("/t/ac%00me/items", ""), 400, CONTAINER),
                arguments("path", "10 KB", get("/t/" + K10 + "/items", ""), 400, "invalid_tenant"),
                arguments("path", "non-ASCII (encoded)", get("/t/caf%C3%A9/items", ""), 400, "invalid_tenant"),
                arguments("path", "empty segment", get("/t//items", ""), 400, CONTAINER),
                arguments("path", ".. (Jetty serves /items: no tenant)", get("/t/../items", ""), 401, "missing_tenant"),
                arguments("path", "encoded ..", get("/t/%2e%2e/items", ""), 400, CONTAINER),
                arguments("path", "encoded slash", get("/t/a%2Fb/items", ""), 400, CONTAINER),

                arguments("jwt-claim", "sanity", bearer(good), 200, null),
                arguments("jwt-claim", "CR/LF in the header", get("/items/1", "Authorization: Bearer " + parts[0] + "\r\n." + parts[1] + "\r\n"),
                        400, CONTAINER),
                arguments("jwt-claim", "NUL in the header", bearer(parts[0] + "\u0000" + parts[1]), 400, CONTAINER),
                arguments("jwt-claim", "10 KB token", bearer(K10), 401, "invalid_token"),
                arguments("jwt-claim", "non-ASCII token", bearer("caf\u00e9." + parts[1] + "." + parts[2]), 401, "invalid_token"),
                arguments("jwt-claim", "empty token", get("/items/1", "Authorization: Bearer \r\n"), 401, "missing_tenant"),
                arguments("jwt-claim", "bad base64", bearer("%%%." + parts[1] + "." + parts[2]), 401, "invalid_token"),
                arguments("jwt-claim", "alg none", bearer(none), 401, "invalid_token"),
                arguments("jwt-claim", "wrong signature", bearer(parts[0] + "." + parts[1] + "." + b64.encodeToString(new byte[32])), 401, "invalid_token"),
                arguments("jwt-claim", "expired", bearer(token(Map.of("tid", "acme", "exp", Instant.now().minusSeconds(3600)))),
                        401, "expired_token"),
                arguments("jwt-claim", "claim with CR/LF", bearer(tid("ac\r\nme")), 400, "invalid_tenant"),
                arguments("jwt-claim", "claim with NUL", bearer(tid("ac\u0000me")), 400, "invalid_tenant"),
                arguments("jwt-claim", "2 KB claim", bearer(tid("c".repeat(2048))), 400, "invalid_tenant"),
                arguments("jwt-claim", "non-ASCII claim", bearer(tid("caf\u00e9")), 400, "invalid_tenant"),
                arguments("jwt-claim", "empty claim", bearer(tid("")), 400, "invalid_tenant"),
                arguments("jwt-claim", ".. claim", bearer(tid("..")), 400, "invalid_tenant"),
                arguments("jwt-claim", "two tokens", get("/items/1", "Authorization: Bearer " + good + "\r\nAuthorization: Bearer "
                        + tid("globex") + "\r\n"), 400, "ambiguous_tenant"),
                arguments("jwt-claim", "encrypted (JWE)", bearer(encrypted("acme")), 401, "invalid_token"),
                arguments("jwt-claim", "five parts", bearer("a.b.c.d.e"), 401, "invalid_token"),

                arguments("jwt-unverified", "sanity", bearer(good), 200, null),
                arguments("jwt-unverified", "encrypted (JWE)", bearer(encrypted("acme")), 401, "invalid_token"),
                arguments("jwt-unverified", "five parts", bearer("a.b.c.d.e"), 401, "invalid_token"),
                arguments("jwt-unverified", "payload is a JSON array", bearer(parts[0] + "." + b64.encodeToString("[1]".getBytes())
                        + "." + parts[2]), 401, "invalid_token"),
                arguments("jwt-unverified", "numeric claim", bearer(token(Map.of("tid", 42))), 401, "invalid_token"),
                arguments("jwt-unverified", "array claim", bearer(token(Map.of("tid", java.util.List.of("acme")))), 401, "invalid_token"),
                arguments("jwt-unverified", "object claim", bearer(token(Map.of("tid", Map.of("id", "acme")))), 401, "invalid_token"),

                arguments("principal", "sanity", identity("acme"), 200, null),
                arguments("principal", "CR/LF", identity("ac\r\nme"), 400, "invalid_tenant"),
                arguments("principal", "NUL", identity("ac\u0000me"), 400, "invalid_tenant"),
                arguments("principal", "10 KB", identity(K10), 400, "invalid_tenant"),
                arguments("principal", "non-ASCII", identity("caf\u00e9"), 400, "invalid_tenant"),
                arguments("principal", "empty", identity(""), 400, "invalid_tenant"),
                arguments("principal", "..", identity(".."), 400, "invalid_tenant"),
                arguments("principal", "none", get("/items/1", ""), 401, "missing_tenant"),

                arguments("attribute", "sanity", identity("acme"), 200, null),
                arguments("attribute", "CR/LF", identity("ac\r\nme"), 400, "invalid_tenant"),
                arguments("attribute", "NUL", identity("ac\u0000me"), 400, "invalid_tenant"),
                arguments("attribute", "10 KB", identity(K10), 400, "invalid_tenant"),
                arguments("attribute", "non-ASCII", identity("caf\u00e9"), 400, "invalid_tenant"),
                arguments("attribute", "empty", identity(""), 400, "invalid_tenant"),
                arguments("attribute", "..", identity(".."), 400, "invalid_tenant"),
                arguments("attribute", "none", get("/items/1", ""), 401, "missing_tenant"));
    }

    @Test
    void anEncryptedTokenForAnUnverifiedResolverLogsNoStackTrace() throws Exception {
        try (LogCapture log = LogCapture.of(QuotaFilter.class, Level.WARNING)) {
            for (int i = 0; i < 20; i++) {
                assertThat(Http.status(Http.rawHead(server("jwt-unverified").port(), bearer(encrypted("acme" + i))))).isEqualTo(401);
            }
            assertThat(log.messages()).as("a client's bad token is no server failure").isEmpty();
        }
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("hostileRequests")
    void hostileValuesGetAClear4xxAndNever500(String resolver, String description, String head, int status, String reason)
            throws Exception {
        String raw = Http.rawHead(server(resolver).port(), head);
        assertThat(Http.status(raw)).as(raw).isEqualTo(status);
        assertThat(raw).doesNotContain("Exception", "\tat ", "internal_error");
        if (reason == null) return;
        String body = raw.substring(raw.indexOf("\r\n\r\n") + 4);
        if (reason.equals(CONTAINER)) {
            assertThat(body).as("refused by Jetty's parser, before the filter").doesNotContain("\"reason\"");
        } else {
            assertThat(raw).containsIgnoringCase("Content-Type: application/problem+json");
            assertThat(body).contains("\"status\":" + status, "\"reason\":\"" + reason + "\"");
            assertThat(body).as("never echoes the hostile value").doesNotContain(K10.substring(0, 100));
        }
    }
}
