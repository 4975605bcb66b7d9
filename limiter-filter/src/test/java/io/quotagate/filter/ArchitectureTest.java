package io.quotagate.filter;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The house rules of limiter-filter (docs/design.md §1, docs/architecture.md), checked on the compiled
 * classes: its packages depend one way, only {@code servlet} sees the Servlet API, no Redis type anywhere,
 * and the public types are exactly those docs/architecture.md lists for the module, so a type that
 * becomes public (or stops being) is a decision the docs show.
 */
class ArchitectureTest {
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.quotagate.filter");

    @Test
    void thePackagesDependOneWay() {
        slices().matching("io.quotagate.filter.(*)..").should().beFreeOfCycles().check(MAIN);
        // the bottom and the core never reach up to what serves them
        noClasses().that().resideInAnyPackage("..filter.core..", "..filter.store..", "..filter.admission..")
                .should().dependOnClassesThat().resideInAnyPackage("..filter.servlet..", "..filter.metrics..",
                        "..filter.signals..", "..filter.limits..")
                .check(MAIN);
    }

    @Test
    void onlyTheServletPackageSeesTheServletApi() {
        noClasses().that().resideOutsideOfPackage("..filter.servlet..")
                .should().dependOnClassesThat().resideInAnyPackage("jakarta.servlet..")
                .check(MAIN);
    }

    @Test
    void noRedisTypeInTheCore() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("io.lettuce..", "redis.clients..",
                "io.github.bucket4j.redis..").check(MAIN);
    }

    @Test
    void thePublicTypesAreExactlyThoseTheArchitecturePageLists() throws IOException {
        Set<String> listed = listedTypes("limiter-filter");
        Set<String> publicTopLevel = new TreeSet<>();
        Set<String> publicNested = new TreeSet<>();
        for (JavaClass c : MAIN) {
            if (!c.getModifiers().contains(JavaModifier.PUBLIC) || c.isAnonymousClass()) continue;
            if (c.isTopLevelClass()) publicTopLevel.add(c.getSimpleName());
            else publicNested.add(c.getSimpleName());
        }
        assertThat(listed).as("docs/architecture.md lists for limiter-filter").containsAll(publicTopLevel);
        Set<String> notPublic = new TreeSet<>(listed);
        notPublic.removeAll(publicTopLevel);
        notPublic.removeAll(publicNested);
        assertThat(notPublic).as("listed in docs/architecture.md but not a public type of limiter-filter").isEmpty();
    }

    /** The type names (backticked, capitalised, no dot) in the module's row of docs/architecture.md's table. */
    static Set<String> listedTypes(String module) throws IOException {
        String row = Files.readAllLines(Path.of("..", "docs", "architecture.md")).stream()
                .filter(l -> l.startsWith("| `" + module + "` |")).findFirst()
                .orElseThrow(() -> new AssertionError("docs/architecture.md has no row for " + module));
        Set<String> names = new TreeSet<>();
        Matcher m = Pattern.compile("`([A-Z][A-Za-z0-9]*)`").matcher(row);
        while (m.find()) names.add(m.group(1));
        return names;
    }
}
