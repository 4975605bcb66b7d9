package io.quotagate.filter.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Every Lua script this store runs on Redis, each the text of a resource beside this class (its
 * contract is at the top of that file): no script text lives in a Java string.
 *
 * <p><b>Loading.</b> All are loaded ({@code SCRIPT LOAD}) once per client at startup, see
 * {@link RedisConnection#warmUp}, and sent as {@code EVALSHA} of their SHA-1. A server that does not
 * know a script (a restart, a failover, a new cluster node) answers {@code NOSCRIPT}, and that call is
 * sent once more as {@code EVAL}, which loads it again.
 */
enum LuaScript {
    /** The token buckets and calendar counters of a request, see {@link BucketScript}. */
    BUCKETS("buckets.lua"),
    /** The heartbeat, see {@link InstanceRegistry}. */
    HEARTBEAT("heartbeat.lua"),
    /** Reads the shared limits record, see {@link RedisLimitsChannel}. */
    LIMITS_READ("limits-read.lua"),
    /** Replaces the shared limits record at an expected version, see {@link RedisLimitsChannel}. */
    LIMITS_REPLACE("limits-replace.lua"),
    /** Adds to a calendar quota's counter within its limit, see {@link RedisQuotaCounters}. */
    QUOTA_TRY_ADD("quota-try-add.lua"),
    /** Adds to (or refunds) a calendar quota's counter whatever its limit, see {@link RedisQuotaCounters}. */
    QUOTA_ADD("quota-add.lua"),
    /** Deletes a key still holding the unreadable value read, see {@link ValueRepair}. */
    COMPARE_AND_DELETE("compare-and-delete.lua");

    private final String resource;
    private final String text;
    private final String sha;

    LuaScript(String resource) {
        this.resource = resource;
        this.text = load(resource);
        this.sha = sha1(text);
    }

    /** The resource the script's text comes from, beside this class. */
    String resource() {
        return resource;
    }

    /** The script's text. */
    String text() {
        return text;
    }

    /** Its SHA-1, as {@code EVALSHA} names it. */
    String sha() {
        return sha;
    }

    /**
     * Runs the script as {@code EVALSHA}, and once more as {@code EVAL} (which loads it) if the server
     * answers {@code NOSCRIPT}. The returned future completes with the reply, or with the failure itself
     * (not wrapped), on Lettuce's thread.
     *
     * @throws RuntimeException if the {@code EVALSHA} cannot even be sent (Lettuce throws some refusals)
     */
    <T> CompletableFuture<T> run(RedisClusterAsyncCommands<String, byte[]> commands, ScriptOutputType type,
                                 String[] keys, byte[]... args) {
        CompletableFuture<T> result = new CompletableFuture<>();
        commands.<T>evalsha(sha, type, keys, args).whenComplete((reply, failure) -> {
            Throwable cause = unwrap(failure);
            if (cause instanceof RedisNoScriptException) {
                try {
                    commands.<T>eval(text, type, keys, args).whenComplete((again, still) -> {
                        if (still != null) result.completeExceptionally(unwrap(still));
                        else result.complete(again);
                    });
                } catch (RuntimeException notSent) { // not swallowed by this callback: the result's failure
                    result.completeExceptionally(notSent);
                }
            } else if (cause != null) {
                result.completeExceptionally(cause);
            } else {
                result.complete(reply);
            }
        });
        return result;
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    private static String load(String resource) {
        try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
            if (in == null) throw new IllegalStateException(resource + " missing from limiter-redis");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
