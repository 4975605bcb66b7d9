package io.quotagate.tenant;

import com.nimbusds.jose.EncryptionMethod;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWEAlgorithm;
import com.nimbusds.jose.JWEEncrypter;
import com.nimbusds.jose.JWEHeader;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.DirectEncrypter;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSAEncrypter;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jwt.EncryptedJWT;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;

import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.Map;

/** Signs test tokens. */
final class Tokens {
    static final byte[] SECRET = "0123456789abcdef0123456789abcdef-test-secret".getBytes(StandardCharsets.UTF_8);
    static final KeyPair RSA = generate("RSA");
    static final KeyPair EC = generate("EC");

    private Tokens() {
    }

    static String hs256(Map<String, Object> claims) {
        return sign(JWSAlgorithm.HS256, signer(SECRET), claims);
    }

    static String hs256(byte[] secret, Map<String, Object> claims) {
        return sign(JWSAlgorithm.HS256, signer(secret), claims);
    }

    static String rs256(Map<String, Object> claims) {
        return sign(JWSAlgorithm.RS256, new RSASSASigner(RSA.getPrivate()), claims);
    }

    static String es256(Map<String, Object> claims) {
        try {
            return sign(JWSAlgorithm.ES256, new ECDSASigner((ECPrivateKey) EC.getPrivate()), claims);
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** An encrypted token (JWE, {@code dir} with A256GCM) under a key the resolvers never see. */
    static String encryptedDirect(Map<String, Object> claims) {
        byte[] key = new byte[32];
        new java.security.SecureRandom().nextBytes(key);
        try {
            return encrypt(new JWEHeader(JWEAlgorithm.DIR, EncryptionMethod.A256GCM), new DirectEncrypter(key), claims);
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** An encrypted token (JWE, RSA-OAEP-256 with A128GCM) to the test RSA key. */
    static String encryptedRsa(Map<String, Object> claims) {
        return encrypt(new JWEHeader(JWEAlgorithm.RSA_OAEP_256, EncryptionMethod.A128GCM),
                new RSAEncrypter((RSAPublicKey) RSA.getPublic()), claims);
    }

    /** An unsecured token: {@code {"alg":"none"}}. */
    static String none(Map<String, Object> claims) {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        return b64.encodeToString("{\"alg\":\"none\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(claimsOf(claims).toString().getBytes(StandardCharsets.UTF_8)) + ".";
    }

    static String pem(PublicKey key) {
        return "-----BEGIN PUBLIC KEY-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(key.getEncoded()) + "\n-----END PUBLIC KEY-----\n";
    }

    static Map<String, Object> tid(String tenant) {
        return Map.of("tid", tenant, "exp", Instant.now().plusSeconds(600));
    }

    static Map<String, Object> expired(String tenant) {
        return Map.of("tid", tenant, "exp", Instant.now().minusSeconds(3600));
    }

    private static JWSSigner signer(byte[] secret) {
        try {
            return new MACSigner(secret);
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String sign(JWSAlgorithm alg, JWSSigner signer, Map<String, Object> claims) {
        SignedJWT jwt = new SignedJWT(new JWSHeader(alg), claimsOf(claims));
        try {
            jwt.sign(signer);
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
        return jwt.serialize();
    }

    private static String encrypt(JWEHeader header, JWEEncrypter encrypter, Map<String, Object> claims) {
        EncryptedJWT jwt = new EncryptedJWT(header, claimsOf(claims));
        try {
            jwt.encrypt(encrypter);
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
        return jwt.serialize();
    }

    private static JWTClaimsSet claimsOf(Map<String, Object> claims) {
        JWTClaimsSet.Builder b = new JWTClaimsSet.Builder();
        claims.forEach((k, v) -> b.claim(k, v instanceof Instant i ? Date.from(i) : v));
        return b.build();
    }

    private static KeyPair generate(String alg) {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance(alg);
            if (alg.equals("EC")) g.initialize(new ECGenParameterSpec("secp256r1"));
            else g.initialize(2048);
            return g.generateKeyPair();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
