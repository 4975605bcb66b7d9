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

    /** What this instance last saw of it (for creating a lost key as it was), or empty. */
    byte[] seen();

    /** Notes what a reply showed, at the caller's time {@code nowMicros}. */
    void noted(long nowMicros, long[] tokens);
}
