package io.quotagate.example.readme;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java snippet of the documentation (README.md and every page of docs/) compiles as shown: each lives in a
 * {@code readme/*Snippet.java} file under the test sources of a module that has what it uses (this module: the
 * filter, Redis, tenant resolution, Jetty, Micrometer; the starter: Spring; container-tests: Undertow;
 * tenant-resolution: HikariCP; quotagate-client), between {@code // README snippet} and
 * {@code // README snippet end} lines (its imports, then its code); this test holds the pages to those texts,
 * verbatim, both ways: no snippet in a page that is not compiled, and none compiled that the pages lost.
 */
class ReadmeSnippetsTest {
    private static final String BEGIN = "// README snippet";
    private static final String END = "// README snippet end";
    private static final Path ROOT = Path.of("..");

    @Test
    void everyJavaSnippetOfTheReadmeIsACompiledSnippetFileVerbatim() throws IOException {
        List<Path> pages = pages();
        assertThat(pages).as("README.md and the docs/*.md pages").contains(ROOT.resolve("README.md"))
                .hasSizeGreaterThan(10);
        List<String> readme = new ArrayList<>();
        for (Path page : pages) readme.addAll(blocks(Files.readString(page), "java"));
        Map<String, String> compiled = snippetFiles();
        assertThat(compiled).as("snippet files found").hasSizeGreaterThanOrEqualTo(11);

        List<String> notCompiled = new ArrayList<>(readme);
        notCompiled.removeAll(compiled.values());
        assertThat(notCompiled).as("Java snippets of README.md or docs/*.md that no readme/*Snippet.java holds"
                + " verbatim (copy the page's text into the snippet file, or the file's into the page)").isEmpty();

        Map<String, String> notInReadme = new TreeMap<>(compiled);
        notInReadme.values().removeAll(readme);
        assertThat(notInReadme).as("snippet files whose text neither README.md nor a docs/*.md page shows").isEmpty();
    }

    /** README.md and every Markdown page of docs/. */
    static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>();
        pages.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.getFileName().toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }

    /** The blocks of a Markdown text fenced as {@code language} (```yaml, ...), without their fences. */
    static List<String> blocks(String markdown, String language) {
        List<String> blocks = new ArrayList<>();
        StringBuilder block = null;
        for (String line : markdown.split("\n", -1)) {
            if (block == null) {
                if (line.equals("```" + language)) block = new StringBuilder();
            } else if (line.equals("```")) {
                blocks.add(block.toString().stripTrailing());
                block = null;
            } else {
                block.append(line).append('\n');
            }
        }
        return blocks;
    }

    /** Each snippet file under any module's test sources, as the README shows it: its regions, a blank line apart. */
    private static Map<String, String> snippetFiles() throws IOException {
        Map<String, String> snippets = new TreeMap<>();
        try (Stream<Path> modules = Files.list(ROOT)) {
            for (Path module : modules.toList()) {
                Path tests = module.resolve("src/test/java");
                if (!Files.isDirectory(tests)) continue;
                try (Stream<Path> files = Files.walk(tests)) {
                    for (Path f : files.filter(p -> p.getParent().getFileName().toString().equals("readme")
                            && p.getFileName().toString().endsWith("Snippet.java")).toList()) {
                        snippets.put(ROOT.relativize(f).toString(), regions(Files.readString(f)));
                    }
                }
            }
        }
        return snippets;
    }

    static String regions(String source) {
        List<String> regions = new ArrayList<>();
        List<String> region = null;
        for (String line : source.split("\n", -1)) {
            String t = line.strip();
            if (region == null) {
                if (t.equals(BEGIN)) region = new ArrayList<>();
            } else if (t.equals(END)) {
                regions.add(dedent(region));
                region = null;
            } else {
                region.add(line);
            }
        }
        return String.join("\n\n", regions);
    }

    private static String dedent(List<String> lines) {
        int indent = lines.stream().filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        StringBuilder out = new StringBuilder();
        for (String l : lines) out.append(l.isBlank() ? "" : l.substring(indent)).append('\n');
        return out.toString().stripTrailing();
    }
}
