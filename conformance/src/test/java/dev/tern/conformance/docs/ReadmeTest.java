package dev.tern.conformance.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * README.md stays a front door: at most {@value #MAX_LINES} lines, no line outside a code block longer than
 * {@value #MAX_LINE} characters (the status table's rows included), and every test class it names exists. The rest
 * lives under docs/ (docs/README.md is the map). Each rule is shown to fail on a README made to break it.
 */
class ReadmeTest {
    static final int MAX_LINES = 300;
    static final int MAX_LINE = 200;
    private static final Pattern TEST_CLASS = Pattern.compile("`([A-Z][A-Za-z0-9]*Test)(?:[#.][^`]*)?`");

    /** What is wrong with {@code readme} as a front door, one line each; empty when nothing is. */
    static List<String> problems(Readme readme, Set<String> testClasses) {
        final List<String> problems = new ArrayList<>();
        final List<String> lines = readme.lines();
        if (lines.size() > MAX_LINES) {
            problems.add("README.md has " + lines.size() + " lines, more than " + MAX_LINES
                + ": move the detail to the docs/ page it belongs on (docs/README.md lists them)");
        }
        final boolean[] code = readme.inCode();
        for (int i = 0; i < lines.size(); i++) {
            final int length = lines.get(i).codePointCount(0, lines.get(i).length());
            if (!code[i] && length > MAX_LINE) {
                problems.add("README.md:" + (i + 1) + " has " + length + " characters, more than " + MAX_LINE);
            }
        }
        for (int i = 0; i < lines.size(); i++) {
            final Matcher m = TEST_CLASS.matcher(lines.get(i));
            while (m.find()) {
                if (!testClasses.contains(m.group(1))) {
                    problems.add("README.md:" + (i + 1) + " names " + m.group(1) + ", which no module's tests hold");
                }
            }
        }
        return problems;
    }

    /** The simple names of every test source file under any module's src/test/java. */
    static Set<String> testClasses() throws IOException {
        final Set<String> names = new TreeSet<>();
        try (Stream<Path> modules = Files.list(Readme.root())) {
            for (Path module : modules.filter(Files::isDirectory).toList()) {
                final Path tests = module.resolve("src/test/java");
                if (Files.isDirectory(tests)) {
                    try (Stream<Path> files = Files.walk(tests)) {
                        files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".java"))
                            .map(n -> n.substring(0, n.length() - ".java".length())).forEach(names::add);
                    }
                }
            }
        }
        return names;
    }

    @Test
    void readmeIsAFrontDoor() throws IOException {
        final List<String> problems = problems(Readme.read(), testClasses());
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    @Test
    void aLongReadmeALongLineAndAMissingTestClassAreEachReported() throws IOException {
        final List<String> lines = new ArrayList<>(Readme.read().lines());
        final String table = "| a feature | works | `NoSuchClassAnywhereTest` " + "x".repeat(MAX_LINE) + " |";
        lines.add(table);
        lines.addAll(Collections.nCopies(MAX_LINES, "more"));
        final List<String> problems = problems(Readme.of(lines), testClasses());
        assertEquals(3, problems.size(), String.join("\n", problems));
        assertTrue(problems.get(0).contains("more than " + MAX_LINES), problems.get(0));
        assertTrue(problems.get(1).contains("characters"), problems.get(1));
        assertTrue(problems.get(2).contains("NoSuchClassAnywhereTest"), problems.get(2));
    }

    @Test
    void aLongLineInsideACodeBlockIsAllowed() {
        final String longLine = "y".repeat(MAX_LINE + 1);
        final List<String> problems = problems(Readme.of(List.of("# T", "```", longLine, "```", "text")), Set.of());
        assertTrue(problems.isEmpty(), problems.stream().collect(Collectors.joining("\n")));
        assertEquals(1, problems(Readme.of(List.of("# T", longLine)), Set.of()).size());
    }
}
