package io.quotagate.filter;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The length of every method and constructor in Java source, found with a brace-depth scan: comments, string,
 * text-block and char literals are blanked first (so their braces do not count), then each {@code {} opens a
 * block whose header (the text since the last {@code ;}, {@code {} or {@code }}) says what it is. A block directly
 * in a type's body whose header ends in a parameter list (and optional {@code throws}), or is a bare name (a
 * record's compact constructor), is a method; a header naming {@code class}, {@code interface}, {@code enum} or
 * {@code record}, or an anonymous class's {@code new X(...)}, opens a type body. A method's length is its lines
 * of code from the line of its name to its closing brace, blank and comment-only lines not counted; what it
 * contains (lambdas, local and anonymous classes) counts towards it.
 */
final class MethodLengths {
    /** One method: where it is, and its length in lines of code. */
    record Method(Path file, String type, String name, int line, int length) {
        String qualifiedName() {
            return type + "." + name;
        }

        @Override
        public String toString() {
            return qualifiedName() + " (" + file + ":" + line + "): " + length + " lines";
        }
    }

    private static final Pattern TYPE_HEADER =
            Pattern.compile("(?:^|[^\\w.])(class|interface|enum|record)\\s+([A-Za-z_$][\\w$]*)");
    private static final Pattern ANONYMOUS = Pattern.compile("\\bnew\\s+[\\w$.<>\\[\\], ?]+\\([^{]*\\)\\s*$");
    private static final Pattern METHOD_HEADER = Pattern.compile(
            "([A-Za-z_$][\\w$]*)\\s*\\([^{}]*\\)\\s*(?:throws\\s+[\\w$.,\\s<>]+)?$", Pattern.DOTALL);
    private static final Pattern COMPACT_CONSTRUCTOR = Pattern.compile("(?:^|\\s)([A-Z][\\w$]*)$");
    private static final Pattern NOT_A_METHOD =
            Pattern.compile("^(?:if|for|while|switch|catch|synchronized|try|else|do|return|new|throw)$");

    private MethodLengths() {
    }

    /** Every method of every {@code .java} file under each module's {@code src/main/java} in {@code root}. */
    static List<Method> inMainSources(Path root) {
        List<Method> all = new ArrayList<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : modules.sorted().toList()) {
                Path sources = module.resolve("src/main/java");
                if (!Files.isDirectory(sources)) continue;
                try (Stream<Path> files = Files.walk(sources)) {
                    for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                        all.addAll(in(root.relativize(file), Files.readString(file)));
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        all.sort(Comparator.comparingInt(Method::length).reversed());
        return all;
    }

    /** Every method in one file's source text. */
    static List<Method> in(Path file, String source) {
        String code = blankCommentsAndLiterals(source);
        int[] lineOf = new int[code.length() + 1];
        boolean[] codeOnLine = new boolean[(int) code.chars().filter(c -> c == '\n').count() + 2];
        int line = 1;
        for (int i = 0; i < code.length(); i++) {
            lineOf[i] = line;
            char c = code.charAt(i);
            if (c == '\n') line++;
            else if (!Character.isWhitespace(c)) codeOnLine[line] = true;
        }
        lineOf[code.length()] = line;

        List<Method> methods = new ArrayList<>();
        Deque<Block> open = new ArrayDeque<>();
        int headerStart = 0;
        for (int i = 0; i < code.length(); i++) {
            char c = code.charAt(i);
            if (c == ';') {
                headerStart = i + 1;
            } else if (c == '{') {
                Block parent = open.peek();
                String header = code.substring(headerStart, i).strip();
                open.push(block(header, code, headerStart, i, parent, lineOf));
                headerStart = i + 1;
            } else if (c == '}') {
                Block closed = open.pop();
                if (closed.kind == Kind.METHOD) {
                    int length = 0;
                    for (int l = closed.line; l <= lineOf[i]; l++) if (codeOnLine[l]) length++;
                    methods.add(new Method(file, closed.type, closed.name, closed.line, length));
                }
                headerStart = i + 1;
            }
        }
        return methods;
    }

    private enum Kind { TYPE, METHOD, OTHER }

    private record Block(Kind kind, String type, String name, int line) {
    }

    private static Block block(String header, String code, int headerStart, int brace, Block parent, int[] lineOf) {
        String enclosing = parent == null ? "" : parent.type;
        Matcher type = TYPE_HEADER.matcher(header);
        if (type.find() && !header.contains("=") && !header.contains("->")) {
            String name = type.group(2);
            return new Block(Kind.TYPE, enclosing.isEmpty() ? name : enclosing + "." + name, null, 0);
        }
        if (ANONYMOUS.matcher(header).find()) return new Block(Kind.TYPE, enclosing + ".new", null, 0);
        if (parent == null || parent.kind != Kind.TYPE || header.contains("=") || header.contains("->")) {
            return new Block(Kind.OTHER, enclosing, null, 0);
        }
        String signature = header.replaceAll("@[\\w$.]+(\\([^()]*\\))?", " ").strip();
        Matcher method = METHOD_HEADER.matcher(signature);
        Matcher compact = COMPACT_CONSTRUCTOR.matcher(signature);
        String name = method.find() ? method.group(1) : compact.find() ? compact.group(1) : null;
        if (name == null || NOT_A_METHOD.matcher(name).matches()) return new Block(Kind.OTHER, enclosing, null, 0);
        int nameAt = nameIndex(code, headerStart, brace, name);
        return new Block(Kind.METHOD, enclosing, name, lineOf[nameAt < 0 ? brace : nameAt]);
    }

    /** Where the method's name stands in its header: the last occurrence before its parameter list. */
    private static int nameIndex(String code, int from, int brace, String name) {
        Matcher m = Pattern.compile("\\b" + Pattern.quote(name) + "\\b").matcher(code).region(from, brace);
        int found = -1;
        while (m.find()) {
            found = m.start();
            int next = m.end();
            while (next < brace && Character.isWhitespace(code.charAt(next))) next++;
            if (next < brace && code.charAt(next) == '(') return found;
        }
        return found;
    }

    /**
     * The source with comments replaced by spaces and the contents of literals by {@code _} (a line inside a
     * text block is a line of code), newlines kept.
     */
    static String blankCommentsAndLiterals(String s) {
        StringBuilder out = new StringBuilder(s);
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == '/' && i + 1 < s.length() && s.charAt(i + 1) == '/') {
                int end = s.indexOf('\n', i);
                if (end < 0) end = s.length();
                blank(out, i, end, ' ');
                i = end;
            } else if (c == '/' && i + 1 < s.length() && s.charAt(i + 1) == '*') {
                int end = s.indexOf("*/", i + 2);
                end = end < 0 ? s.length() : end + 2;
                blank(out, i, end, ' ');
                i = end;
            } else if (s.startsWith("\"\"\"", i)) {
                int end = i + 3;
                while (end < s.length() && !s.startsWith("\"\"\"", end)) end += s.charAt(end) == '\\' ? 2 : 1;
                end = Math.min(s.length(), end + 3);
                blank(out, i + 1, end - 1, '_');
                i = end;
            } else if (c == '"' || c == '\'') {
                int end = i + 1;
                while (end < s.length() && s.charAt(end) != c && s.charAt(end) != '\n') {
                    end += s.charAt(end) == '\\' ? 2 : 1;
                }
                blank(out, i + 1, Math.min(end, s.length()), '_');
                i = end + 1;
            } else {
                i++;
            }
        }
        return out.toString();
    }

    private static void blank(StringBuilder out, int from, int to, char fill) {
        for (int j = from; j < to && j < out.length(); j++) if (out.charAt(j) != '\n') out.setCharAt(j, fill);
    }
}
