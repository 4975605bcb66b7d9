package io.quotagate.filter.limits;

import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.ZoneId;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The shared record's formats: 1 while no plan has calendar quotas, 2 once one has. */
class LimitsRecordFormatTest {
    private static final String WITHOUT = """
            plans:
              pro:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
            """;
    private static final String WITH = WITHOUT + """
                quotas: [ { name: monthly, limit: 1000, per: month, zone: Europe/Berlin } ]
            """;

    private static LimitsRecord record(Plans plans, LimitOverrides overrides) {
        return new LimitsRecord(LimitsBase.of(plans), plans.source(), "i1", Instant.parse("2027-01-01T00:00:00Z"),
                overrides, new LimitsRecord.Change("i1", Instant.parse("2027-01-01T00:00:00Z"), "test"));
    }

    @Test
    void aRecordWithoutQuotasStaysFormatOneSoThePreviousVersionReadsIt() throws Exception {
        String json = record(PlansFile.parse("p.yml", WITHOUT), LimitOverrides.NONE).toJson();
        assertThat(json).startsWith("{\"format\":1,").doesNotContain("quotas");
        assertThat(LimitsRecord.parse(json).base()).isEqualTo(LimitsBase.of(PlansFile.parse("p.yml", WITHOUT)));
    }

    @Test
    void quotasMakeItFormatTwoAndComeBackWhole() throws Exception {
        Plans plans = PlansFile.parse("p.yml", WITH);
        List<CalendarQuota> daily = List.of(new CalendarQuota("daily", 50, CalendarQuota.Per.DAY, ZoneId.of("UTC")));
        LimitsRecord r = record(plans, LimitOverrides.NONE.withPlanQuotas("pro", daily));
        String json = r.toJson();
        assertThat(json).startsWith("{\"format\":2,")
                .contains("\"quotas\":{\"pro\":[{\"name\":\"monthly\",\"limit\":1000,\"per\":\"month\",\"zone\":\"Europe/Berlin\"}]}");
        LimitsRecord back = LimitsRecord.parse(json);
        assertThat(back.base()).isEqualTo(r.base());
        assertThat(back.overrides().quotas()).containsEntry("pro", daily);
        assertThat(EffectiveLimits.of(PlansFile.parse("p.yml", WITHOUT), back.base(), back.overrides())
                .plan("pro").orElseThrow().quotas()).as("another instance's file, this record's quotas").isEqualTo(daily);
    }

    @Test
    void aTenantsOwnQuotasMakeItFormatTwoAndComeBackWhole() throws Exception {
        Plans plans = PlansFile.parse("p.yml", WITHOUT + """
                tenants:
                  overrides:
                    bigcorp: { plan: pro, quotas: [ { name: monthly, limit: 500, per: month } ] }
                """);
        LimitsRecord r = record(plans, LimitOverrides.NONE.withTenant("acme", new io.quotagate.tenant.TenantContract(
                "pro", List.of(), List.of())));
        String json = r.toJson();
        assertThat(json).startsWith("{\"format\":2,").contains("\"bigcorp\":{\"plan\":\"pro\",\"quotas\":[{")
                .contains("\"acme\":{\"plan\":\"pro\",\"quotas\":[]}");
        LimitsRecord back = LimitsRecord.parse(json);
        assertThat(back.base()).isEqualTo(r.base());
        assertThat(back.overrides()).isEqualTo(r.overrides());
        Plans effective = EffectiveLimits.of(PlansFile.parse("p.yml", WITHOUT), back.base(), back.overrides());
        assertThat(effective.tenants().overrideQuotas()).containsEntry("acme", List.of())
                .containsKey("bigcorp");
    }

    @Test
    void theFingerprintOfABaseWithoutQuotasIsUnchangedByTheNewField() {
        Plans plans = PlansFile.parse("p.yml", WITHOUT);
        LimitsBase base = LimitsBase.of(plans);
        // what format 1 hashed: the limits alone, no quotas member at all
        assertThat(LimitsRecord.fingerprint(base))
                .isEqualTo(LimitsRecord.fingerprint(new LimitsBase(base.global(), base.guests(), base.plans(),
                        base.tenants(), java.util.Map.of("pro", List.of()))));
        assertThat(LimitsRecord.fingerprint(LimitsBase.of(PlansFile.parse("p.yml", WITH))))
                .isNotEqualTo(LimitsRecord.fingerprint(base));
    }

    @Test
    void aFormatOneRecordWithQuotasIsRefusedAndANewerFormatAsksForAnUpgrade() throws Exception {
        String two = record(PlansFile.parse("p.yml", WITH), LimitOverrides.NONE).toJson();
        assertThatThrownBy(() -> LimitsRecord.parse(two.replace("\"format\":2", "\"format\":1")))
                .isInstanceOf(LimitsRecord.Unusable.class).hasMessage("base.quotas: unknown field");
        assertThatThrownBy(() -> LimitsRecord.parse(two.replace("\"format\":2", "\"format\":3")))
                .isInstanceOf(LimitsRecord.Unusable.class).hasMessageContaining("upgrade this instance");
        assertThatThrownBy(() -> LimitsRecord.parse(two.replace("\"per\":\"month\"", "\"per\":\"year\"")))
                .isInstanceOf(LimitsRecord.Unusable.class).hasMessage("base.quotas.pro[0].per: not day, week or month");
    }
}
