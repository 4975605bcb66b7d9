package io.quotagate.tenant.testing;

import org.junit.jupiter.api.Assumptions;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A PostgreSQL database of the test's own, never a mock: created with a random name ({@code qg_<hex>})
 * on the server at {@code 127.0.0.1:5432} (trust authentication, user {@code postgres}), dropped by
 * {@link #close()}. When the server does not answer, a test fails with a clear message under
 * {@code CI=true} and is skipped with that message elsewhere: it never passes without running.
 */
public final class PostgresDatabase implements AutoCloseable {
    public static final String HOST = "127.0.0.1";
    public static final int PORT = 5432;
    private static final String USER = "postgres";

    private final String host;
    private final int port;
    private final String name;
    private final PGSimpleDataSource dataSource;

    private PostgresDatabase(String host, int port, String name) {
        this.host = host;
        this.port = port;
        this.name = name;
        this.dataSource = dataSource(host, port, name);
    }

    /** A new database on the server at 127.0.0.1:5432 (fails under CI, skips elsewhere, when it does not answer). */
    public static PostgresDatabase create() {
        return create(HOST, PORT);
    }

    static PostgresDatabase create(String host, int port) {
        PGSimpleDataSource admin = dataSource(host, port, "postgres");
        String name = "qg_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        Connection connection;
        try {
            connection = admin.getConnection();
        } catch (SQLException e) {
            unavailable("PostgreSQL at " + host + ":" + port + " is unreachable (" + e.getMessage() + ")");
            throw new AssertionError("unreachable");
        }
        try (connection; Statement s = connection.createStatement()) {
            s.execute("create database " + name);
        } catch (SQLException e) {
            throw new AssertionError("cannot create database " + name + " on " + host + ":" + port + ": " + e.getMessage(), e);
        }
        return new PostgresDatabase(host, port, name);
    }

    private static PGSimpleDataSource dataSource(String host, int port, String database) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setServerNames(new String[]{host});
        ds.setPortNumbers(new int[]{port});
        ds.setDatabaseName(database);
        ds.setUser(USER);
        ds.setConnectTimeout(5);
        return ds;
    }

    private static void unavailable(String why) {
        String message = why + ": the JDBC tests need a real PostgreSQL server (trust authentication, user postgres; "
                + ".ci/run starts it)";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) throw new AssertionError(message + " (CI=true: failing, not skipping)");
        Assumptions.abort(message + " (skipped on this machine; under CI=true this fails)");
    }

    /** The database's name, {@code qg_<16 hex digits>}. */
    public String name() {
        return name;
    }

    /** {@code jdbc:postgresql://127.0.0.1:5432/<name>?user=postgres}. */
    public String jdbcUrl() {
        return "jdbc:postgresql://" + host + ":" + port + "/" + name + "?user=" + USER;
    }

    /** A data source of this database (a new connection per call, as the driver's simple one does). */
    public DataSource dataSource() {
        return dataSource;
    }

    /** Runs each statement, in order, in one connection (auto-commit). */
    public void execute(String... sql) {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            for (String statement : sql) s.execute(statement);
        } catch (SQLException e) {
            throw new AssertionError("on database " + name + ": " + e.getMessage(), e);
        }
    }

    /** Runs one statement with its {@code ?} parameters bound (strings, numbers, nulls); the rows changed. */
    public int update(String sql, Object... parameters) {
        try (Connection c = dataSource.getConnection(); PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) s.setObject(i + 1, parameters[i]);
            return s.executeUpdate();
        } catch (SQLException e) {
            throw new AssertionError("on database " + name + ": " + e.getMessage(), e);
        }
    }

    /** Drops the database, ending connections still open to it (PostgreSQL 13 or later). */
    @Override
    public void close() {
        try (Connection c = dataSource(host, port, "postgres").getConnection(); Statement s = c.createStatement()) {
            s.execute("drop database if exists " + name + " with (force)");
        } catch (SQLException e) {
            throw new AssertionError("cannot drop database " + name + ": " + e.getMessage(), e);
        }
    }
}
