package io.quotagate.example.readme;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of the documentation (README.md, CHANGELOG.md, BENCHMARKS.md and docs/*.md) reaches a file of
 * the repository, and every {@code #anchor} a heading of the target page (by GitHub's slug: lower case, punctuation
 * other than {@code -} and {@code _} dropped, spaces as {@code -}, a repeated heading's slug with {@code -1},
 * {@code -2}...) or an {@code <a id>} in it. External links are not fetched. The README stays a front door: at most
 * 400 lines, linking every page of docs/.
 */
class DocLinksTest {
    private static final Path ROOT = Path.of("..");
    private static final Pattern LINK = Pattern.compile("!?\\[(?:[^\\[\\]]|\\[[^\\]]*\\])*\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern REFERENCE = Pattern.compile("^\\s{0,3}\\[[^\\]]+\\]:\\s*<?(\\S+?)>?(?:\\s.*)?$");
    private static final Pattern HEADING = Pattern.compile("^\\s{0,3}(#{1,6})\\s+(.*?)(?:\\s+#+)?\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    private static final Pattern CODE_SPAN = Pattern.compile("(`+)(?:(?!\\1).)+?\\1");

    @Test
    void everyRelativeLinkAndAnchorResolves() throws IOException {
        List<Path> pages = pages();
        assertThat(pages).as("documentation pages").hasSizeGreaterThan(10);
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : pages) {
            for (Link link : links(prose(Files.readString(page)))) {
                if (link.target().matches("(?i)[a-z][a-z0-9+.-]*:.*")) continue; // https:, mailto:...: not fetched
                checked++;
                String problem = problem(page, link.target());
                if (problem != null) {
                    broken.add(ROOT.relativize(page) + ":" + link.line() + ": " + link.target() + ": " + problem);
                }
            }
        }
        assertThat(checked).as("relative links checked").isGreaterThan(100);
        assertThat(broken).as("broken links in the documentation").isEmpty();
    }

    @Test
    void theReadmeIsAFrontDoorToEveryPage() throws IOException {
        List<String> readme = Files.readAllLines(ROOT.resolve("README.md"));
        assertThat(readme).as("README.md lines").hasSizeLessThanOrEqualTo(400);
        Set<String> linked = new LinkedHashSet<>();
        for (Link link : links(prose(String.join("\n", readme)))) linked.add(link.target().replaceFirst("#.*", ""));
        for (Path page : pages()) {
            String name = ROOT.relativize(page).toString().replace('\\', '/');
            if (!name.equals("README.md")) assertThat(linked).as("README.md links " + name).contains(name);
        }
    }

    /** Why a link from {@code page} to {@code target} does not resolve, or null if it does. */
    private static String problem(Path page, String target) throws IOException {
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path file = path.isEmpty() ? page : page.getParent().resolve(path).normalize();
        if (!file.toAbsolutePath().normalize().startsWith(ROOT.toAbsolutePath().normalize())) {
            return "outside the repository";
        }
        if (!Files.exists(file)) return "no such file " + ROOT.relativize(file);
        if (anchor == null) return null;
        if (!file.getFileName().toString().endsWith(".md")) return "an anchor into a file that is not Markdown";
        Set<String> anchors = anchors(Files.readString(file));
        return anchors.contains(anchor) ? null : "no heading or <a id> '" + anchor + "' in " + ROOT.relativize(file);
    }

    /** The pages whose links are checked: README.md, CHANGELOG.md, BENCHMARKS.md and docs/*.md. */
    private static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>(ReadmeSnippetsTest.pages());
        pages.add(ROOT.resolve("CHANGELOG.md"));
        pages.add(ROOT.resolve("BENCHMARKS.md"));
        return pages;
    }

    /** A link's target and the line it ends on. */
    record Link(String target, int line) {
    }

    /**
     * The links of a page's prose: inline links and images (their text may wrap over lines) and reference
     * definitions; code spans are no links.
     */
    static List<Link> links(List<String> prose) {
        List<String> lines = new ArrayList<>();
        for (String line : prose) lines.add(CODE_SPAN.matcher(line).replaceAll(""));
        String text = String.join("\n", lines);
        List<Link> links = new ArrayList<>();
        Matcher m = LINK.matcher(text);
        while (m.find()) links.add(new Link(m.group(1), lineOf(text, m.end())));
        for (int i = 0; i < lines.size(); i++) {
            Matcher ref = REFERENCE.matcher(lines.get(i));
            if (ref.matches()) links.add(new Link(ref.group(1), i + 1));
        }
        return links;
    }

    private static int lineOf(String text, int offset) {
        int line = 1;
        for (int i = 0; i < offset; i++) if (text.charAt(i) == '\n') line++;
        return line;
    }

    /** The anchors GitHub gives a Markdown page: each heading's slug (repeats numbered) and each {@code <a id>}. */
    static Set<String> anchors(String markdown) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : prose(markdown)) {
            Matcher h = HEADING.matcher(line);
            if (h.matches()) {
                String slug = slug(h.group(2));
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(n == 0 ? slug : slug + "-" + n);
            }
            Matcher a = HTML_ANCHOR.matcher(line);
            while (a.find()) anchors.add(a.group(1));
        }
        return anchors;
    }

    /** GitHub's slug of a heading's text: what it renders as, lower case, only letters, digits, _, - and spaces as -. */
    static String slug(String heading) {
        String text = heading.replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1")
                .replaceAll("<[^>]+>", "")
                .replace("`", "")
                .replace("*", "")
                .strip()
                .toLowerCase(Locale.ROOT);
        return text.replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]", "").replace(' ', '-');
    }

    /** The lines of a Markdown text with the lines of fenced code blocks blanked (their numbers kept). */
    static List<String> prose(String markdown) {
        List<String> lines = new ArrayList<>();
        String fence = null;
        for (String line : markdown.split("\n", -1)) {
            String t = line.strip();
            if (fence == null && (t.startsWith("```") || t.startsWith("~~~"))) {
                fence = t.substring(0, 3);
                lines.add("");
            } else if (fence != null) {
                if (t.startsWith(fence) && t.substring(3).isBlank()) fence = null;
                lines.add("");
            } else {
                lines.add(line);
            }
        }
        return lines;
    }
}
