package io.quotagate.loadtest.bench;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.BufferedReader;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class FilterShareCommandTest {
    private static final String RUN = "java/lang/Thread.run;org/eclipse/jetty/ee10/servlet/ServletHandler.handle;";
    private static final String HOLDER = "org/eclipse/jetty/ee10/servlet/FilterHolder.doFilter;";
    private static final String END = "org/eclipse/jetty/ee10/servlet/ServletHandler$ChainEnd.doFilter;";
    private static final String SERVLET = "org/eclipse/jetty/ee10/servlet/ServletHolder.handle;io/quotagate/Ok.service";

    private static final String PROFILE = String.join("\n",
            // quotagate: 30 own (decision), 5 own behind the chain end (its wrapper), 100 application
            "[bench-server-quotagate-1-tenant-pool-12 tid=101];" + RUN + HOLDER
                    + "io/quotagate/filter/QuotaFilter.doFilter;io/quotagate/filter/internal/admission/Gate.decide 30",
            "[bench-server-quotagate-1-tenant-pool-13 tid=102];" + RUN + HOLDER
                    + "io/quotagate/filter/QuotaFilter.doFilter;io/quotagate/filter/QuotaFilter.run;"
                    + END + "org/eclipse/jetty/ee10/servlet/ServletContextRequest.getServletContextRequest;"
                    + "io/quotagate/filter/AdmittedRequest.getAttribute 5",
            "[bench-server-quotagate-1-tenant-pool-12 tid=101];" + RUN + HOLDER
                    + "io/quotagate/filter/QuotaFilter.doFilter;io/quotagate/filter/QuotaFilter.run;"
                    + END + SERVLET + " 100",
            "[bench-server-quotagate-1-tenant-pool-12 tid=101];" + "org/eclipse/jetty/io/ManagedSelector.select 65",
            // DoSFilter: 20 own, 200 application; a sample that names our wrapper is not QuotaFilter's
            "[bench-server-jetty-dosfilter-pool-7 tid=201];" + RUN + HOLDER
                    + "org/eclipse/jetty/ee10/servlets/DoSFilter.doFilter 20",
            "[bench-server-jetty-dosfilter-pool-7 tid=201];" + RUN + HOLDER
                    + "org/eclipse/jetty/ee10/servlets/DoSFilter.doFilter;" + END + SERVLET + " 197",
            "[bench-server-jetty-dosfilter-pool-7 tid=201];" + RUN + HOLDER
                    + "org/eclipse/jetty/ee10/servlets/DoSFilter.doFilter;" + END
                    + "io/quotagate/filter/AdmittedRequest.getAttribute 3",
            // bare: no filter; client threads and other lines are not the servers'
            "[bench-server-bare-pool-3 tid=301];" + RUN + END + SERVLET + " 150",
            "[bench-client-0 tid=401];java/net/Socket.read 999",
            "not a sample line");

    @Test
    void splitsEachServersSamplesIntoItsFiltersOwnWorkAndTheApplications() throws Exception {
        Map<String, FilterShareCommand.Share> shares =
                FilterShareCommand.read(new BufferedReader(new StringReader(PROFILE)));

        assertThat(shares).containsOnlyKeys("bare", "jetty-dosfilter", "quotagate-1-tenant");
        assertThat(shares.get("quotagate-1-tenant")).isEqualTo(new FilterShareCommand.Share(200, 35, 100));
        assertThat(shares.get("jetty-dosfilter")).isEqualTo(new FilterShareCommand.Share(220, 20, 200));
        assertThat(shares.get("bare")).isEqualTo(new FilterShareCommand.Share(150, 0, 150));
        assertThat(shares.get("quotagate-1-tenant").perApp()).isEqualTo(0.35);
    }

    @Test
    void comparesQuotaFilterWithItsPeerPerUnitOfApplicationWork() throws Exception {
        Path file = Files.createTempFile("profile", ".txt");
        try {
            Files.writeString(file, PROFILE);
            StringWriter text = new StringWriter();
            int status = new CommandLine(new FilterShareCommand()).setOut(new PrintWriter(text))
                    .execute(file.toString());

            assertThat(status).isZero();
            // (35 / 100) / (20 / 200) = 3.5
            assertThat(text.toString())
                    .containsPattern("quotagate-1-tenant / jetty-dosfilter\\s+3\\.500 +\\(3\\.500-3\\.500, 1 run\\)")
                    .contains("17.50%"); // quotagate's filter share of its server's samples
        } finally {
            Files.delete(file);
        }
    }

    @Test
    void severalRunsGiveTheMedianRatioAndTheRange() throws Exception {
        Path first = Files.createTempFile("profile", ".txt");
        Path second = Files.createTempFile("profile", ".txt");
        Path third = Files.createTempFile("profile", ".txt");
        try {
            Files.writeString(first, PROFILE); // 3.5
            Files.writeString(second, PROFILE.replace("Gate.decide 30", "Gate.decide 15")); // (20/100)/(20/200) = 2
            Files.writeString(third, PROFILE.replace("Gate.decide 30", "Gate.decide 45")); // 5
            StringWriter text = new StringWriter();
            int status = new CommandLine(new FilterShareCommand()).setOut(new PrintWriter(text))
                    .execute(first.toString(), second.toString(), third.toString());

            assertThat(status).isZero();
            assertThat(text.toString())
                    .containsPattern("quotagate-1-tenant / jetty-dosfilter\\s+3\\.500 +\\(2\\.000-5\\.000, 3 runs\\)");
        } finally {
            Files.delete(first);
            Files.delete(second);
            Files.delete(third);
        }
    }

    @Test
    void aProfileWithoutServerThreadsFails() throws Exception {
        Path file = Files.createTempFile("profile", ".txt");
        try {
            Files.writeString(file, "java/lang/Thread.run;Foo.bar 10\n");
            StringWriter text = new StringWriter();
            int status = new CommandLine(new FilterShareCommand()).setOut(new PrintWriter(text))
                    .execute(file.toString());
            assertThat(status).isEqualTo(1);
            assertThat(text.toString()).contains("no samples of bench-server-* threads");
        } finally {
            Files.delete(file);
        }
    }

    @Test
    void aMissingProfileIsNamedWithoutAStackTrace() {
        StringWriter err = new StringWriter();
        int status = new CommandLine(new FilterShareCommand()).setOut(new PrintWriter(new StringWriter()))
                .setErr(new PrintWriter(err, true)).execute("no-such-profile.txt");
        assertThat(status).isEqualTo(2);
        assertThat(err.toString()).isEqualTo("filter-share: cannot read no-such-profile.txt (no such file)"
                + System.lineSeparator());
    }
}
