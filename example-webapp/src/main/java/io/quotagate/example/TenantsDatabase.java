package io.quotagate.example;

import io.quotagate.tenant.JdbcTenantDirectory;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.Map;
import java.util.Properties;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * {@code --tenants-jdbc}: the tenants' plans, own limits and own quotas from a database, through a
 * {@link JdbcTenantDirectory}. {@code h2} (or the option without a value) is an H2 database in the file
 * {@code ./quotagate-tenants.mv.db}, which needs no server; any other value is a JDBC URL (the jar
 * holds the H2 and PostgreSQL drivers). With the default query the table {@code quotagate_tenants} is
 * created if absent; a query of the user's own reads the user's tables, and nothing is created.
 */
final class TenantsDatabase {
    /** The option's value (and its value when given alone) that means the embedded H2 file. */
    static final String H2 = "h2";
    static final String H2_URL = "jdbc:h2:file:./quotagate-tenants";
    /** The documented table, in SQL that H2 and PostgreSQL both take. */
    static final String CREATE_TABLE = "create table if not exists quotagate_tenants ("
            + "tenant_id varchar(64) primary key, plan varchar(32) not null, limits varchar(4000), quotas varchar(4000))";
    /** The quotas column, for a table an earlier version created without it (its file kept in ./). */
    static final String ADD_QUOTAS = "alter table quotagate_tenants add column if not exists quotas varchar(4000)";
    /** A tenant id looked up once at start, so a bad URL, query or column fails the start, not a request. */
    private static final String START_CHECK = "quotagate.start-check";
    private static final Pattern SECRET = Pattern.compile("(?i)(password=)[^&;]*");

    private TenantsDatabase() {
    }

    /** The JDBC URL the option names. */
    static String url(String option) {
        if (option.equals(H2)) return H2_URL;
        if (!option.startsWith("jdbc:")) {
            throw new IllegalArgumentException("expected a JDBC URL (jdbc:postgresql://host:5432/db, "
                    + "jdbc:h2:file:./tenants) or h2, was '" + redact(option) + "'");
        }
        return option;
    }

    /**
     * The directory over the database the option names, the default table created if absent, the query
     * run once.
     *
     * @param query the tenant query, or null for {@link JdbcTenantDirectory#DEFAULT_QUERY}
     * @throws IllegalArgumentException for a value that is not a JDBC URL or a query without one {@code ?}
     * @throws IllegalStateException    naming the URL (its password hidden) if the database cannot be
     *                                  reached or the query does not run
     */
    static JdbcTenantDirectory open(String option, String user, String password, String query) {
        String url = url(option);
        DataSource dataSource = new UrlDataSource(url, user, password);
        JdbcTenantDirectory.Builder builder = JdbcTenantDirectory.builder(dataSource);
        if (query != null) builder.query(query);
        JdbcTenantDirectory directory = builder.build();
        if (query == null) {
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute(CREATE_TABLE);
                s.execute(ADD_QUOTAS);
            } catch (SQLException e) {
                throw new IllegalStateException(redact(url) + ": " + e.getMessage(), e);
            }
        }
        try {
            directory.contractOf(START_CHECK);
        } catch (IllegalStateException e) {
            String why = e.getCause() instanceof SQLException sql ? sql.getMessage()
                    : e.getMessage().replace("tenant '" + START_CHECK + "': ", "");
            throw new IllegalStateException(redact(url) + ": " + why, e);
        }
        return directory;
    }

    /** The URL with the value of any {@code password=} replaced, for logs and messages. */
    static String redact(String url) {
        return SECRET.matcher(url).replaceAll("$1***");
    }

    /**
     * The PostgreSQL driver's timeouts, in seconds, unless the URL sets them: a database that accepts
     * connections and never answers (a stopped postmaster, a full backlog, a lost network) holds a
     * lookup's thread for at most these. {@code connectTimeout}: the TCP connect; {@code loginTimeout}: the
     * connect and the start-up exchange; {@code socketTimeout}: any one read, longer than the query timeout
     * (2 s) so that the query's own cancellation comes first.
     */
    static final Map<String, String> POSTGRES_TIMEOUTS = Map.of("connectTimeout", "2", "loginTimeout", "3",
            "socketTimeout", "5");

    /**
     * A connection per call from {@link DriverManager}: no pool, which the directory's cache makes
     * enough for a demo (a lookup per tenant every few minutes).
     */
    private static final class UrlDataSource implements DataSource {
        private final String url;
        private final Properties properties = new Properties();

        UrlDataSource(String url, String user, String password) {
            this.url = url;
            // the URL's own parameters win over these properties (the driver reads the URL last)
            if (url.startsWith("jdbc:postgresql:")) POSTGRES_TIMEOUTS.forEach(properties::setProperty);
            if (user != null) properties.setProperty("user", user);
            if (password != null) properties.setProperty("password", password);
        }

        @Override
        public Connection getConnection() throws SQLException {
            return DriverManager.getConnection(url, properties);
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return DriverManager.getConnection(url, username, password);
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
            // DriverManager's log writer is global: not ours to set
        }

        @Override
        public void setLoginTimeout(int seconds) {
            // DriverManager's login timeout is global: not ours to set
        }

        @Override
        public int getLoginTimeout() {
            return DriverManager.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException("no parent logger");
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            if (type.isInstance(this)) return type.cast(this);
            throw new SQLException("not a wrapper of " + type.getName());
        }

        @Override
        public boolean isWrapperFor(Class<?> type) {
            return type.isInstance(this);
        }

        @Override
        public String toString() {
            return redact(url);
        }
    }
}
