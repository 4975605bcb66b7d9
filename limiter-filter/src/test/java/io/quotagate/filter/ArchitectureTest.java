package io.quotagate.filter;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The house rules of limiter-filter (docs/design.md §1, docs/architecture.md), checked on the compiled
 * classes. The API is {@code io.quotagate.filter} (the filter, its control, cost reporting) with
 * {@code .status} (read-only views), {@code .metrics} and {@code .signals} (listeners and events); the SPI
 * a store plugs into is {@code .store}; the engines live in {@code .internal.*}, which is not API. The
 * public types of the API and the SPI are exactly those docs/architecture.md lists, none of their public
 * signatures names an internal type, the packages depend one way, only the API package sees the Servlet
 * API, and no product module but the benchmarks reaches into {@code internal}. The page's rows for the other
 * library modules list exactly their public types too.
 */
class ArchitectureTest {
    private static final String INTERNAL = "io.quotagate.filter.internal";
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.quotagate.filter");

    /** A public type's declaration: its indentation (empty at top level) and its name. */
    private static final Pattern PUBLIC_TYPE = Pattern.compile("^([ \\t]*)public\\s+(?:(?:final|abstract|sealed|"
            + "non-sealed|static|strictfp)\\s+)*(?:class|interface|record|enum|@interface)\\s+(\\w+)", Pattern.MULTILINE);

    @Test
    void thePackagesDependOneWay() {
        slices().matching("io.quotagate.filter.(*)..").should().beFreeOfCycles().check(MAIN);
        slices().matching("io.quotagate.filter.internal.(*)..").should().beFreeOfCycles().check(MAIN);
        // nothing below the filter's own package reaches up to it
        noClasses().that().resideOutsideOfPackage("io.quotagate.filter")
                .should().dependOnClassesThat().resideInAPackage("io.quotagate.filter").check(MAIN);
        // the SPI knows nothing of what uses it; the views and events know no engine
        noClasses().that().resideInAPackage("io.quotagate.filter.store..")
                .should().dependOnClassesThat().resideInAnyPackage("..filter.status..", "..filter.metrics..",
                        "..filter.signals..", "..filter.internal..")
                .check(MAIN);
        noClasses().that().resideInAnyPackage("io.quotagate.filter.status..")
                .should().dependOnClassesThat().resideInAnyPackage("..filter.metrics..", "..filter.signals..",
                        "..filter.internal..")
                .check(MAIN);
        noClasses().that().resideInAnyPackage("io.quotagate.filter.signals..")
                .should().dependOnClassesThat().resideInAnyPackage("..filter.metrics..", "..filter.status..")
                .check(MAIN);
    }

    @Test
    void onlyTheApiPackageSeesTheServletApi() {
        noClasses().that().resideOutsideOfPackage("io.quotagate.filter")
                .should().dependOnClassesThat().resideInAnyPackage("jakarta.servlet..")
                .check(MAIN);
    }

