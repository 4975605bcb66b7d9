package io.quotagate.filter.redis;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Redis URI forms {@code store.uri} may name, and the cluster form's seeds and redaction. */
class RedisUriTest {
    @ParameterizedTest
    @ValueSource(strings = {"redis://h:6379", "rediss://u:p@h:6380/0", "redis-sentinel://s1:26379,s2:26379/0#mymaster",
            "redis-cluster://10.0.0.1:7000", "redis-cluster://a.example:7000,b.example:7001/",
            "rediss-cluster://user:secret@a:7000,b:7001", "redis-cluster://[::1]:7000,127.0.0.1:7001"})
    void acceptsTheFormsLettuceConnectsWith(String uri) {
        assertThat(RedisSettings.isRedisUri(uri)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://h:6379", "redis-cluster://", "redis-cluster://a", "redis-cluster://a:7000,",
            "redis-cluster://a:7000,,b:7001", "redis-cluster://a:7000/0", "redis-cluster://a:port",
            "redis-cluster://a:7000 b:7001"})
    void refusesMalformedURIs(String uri) {
        assertThat(RedisSettings.isRedisUri(uri)).isFalse();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "redis-cluster://a:7000,b:7001/|redis://a:7000,redis://b:7001",
            "rediss-cluster://user:secret@[::1]:7000|rediss://user:secret@[::1]:7000"})
    void aClusterURINamesItsSeedsInOrderEachAsANodeURI(String uri, String nodes) {
        assertThat(RedisSettings.isClusterUri(uri)).isTrue();
        assertThat(String.join(",", RedisSettings.clusterNodeUris(uri))).isEqualTo(nodes);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "rediss-cluster://user:secret@a:7000,b:7001|rediss-cluster://***@a:7000,b:7001",
            "redis-cluster://a:7000,b:7001|redis-cluster://a:7000,b:7001"})
    void redactsAClusterURIsCredentials(String uri, String shown) {
        assertThat(RedisSettings.redact(uri)).isEqualTo(shown);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis://h:6379", "redis-sentinel://s:26379#m"})
    void onlyTheClusterFormHasSeeds(String uri) {
        assertThat(RedisSettings.isClusterUri(uri)).isFalse();
        assertThatThrownBy(() -> RedisSettings.clusterNodeUris(uri)).isInstanceOf(IllegalArgumentException.class);
    }
}
