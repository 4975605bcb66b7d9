package io.quotagate.tenant;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.quotagate.tenant.testing.PostgresDatabase;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pool docs/tenants.md names for {@link JdbcTenantDirectory}, HikariCP, on a real PostgreSQL: a small pool
 * serves many request threads' lookups because the directory gives every connection back, also when a
 * lookup fails.
 */
class JdbcTenantDirectoryPoolTest {

    @Test
    void aPoolOfTwoConnectionsServesEightThreadsLookupsAndGetsEveryConnectionBack() throws Exception {
        try (PostgresDatabase db = PostgresDatabase.create()) {
            db.execute(JdbcTenantDirectoryTest.DOCUMENTED_TABLE);
            for (int i = 0; i < 20; i++) {
                db.update("insert into quotagate_tenants (tenant_id, plan) values (?, ?)", "t" + i, i % 2 == 0 ? "pro" : "free");
            }
            db.update("insert into quotagate_tenants (tenant_id, plan, limits) values (?, ?, ?)", "broken", "pro",
                    "[{capacity: 0}]");

            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(db.jdbcUrl());
            config.setMaximumPoolSize(2);
            // a connection that never came back would make a later lookup wait this long and then fail
            config.setConnectionTimeout(10_000);
            try (HikariDataSource pool = new HikariDataSource(config)) {
                JdbcTenantDirectory directory = JdbcTenantDirectory.builder(pool).build();
                ExecutorService threads = Executors.newFixedThreadPool(8);
                try {
                    List<Future<Integer>> lookups = new ArrayList<>();
                    for (int thread = 0; thread < 8; thread++) {
                        int first = thread;
                        Callable<Integer> work = () -> {
                            int answered = 0;
                            for (int i = 0; i < 100; i++) {
                                int tenant = (first + i) % 20;
                                assertThat(directory.planOf("t" + tenant)).contains(tenant % 2 == 0 ? "pro" : "free");
                                assertThat(directory.planOf("nobody-" + i)).isEmpty();
                                answered += 2;
                                if (i % 10 == 0) {
                                    // a row that cannot be used fails the lookup: its connection must come back too
                                    try {
                                        directory.contractOf("broken");
                                        throw new AssertionError("a row with capacity 0 was used");
                                    } catch (IllegalStateException expected) {
                                        answered++;
                                    }
                                }
                            }
                            return answered;
                        };
                        lookups.add(threads.submit(work));
                    }
                    int answered = 0;
                    for (Future<Integer> f : lookups) answered += f.get(120, TimeUnit.SECONDS);
                    assertThat(answered).isEqualTo(8 * (200 + 10));
                } finally {
                    threads.shutdownNow();
                }
                assertThat(pool.getHikariPoolMXBean().getTotalConnections()).isLessThanOrEqualTo(2);
                assertThat(pool.getHikariPoolMXBean().getActiveConnections()).as("connections not given back").isZero();
            }
        }
    }
}
