package io.quotagate.filter.status;

import io.quotagate.plans.CalendarQuota;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The export's CSV and JSON: a cell a spreadsheet would run as a formula is neutralised, quotes escaped. */
class UsagePageTest {
    private static UsagePage page(String tenant) {
        return new UsagePage(List.of(new TenantUsage(tenant, "pro", List.of(new TenantUsage.Period("monthly",
                CalendarQuota.Per.MONTH, 10, Instant.parse("2027-01-01T00:00:00Z"),
                Instant.parse("2027-02-01T00:00:00Z"), true, 7)))), null);
    }

    @Test
    void aFormulaCellGetsALeadingQuoteAndACellWithACommaOrQuoteIsQuoted() {
        assertThat(page("=cmd|' /C calc'!A0").csv(false)).startsWith("'=cmd|' /C calc'!A0,pro,monthly,");
        assertThat(page("-2+3").csv(false)).startsWith("'-2+3,pro,");
        assertThat(page("@SUM(A1)").csv(false)).startsWith("'@SUM(A1),");
        assertThat(page("a,\"b\"").csv(false)).startsWith("\"a,\"\"b\"\"\",pro,");
        assertThat(page("+1,2").csv(false)).startsWith("\"'+1,2\",pro,");
        assertThat(page("acme").csv(true)).isEqualTo(UsagePage.CSV_HEADER + "\r\n"
                + "acme,pro,monthly,month,10,2027-01-01T00:00:00Z,2027-02-01T00:00:00Z,true,7\r\n");
    }

    @Test
    void jsonEscapesStrings() {
        assertThat(page("a\"b\\c").json()).contains("\"tenant\":\"a\\\"b\\\\c\"");
    }
}
