package io.quotagate.tenant.testing;

import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

import java.io.IOException;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The PostgreSQL fixture never passes without running, and leaves no database behind. */
class PostgresDatabaseTest {
    @Test
    void anUnreachableServerFailsUnderCiAndIsSkippedWithTheReasonElsewhere() throws IOException {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort(); // free, and nothing listens once closed
        }
        Class<? extends Throwable> expected = "true".equalsIgnoreCase(System.getenv("CI"))
                ? AssertionError.class : TestAbortedException.class;
        assertThatThrownBy(() -> PostgresDatabase.create("127.0.0.1", closed))
                .isInstanceOf(expected)
                .hasMessageContaining("PostgreSQL at 127.0.0.1:" + closed + " is unreachable")
                .hasMessageContaining(expected == AssertionError.class ? "CI=true: failing, not skipping" : "under CI=true this fails");
    }

    @Test
    void eachDatabaseHasARandomNameAndIsDroppedOnClose() throws Exception {
        String name;
        try (PostgresDatabase db = PostgresDatabase.create(); PostgresDatabase other = PostgresDatabase.create()) {
            name = db.name();
            assertThat(name).matches("qg_[0-9a-f]{16}").isNotEqualTo(other.name());
            db.execute("create table t (x int)");
            assertThat(db.update("insert into t values (?)", 1)).isOne();
        }
        try (PostgresDatabase probe = PostgresDatabase.create(); Connection c = probe.dataSource().getConnection();
             Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select count(*) from pg_database where datname = '" + name + "'")) {
            r.next();
            assertThat(r.getInt(1)).as("dropped").isZero();
        }
    }
}
