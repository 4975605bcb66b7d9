package io.quotagate.tenant;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.jwk.source.ImmutableSecret;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.EncryptedJWT;
import com.nimbusds.jwt.JWT;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import jakarta.servlet.http.HttpServletRequest;

import java.io.ByteArrayInputStream;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.cert.CertificateFactory;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.text.ParseException;
import java.time.Clock;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Takes the tenant from a claim (default {@code tid}) of a JSON Web Token sent as
 * {@code Authorization: Bearer <jwt>}. A request without a bearer token is not this resolver's
 * (empty result); a verified token without the claim yields nothing either.
 *
 * <p>The signature is verified with nimbus-jose-jwt against one configured key: an HMAC secret
 * (HS256/384/512, at least 32 bytes), an RSA or EC public key (RS/PS/ES families), or a JWK set
 * (asymmetric keys only). The algorithm family is fixed by the key, so {@code alg: none} and
 * algorithm-confusion tokens (an RSA public key used as an HMAC secret) are refused. {@code exp} and
 * {@code nbf} are checked with {@value #CLOCK_SKEW_SECONDS} s of clock skew; optional
 * {@code iss}/{@code aud} checks.
 *
 * <p>Refusals are 401 ({@link TenantRejectedException}): {@code invalid_token} (malformed, bad
 * signature, wrong algorithm, unsecured {@code alg: none} when verifying, encrypted (JWE) in either
 * mode, wrong issuer or audience, longer than {@value #MAX_TOKEN_LENGTH} characters, a claim that is
 * not text) and {@code expired_token}. The token's header sent twice is 400 {@code ambiguous_tenant}.
 * Nothing a client sends makes this resolver throw anything else.
 *
 * <p>{@link Builder#withoutVerification()} skips the signature check. Use it only when an upstream
 * filter or gateway has already authenticated the request: otherwise any client can name any tenant.
 */
public final class JwtClaimResolver implements TenantResolver {
    /** The claim read by default. */
    public static final String DEFAULT_CLAIM = "tid";
    /** The longest token accepted; longer ones are refused before parsing. */
    public static final int MAX_TOKEN_LENGTH = 8192;
    /** Tolerance for {@code exp} and {@code nbf}, in seconds. */
    public static final long CLOCK_SKEW_SECONDS = 60;

    private static final System.Logger LOG = System.getLogger(JwtClaimResolver.class.getName());
    private static final String BEARER = "Bearer ";

    private final String claim;
    private final String header;
    private final boolean authorizationHeader; // header is Authorization (any case): other schemes are not ours
    private final DefaultJWTProcessor<SecurityContext> processor; // null: not verified
    private final String issuer;
    private final String audience;
    private final Clock clock;

    private JwtClaimResolver(Builder b, DefaultJWTProcessor<SecurityContext> processor) {
        this.claim = b.claim;
        this.header = b.header;
        this.authorizationHeader = b.header.equalsIgnoreCase("Authorization");
        this.processor = processor;
        this.issuer = b.issuer;
        this.audience = b.audience;
        this.clock = b.clock;
    }

    /** A builder; choose exactly one key (or {@link Builder#withoutVerification()}). */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Optional<String> resolve(HttpServletRequest request) {
        // a comma is no separator here: Authorization schemes such as Digest use it in their syntax
        String value = SingleHeader.value(request, header, false);
        if (value == null) return Optional.empty();
        String token;
        if (value.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            token = value.substring(BEARER.length()).strip();
        } else if (authorizationHeader) {
            return Optional.empty(); // another scheme (Basic, ApiKey): not ours
        } else {
            token = value.strip();
        }
        if (token.isEmpty() || token.length() > MAX_TOKEN_LENGTH) {
            throw invalid("The bearer token must be 1-" + MAX_TOKEN_LENGTH + " characters.");
        }
        JWTClaimsSet claims;
        try {
            JWT jwt = JWTParser.parse(token);
            // an encrypted token's claims are not readable without a decryption key, which this
            // resolver never has: unverified, nimbus hands back no claims set at all
            if (jwt instanceof EncryptedJWT) throw invalid("An encrypted (JWE) bearer token is not accepted; send a signed JWT.");
            if (processor == null) {
                claims = jwt.getJWTClaimsSet();
            } else if (jwt instanceof PlainJWT) {
                throw invalid("An unsecured (alg: none) bearer token is not accepted.");
            } else {
                claims = processor.process(jwt, null);
            }
        } catch (ParseException e) {
            throw invalid("The bearer token is not a well-formed JWT.");
        } catch (BadJOSEException | JOSEException e) {
            throw invalid("The bearer token's signature or algorithm is not accepted.");
        } catch (TenantRejectedException e) {
            throw e;
        } catch (RuntimeException e) {
            // hostile input must never become a 500: whatever the parser trips on, the token is bad
            throw invalid("The bearer token is not a well-formed JWT.");
        }
        if (claims == null) throw invalid("The bearer token is not a well-formed JWT.");
        checkTimes(claims);
        if (issuer != null && !issuer.equals(claims.getIssuer())) throw invalid("The bearer token's issuer is not accepted.");
        if (audience != null && (claims.getAudience() == null || !claims.getAudience().contains(audience))) {
            throw invalid("The bearer token's audience is not accepted.");
        }
        Object v = claims.getClaim(claim);
        if (v == null) return Optional.empty();
        if (!(v instanceof String s)) throw invalid("The bearer token's " + claim + " claim is not text.");
        return Optional.of(s);
    }

    private void checkTimes(JWTClaimsSet claims) {
        Instant now = clock.instant();
        Date exp = claims.getExpirationTime();
        if (exp != null && now.isAfter(exp.toInstant().plusSeconds(CLOCK_SKEW_SECONDS))) {
            throw new TenantRejectedException(401, "expired_token", "The bearer token has expired.");
        }
        Date nbf = claims.getNotBeforeTime();
        if (nbf != null && now.isBefore(nbf.toInstant().minusSeconds(CLOCK_SKEW_SECONDS))) {
            throw invalid("The bearer token is not valid yet.");
        }
    }

    private static TenantRejectedException invalid(String detail) {
        return new TenantRejectedException(401, "invalid_token", detail);
    }

    /** Reads an RSA or EC public key from PEM text: {@code PUBLIC KEY} (X.509 SubjectPublicKeyInfo) or {@code CERTIFICATE}. */
    static PublicKey parsePublicKeyPem(String pem) {
        String type;
        if (pem.contains("-----BEGIN PUBLIC KEY-----")) type = "PUBLIC KEY";
        else if (pem.contains("-----BEGIN CERTIFICATE-----")) type = "CERTIFICATE";
        else throw new IllegalArgumentException("expected a PEM 'PUBLIC KEY' or 'CERTIFICATE' block"
                    + (pem.contains("PRIVATE KEY") ? " (this is a private key: give the public key)" : ""));
        int start = pem.indexOf("-----BEGIN " + type + "-----") + ("-----BEGIN " + type + "-----").length();
        int end = pem.indexOf("-----END " + type + "-----", start);
        if (end < 0) throw new IllegalArgumentException("PEM block has no END line");
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(pem.substring(start, end));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("PEM body is not base64");
        }
        try {
            if (type.equals("CERTIFICATE")) {
                return CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der)).getPublicKey();
            }
            for (String alg : List.of("RSA", "EC")) {
                try {
                    return KeyFactory.getInstance(alg).generatePublic(new X509EncodedKeySpec(der));
                } catch (GeneralSecurityException tryNext) {
                    // not this algorithm
                }
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot read the certificate: " + e.getMessage());
        }
        throw new IllegalArgumentException("not an RSA or EC public key");
    }

    /** Builds a {@link JwtClaimResolver}; misuse fails at {@link #build()} with a reason. */
    public static final class Builder {
        private String claim = DEFAULT_CLAIM;
        private String header = "Authorization";
        private byte[] secret;
        private PublicKey publicKey;
        private JWKSet jwks;
        private boolean unverified;
        private String issuer;
        private String audience;
        private Clock clock = Clock.systemUTC();
        private int keys;

        private Builder() {
        }

        /** The claim holding the tenant id (default {@value #DEFAULT_CLAIM}). */
        public Builder claim(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) throw new IllegalArgumentException("claim name must not be blank");
            this.claim = name;
            return this;
        }

        /**
         * The header holding the token (default {@code Authorization}, scheme {@code Bearer}); in
         * another header the value is the token, with or without {@code Bearer }.
         */
        public Builder header(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) throw new IllegalArgumentException("header name must not be blank");
            this.header = name;
            return this;
        }

        /** Verify HS256/HS384/HS512 signatures with this shared secret (at least 32 bytes). */
        public Builder hmacSecret(byte[] secret) {
            Objects.requireNonNull(secret, "secret");
            if (secret.length < 32) {
                throw new IllegalArgumentException("an HMAC secret must be at least 32 bytes (256 bits) for HS256, was "
                        + secret.length + " bytes");
            }
            this.secret = secret.clone();
            keys++;
            return this;
        }

        /** Verify RS/PS (RSA key) or ES (EC key) signatures with this public key. */
        public Builder publicKey(PublicKey key) {
            Objects.requireNonNull(key, "key");
            if (!(key instanceof RSAPublicKey) && !(key instanceof ECPublicKey)) {
                throw new IllegalArgumentException("expected an RSA or EC public key, was " + key.getAlgorithm());
            }
            this.publicKey = key;
            keys++;
            return this;
        }

        /** Like {@link #publicKey(PublicKey)}, from PEM text ({@code PUBLIC KEY} or {@code CERTIFICATE}). */
        public Builder publicKeyPem(String pem) {
            return publicKey(parsePublicKeyPem(Objects.requireNonNull(pem, "pem")));
        }

        /** Verify with the asymmetric keys of a JWK set (JSON text, as served on a {@code jwks_uri}). */
        public Builder jwks(String json) {
            Objects.requireNonNull(json, "json");
            JWKSet set;
            try {
                set = JWKSet.parse(json);
            } catch (ParseException e) {
                throw new IllegalArgumentException("not a JWK set: " + e.getMessage());
            }
            List<JWK> usable = set.getKeys().stream().filter(k -> k instanceof RSAKey || k instanceof ECKey).toList();
            if (usable.isEmpty()) throw new IllegalArgumentException("the JWK set has no RSA or EC key");
            this.jwks = new JWKSet(usable.stream().map(JWK::toPublicJWK).toList());
            keys++;
            return this;
        }

        /**
         * Do not verify signatures: read the claim of any well-formed token (expiry is still checked).
         * Only for applications where an upstream filter already authenticated the request.
         */
        public Builder withoutVerification() {
            this.unverified = true;
            return this;
        }

        /** Accept only tokens with this {@code iss}. */
        public Builder issuer(String issuer) {
            this.issuer = Objects.requireNonNull(issuer, "issuer");
            return this;
        }

        /** Accept only tokens whose {@code aud} contains this value. */
        public Builder audience(String audience) {
            this.audience = Objects.requireNonNull(audience, "audience");
            return this;
        }

        /** Clock for {@code exp}/{@code nbf} (tests). */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The resolver.
         *
         * @throws IllegalStateException unless exactly one key was given, or none with
         *                               {@link #withoutVerification()}
         */
        public JwtClaimResolver build() {
            if (unverified) {
                if (keys > 0) throw new IllegalStateException("withoutVerification() takes no key");
                LOG.log(System.Logger.Level.WARNING, "JWT tenant claim '" + claim + "' is read WITHOUT signature "
                        + "verification: safe only behind a filter or gateway that already authenticated the request");
                return new JwtClaimResolver(this, null);
            }
            if (keys != 1) throw new IllegalStateException("give exactly one key: hmacSecret, publicKey(Pem) or jwks, was " + keys);
            DefaultJWTProcessor<SecurityContext> p = new DefaultJWTProcessor<>();
            Set<JWSAlgorithm> algs = new HashSet<>();
            if (secret != null) {
                algs.addAll(JWSAlgorithm.Family.HMAC_SHA);
                // a longer algorithm needs a longer secret: offer only those this secret can serve
                if (secret.length < 48) algs.remove(JWSAlgorithm.HS384);
                if (secret.length < 64) algs.remove(JWSAlgorithm.HS512);
                p.setJWSKeySelector(new JWSVerificationKeySelector<>(algs, new ImmutableSecret<>(secret)));
            } else {
                JWKSet set = jwks;
                if (publicKey instanceof RSAPublicKey rsa) {
                    set = new JWKSet(new RSAKey.Builder(rsa).build());
                } else if (publicKey instanceof ECPublicKey ec) {
                    Curve curve = Curve.forECParameterSpec(ec.getParams());
                    if (curve == null) throw new IllegalStateException("unsupported EC curve");
                    set = new JWKSet(new ECKey.Builder(curve, ec).build());
                }
                algs.addAll(JWSAlgorithm.Family.RSA);
                algs.addAll(JWSAlgorithm.Family.EC);
                p.setJWSKeySelector(new JWSVerificationKeySelector<>(algs, new ImmutableJWKSet<>(set)));
            }
            // exp/nbf/iss/aud are checked by resolve() with the injected clock
            p.setJWTClaimsSetVerifier((claims, context) -> {
            });
            return new JwtClaimResolver(this, p);
        }
    }
}
