package io.quotagate.loadtest.jmh;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.quotagate.tenant.ApiKeyResolver;
import io.quotagate.tenant.JwtClaimResolver;
import io.quotagate.tenant.TenantResolver;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.ECPrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.util.Collections;
import java.util.Date;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The cost of finding a request's tenant, per resolver, in nanoseconds per request: a header read, an
 * API key (SHA-256 of the key, then a hit in the lookup cache or the fixed table), and a JWT whose
 * signature is verified (HS256 and ES256).
 *
 * <p>Run: {@code java -cp load-tests/target/load-tests.jar org.openjdk.jmh.Main ResolutionBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ResolutionBenchmark {
    private static final byte[] SECRET = "benchmark-secret-0123456789abcdef0123".getBytes(StandardCharsets.UTF_8);
    private static final String API_KEY = "sk_live_4f9a8b7c6d5e4f3a2b1c";

    private TenantResolver header;
    private TenantResolver apiKeyCached;
    private TenantResolver apiKeyFixed;
    private TenantResolver jwtHs256;
    private TenantResolver jwtEs256;
    private HttpServletRequest headerRequest;
    private HttpServletRequest apiKeyRequest;
    private HttpServletRequest hs256Request;
    private HttpServletRequest es256Request;

    @Setup
    public void setUp() throws Exception {
        header = TenantResolver.header(TenantResolver.DEFAULT_HEADER);
        String hash = ApiKeyResolver.sha256Hex(API_KEY);
        apiKeyCached = ApiKeyResolver.builder().lookup(h -> h.equals(hash) ? Optional.of("acme") : Optional.empty()).build();
        apiKeyFixed = ApiKeyResolver.builder().keys(Map.of(hash, "acme")).build();
        jwtHs256 = JwtClaimResolver.builder().hmacSecret(SECRET).build();
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        KeyPair ec = g.generateKeyPair();
        jwtEs256 = JwtClaimResolver.builder().publicKey(ec.getPublic()).build();

        headerRequest = request(Map.of("X-Tenant-Id", "acme"));
        apiKeyRequest = request(Map.of("X-Api-Key", API_KEY));
        hs256Request = request(Map.of("Authorization", "Bearer " + sign(JWSAlgorithm.HS256, null)));
        es256Request = request(Map.of("Authorization", "Bearer " + sign(JWSAlgorithm.ES256, (ECPrivateKey) ec.getPrivate())));
        // every benchmark must resolve acme, or it measures a refusal
        for (var r : new Object[][]{{header, headerRequest}, {apiKeyCached, apiKeyRequest}, {apiKeyFixed, apiKeyRequest},
                {jwtHs256, hs256Request}, {jwtEs256, es256Request}}) {
            if (!((TenantResolver) r[0]).resolve((HttpServletRequest) r[1]).equals(Optional.of("acme"))) {
                throw new IllegalStateException("benchmark set-up does not resolve acme");
            }
        }
    }

    @Benchmark
    public Optional<String> header() {
        return header.resolve(headerRequest);
    }

    @Benchmark
    public Optional<String> apiKeyCachedLookup() {
        return apiKeyCached.resolve(apiKeyRequest);
    }

    @Benchmark
    public Optional<String> apiKeyFixedTable() {
        return apiKeyFixed.resolve(apiKeyRequest);
    }

    @Benchmark
    public Optional<String> jwtHs256Verified() {
        return jwtHs256.resolve(hs256Request);
    }

    @Benchmark
    public Optional<String> jwtEs256Verified() {
        return jwtEs256.resolve(es256Request);
    }

    private static String sign(JWSAlgorithm alg, ECPrivateKey ecKey) throws JOSEException {
        JWTClaimsSet claims = new JWTClaimsSet.Builder().claim("tid", "acme").subject("user-1")
                .expirationTime(new Date(System.currentTimeMillis() + 3_600_000L)).build();
        SignedJWT jwt = new SignedJWT(new JWSHeader(alg), claims);
        jwt.sign(ecKey == null ? new MACSigner(SECRET) : new ECDSASigner(ecKey));
        return jwt.serialize();
    }

    /**
     * A request answering only {@code getHeader} and {@code getHeaders} (the resolvers read a
     * credential header's every value, to refuse a repeated one), without reflection on the measured path.
     */
    private static HttpServletRequest request(Map<String, String> headers) {
        HttpServletRequest unsupported = (HttpServletRequest) Proxy.newProxyInstance(ResolutionBenchmark.class.getClassLoader(),
                new Class<?>[]{HttpServletRequest.class}, (p, m, a) -> {
                    throw new UnsupportedOperationException(m.getName());
                });
        Map<String, String> copy = Map.copyOf(headers);
        return new HttpServletRequestWrapper(unsupported) {
            @Override
            public String getHeader(String name) {
                return copy.get(name);
            }

            @Override
            public Enumeration<String> getHeaders(String name) {
                String value = copy.get(name);
                return Collections.enumeration(value == null ? List.of() : List.of(value));
            }
        };
    }
}
