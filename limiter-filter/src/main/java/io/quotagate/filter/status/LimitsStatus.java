package io.quotagate.filter.status;

import java.util.Optional;

/**
 * Where the limits in force come from, for dashboards, health and the Actuator endpoint.
 *
 * @param shared         true if the instances sharing a store govern one set of limits (a shared store)
 * @param version        the shared record's version in force (0 with a local store, or before the first read)
 * @param source         the plans file whose limits are the base (published last, by any instance)
 * @param publishedBy    the instance that published it (this one's id with a local store: "local")
 * @param fileAgrees     false if this instance's own plans file has other limits than the base in force
 *                       (a rolling deploy between two files; the file published last wins)
 * @param reachable      false if the last check could not reach the store (the limits in force stay)
 * @param refused        shared records this instance could not use (garbage, a newer format, a plan its
 *                       file does not define); it kept the last good limits each time
 * @param lastRefusal    why the last one was refused
 * @param overrides      the runtime changes in force
 */
public record LimitsStatus(boolean shared, long version, String source, String publishedBy, boolean fileAgrees,
                           boolean reachable, long refused, Optional<String> lastRefusal, LimitOverrides overrides) {
}
