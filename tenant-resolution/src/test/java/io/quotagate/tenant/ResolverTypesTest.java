package io.quotagate.tenant;

import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.TenantSettings;
import io.quotagate.plans.TenantSettings.ResolverSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** Each resolver type checks its own options, with the file, line and field of the plans file. */
class ResolverTypesTest {

    static Stream<Arguments> badEntries() {
        // one plan, then tenants.resolvers whose first entry is on line 7
        String head = "plans:\n  free:\n    limits:\n      - { capacity: 5, refill: 5, period: 1s }\n"
                + "tenants:\n  resolvers:\n";
        return Stream.of(
                arguments("unknown resolver type", head + "    - { type: cookie }\n",
                        7, "tenants.resolvers[0].type", "unknown resolver type"),
                arguments("unknown option for a resolver", head + "    - { type: host, name: x }\n",
                        7, "tenants.resolvers[0].name", "unknown key for a host resolver"),
                arguments("host resolver without suffix", head + "    - { type: host }\n",
                        7, "tenants.resolvers[0].suffix", "required"),
                arguments("host suffix without a leading dot", head + "    - { type: host, suffix: api.example.com }\n",
                        7, "tenants.resolvers[0].suffix", "must match"),
                arguments("path prefix without slashes", head + "    - { type: path, prefix: t }\n",
                        7, "tenants.resolvers[0].prefix", "must match"),
                arguments("path prefix with a dot segment", head + "    - { type: path, prefix: /t/../ }\n",
                        7, "tenants.resolvers[0].prefix", "must match"),
                arguments("bad header name", head + "    - { type: header, name: \"X Org\" }\n",
                        7, "tenants.resolvers[0].name", "must match"),
                arguments("attribute resolver without name", head + "    - { type: attribute }\n",
                        7, "tenants.resolvers[0].name", "required"),
                arguments("jwt resolver without a key", head + "    - { type: jwt-claim, claim: tid }\n",
                        7, "tenants.resolvers[0]", "exactly one of"),
                arguments("jwt resolver with two keys",
                        head + "    - type: jwt-claim\n      secret-env: A\n      jwks-file: b.json\n",
                        9, "tenants.resolvers[0].jwks-file", "exactly one of"),
                arguments("jwt verify not a boolean", head + "    - { type: jwt-claim, verify: nope }\n",
                        7, "tenants.resolvers[0].verify", "true or false"),
                arguments("jwt verify false with a key",
                        head + "    - { type: jwt-claim, verify: false, secret-env: S }\n",
                        7, "tenants.resolvers[0].secret-env", "verify: false takes no key"),
                arguments("api-key resolver without keys", head + "    - { type: api-key }\n",
                        7, "tenants.resolvers[0].type", "needs tenants.api-keys"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badEntries")
    void refusesABadEntryNamingFileLineAndField(String description, String yaml, int line, String field,
                                                String reason) {
        TenantSettings settings = PlansFile.parse("plans.yml", yaml).tenants();
        for (Runnable build : new Runnable[] {
                () -> TenantResolvers.fromSettings(settings, name -> "a-secret-of-at-least-thirty-two-bytes!"),
                () -> TenantResolvers.check(settings)}) {
            assertThatThrownBy(build::run)
                    .isInstanceOfSatisfying(InvalidPlansException.class, e -> {
                        assertThat(e.file()).isEqualTo("plans.yml");
                        assertThat(e.line()).isEqualTo(line);
                        assertThat(e.field()).isEqualTo(field);
                        assertThat(e.reason()).contains(reason);
                    });
        }
    }

    @Test
    void anUnknownTypeIsRefusedNamingEveryKnownType() {
        TenantSettings settings = settings("    - { type: cookie }\n");
        assertThatThrownBy(() -> TenantResolvers.check(settings)).hasMessage("p.yml:7: tenants.resolvers[0].type: "
                + "unknown resolver type 'cookie', expected one of "
                + "[api-key, attribute, header, host, jwt-claim, path, principal]");
    }

    @Test
    void anOptionOfTheWrongKindIsRefusedAsEveryOtherFieldIs() {
        TenantSettings settings = settings("    - type: header\n      name: [ X-Org ]\n");
        assertThatThrownBy(() -> TenantResolvers.check(settings))
                .hasMessage("p.yml:8: tenants.resolvers[0].name: expected a non-empty string, found a list");
    }

    @Test
    void aHostSuffixIsComparedInLowerCase() {
        TenantResolver r = TenantResolvers.fromSettings(settings("    - { type: host, suffix: .API.example.com }\n"));
        assertThat(r.resolve(FakeRequest.request().host("acme.api.example.com").build())).contains("acme");
    }

    @Test
    void theFilesResolversAreCheckedWithoutReadingKeyMaterial() {
        TenantSettings settings = settings("    - { type: jwt-claim, secret-file: /nonexistent/secret }\n");
        TenantResolvers.check(settings);
        assertThatThrownBy(() -> TenantResolvers.fromSettings(settings))
                .hasMessageStartingWith("p.yml:7: tenants.resolvers[0].secret-file: cannot read");
    }

    @Test
    void anEntryWrittenInCodeIsBuiltByItsType() {
        TenantSettings settings = TenantSettings.builder().defaultPlan("free")
                .resolvers(java.util.List.of(ResolverSpec.of("header", Map.of("name", "X-Org")),
                        ResolverSpec.of("jwt-claim", Map.of("verify", false)))).build();
        TenantResolver r = TenantResolvers.fromSettings(settings);
        assertThat(r.resolve(FakeRequest.request().header("X-Org", "acme").build())).contains("acme");
        assertThat(TenantSettings.builder().defaultPlan("free")
                .resolvers(java.util.List.of(ResolverSpec.of("header", Map.of("name", "X Org")))).build())
                .satisfies(s -> assertThatThrownBy(() -> TenantResolvers.check(s))
                        .hasMessage("<code>: resolver.name: must match [A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}, was 'X Org'"));
    }

    @Test
    void anApplicationAddsATypeOfItsOwn() {
        ResolverType cookie = new ResolverType() {
            @Override
            public String name() {
                return "cookie";
            }

            @Override
            public Set<String> options() {
                return Set.of("name");
            }

            @Override
            public void check(ResolverSpec spec, TenantSettings settings) {
                spec.string("name").orElseThrow(() -> spec.invalid("name", "required"));
            }

            @Override
            public TenantResolver create(ResolverSpec spec, Context context) {
                return request -> Optional.of("from-" + spec.string("name").orElseThrow());
            }
        };
        ResolverTypes types = ResolverTypes.standard().with(cookie);
        assertThat(types.names()).contains("cookie", "header");
        TenantSettings settings = settings("    - { type: cookie, name: t }\n");
        TenantResolver r = TenantResolvers.fromSettings(settings, k -> null, types);
        assertThat(r.resolve(FakeRequest.request().build())).contains("from-t");
        assertThatThrownBy(() -> types.with(cookie)).hasMessageContaining("already listed");
    }

    /** Settings of a one-plan file whose {@code tenants.resolvers} are these lines (the first on line 7). */
    private static TenantSettings settings(String resolverLines) {
        return PlansFile.parse("p.yml", "plans:\n  free:\n    limits:\n      - { capacity: 5, refill: 5, period: 1s }\n"
                + "tenants:\n  resolvers:\n" + resolverLines).tenants();
    }
}
