package io.quotagate.filter.redis;

/**
 * One key of a {@link BucketScript} call: a bucket ({@link ScriptBucket}) or a calendar quota's counter
 * ({@link ScriptCounter}), with what the script needs to read, create or count it.
 */
interface ScriptKey {

    /** The Redis key. */
    String key();

    /** Its limits in the script's format (a counter's start with {@code #}). */
    byte[] spec();

    /**
     * What this instance last saw of it (for creating a lost key as it was; a counter's floor: the units it
     * knows the counter holds), or empty.
     */
    byte[] seen();

    /**
     * Notes what a reply showed, at the caller's time {@code nowMicros}; {@code refund} if the reply is of a
     * refund (which may lower what is known of a counter).
     */
    void noted(long nowMicros, long[] tokens, boolean refund);
}
