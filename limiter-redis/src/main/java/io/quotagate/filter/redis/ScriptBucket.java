package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketLimits;

import java.nio.charset.StandardCharsets;

/**
 * A bucket in Redis kept by the store's own script ({@link BucketScript}): every operation is one
 * script call, one round trip, that also says what the bucket holds.
 *
 * <p>Every reply is noted ({@link #noted}): when the key is missing, the script creates it as this
 * instance last saw it, refilled since by Redis's clock (as {@link RemoteBucket} does for bucket4j), so
 * Redis losing its data hands out no fresh burst; a key that expired after a full refill is created full.
 */
final class ScriptBucket implements RedisBucket, ScriptKey {
    /** Tokens per bandwidth at a time of Redis's clock (microseconds). */
    private record Seen(long atMicros, long[] tokens) {
    }

    private final BucketScript script;
    private final String key;
    private final byte[] spec;
    private volatile Seen seen;

    ScriptBucket(BucketScript script, String key, BucketLimits limits) {
        this.script = script;
        this.key = key;
        this.spec = BucketScript.spec(limits);
    }

    @Override
    public String key() {
        return key;
    }

    /** The limits the script creates the key with, in its format. */
    @Override
    public byte[] spec() {
        return spec;
    }

    /** What this instance last saw of the bucket, in the script's format ({@code at|tokens,...}), or empty. */
    @Override
    public byte[] seen() {
        Seen s = seen;
        if (s == null) return new byte[0];
        StringBuilder b = new StringBuilder().append(s.atMicros()).append('|');
        for (int i = 0; i < s.tokens().length; i++) {
            if (i > 0) b.append(',');
            b.append(s.tokens()[i]);
        }
        return b.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** Notes the tokens a reply showed, at the time {@code nowMicros} the call was sent with (a refund's too). */
    @Override
    public void noted(long nowMicros, long[] tokens, boolean refund) {
        seen = new Seen(nowMicros, tokens);
    }

    @Override
    public Noted lastSeen() {
        Seen s = seen;
        return s == null ? null : new Noted(s.atMicros() * 1000, s.tokens().clone());
    }

    @Override
    public void seed(Noted noted) {
        if (seen == null) seen = new Seen(noted.atNanos() / 1000, noted.tokens().clone());
    }

    @Override
    public boolean tryTake(long units) {
        return run(BucketScript.TAKE, units).done();
    }

    @Override
    public long take(long units) {
        BucketScript.Reply r = run(BucketScript.TAKE, units);
        return r.done() ? 0 : Math.max(1, r.waits()[0]);
    }

    /** One script call: taken into debt if the wait is within {@code maxWaitNanos}, else nothing. */
    @Override
    public long reserve(long units, long maxWaitNanos) {
        if (maxWaitNanos <= 0) return take(units);
        BucketScript.Reply r = script.run(BucketScript.RESERVE, units, maxWaitNanos, new ScriptKey[]{this}, 1, null);
        // a refused wait is past the max: the script compares whole micros rounded down from it
        return r.done() ? r.waits()[0] : Math.max(maxWaitNanos + 1, r.waits()[0]);
    }

    /** Reads the wait; a missing key stays missing (a guest refused before it touched its bucket writes nothing). */
    @Override
    public long nanosToWait(long units) {
        return run(BucketScript.LOOK, units).waits()[0];
    }

    @Override
    public void refund(long units) {
        run(BucketScript.REFUND, units);
    }

    @Override
    public void forceTake(long units) {
        run(BucketScript.FORCE, units);
    }

    @Override
    public long available() {
        long min = Long.MAX_VALUE;
        for (long t : availablePerBandwidth()) min = Math.min(min, t);
        return min;
    }

    @Override
    public long[] availablePerBandwidth() {
        return run(BucketScript.AVAILABLE, 0).tokens()[0];
    }

    /** The tokens the latest reply showed (no round trip), or read if this instance has seen none. */
    @Override
    public long[] notedPerBandwidth() {
        Seen s = seen;
        return s != null ? s.tokens().clone() : availablePerBandwidth();
    }

    @Override
    public void moveTo(BucketLimits limits) {
        script.run(BucketScript.MOVE, 0, new ScriptKey[]{this}, 1, limits);
    }

    private BucketScript.Reply run(byte op, long units) {
        return script.run(op, units, new ScriptKey[]{this}, 1, null);
    }
}