    @Test
    void noRedisTypeInTheCore() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("io.lettuce..", "redis.clients..",
                "io.github.bucket4j.redis..").check(MAIN);
    }

    @Test
    void thePublicTypesOfTheApiAndTheSpiAreExactlyThoseTheArchitecturePageLists() throws IOException {
        Set<String> listed = listedTypes("limiter-filter");
        Set<String> publicTopLevel = new TreeSet<>();
        Set<String> publicNested = new TreeSet<>();
        for (JavaClass c : MAIN) {
            if (!isPublic(c) || c.isAnonymousClass() || isInternal(c)) continue;
            if (c.isTopLevelClass()) publicTopLevel.add(c.getSimpleName());
            else publicNested.add(c.getSimpleName());
        }
        assertThat(listed).as("docs/architecture.md lists for limiter-filter").containsAll(publicTopLevel);
        Set<String> notPublic = new TreeSet<>(listed);
        notPublic.removeAll(publicTopLevel);
        notPublic.removeAll(publicNested);
        assertThat(notPublic).as("listed in docs/architecture.md but not a public API or SPI type of limiter-filter")
                .isEmpty();
    }

    /**
     * The other library modules' rows list exactly their public types too: every public top-level type, and
     * no name that is not a public type (top-level or nested) of that module. Read from their sources, as this
     * module's tests cannot load the classes of the modules that depend on it; a declaration of a public type
     * starts its line (top-level) or follows indentation (nested).
     */
    @ParameterizedTest
    @ValueSource(strings = {"plans", "tenant-resolution", "limiter-redis", "spring-boot-starter", "quotagate-client"})
    void everyOtherLibraryModulesRowListsExactlyItsPublicTypes(String module) throws IOException {
        Set<String> topLevel = new TreeSet<>();
        Set<String> all = new TreeSet<>();
        try (Stream<Path> files = Files.walk(Path.of("..", module, "src", "main", "java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                Matcher m = PUBLIC_TYPE.matcher(Files.readString(f));
                while (m.find()) {
                    all.add(m.group(2));
                    if (m.group(1).isEmpty()) topLevel.add(m.group(2));
                }
            }
        }
        assertThat(topLevel).as("public top-level types found in %s's sources", module).isNotEmpty();
        Set<String> listed = listedTypes(module);
        assertThat(listed).as("docs/architecture.md lists for %s", module).containsAll(topLevel);
        Set<String> notPublic = new TreeSet<>(listed);
        notPublic.removeAll(all);
        assertThat(notPublic).as("listed in docs/architecture.md but not a public type of %s", module).isEmpty();
    }

    @Test
    void noPublicSignatureOfTheApiOrTheSpiNamesAnInternalType() {
        List<String> leaks = new ArrayList<>();
        for (JavaClass c : MAIN) {
            if (!isPublic(c) || isInternal(c) || c.isAnonymousClass()) continue;
            Stream.concat(c.getRawInterfaces().stream(), c.getRawSuperclass().stream())
                    .filter(ArchitectureTest::isInternal)
                    .forEach(t -> leaks.add(c.getName() + " extends " + t.getName()));
            for (JavaCodeUnit m : c.getCodeUnits()) {
                Set<JavaModifier> modifiers = m.getModifiers();
                if (!modifiers.contains(JavaModifier.PUBLIC) && !modifiers.contains(JavaModifier.PROTECTED)) continue;
                for (JavaClass t : m.getAllInvolvedRawTypes()) {
                    if (isInternal(t)) leaks.add(m.getFullName() + " names " + t.getName());
                }
            }
            for (JavaField f : c.getFields()) {
                if (!f.getModifiers().contains(JavaModifier.PUBLIC)) continue;
                for (JavaClass t : f.getAllInvolvedRawTypes()) {
                    if (isInternal(t)) leaks.add(f.getFullName() + " is of " + t.getName());
                }
            }
        }
        assertThat(leaks).as("API and SPI signatures that name an engine of io.quotagate.filter.internal").isEmpty();
    }

    /** The benchmarks (load-tests) may reach the engines; no other module's main code does. */
    @Test
    void onlyTheBenchmarksReachIntoInternal() throws IOException {
        List<String> reaching = new ArrayList<>();
        try (Stream<Path> modules = Files.list(Path.of(".."))) {
            for (Path module : modules.filter(m -> Files.isDirectory(m.resolve("src/main/java"))).toList()) {
                String name = module.getFileName().toString();
                if (name.equals("limiter-filter") || name.equals("load-tests")) continue;
                try (Stream<Path> files = Files.walk(module.resolve("src/main/java"))) {
                    for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                        if (Files.readString(f).contains(INTERNAL + ".")) reaching.add(module.relativize(f).toString());
                    }
                }
            }
        }
        assertThat(reaching).as("main code outside limiter-filter and load-tests that names " + INTERNAL).isEmpty();
    }

    private static boolean isPublic(JavaClass c) {
        return c.getModifiers().contains(JavaModifier.PUBLIC);
    }

    private static boolean isInternal(JavaClass c) {
        return c.getPackageName().startsWith(INTERNAL);
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
